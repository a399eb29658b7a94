package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/internal/jobctx"
)

// openInternal opens a store in the test's temporary directory.
func openInternal(t *testing.T, opts Options) *DB {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "memento.db"), opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

// waitFor polls cond until it holds; the deadline only guards against a
// hang and is far above what any run needs.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// batchRig gathers requests into one batch: it holds the writer
// connection, so the committer, having taken the first request, waits to
// begin its transaction while the others queue behind it; release lets
// the batch run with all of them.
type batchRig struct {
	t    *testing.T
	db   *DB
	conn *sql.Conn
	wg   sync.WaitGroup
	sent int
}

func newBatchRig(t *testing.T, db *DB) *batchRig {
	t.Helper()
	// The committer serves the test's requests alone: the full-text
	// merger's would join the queues and the counts.
	db.ftsMerge.close()
	db.commits.maxWork = time.Hour // one batch, however slow the machine
	conn, err := db.write.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return &batchRig{t: t, db: db, conn: conn}
}

// send runs call in its own goroutine and waits until its request is
// queued (or, for the first, taken by the committer).
func (b *batchRig) send(call func()) {
	b.t.Helper()
	taken := b.db.commits.taken.Load()
	b.wg.Go(call)
	b.sent++
	if b.sent == 1 {
		waitFor(b.t, "the committer to take the first request", func() bool { return b.db.commits.taken.Load() == taken+1 })
		return
	}
	waitFor(b.t, "the request to queue", func() bool {
		return len(b.db.commits.reqs)+len(b.db.commits.turns)+len(b.db.commits.urgent) == b.sent-1
	})
}

// release runs the batch and waits for every caller.
func (b *batchRig) release() {
	b.conn.Close()
	b.wg.Wait()
}

