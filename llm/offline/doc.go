// Package offline is Memento's default language-model provider: a
// deterministic, rule-based implementation of every task of
// memento.LanguageModel, and a hashing embedder, so that everything runs
// with no network and no model server.
//
// A message flows through one tokenizer (text.go) into tokens that remember
// the punctuation before them, so that no rule reads across a clause. From
// there:
//
//   - Request understanding (understand.go) runs the lexicons over the
//     tokens: genres and their synonyms (genres.go), years, decades and eras
//     (years.go), cast members looked up in the catalog (people.go), title
//     types, counts, topics, and the cues of rejections, follow-ups,
//     questions and small talk (cues.go). Negation scope (negation.go) keeps
//     "no horror" from becoming a horror constraint. The result is a change
//     of the thread's active context; what no rule understood is left unset.
//   - The memory tasks cut a message into clauses and rewrite first-person
//     clauses in the third person (clauses.go). Facts, the sentinel and the
//     extraction reviewer build on that (facts.go), attributes are assigned
//     by keyword categories (attributes.go), values are merged clause by
//     clause (merge.go), preferences are read from stance frames such as
//     "can't stand" and normalised to concepts (prefs.go), and clusters are
//     described from their members' signs (cluster.go).
//   - Summaries are extractive (summarise.go) and replies are templates
//     that name only the titles they are given (reply.go).
//   - The Embedder (embed.go) hashes words, bigrams, character n-grams and
//     the genre lexicon's concepts into a unit vector.
//
// Every lexicon is a data table, so widening what the rules understand is
// adding a row. A Model holds only tables built by New and is safe for
// concurrent use.
package offline
