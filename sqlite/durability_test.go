package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/internal/jobctx"
)

// SQLite's numbers for the synchronous settings.
const (
	syncNormal = 1
	syncFull   = 2
	syncExtra  = 3
)

// syncLevelOf reads the synchronous setting a transaction runs at.
func syncLevelOf(ctx context.Context, tx *sql.Tx) (int, error) {
	var n int
	err := tx.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&n)
	return n, err
}

// TestJobWritesDoNotWaitForTheDisk checks which writes commit at which
// synchronous setting, for each configuration: those of a job's context
// at NORMAL; the group commits somebody waits on at NORMAL too, each
// answered after a sync of the log (logsync.go), where the configured
// level is FULL or EXTRA; transactions of their own at the configured
// level.
func TestJobWritesDoNotWaitForTheDisk(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		synchronous            string
		durable, batch, lazily int
		logSyncs               int64
	}{
		{"", syncFull, syncNormal, syncNormal, 3},
		{"EXTRA", syncExtra, syncNormal, syncNormal, 3},
		{"NORMAL", syncNormal, syncNormal, syncNormal, 0},
	} {
		t.Run("synchronous="+tc.synchronous, func(t *testing.T) {
			ctx := context.Background()
			db := openInternal(t, Options{Synchronous: tc.synchronous})
			db.ftsMerge.close() // its writes are jobs' too, and would count
			level := func(run func(fn func(ctx context.Context, tx *sql.Tx) error) error) int {
				t.Helper()
				var got int
				if err := run(func(ctx context.Context, tx *sql.Tx) error {
					var err error
					got, err = syncLevelOf(ctx, tx)
					return err
				}); err != nil {
					t.Fatal(err)
				}
				return got
			}
			unsynced, logSyncs := db.WriterStats().UnsyncedCommits, db.WriterStats().LogSyncs
			job := jobctx.With(ctx)
			for _, c := range []struct {
				what string
				run  func(fn func(ctx context.Context, tx *sql.Tx) error) error
				want int
			}{
				{"a group commit", func(fn func(ctx context.Context, tx *sql.Tx) error) error { return db.groupTx(ctx, fn) }, tc.batch},
				{"a job's group commit", func(fn func(ctx context.Context, tx *sql.Tx) error) error { return db.groupTx(job, fn) }, tc.lazily},
				{"an acknowledgement", func(fn func(ctx context.Context, tx *sql.Tx) error) error { return db.urgentTx(ctx, fn) }, tc.batch},
				{"a job's group commit again", func(fn func(ctx context.Context, tx *sql.Tx) error) error { return db.groupTx(job, fn) }, tc.lazily},
				{"a transaction of its own", func(fn func(ctx context.Context, tx *sql.Tx) error) error {
					return db.writeTx(ctx, func(tx *sql.Tx) error { return fn(ctx, tx) })
				}, tc.durable},
				{"a transaction of its own in a job", func(fn func(ctx context.Context, tx *sql.Tx) error) error {
					return db.writeTx(job, func(tx *sql.Tx) error { return fn(job, tx) })
				}, tc.durable},
				{"a bulk write", func(fn func(ctx context.Context, tx *sql.Tx) error) error {
					return db.writeTxAt(ctx, false, func(tx *sql.Tx) error { return fn(ctx, tx) })
				}, tc.lazily},
				{"a turn", func(fn func(ctx context.Context, tx *sql.Tx) error) error { return db.turnTx(ctx, fn) }, tc.batch},
			} {
				if got := level(c.run); got != c.want {
					t.Errorf("%s ran at synchronous %d, want %d", c.what, got, c.want)
				}
			}
			// Between transactions the writer is at the jobs' level,
			// which River's own transactions use.
			var now int
			if err := db.write.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&now); err != nil {
				t.Fatal(err)
			}
			if now != tc.lazily {
				t.Errorf("the writer rests at synchronous %d, want %d", now, tc.lazily)
			}
			wantUnsynced := int64(0)
			if tc.durable != tc.lazily {
				wantUnsynced = 2
			}
			if got := db.WriterStats().UnsyncedCommits - unsynced; got != wantUnsynced {
				t.Errorf("%d commits without a sync, want %d", got, wantUnsynced)
			}
			// The group commit, the acknowledgement and the turn ran one
			// after the other, each answered after a sync of its own.
			if got := db.WriterStats().LogSyncs - logSyncs; got != tc.logSyncs {
				t.Errorf("%d syncs of the log, want %d", got, tc.logSyncs)
			}
		})
	}
}

