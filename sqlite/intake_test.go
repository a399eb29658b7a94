package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

// holdWriter takes the store's one writer connection, as a long write of
// a background job would, until the returned function is called.
func holdWriter(t *testing.T, db *DB) (release func()) {
	t.Helper()
	conn, err := db.write.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { conn.Close() }) }
	t.Cleanup(release)
	return release
}

// extractJobs enqueues one "extract" job per message, named by its id.
func extractJobs(m memento.Message) []memento.JobRequest {
	return []memento.JobRequest{{Kind: "extract", Payload: memento.MessageJob{Tenant: m.Tenant, User: m.User, Thread: m.Thread, Message: m.ID, Seq: m.Seq}}}
}

func TestAppendIsAcknowledgedWhileTheWriterIsHeld(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{Intake: true})
	ann := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	release := holdWriter(t, db)

	// With the store's writer taken, appends are still acknowledged:
	// they wait for the intake's writer alone.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := db.AppendMessages(ctx, ann, "t1", []memento.Message{
		{ID: "m1", Role: memento.RoleUser, Text: "I love westerns"},
		{Role: memento.RoleAssistant, Text: "Try Unforgiven"},
	}, extractJobs)
	if err != nil {
		t.Fatalf("append while the writer is held: %v", err)
	}
	if res.Inserted != 2 || res.Messages[0].Seq != 1 || res.Messages[1].Seq != 2 || res.Messages[1].ID == "" {
		t.Fatalf("append = %+v, want two messages numbered 1 and 2, with ids", res)
	}
	more, err := db.AppendMessages(ctx, ann, "t1", []memento.Message{{ID: "m3", Role: memento.RoleUser, Text: "and heists"}}, extractJobs)
	if err != nil || more.Messages[0].Seq != 3 {
		t.Fatalf("second append = %+v, %v; want seq 3 after the two in the intake", more, err)
	}
	// Repeats and conflicts are told against the intake too.
	again, err := db.AppendMessages(ctx, ann, "t1", []memento.Message{{ID: "m1", Role: memento.RoleUser, Text: "I love westerns"}}, extractJobs)
	if err != nil || again.Inserted != 0 || again.Duplicates != 1 || again.Messages[0].Seq != 1 {
		t.Fatalf("repeated append = %+v, %v; want the stored m1 (seq 1) as a duplicate", again, err)
	}
	if _, err := db.AppendMessages(ctx, ann, "t1", []memento.Message{{ID: "m1", Role: memento.RoleUser, Text: "something else"}}, extractJobs); memento.ErrorCode(err) != memento.ECONFLICT {
		t.Fatalf("m1 with another text = %v, want ECONFLICT", err)
	}

	// What waits in the intake counts as unfinished work and as lag.
	if n, err := db.Unfinished(ctx); err != nil || n != 3 {
		t.Errorf("Unfinished = %d, %v; want the 3 messages in the intake", n, err)
	}
	lag, err := db.QueueLag(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var intakeLag *memento.QueueLag
	for i := range lag.Kinds {
		if lag.Kinds[i].Kind == IntakeKind {
			intakeLag = &lag.Kinds[i]
		}
	}
	if intakeLag == nil || intakeLag.Waiting != 3 || intakeLag.Oldest.IsZero() {
		t.Errorf("queue lag = %+v, want kind %q with 3 waiting since the first append", lag, IntakeKind)
	}

	// A read of the user waits until the acknowledged messages are in
	// the store: it never answers without them.
	short, cancelShort := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancelShort()
	if msgs, err := db.Messages(short, ann, "t1", 0, 0); err == nil {
		t.Fatalf("Messages answered %d messages while the acknowledged ones could not reach the store", len(msgs))
	}
	got := make(chan []memento.Message, 1)
	go func() {
		msgs, err := db.Messages(ctx, ann, "t1", 0, 0)
		if err != nil {
			t.Errorf("Messages: %v", err)
		}
		got <- msgs
	}()
	release()
	msgs := <-got
	if len(msgs) != 3 || msgs[0].ID != "m1" || msgs[1].ID != res.Messages[1].ID || msgs[2].ID != "m3" {
		t.Fatalf("messages = %+v, want m1, the reply and m3", msgs)
	}
	for i, m := range msgs {
		if m.Seq != int64(i+1) || !m.CreatedAt.Equal(append(res.Messages, more.Messages...)[i].CreatedAt) {
			t.Errorf("message %s: seq %d, created %v; want seq %d and the time the append answered", m.ID, m.Seq, m.CreatedAt, i+1)
		}
	}
	jobs, err := db.Jobs(ctx, memento.JobFilter{Kind: "extract"})
	if err != nil || len(jobs) != 3 {
		t.Fatalf("jobs = %d, %v; want one per message", len(jobs), err)
	}
	if n, err := db.Unfinished(ctx); err != nil || n != 3 {
		t.Errorf("Unfinished = %d, %v; want the 3 jobs", n, err)
	}
}

