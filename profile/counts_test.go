package profile_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/profile"
	"github.com/memento-ai/memento/sqlite"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// randomEvents makes n events of random kinds on titles t0..t(titles-1).
func randomEvents(r *rand.Rand, user string, n, titles int, start time.Time) []memento.Event {
	types := []memento.EventType{memento.EventWatched, memento.EventLiked, memento.EventDisliked, memento.EventRated,
		memento.EventFinished, memento.EventSkipped, memento.EventWatchlisted}
	out := make([]memento.Event, n)
	for k := range out {
		e := memento.Event{ID: fmt.Sprintf("%s-%d-%d", user, start.UnixNano(), k), User: user, Type: types[r.IntN(len(types))],
			TitleID: fmt.Sprintf("t%d", r.IntN(titles)), At: start.Add(time.Duration(r.IntN(100000)) * time.Second)}
		if e.Type == memento.EventRated {
			v := float64(1 + r.IntN(5))
			e.Value = &v
		}
		out[k] = e
	}
	return out
}

func encoded(t *testing.T, m *profile.Model) []byte {
	t.Helper()
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestIncrementalCountsEqualFullRebuild: after any stream of users added,
// changed and forgotten, counts updated user by user give exactly the
// model a build from scratch over the same events gives, however many
// updates came between two builds.
func TestIncrementalCountsEqualFullRebuild(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 7))
		opts := profile.ModelOptions{Neighbours: 1 + r.IntN(8), MaxGap: 1 + r.IntN(6), Window: 1 + 5*r.Float64()}
		inc := profile.NewCounts(opts)
		events := map[string][]memento.Event{}
		base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
		for step := range 200 {
			user := fmt.Sprintf("u%d", r.IntN(15))
			switch op := r.IntN(10); {
			case op < 7: // more events
				events[user] = append(events[user], randomEvents(r, user, 1+r.IntN(6), 25, base.Add(time.Duration(step)*time.Hour))...)
			case op < 9: // forgotten
				delete(events, user)
			default: // events replaced by others (an edit of history)
				events[user] = randomEvents(r, user, r.IntN(4), 25, base)
			}
			inc.Set(user, events[user])
			// Builds at random steps: a build after one change, and after
			// many, each keeps only the lists that cannot have changed.
			if r.IntN(4) != 0 && step != 199 {
				continue
			}
			full := profile.NewModelBuilder(opts)
			users := make([]string, 0, len(events))
			for u := range events {
				users = append(users, u)
			}
			slices.Sort(users)
			for _, u := range users {
				full.Add(events[u])
			}
			want, got := full.Build(), inc.Build()
			if !bytes.Equal(encoded(t, want), encoded(t, got)) {
				t.Fatalf("seed %d, step %d: the incremental model (%d titles, %d users) differs from the full rebuild (%d titles, %d users)",
					seed, step, got.Len(), got.Users(), want.Len(), want.Users())
			}
			if got.Users() != inc.Users() {
				t.Fatalf("seed %d: model users %d, counts users %d", seed, got.Users(), inc.Users())
			}
		}
	}
}

