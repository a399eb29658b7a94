package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
	"github.com/memento-ai/memento/storetest"
)

// backlogUsers are the users of the backlog tests.
var backlogUsers = []memento.Scope{{User: "u0"}, {User: "u1"}, {User: "u2"}, {User: "u3"}}

// byUserJob enqueues a message's job in its user's backlog, with the
// message's id as payload.
func byUserJob(m memento.Message) []memento.JobRequest {
	return []memento.JobRequest{{Kind: "bl", Payload: m.ID, ByUser: true}}
}

// TestBacklogTwoQueues runs two queues on one file, as two processes
// would, over the same users' backlogs: no two batches of one user ever
// overlap, though each queue takes batches of every user, and every job
// is done once, in order.
func TestBacklogTwoQueues(t *testing.T) {
	path := filepath.Join(t.TempDir(), "two.db")
	// Two workers each for four users: neither queue can take every
	// user's batches, so both run some.
	opts := sqlitetest.Options()
	opts.Workers = 2
	a := sqlitetest.OpenPath(t, path, opts)
	b := sqlitetest.OpenPath(t, path, opts)
	rec := storetest.NewBacklog()
	rec.Pause = 10 * time.Millisecond
	var byA, byB atomic.Int64
	counted := func(n *atomic.Int64) memento.BacklogHandler {
		return func(ctx context.Context, s memento.Scope, jobs []memento.BacklogJob) []error {
			n.Add(1)
			return rec.Handle(ctx, s, jobs)
		}
	}
	a.HandleBacklog(counted(&byA), memento.BacklogOptions{MaxBatch: 4})
	b.HandleBacklog(counted(&byB), memento.BacklogOptions{MaxBatch: 4})
	for _, db := range []*sqlite.DB{a, b} {
		if err := db.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Stop(context.Background()) })
	}
	const each = 30
	var wg sync.WaitGroup
	for k, s := range backlogUsers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				db := []*sqlite.DB{a, b}[(k+i)%2]
				id := fmt.Sprintf("%s-%03d", s.User, i)
				if _, err := db.AppendMessages(context.Background(), s, "t1", []memento.Message{{ID: id, Role: memento.RoleUser, Text: "hi"}}, byUserJob); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	sqlitetest.WaitForJobs(t, a, 60*time.Second)
	if rec.Overlaps != 0 {
		t.Errorf("%d batches began while another batch of the same user ran", rec.Overlaps)
	}
	if byA.Load() == 0 || byB.Load() == 0 {
		t.Errorf("batches run by each queue: %d and %d; want both to take some", byA.Load(), byB.Load())
	}
	for _, s := range backlogUsers {
		var want []string
		for i := range each {
			want = append(want, fmt.Sprintf(`"%s-%03d"`, s.User, i))
		}
		got := rec.DoneOf(s.User)
		for i := range got {
			got[i] = `"` + got[i] + `"`
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s's jobs done = %v, want each once in order", s.User, got)
		}
	}
}

// TestBacklogHelperProcess is not a test: run by
// TestBacklogSurvivesSIGKILL in a child process, it runs a queue whose
// backlog handler marks each job done with an event, and appends messages
// of four users with a job each, acknowledging each append, until it is
// killed.
func TestBacklogHelperProcess(t *testing.T) {
	db := sqlitetest.ChildStore(t)
	db.HandleBacklog(markDone(db, nil), memento.BacklogOptions{MaxBatch: killBatch})
	if err := db.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		s := backlogUsers[i%len(backlogUsers)]
		id := fmt.Sprintf("%s-%06d", s.User, i)
		if _, err := db.AppendMessages(context.Background(), s, "t1", []memento.Message{{ID: id, Role: memento.RoleUser, Text: "hi"}}, byUserJob); err != nil {
			t.Fatalf("append: %v", err)
		}
		sqlitetest.Ack(id)
	}
}

// killBatch is the batch size of the SIGKILL test.
const killBatch = 8

// markDone returns a backlog handler that stores, for each job, an event
// whose id is the job's payload (idempotent, as the engine's handlers
// are), and records each payload it was given in seen.
func markDone(db *sqlite.DB, seen func(string)) memento.BacklogHandler {
	return func(ctx context.Context, s memento.Scope, jobs []memento.BacklogJob) []error {
		out := make([]error, len(jobs))
		var events []memento.Event
		for _, j := range jobs {
			var id string
			if err := json.Unmarshal(j.Payload, &id); err != nil {
				return out[:0]
			}
			if seen != nil {
				seen(id)
			}
			events = append(events, memento.Event{ID: "done-" + id, Type: memento.EventWatched, TitleID: "t1"})
		}
		time.Sleep(time.Millisecond) // some batches are cut by the kill
		if _, err := db.AddEvents(ctx, s, events, nil); err != nil {
			for i := range out {
				out[i] = err
			}
		}
		return out
	}
}

// TestBacklogSurvivesSIGKILL kills a process while its queue runs batches
// and its clients append: after a restart no acknowledged job is lost,
// the backlog empties, and the jobs handed out again are at most those of
// the batches that were running (one per user) at the kill.
func TestBacklogSurvivesSIGKILL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kill.db")
	acked := sqlitetest.KillChild(t, "TestBacklogHelperProcess", path, 300)

	db := sqlitetest.OpenPath(t, path, sqlitetest.Options())
	ctx := t.Context()
	doneBefore := map[string]bool{}
	for _, s := range backlogUsers {
		events, err := db.Events(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			doneBefore[strings.TrimPrefix(e.ID, "done-")] = true
		}
	}
	var mu sync.Mutex
	again := map[string]int{}
	db.HandleBacklog(markDone(db, func(id string) {
		mu.Lock()
		again[id]++
		mu.Unlock()
	}), memento.BacklogOptions{MaxBatch: killBatch})
	if err := db.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Stop(context.Background()) })
	sqlitetest.WaitForJobs(t, db, 60*time.Second)

	done := map[string]bool{}
	for _, s := range backlogUsers {
		events, err := db.Events(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			done[strings.TrimPrefix(e.ID, "done-")] = true
		}
	}
	for _, id := range acked {
		if !done[id] {
			t.Errorf("the job of acknowledged message %s was lost", id)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	redone := 0
	for id, n := range again {
		if n > 1 {
			t.Errorf("job %s was handed out %d times after the restart", id, n)
		}
		if doneBefore[id] {
			redone++
		}
	}
	if bound := len(backlogUsers) * killBatch; redone > bound {
		t.Errorf("%d jobs done before the kill were handed out again, more than the %d of one batch per user", redone, bound)
	}
	t.Logf("child acknowledged %d messages; %d jobs were done before the kill, %d after the restart (%d of them again)", len(acked), len(doneBefore), len(again), redone)
}
