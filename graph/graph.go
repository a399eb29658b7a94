package graph

import (
	"context"
	"fmt"
)

// Start and End are the pseudo-nodes where every run begins and finishes.
// They cannot be added as nodes; edges from Start choose the first node and
// edges to End finish the run.
const (
	Start = "__start__"
	End   = "__end__"
)

// NodeFunc is one step of a graph: it receives the current state and returns
// the next one. An error stops the run; the state returned with an error is
// discarded.
type NodeFunc[S any] func(ctx context.Context, s S) (S, error)

// Router chooses the node that runs after a node with conditional edges. It
// must return one of the targets declared with AddConditionalEdges (End
// included); any other name fails the run.
type Router[S any] func(ctx context.Context, s S) (string, error)

// RouteBy adapts a pure function of the state to a Router, for the common
// case of a router that needs neither a context nor a way to fail.
func RouteBy[S any](f func(s S) string) Router[S] {
	return func(_ context.Context, s S) (string, error) { return f(s), nil }
}

// Graph is a state graph being built. Its methods record mistakes instead of
// returning them, so a graph reads as a list of declarations; Compile
// reports the first one. A Graph is not safe for concurrent use while it is
// being built; the Runnable that Compile returns is.
type Graph[S any] struct {
	name     string
	nodes    map[string]NodeFunc[S]
	order    []string          // node names in the order they were added
	edges    map[string]string // unconditional edges, from -> to
	branches map[string]*branch[S]
	decls    []edgeDecl // every edge, in declaration order, for validation
	errs     []error
}

// branch is the conditional exit of a node.
type branch[S any] struct {
	router  Router[S]
	targets []string
}

// edgeDecl remembers one declared edge so Compile can check its ends once
// every node is known, whatever the order of declarations.
type edgeDecl struct {
	from, to    string
	conditional bool
}

// New starts an empty graph. The name appears in errors and in checkpoint
// keys, so it should be stable and unique among the graphs that share a
// checkpointer.
func New[S any](name string) *Graph[S] {
	g := &Graph[S]{
		name:     name,
		nodes:    make(map[string]NodeFunc[S]),
		edges:    make(map[string]string),
		branches: make(map[string]*branch[S]),
	}
	if name == "" {
		g.fail("", "the graph name is empty; give it a stable name, it keys checkpoints")
	}
	return g
}

// Name returns the graph's name.
func (g *Graph[S]) Name() string { return g.name }

// AddNode adds a node. Names must be unique, non-empty and not Start or End.
func (g *Graph[S]) AddNode(name string, fn NodeFunc[S]) {
	switch {
	case name == "":
		g.fail(name, "a node name is empty")
	case name == Start || name == End:
		g.fail(name, fmt.Sprintf("%q is reserved for the graph's entry and exit and cannot be a node", name))
	case g.nodes[name] != nil:
		g.fail(name, "the node is added twice")
	case fn == nil:
		g.fail(name, "the node function is nil")
	default:
		g.nodes[name] = fn
		g.order = append(g.order, name)
	}
}

// AddEdge makes to always run after from. Use Start as from to name the
// first node and End as to to finish the run after from. A node has either
// one unconditional edge or one set of conditional edges.
func (g *Graph[S]) AddEdge(from, to string) {
	if !g.checkExit(from) {
		return
	}
	switch {
	case to == Start:
		g.fail(from, "an edge leads to graph.Start; Start can only be left, not entered")
		return
	case to == "":
		g.fail(from, "an edge leads to an empty node name")
		return
	}
	if prev, ok := g.edges[from]; ok {
		g.fail(from, fmt.Sprintf("the node has two unconditional exits (to %q and to %q); use AddConditionalEdges to choose between them", prev, to))
		return
	}
	if g.branches[from] != nil {
		g.fail(from, fmt.Sprintf("the node has conditional edges and an unconditional edge to %q; it may have only one kind of exit", to))
		return
	}
	g.edges[from] = to
	g.decls = append(g.decls, edgeDecl{from: from, to: to})
}

// AddConditionalEdges gives from a router that picks the next node among
// targets after from has run (or, for Start, picks the first node from the
// input state). Routing at run time to a name that is not among targets is
// an error.
func (g *Graph[S]) AddConditionalEdges(from string, router Router[S], targets ...string) {
	if !g.checkExit(from) {
		return
	}
	switch {
	case router == nil:
		g.fail(from, "the router of the conditional edges is nil")
		return
	case len(targets) == 0:
		g.fail(from, "conditional edges declare no targets")
		return
	case g.branches[from] != nil:
		g.fail(from, "the node has two sets of conditional edges; declare all targets in one call")
		return
	}
	if to, ok := g.edges[from]; ok {
		g.fail(from, fmt.Sprintf("the node has an unconditional edge to %q and conditional edges; it may have only one kind of exit", to))
		return
	}
	seen := make(map[string]bool, len(targets))
	for _, t := range targets {
		switch {
		case t == Start:
			g.fail(from, "a conditional edge leads to graph.Start; Start can only be left, not entered")
			return
		case t == "":
			g.fail(from, "a conditional edge leads to an empty node name")
			return
		case seen[t]:
			g.fail(from, fmt.Sprintf("conditional target %q is declared twice", t))
			return
		}
		seen[t] = true
	}
	g.branches[from] = &branch[S]{router: router, targets: append([]string(nil), targets...)}
	for _, t := range targets {
		g.decls = append(g.decls, edgeDecl{from: from, to: t, conditional: true})
	}
}

// checkExit records a mistake in the source of an edge and reports whether
// the edge may be added.
func (g *Graph[S]) checkExit(from string) bool {
	switch from {
	case End:
		g.fail(from, "an edge leaves graph.End; a run finishes there")
		return false
	case "":
		g.fail(from, "an edge leaves an empty node name")
		return false
	}
	return true
}

// fail records a build mistake for Compile to report.
func (g *Graph[S]) fail(node, reason string) {
	g.errs = append(g.errs, &BuildError{Graph: g.name, Node: node, Reason: reason})
}
