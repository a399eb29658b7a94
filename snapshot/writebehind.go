package snapshot

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/memento-ai/memento"
)

// ChangeSource finds the users whose data changed and keeps the
// write-behind's cursor; *sqlite.DB is one.
type ChangeSource interface {
	// ChangedUsers returns the users with changes after since and the time
	// of each one's newest change.
	ChangedUsers(ctx context.Context, since time.Time) (map[memento.Scope]time.Time, error)
	SnapshotCursor(ctx context.Context, target string) (time.Time, error)
	SetSnapshotCursor(ctx context.Context, target string, at time.Time) error
}

// Options tune the write-behind. Zero values take the defaults named.
type Options struct {
	// Poll is how often the local store is asked for changed users.
	// Default 1s.
	Poll time.Duration
	// Debounce is how long a user must be quiet before their document is
	// written, so a burst of changes costs one write. Default 2s.
	Debounce time.Duration
	// MaxDelay bounds how long a busy user's changes wait. Default 30s.
	MaxDelay time.Duration
	// Overlap is how far back each poll looks again, for transactions
	// that committed after the previous poll with an earlier time.
	// Default 2s.
	Overlap time.Duration
	// MinBackoff and MaxBackoff bound the wait before retrying a failed
	// write; it doubles with each failure. Defaults 1s and 5m.
	MinBackoff time.Duration
	MaxBackoff time.Duration
	// WriteTimeout bounds one write. Default 30s.
	WriteTimeout time.Duration
}

func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.Poll, time.Second)
	def(&o.Debounce, 2*time.Second)
	def(&o.MaxDelay, 30*time.Second)
	def(&o.Overlap, 2*time.Second)
	def(&o.MinBackoff, time.Second)
	def(&o.MaxBackoff, 5*time.Minute)
	def(&o.WriteTimeout, 30*time.Second)
	return o
}

// WriteBehind writes users' snapshots after their data changes, in the
// background: never on a request's path, debounced, and retried with
// backoff when the snapshot store fails. The local store stays the source
// of truth, so a failing snapshot store loses nothing: changed users stay
// pending (memento_snapshot_pending_users), every failure is counted
// (memento_snapshot_writes_total{result="error"}) and logged, and the
// cursor persisted in the local store only moves past a change once it is
// written, so a restart finds pending users again.
//
// Changes are found by polling ChangeSource (threads, summaries, events,
// profiles and finished background jobs, which covers what jobs write) and
// by Notify, which surfaces call for writes the poll cannot see. Learned
// models (ModelNames) are written when their version changes.
type WriteBehind struct {
	Snapshots  *Snapshots
	Changes    ChangeSource
	ModelNames []string
	Options    Options
	Metrics    *Metrics
	Logger     *slog.Logger
	Clock      memento.Clock

	mu        sync.Mutex
	dirty     map[memento.Scope]*pending
	written   map[memento.Scope]time.Time
	hashes    map[memento.Scope][32]byte
	models    map[string]*modelState
	cursor    time.Time
	persisted time.Time
	stop      chan struct{}
	done      chan struct{}
	started   bool
}

// pending is a user whose changes are not written yet.
type pending struct {
	first, last time.Time // when the changes were noticed
	changedAt   time.Time // the newest change's time in the store
	attempts    int
	next        time.Time // no write before this (backoff)
}

type modelState struct {
	written  int64 // version written last
	attempts int
	next     time.Time
}

func (w *WriteBehind) now() time.Time {
	if w.Clock == nil {
		return time.Now()
	}
	return w.Clock.Now()
}

func (w *WriteBehind) logger() *slog.Logger {
	if w.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Logger
}

func (w *WriteBehind) init() {
	if w.dirty == nil {
		w.Options = w.Options.withDefaults()
		w.dirty = map[memento.Scope]*pending{}
		w.written = map[memento.Scope]time.Time{}
		w.hashes = map[memento.Scope][32]byte{}
		w.models = map[string]*modelState{memento.DefaultTenant: {}}
	}
}

