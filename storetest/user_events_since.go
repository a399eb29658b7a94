package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
)

// UserEventReader is a store that reads one user's events from a mark, for
// incremental profile recomputes (profile.UserEventsSince).
type UserEventReader interface {
	// UserEventsSince returns the user's events added after mark in the
	// order they happened, the mark of the read, the number of the user's
	// events and when the user was created.
	UserEventsSince(ctx context.Context, s memento.Scope, mark int64) (*memento.UserEvents, error)
}

// testUserEventsSince reads users' events from marks: only the events
// added since, in the order they happened (an older one included), with
// the user's count and creation time; across many other users' events;
// for a user forgotten and created again; and, when a forgotten user's
// events are removed from the end of the table, either the new events or a
// count that tells the reader it holds too few.
func testUserEventsSince(t *testing.T, open Opener) {
	st := open(t)
	ur, ok := st.(UserEventReader)
	if !ok {
		t.Skip("the store does not implement storetest.UserEventReader (UserEventsSince)")
	}
	ctx := t.Context()
	add := func(s memento.Scope, minutes int, ids ...string) {
		t.Helper()
		var evs []memento.Event
		for _, id := range ids {
			evs = append(evs, memento.Event{ID: id, Type: memento.EventWatched, TitleID: "wiki:" + id, At: t0.Add(time.Duration(minutes) * time.Minute)})
		}
		if _, err := st.AddEvents(ctx, s, evs, nil); err != nil {
			t.Fatalf("AddEvents(%v): %v", ids, err)
		}
	}
	// held is what a reader folded of a user: the ids it read.
	type held struct {
		ids     []string
		mark    int64
		created time.Time
	}
	read := func(s memento.Scope, h *held) *memento.UserEvents {
		t.Helper()
		got, err := ur.UserEventsSince(ctx, s, h.mark)
		if err != nil {
			t.Fatalf("UserEventsSince(%s, %d): %v", s.User, h.mark, err)
		}
		for i, e := range got.Events {
			if e.User != s.User || e.Tenant != s.Tenant {
				t.Errorf("UserEventsSince(%s).Events[%d] is of %s/%s", s.User, i, e.Tenant, e.User)
			}
			h.ids = append(h.ids, e.ID)
		}
		h.mark, h.created = got.Mark, got.Created
		return got
	}
	ids := func(u *memento.UserEvents) []string {
		out := []string{}
		for _, e := range u.Events {
			out = append(out, e.ID)
		}
		return out
	}

	nobody := &held{}
	if got := read(memento.Scope{Tenant: memento.DefaultTenant, User: "nobody"}, nobody); len(got.Events) != 0 || got.Total != 0 || !got.Created.IsZero() {
		t.Errorf("UserEventsSince of a user who does not exist = %d events, total %d, created %v; want none, 0, zero", len(got.Events), got.Total, got.Created)
	}

	add(ann, 2, "a2")
	add(ann, 1, "a1")
	add(bob, 1, "b1")
	var a held
	got := read(ann, &a)
	if diff := cmp.Diff([]string{"a1", "a2"}, ids(got)); diff != "" || got.Total != 2 || got.Created.IsZero() || got.Mark <= 0 {
		t.Errorf("UserEventsSince(ann, 0) = %v, total %d, created %v, mark %d; want every event in the order they happened (-want +got):\n%s",
			ids(got), got.Total, got.Created, got.Mark, diff)
	}
	if got := read(ann, &a); len(got.Events) != 0 || got.Total != 2 {
		t.Errorf("UserEventsSince(ann) with nothing new = %v, total %d; want none, 2", ids(got), got.Total)
	}
	add(ann, 0, "a0") // older than every other: returned all the same
	add(bob, 3, "b3")
	add(ann, 4, "a4", "a5")
	if got := read(ann, &a); !cmp.Equal(ids(got), []string{"a0", "a4", "a5"}) || got.Total != 5 {
		t.Errorf("UserEventsSince(ann) after three new events = %v, total %d; want [a0 a4 a5], 5", ids(got), got.Total)
	}

	// Many other events since the mark.
	var crowd []memento.Event
	for i := range 9000 {
		crowd = append(crowd, memento.Event{ID: fmt.Sprintf("c%d", i), Type: memento.EventSkipped, TitleID: fmt.Sprintf("wiki:C%d", i%50), At: t0})
	}
	if _, err := st.AddEvents(ctx, memento.Scope{Tenant: memento.DefaultTenant, User: "crowd"}, crowd, nil); err != nil {
		t.Fatal(err)
	}
	add(ann, 6, "a6")
	if got := read(ann, &a); !cmp.Equal(ids(got), []string{"a6"}) || got.Total != 6 {
		t.Errorf("UserEventsSince(ann) after 9,000 other events and one of ann's = %v, total %d; want [a6], 6", ids(got), got.Total)
	}
	if len(a.ids) != 6 {
		t.Errorf("ann's reads returned %v; want each of her six events once", a.ids)
	}

	// Forgotten and created again: another creation time, and only the new
	// user's events.
	b := held{}
	read(bob, &b)
	if err := st.DeleteUser(ctx, bob); err != nil {
		t.Fatal(err)
	}
	if got := read(bob, &held{mark: b.mark}); len(got.Events) != 0 || got.Total != 0 || !got.Created.IsZero() {
		t.Errorf("UserEventsSince of a forgotten user = %v, total %d, created %v; want nothing", ids(got), got.Total, got.Created)
	}
	time.Sleep(2 * time.Millisecond)
	add(bob, 7, "b7")
	again := held{mark: b.mark}
	if got := read(bob, &again); got.Total != 1 || got.Created.Equal(b.created) || got.Created.IsZero() {
		t.Errorf("UserEventsSince of bob created again = %v, total %d, created %v (first %v); want one event and another creation time",
			ids(got), got.Total, got.Created, b.created)
	}

	// The events at the end of the table go with a forgotten user; ann's
	// next event is either read from her mark or counted beyond what she
	// holds.
	tail := memento.Scope{Tenant: memento.DefaultTenant, User: "tail"}
	add(tail, 1, "t1", "t2", "t3")
	read(ann, &a)
	if err := st.DeleteUser(ctx, tail); err != nil {
		t.Fatal(err)
	}
	add(ann, 8, "a8")
	got = read(ann, &a)
	if !cmp.Equal(ids(got), []string{"a8"}) && len(a.ids) >= got.Total {
		t.Errorf("after the table's last events were forgotten, UserEventsSince(ann) = %v, total %d with %d held; want a8, or a total above what is held",
			ids(got), got.Total, len(a.ids))
	}
}
