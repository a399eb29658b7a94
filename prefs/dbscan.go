package prefs

import (
	"cmp"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// Noise is the DBSCAN label of a point that belongs to no cluster.
const Noise = -1

// Default DBSCAN parameters for clustering a user's preference memories.
//
// DefaultEps is a cosine distance of 0.5 (cosine similarity at least 0.5,
// an angle of at most 60 degrees). It was chosen for 256-dimensional hashed
// embeddings of short concepts (signed hashing of words and character
// trigrams, with generic domain words such as "movies" left out): on a
// sample of related pairs ("quiet keyboards" / "clicky keyboards", "slow
// burn thrillers" / "psychological thrillers", "romantic comedies" /
// "romantic dramas") 10 of 13 had a distance of at most 0.5 (most between
// 0.38 and 0.5), while the closest of 312 unrelated pairs had 0.61 and 99%
// of them more than 0.78. The 0.35 often quoted for sentence embeddings
// would only group near paraphrases of such short texts.
//
// DefaultMinPts is 2: a memory with at least one related memory is a core
// point, so two statements about the same subject ("likes quiet keyboards",
// "dislikes clicky ones") already form a cluster that can be described. A
// user has tens to a few thousand preferences, not the millions DBSCAN's
// usual minPts of 2×dimensions assumes, and a lone memory is better left as
// noise than forced into a group.
const (
	DefaultEps    float32 = 0.5
	DefaultMinPts         = 2
)

// DBSCAN clusters unit vectors by cosine distance (1 - dot product) and
// returns one label per vector: clusters are numbered 0, 1, ... in the order
// the classic sequential algorithm discovers them, and Noise marks points in
// no cluster. A point is a core point when at least minPts points, itself
// included, lie within eps of it; clusters are the groups of core points
// connected through core neighbours, and a non-core point within eps of a
// core point is a border point of the first (lowest-numbered) cluster that
// reaches it. The labels are exactly those of NaiveDBSCAN.
//
// eps is clamped to [0, 2] and minPts below 1 counts as 1. Vectors of
// different lengths are never neighbours. The vectors should have unit
// length (the distance is 1 - dot, as for Embedder output); others are
// clustered by that same formula.
//
// Instead of computing the d-dimensional dot product of every pair, it
// rules most pairs out with bounds. The points are expressed in an
// orthonormal basis of k ≤ 64 directions along which they cluster
// (spherical k-means centroids of a sample, orthonormalised). For points x
// and y whose strongest directions are a and b, Cauchy–Schwarz gives
//
//	x·y ≤ x_a·y_a + x_b·y_b + sqrt(|x|² - x_a² - x_b²)·sqrt(|y|² - y_a² - y_b²)
//
// a few float64 operations (and one test for a block of 16 points of a
// bucket at a time), which for clustered data is far below 1 - eps for
// points of different clusters. A pair that passes is checked with the same
// bound over all k coordinates (a k-dimensional dot product), which rules
// out most pairs involving a point in no cluster, and only then with its
// exact dot product. Both bounds keep a margin for rounding, so no
// neighbour is ever missed. On data without structure they prune nothing
// and DBSCAN does the work of a brute-force search, as it does on purpose
// below a thousand points, where building the basis costs as much as it
// saves. Core points are counted and joined (with a concurrent union-find)
// on all processors, skipping pairs whose answer can no longer change
// anything, so memory stays O(n·(k + minPts)) however dense the data.
func DBSCAN(vectors [][]float32, eps float32, minPts int) []int {
	return dbscan(vectors, eps, minPts, dbscanOptions{
		// Below about a thousand points, building the basis costs as much
		// as it saves (measured on the benchmark's data).
		bruteForceBelow: 1000,
		workers:         runtime.GOMAXPROCS(0),
	})
}

// NaiveDBSCAN is the textbook DBSCAN (Ester et al., 1996) with brute-force
// region queries, O(n²·d). It is the reference DBSCAN is tested against and
// benchmarked with; it takes the same parameters and returns the same
// labels.
func NaiveDBSCAN(vectors [][]float32, eps float32, minPts int) []int {
	minDot, minPts := dbscanParams(eps, minPts)
	return regionDBSCAN(len(vectors), minPts, func(p int) []int {
		var out []int
		for q := range vectors {
			if q == p || within(vectors[p], vectors[q], minDot) {
				out = append(out, q)
			}
		}
		return out
	})
}

// regionDBSCAN is the sequential algorithm over n points whose region
// queries region answers: the points within eps of p, p included, in
// increasing order. NaiveDBSCAN answers them by brute force, a user's
// held neighbour lists (clusterState) from what they hold.
func regionDBSCAN(n, minPts int, region func(p int) []int) []int {
	const undefined = -2
	labels := make([]int, n)
	for i := range labels {
		labels[i] = undefined
	}
	queued := make([]bool, n)
	c := 0
	for p := range n {
		if labels[p] != undefined {
			continue
		}
		nb := region(p)
		if len(nb) < minPts {
			labels[p] = Noise
			continue
		}
		labels[p] = c
		var seeds []int
		grow := func(nb []int) {
			for _, q := range nb {
				switch {
				case labels[q] == Noise:
					labels[q] = c // a border point: labelled, never expanded
				case labels[q] == undefined && !queued[q]:
					queued[q] = true
					seeds = append(seeds, q)
				}
			}
		}
		grow(nb)
		for k := 0; k < len(seeds); k++ {
			q := seeds[k]
			labels[q] = c
			if nq := region(q); len(nq) >= minPts {
				grow(nq)
			}
		}
		c++
	}
	return labels
}

// dbscanParams clamps the parameters as DBSCAN documents and turns eps into
// the smallest dot product of two neighbours.
func dbscanParams(eps float32, minPts int) (float32, int) {
	if !(eps >= 0) { // also catches NaN
		eps = 0
	}
	eps = min(eps, 2)
	return 1 - eps, max(minPts, 1)
}

// within is the one neighbour test of both implementations, so they agree
// to the last bit.
func within(a, b []float32, minDot float32) bool {
	return len(a) == len(b) && Dot(a, b) >= minDot
}

type dbscanOptions struct {
	// bruteForceBelow is the number of points under which pairs are not
	// pruned, because building the basis would cost more than it saves.
	bruteForceBelow int
	workers         int
}

func dbscan(vectors [][]float32, eps float32, minPts int, opt dbscanOptions) []int {
	n := len(vectors)
	labels := make([]int, n)
	if n == 0 {
		return labels
	}
	minDot, minPts := dbscanParams(eps, minPts)
	workers := max(opt.workers, 1)
	ix := newPairIndex(vectors, minDot, n < opt.bruteForceBelow, workers)

	need := int32(minPts - 1)
	core := make([]bool, n)
	uf := newUnionFind(n)
	var counts []atomic.Int32
	var slots []int32
	if need <= 1 {
		// With minPts of 1 or 2, any two neighbours are core points, and a
		// point without neighbours is noise: one pass joins neighbours,
		// skipping pairs already in one set (after the first few joins,
		// nearly every pair within a cluster).
		linked := make([]atomic.Bool, n)
		ix.forEachCandidate(workers, func(i, j int32) {
			if uf.find(i) == uf.find(j) || !ix.near(i, j) {
				return
			}
			uf.union(i, j)
			linked[i].Store(true)
			linked[j].Store(true)
		})
		for i := range core {
			core[i] = need == 0 || linked[i].Load()
		}
	} else {
		// Pass 1: count each point's neighbours (itself excluded) up to
		// need, and remember the neighbours of every point that stays below
		// it: those are the non-core points, and they need their full list
		// to find the cluster they border. A pair whose two points already
		// have enough neighbours cannot change any of that and is not
		// tested.
		counts = make([]atomic.Int32, n)
		slots = make([]int32, n*int(need))
		ix.forEachCandidate(workers, func(i, j int32) {
			if counts[i].Load() >= need && counts[j].Load() >= need {
				return
			}
			if !ix.near(i, j) {
				return
			}
			if c := counts[i].Add(1) - 1; c < need {
				slots[int(i)*int(need)+int(c)] = j
			}
			if c := counts[j].Add(1) - 1; c < need {
				slots[int(j)*int(need)+int(c)] = i
			}
		})
		anyCore := false
		for i := range core {
			core[i] = counts[i].Load() >= need
			anyCore = anyCore || core[i]
		}
		// Pass 2: join neighbouring core points, skipping pairs already in
		// one set.
		if anyCore {
			ix.forEachCandidate(workers, func(i, j int32) {
				if !core[i] || !core[j] || uf.find(i) == uf.find(j) {
					return
				}
				if ix.near(i, j) {
					uf.union(i, j)
				}
			})
		}
	}

	// Number the clusters as the sequential algorithm discovers them: by
	// their lowest-indexed core point. A border point joins the
	// lowest-numbered cluster among its core neighbours, the first to
	// reach it.
	ids := make([]int, n)
	for i := range ids {
		ids[i] = Noise
		labels[i] = Noise
	}
	next := 0
	for i := range vectors {
		if !core[i] {
			continue
		}
		r := uf.find(int32(i))
		if ids[r] == Noise {
			ids[r] = next
			next++
		}
		labels[i] = ids[r]
	}
	if need <= 1 {
		return labels // with minPts ≤ 2 a non-core point has no neighbour
	}
	for i := range vectors {
		if core[i] {
			continue
		}
		for _, j := range slots[i*int(need) : i*int(need)+int(counts[i].Load())] {
			if core[j] && (labels[i] == Noise || labels[j] < labels[i]) {
				labels[i] = labels[j]
			}
		}
	}
	return labels
}

// pairIndex enumerates the pairs of points that may be neighbours.
type pairIndex struct {
	vectors [][]float32
	// k is the size of the basis; 0 means no pruning.
	k int
	// coord holds each point's k coordinates in the basis, row by row.
	coord []float32
	norm2 []float64
	// residual is each point's squared distance from the span of the
	// basis, inflated by the margin.
	residual []float64
	minDot   float32
	// members lists the points of each bucket (the points whose strongest
	// basis direction is the same).
	members [][]int32
	// thr is the largest bound that prunes a pair: 1 - eps less the
	// margin; margin is added to every squared residual.
	thr, margin float64
	units       []pairUnit
}

// pairUnit is a share of the work: rows lo to hi of bucket a against bucket
// b (against the later points of the same bucket when a == b).
type pairUnit struct {
	a, b, lo, hi int
}

// Margins that keep the bounds above every dot product they stand for,
// despite rounding: coordinates and norms are computed from float32 inputs
// (relative errors near 1e-6), and the final test's float32 dot product is
// off by well under 1e-5 for unit vectors. They scale with the largest
// squared norm, as rounding errors do.
const (
	boundMargin    = 1e-4 // subtracted from 1 - eps
	residualMargin = 1e-4 // added to each squared residual
)

// Tuning of the index, found on the benchmark's clustered data: a basis of
// about sqrt(n) directions (at most 64) from a sample of 2048 points and
// three Lloyd rounds costs a few percent of the run and prunes all but a
// few percent of the pairs.
const (
	unitRows     = 64 // rows per pairUnit
	maxBasis     = 64
	sampleSize   = 2048
	kmeansRounds = 3
)

func newPairIndex(vectors [][]float32, minDot float32, brute bool, workers int) *pairIndex {
	n := len(vectors)
	ix := &pairIndex{vectors: vectors, minDot: minDot, norm2: make([]float64, n)}
	dim := len(vectors[0])
	scale := 1.0
	for i, v := range vectors {
		var s float64
		for _, x := range v {
			s += float64(x) * float64(x)
		}
		ix.norm2[i] = s
		scale = max(scale, s)
		if len(v) != dim || math.IsNaN(s) || math.IsInf(s, 0) {
			brute = true // no bound holds for these; compare every pair
		}
	}
	ix.thr = float64(minDot) - boundMargin*scale
	ix.margin = residualMargin * scale
	var basis [][]float32
	if !brute && dim > 0 {
		k := min(dim, maxBasis, max(1, int(math.Sqrt(float64(n)))))
		basis = orthonormalBasis(vectors, k, workers)
	}
	ix.k = len(basis)
	if ix.k == 0 {
		all := make([]int32, n)
		for i := range all {
			all[i] = int32(i)
		}
		ix.members = [][]int32{all}
	} else {
		ix.coord = make([]float32, n*ix.k)
		ix.residual = make([]float64, n)
		bucket := make([]int32, n)
		parallelFor(n, workers, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				row := ix.coord[i*ix.k : (i+1)*ix.k]
				best, inSpan := 0, 0.0
				for c, q := range basis {
					row[c] = Dot(vectors[i], q)
					inSpan += float64(row[c]) * float64(row[c])
					if row[c] > row[best] {
						best = c
					}
				}
				bucket[i] = int32(best)
				ix.residual[i] = max(0, ix.norm2[i]-inSpan) + ix.margin
			}
		})
		ix.members = make([][]int32, ix.k)
		for i, b := range bucket {
			ix.members[b] = append(ix.members[b], int32(i))
		}
		// Strongest members first, so that the outliers of a bucket share
		// blocks and the blocks of its core stay tight.
		for b, m := range ix.members {
			slices.SortStableFunc(m, func(i, j int32) int {
				return cmp.Compare(ix.coord[int(j)*ix.k+b], ix.coord[int(i)*ix.k+b])
			})
		}
	}
	// Pairs within a bucket come first: in pass 2 they join most clusters,
	// so that most pairs across buckets are then skipped.
	for a, m := range ix.members {
		for lo := 0; lo < len(m); lo += unitRows {
			ix.units = append(ix.units, pairUnit{a: a, b: a, lo: lo, hi: min(lo+unitRows, len(m))})
		}
	}
	for a, m := range ix.members {
		for b := a + 1; b < len(ix.members); b++ {
			if len(ix.members[b]) == 0 {
				continue
			}
			for lo := 0; lo < len(m); lo += unitRows {
				ix.units = append(ix.units, pairUnit{a: a, b: b, lo: lo, hi: min(lo+unitRows, len(m))})
			}
		}
	}
	return ix
}

