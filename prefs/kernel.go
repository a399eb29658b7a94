package prefs

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/viterin/vek"
	"github.com/viterin/vek/vek32"
)

// Ranking the whole catalog for a user takes one dot product per title
// and, for the titles it explains, one per preference: 36,000 and 16,000
// products of 256 dimensions. In plain Go a dot product does about one
// multiply-add per cycle (the compiler emits no vector instructions), and
// those two loops took 4.5 of the 6.5 ms of processor time a ranking
// cost. vek's AVX2 and FMA kernel does eight per instruction: the
// preference loop, whose 0.5 MB of concept vectors stay in cache, runs
// about seven times faster, and the catalog loop more than twice as fast
// (it then waits on memory: the title vectors are 37 MB, and streaming
// them costs about 1.4 ms of processor time).

// simd reports whether vek has vector instructions for this processor.
// Without them vek falls back to a loop with one accumulator, slower than
// Dot, so rankDot uses Dot instead.
var simd = vek.Info().Acceleration

// rankDot is the dot product of ranking: Dot, computed with vector
// instructions where the processor has them. Their sums are grouped
// differently, so the result can differ from Dot's in the last bits,
// which no ranking decision depends on (TestScorerMatchesReference holds
// the scores to a float64 reference within 1e-4). Like Dot, it returns 0
// for vectors of different lengths (those of different embedders).
func rankDot(a, b []float32) float32 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	if simd {
		return vek32.Dot(a, b)
	}
	return Dot(a, b)
}

// matrix is a set of vectors of one length, stored row after row in one
// allocation: the catalog's title vectors, read in order at every
// ranking, then stream through memory without a slice header or a
// pointer per title for the loop to load and for the garbage collector to
// scan.
type matrix struct {
	data []float32
	dim  int
}

// newMatrix copies vs, which must all have length dim, into a matrix.
func newMatrix(vs [][]float32, dim int) matrix {
	m := matrix{data: make([]float32, len(vs)*dim), dim: dim}
	for i, v := range vs {
		copy(m.data[i*dim:(i+1)*dim], v)
	}
	return m
}

// rows is the number of vectors in m.
func (m matrix) rows() int {
	if m.dim == 0 {
		return 0
	}
	return len(m.data) / m.dim
}

// row returns vector i, capped so that appending to it cannot overwrite
// the next one.
func (m matrix) row(i int) []float32 {
	return m.data[i*m.dim : (i+1)*m.dim : (i+1)*m.dim]
}

// rowSet gives the vectors of a ranking's candidates: the rows of the
// catalog's matrix when the candidates are the whole catalog in its order,
// or one slice per candidate otherwise.
type rowSet struct {
	m    matrix
	each [][]float32
}

// at returns the vector of candidate i.
func (r rowSet) at(i int) []float32 {
	if r.each != nil {
		return r.each[i]
	}
	return r.m.row(i)
}

// parallelFrom is the work (in dot products) from which a loop is split
// across processors.
const parallelFrom = 4096

// chunksPerWorker is how many pieces each processor's share of a loop is
// cut into.
const chunksPerWorker = 8

// parallel runs fn over [0, n) in chunks, on all processors when n is
// large.
func parallel(n int, fn func(lo, hi int)) { parallelWork(n, n, fn) }

// parallelWork runs fn over [0, n) in chunks, on all processors when the
// work (in dot products) is large. The workers, the caller among them,
// take chunks from a shared counter instead of a fixed half each: on a
// machine shared with other processes, or while the garbage collector
// holds a processor, a worker that is held up leaves its remaining chunks
// to the others, where with fixed shares the ranking would wait for the
// slowest one (which made the tail of the latency distribution).
func parallelWork(n, work int, fn func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if work < parallelFrom || workers < 2 {
		fn(0, n)
		return
	}
	chunk := max(1, n/(workers*chunksPerWorker))
	var next atomic.Int64
	run := func() {
		for {
			lo := int(next.Add(int64(chunk))) - chunk
			if lo >= n {
				return
			}
			fn(lo, min(lo+chunk, n))
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(run)
	}
	run()
	wg.Wait()
}