// target names the snapshot store in the cursor table.
func (w *WriteBehind) target() string { return w.Snapshots.Store.String() }

// Start loads the cursor and starts the background loop, which runs until
// Close. A store that never had a write-behind starts from now: earlier
// data goes to the snapshot with `memento snapshot push --all`.
func (w *WriteBehind) Start(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.init()
	if w.started {
		return memento.Errorf(memento.ECONFLICT, "the snapshot write-behind already runs")
	}
	cur, err := w.Changes.SnapshotCursor(ctx, w.target())
	if err != nil {
		return err
	}
	if cur.IsZero() {
		cur = w.now()
		if err := w.Changes.SetSnapshotCursor(ctx, w.target(), cur); err != nil {
			return err
		}
	}
	w.cursor, w.persisted = cur, cur
	w.stop, w.done = make(chan struct{}), make(chan struct{})
	w.started = true
	go w.loop()
	return nil
}

func (w *WriteBehind) loop() {
	defer close(w.done)
	t := time.NewTicker(w.Options.Poll)
	defer t.Stop()
	ctx := context.Background()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.Tick(ctx, false)
		}
	}
}

// Notify marks a user as changed now, for writes the poll cannot see.
func (w *WriteBehind) Notify(s memento.Scope) {
	if s.Tenant == "" {
		s.Tenant = memento.DefaultTenant
	}
	now := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.init()
	w.markLocked(s, now, now)
}

// NotifyModel marks a tenant's models as possibly changed.
func (w *WriteBehind) NotifyModel(tenant string) {
	if tenant == "" {
		tenant = memento.DefaultTenant
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.init()
	if w.models[tenant] == nil {
		w.models[tenant] = &modelState{}
	}
}

// MarkWritten records that the snapshot holds the user as of now, such as
// a user just restored from it.
func (w *WriteBehind) MarkWritten(s memento.Scope) {
	if s.Tenant == "" {
		s.Tenant = memento.DefaultTenant
	}
	now := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.init()
	w.written[s] = now
	delete(w.dirty, s)
	w.gaugeLocked()
}

func (w *WriteBehind) markLocked(s memento.Scope, changedAt, now time.Time) {
	p, ok := w.dirty[s]
	if !ok {
		p = &pending{first: now}
		w.dirty[s] = p
	}
	// A poll reports a change again while it is inside the overlap: only
	// a newer change restarts the debounce.
	if !ok || changedAt.After(p.changedAt) {
		p.last = now
		p.changedAt = changedAt
	}
	if _, ok := w.models[s.Tenant]; !ok {
		w.models[s.Tenant] = &modelState{}
	}
	w.gaugeLocked()
}

func (w *WriteBehind) gaugeLocked() {
	if w.Metrics != nil {
		w.Metrics.Pending.Set(float64(len(w.dirty)))
	}
}

// Pending returns the users whose changes are not written yet, in order.
func (w *WriteBehind) Pending() []memento.Scope {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]memento.Scope, 0, len(w.dirty))
	for s := range w.dirty {
		out = append(out, s)
	}
	sortScopes(out)
	return out
}

func sortScopes(s []memento.Scope) {
	slices.SortFunc(s, func(a, b memento.Scope) int {
		if c := cmp.Compare(a.Tenant, b.Tenant); c != 0 {
			return c
		}
		return cmp.Compare(a.User, b.User)
	})
}