// near reports whether points i and j are neighbours. With a basis it first
// tries the sharper bound of all k coordinates (a k-dimensional dot product
// instead of a d-dimensional one), which rules out most pairs of a point in
// no cluster with a clustered one:
//
//	x·y ≤ Σ x_c·y_c + sqrt(|x|² - Σ x_c²)·sqrt(|y|² - Σ y_c²)
func (ix *pairIndex) near(i, j int32) bool {
	if k := ix.k; k > 0 {
		s := float64(Dot(ix.coord[int(i)*k:int(i+1)*k], ix.coord[int(j)*k:int(j+1)*k]))
		if t := ix.thr - s; t > 0 && ix.residual[i]*ix.residual[j] < t*t {
			return false
		}
	}
	return within(ix.vectors[i], ix.vectors[j], ix.minDot)
}

// forEachCandidate calls fn once for every unordered pair of distinct
// points that the cheap two-direction bound cannot rule out, from several
// goroutines at once; fn calls near for the rest of the test once its own
// cheaper checks have passed.
func (ix *pairIndex) forEachCandidate(workers int, fn func(i, j int32)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, len(ix.units)) {
		wg.Go(func() {
			var sc scanScratch
			for {
				u := next.Add(1) - 1
				if u >= int64(len(ix.units)) {
					return
				}
				ix.scan(ix.units[u], &sc, fn)
			}
		})
	}
	wg.Wait()
}

