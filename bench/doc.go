// Package bench measures Memento under synthetic but realistic load on the
// embedded store, the figures `memento bench` prints and docs/BENCHMARKS.md
// shows.
//
// # How data flows
//
// Run first builds the store. A Vocab drawn from the real catalog (titles,
// genres, cast) gives users something to talk about; GenerateUser makes
// one user deterministically from a seed: threads of user statements and
// assistant replies spread over a year, the memories the pipeline would
// have learned from them (the movie schema's semantic attributes, each
// new value superseding the last, and episodes), a run record for every
// user message, events and signed preference concepts. Workers generate
// and embed users in parallel; one writer stores them with sqlite.Bulk in
// transactions of tens of thousands of rows, each batch's rows in time
// order, so a user's rows are spread through the tables as in a live
// store. By default 10,000 background users hold 100 memories each and 100
// measured users 1,000 each: about 1.1 million memories.
//
// Then it measures, one operation at a time: catalog search, DBSCAN over
// 10,000 preference vectors, context assembly for measured users (reads);
// chat turns with the offline model and message-log acknowledgements
// (writes, durable before they return); the attribute-memory pipeline run
// directly over the messages just acknowledged (messages per second, with
// Config.PipelineRuns of them in flight, by default 16 per processor: a
// run mostly waits for its commit, and the store's group commit writes
// the runs waiting together in one transaction); and, when the caller can start the background
// workers, the message log end to end (append with jobs, workers drain the
// queue). Last come the store's size on disk, the process's peak resident
// memory (VmHWM) and the machine. Plot draws latency histograms and
// throughput.
package bench
