package sqlite_test

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

func TestUsersAndUserExists(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	for _, s := range []memento.Scope{{User: "bob"}, {User: "ann"}, {Tenant: "t2", User: "cy"}} {
		if _, err := db.EnsureUser(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	users, err := db.Users(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff([]string{"ann", "bob"}, users); diff != "" {
		t.Errorf("Users (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		s    memento.Scope
		want bool
	}{{memento.Scope{User: "ann"}, true}, {memento.Scope{User: "cy"}, false}, {memento.Scope{Tenant: "t2", User: "cy"}, true}} {
		got, err := db.UserExists(ctx, tt.s)
		if err != nil || got != tt.want {
			t.Errorf("UserExists(%v) = %v, %v; want %v", tt.s, got, err, tt.want)
		}
	}
}

func TestChangedUsers(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	before := time.Now().Add(-time.Millisecond)
	if _, err := db.AddEvents(ctx, memento.Scope{User: "ev"}, []memento.Event{{Type: memento.EventWatched, TitleID: "t"}}, nil); err != nil {
		t.Fatal(err)
	}
	appendTexts(t, db, memento.Scope{Tenant: "t2", User: "msg"}, "th", "hello")
	if _, err := db.UpdateProfile(ctx, memento.Scope{User: "prof"}, memento.ProfileUpdate{Set: map[string]json.RawMessage{"k": json.RawMessage(`1`)}}); err != nil {
		t.Fatal(err)
	}
	// A job that finished for a user marks the user, whatever it wrote.
	db.Handle("touch", func(context.Context, string, json.RawMessage) error { return nil }, memento.JobOptions{})
	if _, err := db.AppendMessages(ctx, memento.Scope{User: "job"}, "th", []memento.Message{{Role: memento.RoleUser, Text: "x"}},
		messageJobs("touch", memento.Scope{User: "job"})); err != nil {
		t.Fatal(err)
	}
	mid := time.Now()
	time.Sleep(2 * time.Millisecond)
	startQueue(t, db)
	sqlitetest.WaitForJobs(t, db, 10*time.Second)

	// After mid only the job finished: River's table is what finds it.
	viaJob, err := db.ChangedUsers(ctx, mid)
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff([]memento.Scope{{Tenant: "default", User: "job"}}, scopes(viaJob)); diff != "" {
		t.Errorf("ChangedUsers after the writes (-want +got):\n%s", diff)
	}
	if at := viaJob[memento.Scope{Tenant: "default", User: "job"}]; !at.After(mid) || at.After(time.Now()) {
		t.Errorf("change time %v is not between %v and now", at, mid)
	}

	got, err := db.ChangedUsers(ctx, before)
	if err != nil {
		t.Fatal(err)
	}
	want := []memento.Scope{{Tenant: "default", User: "ev"}, {Tenant: "default", User: "job"}, {Tenant: "default", User: "prof"}, {Tenant: "t2", User: "msg"}}
	if diff := gocmp.Diff(want, scopes(got)); diff != "" {
		t.Errorf("ChangedUsers (-want +got):\n%s", diff)
	}
	later, err := db.ChangedUsers(ctx, time.Now().Add(time.Second))
	if err != nil || len(later) != 0 {
		t.Errorf("ChangedUsers after every change = %v, %v; want none", later, err)
	}
}

func TestSnapshotCursor(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	if at, err := db.SnapshotCursor(ctx, "file:///x"); err != nil || !at.IsZero() {
		t.Fatalf("cursor before any write = %v, %v; want zero", at, err)
	}
	want := time.Date(2025, 2, 3, 4, 5, 6, 7, time.UTC)
	if err := db.SetSnapshotCursor(ctx, "file:///x", want); err != nil {
		t.Fatal(err)
	}
	if err := db.SetSnapshotCursor(ctx, "file:///x", want); err != nil {
		t.Fatal(err)
	}
	got, err := db.SnapshotCursor(ctx, "file:///x")
	if err != nil || !got.Equal(want) {
		t.Errorf("cursor = %v, %v; want %v", got, err, want)
	}
}

// scopes lists the keys of a ChangedUsers result in order.
func scopes(m map[memento.Scope]time.Time) []memento.Scope {
	out := make([]memento.Scope, 0, len(m))
	for s := range m {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b memento.Scope) int {
		return cmp.Compare(a.Tenant+"\x00"+a.User, b.Tenant+"\x00"+b.User)
	})
	return out
}
