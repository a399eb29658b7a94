package sqlite_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// insertPrefs returns a merge that adds the given preferences.
func insertPrefs(ps ...memento.Preference) memento.PreferenceMerge {
	return func([]memento.Preference) (memento.PreferenceChanges, error) {
		return memento.PreferenceChanges{Insert: ps}, nil
	}
}

func testPref(concept string, weight float64, at time.Time) memento.Preference {
	return memento.Preference{
		Concept: concept, Weight: weight, Kind: memento.KindTaste, Evidence: 1, Sources: []string{"m1"},
		FirstSeen: at, LastSeen: at, Embedder: "e/v1/3", Vector: []float32{0.6, -0.8, 0},
	}
}

// clusterJobs counts the clustering jobs of the store: they wait in the
// user's backlog (or are River jobs, once a batch handed them over), and
// the job counts hold both.
func clusterJobs(t *testing.T, db *sqlite.DB) int {
	t.Helper()
	stats, err := db.JobStats(context.Background())
	if err != nil {
		t.Fatalf("JobStats: %v", err)
	}
	for _, k := range stats.Kinds {
		if k.Kind == memento.JobPreferenceClusters {
			return k.Pending + k.Running + k.Retrying + k.Completed + k.Failed
		}
	}
	return 0
}

func TestWritePreferencesOncePerSource(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{User: "ann"}
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	res, err := db.WritePreferences(ctx, s, memento.PreferenceWrite{Source: "m1", Embedder: "e/v1/3", Merge: insertPrefs(testPref("heist", 0.7, at))})
	if err != nil {
		t.Fatalf("WritePreferences: %v", err)
	}
	if !res.Applied || len(res.Inserted) != 1 || res.Inserted[0].ID == "" {
		t.Fatalf("first write = %+v, want one applied insert with an id", res)
	}
	calls := 0
	res, err = db.WritePreferences(ctx, s, memento.PreferenceWrite{Source: "m1", Embedder: "e/v1/3", Merge: func(c []memento.Preference) (memento.PreferenceChanges, error) {
		calls++
		return insertPrefs(testPref("heist", 0.7, at))(c)
	}})
	if err != nil {
		t.Fatalf("WritePreferences again: %v", err)
	}
	if res.Applied || calls != 0 {
		t.Errorf("second write of source m1: applied %v, merge called %d times; want neither", res.Applied, calls)
	}
	got, err := db.Preferences(ctx, s)
	if err != nil {
		t.Fatalf("Preferences: %v", err)
	}
	want := testPref("heist", 0.7, at)
	want.ID = got[0].ID
	if diff := cmp.Diff([]memento.Preference{want}, got); diff != "" {
		t.Errorf("preferences (-want +got):\n%s", diff)
	}
}

func TestWritePreferencesMergeSeesItsEmbedder(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{User: "ann"}
	now := time.Now().UTC().Truncate(time.Second)
	a := testPref("heist", 0.7, now)
	b := testPref("horror", -0.7, now)
	b.Embedder = "other/v1/3"
	for i, p := range []memento.Preference{a, b} {
		if _, err := db.WritePreferences(ctx, s, memento.PreferenceWrite{Source: []string{"m1", "m2"}[i], Embedder: p.Embedder, Merge: insertPrefs(p)}); err != nil {
			t.Fatalf("WritePreferences: %v", err)
		}
	}
	var seen []string
	_, err := db.WritePreferences(ctx, s, memento.PreferenceWrite{Source: "m3", Embedder: "e/v1/3", Merge: func(cur []memento.Preference) (memento.PreferenceChanges, error) {
		for _, p := range cur {
			seen = append(seen, p.Concept)
		}
		p := cur[0]
		p.Weight, p.Evidence, p.Sources = 1.2, 2, append(p.Sources, "m3")
		return memento.PreferenceChanges{Update: []memento.Preference{p}}, nil
	}})
	if err != nil {
		t.Fatalf("WritePreferences update: %v", err)
	}
	if diff := cmp.Diff([]string{"heist"}, seen); diff != "" {
		t.Errorf("merge saw (-want +got):\n%s", diff)
	}
	got, err := db.Preferences(ctx, s)
	if err != nil {
		t.Fatalf("Preferences: %v", err)
	}
	if len(got) != 2 {
		t.Fatalf("after update: %+v, want two preferences", got)
	}
	for _, p := range got {
		if p.Concept == "heist" && (p.Weight != 1.2 || p.Evidence != 2 || !cmp.Equal(p.Sources, []string{"m1", "m3"})) {
			t.Errorf("updated preference = %+v", p)
		}
	}
}

