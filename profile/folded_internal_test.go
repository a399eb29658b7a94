package profile

import (
	"context"
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
