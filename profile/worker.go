package profile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/internal/lru"
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
// call: every new event asks for a profile job for the user and a model
// job for the tenant, and the store enqueues equal requests of one
// transaction once, so a batch of events costs one recompute of each. The
// profile job is the user's own work, so it goes to the user's backlog
// (memento.JobRequest.ByUser), where it runs after the batch that added
// the events and joins the user's next batch. The function holds no
// state: a store may run its transaction (and so call it) again.
func EventJobs(s memento.Scope) func(memento.Event) []memento.JobRequest {
	if s.Tenant == "" {
		s.Tenant = memento.DefaultTenant
	}
	return func(memento.Event) []memento.JobRequest {
		return []memento.JobRequest{
			{Kind: memento.JobProfile, Payload: ProfileJob{Tenant: s.Tenant, User: s.User}, ByUser: true},
			{Kind: memento.JobProfileModel, Payload: ModelJob{Tenant: s.Tenant}, Coalesce: true},
		}
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
	// FullEvery updates (default 500) or FullAfter (default 10 minutes)
	// since the last full rebuild, the next recompute learns from every
	// event again. A full rebuild also takes out users forgotten since
	// (their events are gone, so no update names them). They bound each
	// user's incremental profile recomputes the same way: the full read
	// then checks the folded judgements (ProfileMismatches).
	FullEvery int
	FullAfter time.Duration

	// ProfileCache bounds the events the worker keeps folded into users'
	// judgements between profile recomputes, over all users (default
	// DefaultProfileCache); past it, the users recomputed least recently
	// are dropped, and their next recompute reads all their events.
	// Each folded event costs about two hundred bytes, with the saved
	// profile that lists it as evidence.
	ProfileCache int

	// ModelEvery is the longest a model job waits for the tenant's
	// events to be quiet before it recomputes the model (HandleModel); 0
	// means DefaultModelEvery, a negative value no wait. The model is the
	// whole tenant's: a few seconds' delay changes no ranking much, while
	// a recompute after every batch of events would take a processor.
	ModelEvery time.Duration
	// ModelQuiet is how long a tenant's events must pause before a
	// waiting model job recomputes ahead of ModelEvery; 0 means
	// DefaultModelQuiet.
	ModelQuiet time.Duration

	mu     sync.Mutex // one model recompute at a time
	counts map[string]*tenantCounts
	// saved is the model this worker saved last, per tenant.
	saved map[string]savedModel
	smu   sync.Mutex // guards jobs
	jobs  map[string]*modelJobs
	// Mismatches counts full rebuilds that found the incremental counts,
	// given the same events, giving another model (a bug if ever
	// nonzero; the full rebuild's model is the one kept).
	Mismatches atomic.Int64
	// The model's incremental updates and rebuilds, the rebuilds that
	// checked the incremental counts, and the users those set again
	// (ModelStats).
	modelUpdates, modelRebuilds, modelChecks, modelChanged atomic.Int64
	// ProfileMismatches counts full reads of a user's events that found
	// the judgements folded from their events since learning other keys
	// (a bug if ever nonzero; the full read's are the ones kept).
	ProfileMismatches atomic.Int64

	folds       lru.Cache[*folded] // weighed by their events
	fullReads   atomic.Int64
	foldedReads atomic.Int64
}

// savedModel is the version and the events mark of a model a worker
// saved.
type savedModel struct {
	version, mark int64
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
	// snapshot, and returns the EventsMark of that snapshot. As with
	// EachUserEvents, the slice is fn's only during the call.
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
// they learn; keys the user set stay as they are. With the default
// learners and a store that reads a user's events from a mark
// (UserEventsSince), it folds only the events added since the user's last
// recompute into what the worker kept of them (see ProfileCache).
func (w *Worker) Recompute(ctx context.Context, s memento.Scope) (*memento.Profile, error) {
	if s.Tenant == "" {
		s.Tenant = memento.DefaultTenant
	}
	var p *memento.Profile
	var err error
	if src, ok := w.Events.(UserEventsSince); ok && w.Learners == nil {
		p, err = w.recomputeFolded(ctx, s, src)
	} else {
		p, err = w.recomputeAll(ctx, s)
	}
	if err != nil {
		return nil, fmt.Errorf("recompute profile of %s: %w", s.User, err)
	}
	return p, nil
}

// recomputeAll is Recompute from every event of the user.
func (w *Worker) recomputeAll(ctx context.Context, s memento.Scope) (*memento.Profile, error) {
	events, err := w.Events.Events(ctx, s)
	if err != nil {
		return nil, err
	}
	before, err := w.Profiles.Profile(ctx, s)
	if err != nil {
		return nil, err
	}
	if len(events) == 0 && len(before.Keys) == 0 {
		return before, nil // nothing to learn; a deleted user stays deleted
	}
	learners := w.Learners
	if learners == nil {
		learners = DefaultLearners()
	}
	_, release, err := memento.Compute(ctx)
	if err != nil {
		return nil, err
	}
	keys, err := Learn(NewInput(events, w.titleFunc(ctx)), learners)
	release()
	if err != nil {
		return nil, err
	}
	return w.saveLearned(ctx, s, keys, before)
}

// titleFunc looks titles up in the worker's catalog; nil without one.
func (w *Worker) titleFunc(ctx context.Context) func(string) (*memento.Title, bool) {
	if w.Catalog == nil {
		return nil
	}
	return func(id string) (*memento.Title, bool) {
		t, err := w.Catalog.Title(ctx, id)
		return t, err == nil
	}
}

// saveLearned saves keys over before, the user's profile as last read,
// and tells ProfileChanged when the profile changed. A user forgotten
// meanwhile stays forgotten: it returns before.
func (w *Worker) saveLearned(ctx context.Context, s memento.Scope, keys map[string]memento.ProfileEntry, before *memento.Profile) (*memento.Profile, error) {
	var p *memento.Profile
	var err error
	if over, ok := w.Profiles.(learnedSaverOver); ok {
		p, err = over.SaveLearnedOver(ctx, s, keys, before)
	} else {
		p, err = w.Profiles.SaveLearned(ctx, s, keys)
	}
	if memento.ErrorCode(err) == memento.ENOTFOUND {
		return before, nil // forgotten while the keys were learned: stays forgotten
	}
	if err != nil {
		return nil, err
	}
	if p.Version != before.Version && w.ProfileChanged != nil {
		w.ProfileChanged(s)
	}
	return p, nil
}

// learnedSaverOver is a store that saves learned keys over a profile its
// caller read (sqlite.DB.SaveLearnedOver), instead of reading it again.
type learnedSaverOver interface {
	SaveLearnedOver(ctx context.Context, s memento.Scope, keys map[string]memento.ProfileEntry, pre *memento.Profile) (*memento.Profile, error)
}

// HandleModel is the handler of memento.JobProfileModel. Every batch of
// events asks for a recompute of the tenant's model, and a recompute
// reads and ranks the whole tenant, so the jobs are coalesced: of the
// jobs that arrive while a recompute waits to start, one waits and the
// others are done at once (the recompute that one runs reads the events
// mark after their events were stored). The waiting one starts its
// recompute once the tenant's events have been quiet for a moment, and
// at the latest ModelEvery after the previous recompute ended. A job
// waits for a recompute that is running, whose mark may predate its
// events.
func (w *Worker) HandleModel(ctx context.Context, _ string, payload json.RawMessage) error {
	var job ModelJob
	if err := json.Unmarshal(payload, &job); err != nil {
		return fmt.Errorf("model job: decode payload: %w", err)
	}
	tenant := job.Tenant
	if tenant == "" {
		tenant = memento.DefaultTenant
	}
	every := w.ModelEvery
	if every == 0 {
		every = DefaultModelEvery
	}
	w.smu.Lock()
	st := w.modelState(tenant)
	if st.waiting {
		w.smu.Unlock()
		return nil
	}
	st.waiting = true
	latest := st.ended.Add(every)
	// At most about half of a processor's time on recomputes: the next
	// starts no sooner than the last one took after it ended (unless
	// ModelEvery asks for no wait at all).
	var rest time.Duration
	if every > 0 {
		rest = time.Until(st.ended.Add(st.took))
	}
	w.smu.Unlock()
	if rest > 0 {
		t := time.NewTimer(rest)
		select {
		case <-ctx.Done():
			t.Stop()
			w.smu.Lock()
			st.waiting = false
			w.smu.Unlock()
			return fmt.Errorf("model job: %w", ctx.Err())
		case <-t.C:
		}
	}
	if err := w.awaitQuiet(ctx, tenant, latest); err != nil {
		w.smu.Lock()
		st.waiting = false
		w.smu.Unlock()
		return fmt.Errorf("model job: %w", err)
	}
	var began time.Time
	_, err := w.recomputeModel(ctx, tenant, false, func() {
		// From here on the mark is read: a later job must wait for the
		// next recompute.
		w.smu.Lock()
		st.waiting = false
		w.smu.Unlock()
		began = time.Now()
	})
	w.smu.Lock()
	st.ended, st.took = time.Now(), 0
	if !began.IsZero() {
		st.took = st.ended.Sub(began)
	}
	w.smu.Unlock()
	return err
}

// awaitQuiet waits until no event was added to the tenant for
// ModelQuiet, or until latest, whichever comes first: a burst of events
// costs one recompute once it ends, and a steady stream one every
// ModelEvery. It reads the tenant's events mark every quarter of
// ModelQuiet and counts the quiet from the last read that saw it move, so
// the recompute starts within a quarter of the span after the burst's
// quiet span, not up to a whole span later.
func (w *Worker) awaitQuiet(ctx context.Context, tenant string, latest time.Time) error {
	quiet := w.ModelQuiet
	if quiet <= 0 {
		quiet = DefaultModelQuiet
	}
	if !time.Now().Before(latest) {
		return nil
	}
	mark, err := w.Models.EventsMark(ctx, tenant)
	if err != nil {
		return err
	}
	moved := time.Now() // the job's own events arrived just now
	for {
		due := moved.Add(quiet)
		if latest.Before(due) {
			due = latest
		}
		wait := min(quiet/4, time.Until(due))
		if wait <= 0 {
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		now, err := w.Models.EventsMark(ctx, tenant)
		if err != nil {
			return err
		}
		if now != mark {
			mark, moved = now, time.Now()
		}
	}
}

// DefaultModelEvery is Worker.ModelEvery's default. On SQLite, saving the
// model of a tenant of a million memories holds the one writer for tens of
// milliseconds, and learning it takes a processor for about a second.
const DefaultModelEvery = 10 * time.Second

// DefaultModelQuiet is Worker.ModelQuiet's default: how long a tenant must
// add no event before a waiting model job recomputes the model ahead of
// ModelEvery. Under a steady stream the events never pause that long, and
// ModelEvery paces the recomputes; after a burst the model follows within
// about the span. The next recompute
// starts no sooner than the last one took after it ended (HandleModel),
// so that events with short pauses between them cannot keep a processor
// recomputing.
const DefaultModelQuiet = 100 * time.Millisecond

// modelJobs is the coalescing state of one tenant's model jobs.
type modelJobs struct {
	waiting bool          // a job waits for the next recompute
	ended   time.Time     // when the last recompute of a job ended
	took    time.Duration // how long it took
}

// modelState returns the tenant's coalescing state; w.smu is held.
func (w *Worker) modelState(tenant string) *modelJobs {
	if w.jobs == nil {
		w.jobs = map[string]*modelJobs{}
	}
	st := w.jobs[tenant]
	if st == nil {
		st = &modelJobs{}
		w.jobs[tenant] = st
	}
	return st
}

// RecomputeModel learns the tenant's co-occurrence model from every user's
// events and saves it. Unless forced, it does nothing when the stored model
// has seen every event already, so a burst of event batches costs few
// recomputes: they run one at a time, and each covers every event stored
// before it began. It reports whether it saved a model.
func (w *Worker) RecomputeModel(ctx context.Context, tenant string, force bool) (bool, error) {
	return w.recomputeModel(ctx, tenant, force, nil)
}

// recomputeModel is RecomputeModel, calling locked (when set) once it
// holds the recompute lock, before it reads the events mark.
func (w *Worker) recomputeModel(ctx context.Context, tenant string, force bool, locked func()) (bool, error) {
	if tenant == "" {
		tenant = memento.DefaultTenant
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if locked != nil {
		locked()
	}
	var mark int64
	if !force {
		var err error
		if mark, err = w.Models.EventsMark(ctx, tenant); err != nil {
			return false, fmt.Errorf("recompute model of %s: %w", tenant, err)
		}
		// The model this worker saved last, if it is still the stored
		// one, says whether there is anything new without reading it.
		if saved, ok := w.saved[tenant]; ok && saved.mark == mark {
			if v, err := w.Models.ProfileModelVersion(ctx, tenant, ModelName); err == nil && v == saved.version {
				return false, nil
			}
		}
	}
	cur, err := w.Models.ProfileModel(ctx, tenant, ModelName)
	if err != nil {
		return false, fmt.Errorf("recompute model of %s: %w", tenant, err)
	}
	if !force && cur != nil && cur.EventsMark == mark {
		return false, nil
	}
	// Learning is compute: it runs on one of the background's processors
	// (memento.Compute), the save after it does not.
	held, release, err := memento.Compute(ctx)
	if err != nil {
		return false, fmt.Errorf("recompute model of %s: %w", tenant, err)
	}
	m, mark, kept, err := w.learn(held, tenant, force)
	release()
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
	version, err := w.Models.SaveProfileModel(ctx, memento.ProfileModel{Tenant: tenant, Name: ModelName, EventsMark: mark, Data: data}, false)
	if err != nil {
		return false, fmt.Errorf("recompute model of %s: %w", tenant, err)
	}
	if w.saved == nil {
		w.saved = map[string]savedModel{}
	}
	w.saved[tenant] = savedModel{version: version, mark: mark}
	w.logger().InfoContext(ctx, "co-occurrence model learned", "tenant", tenant, "titles", m.Len(), "users", m.Users(), "bytes", len(data),
		"incremental", kept)
	if w.ModelChanged != nil {
		w.ModelChanged(tenant)
	}
	return true, nil
}

// Warm learns the tenant's counts from every event unless the worker has
// them already, so that the first model job after a start updates them
// from the new events only instead of reading every event of the tenant
// (seconds of a processor at a million memories) while messages arrive.
// It saves no model: the next model job does, if events changed.
func (w *Worker) Warm(ctx context.Context, tenant string) error {
	if tenant == "" {
		tenant = memento.DefaultTenant
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.counts[tenant] != nil {
		return nil
	}
	if _, _, _, err := w.learn(ctx, tenant, false); err != nil {
		return fmt.Errorf("warm the model counts of %s: %w", tenant, err)
	}
	return nil
}

// learn brings the tenant's counts up to date and builds the model: from
// the users whose events changed since the counts' mark when the store
// offers that and the counts are fresh enough, from every event otherwise.
// It reports whether the update was incremental. w.mu is held.
func (w *Worker) learn(ctx context.Context, tenant string, force bool) (*Model, int64, bool, error) {
	fullEvery, fullAfter := w.FullEvery, w.FullAfter
	if fullEvery <= 0 {
		// Under a steady stream of events the model jobs run about
		// once a second (coalesced), and a rebuild reads every event
		// of the tenant (seconds of a processor at a million
		// memories): every 500 updates is about as often as FullAfter.
		fullEvery = 500
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
		w.modelUpdates.Add(1)
		return st.counts.Build(), mark, true, nil
	}
	counts := NewCounts(w.Model)
	// The incremental counts are checked against this rebuild. Events
	// keep arriving while it reads, so the two seldom count the same
	// events; the users whose events differ between them are noted as
	// the rebuild reads them, and set again in the incremental counts
	// before the two models are compared (checkModel).
	read := map[string]bool{}
	changed := map[string][]memento.Event{}
	mark, err := w.Models.EachUserEvents(ctx, tenant, func(user string, events []memento.Event) error {
		counts.Set(user, events)
		if st != nil {
			read[user] = true
			if !st.counts.sameUser(counts, user) {
				changed[user] = slices.Clone(events) // the store may reuse the slice for the next user
			}
		}
		return nil
	})
	if err != nil {
		return nil, 0, false, err
	}
	m := counts.Build()
	w.modelRebuilds.Add(1)
	if st != nil {
		w.checkModel(ctx, tenant, st.counts, m, mark, read, changed)
	}
	if w.counts == nil {
		w.counts = map[string]*tenantCounts{}
	}
	w.counts[tenant] = &tenantCounts{counts: counts, mark: mark, full: time.Now()}
	return m, mark, false, nil
}

// checkModel checks the incremental counts inc against the model full,
// which a rebuild that read the users in read learned from every event.
// Users whose events changed between the two reads (changed, with their
// events as the rebuild read them) are set again in inc, and those
// forgotten since (not read) are taken out, so that both count the same
// events; their models must then be equal bit for bit. inc is not kept
// after, so it is changed freely. w.mu is held.
func (w *Worker) checkModel(ctx context.Context, tenant string, inc *Counts, full *Model, mark int64, read map[string]bool, changed map[string][]memento.Event) {
	var gone []string
	for user := range inc.users {
		if !read[user] {
			gone = append(gone, user)
		}
	}
	for _, user := range gone {
		inc.Set(user, nil)
	}
	for user, events := range changed {
		inc.Set(user, events)
	}
	w.modelChecks.Add(1)
	w.modelChanged.Add(int64(len(changed) + len(gone)))
	a, _ := inc.Build().MarshalBinary()
	b, _ := full.MarshalBinary()
	if !bytes.Equal(a, b) {
		w.Mismatches.Add(1)
		w.logger().ErrorContext(ctx, "the incrementally updated co-occurrence model differs from the full rebuild; keeping the rebuild",
			"tenant", tenant, "mark", mark, "users_set_again", len(changed), "users_gone", len(gone))
	}
}

// ModelStats are a worker's figures of the co-occurrence model's
// updates and of the full rebuilds that check them.
type ModelStats struct {
	// Updates counts the model's incremental updates, Rebuilds its
	// rebuilds from every event.
	Updates  int64 `json:"updates"`
	Rebuilds int64 `json:"rebuilds"`
	// Checks counts the rebuilds that compared the incremental counts
	// with their own (every rebuild after the first), Changed the users
	// set again in the incremental counts for it because their events
	// had changed between the two reads, and Mismatches the checks that
	// found the models different (a bug if ever above 0).
	Checks     int64 `json:"checks"`
	Changed    int64 `json:"changed"`
	Mismatches int64 `json:"mismatches"`
}

// ModelStats returns the worker's figures of the co-occurrence model.
func (w *Worker) ModelStats() ModelStats {
	return ModelStats{Updates: w.modelUpdates.Load(), Rebuilds: w.modelRebuilds.Load(), Checks: w.modelChecks.Load(),
		Changed: w.modelChanged.Load(), Mismatches: w.Mismatches.Load()}
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

// LearnMessages does the message-events jobs of a batch of a user's
// messages (the user's backlog, memento.JobRequest.ByUser): it reads the
// actions each reports as HandleMessage does, in order, and adds all the
// events in one call, which enqueues one profile job and one model job
// for the batch. msgs are user messages, each with its Previous and Asked
// (Resolve defaults to the worker's). It returns one error per message:
// a message whose reading failed gets its error, and an error of the
// write goes to every message it carried. A user forgotten meanwhile
// learns nothing, and that is no error.
func (w *Worker) LearnMessages(ctx context.Context, s memento.Scope, msgs []MessageInput) []error {
	errs := make([]error, len(msgs))
	if w.Actions == nil {
		return errs
	}
	var events []memento.Event
	var carried []int
	for i, in := range msgs {
		if in.Resolve == nil {
			in.Resolve = w.Resolve
		}
		evs, err := MessageEvents(ctx, w.Actions, in)
		if err != nil {
			errs[i] = fmt.Errorf("message events of %s: %w", in.ID, err)
			continue
		}
		if len(evs) > 0 {
			events = append(events, evs...)
			carried = append(carried, i)
		}
	}
	if len(events) == 0 {
		return errs
	}
	n, err := w.Events.AddEvents(ctx, s, events, EventJobs(s))
	if err != nil && memento.ErrorCode(err) != memento.ENOTFOUND {
		for _, i := range carried {
			errs[i] = fmt.Errorf("message events of %s: %w", msgs[i].ID, err)
		}
		return errs
	}
	if n > 0 {
		w.logger().DebugContext(ctx, "events read from messages", "user", s.User, "messages", len(carried), "events", n)
	}
	return errs
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
