package profile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memento-ai/memento"
)

// ProfileJob is the payload of a memento.JobProfile job.
type ProfileJob struct {
	Tenant string `json:"tenant"`
	User   string `json:"user"`
}

// ModelJob is the payload of a memento.JobProfileModel job.
type ModelJob struct {
	Tenant string `json:"tenant"`
}

// EventJobs returns the jobsFor of one memento.EventService.AddEvents
// call: the first new event gets a profile job for the user and a model job
// for the tenant, the others none, so a batch of events costs one
// recompute of each.
func EventJobs(s memento.Scope) func(memento.Event) []memento.JobRequest {
	if s.Tenant == "" {
		s.Tenant = memento.DefaultTenant
	}
	var once sync.Once
	return func(memento.Event) []memento.JobRequest {
		var jobs []memento.JobRequest
		once.Do(func() {
			jobs = []memento.JobRequest{
				{Kind: memento.JobProfile, Payload: ProfileJob{Tenant: s.Tenant, User: s.User}},
				{Kind: memento.JobProfileModel, Payload: ModelJob{Tenant: s.Tenant}},
			}
		})
		return jobs
	}
}

// MessageJobs returns the job that reads the actions a user reports in a
// newly stored message; assistant messages get none.
func MessageJobs(s memento.Scope, thread string, m memento.Message) []memento.JobRequest {
	if m.Role != memento.RoleUser {
		return nil
	}
	if s.Tenant == "" {
		s.Tenant = memento.DefaultTenant
	}
	return []memento.JobRequest{{Kind: memento.JobMessageEvents, Payload: memento.MessageJob{
		Tenant: s.Tenant, User: s.User, Thread: thread, Message: m.ID, Seq: m.Seq,
	}}}
}

// MessageReader finds a stored message; *sqlite.DB is one.
type MessageReader interface {
	// MessageByID returns one of the user's messages. Errors: ENOTFOUND.
	MessageByID(ctx context.Context, s memento.Scope, id string) (*memento.Message, error)
}

// Worker runs the profile's background jobs: recomputing a user's learned
// keys when events arrive (memento.JobProfile), recomputing the tenant's
// co-occurrence model (memento.JobProfileModel) and turning the actions a
// user reports in a message into events (memento.JobMessageEvents).
type Worker struct {
	Events   memento.EventService
	Profiles memento.ProfileService
	Models   memento.ProfileModelService
	// Messages, Actions and Resolve serve the message job; without
	// Messages or Actions it does nothing. Actions is the language
	// model's reader of the actions a message reports.
	Messages MessageReader
	Actions  memento.ActionReader
	Resolve  Resolver
	// Catalog gives learners the genres, years and cast of titles; nil
	// learns only what events alone say (seen, watchlist, ...).
	Catalog memento.Catalog
	// Learners default to DefaultLearners.
	Learners []Learner
	Model    ModelOptions
	Logger   *slog.Logger
	// ProfileChanged and ModelChanged, when set, are told about every
	// profile and model that changed, such as the snapshot write-behind.
	ProfileChanged func(memento.Scope)
	ModelChanged   func(tenant string)

	// FullEvery and FullAfter bound the incremental model updates: after
	// FullEvery updates (default 50) or FullAfter (default 10 minutes)
	// since the last full rebuild, the next recompute learns from every
	// event again. A full rebuild also takes out users forgotten since
	// (their events are gone, so no update names them).
	FullEvery int
	FullAfter time.Duration

	mu     sync.Mutex // one model recompute at a time
	counts map[string]*tenantCounts
	// Mismatches counts full rebuilds that found the incremental counts,
	// at the same events mark, giving another model (a bug if ever
	// nonzero; the full rebuild's model is the one kept).
	Mismatches atomic.Int64
}

// tenantCounts is a tenant's counts as of an events mark, with when they
// were last learned from every event.
type tenantCounts struct {
	counts *Counts
	mark   int64
	steps  int
	full   time.Time
}

// EventsSince is what a store offers for incremental model updates;
// *sqlite.DB has it. Without it every recompute is a full rebuild.
type EventsSince interface {
	// EachUserEventsSince calls fn with every event of each user who has
	// an event added after mark, one user at a time, within one read
	// snapshot, and returns the EventsMark of that snapshot.
	EachUserEventsSince(ctx context.Context, tenant string, mark int64, fn func(user string, events []memento.Event) error) (int64, error)
}

// Register registers the worker's three job kinds with a queue.
func (w *Worker) Register(q interface {
	Handle(kind string, h memento.JobHandler, opts memento.JobOptions)
}) {
	q.Handle(memento.JobProfile, w.HandleProfile, memento.JobOptions{})
	q.Handle(memento.JobProfileModel, w.HandleModel, memento.JobOptions{})
	q.Handle(memento.JobMessageEvents, w.HandleMessage, memento.JobOptions{})
}

