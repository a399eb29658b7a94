package storetest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
)

// PreferenceReader is a store that reads the preferences a user changed
// after a version, for incremental clustering (prefs.PreferencesSince).
type PreferenceReader interface {
	// PreferencesSince returns, in one snapshot, the user's version
	// counters, the number of their preferences and those written after
	// version (all of them for a negative version).
	PreferencesSince(ctx context.Context, s memento.Scope, version int64) (*memento.PreferencesRead, error)
}

// testPreferencesSince brings a reader's copy of a user's preferences up
// to date from versions, through inserts, updates, a batch, a patch, a
// deletion, saved clusters, a restore and the user forgotten and created
// again, and checks after each step that the copy is what a full read
// returns: only the changed rows come back, and the count tells a
// deletion.
func testPreferencesSince(t *testing.T, open Opener) {
	st := open(t)
	pr, ok := st.(PreferenceReader)
	ps, ok2 := st.(memento.PreferenceService)
	if !ok || !ok2 {
		t.Skip("the store does not implement storetest.PreferenceReader (PreferencesSince)")
	}
	ctx := t.Context()

	got, err := pr.PreferencesSince(ctx, ann, -1)
	if err != nil || !got.Version.Since.IsZero() || got.Total != 0 || len(got.Changed) != 0 {
		t.Fatalf("PreferencesSince of a user that does not exist = %+v, %v; want a zero read", got, err)
	}

	insert := func(concepts ...string) memento.PreferenceMerge {
		return func([]memento.Preference) (memento.PreferenceChanges, error) {
			var ch memento.PreferenceChanges
			for i, c := range concepts {
				at := t0.Add(time.Duration(len(c)+i) * time.Minute)
				ch.Insert = append(ch.Insert, memento.Preference{Concept: c, Weight: 1, Kind: memento.KindTaste, Evidence: 1,
					Sources: []string{"m-" + c}, FirstSeen: at, LastSeen: at, Embedder: "e", Vector: []float32{float32(len(c)), 1}})
			}
			return ch, nil
		}
	}
	reweigh := func(concept string, weight float64) memento.PreferenceMerge {
		return func(cur []memento.Preference) (memento.PreferenceChanges, error) {
			for _, p := range cur {
				if p.Concept == concept {
					p.Weight, p.Evidence = weight, p.Evidence+1
					return memento.PreferenceChanges{Update: []memento.Preference{p}}, nil
				}
			}
			t.Errorf("no preference %q to reweigh", concept)
			return memento.PreferenceChanges{}, nil
		}
	}
	write := func(s memento.Scope, ws ...memento.PreferenceWrite) {
		t.Helper()
		if _, err := ps.WritePreferenceBatch(ctx, s, ws); err != nil {
			t.Fatalf("WritePreferenceBatch: %v", err)
		}
	}

	// held is the reader's copy: the rows by id as of version.
	held := map[string]memento.Preference{}
	version := int64(-1) // nothing held: read every row
	var since time.Time
	// catchUp reads from the held version and applies the read as an
	// incremental clustering does; it returns what came back and whether
	// the count showed a deletion (the copy is then read again in full).
	catchUp := func(step string) (changed []string, deleted bool) {
		t.Helper()
		read, err := pr.PreferencesSince(ctx, ann, version)
		if err != nil {
			t.Fatalf("%s: PreferencesSince(%d): %v", step, version, err)
		}
		if !read.Version.Since.Equal(since) {
			clear(held)
			if read, err = pr.PreferencesSince(ctx, ann, -1); err != nil {
				t.Fatalf("%s: PreferencesSince(-1): %v", step, err)
			}
		}
		for _, p := range read.Changed {
			if p.Cluster != nil {
				t.Errorf("%s: PreferencesSince returned %s with cluster %s; want none", step, p.ID, *p.Cluster)
			}
			changed = append(changed, p.Concept)
			held[p.ID] = p
		}
		if len(held) != read.Total {
			deleted = true
			clear(held)
			full, err := pr.PreferencesSince(ctx, ann, -1)
			if err != nil {
				t.Fatalf("%s: PreferencesSince(-1): %v", step, err)
			}
			for _, p := range full.Changed {
				held[p.ID] = p
			}
			read = full
		}
		version, since = read.Version.Version, read.Version.Since
		want, err := ps.Preferences(ctx, ann)
		if err != nil {
			t.Fatalf("%s: Preferences: %v", step, err)
		}
		for i := range want {
			want[i].Cluster = nil
		}
		have := make([]memento.Preference, 0, len(held))
		for _, p := range held {
			have = append(have, p)
		}
		slices.SortFunc(have, func(a, b memento.Preference) int {
			if c := a.FirstSeen.Compare(b.FirstSeen); c != 0 {
				return c
			}
			return strings.Compare(a.ID, b.ID)
		})
		if diff := cmp.Diff(want, have); diff != "" {
			t.Errorf("%s: the reader's copy differs from a full read (-full +copy):\n%s", step, diff)
		}
		slices.Sort(changed)
		return changed, deleted
	}
	check := func(step string, wantChanged []string, wantDeleted bool) {
		t.Helper()
		changed, deleted := catchUp(step)
		if !slices.Equal(changed, wantChanged) || deleted != wantDeleted {
			t.Errorf("%s: read %v (deletion seen: %v); want %v (%v)", step, changed, deleted, wantChanged, wantDeleted)
		}
	}

	write(ann, memento.PreferenceWrite{Source: "m1", Embedder: "e", Merge: insert("heist")})
	write(ann, memento.PreferenceWrite{Source: "m2", Embedder: "e", Merge: insert("horror", "noir")})
	check("first read", []string{"heist", "horror", "noir"}, false)
	if version != 2 || since.IsZero() {
		t.Errorf("after two writes the read's version is %d, created %v; want 2 and the user's creation", version, since)
	}
	check("nothing new", nil, false)

	write(bob, memento.PreferenceWrite{Source: "b1", Embedder: "e", Merge: insert("westerns")})
	check("another user's write", nil, false)

	write(ann, memento.PreferenceWrite{Source: "m3", Embedder: "e", Merge: reweigh("heist", 2)})
	check("an update", []string{"heist"}, false)

	write(ann, memento.PreferenceWrite{Source: "m4", Embedder: "e", Merge: insert("musicals")},
		memento.PreferenceWrite{Source: "m5", Embedder: "e", Merge: reweigh("horror", -1)},
		memento.PreferenceWrite{Source: "m1", Embedder: "e", Merge: insert("applied before")})
	check("a batch", []string{"horror", "musicals"}, false)

	all, err := ps.Preferences(ctx, ann)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, p := range all {
		ids[p.Concept] = p.ID
	}
	w := 1.5
	if _, err := ps.PatchPreference(ctx, ann, ids["noir"], memento.PreferencePatch{Weight: &w, At: t0}); err != nil {
		t.Fatalf("PatchPreference: %v", err)
	}
	check("a patch", []string{"noir"}, false)

	if err := ps.SavePreferenceClusters(ctx, ann, version, []memento.PreferenceCluster{{ID: "c1", Description: "crime",
		Members: []memento.PreferenceClusterMember{{Preference: ids["heist"], Stance: memento.StanceSupport}}}}); err != nil {
		t.Fatalf("SavePreferenceClusters: %v", err)
	}
	check("saved clusters", nil, false)

	if err := ps.DeletePreference(ctx, ann, ids["musicals"]); err != nil {
		t.Fatalf("DeletePreference: %v", err)
	}
	check("a deletion", nil, true)

	// A deletion hidden behind an insert keeps the count but not the ids.
	if err := ps.DeletePreference(ctx, ann, ids["horror"]); err != nil {
		t.Fatalf("DeletePreference: %v", err)
	}
	write(ann, memento.PreferenceWrite{Source: "m6", Embedder: "e", Merge: insert("anime")})
	check("a deletion and an insert", []string{"anime"}, true)

	restored := []memento.Preference{all[0], all[1]}
	restored[0].Weight = -0.5
	if err := ps.RestorePreferences(ctx, ann, restored, []string{"m1"}); err != nil {
		t.Fatalf("RestorePreferences: %v", err)
	}
	check("a restore", sorted([]string{all[0].Concept, all[1].Concept}), true)

	if us, ok := st.(memento.UserService); ok {
		if err := us.DeleteUser(ctx, ann); err != nil {
			t.Fatalf("DeleteUser: %v", err)
		}
		read, err := pr.PreferencesSince(ctx, ann, version)
		if err != nil || !read.Version.Since.IsZero() || read.Total != 0 {
			t.Errorf("PreferencesSince of a forgotten user = %+v, %v; want a zero read", read, err)
		}
		time.Sleep(time.Millisecond) // another creation time
		write(ann, memento.PreferenceWrite{Source: "n1", Embedder: "e", Merge: insert("documentaries")})
		check("the user created again", []string{"documentaries"}, false)
	}
}