func TestWritePreferencesValidates(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{User: "ann"}
	now := time.Now()
	bad := map[string]memento.Preference{
		"kind":   func() memento.Preference { p := testPref("x", 1, now); p.Kind = "mood"; return p }(),
		"empty":  testPref(" ", 1, now),
		"vector": func() memento.Preference { p := testPref("x", 1, now); p.Vector = nil; return p }(),
	}
	for name, p := range bad {
		t.Run(name, func(t *testing.T) {
			_, err := db.WritePreferences(ctx, s, memento.PreferenceWrite{Source: name, Embedder: p.Embedder, Merge: insertPrefs(p)})
			if code := memento.ErrorCode(err); code != memento.EINVALID {
				t.Errorf("error %v has code %q, want EINVALID", err, code)
			}
		})
	}
	// A failed write leaves its source unapplied.
	res, err := db.WritePreferences(ctx, s, memento.PreferenceWrite{Source: "kind", Embedder: "e/v1/3", Merge: insertPrefs(testPref("x", 1, now))})
	if err != nil || !res.Applied {
		t.Errorf("retrying a failed source: %+v, %v; want applied", res, err)
	}
	if _, err := db.WritePreferences(ctx, s, memento.PreferenceWrite{Source: "m"}); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("write without merge: %v, want EINVALID", err)
	}
}

// TestPreferenceClusteringIsDebounced checks that a burst of changes
// enqueues one clustering job, and that saving clusters computed from an
// old version asks for another.
func TestPreferenceClusteringIsDebounced(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{User: "ann"}
	now := time.Now()
	write := func(source, concept string) {
		t.Helper()
		if _, err := db.WritePreferences(ctx, s, memento.PreferenceWrite{Source: source, Embedder: "e/v1/3", Merge: insertPrefs(testPref(concept, 1, now))}); err != nil {
			t.Fatalf("WritePreferences: %v", err)
		}
	}
	nothing := func([]memento.Preference) (memento.PreferenceChanges, error) { return memento.PreferenceChanges{}, nil }
	if _, err := db.WritePreferences(ctx, s, memento.PreferenceWrite{Source: "m0", Embedder: "e/v1/3", Merge: nothing}); err != nil {
		t.Fatalf("WritePreferences: %v", err)
	}
	if n := clusterJobs(t, db); n != 0 {
		t.Fatalf("a write that changes nothing enqueued %d clustering jobs", n)
	}
	for i, c := range []string{"heist", "crime", "horror"} {
		write("m"+string(rune('1'+i)), c)
	}
	v, err := db.PreferenceVersion(ctx, s)
	if err != nil {
		t.Fatalf("PreferenceVersion: %v", err)
	}
	if v.Version != 3 || v.Clustered != 0 || clusterJobs(t, db) != 1 {
		t.Fatalf("after three writes: version %+v, %d clustering jobs; want version 3 and one job", v, clusterJobs(t, db))
	}
	if err := db.SavePreferenceClusters(ctx, s, 2, nil); err != nil {
		t.Fatalf("SavePreferenceClusters: %v", err)
	}
	if n := clusterJobs(t, db); n != 2 {
		t.Errorf("saving clusters of version 2 of 3 left %d clustering jobs, want 2 (one more)", n)
	}
	if err := db.SavePreferenceClusters(ctx, s, 3, nil); err != nil {
		t.Fatalf("SavePreferenceClusters: %v", err)
	}
	if v, _ := db.PreferenceVersion(ctx, s); v.Version != 3 || v.Clustered != 3 {
		t.Errorf("version after clustering = %+v", v)
	}
	write("m9", "westerns")
	if n := clusterJobs(t, db); n != 3 {
		t.Errorf("a change after clustering finished left %d clustering jobs, want 3", n)
	}
}

