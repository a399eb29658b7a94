package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/internal/backlog"
)

// DefaultCatchUp is how many earlier unprocessed messages of the same user
// a job processes before its own.
const DefaultCatchUp = 16

// JobTimeout is the per-attempt timeout the remember job should be
// registered with: a run with a remote model makes up to a dozen calls.
const JobTimeout = 3 * time.Minute

// Ordered lists a user's messages that came before a given one and have
// not been processed, oldest first. *sqlite.DB implements it.
type Ordered interface {
	EarlierUnprocessed(ctx context.Context, s memento.Scope, message string, limit int) ([]memento.Message, error)
}

// Worker handles remember jobs (memento.JobRemember). Semantic values must
// change in the order things were said, but the queue runs jobs in
// parallel and in any order, so a job first takes its user's lock and
// processes the user's earlier unprocessed messages (up to CatchUp of
// them), oldest first; their own jobs then find them done. Runs of
// different users proceed in parallel. Across processes the store's
// conflict check keeps values consistent, though not always in order.
type Worker struct {
	Pipeline *Pipeline
	Ordered  Ordered
	// CatchUp bounds the earlier messages a job processes; 0 means
	// DefaultCatchUp, negative none.
	CatchUp int
	Logger  *slog.Logger

	locks backlog.Locks
}

// Handle is the memento.JobHandler of JobRemember. A message that no
// longer exists (its user was forgotten) completes the job without error.
func (w *Worker) Handle(ctx context.Context, kind string, payload json.RawMessage) error {
	var job memento.MessageJob
	if err := json.Unmarshal(payload, &job); err != nil {
		return fmt.Errorf("%s job: decode payload: %w", kind, err)
	}
	if job.User == "" || job.Message == "" {
		return fmt.Errorf("%s job: the payload names no user or message: %s", kind, payload)
	}
	s := memento.Scope{Tenant: job.Tenant, User: job.User}
	if s.Tenant == "" {
		s.Tenant = memento.DefaultTenant
	}
	_, err := w.Remember(ctx, s, job.Message)
	if errGone(err) {
		w.logger().InfoContext(ctx, "remember: message is gone; nothing to do", "user", s.User, "message", job.Message)
		return nil
	}
	return err
}

// Remember processes the user's earlier unprocessed messages, then the
// message, under the user's lock, and returns the message's run.
func (w *Worker) Remember(ctx context.Context, s memento.Scope, message string) (*memento.MemoryRun, error) {
	unlock := w.locks.Lock(s)
	defer unlock()
	limit := w.CatchUp
	if limit == 0 {
		limit = DefaultCatchUp
	}
	if limit > 0 && w.Ordered != nil {
		earlier, err := w.Ordered.EarlierUnprocessed(ctx, s, message, limit)
		if err != nil {
			return nil, err
		}
		for _, m := range earlier {
			// A job that runs out of time fails and is retried; the
			// messages processed so far stay processed.
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if _, err := w.Pipeline.Process(ctx, s, m.ID); err != nil {
				// Its own job retries it; this message goes on.
				w.logger().WarnContext(ctx, "remember: an earlier message failed; continuing", "user", s.User, "message", m.ID, "err", err)
			}
		}
	}
	return w.Pipeline.Process(ctx, s, message)
}

// Lock takes the user's lock, which every remember job of the user in
// this process takes, and returns its release. A batch of the user's
// messages (the users' backlogs, memento.JobRequest.ByUser) holds it
// while it runs them in order, so that a remember job of the same user
// (one that failed in a batch and runs on its own) waits for it.
func (w *Worker) Lock(s memento.Scope) func() { return w.locks.Lock(s) }

// Gone reports whether err, from Process or ProcessMessage, says the
// message or its user no longer exists: the job is then done.
func Gone(err error) bool { return errGone(err) }

func (w *Worker) logger() *slog.Logger {
	if w.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Logger
}
