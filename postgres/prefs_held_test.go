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
	newService := func(st memento.PreferenceService) *prefs.Service {
		return &prefs.Service{Store: st, Model: model, Embedder: embedder, ClusterFullEvery: 4}
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
				if _, err := svc.Learn(ctx, s, fmt.Sprintf("p%d-%d", p, i), time.Now(), []memento.Concept{c}); err != nil {
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
