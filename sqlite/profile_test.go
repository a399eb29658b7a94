package sqlite_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// learned is a learned profile entry with the given JSON value.
func learned(value string, evidence ...string) memento.ProfileEntry {
	return memento.ProfileEntry{Value: json.RawMessage(value), Source: memento.ProfileLearned, Evidence: evidence}
}

// values renders a profile's keys as key -> source:value, for comparison.
func values(p *memento.Profile) map[string]string {
	out := map[string]string{}
	for k, e := range p.Keys {
		out[k] = e.Source + ":" + string(e.Value)
	}
	return out
}

func TestProfileEmpty(t *testing.T) {
	db := sqlitetest.Open(t)
	p, err := db.Profile(context.Background(), memento.Scope{User: "nobody"})
	if err != nil {
		t.Fatalf("Profile: %v", err)
	}
	if p.Version != 0 || len(p.Keys) != 0 || p.User != "nobody" || p.Tenant != memento.DefaultTenant {
		t.Errorf("Profile of an unknown user = %+v, want empty at version 0", p)
	}
	if _, err := db.Profile(context.Background(), memento.Scope{}); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("Profile without a user: err = %v, want EINVALID", err)
	}
}

func TestSaveLearnedKeepsUserKeys(t *testing.T) {
	ctx := context.Background()
	db := openClocked(t)
	s := memento.Scope{User: "ann"}
	if _, err := db.EnsureUser(ctx, s); err != nil {
		t.Fatal(err)
	}

	p, err := db.SaveLearned(ctx, s, map[string]memento.ProfileEntry{
		"seen":            learned(`["t1"]`, "e1"),
		"preferredGenres": learned(`[{"genre":"Crime","weight":1}]`, "e1"),
	})
	if err != nil {
		t.Fatalf("SaveLearned: %v", err)
	}
	if p.Version != 1 {
		t.Errorf("version after the first save = %d, want 1", p.Version)
	}
	if got := p.Keys["seen"].Evidence; !slices.Equal(got, []string{"e1"}) {
		t.Errorf("evidence of seen = %v, want [e1]", got)
	}

	// Saving the same keys again changes nothing, not even the version.
	p2, err := db.SaveLearned(ctx, s, map[string]memento.ProfileEntry{
		"seen":            learned(`[ "t1" ]`, "e1"),
		"preferredGenres": learned(`[{"genre":"Crime","weight":1}]`, "e1"),
	})
	if err != nil {
		t.Fatalf("SaveLearned again: %v", err)
	}
	if p2.Version != 1 {
		t.Errorf("version after an identical save = %d, want 1", p2.Version)
	}

	// The user takes preferredGenres over; learners cannot change it.
	v := int64(1)
	p3, err := db.UpdateProfile(ctx, s, memento.ProfileUpdate{IfVersion: &v, Set: map[string]json.RawMessage{
		"preferredGenres": json.RawMessage(`[{"genre":"Comedy","weight":1}]`),
		"platform":        json.RawMessage(` "Netflix" `),
	}})
	if err != nil {
		t.Fatalf("UpdateProfile: %v", err)
	}
	if p3.Version != 2 {
		t.Errorf("version after the user's update = %d, want 2", p3.Version)
	}
	p4, err := db.SaveLearned(ctx, s, map[string]memento.ProfileEntry{
		"seen":            learned(`["t1","t2"]`, "e1", "e2"),
		"preferredGenres": learned(`[{"genre":"Horror","weight":1}]`, "e2"),
	})
	if err != nil {
		t.Fatalf("SaveLearned after the user's update: %v", err)
	}
	want := map[string]string{
		"seen":            `learned:["t1","t2"]`,
		"preferredGenres": `user:[{"genre":"Comedy","weight":1}]`,
		"platform":        `user:"Netflix"`,
	}
	if diff := cmp.Diff(want, values(p4)); diff != "" {
		t.Errorf("profile after learning (-want +got):\n%s", diff)
	}
	if p4.Version != 3 {
		t.Errorf("version = %d, want 3", p4.Version)
	}

	// A learned key the learners no longer produce goes; user keys stay.
	p5, err := db.SaveLearned(ctx, s, map[string]memento.ProfileEntry{})
	if err != nil {
		t.Fatalf("SaveLearned with no keys: %v", err)
	}
	want = map[string]string{
		"preferredGenres": `user:[{"genre":"Comedy","weight":1}]`,
		"platform":        `user:"Netflix"`,
	}
	if diff := cmp.Diff(want, values(p5)); diff != "" {
		t.Errorf("profile after learning nothing (-want +got):\n%s", diff)
	}
}

