package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

// appendN appends n single-message writes of one user.
func appendN(t *testing.T, db *DB, n int) {
	t.Helper()
	s := memento.Scope{User: "ann"}
	for i := range n {
		msg := []memento.Message{{Role: memento.RoleUser, Text: fmt.Sprintf("message number %d about quiet thrillers", i)}}
		if _, err := db.AppendMessages(context.Background(), s, "t1", msg, nil); err != nil {
			t.Fatalf("AppendMessages: %v", err)
		}
	}
}

func pragmaInt(t *testing.T, db *DB, name string) int {
	t.Helper()
	var v int
	if err := db.write.QueryRowContext(context.Background(), `PRAGMA `+name).Scan(&v); err != nil {
		t.Fatalf("PRAGMA %s: %v", name, err)
	}
	return v
}

func TestCheckpointerKeepsTheLogShort(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{CheckpointPages: 8, CheckpointIdle: 50 * time.Millisecond})
	if got := pragmaInt(t, db, "wal_autocheckpoint"); got != 0 {
		t.Fatalf("writer's wal_autocheckpoint = %d, want 0: the checkpointer checkpoints", got)
	}
	if got, want := pragmaInt(t, db, "journal_size_limit"), int(db.walLimit()); got != want {
		t.Fatalf("writer's journal_size_limit = %d, want %d", got, want)
	}
	appendN(t, db, 100)
	waitFor(t, "a PASSIVE checkpoint", func() bool { return db.ckpt.passives.Load() > 0 })
	// Once idle, everything is copied and the file is within its limit.
	waitFor(t, "the idle log to be checkpointed", func() bool {
		h, ok := readWALIndex(db.ckpt.shm)
		return ok && h.backlog() == 0 && db.ckpt.walBytes() <= db.walLimit()
	})
	msgs, err := db.Messages(context.Background(), memento.Scope{User: "ann"}, "t1", 0, 0)
	if err != nil || len(msgs) != 100 {
		t.Fatalf("after checkpoints: %d messages (%v), want 100", len(msgs), err)
	}
}

// TestCheckpointerTruncatesABurst writes one transaction far larger than
// the log's limit: once idle, the checkpointer empties the log file.
func TestCheckpointerTruncatesABurst(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{CheckpointPages: 8, CheckpointIdle: 50 * time.Millisecond})
	// The log must see no write after the burst: the full-text merger
	// would merge the burst's segments (a write) once the log was
	// truncated, whenever its tick comes after the idle period.
	db.ftsMerge.close()
	msgs := make([]memento.Message, 2000)
	for i := range msgs {
		msgs[i] = memento.Message{Role: memento.RoleUser, Text: fmt.Sprintf("message number %d of a long import about quiet thrillers", i)}
	}
	if _, err := db.AppendMessages(context.Background(), memento.Scope{User: "ann"}, "t1", msgs, nil); err != nil {
		t.Fatal(err)
	}
	if got := db.ckpt.walBytes(); got <= db.walLimit() {
		t.Fatalf("the burst left a log of %d bytes, within the limit of %d: the test needs a larger one", got, db.walLimit())
	}
	waitFor(t, "the idle log to be truncated", func() bool { return db.ckpt.truncates.Load() > 0 && db.ckpt.walBytes() == 0 })
	// Writes go on after a truncation.
	appendN(t, db, 3)
	if db.ckpt.walBytes() == 0 {
		t.Error("the log is empty right after a write")
	}
}

func TestCheckpointerCanBeTurnedOff(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{CheckpointPages: -1})
	if db.ckpt != nil {
		t.Error("a checkpointer runs with CheckpointPages < 0")
	}
	if got := pragmaInt(t, db, "wal_autocheckpoint"); got != 1000 {
		t.Errorf("wal_autocheckpoint = %d, want SQLite's default 1000", got)
	}
}