// TestBackgroundSavesShareTheGroupCommit checks that the writes of the
// background that used to run transactions of their own, the
// co-occurrence model's save and the job queue's lease renewal, go
// through the group commit and do not wait for the disk there (a model
// job's save, a renewal), while a model saved outside a job (a snapshot's
// restore) is on disk when the call returns.
func TestBackgroundSavesShareTheGroupCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openInternal(t, Options{})
	db.ftsMerge.close() // its writes are jobs' too, and would count
	before := db.WriterStats()
	count := func(what string) int64 { return db.WriterStats().ByWrite[what].Writes - before.ByWrite[what].Writes }

	if v, err := db.SaveProfileModel(jobctx.With(ctx), memento.ProfileModel{Name: "cooc", EventsMark: 7, Data: []byte("learned")}, false); err != nil || v != 1 {
		t.Fatalf("SaveProfileModel in a job = %d, %v; want version 1", v, err)
	}
	if got := count("SaveProfileModel"); got != 1 {
		t.Errorf("the group commit ran %d model saves, want 1", got)
	}
	if got := db.WriterStats().UnsyncedCommits - before.UnsyncedCommits; got != 1 {
		t.Errorf("a model job's save: %d commits without a sync, want 1", got)
	}
	syncs := db.WriterStats().LogSyncs
	if v, err := db.SaveProfileModel(ctx, memento.ProfileModel{Name: "cooc", EventsMark: 8, Data: []byte("restored")}, false); err != nil || v != 2 {
		t.Fatalf("SaveProfileModel = %d, %v; want version 2", v, err)
	}
	if got := db.WriterStats().LogSyncs - syncs; got != 1 {
		t.Errorf("a save outside a job was answered after %d syncs of the log, want 1", got)
	}
	if m, err := db.ProfileModel(ctx, memento.DefaultTenant, "cooc"); err != nil || m == nil || m.Version != 2 || string(m.Data) != "restored" || m.EventsMark != 8 {
		t.Errorf("ProfileModel = %+v, %v; want version 2, mark 8, the restored data", m, err)
	}

	p, err := db.registerQueue(ctx, "q-test")
	if err != nil {
		t.Fatal(err)
	}
	unsynced := db.WriterStats().UnsyncedCommits
	var was int64
	if err := db.read.QueryRowContext(ctx, `SELECT heartbeat_at FROM queue_processes WHERE id = ?`, p.id).Scan(&was); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond) // the heartbeat is in milliseconds
	if err := db.renewLease(ctx, p.id); err != nil {
		t.Fatal(err)
	}
	if got := count("renewLease"); got != 1 {
		t.Errorf("the group commit ran %d lease renewals, want 1", got)
	}
	if got := db.WriterStats().UnsyncedCommits - unsynced; got != 1 {
		t.Errorf("a lease renewal: %d commits without a sync, want 1", got)
	}
	var now int64
	if err := db.read.QueryRowContext(ctx, `SELECT heartbeat_at FROM queue_processes WHERE id = ?`, p.id).Scan(&now); err != nil {
		t.Fatal(err)
	}
	if now <= was {
		t.Errorf("the heartbeat went from %d to %d: not renewed", was, now)
	}
	db.unregisterQueue(p)
}

