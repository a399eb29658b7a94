package memento_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

// holders starts n background workers that each take a processor of the
// gate on ctx, count the holders while they hold it for hold, and give it
// back; it returns the most held at once.
func holders(t *testing.T, ctx context.Context, n int, hold time.Duration) int {
	t.Helper()
	var now, most atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			_, release, err := memento.Compute(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			defer release()
			c := now.Add(1)
			for {
				m := most.Load()
				if c <= m || most.CompareAndSwap(m, c) {
					break
				}
			}
			time.Sleep(hold)
			now.Add(-1)
		})
	}
	wg.Wait()
	return int(most.Load())
}

func TestComputeBoundsBackgroundWork(t *testing.T) {
	g := memento.NewProcessorGate(2)
	ctx := memento.WithProcessorGate(memento.InBackground(context.Background()), g)
	if memento.ProcessorGateOf(ctx) != g {
		t.Fatal("the context does not carry its gate")
	}
	// No request is served: every processor.
	time.Sleep(memento.ForegroundQuiet)
	if most := holders(t, ctx, 6, 20*time.Millisecond); most != 2 {
		t.Errorf("with no request served, %d background workers computed at once, want 2", most)
	}
	// Requests are served: one is kept for them.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			memento.Foreground(context.Background())
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	})
	time.Sleep(10 * time.Millisecond)
	most := holders(t, ctx, 6, 20*time.Millisecond)
	close(stop)
	wg.Wait()
	if most != 1 {
		t.Errorf("while requests were served, %d background workers computed at once, want 1", most)
	}
	if g.InUse() != 0 {
		t.Errorf("%d processors still taken after every worker gave its back", g.InUse())
	}
}

func TestComputeLetsOtherWorkThrough(t *testing.T) {
	g := memento.NewProcessorGate(1)
	bg := memento.WithProcessorGate(memento.InBackground(context.Background()), g)
	held, release, err := memento.Compute(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Work that holds a processor, and what it starts, takes no
		// other: with one processor this would wait for ever.
		_, r, err := memento.Compute(held)
		if err != nil {
			t.Error(err)
			return
		}
		r()
		// Work somebody waits for is not gated.
		_, r, err = memento.Compute(memento.WithProcessorGate(context.Background(), g))
		if err != nil {
			t.Error(err)
			return
		}
		r()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("work that holds a processor, or is not background work, waited for the gate")
	}
	// A background worker waits, until its context ends.
	ctx, cancel := context.WithTimeout(bg, 20*time.Millisecond)
	defer cancel()
	if _, _, err := memento.Compute(ctx); err != context.DeadlineExceeded {
		t.Errorf("a background worker waiting for a taken processor returned %v, want its context's error", err)
	}
	release()
	release() // a second call gives back nothing more
	if g.InUse() != 0 {
		t.Errorf("%d processors taken after the release", g.InUse())
	}
	_, r, err := memento.Compute(bg)
	if err != nil {
		t.Fatalf("the processor given back cannot be taken: %v", err)
	}
	r()
}
