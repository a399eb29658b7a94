package profile

import (
	"math/rand/v2"
	"testing"
)

// TestWeightsMatchAMap: after any sequence of additions, some of which
// bring a weight back to zero (which removes it, shifting the entries
// after it), the table holds exactly what a Go map given the same
// additions holds, through growth from the smallest table.
func TestWeightsMatchAMap(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for round := range 200 {
		var w weights
		want := map[int32]int64{}
		keys := 1 + r.IntN(300)
		for range 2000 {
			k := int32(r.IntN(keys))
			d := int64(r.IntN(5) - 2)
			if v, ok := want[k]; ok && r.IntN(3) == 0 {
				d = -v // back to zero: removed
			}
			w.Add(k, d)
			if v := want[k] + d; v == 0 {
				delete(want, k)
			} else {
				want[k] = v
			}
		}
		if w.Len() != len(want) {
			t.Fatalf("round %d: %d weights, want %d", round, w.Len(), len(want))
		}
		for k := range int32(keys) {
			if got := w.Get(k); got != want[k] {
				t.Fatalf("round %d: weight of %d = %d, want %d", round, k, got, want[k])
			}
		}
		seen := 0
		for s, k := range w.keys {
			if k == 0 {
				continue
			}
			seen++
			if v := w.vals[s]; v != want[k-1] || v == 0 {
				t.Fatalf("round %d: slot %d holds %d=%d, want %d", round, s, k-1, v, want[k-1])
			}
		}
		if seen != len(want) {
			t.Fatalf("round %d: %d slots in use, want %d", round, seen, len(want))
		}
	}
}

// Get returns the weight of title k, 0 when it has none: a lookup, which
// only the tests need (a build walks the table, an update adds).
func (w *weights) Get(k int32) int64 {
	if w.n == 0 {
		return 0
	}
	mask := len(w.keys) - 1
	for s := w.home(k); ; s = (s + 1) & mask {
		switch w.keys[s] {
		case k + 1:
			return w.vals[s]
		case 0:
			return 0
		}
	}
}