// scanScratch holds one worker's arrays for the bucket it scans against.
type scanScratch struct {
	ya, yb, uy []float64
	blocks     []scanBlock
}

// scanBlock bounds the coordinates of blockRows consecutive points of a
// bucket, so that one test can rule all of them out for a point.
type scanBlock struct {
	loA, hiA, loB, hiB, maxU float64
}

// blockRows is the number of points a scanBlock covers.
const blockRows = 16

func (ix *pairIndex) scan(u pairUnit, sc *scanScratch, fn func(i, j int32)) {
	xs, ys := ix.members[u.a], ix.members[u.b]
	same := u.a == u.b
	if ix.k == 0 {
		for r := u.lo; r < u.hi; r++ {
			start := 0
			if same {
				start = r + 1
			}
			for _, j := range ys[start:] {
				fn(xs[r], j)
			}
		}
		return
	}
	// Coordinates of the bucket's points on directions a and b, and their
	// squared residuals off the plane of a and b (off a alone when a == b),
	// inflated by the margin.
	k := ix.k
	sc.ya, sc.yb, sc.uy = sc.ya[:0], sc.yb[:0], sc.uy[:0]
	for _, y := range ys {
		ya, yb := float64(ix.coord[int(y)*k+u.a]), 0.0
		if !same {
			yb = float64(ix.coord[int(y)*k+u.b])
		}
		sc.ya = append(sc.ya, ya)
		sc.yb = append(sc.yb, yb)
		sc.uy = append(sc.uy, max(0, ix.norm2[y]-ya*ya-yb*yb)+ix.margin)
	}
	thr := ix.thr
	if same {
		// Points of one bucket are mostly neighbours: no blocks.
		for r := u.lo; r < u.hi; r++ {
			x := xs[r]
			xa := sc.ya[r]
			ux := max(0, ix.norm2[x]-xa*xa) + ix.margin
			ix.scanRange(x, xa, 0, ux, sc, ys, r+1, len(ys), fn)
		}
		return
	}
	sc.blocks = sc.blocks[:0]
	for lo := 0; lo < len(ys); lo += blockRows {
		hi := min(lo+blockRows, len(ys))
		b := scanBlock{loA: sc.ya[lo], hiA: sc.ya[lo], loB: sc.yb[lo], hiB: sc.yb[lo], maxU: sc.uy[lo]}
		for s := lo + 1; s < hi; s++ {
			b.loA, b.hiA = min(b.loA, sc.ya[s]), max(b.hiA, sc.ya[s])
			b.loB, b.hiB = min(b.loB, sc.yb[s]), max(b.hiB, sc.yb[s])
			b.maxU = max(b.maxU, sc.uy[s])
		}
		sc.blocks = append(sc.blocks, b)
	}
	for r := u.lo; r < u.hi; r++ {
		x := xs[r]
		xa, xb := float64(ix.coord[int(x)*k+u.a]), float64(ix.coord[int(x)*k+u.b])
		ux := max(0, ix.norm2[x]-xa*xa-xb*xb) + ix.margin
		for bi, b := range sc.blocks {
			// xa·ya is largest at an end of ya's range, and so on.
			t := thr - (max(xa*b.loA, xa*b.hiA) + max(xb*b.loB, xb*b.hiB))
			if t > 0 && ux*b.maxU < t*t {
				continue
			}
			lo := bi * blockRows
			ix.scanRange(x, xa, xb, ux, sc, ys, lo, min(lo+blockRows, len(ys)), fn)
		}
	}
}

