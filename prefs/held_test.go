package prefs_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/prefs"
	"github.com/memento-ai/memento/sqlite"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// fullOnly hides a store's PreferencesSince, so a service over it groups
// every preference from scratch, as before incremental clustering.
type fullOnly struct{ memento.PreferenceService }

// concepts are the vocabulary of the random streams: groups of related
// concepts (which cluster with the offline embedder) and loners.
var concepts = []string{
	"heist films", "heist thrillers", "crime thrillers", "crime dramas",
	"romantic comedies", "romantic dramas", "romance novels",
	"quiet keyboards", "clicky keyboards", "mechanical keyboards",
	"space operas", "space westerns", "psychological thrillers", "slow burn thrillers",
	"cilantro", "jazz", "documentaries", "anime", "musicals", "board games",
}

// streamStep applies one random change to s's preferences through svc:
// evidence from a new source (new concepts and reinforced ones), a patch
// of a weight or a concept, a deletion, a restore of what is stored with
// one preference left out, or days passing so that weights fade.
func streamStep(t *testing.T, rng *rand.Rand, svc *prefs.Service, db *sqlite.DB, clk *clock, s memento.Scope, step int) string {
	t.Helper()
	ctx := t.Context()
	all, err := svc.Preferences(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	pick := func() memento.Preference { return all[rng.IntN(len(all))] }
	switch r := rng.IntN(20); {
	case r < 11 || len(all) < 3:
		var cs []memento.Concept
		for range 1 + rng.IntN(3) {
			sign := 1
			if rng.IntN(4) == 0 {
				sign = -1
			}
			cs = append(cs, memento.Concept{Concept: concepts[rng.IntN(len(concepts))], Sign: sign, Strength: 0.3 + 0.7*rng.Float64(), Kind: memento.KindTaste})
		}
		if _, err := svc.Learn(ctx, s, fmt.Sprintf("m%d", step), clk.Now(), cs); err != nil {
			t.Fatalf("step %d: Learn: %v", step, err)
		}
		return "learn"
	case r < 13:
		w := float64(rng.IntN(7)-3) / 2
		if _, err := svc.Patch(ctx, s, pick().ID, nil, &w); err != nil {
			t.Fatalf("step %d: Patch weight: %v", step, err)
		}
		return "patch weight"
	case r < 15:
		c := concepts[rng.IntN(len(concepts))] + " " + []string{"films", "shows", "books"}[rng.IntN(3)]
		if _, err := svc.Patch(ctx, s, pick().ID, &c, nil); err != nil {
			t.Fatalf("step %d: Patch concept: %v", step, err)
		}
		return "patch concept"
	case r < 17:
		if err := svc.Delete(ctx, s, pick().ID); err != nil {
			t.Fatalf("step %d: Delete: %v", step, err)
		}
		return "delete"
	case r < 18:
		drop := rng.IntN(len(all))
		kept := slices.Delete(slices.Clone(all), drop, drop+1)
		sources, err := db.PreferenceSources(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.RestorePreferences(ctx, s, kept, sources); err != nil {
			t.Fatalf("step %d: RestorePreferences: %v", step, err)
		}
		return "restore"
	default:
		clk.Set(clk.Now().Add(time.Duration(10+rng.IntN(80)) * 24 * time.Hour))
		return "days pass"
	}
}

// clusterView is what a clustering stored, as the API lists it.
type clusterView struct {
	ID, Description string
	Members         []memento.PreferenceClusterMember
}

func storedClusters(t *testing.T, svc *prefs.Service, s memento.Scope) []clusterView {
	t.Helper()
	cs, err := svc.Clusters(t.Context(), s)
	if err != nil {
		t.Fatalf("Clusters: %v", err)
	}
	out := []clusterView{}
	for _, c := range cs {
		out = append(out, clusterView{c.ID, c.Description, c.Members})
	}
	slices.SortFunc(out, func(a, b clusterView) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// TestIncrementalClusteringEqualsFull clusters random streams of changes
// both ways after every step: incrementally (the preferences changed
// since, the held neighbour lists, the saved descriptions) and from
// scratch over the same store, and wants the same clusters stored, no
// mismatch found by the periodic full reads, and most clusterings
// incremental.
func TestIncrementalClusteringEqualsFull(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			clk := &clock{t: day0}
			inc, db := newService(t, clk)
			inc.ClusterFullEvery = 7
			full := &prefs.Service{Store: fullOnly{db}, Model: inc.Model, Embedder: inc.Embedder, Clock: clk}
			rng := rand.New(rand.NewPCG(seed, 19))
			s := memento.Scope{User: fmt.Sprint("u", seed)}
			kinds := map[string]int{}
			most := 0
			for step := range 120 {
				kinds[streamStep(t, rng, inc, db, clk, s, step)]++
				if err := inc.Recluster(t.Context(), s); err != nil {
					t.Fatalf("step %d: incremental Recluster: %v", step, err)
				}
				got := storedClusters(t, inc, s)
				if err := full.Recluster(t.Context(), s); err != nil {
					t.Fatalf("step %d: full Recluster: %v", step, err)
				}
				want := storedClusters(t, full, s)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("step %d: incremental clusters differ from a full clustering (-full +incremental):\n%s", step, diff)
				}
				most = max(most, len(got))
			}
			if most < 2 {
				t.Errorf("at most %d clusters at once: the stream tests too little", most)
			}
			st := inc.ClusterStats()
			t.Logf("steps %v; %+v", kinds, st)
			if st.Mismatches != 0 {
				t.Errorf("%d full reads found the held preferences differing", st.Mismatches)
			}
			if st.IncrementalReads < 2*st.FullReads || st.Users != 1 || st.Preferences == 0 {
				t.Errorf("stats %+v: want most clusterings incremental and the user held", st)
			}
		})
	}
}

