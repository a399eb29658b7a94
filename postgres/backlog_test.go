package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/postgres"
	"github.com/memento-ai/memento/storetest"
)

// TestBacklogAcrossProcesses runs a queue on each of two stores on one
// database, as two `memento serve` processes, over the same users'
// backlogs, with jobs enqueued through both: no two batches of one user
// ever overlap, though both processes take batches, and every user's jobs
// are done once each, in the order they were enqueued.
func TestBacklogAcrossProcesses(t *testing.T) {
	// Two workers each for four users: neither process can take every
	// user's batches, so both run some.
	a, schema := openSchema(t, postgres.Options{Workers: 2})
	b, err := postgres.Open(context.Background(), testURL(t), postgres.Options{Schema: schema, MaxConns: 8, Workers: 2,
		PollInterval: 50 * time.Millisecond, RetryDelay: func(int) time.Duration { return 10 * time.Millisecond }})
	if err != nil {
		t.Fatalf("open the second store: %v", err)
	}
	t.Cleanup(func() { b.Close() })
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
	for _, db := range []*postgres.DB{a, b} {
		if err := db.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Stop(context.Background()) })
	}
	users := []memento.Scope{{User: "u0"}, {User: "u1"}, {User: "u2"}, {User: "u3"}}
	const each = 30
	var wg sync.WaitGroup
	for k, s := range users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				db := []*postgres.DB{a, b}[(k+i)%2]
				text := fmt.Sprintf("%s-%03d", s.User, i)
				if _, err := db.AppendMessages(context.Background(), s, "t1", []memento.Message{{Role: memento.RoleUser, Text: text}},
					func(m memento.Message) []memento.JobRequest {
						return []memento.JobRequest{{Kind: "bl", Payload: m.Text, ByUser: true}}
					}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	deadline := time.Now().Add(60 * time.Second)
	for {
		n, err := a.Unfinished(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs unfinished after a minute", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if rec.Overlaps != 0 {
		t.Errorf("%d batches began while another batch of the same user ran", rec.Overlaps)
	}
	if byA.Load() == 0 || byB.Load() == 0 {
		t.Errorf("batches run by each process: %d and %d; want both to take some", byA.Load(), byB.Load())
	}
	for _, s := range users {
		var want []string
		for i := range each {
			want = append(want, fmt.Sprintf("%s-%03d", s.User, i))
		}
		if got := rec.DoneOf(s.User); !slices.Equal(got, want) {
			t.Errorf("%s's jobs done = %v, want each once in order", s.User, got)
		}
	}
}