// TestIntakeRepeatsNothingAfterACrash leaves rows in the intake as a crash
// between the store's commit and the intake's deletion would (one of them
// already in the store), and checks that the next Open moves each once.
func TestIntakeRepeatsNothingAfterACrash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memento.db")
	ann := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	bob := memento.Scope{Tenant: memento.DefaultTenant, User: "bob"}
	db, err := Open(ctx, path, Options{Logger: quiet, Intake: true})
	if err != nil {
		t.Fatal(err)
	}
	first, err := db.AppendMessages(ctx, ann, "t1", []memento.Message{{ID: "m1", Role: memento.RoleUser, Text: "hello"}}, extractJobs)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	left, err := sql.Open(driverName, "file:"+path+"-intake")
	if err != nil {
		t.Fatal(err)
	}
	put := func(s memento.Scope, thread, id string, seq int64) {
		t.Helper()
		m := memento.Message{Tenant: s.Tenant, User: s.User, Thread: thread, ID: id, Seq: seq}
		jobs := fmt.Sprintf(`[{"kind":"extract","payload":{"tenant":%q,"user":%q,"thread":%q,"message":%q,"seq":%d}}]`, s.Tenant, s.User, thread, id, seq)
		if _, err := left.Exec(`INSERT INTO intake (tenant_id, user_id, thread_id, id, seq, role, text, at, created_at, jobs)
			VALUES (?, ?, ?, ?, ?, 'user', 'hello', ?, ?, ?)`, m.Tenant, m.User, m.Thread, m.ID, m.Seq, nanos(first.Messages[0].At), nanos(first.Messages[0].CreatedAt), jobs); err != nil {
			t.Fatal(err)
		}
	}
	put(ann, "t1", "m1", 1) // in the store already: its deletion was lost
	put(ann, "t1", "m2", 2)
	put(bob, "t9", "b1", 1)
	left.Close()

	db = openAt(t, path)
	if msgs, err := db.Messages(ctx, ann, "t1", 0, 0); err != nil || len(msgs) != 2 || msgs[0].ID != "m1" || msgs[1].ID != "m2" || msgs[1].Seq != 2 {
		t.Fatalf("ann's messages = %+v, %v; want m1 and m2, once each", msgs, err)
	}
	if msgs, err := db.Messages(ctx, bob, "t9", 0, 0); err != nil || len(msgs) != 1 {
		t.Fatalf("bob's messages = %+v, %v; want b1, in a thread the move created", msgs, err)
	}
	jobs, err := db.Jobs(ctx, memento.JobFilter{Kind: "extract"})
	if err != nil || len(jobs) != 3 {
		t.Fatalf("jobs = %d, %v; want m1's from the first append and one each for m2 and b1", len(jobs), err)
	}
	// The intake forgets what reached the store.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := db.intake.read.QueryRow(`SELECT count(*) FROM intake`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d rows still in the intake after they reached the store", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// openAt opens the store at path for the test.
