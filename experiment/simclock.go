package experiment

import (
	"sync"
	"time"
)

// SimClock is the simulation's calendar, a memento.Clock: sessions are
// days apart (SimConfig.SessionGap) rather than the seconds a run takes,
// so that time-dependent memory settings, such as the decay of preference
// weights, act as they would over weeks of use. Within a session every
// reading is a millisecond after the previous one, so the order of a
// user's statements survives in their timestamps.
type SimClock struct {
	mu   sync.Mutex
	base time.Time
	n    int64
}

// NewSimClock returns a clock standing at start.
func NewSimClock(start time.Time) *SimClock { return &SimClock{base: start} }

// Now returns the current simulated time.
func (c *SimClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return c.base.Add(time.Duration(c.n) * time.Millisecond)
}

// Set moves the clock to t, the start of a session.
func (c *SimClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.base, c.n = t, 0
}
