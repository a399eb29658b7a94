package profile_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/profile"
	"github.com/memento-ai/memento/sqlite"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// startWorker opens a store with the profile worker running on the test
// catalog, and records which users and tenants it reported as changed.
func startWorker(t *testing.T) (*sqlite.DB, *profile.Worker, *changes) {
	t.Helper()
	db, w, ch := newWorker(t)
	startQueue(t, db)
	return db, w, ch
}

// startQueue starts db's queue until the test ends.
func startQueue(t *testing.T, db *sqlite.DB) {
	t.Helper()
	if err := db.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = db.Stop(ctx)
	})
}

// newWorker is startWorker with the queue not started yet.
func newWorker(t *testing.T) (*sqlite.DB, *profile.Worker, *changes) {
	t.Helper()
	db := sqlitetest.Open(t)
	idx := catalog.New(testTitles())
	ch := &changes{}
	w := &profile.Worker{Events: db, Profiles: db, Models: db, Messages: db, Resolve: idx.ResolveTitle, Catalog: idx,
		Actions:        offline.New(offline.Options{Titles: idx.ResolveTitle}),
		ProfileChanged: ch.profile, ModelChanged: ch.model}
	w.Register(db)
	return db, w, ch
}

type changes struct {
	mu       sync.Mutex
	profiles []string
	models   []string
}

func (c *changes) profile(s memento.Scope) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.profiles = append(c.profiles, s.User)
}

func (c *changes) model(tenant string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.models = append(c.models, tenant)
}

func TestWorkerLearnsFromEvents(t *testing.T) {
	ctx := context.Background()
	// The queue starts once the jobs are counted: a running backlog job
	// hands a job it has no handler for to River as a job of its own,
	// which the count would see twice.
	db, _, ch := newWorker(t)
	s := memento.Scope{User: "ann"}
	events := new(evs).add(memento.EventLiked, "heat").add(memento.EventLiked, "godfather").add(memento.EventDisliked, "conjuring")
	if _, err := db.AddEvents(ctx, s, events.list, profile.EventJobs(s)); err != nil {
		t.Fatal(err)
	}
	jobs, err := db.Jobs(ctx, memento.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 {
		for _, j := range jobs {
			t.Logf("job %d %s %s", j.ID, j.Kind, j.State)
		}
		t.Errorf("a batch of 3 events enqueued %d jobs, want 2 (profile and model)", len(jobs))
	}
	startQueue(t, db)
	sqlitetest.WaitForJobs(t, db, 10*time.Second)

	p, err := db.Profile(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	if err := json.Unmarshal(p.Keys[profile.KeySeen].Value, &seen); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"heat", "godfather", "conjuring"}, seen); diff != "" {
		t.Errorf("seen (-want +got):\n%s", diff)
	}
	if _, ok := p.Keys[profile.KeyDislikedGenres]; !ok {
		t.Errorf("no dislikedGenres in %v", p.Keys)
	}
	m, err := db.ProfileModel(ctx, memento.DefaultTenant, profile.ModelName)
	if err != nil || m == nil {
		t.Fatalf("model = %v, %v; want one", m, err)
	}
	ch.mu.Lock()
	if !slices.Contains(ch.profiles, "ann") || !slices.Contains(ch.models, memento.DefaultTenant) {
		t.Errorf("changes reported: profiles %v models %v", ch.profiles, ch.models)
	}
	ch.mu.Unlock()

	// The user takes seen over; a new event changes the learned keys only.
	if _, err := db.UpdateProfile(ctx, s, memento.ProfileUpdate{Set: map[string]json.RawMessage{profile.KeySeen: json.RawMessage(`["heat"]`)}}); err != nil {
		t.Fatal(err)
	}
	more := new(evs)
	more.t = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	more.add(memento.EventWatchlisted, "up")
	more.list[0].ID = "later"
	if _, err := db.AddEvents(ctx, s, more.list, profile.EventJobs(s)); err != nil {
		t.Fatal(err)
	}
	sqlitetest.WaitForJobs(t, db, 10*time.Second)
	p, _ = db.Profile(ctx, s)
	if got := string(p.Keys[profile.KeySeen].Value); got != `["heat"]` || p.Keys[profile.KeySeen].Source != memento.ProfileUser {
		t.Errorf("the user's seen became %s (%s)", got, p.Keys[profile.KeySeen].Source)
	}
	if got := string(p.Keys[profile.KeyWatchlist].Value); got != `["up"]` {
		t.Errorf("watchlist = %s, want [\"up\"]", got)
	}
}

