package lru

import (
	"fmt"
	"sync"
	"testing"
)

func TestCacheDropsLeastRecentlyUsed(t *testing.T) {
	var c Cache[*int]
	made := 0
	fresh := func() *int { made++; v := made; return &v }
	a := c.Get("a", fresh)
	c.Weigh(a, 4, 10)
	b := c.Get("b", fresh)
	c.Weigh(b, 4, 10)
	if got := c.Get("a", fresh); got != a {
		t.Fatalf("Get(a) again made a new entry")
	}
	d := c.Get("d", fresh)
	if n := c.Weigh(d, 4, 10); n != 1 {
		t.Errorf("Weigh over the limit dropped %d entries, want 1 (b, the least recently used)", n)
	}
	if entries, weight, evictions := c.Stats(); entries != 2 || weight != 8 || evictions != 1 {
		t.Errorf("Stats = %d, %d, %d; want 2 entries of weight 8, 1 eviction", entries, weight, evictions)
	}
	if got := c.Get("b", fresh); got == b || *got.Value != 4 {
		t.Errorf("b after its eviction: the old entry or a value not made afresh (%d)", *got.Value)
	}
	// An entry heavier than the limit stays while it is the one weighed.
	big := c.Get("big", fresh)
	c.Weigh(big, 50, 10)
	if entries, weight, _ := c.Stats(); entries != 1 || weight != 50 {
		t.Errorf("after a heavy entry: %d entries of weight %d; want only it, 50", entries, weight)
	}
	c.Drop(big)
	c.Drop(big)
	if n := c.Weigh(big, 7, 10); n != 0 {
		t.Errorf("Weigh of a dropped entry dropped %d", n)
	}
	if entries, weight, _ := c.Stats(); entries != 0 || weight != 0 {
		t.Errorf("after dropping the last: %d entries of weight %d; want none", entries, weight)
	}
}

func TestCacheConcurrent(t *testing.T) {
	var c Cache[int]
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				e := c.Get(fmt.Sprint((g*7+i)%40), func() int { return i })
				if i%9 == 0 {
					c.Drop(e)
				} else {
					c.Weigh(e, 1+i%5, 60)
				}
			}
		})
	}
	wg.Wait()
	entries, weight, _ := c.Stats()
	sum := 0
	for e := c.order.Front(); e != nil; e = e.Next() {
		sum += e.Value.(*Entry[int]).weight
	}
	if weight != sum || entries != c.order.Len() || weight > 60+5 {
		t.Errorf("Stats %d entries of weight %d; the list holds %d of weight %d; want them equal and within the limit", entries, weight, c.order.Len(), sum)
	}
}
