package keylock

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// One key's lock has one holder at a time, another key's lock does not
// wait for it, and the map forgets a key once nobody holds or waits for it.
func TestMap(t *testing.T) {
	var m Map[string]
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			unlock := m.Lock("a")
			n := inside.Add(1)
			for {
				old := most.Load()
				if n <= old || most.CompareAndSwap(old, n) {
					break
				}
			}
			time.Sleep(time.Millisecond)
			inside.Add(-1)
			unlock()
		})
	}
	unlockA := m.Lock("a")
	got := make(chan struct{})
	go func() {
		m.Lock("b")()
		close(got)
	}()
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("key b waited for key a's holder")
	}
	unlockA()
	wg.Wait()
	if most.Load() != 1 {
		t.Errorf("%d holders of one key's lock at once", most.Load())
	}
	if n := m.Len(); n != 0 {
		t.Errorf("%d keys left in the map", n)
	}
}
