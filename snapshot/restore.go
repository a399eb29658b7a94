package snapshot

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/hygiene"
)

// Restorer restores a user unknown to the local store from the snapshot
// store on first access. Ensure is cheap for users it has seen: it keeps
// the set of users known to be local, so only the first request of each
// user asks the store (and, for a user without a snapshot, the snapshot
// store once).
type Restorer struct {
	Snapshots *Snapshots
	Metrics   *Metrics
	Logger    *slog.Logger
	// Restored, when set, is told about each restored user (the
	// write-behind marks it as written, since the snapshot holds it).
	Restored func(s memento.Scope)

	mu       sync.Mutex
	local    map[memento.Scope]bool
	inflight map[memento.Scope]*restoreCall
}

// RestoreTimeout bounds one restore of a user.
const RestoreTimeout = time.Minute

type restoreCall struct {
	done chan struct{}
	err  error
}

// Ensure makes sure the local store has the user: when it does not, the
// user's snapshot (if any) is restored first. Concurrent calls for one user
// share one restore. A snapshot store that cannot be reached fails the
// call (EUNAVAILABLE) rather than let the user start over empty, which the
// write-behind would then write over their snapshot.
func (r *Restorer) Ensure(ctx context.Context, s memento.Scope) error {
	if s.Tenant == "" {
		s.Tenant = memento.DefaultTenant
	}
	if s.User == "" {
		return nil // the handler reports the missing user
	}
	r.mu.Lock()
	if r.local == nil {
		r.local, r.inflight = map[memento.Scope]bool{}, map[memento.Scope]*restoreCall{}
	}
	if r.local[s] {
		r.mu.Unlock()
		return nil
	}
	if c, ok := r.inflight[s]; ok {
		r.mu.Unlock()
		select {
		case <-c.done:
			return c.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c := &restoreCall{done: make(chan struct{})}
	r.inflight[s] = c
	r.mu.Unlock()

	// The restore outlives a caller who gives up: others may be waiting,
	// and a half-done restore would only be rolled back.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), RestoreTimeout)
	c.err = r.ensure(rctx, s)
	cancel()
	r.mu.Lock()
	delete(r.inflight, s)
	if c.err == nil {
		r.local[s] = true
	}
	r.mu.Unlock()
	close(c.done)
	return c.err
}

// Forget drops a user from the set of local users, for when the user is
// deleted.
func (r *Restorer) Forget(s memento.Scope) {
	if s.Tenant == "" {
		s.Tenant = memento.DefaultTenant
	}
	r.mu.Lock()
	delete(r.local, s)
	r.mu.Unlock()
}

func (r *Restorer) ensure(ctx context.Context, s memento.Scope) error {
	exists, err := r.Snapshots.Local.UserExists(ctx, s)
	if err != nil {
		return fmt.Errorf("look up user %s: %w", s.User, err)
	}
	if exists {
		return nil
	}
	restored, err := r.Snapshots.Pull(ctx, s, false)
	switch {
	case memento.ErrorCode(err) == memento.ECONFLICT:
		return nil // created locally meanwhile, by another process
	case err != nil:
		r.count("error")
		r.logger().ErrorContext(ctx, "restore from snapshot failed", "user", s.User, "tenant", s.Tenant, "store", r.Snapshots.Store.String(), "err", err)
		return memento.WrapError(memento.EUNAVAILABLE, err, "user %q is not in the local store and cannot be restored from the snapshot: %s",
			s.User, memento.ErrorMessage(err))
	case restored:
		r.count("restored")
		r.logger().InfoContext(ctx, "user restored from snapshot", "user", s.User, "tenant", s.Tenant, "store", r.Snapshots.Store.String())
		if r.Restored != nil {
			r.Restored(s)
		}
	default:
		r.count("absent")
	}
	return nil
}

func (r *Restorer) count(result string) {
	if r.Metrics != nil {
		r.Metrics.Restores.WithLabelValues(result).Inc()
	}
}

func (r *Restorer) logger() *slog.Logger {
	if r.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Logger
}

// screen applies the hygiene gate to a document about to be restored:
// what carries instructions to the model is left out (memories,
// summaries, preferences, profile keys) or marked rejected (messages, so
// recall never renders them), and each item is logged with its reason. A
// snapshot is restored rather than refused, since refusing would lock the
// user out of their own memory for one bad item; an import through the
// API, where a client sends the document, is refused instead.
func (x *Snapshots) screen(ctx context.Context, s memento.Scope, doc *memento.UserExport) error {
	findings, err := hygiene.ScreenExport(doc, hygiene.Screeners(x.Sections))
	if err != nil {
		return err
	}
	for _, f := range findings {
		x.logger().WarnContext(ctx, "snapshot item not restored as memory: it carries instructions to the model",
			"user", s.User, "tenant", s.Tenant, "item", f.Item, "reason", f.Reason)
	}
	return nil
}
