package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/memento-ai/memento"
)

// Outcomes of a step other than a routed-to node name.
const (
	// OutcomeOK marks a node that succeeded and left by its unconditional
	// edge.
	OutcomeOK = "ok"
	// OutcomeError marks a node, or its router, that failed.
	OutcomeError = "error"
)

// Step is one node execution in a run's trace.
type Step struct {
	Node     string        `json:"node"`
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"duration"`
	// Outcome is OutcomeOK, OutcomeError, or, for a node with conditional
	// edges, the name of the node the router chose (End included).
	Outcome string `json:"outcome"`
	// Err is the error message when Outcome is OutcomeError.
	Err string `json:"err,omitempty"`
}

// Result is what a run produced. On error, State is the state after the last
// node that succeeded (the input if none did) and Trace holds every step
// taken, the failed one last.
type Result[S any] struct {
	State S
	Trace []Step
	// Resumed is true when the run started from a saved checkpoint instead
	// of from its input: a resumed unfinished run, or a finished one whose
	// stored result was returned without executing anything.
	Resumed bool
}

// Runnable is a compiled graph. It is immutable and safe for concurrent
// runs, as long as two runs never share a run id at the same time.
type Runnable[S any] struct {
	name      string
	nodes     map[string]NodeFunc[S]
	edges     map[string]string
	branches  map[string]branch[S]
	stepLimit int
	cp        Checkpointer
	clock     memento.Clock
}

// Name returns the graph's name.
func (r *Runnable[S]) Name() string { return r.name }

// CheckpointKey returns the key under which the checkpointer stores the
// run's progress.
func (r *Runnable[S]) CheckpointKey(runID string) string { return r.name + "/" + runID }

// Forget deletes the run's checkpoint, so the next Run with this id starts
// from its input. Without a checkpointer it does nothing.
func (r *Runnable[S]) Forget(ctx context.Context, runID string) error {
	if r.cp == nil {
		return nil
	}
	if err := r.cp.Delete(ctx, r.CheckpointKey(runID)); err != nil {
		return fmt.Errorf("graph %q run %q: delete checkpoint: %w", r.name, runID, err)
	}
	return nil
}

// Run executes the graph from Start until End, beginning with in. With a
// checkpointer, runID keys the saved progress: an unfinished run resumes at
// its saved next node with its saved state (in is ignored), and a finished
// run returns its stored result without executing any node. Without one,
// runID only labels errors. Nodes may run more than once when a run is
// retried after a crash (at-least-once), but never again once their result
// is checkpointed.
//
// Errors: *NodeError when a node or a router fails or panics (wrapping the
// cause), *StepLimitError when the step limit is reached, ctx's error
// (wrapped) when ctx is done between nodes, and memento EINVALID when runID
// is empty while a checkpointer is set.
func (r *Runnable[S]) Run(ctx context.Context, runID string, in S) (Result[S], error) {
	res := Result[S]{State: in}
	next := ""
	if r.cp != nil {
		if runID == "" {
			return res, memento.Errorf(memento.EINVALID, "graph %q: a run id is required when a checkpointer is set", r.name)
		}
		cp, ok, err := r.cp.Load(ctx, r.CheckpointKey(runID))
		if err != nil {
			return res, fmt.Errorf("graph %q run %q: load checkpoint: %w", r.name, runID, err)
		}
		if ok {
			if next, err = r.restore(runID, cp, &res); err != nil || cp.Done {
				return res, err
			}
		} else if _, err := json.Marshal(in); err != nil {
			// Fail before any node runs rather than after the first one.
			return res, fmt.Errorf("graph %q run %q: the state cannot be checkpointed: %w", r.name, runID, err)
		}
	}
	if next == "" {
		if to, ok := r.edges[Start]; ok {
			next = to
		} else {
			to, err := r.route(ctx, Start, in)
			if err != nil {
				return res, &NodeError{Graph: r.name, RunID: runID, Node: Start, Routing: true, Err: err}
			}
			next = to
		}
	}
	for next != End {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("graph %q run %q: stopped before node %q: %w", r.name, runID, next, err)
		}
		if len(res.Trace) >= r.stepLimit {
			return res, &StepLimitError{Graph: r.name, RunID: runID, Limit: r.stepLimit, Next: next, Trace: slices.Clone(res.Trace)}
		}
		step := Step{Node: next, Started: r.clock.Now()}
		out, err := r.call(ctx, next, res.State)
		routing := false
		to := ""
		if err == nil {
			if t, ok := r.edges[next]; ok {
				to = t
				step.Outcome = OutcomeOK
			} else if to, err = r.route(ctx, next, out); err == nil {
				step.Outcome = to
			} else {
				routing = true
			}
		}
		step.Duration = r.clock.Now().Sub(step.Started)
		if err != nil {
			step.Outcome = OutcomeError
			step.Err = err.Error()
			res.Trace = append(res.Trace, step)
			return res, &NodeError{Graph: r.name, RunID: runID, Node: next, Routing: routing, Err: err}
		}
		res.State = out
		res.Trace = append(res.Trace, step)
		if r.cp != nil {
			if err := r.save(ctx, runID, to, res); err != nil {
				return res, err
			}
		}
		next = to
	}
	return res, nil
}

// restore loads a saved checkpoint into res and returns the node to resume
// at.
func (r *Runnable[S]) restore(runID string, cp *Checkpoint, res *Result[S]) (string, error) {
	if cp.Graph != r.name {
		return "", fmt.Errorf("graph %q run %q: the checkpoint belongs to graph %q", r.name, runID, cp.Graph)
	}
	var s S
	if err := json.Unmarshal(cp.State, &s); err != nil {
		return "", fmt.Errorf("graph %q run %q: decode checkpointed state: %w", r.name, runID, err)
	}
	if !cp.Done && r.nodes[cp.Next] == nil {
		return "", fmt.Errorf("graph %q run %q: the checkpoint resumes at unknown node %q; the graph changed since it was saved, so Forget the run to restart it",
			r.name, runID, cp.Next)
	}
	res.State = s
	res.Trace = slices.Clone(cp.Trace)
	res.Resumed = true
	return cp.Next, nil
}

// save checkpoints the run after a completed node.
func (r *Runnable[S]) save(ctx context.Context, runID, next string, res Result[S]) error {
	if p, ok := r.cp.(Pacer); ok && !p.Due(next == End) {
		return nil
	}
	state, err := json.Marshal(res.State)
	if err != nil {
		return fmt.Errorf("graph %q run %q: encode state after node %q: %w", r.name, runID, res.Trace[len(res.Trace)-1].Node, err)
	}
	cp := Checkpoint{
		Graph:   r.name,
		Next:    next,
		State:   state,
		Trace:   res.Trace,
		Done:    next == End,
		SavedAt: r.clock.Now(),
	}
	if err := r.cp.Save(ctx, r.CheckpointKey(runID), cp); err != nil {
		return fmt.Errorf("graph %q run %q: save checkpoint before node %q: %w", r.name, runID, next, err)
	}
	return nil
}

// call runs one node, turning a panic into an error.
func (r *Runnable[S]) call(ctx context.Context, node string, s S) (out S, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return r.nodes[node](ctx, s)
}

// route asks the router of from for the next node and checks that it is a
// declared target, turning a panic into an error.
func (r *Runnable[S]) route(ctx context.Context, from string, s S) (to string, err error) {
	b := r.branches[from]
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	to, err = b.router(ctx, s)
	if err != nil {
		return "", err
	}
	if !slices.Contains(b.targets, to) {
		return "", fmt.Errorf("the router chose %q, which is not a declared target (declared: %s)", to, strings.Join(b.targets, ", "))
	}
	return to, nil
}
