package profile_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/profile"
	"github.com/memento-ai/memento/sqlite"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// countingEvents counts what a worker reads of users' events: the events
// UserEventsSince returns, and the reads of every event (from mark 0, or
// through Events).
type countingEvents struct {
	*sqlite.DB
	read, full atomic.Int64
}

func (c *countingEvents) UserEventsSince(ctx context.Context, s memento.Scope, mark int64) (*memento.UserEvents, error) {
	got, err := c.DB.UserEventsSince(ctx, s, mark)
	if err == nil {
		c.read.Add(int64(len(got.Events)))
		if mark == 0 {
			c.full.Add(1)
		}
	}
	return got, err
}

func (c *countingEvents) Events(ctx context.Context, s memento.Scope) ([]memento.Event, error) {
	c.full.Add(1)
	return c.DB.Events(ctx, s)
}

// foldedWorker is a worker over db with the test catalog that counts its
// reads of events.
func foldedWorker(t *testing.T, db *sqlite.DB) (*profile.Worker, *countingEvents, *catalog.Index) {
	t.Helper()
	idx := catalog.New(testTitles())
	ev := &countingEvents{DB: db}
	return &profile.Worker{Events: ev, Profiles: db, Models: db, Catalog: idx}, ev, idx
}

// learnedFromAll is what the default learners learn from every event of
// the user, read afresh.
func learnedFromAll(t *testing.T, db *sqlite.DB, idx *catalog.Index, s memento.Scope) map[string]memento.ProfileEntry {
	t.Helper()
	ctx := context.Background()
	events, err := db.Events(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	title := func(id string) (*memento.Title, bool) {
		tt, err := idx.Title(ctx, id)
		return tt, err == nil
	}
	keys, err := profile.Learn(profile.NewInput(events, title), profile.DefaultLearners())
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// learned is a profile's learned keys as value and evidence, for
// comparing.
type learned struct {
	Value    string
	Evidence []string
}

func learnedOf(keys map[string]memento.ProfileEntry) map[string]learned {
	out := map[string]learned{}
	for k, e := range keys {
		if e.Source == memento.ProfileLearned {
			out[k] = learned{string(e.Value), e.Evidence}
		}
	}
	return out
}

// streamEvents makes n events, mostly later than *at, some at the same
// time and some older; some without an id and some repeating an id.
func streamEvents(r *rand.Rand, n int, at *time.Time, next *int) []memento.Event {
	titles := testTitles()
	var out []memento.Event
	for range n {
		typ := memento.EventTypes[r.IntN(len(memento.EventTypes))]
		e := memento.Event{Type: typ, TitleID: titles[r.IntN(len(titles))].ID}
		if r.IntN(10) == 0 {
			e.TitleID = "unknown-title"
		}
		switch typ {
		case memento.EventRated:
			v := float64(1+r.IntN(10)) / 2
			e.Value = &v
		case memento.EventAbandoned:
			if r.IntN(2) == 0 {
				v := r.Float64()
				e.Value = &v
			}
		}
		switch p := r.IntN(20); {
		case p < 3:
			e.At = at.Add(-time.Duration(1+r.IntN(600)) * time.Minute) // older
		case p < 6:
			e.At = *at // the same instant
		default:
			*at = at.Add(time.Duration(1+r.IntN(90)) * time.Minute)
			e.At = *at
		}
		switch p := r.IntN(10); {
		case p == 0: // the store names it
		case p == 1 && *next > 0:
			e.ID = fmt.Sprintf("e%d", r.IntN(*next)) // stored already: skipped
		default:
			e.ID = fmt.Sprintf("e%d", *next)
			*next++
		}
		out = append(out, e)
	}
	return out
}

// TestFoldedRecomputeEqualsFull adds random streams of events (older ones,
// ones at the same instant, repeated ids, titles the catalog does not
// know) in random batches, forgets the user now and then, and forgets
// another user whose events end the table (so their row numbers are used
// again); after every change the profile a recompute saves equals what
// the learners learn from every event read afresh, with and without the
// periodic full read, which finds no difference.
func TestFoldedRecomputeEqualsFull(t *testing.T) {
	for _, every := range []int{1000, 3} {
		for seed := range uint64(6) {
			t.Run(fmt.Sprintf("fullEvery=%d/seed=%d", every, seed), func(t *testing.T) {
				ctx := context.Background()
				db := sqlitetest.Open(t)
				w, ev, idx := foldedWorker(t, db)
				w.FullEvery = every
				r := rand.New(rand.NewPCG(seed, 7))
				u, tail := memento.Scope{Tenant: memento.DefaultTenant, User: "u"}, memento.Scope{Tenant: memento.DefaultTenant, User: "tail"}
				at, next := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 0
				for step := range 60 {
					switch p := r.IntN(20); {
					case p == 0:
						if err := db.DeleteUser(ctx, u); err != nil && memento.ErrorCode(err) != memento.ENOTFOUND {
							t.Fatal(err)
						}
					case p < 3:
						if _, err := db.AddEvents(ctx, tail, streamEvents(r, 1+r.IntN(3), &at, new(int)), nil); err != nil {
							t.Fatal(err)
						}
						// u's recompute reads up to tail's events, which are
						// then forgotten: u's next events take their rows.
						if _, err := w.Recompute(ctx, u); err != nil {
							t.Fatal(err)
						}
						if err := db.DeleteUser(ctx, tail); err != nil {
							t.Fatal(err)
						}
						fallthrough
					default:
						if _, err := db.AddEvents(ctx, u, streamEvents(r, 1+r.IntN(4), &at, &next), nil); err != nil {
							t.Fatal(err)
						}
					}
					p, err := w.Recompute(ctx, u)
					if err != nil {
						t.Fatalf("step %d: %v", step, err)
					}
					want := learnedOf(learnedFromAll(t, db, idx, u))
					if diff := cmp.Diff(want, learnedOf(p.Keys)); diff != "" {
						t.Fatalf("step %d: the recompute's learned keys differ from a full read's (-full +recompute):\n%s", step, diff)
					}
				}
				if n := w.ProfileMismatches.Load(); n != 0 {
					t.Errorf("ProfileMismatches = %d; want 0", n)
				}
				if ev.read.Load() == 0 {
					t.Error("the worker never read events from a mark")
				}
			})
		}
	}
}

// TestFoldedRecomputeForgottenUser forgets a user whose one event ends
// the table and adds two events under the same name: the second read
// from the mark returns one of them and the count of the user's events
// matches what the worker holds plus it, but the user was created again,
// so the recompute learns from the new user's events alone.
func TestFoldedRecomputeForgottenUser(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	w, _, idx := foldedWorker(t, db)
	u := memento.Scope{Tenant: memento.DefaultTenant, User: "u"}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := db.AddEvents(ctx, u, []memento.Event{{ID: "old", Type: memento.EventLiked, TitleID: "heat", At: at}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Recompute(ctx, u); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond) // another creation time
	if _, err := db.AddEvents(ctx, u, []memento.Event{
		{ID: "new1", Type: memento.EventDisliked, TitleID: "it", At: at.Add(time.Hour)},
		{ID: "new2", Type: memento.EventLiked, TitleID: "up", At: at.Add(2 * time.Hour)},
	}, nil); err != nil {
		t.Fatal(err)
	}
	p, err := w.Recompute(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	want := learnedOf(learnedFromAll(t, db, idx, u))
	if diff := cmp.Diff(want, learnedOf(p.Keys)); diff != "" {
		t.Errorf("the user created again learned (-full +recompute):\n%s", diff)
	}
	if got := string(p.Keys[profile.KeyLikedTitles].Value); strings.Contains(got, "heat") {
		t.Errorf("likedTitles = %s; want the forgotten user's heat gone", got)
	}
}

// TestFoldedRecomputeReadsNewEvents checks that after the first recompute
// of a user each reads only the events added since, until FullEvery
// recomputes ask for a full read, and that a user's reads start over once
// ProfileCache drops them.
func TestFoldedRecomputeReadsNewEvents(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	w, ev, _ := foldedWorker(t, db)
	w.FullEvery = 6
	r := rand.New(rand.NewPCG(1, 2))
	at, next := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 0
	later := func(n int) []memento.Event {
		evs := streamEvents(r, n, &at, &next)
		for i := range evs {
			at = at.Add(time.Minute)
			evs[i].At, evs[i].ID = at, fmt.Sprintf("n%d", next)
			next++
		}
		return evs
	}
	u := memento.Scope{User: "u"}
	if _, err := db.AddEvents(ctx, u, later(100), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Recompute(ctx, u); err != nil {
		t.Fatal(err)
	}
	if got, full := ev.read.Load(), ev.full.Load(); got != 100 || full != 1 {
		t.Fatalf("the first recompute read %d events in %d full reads; want 100 in 1", got, full)
	}
	for i := 1; i <= 4; i++ {
		if _, err := db.AddEvents(ctx, u, later(2), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Recompute(ctx, u); err != nil {
			t.Fatal(err)
		}
		if got, full := ev.read.Load(), ev.full.Load(); got != int64(100+2*i) || full != 1 {
			t.Fatalf("after %d more recomputes of two new events each: %d events read in %d full reads; want %d in 1", i, got, full, 100+2*i)
		}
	}
	// The fifth recompute since the full read is one more, and the sixth
	// reads every event to check the fold.
	for range 2 {
		if _, err := w.Recompute(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	if got, full := ev.read.Load(), ev.full.Load(); got != 108+108 || full != 2 {
		t.Errorf("the sixth recompute since the first: %d events read in %d full reads; want 216 in 2", got, full)
	}
	if n := w.ProfileMismatches.Load(); n != 0 {
		t.Errorf("ProfileMismatches = %d; want 0", n)
	}

	// A cache of 150 events holds u's 108 or v's 60, not both.
	w.ProfileCache = 150
	v := memento.Scope{User: "v"}
	if _, err := db.AddEvents(ctx, v, later(60), nil); err != nil {
		t.Fatal(err)
	}
	ev.read.Store(0)
	ev.full.Store(0)
	for _, s := range []memento.Scope{v, u, u} {
		if _, err := w.Recompute(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if got, full := ev.read.Load(), ev.full.Load(); got != 60+108 || full != 2 {
		t.Errorf("v's first recompute, then u's two: %d events read in %d full reads; want 168 in 2 (v's drops u, u's drops v, the second of u's reads nothing)", got, full)
	}
	if _, err := w.Recompute(ctx, v); err != nil {
		t.Fatal(err)
	}
	if got, full := ev.read.Load(), ev.full.Load(); got != 168+60 || full != 3 {
		t.Errorf("v again after u: %d events read in %d full reads; want 228 in 3 (v dropped for u)", got, full)
	}
}

// TestFoldedRecomputeConcurrent recomputes one user from two goroutines
// while a third adds events (with -race in CI); the last recompute saves
// what every event learns.
func TestFoldedRecomputeConcurrent(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	w, _, idx := foldedWorker(t, db)
	w.FullEvery = 7
	u := memento.Scope{Tenant: memento.DefaultTenant, User: "u"}
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		r := rand.New(rand.NewPCG(3, 4))
		at, next := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 0
		for range 40 {
			if _, err := db.AddEvents(ctx, u, streamEvents(r, 1+r.IntN(3), &at, &next), nil); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				if _, err := w.Recompute(ctx, u); err != nil && !strings.Contains(err.Error(), "does not exist") {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	p, err := w.Recompute(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(learnedOf(learnedFromAll(t, db, idx, u)), learnedOf(p.Keys)); diff != "" {
		t.Errorf("after concurrent recomputes, the learned keys differ from a full read's (-full +recompute):\n%s", diff)
	}
	if n := w.ProfileMismatches.Load(); n != 0 {
		t.Errorf("ProfileMismatches = %d; want 0", n)
	}
}

// BenchmarkRecompute adds one event to a user who has n and recomputes
// their profile, reading every event (all: custom learners, here the
// default ones named) or folding the new one into what the worker kept
// (folded). The event's write is not timed.
func BenchmarkRecompute(b *testing.B) {
	for _, n := range []int{50, 500, 5000} {
		for _, mode := range []string{"all", "folded"} {
			b.Run(fmt.Sprintf("events=%d/%s", n, mode), func(b *testing.B) {
				ctx := context.Background()
				db := sqlitetest.Open(b)
				idx := catalog.New(testTitles())
				w := &profile.Worker{Events: db, Profiles: db, Models: db, Catalog: idx}
				if mode == "all" {
					w.Learners = profile.DefaultLearners()
				}
				r := rand.New(rand.NewPCG(1, 2))
				at, next := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 0
				u := memento.Scope{User: "u"}
				add := func(n int) {
					evs := streamEvents(r, n, &at, &next)
					for i := range evs {
						at = at.Add(time.Minute)
						evs[i].At, evs[i].ID = at, fmt.Sprintf("n%d", next)
						next++
					}
					if _, err := db.AddEvents(ctx, u, evs, nil); err != nil {
						b.Fatal(err)
					}
				}
				add(n)
				if _, err := w.Recompute(ctx, u); err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					b.StopTimer()
					add(1)
					b.StartTimer()
					if _, err := w.Recompute(ctx, u); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
