package memento

import (
	"math"
	"sync/atomic"
	"time"
)

// Durations of a recurring operation, such as the syncs of a store's log,
// counted in buckets whose bounds grow by an eighth from 10µs to about
// 10s. Two readings subtract (Sub), so the distribution over a span comes
// from its counts alone, and a quantile is known to within its bucket's
// eighth.
const (
	durationBuckets = 120
	firstBound      = 10 * time.Microsecond
	boundGrowth     = 1.125
)

// bounds[i] is the upper bound of bucket i; the last bucket has none.
var bounds = func() [durationBuckets]time.Duration {
	var b [durationBuckets]time.Duration
	for i := range b {
		b[i] = time.Duration(float64(firstBound) * math.Pow(boundGrowth, float64(i)))
	}
	b[durationBuckets-1] = math.MaxInt64
	return b
}()

// DurationCounts is a reading of a Durations: how many durations fell in
// each bucket.
type DurationCounts [durationBuckets]int64

// Durations counts durations as they come; safe for concurrent use.
type Durations struct {
	counts [durationBuckets]atomic.Int64
}

// bucket returns the bucket of d: the first whose bound is not below it.
func bucket(d time.Duration) int {
	if d <= firstBound {
		return 0
	}
	i := int(math.Ceil(math.Log(float64(d)/float64(firstBound)) / math.Log(boundGrowth)))
	// The logarithm can land one bucket off a bound; the bounds decide.
	for i > 0 && i < durationBuckets && bounds[i-1] >= d {
		i--
	}
	for i < durationBuckets-1 && bounds[i] < d {
		i++
	}
	return min(i, durationBuckets-1)
}

// Add counts d.
func (h *Durations) Add(d time.Duration) { h.counts[bucket(d)].Add(1) }

// Read returns the counts so far.
func (h *Durations) Read() DurationCounts {
	var c DurationCounts
	for i := range h.counts {
		c[i] = h.counts[i].Load()
	}
	return c
}

// Sub returns the counts of c less those of an earlier reading o.
func (c DurationCounts) Sub(o DurationCounts) DurationCounts {
	for i := range c {
		c[i] -= o[i]
	}
	return c
}

// Total is how many durations were counted.
func (c DurationCounts) Total() int64 {
	var n int64
	for _, x := range c {
		n += x
	}
	return n
}

// Quantile returns the upper bound of the bucket that holds the q-th
// quantile (0 < q ≤ 1) of the durations counted: at least that quantile
// and at most an eighth above it. Durations past the last bound (10s)
// read as that bound. 0 when none was counted.
func (c DurationCounts) Quantile(q float64) time.Duration {
	n := c.Total()
	if n == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(n)))
	rank = max(1, min(rank, n))
	var seen int64
	for i, x := range c {
		seen += x
		if seen >= rank {
			if i == durationBuckets-1 {
				return bounds[i-1]
			}
			return bounds[i]
		}
	}
	return bounds[durationBuckets-2]
}

// AtMost counts the durations of the buckets whose bound is d or less:
// those up to d, less any in the bucket that straddles d (at most an
// eighth under it), which count with the buckets above.
func (c DurationCounts) AtMost(d time.Duration) int64 {
	var n int64
	for i, x := range c {
		if bounds[i] > d {
			break
		}
		n += x
	}
	return n
}