func TestReadWALIndex(t *testing.T) {
	t.Parallel()
	// Thresholds the test never reaches, so only it checkpoints.
	db := openInternal(t, Options{CheckpointPages: 1 << 30, CheckpointIdle: time.Hour})
	shm, err := os.Open(db.path + "-shm")
	if err != nil {
		t.Fatal(err)
	}
	defer shm.Close()
	before, ok := readWALIndex(shm)
	if !ok {
		t.Fatal("cannot read the wal-index header")
	}
	appendN(t, db, 5)
	h, ok := readWALIndex(shm)
	if !ok {
		t.Fatal("cannot read the wal-index header after writes")
	}
	if h.change == before.change || h.backlog() == 0 {
		t.Fatalf("after 5 writes the header is %+v (before %+v): want a new change counter and a backlog", h, before)
	}
	if _, err := db.write.ExecContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`); err != nil {
		t.Fatal(err)
	}
	h, ok = readWALIndex(shm)
	if !ok || h.backlog() != 0 || h.frames == 0 {
		t.Errorf("after a checkpoint the header is %+v (ok %t): want every frame backfilled", h, ok)
	}
}

// TestWriterBoundsTheLog stops the checkpointer's goroutine, as if it
// could never keep up: the writer itself must keep the log near its bound
// rather than let it grow with every write.
func TestWriterBoundsTheLog(t *testing.T) {
	t.Parallel()
	const pages = 4
	db := openInternal(t, Options{CheckpointPages: pages, CheckpointIdle: time.Hour})
	db.ckpt.cancel()
	<-db.ckpt.done
	most := uint32(0)
	for range 100 {
		appendN(t, db, 1)
		h, ok := readWALIndex(db.ckpt.shm)
		if !ok {
			t.Fatal("cannot read the wal-index header")
		}
		most = max(most, h.frames)
	}
	t.Logf("the log held at most %d frames; the writer checkpointed %d times", most, db.ckpt.bounds.Load())
	if db.ckpt.bounds.Load() == 0 {
		t.Error("the writer never checkpointed")
	}
	if st := db.WriterStats(); st.Checkpoints != db.ckpt.bounds.Load() || st.CheckpointSeconds <= 0 {
		t.Errorf("writer stats: %d checkpoints in %v s, want the writer's %d and their time", st.Checkpoints, st.CheckpointSeconds, db.ckpt.bounds.Load())
	}
	// One append writes a handful of pages; without the bound the log
	// would hold all of them, several hundred.
	if limit := uint32(checkpointBound*pages + 50); most > limit {
		t.Errorf("the log grew to %d frames; want at most %d", most, limit)
	}
}

// bulkRowsOf writes n memories of one user in one bulk transaction.
func bulkRowsOf(t *testing.T, db *DB, user string, n int) {
	t.Helper()
	s := memento.Scope{Tenant: memento.DefaultTenant, User: user}
	at := time.Date(2025, 4, 1, 9, 0, 0, 0, time.UTC)
	err := db.Bulk(context.Background(), func(b *Bulk) error {
		if err := b.User(s); err != nil {
			return err
		}
		for i := range n {
			if err := b.Memory(s, memento.Memory{ID: fmt.Sprintf("%s-%d", user, i), Attribute: fmt.Sprintf("likes%d", i), Mode: memento.ModeSemantic,
				Value: fmt.Sprintf("quiet thriller number %d with a long description of its plot", i), ValidFrom: at}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestBulkWritesRestartTheLog: a bulk transaction that finds the log past
// its bound waits for what keeps the log from restarting (here a reader
// that ends 100 ms later; during a build, the checkpointer copying the
// previous bulk transaction) instead of adding its pages after the
// others'; its page cache is back to the writer's size after it.
func TestBulkWritesRestartTheLog(t *testing.T) {
	t.Parallel()
	const pages = 4
	db := openInternal(t, Options{CheckpointPages: pages, CheckpointIdle: time.Hour})
	db.ckpt.cancel()
	<-db.ckpt.done
	bulkRowsOf(t, db, "first", 2000)
	first, ok := readWALIndex(db.ckpt.shm)
	if !ok || first.frames < checkpointBound*pages {
		t.Fatalf("the first bulk write left %d frames (ok %t): want more than the bound, %d", first.frames, ok, checkpointBound*pages)
	}
	ctx := context.Background()
	conn, err := db.read.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM memories`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		tx.Rollback()
	}()
	bulkRowsOf(t, db, "second", 10)
	second, ok := readWALIndex(db.ckpt.shm)
	if !ok {
		t.Fatal("cannot read the wal-index header")
	}
	if second.frames >= first.frames {
		t.Errorf("the log held %d frames after the second bulk write, %d after the first: the second did not restart it", second.frames, first.frames)
	}
	if got := pragmaInt(t, db, "cache_size"); got != writerCacheSize {
		t.Errorf("the writer's cache_size is %d after a bulk write, want %d", got, writerCacheSize)
	}
}

