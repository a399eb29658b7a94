package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
)

// EventReader is a store that reads a tenant's events user by user for
// the co-occurrence model, in full and incrementally from a mark
// (profile.EventsSince).
type EventReader interface {
	memento.ProfileModelService
	// EachUserEventsSince calls fn with every event of each user who has
	// an event added after mark, one user at a time, and returns the mark
	// it read at.
	EachUserEventsSince(ctx context.Context, tenant string, mark int64, fn func(user string, events []memento.Event) error) (int64, error)
}

// eventIDs reads events user by user into ids by user, replacing what a
// user had, as the co-occurrence counts do (profile.Counts.Set).
func eventIDs(into map[string][]string) func(user string, events []memento.Event) error {
	return func(user string, events []memento.Event) error {
		ids := make([]string, len(events))
		for i, e := range events {
			ids[i] = e.ID
		}
		into[user] = ids
		return nil
	}
}

// testEventsSince reads a tenant's events incrementally: only the users
// with new events, each with all of their events, and a mark that moves
// with the tenant's own events only. Then it reads incrementally while
// writers add events, with one writer's transaction held open while
// another's commits, and checks that the incremental reads end where one
// full read does: no event is skipped by a mark read past it.
func testEventsSince(t *testing.T, open Opener) {
	st := open(t)
	er, ok := st.(EventReader)
	if !ok {
		t.Skip("the store does not implement storetest.EventReader (EachUserEventsSince)")
	}
	ctx := t.Context()
	add := func(s memento.Scope, id string, minutes int) {
		t.Helper()
		if _, err := st.AddEvents(ctx, s, []memento.Event{{ID: id, Type: memento.EventWatched, TitleID: "wiki:" + id,
			At: t0.Add(time.Duration(minutes) * time.Minute)}}, nil); err != nil {
			t.Fatalf("AddEvents(%s): %v", id, err)
		}
	}
	since := func(mark int64) (map[string][]string, int64) {
		t.Helper()
		got := map[string][]string{}
		m, err := er.EachUserEventsSince(ctx, "", mark, eventIDs(got))
		if err != nil {
			t.Fatalf("EachUserEventsSince(%d): %v", mark, err)
		}
		return got, m
	}
	zed := memento.Scope{Tenant: "acme", User: "zed"}
	add(ann, "a2", 2)
	add(ann, "a1", 1)
	add(bob, "b1", 1)
	add(zed, "z1", 1)
	got, mark0 := since(0)
	if diff := cmp.Diff(map[string][]string{"ann": {"a1", "a2"}, "bob": {"b1"}}, got); diff != "" {
		t.Errorf("EachUserEventsSince(0), every user of the tenant in the order events happened (-want +got):\n%s", diff)
	}
	if m, err := er.EventsMark(ctx, ""); err != nil || m != mark0 || mark0 <= 0 {
		t.Errorf("EventsMark = %d, %v; EachUserEventsSince read at %d; want the same, above 0", m, err, mark0)
	}
	add(bob, "b0", 0)
	got, mark1 := since(mark0)
	if diff := cmp.Diff(map[string][]string{"bob": {"b0", "b1"}}, got); diff != "" {
		t.Errorf("EachUserEventsSince after bob's new event: only bob, with all his events (-want +got):\n%s", diff)
	}
	if mark1 <= mark0 {
		t.Errorf("the mark went from %d to %d with a new event; want it to grow", mark0, mark1)
	}
	if got, m := since(mark1); len(got) != 0 || m != mark1 {
		t.Errorf("EachUserEventsSince(%d) with nothing new = %v at %d; want nobody at the same mark", mark1, got, m)
	}
	add(zed, "z2", 2)
	add(bob, "b0", 0) // stored already: skipped
	if got, m := since(mark1); len(got) != 0 || m != mark1 {
		t.Errorf("after another tenant's event and a repeated one, EachUserEventsSince(%d) = %v at %d; want nobody at the same mark", mark1, got, m)
	}

	// Incremental reads while writers add events end where a full read does.
	state := map[string][]string{}
	mark, err := er.EachUserEventsSince(ctx, "", 0, eventIDs(state))
	if err != nil {
		t.Fatal(err)
	}
	// One writer's transaction stays open (its jobs callback waits) while
	// another writer's commits and a reader reads.
	entered, release := make(chan struct{}), make(chan struct{})
	var blocked sync.WaitGroup
	blocked.Add(1)
	go func() {
		defer blocked.Done()
		var once sync.Once
		_, err := st.AddEvents(noCtx(), memento.Scope{User: "held"}, []memento.Event{{ID: "h1", Type: memento.EventLiked, TitleID: "wiki:H"}},
			func(memento.Event) []memento.JobRequest {
				once.Do(func() { close(entered) })
				<-release
				return nil
			})
		if err != nil {
			t.Errorf("AddEvents of the held writer: %v", err)
		}
	}()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("the held writer did not start")
	}
	later := make(chan struct{})
	go func() {
		defer close(later)
		if _, err := st.AddEvents(noCtx(), memento.Scope{User: "later"}, []memento.Event{{ID: "l1", Type: memento.EventLiked, TitleID: "wiki:L"}}, nil); err != nil {
			t.Errorf("AddEvents of the later writer: %v", err)
		}
	}()
	select {
	case <-later: // stores whose writers do not wait for one another
	case <-time.After(500 * time.Millisecond): // stores with one writer at a time
	}
	read := make(chan error, 1)
	go func() {
		var err error
		mark, err = er.EachUserEventsSince(noCtx(), "", mark, eventIDs(state))
		read <- err
	}()
	time.Sleep(100 * time.Millisecond)
	close(release)
	blocked.Wait()
	<-later
	if err := <-read; err != nil {
		t.Fatalf("EachUserEventsSince during the writes: %v", err)
	}
	// Now several writers at once, and a reader reading all along.
	var writers sync.WaitGroup
	for w := range 6 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			s := memento.Scope{User: fmt.Sprintf("w%d", w)}
			for i := range 15 {
				if _, err := st.AddEvents(noCtx(), s, []memento.Event{{ID: fmt.Sprintf("w%d-%02d", w, i), Type: memento.EventWatched,
					TitleID: fmt.Sprintf("wiki:T%d", i), At: t0.Add(time.Duration(i) * time.Minute)}}, nil); err != nil {
					t.Errorf("AddEvents(%v): %v", s, err)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { writers.Wait(); close(done) }()
	reads := 0
	for running := true; running; reads++ {
		select {
		case <-done:
			running = false
		default:
		}
		if mark, err = er.EachUserEventsSince(ctx, "", mark, eventIDs(state)); err != nil {
			t.Fatalf("EachUserEventsSince during the writes: %v", err)
		}
	}
	full := map[string][]string{}
	fullMark, err := er.EachUserEvents(ctx, "", eventIDs(full))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(full, state); diff != "" {
		t.Errorf("after %d incremental reads, the events read differ from one full read (-full +incremental):\n%s", reads, diff)
	}
	if fullMark != mark {
		t.Errorf("the last incremental read's mark %d differs from the full read's %d", mark, fullMark)
	}
	if !slices.Equal(full["held"], []string{"h1"}) || !slices.Equal(full["later"], []string{"l1"}) || len(full["w5"]) != 15 {
		t.Errorf("the full read = %v; want every writer's events", full)
	}
}