func TestUpdateProfile(t *testing.T) {
	ctx := context.Background()
	db := openClocked(t)
	s := memento.Scope{User: "bob"}
	if _, err := db.EnsureUser(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SaveLearned(ctx, s, map[string]memento.ProfileEntry{"seen": learned(`["t1"]`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateProfile(ctx, s, memento.ProfileUpdate{Set: map[string]json.RawMessage{
		"a": json.RawMessage(`1`), "b": json.RawMessage(`2`),
	}}); err != nil {
		t.Fatal(err)
	}

	t.Run("stale version", func(t *testing.T) {
		stale := int64(1)
		_, err := db.UpdateProfile(ctx, s, memento.ProfileUpdate{IfVersion: &stale, Set: map[string]json.RawMessage{"c": json.RawMessage(`3`)}})
		wantCode(t, err, memento.ECONFLICT)
		p, _ := db.Profile(ctx, s)
		if _, ok := p.Keys["c"]; ok || p.Version != 2 {
			t.Errorf("a stale update changed the profile: %+v", values(p))
		}
	})
	t.Run("replace", func(t *testing.T) {
		p, err := db.UpdateProfile(ctx, s, memento.ProfileUpdate{Replace: true, Set: map[string]json.RawMessage{"b": json.RawMessage(`20`)}})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"b": "user:20", "seen": `learned:["t1"]`}
		if diff := cmp.Diff(want, values(p)); diff != "" {
			t.Errorf("after replace (-want +got):\n%s", diff)
		}
	})
	t.Run("delete learned key", func(t *testing.T) {
		p, err := db.UpdateProfile(ctx, s, memento.ProfileUpdate{Delete: []string{"seen"}})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]string{"b": "user:20"}, values(p)); diff != "" {
			t.Errorf("after delete (-want +got):\n%s", diff)
		}
	})
	bad := []struct {
		name string
		u    memento.ProfileUpdate
		msg  string
	}{
		{"key name", memento.ProfileUpdate{Set: map[string]json.RawMessage{"1bad key": json.RawMessage(`1`)}},
			`profile key "1bad key" must start with a letter and hold at most 64 letters, digits, '_', '-' or '.'`},
		{"invalid JSON", memento.ProfileUpdate{Set: map[string]json.RawMessage{"k": json.RawMessage(`{`)}}, "profile key k: value is not valid JSON"},
		{"null", memento.ProfileUpdate{Set: map[string]json.RawMessage{"k": json.RawMessage(`null`)}}, "profile key k: value must not be null; delete the key instead"},
		{"set and delete", memento.ProfileUpdate{Set: map[string]json.RawMessage{"k": json.RawMessage(`1`)}, Delete: []string{"k"}}, "profile key k is both set and deleted"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := db.UpdateProfile(ctx, s, tt.u)
			wantCode(t, err, memento.EINVALID)
			if got := memento.ErrorMessage(err); got != tt.msg {
				t.Errorf("message = %q, want %q", got, tt.msg)
			}
		})
	}
}

func TestRestoreProfileAndDeleteUser(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{User: "cy"}
	at := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	in := &memento.Profile{Tenant: memento.DefaultTenant, User: "cy", Version: 7, UpdatedAt: at, Keys: map[string]memento.ProfileEntry{
		"seen":     {Value: json.RawMessage(`["t1"]`), Source: memento.ProfileLearned, Evidence: []string{"e1"}, UpdatedAt: at},
		"platform": {Value: json.RawMessage(`"Netflix"`), Source: memento.ProfileUser, Evidence: []string{}, UpdatedAt: at},
	}}
	if err := db.RestoreProfile(ctx, s, in); err != nil {
		t.Fatalf("RestoreProfile: %v", err)
	}
	got, err := db.Profile(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, got); diff != "" {
		t.Errorf("restored profile (-want +got):\n%s", diff)
	}
	if err := db.DeleteUser(ctx, s); err != nil {
		t.Fatal(err)
	}
	got, err = db.Profile(ctx, s)
	if err != nil || got.Version != 0 || len(got.Keys) != 0 {
		t.Errorf("profile after DeleteUser = %+v, %v; want empty", got, err)
	}
	bad := &memento.Profile{Keys: map[string]memento.ProfileEntry{"k": {Value: json.RawMessage(`1`), Source: "robot"}}}
	wantCode(t, db.RestoreProfile(ctx, s, bad), memento.EINVALID)
}

