package prefs

import (
	"sync/atomic"
	"testing"
)

func TestQuickCounts(t *testing.T) {
	v := clustered(42, 10000, 256, 50, 0.04, 0.05)
	ix := newPairIndex(v, 1-DefaultEps, false, 1)
	uf := newUnionFind(len(v))
	var c, c1, c2, c3 atomic.Int64
	ix.forEachCandidate(1, func(i, j int32) {
		c.Add(1)
		if uf.find(i) == uf.find(j) { return }
		c1.Add(1)
		k := ix.k
		s := float64(Dot(ix.coord32[int(i)*k:int(i+1)*k], ix.coord32[int(j)*k:int(j+1)*k]))
		if t := ix.thr - s; t > 0 && ix.residual[i]*ix.residual[j] < t*t {
			return
		}
		c2.Add(1)
		if within(ix.vectors[i], ix.vectors[j], ix.minDot) {
			c3.Add(1)
			uf.union(i, j)
		}
	})
	t.Logf("k=%d candidates %d diff-set %d tier2-pass %d unions-attempted %d", ix.k, c.Load(), c1.Load(), c2.Load(), c3.Load())
}