// TestIncrementalClusteringReadsChangedOnly counts what a clustering reads:
// after the first, only the preferences changed since (and the stored
// clusters, each time); a deletion or a user forgotten and created again
// reads every preference again.
func TestIncrementalClusteringReadsChangedOnly(t *testing.T) {
	ctx := t.Context()
	clk := &clock{t: day0}
	svc, db := newService(t, clk)
	counted := &countingStore{PreferenceService: db, since: db}
	svc.Store = counted
	s := memento.Scope{User: "ann"}
	learn := func(source string, cs ...string) {
		t.Helper()
		var in []memento.Concept
		for _, c := range cs {
			in = append(in, memento.Concept{Concept: c, Sign: 1, Strength: 0.8, Kind: memento.KindTaste})
		}
		if _, err := svc.Learn(ctx, s, source, clk.Now(), in); err != nil {
			t.Fatal(err)
		}
	}
	recluster := func(step string, wantChanged, wantClusterReads int) {
		t.Helper()
		counted.reset()
		if err := svc.Recluster(ctx, s); err != nil {
			t.Fatalf("%s: Recluster: %v", step, err)
		}
		if counted.changed != wantChanged || counted.clusterReads != wantClusterReads {
			t.Errorf("%s: read %d preferences and the clusters %d times; want %d and %d",
				step, counted.changed, counted.clusterReads, wantChanged, wantClusterReads)
		}
	}
	learn("m1", "heist films", "crime thrillers", "romantic comedies", "romance novels", "cilantro")
	recluster("first", 5, 1)
	learn("m2", "jazz")
	recluster("one new", 1, 1)
	recluster("nothing new", 0, 1)
	all, _ := svc.Preferences(ctx, s)
	if err := svc.Delete(ctx, s, all[0].ID); err != nil {
		t.Fatal(err)
	}
	recluster("a deletion", 5, 1)
	learn("m3", "heist thrillers")
	recluster("after the deletion", 1, 1)
	if err := db.DeleteUser(ctx, s); err != nil {
		t.Fatal(err)
	}
	learn("n1", "anime", "documentaries")
	recluster("the user created again", 2, 1)
	if st := svc.ClusterStats(); st.FullReads != 3 || st.IncrementalReads != 3 {
		t.Errorf("stats %+v; want 3 full reads and 3 incremental", st)
	}
}

// countingStore counts the preferences its PreferencesSince returns and
// the reads of stored clusters.
type countingStore struct {
	memento.PreferenceService
	since prefs.PreferencesSince

	mu                    sync.Mutex
	changed, clusterReads int
}

func (c *countingStore) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.changed, c.clusterReads = 0, 0
}

func (c *countingStore) PreferencesSince(ctx context.Context, s memento.Scope, version int64) (*memento.PreferencesRead, error) {
	r, err := c.since.PreferencesSince(ctx, s, version)
	if err == nil {
		c.mu.Lock()
		c.changed += len(r.Changed)
		c.mu.Unlock()
	}
	return r, err
}

func (c *countingStore) PreferenceClusters(ctx context.Context, s memento.Scope) ([]memento.PreferenceCluster, error) {
	c.mu.Lock()
	c.clusterReads++
	c.mu.Unlock()
	return c.PreferenceService.PreferenceClusters(ctx, s)
}