// HandleProfile is the handler of memento.JobProfile.
func (w *Worker) HandleProfile(ctx context.Context, _ string, payload json.RawMessage) error {
	var job ProfileJob
	if err := json.Unmarshal(payload, &job); err != nil {
		return fmt.Errorf("profile job: decode payload: %w", err)
	}
	_, err := w.Recompute(ctx, memento.Scope{Tenant: job.Tenant, User: job.User})
	return err
}

// Recompute runs the learners over the user's events and saves the keys
// they learn; keys the user set stay as they are.
func (w *Worker) Recompute(ctx context.Context, s memento.Scope) (*memento.Profile, error) {
	events, err := w.Events.Events(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("recompute profile of %s: %w", s.User, err)
	}
	before, err := w.Profiles.Profile(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("recompute profile of %s: %w", s.User, err)
	}
	if len(events) == 0 && len(before.Keys) == 0 {
		return before, nil // nothing to learn; a deleted user stays deleted
	}
	var title func(string) (*memento.Title, bool)
	if w.Catalog != nil {
		title = func(id string) (*memento.Title, bool) {
			t, err := w.Catalog.Title(ctx, id)
			return t, err == nil
		}
	}
	learners := w.Learners
	if learners == nil {
		learners = DefaultLearners()
	}
	keys, err := Learn(NewInput(events, title), learners)
	if err != nil {
		return nil, fmt.Errorf("recompute profile of %s: %w", s.User, err)
	}
	p, err := w.Profiles.SaveLearned(ctx, s, keys)
	if memento.ErrorCode(err) == memento.ENOTFOUND {
		return before, nil // forgotten while the keys were learned: stays forgotten
	}
	if err != nil {
		return nil, fmt.Errorf("recompute profile of %s: %w", s.User, err)
	}
	if p.Version != before.Version && w.ProfileChanged != nil {
		w.ProfileChanged(s)
	}
	return p, nil
}

// HandleModel is the handler of memento.JobProfileModel.
func (w *Worker) HandleModel(ctx context.Context, _ string, payload json.RawMessage) error {
	var job ModelJob
	if err := json.Unmarshal(payload, &job); err != nil {
		return fmt.Errorf("model job: decode payload: %w", err)
	}
	_, err := w.RecomputeModel(ctx, job.Tenant, false)
	return err
}

