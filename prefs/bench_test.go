package prefs

import (
	"fmt"
	"slices"
	"testing"
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
