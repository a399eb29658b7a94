// Package agent runs the recommendation agent's turn loop and its
// short-term memory.
//
// A turn flows like this: load the thread's state (active context and the
// titles shown last) and its latest summary; ask the language model what the
// message wants, as a change to the active context; apply that change in
// code (follow-ups refine, new requests replace, rejections add the shown
// titles to the exclusions); page through the catalog with the exclusions
// until enough unseen titles are found; rank them; write a reply that names
// only those titles; and store the two messages, the new state and the
// background jobs for the turn (the summary, and whatever else the
// composition adds) in one transaction.
//
// The summary job (SummaryWorker) runs after the reply has been returned and
// folds the exchange into the thread's append-only summary list, which the
// next turn reads.
package agent
