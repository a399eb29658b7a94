package graph

import (
	"fmt"
	"strings"
)

// BuildError is a mistake in a graph's declaration, reported by Compile.
// Node is the node the mistake concerns, or empty when it concerns the
// graph as a whole.
type BuildError struct {
	Graph  string
	Node   string
	Reason string
}

// Error implements the error interface.
func (e *BuildError) Error() string {
	if e.Node == "" {
		return fmt.Sprintf("graph %q: %s", e.Graph, e.Reason)
	}
	return fmt.Sprintf("graph %q: node %q: %s", e.Graph, e.Node, e.Reason)
}

// NodeError is the failure of one node, or of its router, during a run. It
// wraps the node's error, so errors.Is and errors.As (and
// memento.ErrorCode) see through it.
type NodeError struct {
	Graph string
	RunID string
	Node  string
	// Routing is true when the node itself succeeded and choosing the next
	// node failed.
	Routing bool
	Err     error
}

// Error implements the error interface.
func (e *NodeError) Error() string {
	what := "node"
	if e.Routing {
		what = "routing after node"
	}
	return fmt.Sprintf("graph %q run %q: %s %q: %v", e.Graph, e.RunID, what, e.Node, e.Err)
}

// Unwrap returns the node's own error.
func (e *NodeError) Unwrap() error { return e.Err }

// PanicError is a panic inside a node or a router, turned into an error so a
// failing pipeline job fails visibly instead of crashing the process. It is
// wrapped in a *NodeError that names the node.
type PanicError struct {
	Value any
	// Stack is the goroutine's stack at the panic, for the log.
	Stack []byte
}

// Error implements the error interface.
func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Unwrap returns the panic value when it is an error (such as a runtime
// error), so errors.As can find it.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// StepLimitError reports a run stopped because it was about to execute more
// nodes than the step limit allows, which usually means a repair loop does
// not converge. Trace is every step taken, the earlier attempts of a resumed
// run included.
type StepLimitError struct {
	Graph string
	RunID string
	Limit int
	// Next is the node that would have run.
	Next  string
	Trace []Step
}

// Error implements the error interface.
func (e *StepLimitError) Error() string {
	const tail = 8
	names := make([]string, 0, tail+1)
	start := 0
	if len(e.Trace) > tail {
		start = len(e.Trace) - tail
		names = append(names, "...")
	}
	for _, s := range e.Trace[start:] {
		names = append(names, s.Node)
	}
	return fmt.Sprintf("graph %q run %q: step limit of %d reached before node %q; the graph may be looping (last steps: %s)",
		e.Graph, e.RunID, e.Limit, e.Next, strings.Join(names, " -> "))
}