// TestWorkerUpdatesTheModelIncrementally: the worker's recomputes after
// the first read only the users with new events, and each saved model is
// the one a forced full rebuild saves.
func TestWorkerUpdatesTheModelIncrementally(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	w := &profile.Worker{Events: db, Profiles: db, Models: db}
	r := rand.New(rand.NewPCG(3, 4))
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for round := range 6 {
		for k := range 4 {
			user := fmt.Sprintf("u%d", r.IntN(6))
			evs := randomEvents(r, user, 5, 12, base.Add(time.Duration(round*10+k)*time.Hour))
			if _, err := db.AddEvents(ctx, memento.Scope{Tenant: memento.DefaultTenant, User: user}, evs, nil); err != nil {
				t.Fatal(err)
			}
		}
		saved, err := w.RecomputeModel(ctx, "", false)
		if err != nil || !saved {
			t.Fatalf("round %d: RecomputeModel = %v, %v", round, saved, err)
		}
		inc, full := savedThenRebuilt(t, db)
		if !bytes.Equal(inc.Data, full.Data) || inc.EventsMark != full.EventsMark {
			t.Fatalf("round %d: the incrementally updated model (mark %d) differs from the full rebuild (mark %d)", round, inc.EventsMark, full.EventsMark)
		}
	}
	// The periodic full rebuild finds the counts in agreement.
	w.FullEvery = 1
	if _, err := db.AddEvents(ctx, memento.Scope{Tenant: memento.DefaultTenant, User: "u1"}, randomEvents(r, "u1", 3, 12, base.Add(1000*time.Hour)), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := w.RecomputeModel(ctx, "", false); err != nil {
		t.Fatal(err)
	}
	if _, err := w.RecomputeModel(ctx, "", true); err != nil {
		t.Fatal(err)
	}
	if n := w.Mismatches.Load(); n != 0 {
		t.Errorf("%d full rebuilds disagreed with the incremental counts", n)
	}
	if st := w.ModelStats(); st.Checks < 1 {
		t.Errorf("no rebuild checked the incremental counts: %+v", st)
	}
}

// TestModelCheckedWhileEventsArrive: under a stream of events the rebuild
// never reads the events the incremental counts last read, and a user
// may be forgotten meanwhile; the periodic check still compares the two,
// and finds them equal.
func TestModelCheckedWhileEventsArrive(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	w := &profile.Worker{Events: db, Profiles: db, Models: db}
	r := rand.New(rand.NewPCG(5, 6))
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	add := func(user string, at time.Time) { addRandomEvents(t, db, r, user, at) }
	for u := range 8 {
		add(fmt.Sprintf("u%d", u), base)
	}
	recompute := func(force bool) {
		t.Helper()
		if _, err := w.RecomputeModel(ctx, "", force); err != nil {
			t.Fatal(err)
		}
	}
	recompute(false) // the first: a rebuild, nothing to check
	add("u1", base.Add(time.Hour))
	add("u8", base.Add(time.Hour))
	recompute(false) // incremental
	// After the incremental counts' last read: more events, and a user
	// forgotten. The rebuild reads later events than they did.
	add("u2", base.Add(2*time.Hour))
	add("u9", base.Add(2*time.Hour))
	if err := db.DeleteUser(ctx, memento.Scope{Tenant: memento.DefaultTenant, User: "u3"}); err != nil {
		t.Fatal(err)
	}
	recompute(true)
	st := w.ModelStats()
	if st.Updates != 1 || st.Rebuilds != 2 || st.Checks != 1 {
		t.Errorf("ModelStats = %+v; want 1 update, 2 rebuilds, 1 check", st)
	}
	// u2 and u9 changed after the counts' read, u3 was forgotten.
	if st.Changed != 3 || st.Mismatches != 0 {
		t.Errorf("ModelStats = %+v; want 3 users set again (u2, u9 and the forgotten u3) and no mismatch", st)
	}
	inc, full := savedThenRebuilt(t, db)
	if !bytes.Equal(inc.Data, full.Data) {
		t.Errorf("the saved model differs from a fresh rebuild")
	}
}

// addRandomEvents adds six random events on ten titles for user, at
// times from at on.
func addRandomEvents(t *testing.T, db *sqlite.DB, r *rand.Rand, user string, at time.Time) {
	t.Helper()
	if _, err := db.AddEvents(context.Background(), memento.Scope{Tenant: memento.DefaultTenant, User: user}, randomEvents(r, user, 6, 10, at), nil); err != nil {
		t.Fatal(err)
	}
}

// zipfEvents makes n events on titles drawn with the skew of real
// catalogs (a few titles seen by many, most by few): 30,000 titles.
func zipfEvents(z *rand.Zipf, r *rand.Rand, user string, n int, at time.Time) []memento.Event {
	types := []memento.EventType{memento.EventWatched, memento.EventLiked, memento.EventDisliked, memento.EventFinished}
	out := make([]memento.Event, n)
	for k := range out {
		out[k] = memento.Event{ID: fmt.Sprintf("%s-%d-%d", user, at.UnixNano(), k), User: user, Type: types[r.IntN(len(types))],
			TitleID: fmt.Sprintf("t%d", z.Uint64()), At: at.Add(time.Duration(k) * time.Minute)}
	}
	return out
}

// BenchmarkModelUpdate compares learning the model of 5,000 users from
// every event (what each recompute did before) with updating the counts
// for one user whose events changed and building the model from them.
func BenchmarkModelUpdate(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(r, 1.1, 10, 29_999)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	users := make([][]memento.Event, 5000)
	for u := range users {
		users[u] = zipfEvents(z, r, fmt.Sprintf("u%d", u), 20+r.IntN(40), base)
	}
	b.Run("full", func(b *testing.B) {
		for b.Loop() {
			full := profile.NewModelBuilder(profile.ModelOptions{})
			for _, evs := range users {
				full.Add(evs)
			}
			full.Build()
		}
	})
	b.Run("incremental", func(b *testing.B) {
		c := profile.NewCounts(profile.ModelOptions{})
		for u, evs := range users {
			c.Set(fmt.Sprintf("u%d", u), evs)
		}
		c.Build()
		k := 0
		for b.Loop() {
			u := k % len(users)
			k++
			users[u] = append(users[u], zipfEvents(z, r, fmt.Sprintf("u%d", u), 1, base.Add(time.Hour))...)
			c.Set(fmt.Sprintf("u%d", u), users[u])
			c.Build()
		}
	})
}

// savedThenRebuilt returns the default tenant's stored model, then the
// one a second worker, with no counts, saves from every event.
func savedThenRebuilt(t *testing.T, db *sqlite.DB) (saved, full *memento.ProfileModel) {
	t.Helper()
	ctx := context.Background()
	saved, err := db.ProfileModel(ctx, memento.DefaultTenant, profile.ModelName)
	if err != nil {
		t.Fatal(err)
	}
	fresh := &profile.Worker{Events: db, Profiles: db, Models: db}
	if _, err := fresh.RecomputeModel(ctx, "", true); err != nil {
		t.Fatal(err)
	}
	if full, err = db.ProfileModel(ctx, memento.DefaultTenant, profile.ModelName); err != nil {
		t.Fatal(err)
	}
	return saved, full
}

// readCounter is a store that counts the model's reads of every event and
// of the events since a mark.
type readCounter struct {
	*sqlite.DB
	full, since int
}

func (c *readCounter) EachUserEvents(ctx context.Context, tenant string, fn func(user string, events []memento.Event) error) (int64, error) {
	c.full++
	return c.DB.EachUserEvents(ctx, tenant, fn)
}

func (c *readCounter) EachUserEventsSince(ctx context.Context, tenant string, mark int64, fn func(user string, events []memento.Event) error) (int64, error) {
	c.since++
	return c.DB.EachUserEventsSince(ctx, tenant, mark, fn)
}

// TestWarmLearnsTheCountsOnce: Warm reads every event once and saves no
// model; the model job after it reads only the new events, and its model
// is the full rebuild's.
func TestWarmLearnsTheCountsOnce(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	reads := &readCounter{DB: db}
	w := &profile.Worker{Events: db, Profiles: db, Models: reads}
	r := rand.New(rand.NewPCG(5, 6))
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	add := func(user string, at time.Time) { addRandomEvents(t, db, r, user, at) }
	for u := range 5 {
		add(fmt.Sprintf("u%d", u), base)
	}
	for range 2 {
		if err := w.Warm(ctx, ""); err != nil {
			t.Fatal(err)
		}
	}
	if reads.full != 1 || reads.since != 0 {
		t.Fatalf("two warms read every event %d times and the new ones %d times, want once and never", reads.full, reads.since)
	}
	if m, err := db.ProfileModel(ctx, memento.DefaultTenant, profile.ModelName); err != nil || m != nil {
		t.Fatalf("the model after Warm alone: %v, %v; want none", m, err)
	}
	add("u1", base.Add(time.Hour))
	if saved, err := w.RecomputeModel(ctx, "", false); err != nil || !saved {
		t.Fatalf("RecomputeModel after Warm = %v, %v", saved, err)
	}
	if reads.full != 1 || reads.since != 1 {
		t.Fatalf("the model job after Warm read every event %d times and the new ones %d times, want 1 and 1", reads.full, reads.since)
	}
	if inc, full := savedThenRebuilt(t, db); !bytes.Equal(inc.Data, full.Data) {
		t.Fatal("the model updated from warmed counts differs from the full rebuild")
	}
}

// BenchmarkModelBurst updates the counts after a burst of messages: 40
// users with 5 new events each, later than their others, then builds the
// model. The tenant is shaped like the bench store's at 1.1 M memories,
// where such an update ranks most titles again: thousands of titles with
// hundreds of titles liked near each.
func BenchmarkModelBurst(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	const users, titles = 1_500, 5_000
	evs := make([][]memento.Event, users)
	c := profile.NewCounts(profile.ModelOptions{})
	for u := range evs {
		evs[u] = randomEvents(r, fmt.Sprintf("u%d", u), 100+r.IntN(50), titles, base)
		c.Set(fmt.Sprintf("u%d", u), evs[u])
	}
	c.Build()
	k := 0
	for b.Loop() {
		k++
		for range 40 {
			u := r.IntN(users)
			evs[u] = append(evs[u], randomEvents(r, fmt.Sprintf("u%d", u), 5, titles, base.Add(time.Duration(k)*1000*time.Hour))...)
			c.Set(fmt.Sprintf("u%d", u), evs[u])
		}
		c.Build()
	}
}

// TestModelCheckedUnderConcurrentEvents: events added while rebuilds read
// (and while incremental updates run) leave every check in agreement.
func TestModelCheckedUnderConcurrentEvents(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	w := &profile.Worker{Events: db, Profiles: db, Models: db, FullEvery: 2}
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for u := range 20 {
		r := rand.New(rand.NewPCG(uint64(u), 7))
		if _, err := db.AddEvents(ctx, memento.Scope{Tenant: memento.DefaultTenant, User: fmt.Sprintf("u%d", u)}, randomEvents(r, fmt.Sprintf("u%d", u), 8, 15, base), nil); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	var added atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		r := rand.New(rand.NewPCG(8, 9))
		for k := 0; ; k++ {
			select {
			case <-stop:
				return
			default:
			}
			user := fmt.Sprintf("u%d", r.IntN(25))
			if _, err := db.AddEvents(ctx, memento.Scope{Tenant: memento.DefaultTenant, User: user}, randomEvents(r, user, 3, 15, base.Add(time.Duration(k)*time.Hour)), nil); err != nil {
				t.Error(err)
				return
			}
			added.Add(1)
		}
	})
	for range 12 {
		// Each recompute has new events to learn, and more arrive
		// while it reads.
		for seen := added.Load(); added.Load() == seen && !t.Failed(); {
			time.Sleep(time.Millisecond)
		}
		if _, err := w.RecomputeModel(ctx, "", false); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	st := w.ModelStats()
	if st.Checks < 3 || st.Mismatches != 0 {
		t.Errorf("ModelStats = %+v; want several checks, none finding a mismatch", st)
	}
	t.Logf("%+v", st)
}
