// Package graph is a small typed state-graph engine, in the manner of
// LangGraph's StateGraph and eino's compose package. The attribute-memory
// pipeline (sentinel, extractor, reviewer, attributor, aggregator, aggregator
// reviewer, with repair loops) is written as one of these graphs.
//
// A graph is generic over one state type S. Each node is a function that
// takes the state and returns the next state. Edges say which node runs
// next: an unconditional edge always leads to the same node, and
// conditional edges ask a router function, which must name one of the
// targets declared with the edges. The pseudo-nodes Start and End mark where
// a run begins and where it finishes.
//
// Data flows like this:
//
//	New -> AddNode / AddEdge / AddConditionalEdges   (mistakes are recorded)
//	    -> Compile(options)                          (first mistake or structural
//	                                                  problem as a *BuildError)
//	    -> Runnable.Run(ctx, runID, input)           (Start -> node -> ... -> End)
//	    -> Result{State, Trace}
//
// A run takes at most a step limit of node executions (WithStepLimit), so a
// repair loop that never converges fails with a *StepLimitError instead of
// spinning. Every node execution is recorded as a Step in the trace, which is
// returned with the result, on success and on failure alike.
//
// With a Checkpointer (WithCheckpointer), the state and the trace are saved
// after every node, keyed by the graph's name and the run id. Running the
// same run id again after a crash or a failed node resumes at the node that
// had not yet completed, and running a finished run id returns its stored
// final state without executing anything, which makes a pipeline job
// idempotent. States are JSON-encoded in checkpoints, so only their
// exported, JSON-visible fields survive a resume.
//
// A node that panics does not crash the process: the panic becomes a
// *NodeError (wrapping a *PanicError) naming the node, so the job running the
// graph fails visibly and can be retried.
package graph