// TestWriterCheckpointsOnlyARemainder: past the log's bound the writer
// checkpoints (and every write waits for it) only once the checkpointer
// has left it little to copy, unless the checkpointer has stopped or the
// log has grown to twice its bound.
func TestWriterCheckpointsOnlyARemainder(t *testing.T) {
	t.Parallel()
	c := &walCheckpointer{pages: 1000}
	bound := uint32(checkpointBound * 1000)
	for _, tc := range []struct {
		name           string
		frames, copied uint32
		alive, want    bool
	}{
		{"within the bound", bound - 1, 0, true, false},
		{"past the bound, all copied", bound + 10, bound + 10, true, false},
		{"past the bound, much left", bound + 10, bound - 900, true, false},
		{"past the bound, a remainder", bound + 10, bound - 100, true, true},
		{"much left, no checkpointer", bound + 10, bound - 900, false, true},
		{"much left at twice the bound", 2 * bound, bound, true, true},
	} {
		h := walIndex{frames: tc.frames, backfill: tc.copied}
		if got := c.writerDue(h, tc.alive); got != tc.want {
			t.Errorf("%s (%d frames, %d copied, checkpointer running %t): writer checkpoints %t, want %t", tc.name, tc.frames, tc.copied, tc.alive, got, tc.want)
		}
	}
}

// TestCheckpointerCopiesPastTheBound: with the checkpointer running and
// the writer leaving large remainders to it, steady writes still keep
// the log near its bound.
func TestCheckpointerCopiesPastTheBound(t *testing.T) {
	t.Parallel()
	const pages = 16
	db := openInternal(t, Options{CheckpointPages: pages, CheckpointIdle: time.Hour})
	most := uint32(0)
	for range 400 {
		appendN(t, db, 1)
		if h, ok := readWALIndex(db.ckpt.shm); ok {
			most = max(most, h.frames)
		}
	}
	t.Logf("the log held at most %d frames; the writer checkpointed %d times, the checkpointer %d", most, db.ckpt.bounds.Load(), db.ckpt.passives.Load())
	if db.ckpt.bounds.Load() == 0 {
		t.Error("the log never restarted: the writer never checkpointed")
	}
	// The writer checkpoints by twice the bound at the latest, but a
	// PASSIVE checkpoint that finds the checkpointer in the way leaves the
	// log to the next write, and an append adds 15-35 frames: 334-355 on
	// an idle machine, 391 once with the package's tests run three at a
	// time. Without the writer's checkpoints the 400 appends leave
	// thousands.
	if limit := uint32(3 * checkpointBound * pages); most > limit {
		t.Errorf("the log grew to %d frames; want at most %d", most, limit)
	}
}