func TestWorkerReadsMessages(t *testing.T) {
	ctx := context.Background()
	db, _, _ := startWorker(t)
	s := memento.Scope{User: "bob"}
	jobs := func(m memento.Message) []memento.JobRequest { return profile.MessageJobs(s, "t1", m) }
	msgs := []memento.Message{
		{ID: "m1", Role: memento.RoleUser, Text: "I watched Heat and loved it"},
		{ID: "m2", Role: memento.RoleAssistant, Text: "I watched Casino and loved it"},
	}
	if _, err := db.AppendMessages(ctx, s, "t1", msgs, jobs); err != nil {
		t.Fatal(err)
	}
	sqlitetest.WaitForJobs(t, db, 10*time.Second)
	events, err := db.Events(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"watched:heat", "liked:heat"}, summary(events)); diff != "" {
		t.Errorf("events from messages (-want +got):\n%s", diff)
	}
	p, _ := db.Profile(ctx, s)
	if got := string(p.Keys[profile.KeyLikedTitles].Value); got != `[{"id":"heat","weight":1}]` {
		t.Errorf("likedTitles = %s", got)
	}
	// Running the job again (a retry) adds nothing.
	payload, _ := json.Marshal(memento.MessageJob{Tenant: memento.DefaultTenant, User: "bob", Thread: "t1", Message: "m1"})
	idx := catalog.New(testTitles())
	w := &profile.Worker{Events: db, Profiles: db, Models: db, Messages: db, Resolve: idx.ResolveTitle,
		Actions: offline.New(offline.Options{Titles: idx.ResolveTitle})}
	if err := w.HandleMessage(ctx, memento.JobMessageEvents, payload); err != nil {
		t.Fatal(err)
	}
	again, _ := db.Events(ctx, s)
	if len(again) != len(events) {
		t.Errorf("a repeated message job added events: %d, then %d", len(events), len(again))
	}
}

func TestRecomputeModelSkipsWhenCurrent(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	w := &profile.Worker{Events: db, Profiles: db, Models: db}
	s := memento.Scope{User: "cy"}
	if _, err := db.AddEvents(ctx, s, new(evs).add(memento.EventLiked, "a").add(memento.EventLiked, "b").list, nil); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false} {
		got, err := w.RecomputeModel(ctx, "", false)
		if err != nil || got != want {
			t.Errorf("recompute %d = %v, %v; want %v", i, got, err, want)
		}
	}
	if got, err := w.RecomputeModel(ctx, "", true); err != nil || !got {
		t.Errorf("forced recompute = %v, %v; want true", got, err)
	}
	sm := &profile.StoreModels{Store: db}
	m, err := sm.Model(ctx, "")
	if err != nil || m == nil || m.Len() != 2 {
		t.Fatalf("StoreModels.Model = %v, %v", m, err)
	}
	m2, _ := sm.Model(ctx, "")
	if m2 != m {
		t.Error("StoreModels decoded an unchanged model again")
	}
	if none, err := sm.Model(ctx, "elsewhere"); err != nil || none != nil {
		t.Errorf("model of a tenant without one = %v, %v; want nil", none, err)
	}
}

func TestSectionRoundTrip(t *testing.T) {
	ctx := context.Background()
	a, b := sqlitetest.Open(t), sqlitetest.Open(t)
	s := memento.Scope{User: "dee"}
	if _, err := a.EnsureUser(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SaveLearned(ctx, s, map[string]memento.ProfileEntry{"seen": {Value: json.RawMessage(`["heat"]`), Evidence: []string{"e1"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.UpdateProfile(ctx, s, memento.ProfileUpdate{Set: map[string]json.RawMessage{"platform": json.RawMessage(`"Netflix"`)}}); err != nil {
		t.Fatal(err)
	}
	data, err := profile.Section{Store: a}.ExportSection(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := (profile.Section{Store: b}).ImportSection(ctx, s, data); err != nil {
		t.Fatal(err)
	}
	pa, _ := a.Profile(ctx, s)
	pb, _ := b.Profile(ctx, s)
	if diff := cmp.Diff(pa, pb); diff != "" {
		t.Errorf("restored profile (-want +got):\n%s", diff)
	}
	empty, err := profile.Section{Store: b}.ExportSection(ctx, memento.Scope{User: "nobody"})
	if err != nil || empty != nil {
		t.Errorf("section of a user without a profile = %s, %v; want nil", empty, err)
	}
	if err := (profile.Section{Store: b}).ImportSection(ctx, s, json.RawMessage(`[1]`)); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("importing a bad section: %v, want EINVALID", err)
	}
}
