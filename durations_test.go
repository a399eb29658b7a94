package memento_test

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

// The quantiles of counted durations are those of the durations
// themselves to within an eighth above, for spread-out random durations,
// and a reading less an earlier one counts what came between.
func TestDurationQuantiles(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var h memento.Durations
	var all []time.Duration
	for range 20000 {
		// Log-uniform from 20µs to 2s.
		d := time.Duration(20e3 * float64(uint64(1)<<uint(r.IntN(17))) * (1 + r.Float64()))
		all = append(all, d)
		h.Add(d)
	}
	slices.Sort(all)
	c := h.Read()
	if c.Total() != int64(len(all)) {
		t.Fatalf("total %d, want %d", c.Total(), len(all))
	}
	for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 1} {
		want := all[int(q*float64(len(all)))-1]
		got := c.Quantile(q)
		if got < want || float64(got) > float64(want)*1.125+1 {
			t.Errorf("quantile %.2f: %v, want %v to %v", q, got, want, time.Duration(float64(want)*1.125))
		}
	}

	before := h.Read()
	for range 100 {
		h.Add(40 * time.Millisecond)
	}
	span := h.Read().Sub(before)
	if span.Total() != 100 {
		t.Fatalf("span counted %d, want 100", span.Total())
	}
	if p := span.Quantile(0.5); p < 40*time.Millisecond || p > 45*time.Millisecond {
		t.Errorf("span's median %v, want 40ms to 45ms", p)
	}
}

// AtMost counts the durations up to a bound, to within the bucket that
// straddles it.
func TestDurationsAtMost(t *testing.T) {
	var h memento.Durations
	for _, ms := range []int{1, 2, 3, 4, 20, 50} {
		h.Add(time.Duration(ms) * time.Millisecond)
	}
	c := h.Read()
	for _, tc := range []struct {
		bound    time.Duration
		min, max int64
	}{{500 * time.Microsecond, 0, 0}, {5 * time.Millisecond, 3, 4}, {25 * time.Millisecond, 4, 5}, {time.Second, 6, 6}} {
		if n := c.AtMost(tc.bound); n < tc.min || n > tc.max {
			t.Errorf("at most %v: %d, want %d to %d", tc.bound, n, tc.min, tc.max)
		}
	}
}

func TestDurationEdges(t *testing.T) {
	var h memento.Durations
	if q := h.Read().Quantile(0.99); q != 0 {
		t.Errorf("quantile of nothing: %v, want 0", q)
	}
	h.Add(0)
	h.Add(time.Hour)
	c := h.Read()
	if q := c.Quantile(0.5); q <= 0 || q > 10*time.Microsecond {
		t.Errorf("median of 0 and an hour: %v, want the first bound (10µs)", q)
	}
	if q := c.Quantile(1); q < 9*time.Second || q > 11*time.Second {
		t.Errorf("max of 0 and an hour: %v, want the last bound (about 10s)", q)
	}
}

// Durations counted from several goroutines at once are all counted.
func TestDurationsConcurrent(t *testing.T) {
	var h memento.Durations
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				h.Add(time.Duration(g*1000+i) * time.Microsecond)
			}
		})
	}
	wg.Wait()
	if n := h.Read().Total(); n != 8000 {
		t.Fatalf("counted %d, want 8000", n)
	}
}