func TestPreferenceClusters(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{User: "ann"}
	now := time.Now()
	res, err := db.WritePreferences(ctx, s, memento.PreferenceWrite{Source: "m1", Embedder: "e/v1/3", Merge: insertPrefs(
		testPref("heist", 1, now), testPref("crime", 0.5, now), testPref("horror", -1, now), testPref("westerns", 0.3, now))})
	if err != nil {
		t.Fatalf("WritePreferences: %v", err)
	}
	id := func(i int) string { return res.Inserted[i].ID }
	clusters := []memento.PreferenceCluster{
		{ID: "pcl_a", Description: "prefers heist and crime; dislikes horror", Signature: "sig", Members: []memento.PreferenceClusterMember{
			{Preference: id(0), Stance: memento.StanceSupport}, {Preference: id(2), Stance: memento.StanceOppose},
			{Preference: id(1), Stance: memento.StanceSupport}, {Preference: "pref_gone", Stance: memento.StanceSupport}}},
		{ID: "pcl_b", Description: "all gone", Members: []memento.PreferenceClusterMember{{Preference: "pref_gone", Stance: memento.StanceSupport}}},
	}
	if err := db.SavePreferenceClusters(ctx, s, 1, clusters); err != nil {
		t.Fatalf("SavePreferenceClusters: %v", err)
	}
	got, err := db.PreferenceClusters(ctx, s)
	if err != nil {
		t.Fatalf("PreferenceClusters: %v", err)
	}
	want := []memento.PreferenceCluster{{ID: "pcl_a", Description: "prefers heist and crime; dislikes horror", Signature: "sig", Version: 1,
		Members: []memento.PreferenceClusterMember{
			{Preference: id(0), Concept: "heist", Stance: memento.StanceSupport},
			{Preference: id(2), Concept: "horror", Stance: memento.StanceOppose},
			{Preference: id(1), Concept: "crime", Stance: memento.StanceSupport}}}}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(memento.PreferenceCluster{}, "CreatedAt")); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
	prefs, err := db.Preferences(ctx, s)
	if err != nil {
		t.Fatalf("Preferences: %v", err)
	}
	var inCluster []string
	for _, p := range prefs {
		if p.Cluster != nil && *p.Cluster == "pcl_a" {
			inCluster = append(inCluster, p.Concept)
		} else if p.Cluster != nil {
			t.Errorf("%s is in cluster %q", p.Concept, *p.Cluster)
		}
	}
	if diff := cmp.Diff([]string{"crime", "heist", "horror"}, inCluster, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("members by the preferences' cluster field (-want +got):\n%s", diff)
	}

	// Deleting members updates the cluster; deleting the last removes it.
	for _, i := range []int{0, 1} {
		if err := db.DeletePreference(ctx, s, id(i)); err != nil {
			t.Fatalf("DeletePreference: %v", err)
		}
	}
	got, _ = db.PreferenceClusters(ctx, s)
	if len(got) != 1 || len(got[0].Members) != 1 || got[0].Members[0].Concept != "horror" {
		t.Errorf("after deleting two members: %+v", got)
	}
	if err := db.DeletePreference(ctx, s, id(2)); err != nil {
		t.Fatalf("DeletePreference: %v", err)
	}
	if got, _ = db.PreferenceClusters(ctx, s); len(got) != 0 {
		t.Errorf("a cluster without members is still listed: %+v", got)
	}
	if err := db.DeletePreference(ctx, s, id(2)); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("deleting twice: %v, want ENOTFOUND", err)
	}
	bad := []memento.PreferenceCluster{{ID: "x", Members: []memento.PreferenceClusterMember{{Preference: id(3), Stance: "neutral"}}}}
	if err := db.SavePreferenceClusters(ctx, s, 1, bad); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("bad stance: %v, want EINVALID", err)
	}
	if err := db.SavePreferenceClusters(ctx, memento.Scope{User: "nobody"}, 1, nil); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("unknown user: %v, want ENOTFOUND", err)
	}
}

