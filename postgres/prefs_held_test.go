package postgres_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/postgres"
	"github.com/memento-ai/memento/prefs"
)

// fullPrefs hides a store's PreferencesSince: a service over it groups
// every preference from scratch.
type fullPrefs struct{ memento.PreferenceService }

// TestClusteringAcrossProcesses changes two users' preferences through
// two stores on one database, as two `memento serve` processes do, and
// clusters after each change through the same process's service, each
// holding its own copy of the users' preferences. Each service must pick
// up the other's writes from the versions: at the end both find the
// clusters a clustering from scratch finds, and no full read finds a
// mismatch.
func TestClusteringAcrossProcesses(t *testing.T) {
	a, b := openPair(t)
	ctx := t.Context()
	model, embedder := offline.New(offline.Options{}), offline.NewEmbedder(0)
	// One clock for both: the members of a cluster are ordered by their
	// weights, decayed to the clustering's time.
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	newService := func(st memento.PreferenceService) *prefs.Service {
		return &prefs.Service{Store: st, Model: model, Embedder: embedder, ClusterFullEvery: 4, Clock: fixedClock(at)}
	}
	services := []*prefs.Service{newService(a), newService(b)}
	concepts := []string{"romantic comedies", "romance novels", "heist films", "crime thrillers", "crime dramas",
		"quiet keyboards", "clicky keyboards", "cilantro", "jazz", "anime"}
	users := []memento.Scope{{Tenant: memento.DefaultTenant, User: "ann"}, {Tenant: memento.DefaultTenant, User: "bob"}}
	var wg sync.WaitGroup
	for p, svc := range services {
		wg.Go(func() {
			for i := range 12 {
				s := users[i%2]
				c := memento.Concept{Concept: concepts[(3*p+i)%len(concepts)], Sign: 1 - 2*(i%3/2), Strength: 0.7, Kind: memento.KindTaste}
				if _, err := svc.Learn(ctx, s, fmt.Sprintf("p%d-%d", p, i), at, []memento.Concept{c}); err != nil {
					t.Error(err)
					return
				}
				if err := svc.Recluster(ctx, s); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	full := newService(fullPrefs{a})
	view := func(svc *prefs.Service, s memento.Scope) []string {
		t.Helper()
		cs, err := svc.Clusters(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range cs {
			var ms []string
			for _, m := range c.Members {
				ms = append(ms, m.Concept+"/"+m.Stance)
			}
			out = append(out, c.ID+" "+c.Description+" "+strings.Join(ms, ","))
		}
		slices.Sort(out)
		return out
	}
	for _, s := range users {
		var want []string
		for i, svc := range append(slices.Clone(services), full) {
			if err := svc.Recluster(ctx, s); err != nil {
				t.Fatal(err)
			}
			got := view(svc, s)
			if i == 0 {
				want = got
				continue
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: clusters after service %d differ from service 0's (-0 +%d):\n%s", s.User, i, i, diff)
			}
		}
		if len(want) == 0 {
			t.Errorf("%s: no clusters; the test clusters nothing", s.User)
		}
	}
	for p, svc := range services {
		if st := svc.ClusterStats(); st.Mismatches != 0 || st.IncrementalReads == 0 {
			t.Errorf("process %d: %+v; want incremental clusterings and no mismatch", p, st)
		}
	}
}

// fixedClock is a memento.Clock that always says the same time.
type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }

// TestPreferencesSinceLoadedRows reads preferences loaded in bulk, which
// carry version 0 as rows written before the version column do: a
// negative version reads them, 0 does not, and a write after them is read
// alone from 0.
func TestPreferencesSinceLoadedRows(t *testing.T) {
	db, _ := openSchema(t, postgres.Options{})
	ctx := t.Context()
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	err := db.Bulk(ctx, func(b *postgres.Bulk) error {
		if err := b.User(s); err != nil {
			return err
		}
		for i := range 3 {
			if err := b.Preference(s, memento.Preference{ID: fmt.Sprint("pref_loaded", i), Concept: fmt.Sprint("concept ", i), Weight: 1,
				Kind: memento.KindTaste, Evidence: 1, FirstSeen: at, LastSeen: at, Embedder: "e", Vector: []float32{1, 0}}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	read := func(version int64) *memento.PreferencesRead {
		t.Helper()
		r, err := db.PreferencesSince(ctx, s, version)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := read(-1); len(r.Changed) != 3 || r.Total != 3 {
		t.Errorf("PreferencesSince(-1) over loaded rows: %d rows of %d; want all 3", len(r.Changed), r.Total)
	}
	if r := read(0); len(r.Changed) != 0 || r.Total != 3 {
		t.Errorf("PreferencesSince(0) over loaded rows: %d rows of %d; want none of 3", len(r.Changed), r.Total)
	}
	_, err = db.WritePreferences(ctx, s, memento.PreferenceWrite{Source: "m1", Embedder: "e", Merge: func([]memento.Preference) (memento.PreferenceChanges, error) {
		return memento.PreferenceChanges{Insert: []memento.Preference{{Concept: "new", Weight: 1, Kind: memento.KindTaste, Evidence: 1,
			FirstSeen: at, LastSeen: at, Embedder: "e", Vector: []float32{0, 1}}}}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if r := read(0); len(r.Changed) != 1 || r.Changed[0].Concept != "new" || r.Total != 4 {
		t.Errorf("PreferencesSince(0) after a write: %+v of %d; want only the new one of 4", r.Changed, r.Total)
	}
}
