package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/internal/jobctx"
)

// gateSyncs makes db's log syncer wait at each sync until the test lets
// it through, and reports each sync as it begins; it returns the gate (a
// send lets one sync run) and the reports.
func gateSyncs(t *testing.T, db *DB, fail error) (gate chan struct{}, began chan struct{}) {
	t.Helper()
	gate, began = make(chan struct{}), make(chan struct{}, 64)
	l := db.logSync
	l.mu.Lock()
	real := l.sync
	l.sync = func(slot int) error {
		began <- struct{}{}
		<-gate
		if fail != nil {
			return fail
		}
		return real(slot)
	}
	l.mu.Unlock()
	t.Cleanup(func() {
		l.mu.Lock()
		l.sync = real
		l.mu.Unlock()
		close(gate) // a sync still waiting runs
	})
	return gate, began
}

// appendOne appends a message and returns the result on a channel.
func appendOne(db *DB, user, text string) chan error {
	done := make(chan error, 1)
	go func() {
		s := memento.Scope{Tenant: memento.DefaultTenant, User: user}
		_, err := db.AppendMessages(context.Background(), s, "t", []memento.Message{{Role: memento.RoleUser, Text: text}}, nil)
		done <- err
	}()
	return done
}

// TestAcknowledgedAfterTheLogSync checks the log syncer's promise: an
// append is committed (readers see it) and the writer goes on to other
// writes, but its caller hears nothing until a sync of the log that began
// after the commit has ended.
func TestAcknowledgedAfterTheLogSync(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openInternal(t, Options{})
	db.ftsMerge.close()
	gate, began := gateSyncs(t, db, nil)

	done := appendOne(db, "ann", "the lighthouse keeper")
	receive(t, began, "the append's commit to ask for a sync")
	// Committed: a reader finds it while the sync waits.
	var n int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM messages WHERE text = 'the lighthouse keeper'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("readers see %d messages before the sync, want 1 (the commit has returned)", n)
	}
	// The writer is free: a job's write commits while the sync waits.
	if err := db.groupTx(jobctx.With(ctx), func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO tenants (id, created_at) VALUES ('other', 0)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Fatalf("the append was acknowledged (%v) before the log was synced", err)
	default:
	}
	gate <- struct{}{}
	if err := receive(t, done, "the append's acknowledgement after the sync"); err != nil {
		t.Fatal(err)
	}
}