func TestPatchPreference(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{User: "ann"}
	then := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	res, err := db.WritePreferences(ctx, s, memento.PreferenceWrite{Source: "m1", Embedder: "e/v1/3", Merge: insertPrefs(testPref("heist", 0.7, then))})
	if err != nil {
		t.Fatalf("WritePreferences: %v", err)
	}
	id := res.Inserted[0].ID
	later := then.Add(48 * time.Hour)
	w := -0.5
	concept := "heist comedies"
	got, err := db.PatchPreference(ctx, s, id, memento.PreferencePatch{Weight: &w, At: later, Concept: &concept, Vector: []float32{1, 0, 0}, Embedder: "e/v1/3"})
	if err != nil {
		t.Fatalf("PatchPreference: %v", err)
	}
	if got.Weight != w || !got.LastSeen.Equal(later) || got.Concept != concept || !cmp.Equal(got.Vector, []float32{1, 0, 0}) || !got.FirstSeen.Equal(then) {
		t.Errorf("patched = %+v", got)
	}
	list, _ := db.Preferences(ctx, s)
	if diff := cmp.Diff([]memento.Preference{*got}, list); diff != "" {
		t.Errorf("stored (-patched +listed):\n%s", diff)
	}
	if _, err := db.PatchPreference(ctx, s, "pref_nope", memento.PreferencePatch{Weight: &w}); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("unknown id: %v, want ENOTFOUND", err)
	}
	empty := ""
	if _, err := db.PatchPreference(ctx, s, id, memento.PreferencePatch{Concept: &empty, Vector: []float32{1}, Embedder: "e"}); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("empty concept: %v, want EINVALID", err)
	}
	if v, _ := db.PreferenceVersion(ctx, s); v.Version != 2 {
		t.Errorf("version after a patch = %d, want 2", v.Version)
	}
}

func TestDeleteUserForgetsPreferences(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{User: "ann"}
	res, err := db.WritePreferences(ctx, s, memento.PreferenceWrite{Source: "m1", Embedder: "e/v1/3", Merge: insertPrefs(testPref("heist", 1, time.Now()))})
	if err != nil {
		t.Fatalf("WritePreferences: %v", err)
	}
	if err := db.SavePreferenceClusters(ctx, s, 1, []memento.PreferenceCluster{{ID: "c", Description: "d",
		Members: []memento.PreferenceClusterMember{{Preference: res.Inserted[0].ID, Stance: memento.StanceSupport}}}}); err != nil {
		t.Fatalf("SavePreferenceClusters: %v", err)
	}
	if err := db.DeleteUser(ctx, s); err != nil {
		t.Fatalf("DeleteUser: %v", err)
	}
	prefs, _ := db.Preferences(ctx, s)
	clusters, _ := db.PreferenceClusters(ctx, s)
	v, _ := db.PreferenceVersion(ctx, s)
	if len(prefs) != 0 || len(clusters) != 0 || v != (memento.PreferenceVersion{}) || clusterJobs(t, db) != 0 {
		t.Errorf("after DeleteUser: %d preferences, %d clusters, version %+v, %d jobs", len(prefs), len(clusters), v, clusterJobs(t, db))
	}
	// The same source applies again for a new user of the same id.
	res, err = db.WritePreferences(ctx, s, memento.PreferenceWrite{Source: "m1", Embedder: "e/v1/3", Merge: insertPrefs(testPref("heist", 1, time.Now()))})
	if err != nil || !res.Applied {
		t.Errorf("source of a forgotten user: %+v, %v", res, err)
	}
}

// prefClock is a settable memento.Clock.
type prefClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *prefClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *prefClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestStalePendingClusteringIsRequestedAgain checks that a clustering job
// that never finished (out of attempts) does not stop clustering forever.
func TestStalePendingClusteringIsRequestedAgain(t *testing.T) {
	ctx := context.Background()
	clk := &prefClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	opts := sqlitetest.Options()
	opts.Clock = clk
	db := sqlitetest.OpenWith(t, opts)
	s := memento.Scope{User: "ann"}
	write := func(source string) {
		t.Helper()
		if _, err := db.WritePreferences(ctx, s, memento.PreferenceWrite{Source: source, Embedder: "e/v1/3", Merge: insertPrefs(testPref(source, 1, clk.Now()))}); err != nil {
			t.Fatalf("WritePreferences: %v", err)
		}
	}
	write("m1")
	clk.add(time.Minute)
	write("m2")
	if n := clusterJobs(t, db); n != 1 {
		t.Fatalf("%d clustering jobs, want 1", n)
	}
	clk.add(time.Hour)
	write("m3")
	if n := clusterJobs(t, db); n != 2 {
		t.Errorf("after the pending job went stale: %d clustering jobs, want 2", n)
	}
}