func TestProfileModels(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	if m, err := db.ProfileModel(ctx, "", "co"); err != nil || m != nil {
		t.Fatalf("ProfileModel before any save = %v, %v; want nil", m, err)
	}
	if v, err := db.ProfileModelVersion(ctx, "", "co"); err != nil || v != 0 {
		t.Fatalf("ProfileModelVersion before any save = %d, %v; want 0", v, err)
	}
	v1, err := db.SaveProfileModel(ctx, memento.ProfileModel{Name: "co", EventsMark: 3, Data: []byte("one")}, false)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := db.SaveProfileModel(ctx, memento.ProfileModel{Name: "co", EventsMark: 5, Data: []byte("two")}, false)
	if err != nil {
		t.Fatal(err)
	}
	if v1 != 1 || v2 != 2 {
		t.Errorf("versions = %d, %d; want 1, 2", v1, v2)
	}
	m, err := db.ProfileModel(ctx, memento.DefaultTenant, "co")
	if err != nil {
		t.Fatal(err)
	}
	want := &memento.ProfileModel{Tenant: memento.DefaultTenant, Name: "co", Version: 2, EventsMark: 5, Data: []byte("two")}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("model (-want +got):\n%s", diff)
	}
	if _, err := db.SaveProfileModel(ctx, memento.ProfileModel{Tenant: "t2", Name: "co", Version: 9, Data: []byte("x")}, true); err != nil {
		t.Fatal(err)
	}
	if v, _ := db.ProfileModelVersion(ctx, "t2", "co"); v != 9 {
		t.Errorf("kept version = %d, want 9", v)
	}
}