// Tick runs one round of the loop: poll for changes, write the users that
// are due (every pending user with force, backoff or not), write changed
// models, and persist the cursor. It returns the first write error.
func (w *WriteBehind) Tick(ctx context.Context, force bool) error {
	w.mu.Lock()
	w.init()
	since := w.cursor.Add(-w.Options.Overlap)
	w.mu.Unlock()

	pollAt := w.now()
	changes, err := w.Changes.ChangedUsers(ctx, since)
	if err != nil {
		w.logger().ErrorContext(ctx, "snapshot write-behind cannot read changes from the local store", "err", err)
		return err
	}
	w.mu.Lock()
	for s, at := range changes {
		if written, ok := w.written[s]; ok && !at.After(written) {
			continue
		}
		w.markLocked(s, at, pollAt)
	}
	if pollAt.After(w.cursor) {
		w.cursor = pollAt
	}
	var due []memento.Scope
	for s, p := range w.dirty {
		if force || !pollAt.Before(p.next) && (pollAt.Sub(p.last) >= w.Options.Debounce || pollAt.Sub(p.first) >= w.Options.MaxDelay) {
			due = append(due, s)
		}
	}
	w.mu.Unlock()
	sortScopes(due)

	var firstErr error
	for _, s := range due {
		if err := w.write(ctx, s); err != nil {
			firstErr = err
			if !force {
				break // the store is likely down: the others wait their turn
			}
		}
	}
	if err := w.writeModels(ctx, force); err != nil && firstErr == nil {
		firstErr = err
	}
	w.persistCursor(ctx)
	return firstErr
}

