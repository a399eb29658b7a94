package profile

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestBestIsTheSortedPrefix: the k best neighbours by selection are the
// first k of the whole list sorted, for lists shorter and longer than k,
// with many equal similarities (ties broken by title).
func TestBestIsTheSortedPrefix(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	order := func(x, y Neighbour) int {
		if c := cmp.Compare(y.Sim, x.Sim); c != 0 {
			return c
		}
		return cmp.Compare(x.Title, y.Title)
	}
	for range 2000 {
		n, k := r.IntN(60), 1+r.IntN(12)
		list := make([]Neighbour, n)
		ids := make([]string, n)
		for i := range list {
			ids[i] = fmt.Sprintf("t%03d", i) // in the order of the numbers
			list[i] = Neighbour{Title: int32(i), Sim: float32(r.IntN(8))}
		}
		r.Shuffle(n, func(i, j int) { list[i], list[j] = list[j], list[i] })
		want := slices.Clone(list)
		slices.SortFunc(want, order)
		want = want[:min(k, n)]
		if got := best(slices.Clone(list), k, ids); !slices.Equal(got, want) {
			t.Fatalf("best %d of %v = %v, want %v", k, list, got, want)
		}
	}
}
