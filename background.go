package memento

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Background work (the jobs of the queue: memory formation, summaries,
// preferences) and the work someone waits for (a chat turn, a context
// read) share the language model. A provider keeps a separate budget of
// requests for each, so a backlog of jobs never makes a person wait; it
// tells them apart by this mark, which the job runner puts on every job's
// context.

type backgroundKey struct{}

// InBackground returns ctx marked as background work.
func InBackground(ctx context.Context) context.Context {
	return context.WithValue(ctx, backgroundKey{}, true)
}

// IsBackground reports whether ctx is marked as background work. Unmarked
// work is someone's turn.
func IsBackground(ctx context.Context) bool {
	b, _ := ctx.Value(backgroundKey{}).(bool)
	return b
}

// Processors.
//
// Background work and requests share the processors as well as the
// model, and Go runs goroutines without priorities: sixteen jobs that
// compute at once on a two-processor machine leave a request, or the
// store's one writer that every acknowledgement waits for, an eighth of a
// processor. A ProcessorGate bounds how many goroutines of background
// work compute at once: every processor while nobody is served, one fewer
// while requests come (the stores call Foreground as they serve one), so
// that the requests and the writer keep one of their own. The job runner
// puts the gate on every job's context, and the compute-bound parts of
// the jobs (forming memories with the offline model, learning the
// profiles and the co-occurrence model) take one of its processors with
// Compute while they run. Waits (for the store's writer, for a model
// server) hold none. A gate can also run that work at a lower priority
// of the operating system's (LowerPriority, priority.go), which the
// kernel enforces where Go's scheduler cannot.

// ProcessorGate is a number of processors that background work computes
// on.
type ProcessorGate struct {
	n  int
	mu sync.Mutex
	// inUse counts the processors taken; freed is closed (and made anew)
	// when one is given back.
	inUse int
	freed chan struct{}
	// prio, when set (LowerPriority), is the operating-system priority
	// the work computes at.
	prio *threadPriority
}

// NewProcessorGate returns a gate of n processors (at least one): n while
// no request was served for a moment (ForegroundQuiet), n-1 (at least
// one) otherwise.
func NewProcessorGate(n int) *ProcessorGate {
	return &ProcessorGate{n: max(n, 1), freed: make(chan struct{})}
}

// Size is the number of processors of g while no request is served.
func (g *ProcessorGate) Size() int { return g.n }

// InUse is how many of g's processors are taken now.
func (g *ProcessorGate) InUse() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inUse
}

// limit is how many processors background work may take now.
func (g *ProcessorGate) limit() int {
	if g.n > 1 && !foregroundQuiet() {
		return g.n - 1
	}
	return g.n
}

// take waits for a processor until ctx ends.
func (g *ProcessorGate) take(ctx context.Context) error {
	for {
		g.mu.Lock()
		if g.inUse < g.limit() {
			g.inUse++
			g.mu.Unlock()
			return nil
		}
		freed := g.freed
		g.mu.Unlock()
		// A processor kept for requests frees itself when they stop:
		// look again after a quiet period.
		t := time.NewTimer(ForegroundQuiet)
		select {
		case <-freed:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		t.Stop()
	}
}

// give gives a processor back.
func (g *ProcessorGate) give() {
	g.mu.Lock()
	g.inUse--
	close(g.freed)
	g.freed = make(chan struct{})
	g.mu.Unlock()
}

// ForegroundQuiet is how long after the last request served the
// background may take every processor again.
const ForegroundQuiet = 250 * time.Millisecond

// lastForeground is when a store last served a request (Unix
// nanoseconds).
var lastForeground atomic.Int64

// Foreground records that a request is being served: for a moment
// (ForegroundQuiet) background work leaves it a processor. The stores
// call it for every read and write done outside a background job (ctx
// not IsBackground).
func Foreground(ctx context.Context) {
	if IsBackground(ctx) {
		return
	}
	now := time.Now().UnixNano()
	// Most calls come within the quiet period of the last one; a
	// store of the same value would only make the processors' caches
	// pass the line around.
	if now-lastForeground.Load() > int64(ForegroundQuiet/8) {
		lastForeground.Store(now)
	}
}

// foregroundQuiet reports whether no request was served for
// ForegroundQuiet.
func foregroundQuiet() bool {
	return time.Now().UnixNano()-lastForeground.Load() >= int64(ForegroundQuiet)
}

type gateKey struct{}

// gateState is what the context says of the gate: which gate, and
// whether the work under the context already holds one of its
// processors.
type gateState struct {
	gate    *ProcessorGate
	holding bool
}

// WithProcessorGate returns ctx carrying g: the background work done under
// it computes on g's processors.
func WithProcessorGate(ctx context.Context, g *ProcessorGate) context.Context {
	return context.WithValue(ctx, gateKey{}, gateState{gate: g})
}

// ProcessorGateOf returns the gate ctx carries, or nil.
func ProcessorGateOf(ctx context.Context) *ProcessorGate {
	st, _ := ctx.Value(gateKey{}).(gateState)
	return st.gate
}

// Compute waits for a processor of the gate ctx carries, for background
// work (IsBackground), and returns a context that holds it (work under
// it, goroutines it starts included, takes no other) and the function
// that gives it back; call it once, from the goroutine that called
// Compute. Work someone waits for, work under no gate and work that
// already holds a processor go ahead at once. When ctx ends first,
// Compute returns ctx's error. On a gate of a lower priority
// (LowerPriority) the calling goroutine computes at that priority until
// the processor is given back.
func Compute(ctx context.Context) (context.Context, func(), error) {
	st, _ := ctx.Value(gateKey{}).(gateState)
	if st.gate == nil || st.holding || !IsBackground(ctx) {
		return ctx, func() {}, nil
	}
	if err := st.gate.take(ctx); err != nil {
		return ctx, nil, err
	}
	restore := st.gate.prio.lower()
	var once sync.Once
	release := func() {
		once.Do(func() {
			restore()
			st.gate.give()
		})
	}
	return context.WithValue(ctx, gateKey{}, gateState{gate: st.gate, holding: true}), release, nil
}