func openAt(t *testing.T, path string) *DB {
	t.Helper()
	db, err := Open(context.Background(), path, Options{Logger: quiet, Intake: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestAppendsAndTurnsNumberOneThread appends and saves turns in one thread
// from several goroutines at once (run with -race): every message gets
// the number it was answered with, and the numbers run 1..n.
func TestAppendsAndTurnsNumberOneThread(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openInternal(t, Options{Intake: true})
	ann := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	const writers, each = 4, 15
	var mu sync.Mutex
	answered := map[string]int64{}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				id := fmt.Sprintf("w%d-%d", w, i)
				var stored []memento.Message
				var err error
				if (w+i)%3 == 0 {
					stored, err = db.SaveTurn(ctx, memento.Turn{Scope: ann, Thread: "t1",
						Messages: []memento.Message{{ID: id, Role: memento.RoleUser, Text: "turn " + id}, {ID: id + "r", Role: memento.RoleAssistant, Text: "reply"}}})
				} else {
					var res *memento.AppendResult
					res, err = db.AppendMessages(ctx, ann, "t1", []memento.Message{{ID: id, Role: memento.RoleUser, Text: "append " + id}}, extractJobs)
					if res != nil {
						stored = res.Messages
					}
				}
				if err != nil {
					t.Errorf("%s: %v", id, err)
					return
				}
				mu.Lock()
				for _, m := range stored {
					answered[m.ID] = m.Seq
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	msgs, err := db.Messages(ctx, ann, "t1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != len(answered) {
		t.Fatalf("%d messages stored, %d answered", len(msgs), len(answered))
	}
	for i, m := range msgs {
		if m.Seq != int64(i+1) {
			t.Errorf("message %d is numbered %d", i+1, m.Seq)
		}
		if answered[m.ID] != m.Seq {
			t.Errorf("message %s stored as %d, answered as %d", m.ID, m.Seq, answered[m.ID])
		}
	}
	st, err := db.ThreadState(ctx, ann, "t1")
	if err != nil || st.LastSeq != int64(len(msgs)) {
		t.Errorf("thread state = %+v, %v; want its newest message %d", st, err, len(msgs))
	}
}

// TestOneProcessHasTheIntake opens the store twice, as two processes
// would: both append to the intake, the first moves what both appended,
// and the messages keep the numbers they were answered with, in the order
// they were acknowledged, whichever process reads them.
func TestOneProcessHasTheIntake(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memento.db")
	first := openAt(t, path)
	second := openAt(t, path)
	if first.intake == nil || second.intake == nil || !first.intake.owns() || second.intake.owns() {
		t.Fatal("want an intake in each, moved by the first")
	}
	ann := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	for i := range 10 {
		db := first
		if i%2 == 1 {
			db = second
		}
		res, err := db.AppendMessages(ctx, ann, "t1", []memento.Message{{ID: fmt.Sprint("m", i), Role: memento.RoleUser, Text: "hello"}}, extractJobs)
		if err != nil {
			t.Fatal(err)
		}
		if res.Messages[0].Seq != int64(i+1) {
			t.Errorf("m%d answered as %d", i, res.Messages[0].Seq)
		}
	}
	for _, db := range []*DB{second, first} {
		msgs, err := db.Messages(ctx, ann, "t1", 0, 0)
		if err != nil || len(msgs) != 10 {
			t.Fatalf("messages = %d, %v; want 10", len(msgs), err)
		}
		for i, m := range msgs {
			if m.Seq != int64(i+1) || m.ID != fmt.Sprint("m", i) {
				t.Errorf("message %d is %s, numbered %d", i+1, m.ID, m.Seq)
			}
		}
	}
	if jobs, err := second.Jobs(ctx, memento.JobFilter{Kind: "extract"}); err != nil || len(jobs) != 10 {
		t.Errorf("jobs = %d, %v; want one per message", len(jobs), err)
	}

	// Once the first stops, the second takes the intake over: what it
	// appends still reaches the store.
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	wait, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := second.AppendMessages(wait, ann, "t1", []memento.Message{{ID: "after", Role: memento.RoleUser, Text: "still here"}}, extractJobs); err != nil {
		t.Fatal(err)
	}
	msgs, err := second.Messages(wait, ann, "t1", 0, 0)
	if err != nil || len(msgs) != 11 || msgs[10].ID != "after" || msgs[10].Seq != 11 {
		t.Fatalf("messages after the first closed = %d, %v; want 11, the last appended after", len(msgs), err)
	}
	if !second.intake.owns() {
		t.Error("the second did not take the intake over")
	}
}

// TestOpenWithoutTheIntakeMovesWhatItLeft opens without the intake a store
// whose intake holds acknowledged messages (a run with it ended before it
// could move them): they reach the store before Open returns.
func TestOpenWithoutTheIntakeMovesWhatItLeft(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memento.db")
	db, err := Open(ctx, path, Options{Logger: quiet, Intake: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	left, err := sql.Open(driverName, "file:"+path+"-intake")
	if err != nil {
		t.Fatal(err)
	}
	at := nanos(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if _, err := left.Exec(`INSERT INTO intake (tenant_id, user_id, thread_id, id, seq, role, text, at, created_at, jobs)
		VALUES ('default', 'ann', 't1', 'm1', 1, 'user', 'hello', ?, ?, '[{"kind":"extract","payload":{"message":"m1"}}]')`, at, at); err != nil {
		t.Fatal(err)
	}
	left.Close()

	db, err = Open(ctx, path, Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if db.intake != nil {
		t.Fatal("a store opened without the intake kept it open")
	}
	ann := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	if msgs, err := db.Messages(ctx, ann, "t1", 0, 0); err != nil || len(msgs) != 1 || msgs[0].ID != "m1" {
		t.Fatalf("messages = %+v, %v; want m1, moved at Open", msgs, err)
	}
	if n, err := db.Unfinished(ctx); err != nil || n != 1 {
		t.Fatalf("unfinished = %d, %v; want m1's job", n, err)
	}
	// A message appended now, without the intake, follows it.
	res, err := db.AppendMessages(ctx, ann, "t1", []memento.Message{{ID: "m2", Role: memento.RoleUser, Text: "again"}}, nil)
	if err != nil || res.Messages[0].Seq != 2 {
		t.Fatalf("append = %+v, %v; want seq 2", res, err)
	}
}

// TestChangedUsersSeesTheIntake checks that a snapshot's list of changed
// users has the users whose messages wait in the intake: once moved, their
// thread's time is when they were acknowledged, which a cursor set
// meanwhile may have passed.
func TestChangedUsersSeesTheIntake(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{Intake: true})
	ann := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	release := holdWriter(t, db)
	ctx := t.Context()
	before := time.Now().Add(-time.Second)
	if _, err := db.AppendMessages(ctx, ann, "t1", []memento.Message{{ID: "m1", Role: memento.RoleUser, Text: "I love westerns"}}, nil); err != nil {
		t.Fatal(err)
	}
	changed, err := db.ChangedUsers(ctx, before)
	if err != nil {
		t.Fatal(err)
	}
	if at, ok := changed[ann]; !ok || at.Before(before) {
		t.Errorf("ChangedUsers = %v; want ann, whose message waits in the intake", changed)
	}
	if later, err := db.ChangedUsers(ctx, time.Now().Add(time.Hour)); err != nil || len(later) != 0 {
		t.Errorf("ChangedUsers after the append = %v, %v; want none", later, err)
	}
	release()
	if _, err := db.Messages(ctx, ann, "t1", 0, 0); err != nil { // moved
		t.Fatal(err)
	}
	if changed, err := db.ChangedUsers(ctx, before); err != nil || changed[ann].IsZero() {
		t.Errorf("ChangedUsers once moved = %v, %v; want ann", changed, err)
	}
}

// TestIntakeElsewhere puts the intake on another directory, as on a device
// of its own: appends are acknowledged from the file and log there (none
// beside the store), reach the store, and the place is recorded, so that a
// start without the option moves what the intake left there.
func TestIntakeElsewhere(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, fast := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "memento.db")
	db, err := Open(ctx, path, Options{Logger: quiet, IntakePath: fast})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(fast, "memento.db-intake")
	if db.intake == nil || db.intake.path != want {
		t.Fatalf("intake = %+v; want one at %s", db.intake, want)
	}
	ann := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	release := holdWriter(t, db)
	if _, err := db.AppendMessages(ctx, ann, "t1", []memento.Message{{ID: "m1", Role: memento.RoleUser, Text: "hello"}}, extractJobs); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{want, want + "-wal"} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("the intake's %s: %v", filepath.Base(f), err)
		}
	}
	for _, f := range []string{path + "-intake", path + "-intake-wal"} {
		if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s beside the store: %v; want none", filepath.Base(f), err)
		}
	}
	if got, err := db.recordedIntake(); err != nil || got.path != want || got.token == "" {
		t.Errorf("recorded intake = %+v, %v; want %s with the store's token", got, err, want)
	}
	release()
	if msgs, err := db.Messages(ctx, ann, "t1", 0, 0); err != nil || len(msgs) != 1 {
		t.Fatalf("messages = %+v, %v; want m1", msgs, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// An acknowledged message the intake still holds, as after a crash,
	// is found there by a start without the option.
	putIntakeRow(t, want, "m2", 2)
	db, err = Open(ctx, path, Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if msgs, err := db.Messages(ctx, ann, "t1", 0, 0); err != nil || len(msgs) != 2 || msgs[1].ID != "m2" {
		t.Fatalf("messages = %+v, %v; want m1 and m2, moved from the intake elsewhere at Open", msgs, err)
	}

	// Another store of the same name, given the same directory, would
	// share the file: it is refused, and records nothing.
	other := filepath.Join(t.TempDir(), "memento.db")
	if _, err := Open(ctx, other, Options{Logger: quiet, IntakePath: fast}); memento.ErrorCode(err) != memento.ECONFLICT || !strings.Contains(err.Error(), "another store") {
		t.Fatalf("another store on this store's intake: %v; want ECONFLICT", err)
	}
	if _, err := os.Stat(other + intakeRecordSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused store recorded a place: %v", err)
	}
}

// TestIntakeMoves starts a store whose intake holds an acknowledged
// message with the intake in another place: the message reaches the store
// before the new place is recorded and used. While another process moves
// the old intake, the start is refused instead.
func TestIntakeMoves(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memento.db")
	fast := filepath.Join(t.TempDir(), "acks")
	first := openAt(t, path)
	if _, err := Open(ctx, path, Options{Logger: quiet, IntakePath: fast}); memento.ErrorCode(err) != memento.ECONFLICT || !strings.Contains(err.Error(), path+"-intake") {
		t.Fatalf("open with another intake while a process moves this one: %v; want ECONFLICT naming %s", err, path+"-intake")
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	putIntakeRow(t, path+"-intake", "m1", 1)

	db, err := Open(ctx, path, Options{Logger: quiet, IntakePath: fast})
	if err != nil {
		t.Fatal(err)
	}
	ann := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	res, err := db.AppendMessages(ctx, ann, "t1", []memento.Message{{ID: "m2", Role: memento.RoleUser, Text: "again"}}, extractJobs)
	if err != nil || res.Messages[0].Seq != 2 {
		t.Fatalf("append = %+v, %v; want m2 numbered after the moved m1", res, err)
	}
	if msgs, err := db.Messages(ctx, ann, "t1", 0, 0); err != nil || len(msgs) != 2 || msgs[0].ID != "m1" || msgs[1].ID != "m2" {
		t.Fatalf("messages = %+v, %v; want m1, moved from the old intake, then m2", msgs, err)
	}
	if n, err := intakeRows(ctx, path+"-intake"); err != nil || n != 0 {
		t.Errorf("old intake rows = %d, %v; want none", n, err)
	}
	rec, err := db.recordedIntake()
	if err != nil || rec.path != fast {
		t.Errorf("recorded intake = %+v, %v; want %s", rec, err, fast)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// Back to the default place, and there again: the store keeps its
	// token, so the intake it stamped is still its own.
	db = openAt(t, path)
	if db.intake.path != path+"-intake" {
		t.Errorf("intake at %s; want the default", db.intake.path)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if back, err := db.recordedIntake(); err != nil || back.path != path+"-intake" || back.token != rec.token {
		t.Errorf("recorded intake = %+v, %v; want the default place with token %s", back, err, rec.token)
	}
	db, err = Open(ctx, path, Options{Logger: quiet, IntakePath: fast})
	if err != nil {
		t.Fatalf("back to %s: %v", fast, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestIntakePathChecked refuses places the intake cannot have.
func TestIntakePathChecked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "memento.db")
	other := filepath.Join(t.TempDir(), "other.db")
	db, err := Open(context.Background(), other, Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("not a database, and long enough to show it\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{filepath.Join(dir, "missing", "intake"), path, path + "-wal", other, notes} {
		if _, err := Open(context.Background(), path, Options{Logger: quiet, IntakePath: bad}); memento.ErrorCode(err) != memento.EINVALID {
			t.Errorf("intake path %s: %v; want EINVALID", bad, err)
		}
	}
	if _, err := os.Stat(path + intakeRecordSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused place was recorded: %v", err)
	}
}

// putIntakeRow writes an acknowledged message of ann's thread t1 into the
// intake file at path, as an append would have before a crash.
func putIntakeRow(t *testing.T, path, id string, seq int64) {
	t.Helper()
	f, err := sql.Open(driverName, "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	at := nanos(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if _, err := f.Exec(`INSERT INTO intake (tenant_id, user_id, thread_id, id, seq, role, text, at, created_at, jobs)
		VALUES ('default', 'ann', 't1', ?, ?, 'user', 'hello', ?, ?, '[{"kind":"extract","payload":{"message":"x"}}]')`, id, seq, at, at); err != nil {
		t.Fatal(err)
	}
}

// TestIntakeStaysWhileUsed refuses to move the intake while a process
// that does not move it still appends to it: that process would go on
// appending where nobody moves from.
func TestIntakeStaysWhileUsed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memento.db")
	fast := t.TempDir()
	first := openAt(t, path)
	second := openAt(t, path)
	if second.intake.owns() {
		t.Fatal("want the second to append without moving")
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, path, Options{Logger: quiet, IntakePath: fast}); memento.ErrorCode(err) != memento.ECONFLICT {
		t.Fatalf("moving the intake while another process appends to it: %v; want ECONFLICT", err)
	}
	ann := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	wait, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := second.AppendMessages(wait, ann, "t1", []memento.Message{{ID: "m1", Role: memento.RoleUser, Text: "hello"}}, extractJobs); err != nil {
		t.Fatal(err)
	}
	if msgs, err := second.Messages(wait, ann, "t1", 0, 0); err != nil || len(msgs) != 1 {
		t.Fatalf("messages = %+v, %v; want m1, moved by the second once it took the intake over", msgs, err)
	}
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, path, Options{Logger: quiet, IntakePath: fast})
	if err != nil {
		t.Fatalf("moving the intake once nobody uses it: %v", err)
	}
	db.Close()
}

// TestIntakeMovedWhileStarting starts a store while another start holds
// the intake's users alone, as one moving the intake does, and records
// another place meanwhile: the first start, having read the old place,
// is refused once it may go on rather than appending where nobody moves
// from.
func TestIntakeMovedWhileStarting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memento.db")
	db, err := Open(ctx, path, Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	alone, err := lockFile(path+intakeUsersSuffix, true)
	if err != nil {
		t.Fatal(err)
	}
	opened := make(chan error, 1)
	go func() {
		db, err := Open(ctx, path, Options{Logger: quiet, Intake: true})
		if err == nil {
			db.Close()
		}
		opened <- err
	}()
	time.Sleep(500 * time.Millisecond) // the start reads the record, then waits for the lock
	elsewhere := filepath.Join(t.TempDir(), "intake")
	if err := os.WriteFile(path+intakeRecordSuffix, []byte(elsewhere+"\n"+newIntakeToken()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	alone.unlock()
	err = <-opened
	if memento.ErrorCode(err) != memento.ECONFLICT || !strings.Contains(err.Error(), "moved to "+elsewhere) {
		t.Fatalf("start after the intake moved: %v; want ECONFLICT naming its new place", err)
	}
}

// TestIntakeLostIsWarned removes the file of an intake kept elsewhere, as
// a device that does not keep its files would: a start, with the intake
// or without it, warns that what it held is lost, and goes on.
func TestIntakeLostIsWarned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memento.db")
	fast := t.TempDir()
	db, err := Open(ctx, path, Options{Logger: quiet, IntakePath: fast})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	var kept bytes.Buffer
	db, err = Open(ctx, path, Options{Logger: slog.New(slog.NewTextHandler(&kept, nil)), IntakePath: fast})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if strings.Contains(kept.String(), "missing") {
		t.Errorf("a start with the intake's file in place warned: %s", kept.String())
	}
	for _, opts := range []Options{{IntakePath: fast}, {}} {
		for _, f := range []string{"", "-wal", "-shm"} {
			_ = os.Remove(filepath.Join(fast, "memento.db-intake"+f))
		}
		var logs bytes.Buffer
		opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		db, err := Open(ctx, path, opts)
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
		if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "its file is missing") {
			t.Errorf("intake path %q: logs %q; want a warning that the intake's file is missing", opts.IntakePath, logs.String())
		}
	}
}
