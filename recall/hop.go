package recall

import (
	"context"
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/fulltext"
)

// A question often names one side of what it asks about: "What book did
// Melanie read from Caroline's suggestion?" matches the turn where the
// book is discussed, but the turn that names it ("Becoming Nicole") shares
// no word with the question. The second hop asks the store again with the
// entities of the best first hits (the names, titles and places they
// mention) and lifts what matches them: the user's own memories expand the
// query, with no list of synonyms.

// hopEntities returns the entity words of the texts, for the second hop:
// capitalised words that do not start a sentence (names, titles, places,
// "LGBTQ") and words with digits in them, that are not stop words and not
// already terms of the query; at most n, in order of first mention.
func hopEntities(texts []string, query string, n int) []string {
	have := map[string]bool{}
	for _, w := range fulltext.QueryWords(query) {
		have[fulltext.Term(w)] = true
	}
	var out []string
	for _, text := range texts {
		start := true // at the start of a sentence
		for _, f := range strings.Fields(text) {
			word := strings.TrimFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
			initial := start
			last, _ := utf8.DecodeLastRuneInString(f)
			start = last == '.' || last == '!' || last == '?' || last == ':' || last == '"' && strings.ContainsAny(f, ".!?")
			if word == "" {
				continue
			}
			first, _ := utf8.DecodeRuneInString(word)
			digits := strings.IndexFunc(word, unicode.IsDigit) >= 0
			if !(unicode.IsUpper(first) && !initial) && !digits {
				continue
			}
			lower := strings.ToLower(word)
			if fulltext.Stopword(lower) || len(word) < 2 {
				continue
			}
			t := fulltext.Term(lower)
			if t == "" || have[t] {
				continue
			}
			have[t] = true
			out = append(out, lower)
			if len(out) == n {
				return out
			}
		}
	}
	return out
}

// secondHop runs the second hop over a recaller's scored first hits:
// it takes the entities of the DefaultHops best keyword matches, asks
// fetch for the DefaultHopKeyword best matches of them, and gives every
// item its expand part (BM25 of the second query over the best BM25 of
// the first, at most 1). Items new to the set are scored like the first
// hits, without a first-query BM25, and are relevant when they match.
func secondHop(_ context.Context, items []scored, cands []memento.RecallCandidate, q memento.RecallQuery, w Weights, tq timeQuery, qv []float32, embedder string, fetch func(memento.CandidateQuery) ([]memento.RecallCandidate, error)) ([]scored, error) {
	best := 0.0
	for _, c := range cands {
		best = math.Max(best, c.BM25)
	}
	if best == 0 {
		return items, nil
	}
	order := make([]int, 0, len(items))
	for i, s := range items {
		if s.bm25 > 0 {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return items[order[a]].score > items[order[b]].score })
	var texts []string
	source := map[string]bool{}
	for _, i := range order[:min(len(order), DefaultHops)] {
		texts = append(texts, items[i].c.Text)
		source[items[i].c.ID] = true
	}
	ents := hopEntities(texts, q.Query, DefaultHopTerms)
	if len(ents) == 0 {
		return items, nil
	}
	more, err := fetch(memento.CandidateQuery{Query: strings.Join(ents, " "), Keyword: DefaultHopKeyword})
	if err != nil {
		return nil, err
	}
	return lift(items, more, func(c memento.RecallCandidate) float64 {
		// A first hit is not lifted by its own entities.
		if source[c.ID] {
			return 0
		}
		return math.Min(1, c.BM25/best)
	}, func(s *scored, x float64) { s.expand = x }, w.Expand, q, w, tq, qv, embedder), nil
}