// TestPreferenceWritesSeeEditsBetweenThem checks the store's cache of the
// preferences a write leaves: a write after an edit (or a deletion) of
// the user's preferences, made at the very same instant by a fixed clock,
// sees the edited rows, not the cached ones.
func TestPreferenceWritesSeeEditsBetweenThem(t *testing.T) {
	ctx := context.Background()
	clk := &prefClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	opts := sqlitetest.Options()
	opts.Clock = clk
	db := sqlitetest.OpenWith(t, opts)
	s := memento.Scope{User: "ann"}
	var saw []string
	see := func(current []memento.Preference) (memento.PreferenceChanges, error) {
		var parts []string
		for _, p := range current {
			parts = append(parts, fmt.Sprintf("%s:%g", p.Concept, p.Weight))
		}
		slices.Sort(parts)
		saw = append(saw, strings.Join(parts, ","))
		return memento.PreferenceChanges{}, nil
	}
	write := func(source string, merge memento.PreferenceMerge) {
		t.Helper()
		if _, err := db.WritePreferences(ctx, s, memento.PreferenceWrite{Source: source, Embedder: "e/v1/3", Merge: merge}); err != nil {
			t.Fatalf("WritePreferences: %v", err)
		}
	}
	write("m1", insertPrefs(testPref("heist", 1, clk.Now()), testPref("horror", -1, clk.Now())))
	write("m2", see)
	prefs, err := db.Preferences(ctx, s)
	if err != nil || len(prefs) != 2 {
		t.Fatalf("Preferences = %+v, %v", prefs, err)
	}
	id := map[string]string{}
	for _, p := range prefs {
		id[p.Concept] = p.ID
	}
	half := 0.5
	if _, err := db.PatchPreference(ctx, s, id["heist"], memento.PreferencePatch{Weight: &half, At: clk.Now()}); err != nil {
		t.Fatalf("PatchPreference: %v", err)
	}
	write("m3", see)
	if err := db.DeletePreference(ctx, s, id["horror"]); err != nil {
		t.Fatalf("DeletePreference: %v", err)
	}
	write("m4", see)
	if diff := cmp.Diff([]string{"heist:1,horror:-1", "heist:0.5,horror:-1", "heist:0.5"}, saw); diff != "" {
		t.Errorf("what the merges saw (-want +got):\n%s", diff)
	}
}

// TestPreferenceWritesSeeTheStoredRows: each write's merge sees the user's
// preferences as stored, whatever the previous write left in the store's
// cache: after the user was forgotten and created again (its version
// starts over at the cached one), after a restore, and after a deletion.
func TestPreferenceWritesSeeTheStoredRows(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	at := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	// write inserts concept and returns the concepts its merge saw.
	write := func(source, concept string) []string {
		t.Helper()
		var saw []string
		_, err := db.WritePreferences(ctx, s, memento.PreferenceWrite{Source: source, Embedder: "e/v1/3",
			Merge: func(cur []memento.Preference) (memento.PreferenceChanges, error) {
				saw = saw[:0]
				for _, p := range cur {
					saw = append(saw, p.Concept)
				}
				slices.Sort(saw)
				if concept == "" {
					return memento.PreferenceChanges{}, nil
				}
				return memento.PreferenceChanges{Insert: []memento.Preference{testPref(concept, 0.5, at)}}, nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		return saw
	}
	check := func(when string, got []string, want ...string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s: the merge saw %q, want %q", when, got, want)
		}
	}
	check("first write", write("m1", "heist"))
	check("second write", write("m2", "noir"), "heist")
	// Forgotten, then created again by a restore and changed by a
	// deletion, which bring the version back to the one the cache holds
	// without a write.
	if err := db.DeleteUser(ctx, s); err != nil {
		t.Fatal(err)
	}
	var restored []memento.Preference
	for i, c := range []string{"musical", "western"} {
		p := testPref(c, 0.4, at)
		p.ID = fmt.Sprintf("pref_restored%d", i)
		restored = append(restored, p)
	}
	if err := db.RestorePreferences(ctx, s, restored, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.DeletePreference(ctx, s, "pref_restored1"); err != nil {
		t.Fatal(err)
	}
	check("first write of the user created again", write("n1", "anime"), "musical")
	check("next write", write("n2", ""), "anime", "musical")
	// A restore and a deletion of the same user.
	if err := db.RestorePreferences(ctx, s, restored, nil); err != nil {
		t.Fatal(err)
	}
	check("after a restore", write("n3", ""), "musical", "western")
	if err := db.DeletePreference(ctx, s, "pref_restored0"); err != nil {
		t.Fatal(err)
	}
	check("after a deletion", write("n4", ""), "western")
}
