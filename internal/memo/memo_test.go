package memo

import (
	"fmt"
	"sync"
	"testing"
)

// TestGenerations checks that a key is kept while it is among the last
// Keys to 2×Keys keys put, and forgotten after.
func TestGenerations(t *testing.T) {
	m := &Memo[int]{Keys: 4}
	m.Put("first", 1)
	for i := range 4 {
		m.Put(fmt.Sprint("a", i), i)
	}
	if v, ok := m.Get("first"); !ok || v != 1 {
		t.Errorf("a key of the older generation: %v %v, want 1 kept", v, ok)
	}
	for i := range 4 {
		m.Put(fmt.Sprint("b", i), i)
	}
	if _, ok := m.Get("first"); ok {
		t.Error("a key two generations old is still kept")
	}
	if v, ok := m.Get("b3"); !ok || v != 3 {
		t.Errorf("the last key put: %v %v, want 3", v, ok)
	}
	if n := m.Len(); n > 8 {
		t.Errorf("the memo holds %d keys, bound 8", n)
	}
}

// TestWeight checks that a generation ends when its values' weights would
// pass Weight, and that a value heavier than Weight alone is still kept.
func TestWeight(t *testing.T) {
	m := &Memo[[]int]{Keys: 100, Weight: 10, Weigh: func(v []int) int { return len(v) }}
	m.Put("a", make([]int, 6))
	m.Put("b", make([]int, 6)) // a and b weigh 12: b starts a generation
	m.Put("c", make([]int, 6)) // and c another
	if _, ok := m.Get("a"); ok {
		t.Error("a is kept three generations of weight 6 later, the bound 10")
	}
	if _, ok := m.Get("b"); !ok {
		t.Error("the previous generation is lost")
	}
	m.Put("huge", make([]int, 50))
	if v, ok := m.Get("huge"); !ok || len(v) != 50 {
		t.Error("a value heavier than the bound is not kept")
	}
	if _, ok := m.Get("c"); !ok {
		t.Error("the generation before a heavy value is lost")
	}
}

// TestConcurrent puts and gets from eight goroutines (run with -race):
// a value got is always the one put for its key.
func TestConcurrent(t *testing.T) {
	m := &Memo[string]{Keys: 64}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				k := fmt.Sprint((i * (g + 1)) % 300)
				if v, ok := m.Get(k); ok && v != "v"+k {
					t.Errorf("key %s holds %q", k, v)
					return
				}
				m.Put(k, "v"+k)
			}
		})
	}
	wg.Wait()
	if n := m.Len(); n == 0 || n > 128 {
		t.Errorf("the memo holds %d keys, want some and at most 128", n)
	}
}