// scanRange tests x against the points lo to hi of the scanned bucket with
// the two-direction bound and hands those it cannot rule out to fn:
// x·y ≤ xa·ya + xb·yb + sqrt(ux·uy), pruned when below thr.
func (ix *pairIndex) scanRange(x int32, xa, xb, ux float64, sc *scanScratch, ys []int32, lo, hi int, fn func(i, j int32)) {
	ya := sc.ya[lo:hi]
	yb, uy := sc.yb[lo:hi][:len(ya)], sc.uy[lo:hi][:len(ya)]
	thr := ix.thr
	for s := range ya {
		t := thr - (xa*ya[s] + xb*yb[s])
		if t > 0 && ux*uy[s] < t*t {
			continue
		}
		fn(x, ys[lo+s])
	}
}

// orthonormalBasis returns up to k orthonormal directions along which the
// vectors cluster: spherical k-means centroids of an evenly spaced sample,
// seeded like k-means++, largest cluster first, orthonormalised
// by Gram–Schmidt. Everything is deterministic. The basis only makes the
// pruning effective; any orthonormal basis gives the same labels.
func orthonormalBasis(vectors [][]float32, k, workers int) [][]float32 {
	n := len(vectors)
	m := min(n, sampleSize)
	sample := make([][]float32, m)
	for i := range sample {
		sample[i] = vectors[i*n/m]
	}
	dim := len(sample[0])

	// k-means++ seeding with a fixed seed: each next centre is a sample
	// point drawn with probability proportional to its squared distance
	// to the nearest centre so far. (Farthest-first would pick the
	// outliers, which make poor directions.)
	rng := rand.New(rand.NewPCG(1, 2))
	centres := [][]float32{Normalize(sample[0])}
	d2 := make([]float64, m)
	for i, v := range sample {
		d2[i] = sqDist(v, centres[0])
	}
	for len(centres) < min(k, m) {
		var total float64
		for _, d := range d2 {
			total += d
		}
		if total <= 0 {
			break // every sample point is a centre already
		}
		target, pick := rng.Float64()*total, m-1
		for i, d := range d2 {
			if target < d {
				pick = i
				break
			}
			target -= d
		}
		c := Normalize(sample[pick])
		centres = append(centres, c)
		for i, v := range sample {
			d2[i] = min(d2[i], sqDist(v, c))
		}
	}

	// Lloyd rounds: assign to the most similar centre, move each centre to
	// the normalised mean of its points.
	assign := make([]int, m)
	sizes := make([]int, len(centres))
	for round := 0; round <= kmeansRounds; round++ {
		parallelFor(m, workers, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				best, bestDot := 0, float32(math.Inf(-1))
				for c, centre := range centres {
					if d := Dot(sample[i], centre); d > bestDot {
						best, bestDot = c, d
					}
				}
				assign[i] = best
			}
		})
		clear(sizes)
		for _, c := range assign {
			sizes[c]++
		}
		if round == kmeansRounds {
			break
		}
		sums := make([][]float64, len(centres))
		for i, c := range assign {
			if sums[c] == nil {
				sums[c] = make([]float64, dim)
			}
			for d, x := range sample[i] {
				sums[c][d] += float64(x)
			}
		}
		for c, s := range sums {
			if s == nil {
				continue // an empty cluster keeps its centre
			}
			v := make([]float32, dim)
			for d, x := range s {
				v[d] = float32(x)
			}
			centres[c] = Normalize(v)
		}
	}

	order := make([]int, len(centres))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(sizes[b], sizes[a]) })

	// Modified Gram–Schmidt in float64, applied twice for orthogonality to
	// rounding precision. Directions (nearly) spanned by earlier ones are
	// dropped.
	var basis [][]float64
	for _, c := range order {
		if sizes[c] == 0 {
			continue
		}
		v := make([]float64, dim)
		for d, x := range centres[c] {
			v[d] = float64(x)
		}
		for range 2 {
			for _, q := range basis {
				var p float64
				for d := range v {
					p += v[d] * q[d]
				}
				for d := range v {
					v[d] -= p * q[d]
				}
			}
		}
		var s float64
		for _, x := range v {
			s += x * x
		}
		if s < 1e-6 {
			continue
		}
		s = math.Sqrt(s)
		for d := range v {
			v[d] /= s
		}
		basis = append(basis, v)
	}
	out := make([][]float32, len(basis))
	for i, q := range basis {
		out[i] = make([]float32, dim)
		for d, x := range q {
			out[i][d] = float32(x)
		}
	}
	return out
}

