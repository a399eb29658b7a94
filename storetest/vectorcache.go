package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memento-ai/memento"
)

// testVectorCache checks memento.VectorCache: vectors read back exactly,
// by embedder and key, replaced in place, a key given twice, refused
// arguments writing nothing, and two writers of the same keys at once.
func testVectorCache(t *testing.T, open Opener) {
	st := open(t)
	vc, ok := st.(memento.VectorCache)
	if !ok {
		t.Skip("the store does not implement memento.VectorCache")
	}
	ctx := t.Context()
	heat, alien, brazil := memento.KeyOf("Crime. Heat."), memento.KeyOf("Horror. Alien."), memento.KeyOf("Brazil.")
	// Values that a store rounding through float64 text, or dropping
	// the sign of zero, would change.
	v1 := []float32{0.1, -0.25, 1e-30, 3.4028235e38}
	v2 := []float32{-0.5, 0.5, 0, 0.3333333}

	got, err := vc.CachedVectors(ctx, "e1", []memento.TextKey{heat, alien})
	if err != nil || len(got) != 2 || got[0] != nil || got[1] != nil {
		t.Fatalf("CachedVectors of an empty cache = %v, %v; want two nils", got, err)
	}
	if err := vc.CacheVectors(ctx, "e1", []memento.TextKey{heat, alien}, [][]float32{v1, v2}); err != nil {
		t.Fatal(err)
	}
	got, err = vc.CachedVectors(ctx, "e1", []memento.TextKey{alien, brazil, heat, alien})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]float32{v2, nil, v1, v2}, got); diff != "" {
		t.Errorf("CachedVectors (-want +got):\n%s", diff)
	}
	// Another embedder's vectors are not these.
	got, err = vc.CachedVectors(ctx, "e2", []memento.TextKey{heat})
	if err != nil || got[0] != nil {
		t.Errorf("CachedVectors under another embedder = %v, %v; want nil", got, err)
	}

	// A stored vector is replaced; a key given twice keeps the last.
	v3 := []float32{1, 2, 3}
	if err := vc.CacheVectors(ctx, "e1", []memento.TextKey{heat, brazil, brazil}, [][]float32{v3, v1, v2}); err != nil {
		t.Fatal(err)
	}
	got, err = vc.CachedVectors(ctx, "e1", []memento.TextKey{heat, brazil})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]float32{v3, v2}, got); diff != "" {
		t.Errorf("CachedVectors after replacing (-want +got):\n%s", diff)
	}

	// Refused arguments write nothing.
	fresh := memento.KeyOf("Fresh.")
	wantCode(t, "CacheVectors without an embedder", vc.CacheVectors(ctx, "", []memento.TextKey{fresh}, [][]float32{v1}), memento.EINVALID)
	wantCode(t, "CacheVectors with more keys than vectors", vc.CacheVectors(ctx, "e1", []memento.TextKey{fresh, heat}, [][]float32{v1}), memento.EINVALID)
	wantCode(t, "CacheVectors of an empty vector", vc.CacheVectors(ctx, "e1", []memento.TextKey{fresh, heat}, [][]float32{v1, nil}), memento.EINVALID)
	_, err = vc.CachedVectors(ctx, "", []memento.TextKey{heat})
	wantCode(t, "CachedVectors without an embedder", err, memento.EINVALID)
	got, err = vc.CachedVectors(ctx, "e1", []memento.TextKey{fresh, heat})
	if err != nil || got[0] != nil || !cmp.Equal(got[1], v3) {
		t.Errorf("CachedVectors after refused writes = %v, %v; want nil and the vector kept", got, err)
	}

	// Two servers warming on one store write the same keys at once.
	keys := make([]memento.TextKey, 300)
	vecs := make([][]float32, len(keys))
	for i := range keys {
		keys[i] = memento.KeyOf(fmt.Sprintf("title %d", i))
		vecs[i] = []float32{float32(i), 1}
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for w := range errs {
		wg.Go(func() {
			lo := w * 50 // ranges that overlap, and together cover every key
			errs[w] = vc.CacheVectors(ctx, "e1", keys[lo:lo+150], vecs[lo:lo+150])
		})
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Errorf("concurrent CacheVectors %d: %v", w, err)
		}
	}
	got, err = vc.CachedVectors(ctx, "e1", keys)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if !cmp.Equal(v, vecs[i]) {
			t.Errorf("key %d after concurrent writes = %v, want %v", i, v, vecs[i])
			break
		}
	}

	// Pruning keeps the keys given, of every embedder, and no other.
	if err := vc.CacheVectors(ctx, "e2", []memento.TextKey{heat, alien}, [][]float32{v1, v2}); err != nil {
		t.Fatal(err)
	}
	n, err := vc.PruneVectors(ctx, append([]memento.TextKey{heat}, keys[:10]...))
	if err != nil || n != 293 { // e1: alien, brazil and 290 keys; e2: alien
		t.Errorf("PruneVectors = %d, %v; want 293", n, err)
	}
	for _, e := range []string{"e1", "e2"} {
		got, err := vc.CachedVectors(ctx, e, []memento.TextKey{heat, alien, brazil, keys[0], keys[10]})
		if err != nil {
			t.Fatal(err)
		}
		kept := []bool{got[0] != nil, got[1] != nil, got[2] != nil, got[3] != nil, got[4] != nil}
		want := []bool{true, false, false, e == "e1", false}
		if !cmp.Equal(kept, want) {
			t.Errorf("after pruning, %s holds heat, alien, brazil, key 0, key 10: %v, want %v", e, kept, want)
		}
	}
	if n, err := vc.PruneVectors(ctx, nil); err != nil || n != 12 {
		t.Errorf("PruneVectors of nothing to keep = %d, %v; want the 12 left", n, err)
	}
}