// TestProfileModelInParts checks a model larger than a part: it is
// written in parts, each a write of the group commit of its own, then
// its row, and read back whole; a new save replaces it and deletes the
// previous parts, and those a save that did not finish left; a reader
// during the saves sees one whole model or the other, never parts of
// both; a small model stays in its row.
func TestProfileModelInParts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openInternal(t, Options{})
	db.modelPart = 1000
	model := func(seed byte, n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = seed + byte(i*7)
		}
		return b
	}
	parts := func() int {
		t.Helper()
		var n int
		if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM profile_model_parts`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := db.WriterStats().ByWrite["SaveProfileModel"].Writes
	first := model(1, 4500)
	if v, err := db.SaveProfileModel(ctx, memento.ProfileModel{Name: "cooc", EventsMark: 3, Data: first}, false); err != nil || v != 1 {
		t.Fatalf("SaveProfileModel = %d, %v; want version 1", v, err)
	}
	if got := db.WriterStats().ByWrite["SaveProfileModel"].Writes - before; got != 6 {
		t.Errorf("a model of 4,500 bytes in parts of 1,000 took %d writes, want 6 (five parts and the row)", got)
	}
	if n := parts(); n != 5 {
		t.Errorf("%d parts stored, want 5", n)
	}
	m, err := db.ProfileModel(ctx, "", "cooc")
	if err != nil || m == nil || m.Version != 1 || m.EventsMark != 3 || !bytes.Equal(m.Data, first) {
		t.Fatalf("ProfileModel = %v, %v; want version 1, mark 3 and the 4,500 bytes saved", m, err)
	}

	// What a save that did not finish leaves.
	if _, err := db.write.ExecContext(ctx, `INSERT INTO profile_model_parts (tenant_id, name, stage, part, data) VALUES ('default', 'cooc', 'stage_lost', 0, x'00')`); err != nil {
		t.Fatal(err)
	}
	// Saves of two sizes, while a reader reads: every read is one of
	// them, whole.
	second, third := model(2, 2500), model(3, 600)
	want := map[string]bool{string(first): true, string(second): true, string(third): true}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var reads int
	var bad error
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			m, err := db.ProfileModel(ctx, "", "cooc")
			if err != nil || m == nil || !want[string(m.Data)] {
				bad = fmt.Errorf("a read during the saves: %v, %v", m, err)
				return
			}
			reads++
		}
	})
	for i := range 20 {
		data := second
		if i%2 == 1 {
			data = third
		}
		if _, err := db.SaveProfileModel(ctx, memento.ProfileModel{Name: "cooc", EventsMark: int64(4 + i), Data: data}, false); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if bad != nil {
		t.Fatal(bad)
	}
	t.Logf("%d reads during the saves", reads)
	m, err = db.ProfileModel(ctx, "", "cooc")
	if err != nil || m == nil || m.Version != 21 || !bytes.Equal(m.Data, third) {
		t.Fatalf("ProfileModel = %v, %v; want version 21 and the 600 bytes saved last", m, err)
	}
	if n := parts(); n != 0 {
		t.Errorf("%d parts left after a model small enough for its row, want 0", n)
	}
	if _, err := db.SaveProfileModel(ctx, memento.ProfileModel{Name: "cooc", EventsMark: 30, Data: second}, false); err != nil {
		t.Fatal(err)
	}
	if n := parts(); n != 3 {
		t.Errorf("%d parts stored, want 3", n)
	}
	// A part missing is an error, not a shorter model.
	if _, err := db.write.ExecContext(ctx, `DELETE FROM profile_model_parts WHERE part = 1`); err != nil {
		t.Fatal(err)
	}
	if m, err := db.ProfileModel(ctx, "", "cooc"); err == nil {
		t.Errorf("ProfileModel with a part missing = %d bytes, want an error", len(m.Data))
	}
}

// TestProfileModelSavedTwiceAtOnce saves one model in parts from two
// goroutines at once, again and again (under -race in CI): each save
// returns a version or ECONFLICT, a read after each sees one of the two
// models whole, and a save after them leaves only its own parts. In one
// process the committer's queue keeps each save's writes in order, so the
// saves do not clash; the guards against another process's save (the
// row's count of its parts, deletions skipping the current parts) are
// reached by TestProfileModelSavedByTwoProcesses.
func TestProfileModelSavedTwiceAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openInternal(t, Options{})
	db.modelPart = 1000
	a, b := bytes.Repeat([]byte{'a'}, 3500), bytes.Repeat([]byte{'b'}, 2500)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var saved int
	for _, data := range [][]byte{a, b} {
		wg.Go(func() {
			for range 15 {
				_, err := db.SaveProfileModel(ctx, memento.ProfileModel{Name: "cooc", Data: data}, false)
				if err != nil && memento.ErrorCode(err) != memento.ECONFLICT {
					t.Errorf("SaveProfileModel: %v", err)
					return
				}
				if err == nil {
					mu.Lock()
					saved++
					mu.Unlock()
				}
				m, err := db.ProfileModel(ctx, "", "cooc")
				if err != nil || m == nil || !bytes.Equal(m.Data, a) && !bytes.Equal(m.Data, b) {
					t.Errorf("ProfileModel during the saves = %v, %v; want one of the two models whole", m, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if saved == 0 {
		t.Fatal("no save succeeded")
	}
	if _, err := db.SaveProfileModel(ctx, memento.ProfileModel{Name: "cooc", Data: a}, false); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM profile_model_parts`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Errorf("%d parts stored after a save of 3,500 bytes alone, want its 4", n)
	}
	if m, err := db.ProfileModel(ctx, "", "cooc"); err != nil || m == nil || !bytes.Equal(m.Data, a) {
		t.Errorf("ProfileModel = %v, %v; want the last model saved", m, err)
	}
}