func TestEachUserEventsAndMark(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	add := func(user, id string, at time.Time) {
		t.Helper()
		if _, err := db.AddEvents(ctx, memento.Scope{User: user}, []memento.Event{{ID: id, Type: memento.EventWatched, TitleID: "t", At: at}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if m, _ := db.EventsMark(ctx, ""); m != 0 {
		t.Errorf("mark of an empty tenant = %d, want 0", m)
	}
	add("bob", "b2", base.Add(2*time.Hour))
	add("ann", "a1", base.Add(time.Hour))
	add("bob", "b1", base)
	if _, err := db.AddEvents(ctx, memento.Scope{Tenant: "other", User: "zed"}, []memento.Event{{ID: "z", Type: memento.EventLiked, TitleID: "t"}}, nil); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	var order []string
	mark, err := db.EachUserEvents(ctx, "", func(user string, events []memento.Event) error {
		order = append(order, user)
		for _, e := range events {
			got[user] = append(got[user], e.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string][]string{"ann": {"a1"}, "bob": {"b1", "b2"}}, got); diff != "" {
		t.Errorf("events by user (-want +got):\n%s", diff)
	}
	if !slices.Equal(order, []string{"ann", "bob"}) {
		t.Errorf("users in order %v, want [ann bob]", order)
	}
	now, _ := db.EventsMark(ctx, "")
	if mark != now || mark == 0 {
		t.Errorf("mark = %d, EventsMark = %d; want equal and positive", mark, now)
	}
	stop := errors.New("stop")
	if _, err := db.EachUserEvents(ctx, "", func(string, []memento.Event) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("EachUserEvents did not pass fn's error on: %v", err)
	}
}

// TestSaveLearnedReturnsWhatIsStored: the profile SaveLearned returns,
// worked out from what it read before the write, is the one a read
// returns afterwards, through new keys, unchanged ones, changed values
// and evidence, keys the user set and keys that go.
func TestSaveLearnedReturnsWhatIsStored(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{User: "ann"}
	if _, err := db.EnsureUser(ctx, s); err != nil {
		t.Fatal(err)
	}
	check := func(step string, got *memento.Profile) {
		t.Helper()
		stored, err := db.Profile(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(stored, got); diff != "" {
			t.Errorf("%s: SaveLearned returned another profile than the stored one (-stored +returned):\n%s", step, diff)
		}
	}
	for i, keys := range []map[string]memento.ProfileEntry{
		{"seen": learned(`[ "t1" ]`, "e1"), "era": learned(`"1990s"`)},
		{"seen": learned(`["t1"]`, "e1"), "era": learned(`"1990s"`)},
		{"seen": learned(`["t1","t2"]`, "e1", "e2"), "era": learned(`"1990s"`, "e2")},
		{"seen": learned(`["t1","t2"]`, "e1", "e2"), "platform": learned(`"Netflix"`)},
		{},
	} {
		if i == 3 {
			if _, err := db.UpdateProfile(ctx, s, memento.ProfileUpdate{Set: map[string]json.RawMessage{"platform": json.RawMessage(`"Mubi"`)}}); err != nil {
				t.Fatal(err)
			}
		}
		p, err := db.SaveLearned(ctx, s, keys)
		if err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("save %d", i), p)
	}
}

// TestSaveLearnedUnderConcurrentUserUpdates saves learned keys while the
// user sets one of them, at once, with -race: SaveLearned works out its
// changes from a read before its write, and a user's key set between the
// two must still stand (the write finds the profile moved on and works
// them out again).
func TestSaveLearnedUnderConcurrentUserUpdates(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{User: "ann"}
	if _, err := db.EnsureUser(ctx, s); err != nil {
		t.Fatal(err)
	}
	userSet := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 60 {
			_, err := db.UpdateProfile(ctx, s, memento.ProfileUpdate{Set: map[string]json.RawMessage{"mood": json.RawMessage(fmt.Sprintf(`"calm %d"`, i))}})
			if err != nil {
				t.Error(err)
				return
			}
			if i == 0 {
				close(userSet)
			}
		}
	})
	wg.Go(func() {
		for i := range 120 {
			after := false // the user's first set had ended
			select {
			case <-userSet:
				after = true
			default:
			}
			p, err := db.SaveLearned(ctx, s, map[string]memento.ProfileEntry{
				"mood": learned(`"restless"`, "e1"),
				"era":  learned(fmt.Sprintf(`"%d0s"`, 190+i%10), "e1"),
			})
			if err != nil {
				t.Error(err)
				return
			}
			if e, ok := p.Keys["mood"]; ok && e.Source == memento.ProfileLearned && after {
				t.Errorf("save %d overwrote the user's mood with the learned one", i)
				return
			}
		}
	})
	wg.Wait()
	p, err := db.Profile(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Keys["mood"]; got.Source != memento.ProfileUser || string(got.Value) != `"calm 59"` {
		t.Errorf("mood = %s by %s, want the user's last value", got.Value, got.Source)
	}
}

// TestSaveLearnedOverTheCallersRead checks that SaveLearnedOver works out
// its changes from the profile its caller read, not from a read of its
// own, when that profile is still the stored one by its version and
// update time; and from the stored profile when it is not.
func TestSaveLearnedOverTheCallersRead(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	if _, err := db.EnsureUser(ctx, s); err != nil {
		t.Fatal(err)
	}
	keys := map[string]memento.ProfileEntry{"era": learned(`"1990s"`, "e1")}
	first, err := db.SaveLearned(ctx, s, keys)
	if err != nil {
		t.Fatal(err)
	}
	// The same keys over the stored profile change nothing.
	same, err := db.SaveLearnedOver(ctx, s, keys, first)
	if err != nil {
		t.Fatal(err)
	}
	if same.Version != first.Version {
		t.Errorf("saving the stored keys again moved the version from %d to %d", first.Version, same.Version)
	}
	// A read that lacks the key, at the stored version and time: the
	// save plans over it, so it writes the key again.
	forged := &memento.Profile{Tenant: s.Tenant, User: s.User, Version: first.Version, UpdatedAt: first.UpdatedAt, Keys: map[string]memento.ProfileEntry{}}
	p, err := db.SaveLearnedOver(ctx, s, keys, forged)
	if err != nil {
		t.Fatal(err)
	}
	if p.Version != first.Version+1 {
		t.Errorf("the save over the caller's read gave version %d, want %d: it read the profile again", p.Version, first.Version+1)
	}
	// A read that is stale: the save works over the stored profile.
	stale := &memento.Profile{Tenant: s.Tenant, User: s.User, Version: first.Version, UpdatedAt: first.UpdatedAt, Keys: map[string]memento.ProfileEntry{}}
	q, err := db.SaveLearnedOver(ctx, s, keys, stale)
	if err != nil {
		t.Fatal(err)
	}
	if q.Version != p.Version {
		t.Errorf("a save over a stale read moved the version from %d to %d, though the stored keys are those saved", p.Version, q.Version)
	}
	stored, err := db.Profile(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(stored, q); diff != "" {
		t.Errorf("SaveLearnedOver returned another profile than the stored one (-stored +returned):\n%s", diff)
	}
}
