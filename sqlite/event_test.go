package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

func ptr[T any](v T) *T { return &v }

func TestAddEventsValidates(t *testing.T) {
	db := sqlitetest.Open(t)
	tests := []struct {
		name    string
		event   memento.Event
		message string
	}{
		{"type", memento.Event{Type: "loved", TitleID: "t"},
			`events[0].type must be one of [watched rated liked disliked watchlisted skipped abandoned finished], got "loved"`},
		{"title", memento.Event{Type: memento.EventLiked}, "events[0].title is required"},
		{"rating missing", memento.Event{Type: memento.EventRated, TitleID: "t"}, `events[0].value must be a rating from 0.5 to 5 for "rated"`},
		{"rating high", memento.Event{Type: memento.EventRated, TitleID: "t", Value: ptr(6.0)}, `events[0].value must be a rating from 0.5 to 5 for "rated"`},
		{"fraction", memento.Event{Type: memento.EventAbandoned, TitleID: "t", Value: ptr(1.5)}, `events[0].value must be the fraction watched, from 0 to 1, for "abandoned"`},
		{"value on liked", memento.Event{Type: memento.EventLiked, TitleID: "t", Value: ptr(1.0)}, `events[0].value must be empty for "liked"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := db.AddEvents(context.Background(), memento.Scope{User: "ann"}, []memento.Event{tt.event}, nil)
			wantCode(t, err, memento.EINVALID)
			if got := memento.ErrorMessage(err); got != tt.message {
				t.Errorf("message = %q, want %q", got, tt.message)
			}
		})
	}
}

func TestAddEvents(t *testing.T) {
	ctx := context.Background()
	db := openClocked(t)
	s := memento.Scope{User: "ann"}
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	events := []memento.Event{
		{ID: "e2", Type: memento.EventRated, TitleID: "ml:2", Value: ptr(4.5), At: t0.Add(2 * time.Hour)},
		{ID: "e1", Type: memento.EventWatched, TitleID: "ml:1", At: t0},
		{Type: memento.EventAbandoned, TitleID: "ml:3", Value: ptr(0.25), At: t0.Add(time.Hour)},
	}
	jobsFor := func(e memento.Event) []memento.JobRequest {
		return []memento.JobRequest{{Kind: "learn", Payload: map[string]string{"event": e.ID}}}
	}
	n, err := db.AddEvents(ctx, s, events, jobsFor)
	if err != nil {
		t.Fatalf("AddEvents: %v", err)
	}
	if n != 3 {
		t.Errorf("inserted = %d, want 3", n)
	}
	if got := countJobs(t, db); got != 3 {
		t.Errorf("jobs = %d, want 3", got)
	}

	got, err := db.Events(ctx, s)
	if err != nil {
		t.Fatalf("Events: %v", err)
	}
	var ids []string
	for _, e := range got {
		ids = append(ids, e.ID)
		if e.Tenant != memento.DefaultTenant || e.User != "ann" || e.CreatedAt.IsZero() {
			t.Errorf("event %s has scope %s/%s and created %v", e.ID, e.Tenant, e.User, e.CreatedAt)
		}
	}
	if len(ids) != 3 || ids[0] != "e1" || ids[2] != "e2" {
		t.Errorf("event order = %v, want e1, generated, e2 (by time)", ids)
	}
	if got[1].Value == nil || *got[1].Value != 0.25 || got[0].Value != nil {
		t.Errorf("values = %v, %v; want nil, 0.25", got[0].Value, got[1].Value)
	}
	want := memento.Event{Tenant: memento.DefaultTenant, User: "ann", ID: "e2", Type: memento.EventRated, TitleID: "ml:2", Value: ptr(4.5), At: t0.Add(2 * time.Hour)}
	if diff := cmp.Diff(want, got[2], cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".CreatedAt" }, cmp.Ignore())); diff != "" {
		t.Errorf("event e2 (-want +got):\n%s", diff)
	}

	// Repeating stored ids inserts nothing and enqueues nothing.
	n, err = db.AddEvents(ctx, s, events[:2], jobsFor)
	if err != nil {
		t.Fatalf("repeated AddEvents: %v", err)
	}
	if n != 0 {
		t.Errorf("repeat inserted %d, want 0", n)
	}
	if got := countJobs(t, db); got != 3 {
		t.Errorf("jobs after repeat = %d, want 3", got)
	}
	all, _ := db.Events(ctx, s)
	if len(all) != 3 {
		t.Errorf("events after repeat = %d, want 3", len(all))
	}
}
