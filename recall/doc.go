// Package recall brings memories back for a prompt, with no language-model
// call: the read side of attribute memory.
//
// # How data flows
//
// A query (user, optional thread, text, k) goes to an Assembler. It reads
// the thread's active context and latest summary and the user's current
// semantic attribute values, embeds the query once, and asks each of its
// memento.Recallers for candidates:
//
//   - Memories: the store's best BM25 matches over current memory values
//     and its most recent memories, each with its stored embedding;
//   - Messages: the best BM25 matches over past messages, the messages
//     next to each match in its thread, and the most recent messages;
//   - any other recaller added to Assembler.Recallers (preferences,
//     profiles).
//
// A recaller scores its bounded candidate set in Go (see Weights): BM25
// normalised by the best match, cosine similarity of embeddings by the
// same embedder, exponential recency and, for messages, the relevance of
// the neighbouring turns; for a query that names or asks for a time, the
// periods the item's text tells of, which the store resolved against the
// item's own time when it wrote the item (memento.RecallCandidate.Periods,
// when.go); a second hop over the entities of the best first hits
// (hop.go); and an expansion from the user's own memories: the names the
// memories that match the query hold ("Rex" for "my dog", expand.go).
// Every item keeps its score breakdown and its sources (message ids). The
// assembler merges the recallers' items by score, counting a message and
// the memories drawn from it once (an episode stands in for its message),
// keeps k, and renders everything as one text block with an estimated
// token count (memento.EstimateTokens).
//
// The store bounds every candidate query, so the read path never scans a
// user's whole history: with the defaults, at most about 400 candidates
// are scored however many memories a user has.
//
// # The warm index
//
// New puts an Index between the recallers and a store that keeps a change
// log (memento.RecallCorpus). The Index holds each recently active user's
// current memories and messages in memory (terms and their BM25
// statistics, times, thread positions, int8 embeddings) and answers the
// candidate queries itself, with the same bounds and rules as the store,
// ranking by BM25 over the user's own documents. Before each query it
// reads the user's changes since its last position in the log, so it is
// never stale; a user is read in full on first use, after eviction (least
// recently used past the budget), and when the log was pruned past the
// index's position. Its cost grows with the user's history alone, where
// the store's shared full-text indexes grow with everyone's.
package recall