// TestCheckpointerWritesBackWhatItCopied: a checkpoint that copies part
// of the log leaves the pages it copied unsynced (SQLite syncs the
// database file only when the whole log is copied), so while the writer's
// checkpoints hold several writes the checkpointer hands them to the
// disk, off the writer, once per copy; a checkpoint that copied nothing
// new, one after a writer's checkpoint that held a single write, and one
// that copied the whole log add none.
func TestCheckpointerWritesBackWhatItCopied(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openInternal(t, Options{CheckpointPages: 1 << 20, CheckpointIdle: time.Hour})
	db.ftsMerge.close()
	// The test runs the checkpoints: the loop stops, and at this bound the
	// writer never checkpoints.
	c := db.ckpt
	c.cancel()
	<-c.done
	c.held.Store(writebackHeld)
	appendN(t, db, 10)
	// A reader of this snapshot keeps later frames from being copied.
	reader, err := db.read.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	snapshot := func() {
		t.Helper()
		var n int
		if _, err := reader.ExecContext(ctx, `BEGIN`); err != nil {
			t.Fatal(err)
		}
		if err := reader.QueryRowContext(ctx, `SELECT count(*) FROM messages`).Scan(&n); err != nil {
			t.Fatal(err)
		}
	}
	release := func() {
		t.Helper()
		if _, err := reader.ExecContext(ctx, `COMMIT`); err != nil {
			t.Fatal(err)
		}
	}
	checkpoint := func(wantWritebacks int64, what string) {
		t.Helper()
		if !c.checkpoint(ctx, "PASSIVE") {
			t.Fatalf("%s: the checkpoint did not complete", what)
		}
		if got := c.writebacks.Load(); got != wantWritebacks {
			t.Errorf("%s: %d writebacks in all, want %d", what, got, wantWritebacks)
		}
	}
	snapshot()
	appendN(t, db, 10)
	checkpoint(1, "a checkpoint that copied part of the log")
	if h, _ := readWALIndex(c.shm); h.backfill == 0 || h.backlog() == 0 {
		t.Fatalf("after the checkpoint %d of %d frames are copied: the test needs part of the log copied", h.backfill, h.frames)
	}
	checkpoint(1, "a checkpoint that copied nothing new")

	release()
	snapshot()
	appendN(t, db, 5)
	c.held.Store(1)
	checkpoint(1, "a checkpoint that copied part of the log after a writer's checkpoint that held one write")
	release()
	snapshot()
	appendN(t, db, 5)
	c.held.Store(writebackHeld)
	checkpoint(2, "a second checkpoint that copied part of the log")

	release()
	checkpoint(2, "a checkpoint that copied the whole log (which SQLite syncs itself)")
	if h, _ := readWALIndex(c.shm); h.backlog() != 0 {
		t.Fatalf("with the reader gone, %d frames are left to copy", h.backlog())
	}
	if st := db.WriterStats(); st.DatabaseWritebacks != 2 || st.DatabaseWritebackSeconds <= 0 {
		t.Errorf("writer stats: %d writebacks in %v s, want 2 and their time", st.DatabaseWritebacks, st.DatabaseWritebackSeconds)
	}

	// A file that refuses the call is not asked again.
	f, err := os.CreateTemp(t.TempDir(), "closed")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	kept := c.file
	c.file = f
	partial := func() {
		t.Helper()
		appendN(t, db, 5) // frames to copy, so that the reader's snapshot holds a mark in the log
		snapshot()
		appendN(t, db, 5)
	}
	partial()
	checkpoint(2, "a checkpoint whose writeback failed")
	c.file = kept
	if !c.writebackOff {
		t.Error("a failed writeback did not turn the writebacks off")
	}
	release()
	partial()
	checkpoint(2, "a checkpoint after a failed writeback")
	release()
	if msgs, err := db.Messages(ctx, memento.Scope{User: "ann"}, "t1", 0, 0); err != nil || len(msgs) != 50 {
		t.Fatalf("after the checkpoints: %d messages (%v), want 50", len(msgs), err)
	}
}

// TestWriterCheckpointCountsTheWritesItHeld: the writer's checkpoint
// records how many writes waited for the committer when it ended, which
// decides whether the checkpointer writes back what it copies.
func TestWriterCheckpointCountsTheWritesItHeld(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openInternal(t, Options{})
	db.ftsMerge.close()
	db.ckpt.held.Store(99)
	db.checkpointNow(ctx, "PASSIVE")
	if got := db.ckpt.held.Load(); got != 0 {
		t.Errorf("after a checkpoint of an idle writer %d writes are recorded as held, want 0", got)
	}

	running, release := make(chan struct{}), make(chan struct{})
	held := make(chan error, 1)
	go func() {
		held <- db.groupTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
			close(running)
			<-release
			return nil
		})
	}()
	<-running
	const n = 3
	appended := make(chan error, n)
	for i := range n {
		go func() {
			msg := []memento.Message{{ID: fmt.Sprintf("m%d", i), Role: memento.RoleUser, Text: "hello"}}
			_, err := db.AppendMessages(ctx, memento.Scope{User: "u"}, "t", msg, nil)
			appended <- err
		}()
	}
	waitFor(t, "the appends to queue", func() bool { return db.commits.waiting() == n })
	close(release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	for range n {
		if err := <-appended; err != nil {
			t.Fatal(err)
		}
	}
	if got := db.commits.waiting(); got != 0 {
		t.Errorf("%d writes wait after every write ended", got)
	}
}
