// Package backlog holds what both stores' users' backlogs
// (memento.JobRequest.ByUser) do the same way: the rounds one backlog job
// runs for its user, the call of the handler, and the lock that keeps two
// batches of one user apart within a process. Each store supplies the
// steps that touch its tables (Steps).
package backlog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/internal/keylock"
)

// Bounds of the rounds one backlog job runs before it hands the user over
// to a new job, which waits its turn behind the other users' jobs: a
// second round takes the jobs the first one caused (the profile of the
// events it added) and the messages that came meanwhile, but a user who
// keeps writing must not keep a worker from the others.
const (
	Rounds = 3
	Share  = 2 * time.Second
)

// finishTimeout bounds recording a round after the job's context ended, so
// that the user's backlog is given up even when the job ran out of time.
const finishTimeout = 30 * time.Second

// ErrNoHandler answers the jobs of a batch in a process that has no
// backlog handler: each goes to its own kind's handler.
var ErrNoHandler = errors.New("no backlog handler is registered in this queue process")

// ErrNoBacklog says a user has no backlog row (forgotten since the job was
// enqueued): there is nothing to do.
var ErrNoBacklog = errors.New("the user has no backlog")

// Steps are a store's operations on one user's backlog.
type Steps interface {
	// Claim makes owner the owner of the user's backlog and jobID its
	// job, waiting while another live queue process owns it. Errors:
	// ErrNoBacklog, ctx's error.
	Claim(ctx context.Context, s memento.Scope, owner string, jobID int64) error
	// Read returns up to batch of the user's backlog jobs, oldest first.
	Read(ctx context.Context, s memento.Scope, batch int) ([]memento.BacklogJob, error)
	// Finish records a round: the jobs answered (results, one per job of
	// jobs up to its length) are removed, failed ones enqueued on their
	// own. With more it keeps the backlog when jobs are left and reports
	// again; otherwise it gives the user up (enqueueing a successor job
	// when jobs are left).
	Finish(ctx context.Context, s memento.Scope, owner string, jobID int64, jobs []memento.BacklogJob, results []error, more bool) (again bool, err error)
}

// Run runs the user's backlog as the queue process owner, for the backlog
// job jobID, under locks' lock of the user: it claims the backlog and runs
// rounds of up to batch jobs with h, recording each, until none is left or
// the job has had its share (Rounds, Share).
func Run(ctx context.Context, st Steps, locks *Locks, s memento.Scope, owner string, jobID int64, h memento.BacklogHandler, batch int) error {
	unlock := locks.Lock(s)
	defer unlock()
	if err := st.Claim(ctx, s, owner, jobID); errors.Is(err, ErrNoBacklog) {
		return nil
	} else if err != nil {
		return fmt.Errorf("backlog of %s/%s: %w", s.Tenant, s.User, err)
	}
	// The user's backlog is this process's until a round gives it up,
	// which it must do even when the job ran out of time.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	start := time.Now()
	for round := 1; ; round++ {
		jobs, err := st.Read(ctx, s, batch)
		if err != nil {
			if _, ferr := st.Finish(fctx, s, owner, jobID, nil, nil, false); ferr != nil {
				err = errors.Join(err, ferr)
			}
			return fmt.Errorf("backlog of %s/%s: %w", s.Tenant, s.User, err)
		}
		var results []error
		if len(jobs) > 0 {
			results = Call(ctx, h, s, jobs)
		}
		stopped := ctx.Err() != nil
		more := !stopped && len(results) > 0 && round < Rounds && time.Since(start) < Share
		again, err := st.Finish(fctx, s, owner, jobID, jobs, results, more)
		if err != nil {
			return fmt.Errorf("backlog of %s/%s: %w", s.Tenant, s.User, err)
		}
		if len(results) < len(jobs) && stopped {
			return fmt.Errorf("backlog of %s/%s: %d of %d jobs done before the batch ended: %w", s.Tenant, s.User, len(results), len(jobs), ctx.Err())
		}
		if !again {
			return nil
		}
	}
}

// Call calls h over jobs, or answers every job with ErrNoHandler when
// there is no h. A panic answers every job with it: the handler's writes
// so far are kept (they are idempotent), and the jobs run again on their
// own.
func Call(ctx context.Context, h memento.BacklogHandler, s memento.Scope, jobs []memento.BacklogJob) (results []error) {
	if h == nil {
		return fill(len(jobs), ErrNoHandler)
	}
	defer func() {
		if p := recover(); p != nil {
			results = fill(len(jobs), fmt.Errorf("backlog handler panicked: %v", p))
		}
	}()
	results = h(ctx, s, jobs)
	if len(results) > len(jobs) {
		results = results[:len(jobs)]
	}
	return results
}

func fill(n int, err error) []error {
	out := make([]error, n)
	for i := range out {
		out[i] = err
	}
	return out
}

// Locks is a mutex per user: Run holds it for a backlog job's rounds, and
// the pipeline's remember jobs (pipeline.Worker) for each message, so that
// a user's messages are formed one at a time in a process. Its zero value
// is ready; a user's entry lives only while someone holds or waits for it.
type Locks = keylock.Map[memento.Scope]
