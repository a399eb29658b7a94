package prefs

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// implementations lists every way of running DBSCAN that must give the same
// labels: the reference, the public entry point (which brute-forces small
// inputs), the pruning index forced on small inputs, and one worker.
var implementations = []struct {
	name string
	run  func(v [][]float32, eps float32, minPts int) []int
}{
	{"naive", NaiveDBSCAN},
	{"DBSCAN", DBSCAN},
	{"indexed", func(v [][]float32, eps float32, minPts int) []int {
		return dbscan(v, eps, minPts, dbscanOptions{bruteForceBelow: 0, workers: 2})
	}},
	{"indexed-serial", func(v [][]float32, eps float32, minPts int) []int {
		return dbscan(v, eps, minPts, dbscanOptions{bruteForceBelow: 0, workers: 1})
	}},
	{"brute-parallel", func(v [][]float32, eps float32, minPts int) []int {
		return dbscan(v, eps, minPts, dbscanOptions{bruteForceBelow: len(v) + 1, workers: 3})
	}},
}

func TestDBSCANHandComputed(t *testing.T) {
	// Angles in degrees on the unit circle; eps admits neighbours at most
	// 10.5 degrees apart.
	eps := epsForAngle(10.5)
	tests := []struct {
		name    string
		vectors [][]float32
		eps     float32
		minPts  int
		want    []int
	}{
		{
			name:    "two clusters and noise",
			vectors: angles(0, 5, 10, 90, 95, 100, 45, 200),
			eps:     eps, minPts: 2,
			want: []int{0, 0, 0, 1, 1, 1, Noise, Noise},
		},
		{
			name:    "clusters numbered in discovery order",
			vectors: angles(300, 90, 0, 95, 5, 305, 100),
			eps:     eps, minPts: 2,
			want: []int{0, 1, 2, 1, 2, 0, 1},
		},
		{
			name:    "all noise",
			vectors: angles(0, 30, 60, 90, 120),
			eps:     eps, minPts: 2,
			want: []int{Noise, Noise, Noise, Noise, Noise},
		},
		{
			name:    "one cluster chained through neighbours",
			vectors: angles(0, 10, 20, 30, 40, 50),
			eps:     eps, minPts: 2,
			want: []int{0, 0, 0, 0, 0, 0},
		},
		{
			// With minPts 3 the ends of the chain have only two points
			// (themselves and one neighbour) within eps: they are border
			// points of the cluster of the inner, core points.
			name:    "border points at the ends of a chain",
			vectors: angles(0, 10, 20, 30),
			eps:     eps, minPts: 3,
			want: []int{0, 0, 0, 0},
		},
		{
			// The point at 18 degrees has three points within eps (9, 18
			// and 27 degrees), fewer than minPts 4: it is a border point of
			// both clusters and joins the one discovered first.
			name:    "border point joins the first cluster (A first)",
			vectors: angles(0, 3, 6, 9, 18, 27, 30, 33, 36, 180),
			eps:     eps, minPts: 4,
			want: []int{0, 0, 0, 0, 0, 1, 1, 1, 1, Noise},
		},
		{
			name:    "border point joins the first cluster (B first)",
			vectors: angles(27, 30, 33, 36, 18, 0, 3, 6, 9, 180),
			eps:     eps, minPts: 4,
			want: []int{0, 0, 0, 0, 0, 1, 1, 1, 1, Noise},
		},
		{
			// A border point listed before any core point is first marked
			// noise by the sequential algorithm, then claimed by the
			// cluster.
			name:    "border point seen before its cluster",
			vectors: angles(18, 9, 6, 3, 0),
			eps:     eps, minPts: 4,
			want: []int{0, 0, 0, 0, 0},
		},
		{
			name:    "a cluster too small for minPts is noise",
			vectors: angles(0, 5, 90, 92, 94, 96),
			eps:     eps, minPts: 3,
			want: []int{Noise, Noise, 0, 0, 0, 0},
		},
		{
			name:    "minPts 1 makes every point a cluster",
			vectors: angles(0, 5, 90, 180, 270),
			eps:     eps, minPts: 1,
			want: []int{0, 0, 1, 2, 3},
		},
		{
			name:    "minPts below 1 counts as 1",
			vectors: angles(0, 90),
			eps:     eps, minPts: -3,
			want: []int{0, 1},
		},
		{
			name:    "identical points",
			vectors: angles(42, 42, 42, 42, 42),
			eps:     0.01, minPts: 5,
			want: []int{0, 0, 0, 0, 0},
		},
		{
			name:    "identical points fewer than minPts",
			vectors: angles(42, 42, 42, 42, 42),
			eps:     0.01, minPts: 6,
			want: []int{Noise, Noise, Noise, Noise, Noise},
		},
		{
			name:    "eps 2 joins everything",
			vectors: angles(0, 90, 180, 270),
			eps:     2, minPts: 4,
			want: []int{0, 0, 0, 0},
		},
		{
			name:    "negative eps counts as 0",
			vectors: angles(0, 1, 2),
			eps:     -1, minPts: 2,
			want: []int{Noise, Noise, Noise},
		},
		{
			name:    "vectors of another length are never neighbours",
			vectors: [][]float32{{1, 0}, {1, 0}, {1, 0, 0}},
			eps:     0.5, minPts: 2,
			want: []int{0, 0, Noise},
		},
		{
			name:    "single point",
			vectors: angles(7),
			eps:     eps, minPts: 2,
			want: []int{Noise},
		},
	}
	for _, tt := range tests {
		for _, impl := range implementations {
			t.Run(tt.name+"/"+impl.name, func(t *testing.T) {
				got := impl.run(tt.vectors, tt.eps, tt.minPts)
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("labels (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestDBSCANEmpty(t *testing.T) {
	for _, impl := range implementations {
		t.Run(impl.name, func(t *testing.T) {
			for _, in := range [][][]float32{nil, {}} {
				got := impl.run(in, DefaultEps, DefaultMinPts)
				if len(got) != 0 {
					t.Errorf("labels = %v, want none", got)
				}
			}
		})
	}
}

// TestDBSCANMatchesNaive is the property test: on random data of many
// shapes, every implementation gives exactly the naive labels.
func TestDBSCANMatchesNaive(t *testing.T) {
	type dataset struct {
		name    string
		vectors [][]float32
	}
	var sets []dataset
	for seed := uint64(1); seed <= 6; seed++ {
		r := rand.New(rand.NewPCG(seed, 99))
		n := 100 + r.IntN(300)
		dim := []int{3, 16, 64, 256}[r.IntN(4)]
		centres := r.IntN(12)
		sigma := []float64{0.02, 0.04, 0.08, 0.2}[r.IntN(4)]
		v := clustered(seed, n, dim, centres, sigma, 0.1)
		sets = append(sets, dataset{fmt.Sprintf("seed=%d/n=%d/dim=%d/centres=%d/sigma=%g", seed, n, dim, centres, sigma), v})
	}
	// Duplicates and near-duplicates stress ties at the threshold.
	dup := clustered(7, 150, 32, 5, 0.05, 0.1)
	for i := range 150 {
		dup = append(dup, dup[i*7%150])
	}
	sets = append(sets, dataset{"duplicates", dup})
	// Vectors that are not unit length keep the bounds (with margins scaled
	// to the largest norm); one of another length makes the index fall back
	// to comparing every pair.
	odd := clustered(8, 200, 16, 4, 0.05, 0.1)
	for i := range odd {
		if i%3 == 0 {
			for d := range odd[i] {
				odd[i][d] *= 1.7
			}
		}
	}
	sets = append(sets, dataset{"not unit length", odd})
	sets = append(sets, dataset{"another length", append(odd[:100:100], []float32{1, 2, 3})})
	// The benchmark's shape, smaller.
	sets = append(sets, dataset{"benchmark shape", clustered(9, 300, 256, 8, 0.04, 0.05)})

	// The defaults on every data set, and a few random parameters each.
	pick := rand.New(rand.NewPCG(11, 12))
	extra := 4
	if raceEnabled {
		// The race detector needs concurrency, not volume.
		sets, extra = sets[len(sets)-3:], 1
	}
	for _, ds := range sets {
		params := [][2]float64{{float64(DefaultEps), DefaultMinPts}}
		for range extra {
			eps := []float64{0.05, 0.2, 0.35, 0.5, 0.8, 1.2}[pick.IntN(6)]
			params = append(params, [2]float64{eps, float64(1 + pick.IntN(5))})
		}
		for _, p := range params {
			eps, minPts := float32(p[0]), int(p[1])
			want := NaiveDBSCAN(ds.vectors, eps, minPts)
			for _, impl := range implementations[1:] {
				got := impl.run(ds.vectors, eps, minPts)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s eps=%v minPts=%d %s (-naive +got):\n%s", ds.name, eps, minPts, impl.name, diff)
				}
			}
		}
	}
}

// TestDBSCANFindsPlantedClusters checks the defaults on data shaped like
// related concepts: every planted cluster is found whole and the random
// points stay noise.
func TestDBSCANFindsPlantedClusters(t *testing.T) {
	const n, centres = 600, 6
	v := clustered(3, n, 256, centres, 0.04, 0)
	noise := clustered(4, 30, 256, 0, 0, 1)
	v = append(v, noise...)
	labels := DBSCAN(v, DefaultEps, DefaultMinPts)
	clusters := map[int]bool{}
	for i, l := range labels[:n] {
		if l == Noise {
			t.Errorf("clustered point %d is noise", i)
		}
		clusters[l] = true
	}
	if len(clusters) != centres {
		t.Errorf("found %d clusters, want %d", len(clusters), centres)
	}
	for i, l := range labels[n:] {
		if l != Noise {
			t.Errorf("random point %d is in cluster %d, want noise", n+i, l)
		}
	}
}

func TestUnionFind(t *testing.T) {
	u := newUnionFind(6)
	u.union(4, 2)
	u.union(5, 4)
	u.union(0, 1)
	want := []int32{0, 0, 2, 3, 2, 2}
	var got []int32
	for i := range int32(6) {
		got = append(got, u.find(i))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("roots (-want +got):\n%s", diff)
	}
}

func TestOrthonormalBasis(t *testing.T) {
	v := clustered(5, 500, 64, 10, 0.05, 0.05)
	basis := orthonormalBasis(v, 16, 2)
	if len(basis) == 0 || len(basis) > 16 {
		t.Fatalf("basis has %d vectors, want 1 to 16", len(basis))
	}
	for i, a := range basis {
		for j, b := range basis {
			want := float32(0)
			if i == j {
				want = 1
			}
			if got := Dot(a, b); got-want > 1e-5 || want-got > 1e-5 {
				t.Errorf("q%d·q%d = %v, want %v", i, j, got, want)
			}
		}
	}
	if diff := cmp.Diff(basis, orthonormalBasis(v, 16, 1)); diff != "" {
		t.Errorf("basis depends on the number of workers (-2 +1):\n%s", diff)
	}
}

// TestPairIndexPrunes checks that the bounds do their job on clustered
// data: most pairs never reach a dot product. (Correctness is the property
// test's business; this guards the speed without timing anything.)
func TestPairIndexPrunes(t *testing.T) {
	const n = 2000
	v := clustered(10, n, 256, 20, 0.04, 0.05)
	ix := newPairIndex(v, 1-DefaultEps, false, 2)
	if ix.k == 0 {
		t.Fatal("the index has no basis")
	}
	var candidates, exact atomic.Int64
	ix.forEachCandidate(2, func(i, j int32) {
		candidates.Add(1)
		k := ix.k
		s := float64(Dot(ix.coord[int(i)*k:int(i+1)*k], ix.coord[int(j)*k:int(j+1)*k]))
		if t := ix.thr - s; t <= 0 || ix.residual[i]*ix.residual[j] >= t*t {
			exact.Add(1)
		}
	})
	pairs := int64(n * (n - 1) / 2)
	t.Logf("%d pairs, %d pass the two-direction bound, %d need a full dot product", pairs, candidates.Load(), exact.Load())
	if got := candidates.Load(); got > pairs/4 {
		t.Errorf("%d of %d pairs pass the two-direction bound, want at most a quarter", got, pairs)
	}
	if got := exact.Load(); got > pairs/10 {
		t.Errorf("%d of %d pairs need a full dot product, want at most a tenth", got, pairs)
	}
}
