package backlog

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/memento-ai/memento"
)

// fakeSteps is a backlog of n jobs that hands out up to batch a round.
type fakeSteps struct {
	left, finished int
	claimErr       error
	gaveUp         bool
}

func (f *fakeSteps) Claim(context.Context, memento.Scope, string, int64) error { return f.claimErr }

func (f *fakeSteps) Read(_ context.Context, _ memento.Scope, batch int) ([]memento.BacklogJob, error) {
	jobs := make([]memento.BacklogJob, min(batch, f.left))
	for i := range jobs {
		jobs[i] = memento.BacklogJob{ID: int64(i), Kind: "k"}
	}
	return jobs, nil
}

func (f *fakeSteps) Finish(_ context.Context, _ memento.Scope, _ string, _ int64, jobs []memento.BacklogJob, results []error, more bool) (bool, error) {
	f.left -= len(results)
	f.finished++
	if !more || f.left == 0 {
		f.gaveUp = true
		return false, nil
	}
	return true, nil
}

// TestRunStopsAfterItsShare: a job runs rounds until the backlog is empty
// or it has run Rounds of them, and gives the user up either way.
func TestRunStopsAfterItsShare(t *testing.T) {
	ok := func(_ context.Context, _ memento.Scope, jobs []memento.BacklogJob) []error {
		return make([]error, len(jobs))
	}
	var locks Locks
	s := memento.Scope{Tenant: "t", User: "u"}
	for _, tc := range []struct{ jobs, batch, rounds, left int }{
		{jobs: 5, batch: 10, rounds: 1, left: 0},
		{jobs: 25, batch: 10, rounds: 3, left: 0},
		{jobs: 100, batch: 10, rounds: Rounds, left: 100 - 10*Rounds},
	} {
		f := &fakeSteps{left: tc.jobs}
		if err := Run(context.Background(), f, &locks, s, "p", 1, ok, tc.batch); err != nil {
			t.Fatal(err)
		}
		if f.finished != tc.rounds || f.left != tc.left || !f.gaveUp {
			t.Errorf("%d jobs by %d: %d rounds, %d left, gave up %v; want %d rounds, %d left, given up", tc.jobs, tc.batch, f.finished, f.left, f.gaveUp, tc.rounds, tc.left)
		}
	}
	// A user with no backlog is nothing to do.
	f := &fakeSteps{left: 3, claimErr: ErrNoBacklog}
	if err := Run(context.Background(), f, &locks, s, "p", 1, ok, 10); err != nil || f.finished != 0 {
		t.Errorf("no backlog: err %v, %d rounds", err, f.finished)
	}
}

// TestCallAnswersEveryJob: without a handler, or when it panics, every job
// gets an error, so each runs again on its own.
func TestCallAnswersEveryJob(t *testing.T) {
	jobs := make([]memento.BacklogJob, 3)
	s := memento.Scope{Tenant: "t", User: "u"}
	for _, res := range Call(context.Background(), nil, s, jobs) {
		if !errors.Is(res, ErrNoHandler) {
			t.Errorf("no handler: %v", res)
		}
	}
	panics := func(context.Context, memento.Scope, []memento.BacklogJob) []error { panic("boom") }
	res := Call(context.Background(), panics, s, jobs)
	if len(res) != 3 || res[0] == nil || res[2] == nil {
		t.Errorf("panicking handler: %v", res)
	}
	tooMany := func(context.Context, memento.Scope, []memento.BacklogJob) []error { return make([]error, 5) }
	if n := len(Call(context.Background(), tooMany, s, jobs)); n != 3 {
		t.Errorf("a handler answering 5 of 3 jobs: %d results", n)
	}
}

// TestLocksKeepAUserApart: holders of one user's lock never overlap, other
// users go on, and the map forgets a user nobody holds.
func TestLocksKeepAUserApart(t *testing.T) {
	var locks Locks
	s := memento.Scope{Tenant: "t", User: "u"}
	var wg sync.WaitGroup
	inside, most := 0, 0
	var mu sync.Mutex
	for range 16 {
		wg.Go(func() {
			unlock := locks.Lock(s)
			mu.Lock()
			inside++
			most = max(most, inside)
			mu.Unlock()
			other := locks.Lock(memento.Scope{Tenant: "t", User: "v"})
			other()
			mu.Lock()
			inside--
			mu.Unlock()
			unlock()
		})
	}
	wg.Wait()
	if most != 1 {
		t.Errorf("%d holders of one user's lock at once", most)
	}
	if locks.Len() != 0 {
		t.Errorf("%d users left in the map", locks.Len())
	}
}