// RecomputeModel learns the tenant's co-occurrence model from every user's
// events and saves it. Unless forced, it does nothing when the stored model
// has seen every event already, so a burst of event batches costs few
// recomputes: they run one at a time, and each covers every event stored
// before it began. It reports whether it saved a model.
func (w *Worker) RecomputeModel(ctx context.Context, tenant string, force bool) (bool, error) {
	if tenant == "" {
		tenant = memento.DefaultTenant
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	cur, err := w.Models.ProfileModel(ctx, tenant, ModelName)
	if err != nil {
		return false, fmt.Errorf("recompute model of %s: %w", tenant, err)
	}
	if !force {
		mark, err := w.Models.EventsMark(ctx, tenant)
		if err != nil {
			return false, fmt.Errorf("recompute model of %s: %w", tenant, err)
		}
		if cur != nil && cur.EventsMark == mark {
			return false, nil
		}
	}
	m, mark, kept, err := w.learn(ctx, tenant, force)
	if err != nil {
		return false, fmt.Errorf("recompute model of %s: %w", tenant, err)
	}
	if !force && cur != nil && cur.EventsMark == RestoredMark {
		// A model restored from a snapshot learned from users this store
		// may not have (yet): keep it until the local events cover as
		// many users.
		if n, err := ModelUsers(cur.Data); err == nil && m.Users() < n {
			w.logger().InfoContext(ctx, "kept the co-occurrence model restored from a snapshot", "tenant", tenant,
				"restored users", n, "local users", m.Users())
			delete(w.counts, tenant) // learn from every event again next time
			return false, nil
		}
	}
	data, err := m.MarshalBinary()
	if err != nil {
		return false, fmt.Errorf("recompute model of %s: %w", tenant, err)
	}
	if _, err := w.Models.SaveProfileModel(ctx, memento.ProfileModel{Tenant: tenant, Name: ModelName, EventsMark: mark, Data: data}, false); err != nil {
		return false, fmt.Errorf("recompute model of %s: %w", tenant, err)
	}
	w.logger().InfoContext(ctx, "co-occurrence model learned", "tenant", tenant, "titles", m.Len(), "users", m.Users(), "bytes", len(data),
		"incremental", kept)
	if w.ModelChanged != nil {
		w.ModelChanged(tenant)
	}
	return true, nil
}

// learn brings the tenant's counts up to date and builds the model: from
// the users whose events changed since the counts' mark when the store
// offers that and the counts are fresh enough, from every event otherwise.
// It reports whether the update was incremental. w.mu is held.
func (w *Worker) learn(ctx context.Context, tenant string, force bool) (*Model, int64, bool, error) {
	fullEvery, fullAfter := w.FullEvery, w.FullAfter
	if fullEvery <= 0 {
		fullEvery = 50
	}
	if fullAfter <= 0 {
		fullAfter = 10 * time.Minute
	}
	st := w.counts[tenant]
	since, ok := w.Models.(EventsSince)
	if ok && st != nil && !force && st.steps < fullEvery && time.Since(st.full) < fullAfter {
		mark, err := since.EachUserEventsSince(ctx, tenant, st.mark, func(user string, events []memento.Event) error {
			st.counts.Set(user, events)
			return nil
		})
		if err != nil {
			delete(w.counts, tenant) // a half-applied update is not kept
			return nil, 0, false, err
		}
		st.mark = mark
		st.steps++
		return st.counts.Build(), mark, true, nil
	}
	counts := NewCounts(w.Model)
	mark, err := w.Models.EachUserEvents(ctx, tenant, func(user string, events []memento.Event) error {
		counts.Set(user, events)
		return nil
	})
	if err != nil {
		return nil, 0, false, err
	}
	m := counts.Build()
	if st != nil && st.mark == mark {
		// The incremental counts saw the same events: their model must be
		// this one.
		a, _ := st.counts.Build().MarshalBinary()
		b, _ := m.MarshalBinary()
		if !bytes.Equal(a, b) {
			w.Mismatches.Add(1)
			w.logger().ErrorContext(ctx, "the incrementally updated co-occurrence model differs from the full rebuild; keeping the rebuild",
				"tenant", tenant, "mark", mark)
		}
	}
	if w.counts == nil {
		w.counts = map[string]*tenantCounts{}
	}
	w.counts[tenant] = &tenantCounts{counts: counts, mark: mark, full: time.Now()}
	return m, mark, false, nil
}

// HandleMessage is the handler of memento.JobMessageEvents: it reads the
// message, finds the actions it reports (MessageEvents) and adds them
// as events, which enqueue the profile and model jobs. Event ids derive
// from the message id, so a job that runs twice adds nothing new.
func (w *Worker) HandleMessage(ctx context.Context, _ string, payload json.RawMessage) error {
	var job memento.MessageJob
	if err := json.Unmarshal(payload, &job); err != nil {
		return fmt.Errorf("message events job: decode payload: %w", err)
	}
	if w.Messages == nil || w.Actions == nil {
		return nil
	}
	s := memento.Scope{Tenant: job.Tenant, User: job.User}
	m, err := w.Messages.MessageByID(ctx, s, job.Message)
	if memento.ErrorCode(err) == memento.ENOTFOUND {
		return nil // the user or the message was deleted since
	} else if err != nil {
		return fmt.Errorf("message events job: %w", err)
	}
	if m.Role != memento.RoleUser {
		return nil
	}
	previous, asked := conversation(ctx, w.Messages, s, *m)
	events, err := MessageEvents(ctx, w.Actions, MessageInput{ID: m.ID, Text: m.Text, At: m.At,
		Previous: previous, Asked: asked, Resolve: w.Resolve})
	if err != nil {
		return fmt.Errorf("message events job: %w", err)
	}
	if len(events) == 0 {
		return nil
	}
	n, err := w.Events.AddEvents(ctx, s, events, EventJobs(s))
	if err != nil {
		return fmt.Errorf("message events job: %w", err)
	}
	if n > 0 {
		w.logger().DebugContext(ctx, "events read from a message", "user", s.User, "message", m.ID, "events", n)
	}
	return nil
}

func (w *Worker) logger() *slog.Logger {
	if w.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Logger
}

// StoreModels serves the co-occurrence model kept in a store, decoding it
// once per version: each use asks the store for the version only.
type StoreModels struct {
	Store memento.ProfileModelService

	mu    sync.Mutex
	cache map[string]cachedModel
}

type cachedModel struct {
	version int64
	model   *Model
}

// Model returns the tenant's current model, or nil when none was learned.
func (sm *StoreModels) Model(ctx context.Context, tenant string) (*Model, error) {
	if tenant == "" {
		tenant = memento.DefaultTenant
	}
	v, err := sm.Store.ProfileModelVersion(ctx, tenant, ModelName)
	if err != nil {
		return nil, err
	}
	if v == 0 {
		return nil, nil
	}
	sm.mu.Lock()
	c, ok := sm.cache[tenant]
	sm.mu.Unlock()
	if ok && c.version == v {
		return c.model, nil
	}
	stored, err := sm.Store.ProfileModel(ctx, tenant, ModelName)
	if err != nil || stored == nil {
		return nil, err
	}
	m, err := DecodeModel(stored.Data)
	if err != nil {
		return nil, fmt.Errorf("model of %s: %w", tenant, err)
	}
	sm.mu.Lock()
	if sm.cache == nil {
		sm.cache = map[string]cachedModel{}
	}
	sm.cache[tenant] = cachedModel{version: stored.Version, model: m}
	sm.mu.Unlock()
	return m, nil
}
