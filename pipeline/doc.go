// Package pipeline is Memento's attribute memory: the background pipeline
// that decides what of a user's message to remember, built on the typed
// state graph of package graph.
//
// # How data flows
//
// A message stored in the message log comes with a remember job
// (memento.JobRemember) in its user's backlog: a batch of the user's
// messages takes the user's lock (Worker.Lock) and runs ProcessMessage
// over each in the order they were stored, so semantic values change in
// the order things were said. A job that fails in a batch runs on its
// own: Worker.Handle takes the user's lock, processes the user's earlier
// unprocessed messages first and then the message. Either way the graph
// runs over the message:
//
//	hygiene -> sentinel -> extract <-> review_extraction -> attribute
//	        -> aggregate <-> review_merge -> store (-> aggregate on a conflict)
//
// The steps:
//
//   - hygiene (no model call, rules in package hygiene) refuses text that
//     instructs the system ("ignore previous instructions", "always
//     recommend X", "you are now ...", "I am the developer of this app",
//     imitated system messages, the same in other languages), in a user
//     message alone or joined with the user's previous message in the
//     thread: the run is recorded as rejected with its reasons and nothing
//     is stored. Messages not written by the user are only indexed for
//     recall, unless they fail the rules of their role: then they are
//     rejected too, which keeps them out of recall.
//     The same read of the thread finds the agent's turn just before the
//     message and the thread's latest summary of earlier messages
//     (readConversation): the extractor gets both (ExtractInput.Asked and
//     Summary), so a short answer ("Mostly Netflix, sometimes Hulu."
//     after "Which service do you watch on?") becomes the facts it
//     states, and the extraction reviewer reads the message with the
//     question it answers ("Agent: <question>\nUser: <message>").
//   - sentinel asks the model whether anything is worth remembering; most
//     turns ("sounds good") end here after one call. The sentinel reads
//     the message alone, so a message that answers the agent's question
//     goes on to the extractor even when the sentinel says no.
//   - extract lists the facts; review_extraction compares them with the
//     message and sends them back with a repair note (at most MaxRepairs
//     times, 3 by default). Facts the reviewer still disputes are dropped.
//   - attribute gives each fact one attribute of the schema; facts with
//     none are dropped and counted. Each attribute's mode (semantic or
//     episodic) comes from the schema unless the user overrides it.
//   - aggregate merges each semantic fact into its attribute's current
//     value; review_merge catches a merge that lost information and sends
//     it back (bounded like the extractor). The aggregator also finds what
//     the new facts supersede in the user's other semantic values ("has
//     come around on horror" ends "can't stand horror").
//   - store writes everything in one transaction: new values, the values
//     they supersede (kept, with validTo), episodes stamped with the
//     message's time, the run record (outcome, trace, rejected reasons,
//     dropped count), the message's and memories' embeddings. It fails
//     with a conflict when another run changed a value meanwhile, and the
//     graph merges again over fresh values.
//
// Runs of different users proceed in parallel, and most of a run with the
// offline model is the wait for its write to be durable; the embedded
// store commits the writes of the runs waiting at the same moment in one
// transaction (group commit), so throughput grows with the runs in
// flight: the queue runs sqlite.DefaultWorkers (16) jobs at once, more
// than the processors of a small machine.
//
// The graph checkpoints its state in the store (keyed by the message id),
// at most every Options.CheckpointAfter, so a process that dies mid-run
// resumes there. The stored run record marks the message as processed: a
// message processed twice, or a job retried after its write, creates
// nothing new.
//
// Schemas are data: the built-in movie and generic schemas are JSON files
// embedded from schemas/, and LoadSchema reads another from a file.
package pipeline
