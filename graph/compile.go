package graph

import (
	"fmt"
	"maps"
	"slices"

	"github.com/memento-ai/memento"
)

// DefaultStepLimit is how many node executions a run may take unless
// WithStepLimit says otherwise. It leaves room for a six-node pipeline with
// a few repair loops while stopping a loop that never converges quickly.
const DefaultStepLimit = 25

// Option configures a Runnable at Compile.
type Option func(*config)

type config struct {
	stepLimit int
	cp        Checkpointer
	clock     memento.Clock
	err       string
}

// WithStepLimit bounds how many nodes a run may execute, counting the steps
// of earlier attempts of a resumed run. It must be at least 1.
func WithStepLimit(n int) Option {
	return func(c *config) {
		if n < 1 {
			c.err = fmt.Sprintf("the step limit must be at least 1, got %d", n)
			return
		}
		c.stepLimit = n
	}
}

// WithCheckpointer saves each run's progress after every node in cp, so a
// run with the same id resumes after a crash or a failure, and a finished
// run is not executed again. The state type must then survive a JSON round
// trip.
func WithCheckpointer(cp Checkpointer) Option {
	return func(c *config) { c.cp = cp }
}

// WithClock sets the clock that stamps trace steps and checkpoints; tests
// use a fixed one. The default is the system clock.
func WithClock(clock memento.Clock) Option {
	return func(c *config) { c.clock = clock }
}

// Compile checks the graph and returns a Runnable. It returns the first
// problem as a *BuildError: a mistake recorded while declaring (duplicate or
// reserved node names, a node with two exits, ...), then an edge from or to
// an unknown node, a missing entry edge from Start, a node without an exit,
// a node unreachable from Start, End unreachable, and a node from which End
// cannot be reached.
func (g *Graph[S]) Compile(opts ...Option) (*Runnable[S], error) {
	cfg := config{stepLimit: DefaultStepLimit, clock: memento.SystemClock{}}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.err != "" {
		return nil, &BuildError{Graph: g.name, Reason: cfg.err}
	}
	if cfg.clock == nil {
		return nil, &BuildError{Graph: g.name, Reason: "the clock is nil"}
	}
	if len(g.errs) > 0 {
		return nil, g.errs[0]
	}
	if err := g.validate(); err != nil {
		return nil, err
	}
	r := &Runnable[S]{
		name:      g.name,
		nodes:     maps.Clone(g.nodes),
		edges:     maps.Clone(g.edges),
		branches:  make(map[string]branch[S], len(g.branches)),
		stepLimit: cfg.stepLimit,
		cp:        cfg.cp,
		clock:     cfg.clock,
	}
	for from, b := range g.branches {
		r.branches[from] = branch[S]{router: b.router, targets: slices.Clone(b.targets)}
	}
	return r, nil
}

// validate checks the structure of a graph whose declarations were
// individually valid.
func (g *Graph[S]) validate() error {
	known := func(name string) bool { return name == Start || name == End || g.nodes[name] != nil }
	for _, d := range g.decls {
		if !known(d.from) {
			return g.buildErr(d.from, "an edge leaves this node, but no such node was added")
		}
		if !known(d.to) {
			kind := "an edge"
			if d.conditional {
				kind = "a conditional edge"
			}
			return g.buildErr(d.from, fmt.Sprintf("%s leads to %q, but no such node was added", kind, d.to))
		}
	}
	if !g.hasExit(Start) {
		return g.buildErr("", "no entry point: add an edge (or conditional edges) from graph.Start")
	}
	for _, n := range g.order {
		if !g.hasExit(n) {
			return g.buildErr(n, "the node has no exit; add an edge from it to another node or to graph.End")
		}
	}
	forward := g.reach(Start, g.successors)
	for _, n := range g.order {
		if !forward[n] {
			return g.buildErr(n, "the node is unreachable from graph.Start")
		}
	}
	if !forward[End] {
		return g.buildErr("", "graph.End is unreachable from graph.Start, so no run could finish")
	}
	preds := g.predecessors()
	backward := g.reach(End, func(n string) []string { return preds[n] })
	for _, n := range g.order {
		if !backward[n] {
			return g.buildErr(n, "graph.End cannot be reached from the node, so a run reaching it would loop until the step limit")
		}
	}
	return nil
}

func (g *Graph[S]) buildErr(node, reason string) *BuildError {
	return &BuildError{Graph: g.name, Node: node, Reason: reason}
}

func (g *Graph[S]) hasExit(n string) bool {
	_, ok := g.edges[n]
	return ok || g.branches[n] != nil
}

// successors lists the nodes that may run after n.
func (g *Graph[S]) successors(n string) []string {
	if to, ok := g.edges[n]; ok {
		return []string{to}
	}
	if b := g.branches[n]; b != nil {
		return b.targets
	}
	return nil
}

// predecessors maps each node to the nodes that may run just before it.
func (g *Graph[S]) predecessors() map[string][]string {
	preds := make(map[string][]string)
	for _, d := range g.decls {
		preds[d.to] = append(preds[d.to], d.from)
	}
	return preds
}

// reach returns the set of names reachable from start through next.
func (g *Graph[S]) reach(start string, next func(string) []string) map[string]bool {
	seen := map[string]bool{start: true}
	queue := []string{start}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, m := range next(n) {
			if !seen[m] {
				seen[m] = true
				queue = append(queue, m)
			}
		}
	}
	return seen
}