// TestProfileModelSavedByTwoProcesses checks the guards of a save in
// parts against another process's save of the same model, two DBs on one
// file, each pausing its writes between two batches (one write a batch)
// while the other saves:
//
//   - a save whose parts the other's save deleted as left over, before
//     its row was written, fails with ECONFLICT and leaves the other's
//     model current and whole;
//   - a save that read the other's parts while they were not yet current
//     does not delete them once the other's row has made them current.
func TestProfileModelSavedByTwoProcesses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := bytes.Repeat([]byte{'a'}, 2500), bytes.Repeat([]byte{'b'}, 3500) // 3 and 4 parts
	open := func(t *testing.T, path string) *DB {
		t.Helper()
		db, err := Open(ctx, path, Options{Logger: quiet})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() {
			if err := db.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		db.modelPart = 1000
		db.commits.maxBatch = 1
		return db
	}
	// state reads how many parts are stored and how many the model's row
	// says it has (-1: no row, -2: the read failed).
	state := func(db *DB) (stored, current int) {
		if err := db.read.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM profile_model_parts),
			coalesce((SELECT parts FROM profile_models WHERE name = 'cooc'), -1)`).Scan(&stored, &current); err != nil {
			return -2, -2
		}
		return stored, current
	}
	// pauseWhen makes db's committer stop once after the batch that makes
	// cond true, until the returned release is called; paused is closed
	// then.
	pauseWhen := func(t *testing.T, db *DB, cond func(stored, current int) bool) (paused chan struct{}, release func()) {
		paused, resume := make(chan struct{}), make(chan struct{})
		var once, done sync.Once
		db.commits.afterBatch = func() {
			if s, c := state(db); cond(s, c) {
				once.Do(func() {
					close(paused)
					<-resume
				})
			}
		}
		release = func() { done.Do(func() { close(resume) }) }
		t.Cleanup(release)
		return paused, release
	}
	save := func(db *DB, data []byte) <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := db.SaveProfileModel(ctx, memento.ProfileModel{Name: "cooc", Data: data}, false)
			done <- err
		}()
		return done
	}
	current := func(t *testing.T, dbs []*DB, want []byte) {
		t.Helper()
		for _, db := range dbs {
			if m, err := db.ProfileModel(ctx, "", "cooc"); err != nil || m == nil || !bytes.Equal(m.Data, want) {
				t.Errorf("ProfileModel = %v, %v; want the %d bytes of %q", m, err, len(want), want[:1])
			}
		}
	}

	t.Run("parts deleted before the row", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "memento.db")
		pa, pb := open(t, path), open(t, path)
		// A stops once its three parts are written, before its row.
		paused, release := pauseWhen(t, pa, func(stored, current int) bool { return stored == 3 && current == -1 })
		errA := save(pa, a)
		receive(t, paused, "A's parts")
		// B reads A's parts as left over, saves its model and deletes them.
		if err := receive(t, save(pb, b), "a save"); err != nil {
			t.Fatalf("B's save: %v", err)
		}
		if s, c := state(pb); s != 4 || c != 4 {
			t.Fatalf("after B's save %d parts stored, the row says %d; want B's 4 and 4", s, c)
		}
		release()
		if err := receive(t, errA, "a save"); memento.ErrorCode(err) != memento.ECONFLICT {
			t.Fatalf("A's save, its parts deleted = %v, want ECONFLICT", err)
		}
		current(t, []*DB{pa, pb}, b)
	})

	t.Run("parts made current after another save read them", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "memento.db")
		pa, pb := open(t, path), open(t, path)
		pausedA, releaseA := pauseWhen(t, pa, func(stored, current int) bool { return stored == 3 && current == -1 })
		errA := save(pa, a)
		receive(t, pausedA, "A's parts")
		// B reads A's three parts, writes its own four and its row, and
		// stops before deleting A's.
		pausedB, releaseB := pauseWhen(t, pb, func(stored, current int) bool { return stored == 7 && current == 4 })
		errB := save(pb, b)
		receive(t, pausedB, "B's row")
		// A's row makes A's parts current.
		releaseA()
		if err := receive(t, errA, "a save"); err != nil {
			t.Fatalf("A's save: %v", err)
		}
		current(t, []*DB{pa, pb}, a)
		// B's deletions find A's parts current and leave them.
		releaseB()
		if err := receive(t, errB, "a save"); err != nil {
			t.Fatalf("B's save: %v", err)
		}
		current(t, []*DB{pa, pb}, a)
		// The next save deletes B's parts, which no row points at.
		if err := receive(t, save(pa, a), "a save"); err != nil {
			t.Fatal(err)
		}
		if s, c := state(pa); s != 3 || c != 3 {
			t.Errorf("after another save %d parts stored, the row says %d; want 3 and 3", s, c)
		}
		current(t, []*DB{pa, pb}, a)
	})
}

// TestBatchesKeepJobsApart checks how a group commit mixes jobs' writes
// and writes somebody waits on, with the log synced after the commit: a
// batch that begins with a write waited on takes no job's write, while a
// batch of jobs' writes takes the writes waited on that come (answered
// after a sync of the log) and no job's write after them.
func TestBatchesKeepJobsApart(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{})
	rig := newBatchRig(t, db)
	batches, logSyncs, unsynced := db.commits.batches.Load(), db.WriterStats().LogSyncs, db.WriterStats().UnsyncedCommits
	var mu sync.Mutex
	type ran struct {
		name  string
		level int
	}
	var order []ran
	write := func(name string, job bool, prio int) func() {
		return func() {
			ctx := context.Background()
			if job {
				ctx = jobctx.With(ctx)
			}
			err := db.commitTx(ctx, prio, func(ctx context.Context, tx *sql.Tx) error {
				level, err := syncLevelOf(ctx, tx)
				mu.Lock()
				order = append(order, ran{name, level})
				mu.Unlock()
				return err
			})
			if err != nil {
				t.Error(err)
			}
		}
	}
	rig.send(write("job 1", true, prioBackground)) // taken, waiting for the writer
	rig.send(write("job 2", true, prioBackground))
	rig.send(write("api", false, prioBackground))
	rig.send(write("job 3", true, prioBackground))
	rig.send(write("ack", false, prioUrgent))
	rig.release()
	// Batches: job 1 with the acknowledgement (taken first), which ends
	// it at job 2; job 2 with the API's write, which ends it at job 3;
	// job 3.
	want := []ran{{"job 1", syncNormal}, {"ack", syncNormal}, {"job 2", syncNormal}, {"api", syncNormal}, {"job 3", syncNormal}}
	if !slices.Equal(order, want) {
		t.Errorf("the committer ran %v, want %v", order, want)
	}
	if got := db.commits.batches.Load() - batches; got != 3 {
		t.Errorf("%d batches, want 3", got)
	}
	if got := db.WriterStats().UnsyncedCommits - unsynced; got != 1 {
		t.Errorf("%d commits nobody waited on, want 1 (job 3's)", got)
	}
	if got := db.WriterStats().LogSyncs - logSyncs; got < 1 || got > 2 {
		t.Errorf("%d syncs of the log, want 1 or 2 (after the acknowledgement's and the API's batches, which may share one)", got)
	}

	// A batch that begins with a write waited on takes no job's write.
	rig = newBatchRig(t, db)
	order = nil
	batches = db.commits.batches.Load()
	rig.send(write("ack 2", false, prioUrgent)) // taken, waiting for the writer
	rig.send(write("job 4", true, prioBackground))
	rig.send(write("ack 3", false, prioUrgent))
	rig.release()
	want = []ran{{"ack 2", syncNormal}, {"ack 3", syncNormal}, {"job 4", syncNormal}}
	if !slices.Equal(order, want) {
		t.Errorf("the committer ran %v, want %v", order, want)
	}
	if got := db.commits.batches.Load() - batches; got != 2 {
		t.Errorf("%d batches, want 2 (the acknowledgements, then the job's write)", got)
	}
}

// TestQueueRunsJobsAsJobs checks that the queue's workers mark what their
// handlers write as jobs' writes: a River job's and a backlog batch's.
func TestQueueRunsJobsAsJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openInternal(t, Options{})
	levels := make(chan int, 2)
	observe := func(ctx context.Context) error {
		return db.groupTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
			level, err := syncLevelOf(ctx, tx)
			levels <- level
			return err
		})
	}
	db.Handle("plain", func(ctx context.Context, _ string, _ json.RawMessage) error { return observe(ctx) }, memento.JobOptions{})
	db.HandleBacklog(func(ctx context.Context, _ memento.Scope, jobs []memento.BacklogJob) []error {
		err := observe(ctx)
		out := make([]error, len(jobs))
		for i := range out {
			out[i] = err
		}
		return out
	}, memento.BacklogOptions{})
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	jobs := func(memento.Message) []memento.JobRequest {
		return []memento.JobRequest{{Kind: "plain", Payload: "p"}, {Kind: "mine", Payload: "m", ByUser: true}}
	}
	if _, err := db.AppendMessages(ctx, s, "t", []memento.Message{{Role: memento.RoleUser, Text: "hi"}}, jobs); err != nil {
		t.Fatal(err)
	}
	if err := db.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Stop(context.Background()) })
	for range 2 {
		select {
		case level := <-levels:
			if level != syncNormal {
				t.Errorf("a job's write ran at synchronous %d, want %d", level, syncNormal)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the jobs did not run")
		}
	}
}

// TestSyncLevelsUnderConcurrentWriters has writers of every kind write at
// once (group commits of jobs and of requests, transactions of their own
// at both levels): each transaction runs at its own level, whatever the
// one before it on the writer's connection set. Run with -race: the level
// the connection has is state shared by every writer.
func TestSyncLevelsUnderConcurrentWriters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openInternal(t, Options{})
	job := jobctx.With(ctx)
	kinds := []struct {
		what string
		run  func(fn func(ctx context.Context, tx *sql.Tx) error) error
		want int
	}{
		{"a group commit", func(fn func(ctx context.Context, tx *sql.Tx) error) error { return db.groupTx(ctx, fn) }, syncNormal},
		{"a job's group commit", func(fn func(ctx context.Context, tx *sql.Tx) error) error { return db.groupTx(job, fn) }, syncNormal},
		{"an acknowledgement", func(fn func(ctx context.Context, tx *sql.Tx) error) error { return db.urgentTx(ctx, fn) }, syncNormal},
		{"a transaction of its own", func(fn func(ctx context.Context, tx *sql.Tx) error) error {
			return db.writeTx(ctx, func(tx *sql.Tx) error { return fn(ctx, tx) })
		}, syncFull},
		{"a bulk write", func(fn func(ctx context.Context, tx *sql.Tx) error) error {
			return db.writeTxAt(ctx, false, func(tx *sql.Tx) error { return fn(ctx, tx) })
		}, syncNormal},
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 40 {
				k := kinds[(w+i)%len(kinds)]
				var got int
				err := k.run(func(ctx context.Context, tx *sql.Tx) error {
					var err error
					got, err = syncLevelOf(ctx, tx)
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
				if got != k.want {
					t.Errorf("%s ran at synchronous %d, want %d", k.what, got, k.want)
					return
				}
			}
		})
	}
	wg.Wait()
}
