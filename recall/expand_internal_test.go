package recall

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
)

// TestRecollection checks which words the user's memories add to a query:
// the entities of the clauses that hold the query's terms (not of the
// other clauses of the same value), weighed by the share of the query the
// clause holds; a memory whose attribute the query names gives the
// entities of every clause, at half weight; none without a keyword match.
func TestRecollection(t *testing.T) {
	t.Parallel()
	mems := []memento.RecallCandidate{
		{ID: "f", Attribute: "FAMILY", Text: "has a dog named Rex; sister Ana lives in Porto", BM25: 2},
		{ID: "h", Attribute: "HOBBY", Text: "plays cello with the Riverside Quartet", BM25: 0},
	}
	type got struct {
		Word   string
		Weight float64
	}
	ask := func(query string) []got {
		var out []got
		for _, x := range recollection(mems, query, newTimeQuery(query, time.Now()), 10) {
			out = append(out, got{x.word, x.weight})
		}
		return out
	}
	if diff := cmp.Diff([]got{{"rex", 0.5}}, ask("What did my dog eat?")); diff != "" {
		t.Errorf("dog (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]got{{"rex", 0.5}, {"ana", 0.5}, {"porto", 0.5}}, ask("family")); diff != "" {
		t.Errorf("the attribute (-want +got):\n%s", diff)
	}
	// The hobby memory did not match by keyword (BM25 0), so its names
	// are not read, though its text holds the query's word.
	if got := ask("Which quartet does she play with?"); len(got) != 0 {
		t.Errorf("a memory that did not match gave %v", got)
	}
}