func TestGroupCommitFailureStaysWithItsRequest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openInternal(t, Options{})
	batches := db.commits.batches.Load()
	rig := newBatchRig(t, db)

	const writers = 6
	results := make([]*memento.AppendResult, writers)
	errs := make([]error, writers)
	appendOne := func(i int) {
		s := memento.Scope{User: fmt.Sprintf("u%d", i)}
		results[i], errs[i] = db.AppendMessages(ctx, s, "t1", []memento.Message{{ID: fmt.Sprintf("m%d", i), Role: memento.RoleUser, Text: "hello"}},
			func(m memento.Message) []memento.JobRequest {
				return []memento.JobRequest{{Kind: "extract", Payload: m.ID}}
			})
	}
	// The requests that fail are urgent like the appends, so that the
	// batch takes them all (an acknowledgement's batch takes no other
	// kind of write).
	var errPartial, errUnique, errPanic, errWithdrawn error
	withdraw, cancel := context.WithCancel(ctx)

	rig.send(func() { appendOne(0) })
	rig.send(func() { appendOne(1) })
	// Writes a user, then fails: the user must not be kept.
	rig.send(func() {
		errPartial = db.urgentTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
			if _, err := db.ensureUser(ctx, tx, memento.Scope{Tenant: memento.DefaultTenant, User: "ghost"}); err != nil {
				return err
			}
			return errors.New("changed my mind")
		})
	})
	rig.send(func() { appendOne(2) })
	// A statement that violates a constraint inside the transaction.
	rig.send(func() {
		errUnique = db.urgentTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
			if _, err := db.ensureUser(ctx, tx, memento.Scope{Tenant: memento.DefaultTenant, User: "ghost2"}); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO tenants (id, created_at) VALUES (?, 0)`, memento.DefaultTenant)
			return err
		})
	})
	rig.send(func() { appendOne(3) })
	rig.send(func() {
		errPanic = db.urgentTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
			if _, err := db.ensureUser(ctx, tx, memento.Scope{Tenant: memento.DefaultTenant, User: "ghost3"}); err != nil {
				return err
			}
			panic("bad request")
		})
	})
	rig.send(func() { appendOne(4) })
	// Its caller gives up while it waits: it is withdrawn, not written.
	rig.send(func() {
		errWithdrawn = db.urgentTx(withdraw, func(ctx context.Context, tx *sql.Tx) error {
			_, err := db.ensureUser(ctx, tx, memento.Scope{Tenant: memento.DefaultTenant, User: "ghost4"})
			return err
		})
	})
	rig.send(func() { appendOne(5) })
	cancel()
	rig.release()

	for i := range writers {
		if errs[i] != nil {
			t.Errorf("writer %d: %v", i, errs[i])
			continue
		}
		got := results[i].Messages
		if len(got) != 1 || got[0].ID != fmt.Sprintf("m%d", i) || got[0].User != fmt.Sprintf("u%d", i) || got[0].Seq != 1 || results[i].Inserted != 1 {
			t.Errorf("writer %d got %+v; want its own message m%d, seq 1", i, results[i], i)
		}
	}
	if errPartial == nil || errPartial.Error() != "changed my mind" {
		t.Errorf("failing request: err = %v, want its own error", errPartial)
	}
	if errUnique == nil || !isUniqueViolation(errUnique) {
		t.Errorf("constraint violation: err = %v, want UNIQUE constraint failed", errUnique)
	}
	if errPanic == nil {
		t.Error("panicking request: no error")
	}
	if !errors.Is(errWithdrawn, context.Canceled) {
		t.Errorf("withdrawn request: err = %v, want context.Canceled", errWithdrawn)
	}
	for _, u := range []string{"ghost", "ghost2", "ghost3", "ghost4"} {
		if n := countRows(t, db, `SELECT count(*) FROM users WHERE id = ?`, u); n != 0 {
			t.Errorf("user %s of a failed request was kept", u)
		}
	}
	for i := range writers {
		if n := countRows(t, db, `SELECT count(*) FROM messages WHERE user_id = ? AND id = ?`, fmt.Sprintf("u%d", i), fmt.Sprintf("m%d", i)); n != 1 {
			t.Errorf("message m%d: %d rows, want 1", i, n)
		}
	}
	if n := countRows(t, db, `SELECT count(*) FROM river_job WHERE kind = 'extract'`); n != writers {
		t.Errorf("%d jobs, want %d", n, writers)
	}
	if got := db.commits.batches.Load() - batches; got != 1 {
		t.Errorf("%d commits, want the batch's one", got)
	}
}

// TestGroupCommitRetriesAfterTheTransactionEnds has requests end the
// batch's transaction themselves, as SQLite does on an I/O error or a
// full disk: the requests that ran before them are run again in a new
// transaction, and only the culprits fail.
func TestGroupCommitRetriesAfterTheTransactionEnds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openInternal(t, Options{})
	rig := newBatchRig(t, db)

	user := func(name string) func(ctx context.Context, tx *sql.Tx) error {
		return func(ctx context.Context, tx *sql.Tx) error {
			_, err := db.ensureUser(ctx, tx, memento.Scope{Tenant: memento.DefaultTenant, User: name})
			return err
		}
	}
	var errs [5]error
	rig.send(func() { errs[0] = db.groupTx(ctx, user("a")) })
	rig.send(func() { errs[1] = db.groupTx(ctx, user("b")) })
	// Ends the transaction and reports an error.
	rig.send(func() {
		errs[2] = db.groupTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `ROLLBACK`); err != nil {
				return err
			}
			return errors.New("lost the transaction")
		})
	})
	rig.send(func() { errs[3] = db.groupTx(ctx, user("c")) })
	// Ends the transaction and claims success.
	rig.send(func() {
		errs[4] = db.groupTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `ROLLBACK`)
			return err
		})
	})
	rig.release()

	for i, want := range []bool{false, false, true, false, true} {
		if got := errs[i] != nil; got != want {
			t.Errorf("request %d: err = %v, want error: %t", i, errs[i], want)
		}
	}
	if errs[2] == nil || !strings.Contains(errs[2].Error(), "lost the transaction") || !strings.Contains(errs[2].Error(), "roll back to savepoint") {
		t.Errorf("request 2: err = %v, want its own error and the failed rollback to its savepoint", errs[2])
	}
	if errs[4] == nil || !strings.Contains(errs[4].Error(), "release savepoint") {
		t.Errorf("request 4: err = %v, want the failed release of its savepoint", errs[4])
	}
	for _, u := range []string{"a", "b", "c"} {
		if n := countRows(t, db, `SELECT count(*) FROM users WHERE id = ?`, u); n != 1 {
			t.Errorf("user %s: %d rows, want 1", u, n)
		}
	}
	// The writer is healthy afterwards.
	if err := db.groupTx(ctx, user("d")); err != nil {
		t.Errorf("write after the failures: %v", err)
	}
}

func TestGroupCommitAfterClose(t *testing.T) {
	t.Parallel()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "memento.db"), Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = db.AppendMessages(context.Background(), memento.Scope{User: "ann"}, "t1", []memento.Message{{Role: memento.RoleUser, Text: "hi"}}, nil)
	if memento.ErrorCode(err) != memento.EUNAVAILABLE {
		t.Errorf("append after Close: %v, want EUNAVAILABLE", err)
	}
}

// countRows runs a count query on the writer.
func countRows(t *testing.T, db *DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.write.QueryRowContext(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestUrgentWritesGoFirst queues background writes, then a turn's save,
// then an urgent write (an append's acknowledgement): the committer runs
// the urgent one first, then the turn's, then the background writes
// queued ahead of them.
func TestUrgentWritesGoFirst(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{})
	rig := newBatchRig(t, db)
	// The first write, a background one, holds the writer for 100 ms:
	// the background has had its share of the writer's recent time, so
	// no batch favours it (TestOwedBackgroundBeginsTheBatch) however long
	// the store's opening writes took on a loaded machine.
	w := &writeRecorder{t: t, db: db, slow: "first", slowFor: 100 * time.Millisecond}
	write := w.write
	rig.send(write("first", prioBackground)) // taken by the committer, waiting for the writer
	rig.send(write("background 1", prioBackground))
	rig.send(write("turn", prioTurn))
	rig.send(write("background 2", prioBackground))
	rig.send(write("urgent", prioUrgent))
	rig.release()
	if want := []string{"first", "urgent", "turn", "background 1", "background 2"}; !slices.Equal(w.order, want) {
		t.Errorf("the committer ran %v, want %v", w.order, want)
	}
}

// writeRecorder sends writes that record the order the committer ran
// them in; the write named slow holds the writer for slowFor (10 ms when
// unset).
type writeRecorder struct {
	t       *testing.T
	db      *DB
	slow    string
	slowFor time.Duration
	mu      sync.Mutex
	order   []string
}

// write returns a call that sends the write name at the priority prio.
func (w *writeRecorder) write(name string, prio int) func() {
	return func() {
		fn := func(ctx context.Context, tx *sql.Tx) error {
			w.mu.Lock()
			w.order = append(w.order, name)
			w.mu.Unlock()
			if name == w.slow {
				time.Sleep(cmp.Or(w.slowFor, 10*time.Millisecond))
			}
			return nil
		}
		if err := w.db.commitTx(context.Background(), prio, fn); err != nil {
			w.t.Error(err)
		}
	}
}

// TestAcknowledgementsCommitWithoutTurns checks that once an urgent write
// somebody waits on (an append's acknowledgement) is in a batch, the batch
// takes no other kind of write: the turn and the background write queued
// behind it commit in the next batch. Without one they all share a
// batch; the intake's mover, urgent but waited on by nobody, takes them
// into its own.
func TestAcknowledgementsCommitWithoutTurns(t *testing.T) {
	t.Parallel()
	for _, last := range []string{"acknowledgement", "none", "mover"} {
		db := openInternal(t, Options{})
		rig := newBatchRig(t, db)
		var mu sync.Mutex
		batch := map[string]int64{} // the batches committed before each ran
		write := func(name string, prio int, lazy bool) func() {
			return func() {
				fn := func(ctx context.Context, tx *sql.Tx) error {
					mu.Lock()
					batch[name] = db.commits.batches.Load()
					mu.Unlock()
					return nil
				}
				if err := db.commitAt(context.Background(), prio, lazy, fn); err != nil {
					t.Error(err)
				}
			}
		}
		rig.send(write("first", prioBackground, false)) // taken, waiting for the writer
		rig.send(write("turn", prioTurn, false))
		rig.send(write("background", prioBackground, false))
		switch last {
		case "acknowledgement":
			rig.send(write("urgent", prioUrgent, false))
		case "mover":
			rig.send(write("urgent", prioUrgent, true))
		}
		rig.release()
		switch last {
		case "none":
			if batch["first"] != batch["turn"] || batch["turn"] != batch["background"] {
				t.Errorf("without an acknowledgement the writes ran in batches %v, want one", batch)
			}
			continue
		case "mover":
			// A lazy write does not join a batch waited on (first), as
			// before; it begins the next, and the others join it.
			if batch["urgent"] != batch["first"]+1 || batch["turn"] != batch["urgent"] || batch["background"] != batch["urgent"] {
				t.Errorf("with the mover the writes ran in batches %v; want the mover, the turn and the background write in one after the first", batch)
			}
			continue
		}
		if batch["urgent"] != batch["first"] || batch["turn"] != batch["urgent"]+1 || batch["background"] != batch["turn"] {
			t.Errorf("the writes ran in batches %v; want the acknowledgement with the write already running, the turn and the background write in the next", batch)
		}
	}
}

// TestWriterLearnsItsStatements checks that statements the writes run
// often, beyond those prepared at Open, are prepared once they have run a
// few times, and that the writes still do what they did.
func TestWriterLearnsItsStatements(t *testing.T) {
	ctx := context.Background()
	db := openInternal(t, Options{})
	before := db.writeStmts.size()
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "learner"}
	for i := range 2 * stmtLearnAfter {
		if _, err := db.AddEvents(ctx, s, []memento.Event{{Type: memento.EventWatched, TitleID: fmt.Sprintf("tt%07d", i+1)}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if after := db.writeStmts.size(); after <= before {
		t.Fatalf("prepared statements: %d before, %d after %d event writes; want more", before, after, 2*stmtLearnAfter)
	}
	events, err := db.Events(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2*stmtLearnAfter {
		t.Fatalf("stored %d events, want %d", len(events), 2*stmtLearnAfter)
	}
}

// TestStatementCacheBound checks that one-off statements do not grow the
// cache past its bound.
func TestStatementCacheBound(t *testing.T) {
	ctx := context.Background()
	db := openInternal(t, Options{})
	for i := range 3 * stmtCacheMax {
		q := fmt.Sprintf("SELECT %d", i)
		for range stmtLearnAfter {
			db.writeStmts.get(q)
		}
		if i%50 == 0 {
			db.writeStmts.prepareWanted(ctx)
		}
	}
	db.writeStmts.prepareWanted(ctx)
	if n := db.writeStmts.size(); n > stmtCacheMax {
		t.Fatalf("%d prepared statements, bound %d", n, stmtCacheMax)
	}
}

// TestCoalescedJobs checks memento.JobRequest.Coalesce: while the job of
// a key waits to run, the transactions that ask for it again enqueue
// nothing; once it has started, the next one enqueues a job again.
func TestCoalescedJobs(t *testing.T) {
	ctx := context.Background()
	db := openInternal(t, Options{})
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	jobsFor := func(memento.Event) []memento.JobRequest {
		return []memento.JobRequest{{Kind: "model", Payload: map[string]string{"tenant": "default"}, Coalesce: true}}
	}
	count := func() (n int) {
		t.Helper()
		if err := db.write.QueryRowContext(ctx, `SELECT count(*) FROM river_job WHERE kind = 'model'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	add := func(i int) {
		t.Helper()
		if _, err := db.AddEvents(ctx, s, []memento.Event{{Type: memento.EventWatched, TitleID: fmt.Sprintf("tt%07d", i)}}, jobsFor); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		add(i)
	}
	if n := count(); n != 1 {
		t.Fatalf("%d model jobs after 5 transactions while the first waits, want 1", n)
	}
	if _, err := db.write.ExecContext(ctx, `UPDATE river_job SET state = 'running' WHERE kind = 'model'`); err != nil {
		t.Fatal(err)
	}
	add(5)
	add(6)
	if n := count(); n != 2 {
		t.Fatalf("%d model jobs after the first started and 2 more transactions, want 2", n)
	}
	// A job that does not coalesce is enqueued every time.
	plain := func(memento.Event) []memento.JobRequest {
		return []memento.JobRequest{{Kind: "plain", Payload: map[string]string{"tenant": "default"}}}
	}
	for i := range 3 {
		if _, err := db.AddEvents(ctx, s, []memento.Event{{Type: memento.EventWatched, TitleID: fmt.Sprintf("tt%07d", 100+i)}}, plain); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := db.write.QueryRowContext(ctx, `SELECT count(*) FROM river_job WHERE kind = 'plain'`).Scan(&n); err != nil || n != 3 {
		t.Fatalf("%d plain jobs (%v), want 3", n, err)
	}
}

// TestWriteTimes checks that a write asked for its timings
// (memento.WithWriteTimes) reports the wait behind the write the
// committer was running, its own commit and the sync of the log after it.
func TestWriteTimes(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{})
	db.ftsMerge.close()
	s := memento.Scope{User: "u"}
	running, release := make(chan struct{}), make(chan struct{})
	go func() {
		err := db.groupTx(context.Background(), func(ctx context.Context, tx *sql.Tx) error {
			close(running)
			<-release
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	}()
	<-running
	var times memento.WriteTimes
	done := make(chan time.Duration)
	go func() {
		start := time.Now()
		ctx := memento.WithWaitSplit(memento.WithWriteTimes(context.Background(), &times))
		if _, err := db.AppendMessages(ctx, s, "t", []memento.Message{{ID: "m1", Role: memento.RoleUser, Text: "hello"}}, nil); err != nil {
			t.Error(err)
		}
		done <- time.Since(start)
	}()
	waitFor(t, "the append to queue", func() bool { return len(db.commits.urgent) == 1 })
	const held = 20 * time.Millisecond
	time.Sleep(held)
	close(release)
	total := <-done
	if times.Waited < held {
		t.Errorf("waited %v behind a write that held the writer for %v", times.Waited, held)
	}
	if times.Wrote <= 0 || times.Synced <= 0 {
		t.Errorf("wrote %v, synced %v: want both measured", times.Wrote, times.Synced)
	}
	// The wait is split by what the writer ran: most of it the held
	// write, named by the function that sent it.
	if b := times.Behind[0]; b.What != "TestWriteTimes" || b.D < held || b.D > times.Waited {
		t.Errorf("waited behind %+v; want most of the wait behind TestWriteTimes, at least %v and at most the %v waited", times.Behind, held, times.Waited)
	}
	if sum := times.Waited + times.Wrote + times.Synced; sum > total {
		t.Errorf("the phases add up to %v, more than the call's %v", sum, total)
	}

	// Without the context nothing is recorded, and a later write does not
	// touch the earlier record.
	before := times
	if _, err := db.AppendMessages(context.Background(), s, "t", []memento.Message{{ID: "m2", Role: memento.RoleUser, Text: "again"}}, nil); err != nil {
		t.Fatal(err)
	}
	if times != before {
		t.Errorf("a write without the context changed the record: %+v, was %+v", times, before)
	}

	// Times asked for without the split leave Behind empty: the server's
	// metrics do not pay for it.
	var plain memento.WriteTimes
	if _, err := db.AppendMessages(memento.WithWriteTimes(context.Background(), &plain), s, "t", []memento.Message{{ID: "m3", Role: memento.RoleUser, Text: "once more"}}, nil); err != nil {
		t.Fatal(err)
	}
	if plain.Wrote <= 0 || plain.Behind != ([3]memento.WaitPart{}) {
		t.Errorf("times without the split = %+v; want the phases and no split", plain)
	}
}

// TestWriterShareAccount checks the account the committer keeps of its
// time: the background is owed its share while it had less than
// backgroundShare of the recent time, and the account's decay changes
// the shares of neither kind.
func TestWriterShareAccount(t *testing.T) {
	t.Parallel()
	var s writerShare
	now := time.Now()
	s.add(false, 30*time.Millisecond, now)
	if !s.owed() {
		t.Errorf("after foreground writes alone the background is not owed: %+v", s)
	}
	s.add(true, 5*time.Millisecond, now)
	if !s.owed() {
		t.Errorf("with a seventh of the time the background is not owed: %+v", s)
	}
	s.add(true, 10*time.Millisecond, now)
	if s.owed() {
		t.Errorf("with a third of the time the background is still owed: %+v", s)
	}
	before := s.bg / (s.fg + s.bg)
	s.decay(now.Add(3 * shareHalfLife))
	if got := s.bg / (s.fg + s.bg); math.Abs(got-before) > 1e-9 {
		t.Errorf("decay moved the background's share from %.3f to %.3f", before, got)
	}
	if want := 0.045 / 8; math.Abs(s.fg+s.bg-want) > 1e-9 {
		t.Errorf("after three half-lives the account holds %.6f s, want %.6f", s.fg+s.bg, want)
	}
	// Older time counts less: a background write now outweighs the
	// foreground's of three half-lives ago.
	s.add(true, 5*time.Millisecond, now.Add(3*shareHalfLife))
	if s.owed() {
		t.Errorf("after a recent background write the background is still owed: %+v", s)
	}
}

// TestOwedBackgroundBeginsTheBatch checks the order of a batch once the
// writer's recent time went to writes somebody waits on: the background
// write queued behind a turn begins the next batch, where the turn used
// to go first.
func TestOwedBackgroundBeginsTheBatch(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{})
	rig := newBatchRig(t, db)
	// The first write's 10 ms are the writer's recent time: all of it
	// the foreground's.
	w := &writeRecorder{t: t, db: db, slow: "first"}
	write := w.write
	rig.send(write("first", prioUrgent)) // taken, waiting for the writer
	rig.send(write("turn", prioTurn))
	rig.send(write("background", prioBackground))
	rig.send(write("urgent", prioUrgent))
	rig.release()
	if want := []string{"first", "urgent", "background", "turn"}; !slices.Equal(w.order, want) {
		t.Errorf("the committer ran %v, want %v", w.order, want)
	}
	if n := db.WriterStats().FavouredBatches; n != 1 {
		t.Errorf("%d batches favoured the background, want 1", n)
	}
}

// TestBackgroundKeepsAShareOfTheWriter checks that writes somebody waits
// on, arriving faster than the writer runs them, do not keep a background
// write waiting for as long as they come: eight callers send urgent
// writes of a millisecond each without pause, so the urgent queue never
// empties, while a job writes ten times in a row. Taking the urgent
// writes first and nothing else, the job's writes would run only after
// the flood's cap; with the background's share they end while it goes on.
func TestBackgroundKeepsAShareOfTheWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openInternal(t, Options{})
	db.ftsMerge.close()
	const (
		callers   = 8
		floodCap  = 4000 // urgent writes at most: a starved job waits for all
		jobWrites = 10
	)
	var urgent atomic.Int64 // urgent writes run
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				if urgent.Load() >= floodCap {
					return
				}
				err := db.urgentTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
					time.Sleep(time.Millisecond)
					urgent.Add(1)
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	waitFor(t, "the flood to fill the urgent queue", func() bool { return len(db.commits.urgent) > 0 })
	for range jobWrites {
		if err := db.groupTx(jobctx.With(ctx), func(ctx context.Context, tx *sql.Tx) error {
			time.Sleep(time.Millisecond)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	ran := urgent.Load()
	close(done)
	wg.Wait()
	if ran >= floodCap {
		t.Fatalf("the job's %d writes ran only after the flood's %d urgent writes", jobWrites, floodCap)
	}
	t.Logf("the job's %d writes ran while %d urgent writes did", jobWrites, ran)
}
