package profile

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// TestCheckFoldCountsMismatch spoils what a worker folded of a user and
// checks that the periodic full read counts the difference and saves what
// the full read learns.
func TestCheckFoldCountsMismatch(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	w := &Worker{Events: db, Profiles: db, Models: db, FullEvery: 3}
	u := memento.Scope{Tenant: memento.DefaultTenant, User: "u"}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	add := func(id string, typ memento.EventType) {
		t.Helper()
		at = at.Add(time.Hour)
		if _, err := db.AddEvents(ctx, u, []memento.Event{{ID: id, Type: typ, TitleID: id, At: at}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	recompute := func() *memento.Profile {
		t.Helper()
		p, err := w.Recompute(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	add("a", memento.EventLiked)
	recompute()
	add("b", memento.EventLiked)
	recompute()
	// The fold now says the user disliked a.
	f := w.foldedFor(u).Value
	f.g.out[f.g.index["a"]].Sentiment = -1
	add("c", memento.EventDisliked)
	if got := string(recompute().Keys[KeyDislikedTitles].Value); got != `[{"id":"a","weight":1},{"id":"c","weight":1}]` {
		t.Fatalf("dislikedTitles from the spoiled fold = %s; want a and c (the test spoils the fold)", got)
	}
	if n := w.ProfileMismatches.Load(); n != 0 {
		t.Fatalf("ProfileMismatches before the full read = %d", n)
	}
	p := recompute() // the third since the full read: reads every event
	if n := w.ProfileMismatches.Load(); n != 1 {
		t.Errorf("ProfileMismatches after the full read = %d; want 1", n)
	}
	if got := string(p.Keys[KeyDislikedTitles].Value); got != `[{"id":"c","weight":1}]` {
		t.Errorf("dislikedTitles after the full read = %s; want only c", got)
	}
}

// TestCheckModelMismatch spoils the incremental counts' neighbour lists
// and checks that the next periodic rebuild finds the difference, though
// events arrived after the counts' last read, and keeps its own model.
func TestCheckModelMismatch(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	w := &Worker{Events: db, Profiles: db, Models: db}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	add := func(user string, titles ...string) {
		t.Helper()
		var evs []memento.Event
		for _, title := range titles {
			at = at.Add(time.Hour)
			evs = append(evs, memento.Event{ID: user + "-" + title, Type: memento.EventLiked, TitleID: title, At: at})
		}
		if _, err := db.AddEvents(ctx, memento.Scope{Tenant: memento.DefaultTenant, User: user}, evs, nil); err != nil {
			t.Fatal(err)
		}
	}
	add("a", "x", "y", "z")
	add("b", "x", "y")
	add("e", "p", "q")
	add("f", "p", "q")
	if _, err := w.RecomputeModel(ctx, "", false); err != nil {
		t.Fatal(err)
	}
	add("c", "y", "z")
	if _, err := w.RecomputeModel(ctx, "", false); err != nil {
		t.Fatal(err)
	}
	// p's neighbours, as the incremental counts hold them, lose q: a
	// title no later event touches, so no update mends it.
	c := w.counts[memento.DefaultTenant].counts
	p := c.index["p"]
	if len(c.lists[p]) == 0 {
		t.Fatalf("p has no neighbours to spoil")
	}
	c.lists[p] = c.lists[p][1:]
	add("d", "z", "x") // after the counts' last read
	if _, err := w.RecomputeModel(ctx, "", true); err != nil {
		t.Fatal(err)
	}
	if st := w.ModelStats(); st.Checks != 1 || st.Mismatches != 1 || st.Changed != 1 {
		t.Errorf("ModelStats = %+v; want 1 check, 1 mismatch, 1 user (d) set again", st)
	}
	// The rebuild's model is the one kept: a fresh worker's equals it.
	saved, err := db.ProfileModel(ctx, memento.DefaultTenant, ModelName)
	if err != nil {
		t.Fatal(err)
	}
	fresh := &Worker{Events: db, Profiles: db, Models: db}
	if _, err := fresh.RecomputeModel(ctx, "", true); err != nil {
		t.Fatal(err)
	}
	rebuilt, err := db.ProfileModel(ctx, memento.DefaultTenant, ModelName)
	if err != nil {
		t.Fatal(err)
	}
	if string(saved.Data) != string(rebuilt.Data) {
		t.Errorf("the model kept after the mismatch is not the rebuild's")
	}
}

// BenchmarkModelCheck is what a periodic rebuild adds to check the
// incremental counts: comparing each user as it reads them, setting again
// the users whose events changed (here 1 % of 5,000), building the
// incremental model and encoding both. "rebuild" is the rebuild itself,
// without the store's reads, for scale.
func BenchmarkModelCheck(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(r, 1.1, 10, 29_999)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	users := make(map[string][]memento.Event, 5000)
	for u := range 5000 {
		user := fmt.Sprintf("u%d", u)
		n := 20 + r.IntN(40)
		evs := make([]memento.Event, n)
		for k := range evs {
			evs[k] = memento.Event{ID: fmt.Sprintf("%s-%d", user, k), Type: memento.EventLiked, TitleID: fmt.Sprintf("t%d", z.Uint64()), At: base.Add(time.Duration(k) * time.Minute)}
		}
		users[user] = evs
	}
	build := func(changed int) (*Counts, *Counts, map[string][]memento.Event) {
		inc, full := NewCounts(ModelOptions{}), NewCounts(ModelOptions{})
		later := map[string][]memento.Event{}
		k := 0
		for user, evs := range users {
			inc.Set(user, evs)
			if k < changed {
				evs = append(slices.Clone(evs), memento.Event{ID: user + "-new", Type: memento.EventLiked, TitleID: "t1", At: base.Add(time.Hour)})
				later[user] = evs
			}
			full.Set(user, evs)
			k++
		}
		inc.Build()
		return inc, full, later
	}
	b.Run("rebuild", func(b *testing.B) {
		for b.Loop() {
			full := NewCounts(ModelOptions{})
			for user, evs := range users {
				full.Set(user, evs)
			}
			full.Build()
		}
	})
	b.Run("check", func(b *testing.B) {
		w := &Worker{}
		for b.Loop() {
			b.StopTimer()
			inc, full, later := build(50)
			m := full.Build()
			b.StartTimer()
			read := make(map[string]bool, len(users))
			changed := map[string][]memento.Event{}
			for user, evs := range users {
				read[user] = true
				if !inc.sameUser(full, user) {
					if l, ok := later[user]; ok {
						evs = l
					}
					changed[user] = slices.Clone(evs)
				}
			}
			// (A user who liked t1 already contributes the same.)
			if len(changed) < 40 {
				b.Fatalf("%d users changed, want about 50", len(changed))
			}
			w.checkModel(context.Background(), "t", inc, m, 0, read, changed)
		}
		if w.Mismatches.Load() != 0 {
			b.Fatal("the check found a mismatch")
		}
	})
}
