package recall

import (
	"math"
	"sort"
	"strings"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/fulltext"
)

// A question often names what the user's turns call by another name: "my
// dog" where the turns say "Rex", "her music" where they say "Bach". The
// user's own memories hold those aliases: the memory "has a dog named Rex"
// matches the question by "dog" and gives "Rex"; a HOBBY value matches
// "hobbies" by its attribute and gives the names it holds. recollection
// reads them from the memories a query matches, clause by clause (a
// semantic value merges many statements, "; " apart), and the recallers
// ask again with them, weighted below the question's own words and the
// second hop (Weights.Recollect). Nothing here knows any word or name:
// the expansions are whatever the user's memories say.

// Bounds of the expansion from memories: the memory candidates it reads,
// the clauses it takes its words from, and the words it asks with.
const (
	DefaultRecollectMemories = 10
	DefaultRecollectClauses  = 6
	DefaultRecollectTerms    = 10
)

// clause is one statement of a memory that matches a query.
type clause struct {
	text  string
	score float64 // share of the query's terms it holds, its attribute's counted half
	rank  int     // its memory's place among the matches
}

// expansion is a word the user's memories add to a query, with the share
// of the query's terms its clause holds (at most 1): a word from a clause
// that holds all the question's terms speaks for the question fully, one
// from a clause that holds one term of four a quarter, as pseudo-relevance
// feedback weighs a feedback document's words by its relevance.
type expansion struct {
	word   string
	weight float64
}

// recollection returns the words that the memories among mems that match
// the query add to it: the entities (names, titles, places, numbers;
// hopEntities) of their clauses that hold the query's terms, from the
// DefaultRecollectClauses best by the share of the terms they hold (a
// clause of a memory whose attribute the query names counts half a match
// more), none already a term of the query; at most n, each weighed by its
// best clause.
//
// Only entities are taken. The other words of a matching clause were
// tried too, on LoCoMo: they lowered evidence recall@10 from 0.823 to
// 0.790, since a clause shares its common words ("kids", "family") with
// many unrelated turns (docs/BENCHMARKS.md).
func recollection(mems []memento.RecallCandidate, query string, tq timeQuery, n int) []expansion {
	if len(tq.terms) == 0 {
		return nil
	}
	var matched []memento.RecallCandidate
	for _, c := range mems {
		if c.BM25 > 0 && mayNameEntity(c.Text) {
			matched = append(matched, c)
		}
	}
	sort.SliceStable(matched, func(i, j int) bool { return matched[i].BM25 > matched[j].BM25 })
	var clauses []clause
	for r, c := range matched {
		attr := tq.coverage(memento.RecallCandidate{Attribute: c.Attribute})
		for _, part := range strings.Split(c.Text, ";") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			own := tq.coverage(memento.RecallCandidate{Text: part})
			if own == 0 && attr == 0 {
				continue
			}
			clauses = append(clauses, clause{text: part, score: math.Min(1, own+attr/2), rank: r})
		}
	}
	sort.SliceStable(clauses, func(i, j int) bool {
		if clauses[i].score != clauses[j].score {
			return clauses[i].score > clauses[j].score
		}
		return clauses[i].rank < clauses[j].rank
	})
	var out []expansion
	seen := map[string]bool{}
	for _, c := range clauses[:min(len(clauses), DefaultRecollectClauses)] {
		for _, w := range hopEntities([]string{c.text}, query, n) {
			if len(out) == n {
				return out
			}
			// Clauses come best first, so a word's first clause is its
			// best.
			if t := fulltext.Term(w); !seen[t] {
				seen[t] = true
				out = append(out, expansion{word: w, weight: c.score})
			}
		}
	}
	return out
}

// mayNameEntity reports whether text may hold a word hopEntities takes: a
// digit, or a capital letter after its first byte (or any byte past
// ASCII, which it must read in full). Most memories hold none, and then
// cost one pass instead of a split and a coverage per clause.
func mayNameEntity(text string) bool {
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c >= '0' && c <= '9' || c >= 0x80 || i > 0 && c >= 'A' && c <= 'Z' {
			return true
		}
	}
	return false
}

// recollect lifts the items that match the words the user's memories add
// to the query (recollection): it asks fetch for the DefaultHopKeyword
// best matches of them and gives every item its recollect part: BM25 of
// that query over the best BM25 of the first (at most 1), times the
// weight of the best of the words the item holds. Items new to the set
// are scored like the first hits and are relevant when they match.
func recollect(items []scored, cands []memento.RecallCandidate, words []expansion, q memento.RecallQuery, w Weights, tq timeQuery, qv []float32, embedder string, fetch func(memento.CandidateQuery) ([]memento.RecallCandidate, error)) ([]scored, error) {
	best := 0.0
	for _, c := range cands {
		best = math.Max(best, c.BM25)
	}
	if best == 0 || len(words) == 0 {
		return items, nil
	}
	query := make([]string, len(words))
	weight := make(map[string]float64, len(words))
	for i, x := range words {
		query[i] = x.word
		weight[fulltext.Term(x.word)] = x.weight
	}
	more, err := fetch(memento.CandidateQuery{Query: strings.Join(query, " "), Keyword: DefaultHopKeyword})
	if err != nil {
		return nil, err
	}
	// An item counts by the best clause among the words it holds.
	held := func(c memento.RecallCandidate) float64 {
		best := 0.0
		for _, t := range fulltext.Tokens(c.Text + " " + c.Attribute) {
			best = math.Max(best, weight[t])
		}
		return best
	}
	return lift(items, more, func(c memento.RecallCandidate) float64 { return math.Min(1, c.BM25/best) * held(c) },
		func(s *scored, x float64) { s.recollect = x }, w.Recollect, q, w, tq, qv, embedder), nil
}

// lift adds the matches of a further query (more) to a recaller's scored
// items: part gives each match its part (0 leaves it out), set records it
// and weight weighs it into the score. A match already among the items is
// raised and made relevant; one new to them is scored like the first hits,
// without a first-query BM25, and is relevant.
func lift(items []scored, more []memento.RecallCandidate, part func(memento.RecallCandidate) float64, set func(*scored, float64), weight float64,
	q memento.RecallQuery, w Weights, tq timeQuery, qv []float32, embedder string) []scored {
	at := make(map[string]int, len(items))
	for i, s := range items {
		at[s.c.ID] = i
	}
	var fresh []memento.RecallCandidate
	parts := map[string]float64{}
	for _, c := range more {
		x := 0.0
		if c.BM25 > 0 {
			x = part(c)
		}
		if x <= 0 {
			continue
		}
		if i, ok := at[c.ID]; ok {
			s := &items[i]
			set(s, x)
			s.score += weight * x
			s.relevant = true
			continue
		}
		parts[c.ID] = x
		c.BM25 = 0
		fresh = append(fresh, c)
	}
	for _, s := range score(fresh, qv, embedder, q.Now, w, true, tq) {
		set(&s, parts[s.c.ID])
		s.score += weight * parts[s.c.ID]
		s.relevant = true
		items = append(items, s)
	}
	return items
}