// TestLogSyncsAreShared checks that the commits that end while a sync
// runs share the next one: twenty appends at once, with the first sync
// held until all are committed, take a few syncs, not twenty.
func TestLogSyncsAreShared(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{})
	db.ftsMerge.close()
	gate, began := gateSyncs(t, db, nil)
	before := db.WriterStats().LogSyncs

	const appends = 20
	first := appendOne(db, "ann", "first")
	<-began
	var dones []chan error
	all := make(chan error, appends)
	for i := range appends - 1 {
		d := appendOne(db, fmt.Sprintf("u%d", i), "later")
		dones = append(dones, d)
		go func() { all <- <-d }()
	}
	// Every later append commits while the first sync is held.
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM messages`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == appends {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d appends committed while a sync was held", n, appends)
		}
		time.Sleep(time.Millisecond)
	}
	gate <- struct{}{} // the first append's sync
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	// The other nineteen share the syncs that begin beside the held one
	// (logSyncsAtOnce in all) and one after it; one more should one of
	// them have been committed but not yet numbered by then.
	for left := len(dones); left > 0; {
		select {
		case <-began:
			gate <- struct{}{}
		case err := <-all:
			if err != nil {
				t.Fatal(err)
			}
			left--
		}
	}
	if got, most := db.WriterStats().LogSyncs-before, int64(logSyncsAtOnce+2); got < 2 || got > most {
		t.Errorf("%d syncs for %d appends, want 2 to %d", got, appends, most)
	}
}

// TestLogSyncFailureIsReported checks that an append whose log could not
// be synced hears so, with a reason, rather than that it is kept.
func TestLogSyncFailureIsReported(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{})
	db.ftsMerge.close()
	disk := errors.New("input/output error")
	gate, _ := gateSyncs(t, db, disk)
	done := appendOne(db, "ann", "lost?")
	gate <- struct{}{}
	err := <-done
	if !errors.Is(err, disk) || !strings.Contains(err.Error(), "could not be synced") {
		t.Fatalf("append = %v, want the sync's failure named", err)
	}
}

// TestLogSyncTimes checks that the writer's statistics time each sync of
// the log: a sync held for 40ms is counted at 40ms or more, and a reading
// taken before it, subtracted, leaves that sync alone. With an intake its
// syncs are counted apart, as the ones its appends wait for.
func TestLogSyncTimes(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{})
	db.ftsMerge.close()
	gate, began := gateSyncs(t, db, nil)
	before := db.WriterStats()
	done := appendOne(db, "ann", "a slow disk")
	<-began
	time.Sleep(40 * time.Millisecond)
	gate <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	span := db.WriterStats().Sub(before)
	if span.LogSyncs != 1 || span.LogSyncTimes.Total() != 1 {
		t.Fatalf("%d syncs, %d timed; want the append's one", span.LogSyncs, span.LogSyncTimes.Total())
	}
	if q := span.LogSyncTimes.Quantile(1); q < 40*time.Millisecond || q > time.Second {
		t.Errorf("the sync held 40ms is counted at %v", q)
	}
	if span.IntakeLogSyncs != 0 || span.IntakeLogSyncTimes.Total() != 0 {
		t.Errorf("a store without an intake counted %d intake syncs", span.IntakeLogSyncs)
	}

	in := openInternal(t, Options{Intake: true})
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "bo"}
	if _, err := in.AppendMessages(context.Background(), s, "t", []memento.Message{{Role: memento.RoleUser, Text: "through the intake"}}, nil); err != nil {
		t.Fatal(err)
	}
	st := in.WriterStats()
	if st.IntakeLogSyncs == 0 || st.IntakeLogSyncTimes.Total() != st.IntakeLogSyncs || st.IntakeLogSyncSeconds <= 0 {
		t.Errorf("intake: %d syncs, %d timed, %vs; want the append's sync counted and timed", st.IntakeLogSyncs, st.IntakeLogSyncTimes.Total(), st.IntakeLogSyncSeconds)
	}
}

// TestLogSyncerSyncsTheLog checks that the syncer's descriptor is the
// database's log file, and that it follows the path when the log is made
// anew.
func TestLogSyncerSyncsTheLog(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{})
	if err := <-appendOne(db, "ann", "hello"); err != nil {
		t.Fatal(err)
	}
	l := db.logSync
	same := func() bool {
		l.fmu.Lock()
		defer l.fmu.Unlock()
		if l.f[0] == nil {
			t.Fatal("the syncer has not opened the log")
		}
		held, err := l.f[0].Stat()
		if err != nil {
			t.Fatal(err)
		}
		cur, err := os.Stat(db.path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		return os.SameFile(held, cur)
	}
	if !same() {
		t.Fatal("the syncer holds another file than the log")
	}

	// A log made anew at the path (SQLite deletes the log when its last
	// connection closes) is opened again at the next sync.
	dir := t.TempDir()
	other := &logSyncer{path: dir + "/x.db-wal"}
	other.sync = other.syncLog
	if err := os.WriteFile(other.path, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := other.syncLog(0); err != nil {
		t.Fatal(err)
	}
	first := other.f[0]
	if err := os.Remove(other.path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other.path, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := other.syncLog(0); err != nil {
		t.Fatal(err)
	}
	if other.f[0] == first {
		t.Fatal("the syncer kept the deleted log's descriptor")
	}
	other.f[0].Close()
	if err := os.Remove(other.path); err != nil {
		t.Fatal(err)
	}
	if err := other.syncLog(0); err == nil {
		t.Fatal("a sync without a log succeeded")
	}
}

// TestConcurrentAcknowledgementsAndJobs writes acknowledgements and jobs'
// writes at once from several goroutines, with -race: every
// acknowledgement is answered once, without error, after a sync.
func TestConcurrentAcknowledgementsAndJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openInternal(t, Options{})
	before := db.WriterStats()
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			for i := range 30 {
				if w%2 == 0 {
					if err := <-appendOne(db, fmt.Sprintf("u%d", w), fmt.Sprintf("message %d", i)); err != nil {
						t.Error(err)
						return
					}
					continue
				}
				err := db.groupTx(jobctx.With(ctx), func(ctx context.Context, tx *sql.Tx) error {
					_, err := tx.ExecContext(ctx, `INSERT INTO tenants (id, created_at) VALUES (?, 0)`, fmt.Sprintf("t%d-%d", w, i))
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	d := db.WriterStats().Sub(before)
	if d.LogSyncs < 1 || d.LogSyncs > 90 {
		t.Errorf("%d syncs of the log for 90 acknowledgements", d.LogSyncs)
	}
}

// holdSyncs makes db's log syncer hand each sync to the test as it
// begins: the sync waits until the test sends it the result to return
// (nil runs the real sync), or until the test ends.
func holdSyncs(t *testing.T, db *DB) chan chan error {
	t.Helper()
	began, ended := make(chan chan error, 64), make(chan struct{})
	l := db.logSync
	l.mu.Lock()
	real := l.sync
	l.sync = func(slot int) error {
		end := make(chan error)
		began <- end
		select {
		case err := <-end:
			if err != nil {
				return err
			}
		case <-ended:
		}
		return real(slot)
	}
	l.mu.Unlock()
	t.Cleanup(func() { close(ended) }) // before the store closes
	return began
}

// nextSync returns the next sync to begin, failing the test when none
// does.
func nextSync(t *testing.T, began chan chan error) chan error {
	t.Helper()
	return receive(t, began, "a sync of the log to begin")
}

// receive returns the next value from ch, failing the test when none
// comes within 30 seconds; what names what was waited for.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("gave up waiting for %s", what)
		var zero T
		return zero
	}
}

// TestLogSyncsOverlap checks that a commit that ends while a sync runs
// has its own sync begun at once rather than after the running one, up
// to logSyncsAtOnce, and that syncs may end in any order: the later
// sync's end acknowledges its commits while the earlier one runs.
func TestLogSyncsOverlap(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{})
	db.ftsMerge.close()
	began := holdSyncs(t, db)

	first := appendOne(db, "ann", "first")
	sync1 := nextSync(t, began)
	second := appendOne(db, "bo", "second")
	sync2 := nextSync(t, began) // while the first is held
	third := appendOne(db, "cy", "third")
	// The third commits, but two syncs run: it waits for a slot.
	ctx := context.Background()
	waitFor(t, "the third append's commit", func() bool {
		var n int
		if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM messages WHERE text = 'third'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	})
	select {
	case <-began:
		t.Fatalf("a third sync began while %d ran", logSyncsAtOnce)
	case <-time.After(50 * time.Millisecond):
	}

	// The second sync ends first: its append is acknowledged while the
	// first sync still runs.
	sync2 <- nil
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	// The third's sync begins now that a slot is free, and ends while
	// the first still runs.
	nextSync(t, began) <- nil
	if err := <-third; err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-first:
		t.Fatalf("the first append returned (%v) while the sync it runs was held", err)
	default:
	}
	sync1 <- nil
	if err := <-first; err != nil {
		t.Fatal(err)
	}

	l := db.logSync
	l.fmu.Lock()
	defer l.fmu.Unlock()
	opened := map[*os.File]bool{}
	for _, f := range l.f {
		if f != nil {
			opened[f] = true
		}
	}
	if len(opened) < 2 {
		t.Errorf("the overlapping syncs used %d descriptors of the log, want one each", len(opened))
	}
}

// TestOverlappingSyncFailure checks that when one of two overlapping
// syncs fails, the commits of both hear so: a failed write of the log's
// pages is reported to one descriptor's sync, which may be either.
func TestOverlappingSyncFailure(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{})
	db.ftsMerge.close()
	began := holdSyncs(t, db)
	disk := errors.New("input/output error")

	// Two appends, each with its sync, the second begun beside the
	// first; either failing fails both, the other succeeding or not.
	for i, failLater := range []bool{true, false} {
		earlier := appendOne(db, fmt.Sprintf("ann%d", i), "earlier")
		earlierSync := nextSync(t, began)
		later := appendOne(db, fmt.Sprintf("bo%d", i), "later")
		laterSync := nextSync(t, began)
		failed, failedDone, kept, keptDone := laterSync, later, earlierSync, earlier
		if !failLater {
			failed, failedDone, kept, keptDone = earlierSync, earlier, laterSync, later
		}
		failed <- disk
		if err := <-failedDone; !errors.Is(err, disk) {
			t.Fatalf("append = %v, want its sync's error", err)
		}
		// The other sync succeeds, but it ran beside the failed one,
		// whose failure may have been its pages'.
		kept <- nil
		if err := <-keptDone; !errors.Is(err, disk) {
			t.Fatalf("append = %v, want the overlapping sync's error", err)
		}
	}

	// A later commit is synced again.
	later := appendOne(db, "ed", "later")
	nextSync(t, began) <- nil
	if err := <-later; err != nil {
		t.Fatal(err)
	}
}