// TestIncrementalClusteringConcurrent clusters two users from several
// goroutines while their preferences change, under -race, then wants the
// clusters a full clustering finds, and no mismatch.
func TestIncrementalClusteringConcurrent(t *testing.T) {
	ctx := t.Context()
	clk := &clock{t: day0}
	svc, db := newService(t, clk)
	svc.ClusterFullEvery = 3
	svc.ClusterCache = 8 // smaller than the two users: they evict each other
	users := []memento.Scope{{User: "ann"}, {User: "bob"}}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 3))
			for i := range 15 {
				s := users[(g+i)%2]
				c := concepts[rng.IntN(len(concepts))]
				if _, err := svc.Learn(ctx, s, fmt.Sprintf("g%d-%d", g, i), clk.Now(), []memento.Concept{{Concept: c, Sign: 1, Strength: 0.7, Kind: memento.KindTaste}}); err != nil {
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
	full := &prefs.Service{Store: fullOnly{db}, Model: svc.Model, Embedder: svc.Embedder, Clock: clk}
	for _, s := range users {
		if err := svc.Recluster(ctx, s); err != nil {
			t.Fatal(err)
		}
		got := storedClusters(t, svc, s)
		if err := full.Recluster(ctx, s); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(storedClusters(t, full, s), got); diff != "" {
			t.Errorf("%s: clusters after concurrent clusterings differ from a full one (-full +incremental):\n%s", s.User, diff)
		}
	}
	st := svc.ClusterStats()
	if st.Mismatches != 0 || st.Evictions == 0 || st.Preferences > 8+20 {
		t.Errorf("stats %+v: want no mismatch, evictions, and the bound kept but for the user being clustered", st)
	}
}

// losingStore loses the changed rows of one incremental read, as a store
// that wrote a row at the wrong version would.
type losingStore struct {
	memento.PreferenceService
	since prefs.PreferencesSince
	lose  bool
}

func (l *losingStore) PreferencesSince(ctx context.Context, s memento.Scope, version int64) (*memento.PreferencesRead, error) {
	r, err := l.since.PreferencesSince(ctx, s, version)
	if err == nil && version > 0 && l.lose {
		l.lose = false
		r.Changed = nil
	}
	return r, err
}

// TestIncrementalClusteringCountsMismatch has the held preferences miss a
// change and wants the next periodic full read to count the mismatch and
// keep what it read.
func TestIncrementalClusteringCountsMismatch(t *testing.T) {
	ctx := t.Context()
	clk := &clock{t: day0}
	svc, db := newService(t, clk)
	lossy := &losingStore{PreferenceService: db, since: db}
	svc.Store, svc.ClusterFullEvery = lossy, 2
	s := memento.Scope{User: "ann"}
	if _, err := svc.Learn(ctx, s, "m1", clk.Now(), []memento.Concept{
		{Concept: "romantic comedies", Sign: 1, Strength: 0.8, Kind: memento.KindTaste},
		{Concept: "romance novels", Sign: -1, Strength: 0.8, Kind: memento.KindTaste}}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Recluster(ctx, s); err != nil {
		t.Fatal(err)
	}
	if got := storedClusters(t, svc, s); len(got) != 1 {
		t.Fatalf("clusters %+v; want the two romantic ones in one", got)
	}
	all, _ := svc.Preferences(ctx, s)
	c := "cilantro"
	if _, err := svc.Patch(ctx, s, all[0].ID, &c, nil); err != nil {
		t.Fatal(err)
	}
	lossy.lose = true
	for range 2 {
		if err := svc.Recluster(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if st := svc.ClusterStats(); st.Mismatches != 1 || st.FullReads != 2 {
		t.Errorf("stats %+v; want the periodic full read to count one mismatch", st)
	}
	full := &prefs.Service{Store: fullOnly{db}, Model: svc.Model, Embedder: svc.Embedder, Clock: clk}
	got := storedClusters(t, svc, s)
	if err := full.Recluster(ctx, s); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(storedClusters(t, full, s), got); diff != "" || len(got) != 0 {
		t.Errorf("after the mismatch, clusters differ from a full clustering or keep the patched one (-full +incremental):\n%s", diff)
	}
}

// BenchmarkRecluster adds one preference to a user's n and clusters them
// (the write not timed), from scratch (every preference read and grouped)
// and incrementally (the new preference read and linked).
func BenchmarkRecluster(b *testing.B) {
	// Five concepts a topic (a made-up word), so that the preferences
	// form many small clusters, as a user's do, and one new preference
	// changes one of them.
	syllables := []string{"ka", "lo", "mi", "ru", "ze", "pa", "ti", "no", "vu", "sa", "de", "fo", "gi", "ha", "je"}
	kinds := []string{"films", "series", "novels", "games", "songs"}
	concept := func(i int) string {
		k := i / len(kinds)
		return syllables[k%15] + syllables[(k/15)%15] + syllables[(k/225)%15] + "r " + kinds[i%len(kinds)]
	}
	for _, n := range []int{50, 500} {
		for _, mode := range []string{"full", "incremental"} {
			b.Run(fmt.Sprintf("prefs=%d/%s", n, mode), func(b *testing.B) {
				ctx := context.Background()
				clk := &clock{t: day0}
				db := sqlitetest.Open(b)
				svc := &prefs.Service{Store: db, Model: offline.New(offline.Options{}), Embedder: offline.NewEmbedder(0), Clock: clk}
				if mode == "full" {
					svc.Store = fullOnly{db}
				}
				s := memento.Scope{User: "ann"}
				learn := func(source string, from, to int) {
					var cs []memento.Concept
					for i := from; i < to; i++ {
						cs = append(cs, memento.Concept{Concept: concept(i), Sign: 1, Strength: 0.7, Kind: memento.KindTaste})
					}
					if _, err := svc.Learn(ctx, s, source, clk.Now(), cs); err != nil {
						b.Fatal(err)
					}
				}
				for i := 0; i < n; i += 50 {
					learn(fmt.Sprint("seed", i), i, min(i+50, n))
				}
				if err := svc.Recluster(ctx, s); err != nil {
					b.Fatal(err)
				}
				next := n
				for b.Loop() {
					b.StopTimer()
					learn(fmt.Sprint("m", next), next, next+1)
					next++
					b.StartTimer()
					if err := svc.Recluster(ctx, s); err != nil {
						b.Fatal(err)
					}
				}
				all, _ := db.Preferences(ctx, s)
				cs, _ := db.PreferenceClusters(ctx, s)
				b.ReportMetric(float64(len(all)), "prefs")
				b.ReportMetric(float64(len(cs)), "clusters")
			})
		}
	}
}

// TestIncrementalClusteringOverLoadedRows clusters a user whose
// preferences were loaded in bulk, or written before the version column
// existed, and so carry version 0 (as `memento bench` builds them): the
// first read must hold every one of them, the next clusterings read only
// what was written since, and the clusters must be those of a clustering
// from scratch.
func TestIncrementalClusteringOverLoadedRows(t *testing.T) {
	ctx := t.Context()
	clk := &clock{t: day0}
	svc, db := newService(t, clk)
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	loaded := []string{"romantic comedies", "romance novels", "heist films", "crime thrillers", "cilantro", "jazz"}
	vs, err := svc.Embedder.Embed(ctx, loaded)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Bulk(ctx, func(b *sqlite.Bulk) error {
		if err := b.User(s); err != nil {
			return err
		}
		for i, c := range loaded {
			p := memento.Preference{ID: fmt.Sprint("pref_loaded", i), Concept: c, Weight: 1, Kind: memento.KindTaste, Evidence: 1,
				FirstSeen: day0, LastSeen: day0, Embedder: svc.Embedder.ID(), Vector: vs[i]}
			if err := b.Preference(s, p); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	full := &prefs.Service{Store: fullOnly{db}, Model: svc.Model, Embedder: svc.Embedder, Clock: clk}
	for step, c := range []string{"", "crime dramas", "romantic dramas"} {
		if c != "" {
			if _, err := svc.Learn(ctx, s, c, clk.Now(), []memento.Concept{{Concept: c, Sign: 1, Strength: 0.8, Kind: memento.KindTaste}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := svc.Recluster(ctx, s); err != nil {
			t.Fatal(err)
		}
		got := storedClusters(t, svc, s)
		if err := full.Recluster(ctx, s); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(storedClusters(t, full, s), got); diff != "" || len(got) == 0 {
			t.Errorf("step %d: clusters differ from a full clustering, or none (-full +incremental):\n%s", step, diff)
		}
	}
	if st := svc.ClusterStats(); st.Preferences != len(loaded)+2 || st.FullReads != 1 || st.IncrementalReads != 2 {
		t.Errorf("stats %+v; want all %d preferences held, one full read and two incremental", st, len(loaded)+2)
	}
}
