package prefs

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

// BenchmarkDBSCAN compares DBSCAN with the naive reference on clustered
// synthetic data shaped like preference embeddings: 256 dimensions, 50
// cluster centres with gaussian noise (pairwise similarity near 0.7 within
// a cluster), 5% random points, the default eps and minPts. The naive
// version at n=10000 takes several seconds per run.
func BenchmarkDBSCAN(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		v := clustered(42, n, 256, 50, 0.04, 0.05)
		for _, impl := range []struct {
			name string
			run  func([][]float32, float32, int) []int
		}{{"fast", DBSCAN}, {"naive", NaiveDBSCAN}} {
			b.Run(fmt.Sprintf("n=%d/%s", n, impl.name), func(b *testing.B) {
				var labels []int
				for b.Loop() {
					labels = impl.run(v, DefaultEps, DefaultMinPts)
				}
				b.ReportMetric(float64(slices.Max(labels)+1), "clusters")
			})
		}
	}
}

func BenchmarkDot(b *testing.B) {
	v := clustered(1, 2, 256, 0, 0, 1)
	var sink float32
	for b.Loop() {
		sink += Dot(v[0], v[1])
	}
	_ = sink
}

// BenchmarkMerge merges three pieces of evidence, two matching stored
// memories and one new, into a user's stored memories (256 dimensions,
// each with 20 sources), as a preference write does inside the store's
// write transaction.
func BenchmarkMerge(b *testing.B) {
	for _, n := range []int{30, 300} {
		v := clustered(7, n+1, 256, 0, 0, 1)
		cur := make([]memento.Preference, n)
		for i := range cur {
			sources := make([]string, 20)
			for j := range sources {
				sources[j] = fmt.Sprintf("msg_%d_%d", i, j)
			}
			cur[i] = memento.Preference{ID: fmt.Sprintf("p%d", i), Concept: fmt.Sprintf("concept %d", i), Weight: 0.5, Kind: memento.KindTaste,
				Evidence: 20, Sources: sources, FirstSeen: t0, LastSeen: t0, Embedder: "e", Vector: v[i]}
		}
		evidence := []Evidence{
			{Concept: cur[0].Concept, Sign: 1, Strength: 0.8, Kind: memento.KindTaste, Vector: v[0], At: t0.Add(time.Hour)},
			{Concept: cur[n/2].Concept, Sign: -1, Strength: 0.5, Kind: memento.KindTaste, Vector: v[n/2], At: t0.Add(time.Hour)},
			{Concept: "something new", Sign: 1, Strength: 1, Kind: memento.KindTaste, Vector: v[n], At: t0.Add(time.Hour)},
		}
		b.Run(fmt.Sprintf("preferences=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if c := (Config{}).Merge(cur, "msg_new", "e", evidence); len(c.Update) != 2 || len(c.Insert) != 1 {
					b.Fatalf("merge = %d updates, %d inserts; want 2 and 1", len(c.Update), len(c.Insert))
				}
			}
		})
	}
}