// sqDist is the squared Euclidean distance of v from the unit vector c,
// assuming |v| = 1: 2 - 2·v·c, never negative.
func sqDist(v, c []float32) float64 {
	return max(0, 2-2*float64(Dot(v, c)))
}

// parallelFor splits [0, n) into contiguous ranges over the workers.
func parallelFor(n, workers int, fn func(lo, hi int)) {
	workers = max(1, min(workers, n))
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*n/workers, (w+1)*n/workers
		wg.Go(func() { fn(lo, hi) })
	}
	wg.Wait()
}

// unionFind is a disjoint-set forest that goroutines may use at once. A root
// is always linked under a smaller index, and paths are halved with
// compare-and-swap, so every parent pointer points to a smaller or equal
// index and the forest never has a cycle.
type unionFind struct {
	parent []atomic.Int32
}

func newUnionFind(n int) *unionFind {
	u := &unionFind{parent: make([]atomic.Int32, n)}
	for i := range u.parent {
		u.parent[i].Store(int32(i))
	}
	return u
}

func (u *unionFind) find(x int32) int32 {
	for {
		p := u.parent[x].Load()
		if p == x {
			return x
		}
		gp := u.parent[p].Load()
		if gp == p {
			return p
		}
		u.parent[x].CompareAndSwap(p, gp)
		x = gp
	}
}

func (u *unionFind) union(a, b int32) {
	for {
		a, b = u.find(a), u.find(b)
		if a == b {
			return
		}
		if a < b {
			a, b = b, a
		}
		if u.parent[a].CompareAndSwap(a, b) {
			return
		}
	}
}