// write writes one user's document unless it is unchanged since the last
// write.
func (w *WriteBehind) write(ctx context.Context, s memento.Scope) error {
	start := w.now()
	w.mu.Lock()
	p := w.dirty[s]
	var seen time.Time
	if p != nil {
		seen = p.changedAt
	}
	w.mu.Unlock()
	if p == nil {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, w.Options.WriteTimeout)
	defer cancel()
	doc, err := w.Snapshots.Document(wctx, s)
	if memento.ErrorCode(err) == memento.ENOTFOUND {
		// The user was deleted locally (forgotten): so is the snapshot,
		// or a restart would bring them back.
		if err := w.Snapshots.Store.Delete(wctx, UserKey(s)); err != nil {
			return w.failed(ctx, s, p, err)
		}
		w.logger().InfoContext(ctx, "snapshot removed: the user is no longer in the local store", "user", s.User, "tenant", s.Tenant)
		w.mu.Lock()
		if w.dirty[s] == p {
			delete(w.dirty, s)
		}
		delete(w.hashes, s)
		w.gaugeLocked()
		w.mu.Unlock()
		return nil
	}
	var data []byte
	if err == nil {
		doc.ExportedAt = time.Time{} // so an unchanged user hashes the same
		data, err = json.Marshal(doc)
	}
	if err != nil {
		w.logger().ErrorContext(ctx, "snapshot write-behind cannot read a user from the local store", "user", s.User, "err", err)
		return w.failed(ctx, s, p, err)
	}
	sum := sha256.Sum256(data)
	w.mu.Lock()
	same := w.hashes[s] == sum
	w.mu.Unlock()
	if !same {
		begin := time.Now()
		if err := w.Snapshots.Store.Put(wctx, UserKey(s), data); err != nil {
			return w.failed(ctx, s, p, err)
		}
		if w.Metrics != nil {
			w.Metrics.WriteSeconds.Observe(time.Since(begin).Seconds())
			w.Metrics.Writes.WithLabelValues("ok").Inc()
			w.Metrics.LastSuccess.SetToCurrentTime()
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.hashes[s] = sum
	// The export holds every change a poll had seen before it began, and
	// every change committed a second before it began; later ones are
	// noticed again.
	w.written[s] = start.Add(-time.Second)
	if seen.After(w.written[s]) && !seen.After(start) {
		w.written[s] = seen
	}
	if w.dirty[s] == p && !p.last.After(start) {
		delete(w.dirty, s)
	} else if cur := w.dirty[s]; cur != nil {
		cur.attempts, cur.next = 0, time.Time{}
	}
	w.gaugeLocked()
	return nil
}

// failed schedules the retry of a user's write and reports the failure.
func (w *WriteBehind) failed(ctx context.Context, s memento.Scope, p *pending, err error) error {
	w.mu.Lock()
	p.attempts++
	wait := backoff(w.Options.MinBackoff, w.Options.MaxBackoff, p.attempts)
	p.next = w.now().Add(wait)
	attempts := p.attempts
	pendingUsers := len(w.dirty)
	w.mu.Unlock()
	w.logger().WarnContext(ctx, "snapshot write failed; the change is kept locally and retried",
		"user", s.User, "tenant", s.Tenant, "store", w.target(), "attempt", attempts, "retry_in", wait, "pending_users", pendingUsers, "err", err)
	if w.Metrics != nil {
		w.Metrics.Writes.WithLabelValues("error").Inc()
	}
	return fmt.Errorf("snapshot of %s: %w", s.User, err)
}

// backoff doubles from lo with every attempt, up to hi.
func backoff(lo, hi time.Duration, attempt int) time.Duration {
	d := lo
	for i := 1; i < attempt && d < hi; i++ {
		d *= 2
	}
	return min(d, hi)
}

// writeModels writes the learned models whose version changed.
func (w *WriteBehind) writeModels(ctx context.Context, force bool) error {
	if w.Snapshots.Models == nil || len(w.ModelNames) == 0 {
		return nil
	}
	w.mu.Lock()
	tenants := make([]string, 0, len(w.models))
	for t := range w.models {
		tenants = append(tenants, t)
	}
	w.mu.Unlock()
	slices.Sort(tenants)
	var errs []error
	for _, tenant := range tenants {
		w.mu.Lock()
		st := w.models[tenant]
		w.mu.Unlock()
		if !force && w.now().Before(st.next) {
			continue
		}
		for _, name := range w.ModelNames {
			v, err := w.Snapshots.Models.ProfileModelVersion(ctx, tenant, name)
			if err != nil || v == 0 || v == st.written {
				continue
			}
			wctx, cancel := context.WithTimeout(ctx, w.Options.WriteTimeout)
			begin := time.Now()
			written, err := w.Snapshots.PushModel(wctx, tenant, name)
			cancel()
			w.mu.Lock()
			if err != nil {
				st.attempts++
				st.next = w.now().Add(backoff(w.Options.MinBackoff, w.Options.MaxBackoff, st.attempts))
			} else {
				st.written, st.attempts, st.next = written, 0, time.Time{}
			}
			w.mu.Unlock()
			if err != nil {
				w.logger().WarnContext(ctx, "snapshot of a learned model failed; retrying later", "tenant", tenant, "model", name, "err", err)
				if w.Metrics != nil {
					w.Metrics.Writes.WithLabelValues("error").Inc()
				}
				errs = append(errs, err)
				continue
			}
			if w.Metrics != nil {
				w.Metrics.WriteSeconds.Observe(time.Since(begin).Seconds())
				w.Metrics.Writes.WithLabelValues("ok").Inc()
				w.Metrics.LastSuccess.SetToCurrentTime()
			}
		}
	}
	return errors.Join(errs...)
}

// persistCursor stores the oldest time whose changes may not be written:
// the cursor, or the oldest pending change.
func (w *WriteBehind) persistCursor(ctx context.Context) {
	w.mu.Lock()
	at := w.cursor
	for _, p := range w.dirty {
		if !p.changedAt.IsZero() && p.changedAt.Before(at) {
			at = p.changedAt
		}
	}
	same := at.Equal(w.persisted)
	w.mu.Unlock()
	if same {
		return
	}
	if err := w.Changes.SetSnapshotCursor(ctx, w.target(), at); err != nil {
		w.logger().ErrorContext(ctx, "snapshot write-behind cannot save its cursor", "err", err)
		return
	}
	w.mu.Lock()
	w.persisted = at
	w.mu.Unlock()
}

// Close stops the loop and writes what is pending, within ctx's deadline.
// What it cannot write stays pending in the local store's terms: the
// persisted cursor makes the next start find it.
func (w *WriteBehind) Close(ctx context.Context) error {
	w.mu.Lock()
	started := w.started
	w.started = false
	w.mu.Unlock()
	if !started {
		return nil
	}
	close(w.stop)
	<-w.done
	if err := w.Tick(ctx, true); err != nil {
		return fmt.Errorf("snapshot write-behind: final write: %w", err)
	}
	return nil
}
