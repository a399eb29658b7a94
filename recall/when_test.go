package recall

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/fulltext"
)

func TestAsksWhen(t *testing.T) {
	t.Parallel()
	for q, want := range map[string]bool{
		"When did Caroline go to the support group?": true,
		"How long ago was her 18th birthday?":        true,
		"In what year did she move?":                 true,
		"What did Melanie paint?":                    false,
		"How did Melanie feel?":                      false,
	} {
		if got := asksWhen(q); got != want {
			t.Errorf("asksWhen(%q) = %v, want %v", q, got, want)
		}
	}
}

// TestTimeScore checks the date and when parts: a turn that tells of the
// period a question names matches it though it was said later, a loose
// expression does not match a narrow period, and a question that asks
// when favours the turn that dates the event.
func TestTimeScore(t *testing.T) {
	t.Parallel()
	said := time.Date(2023, 7, 17, 14, 0, 0, 0, time.UTC)
	now := time.Date(2023, 10, 1, 0, 0, 0, 0, time.UTC)
	w := DefaultWeights
	part := func(query, text string) (date, when float64) {
		c := told(memento.RecallCandidate{Text: text, At: said})
		s := scored{c: &c}
		newTimeQuery(query, now).score(&s, w)
		return s.date, s.when
	}
	tests := []struct {
		query, text string
		date, when  float64
	}{
		{"What did she do on 8 July 2023?", "we went camping two weekends ago", 1, 0}, // said on Monday 17 July
		{"What did she do in June?", "we went camping two weekends ago", 0, 0},
		{"What did she do on 10 July 2023?", "it has been a busy year this year", 0, 0},
		{"What did she do in July?", "nothing much", 1, 0}, // said in July
		{"When did she go camping?", "we went camping two weekends ago", 0, 1},
		{"When did she go camping?", "camping is the best", 0, 0},
	}
	for _, tt := range tests {
		date, when := part(tt.query, tt.text)
		if date != tt.date || when != tt.when {
			t.Errorf("%q on %q: date %v when %v, want %v and %v", tt.query, tt.text, date, when, tt.date, tt.when)
		}
	}
}

func TestHopEntities(t *testing.T) {
	t.Parallel()
	texts := []string{
		`Caroline: I loved "Becoming Nicole" by Amy Ellis Nutt. Highly recommend it!`,
		"Melanie: We went to Paris in 2022, and then to Rome. It was great.",
	}
	got := hopEntities(texts, "What book did Caroline recommend?", 6)
	// Sentence-initial words ("Caroline:", "Highly", "It") and the query's
	// own terms are left out.
	want := []string{"becoming", "nicole", "amy", "ellis", "nutt", "paris"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hopEntities (-want +got):\n%s", diff)
	}
}

// TestCoverageMatchesTokens checks the fast coverage against the share
// computed with fulltext.Tokens, on words whose stems change their ends
// ("tries", "cry", "happily") and on text that is not ASCII.
func TestCoverageMatchesTokens(t *testing.T) {
	t.Parallel()
	texts := []string{
		"She tries to cry less; happily, the ponies are running at the café.",
		"Cafe TRIES Running pony happy", "", "a b c", "Amélie ran to the caves, crying",
		"ties, tied, tying; relational conditional generalization 2023 4th",
	}
	queries := []string{"pony tries cry", "Did she run to the cafe happily?", "ties relate conditions", "amelie cave", "what 2023 4th general"}
	for _, q := range queries {
		tq := newTimeQuery(q, time.Now())
		for _, text := range texts {
			c := memento.RecallCandidate{Text: text, Attribute: "HOBBY"}
			have := map[string]bool{}
			for _, x := range fulltext.Tokens(text + " HOBBY") {
				have[x] = true
			}
			n := 0
			for _, term := range tq.terms {
				if have[term] {
					n++
				}
			}
			want := float64(n) / float64(len(tq.terms))
			if got := tq.coverage(c); got != want {
				t.Errorf("coverage of %q in %q = %v, want %v", q, text, got, want)
			}
		}
	}
}

// told returns c with the times its text tells of, as a store resolves
// them when it writes the row.
func told(c memento.RecallCandidate) memento.RecallCandidate {
	periods, tells := fulltext.When(c.Text, c.At)
	c.Periods, c.TellsTime = nil, tells
	for _, p := range periods {
		c.Periods = append(c.Periods, memento.Period(p))
	}
	return c
}
