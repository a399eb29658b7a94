package recall

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/fulltext"
)

func TestTimeSpans(t *testing.T) {
	t.Parallel()
	// Friday 9 June 2023.
	at := time.Date(2023, 6, 9, 14, 0, 0, 0, time.UTC)
	d := func(m time.Month, day int) time.Time { return time.Date(2023, m, day, 0, 0, 0, 0, time.UTC) }
	tests := []struct {
		text string
		in   []time.Time // days the expression must cover
		out  []time.Time // days it must not
		told bool
	}{
		{"I went to a support group yesterday.", []time.Time{d(6, 8)}, []time.Time{d(6, 9), d(6, 7)}, true},
		{"We went camping last week", []time.Time{d(5, 29), d(6, 2)}, []time.Time{d(6, 8), d(5, 20)}, true},
		{"my sister visited two weeks ago", []time.Time{d(5, 26)}, []time.Time{d(6, 9)}, true},
		{"we went camping with my fam two weekends ago", []time.Time{d(5, 27)}, []time.Time{d(6, 9)}, true},
		{"a few days ago I ran a race", []time.Time{d(6, 6)}, []time.Time{d(5, 20)}, true},
		{"I moved here 4 years ago", []time.Time{d(1, 1).AddDate(-4, 0, 0)}, []time.Time{d(1, 1)}, true},
		{"the pottery class was on Tuesday", []time.Time{d(6, 6)}, []time.Time{d(6, 9)}, true},
		{"Next month I'm having an art show", []time.Time{d(7, 15)}, []time.Time{d(6, 15)}, true},
		{"I painted it in May", []time.Time{d(5, 10)}, []time.Time{d(6, 1)}, true},
		{"in December 2022 we moved", []time.Time{d(12, 10).AddDate(-1, 0, 0)}, []time.Time{d(12, 10)}, true},
		{"I have known them for 4 years", nil, nil, true},
		{"We have loved painting together lately", nil, nil, true},
		// "may" and "march" as verbs are no months.
		{"You may march on", nil, []time.Time{d(5, 10), d(3, 10)}, false},
		{"Thanks, that sounds great!", nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			spans, told := timeSpans(tt.text, at)
			if told != tt.told {
				t.Errorf("told = %v, want %v", told, tt.told)
			}
			covers := func(day time.Time) bool {
				for _, s := range spans {
					if s.overlaps(span{day, day.AddDate(0, 0, 1)}) {
						return true
					}
				}
				return false
			}
			for _, day := range tt.in {
				if !covers(day) {
					t.Errorf("spans %v do not cover %s", spans, day.Format("2 Jan 2006"))
				}
			}
			for _, day := range tt.out {
				if covers(day) {
					t.Errorf("spans %v cover %s", spans, day.Format("2 Jan 2006"))
				}
			}
		})
	}
}

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
		s := scored{c: memento.RecallCandidate{Text: text, At: said}}
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

// TestMayTellTime checks the cheap test before scanTime: every text that
// scanTime dates passes it.
func TestMayTellTime(t *testing.T) {
	t.Parallel()
	at := time.Date(2023, 6, 9, 14, 0, 0, 0, time.UTC)
	for _, text := range []string{
		"I went yesterday", "Last week was fun", "on TUESDAY", "two weeks ago", "in May", "for 4 years",
		"lately I paint", "this weekend", "for two years now", "a couple of months", "Amélie came", "nothing here at all", "wonderful day", "", "Ago",
	} {
		spans, told := scanTime(text, at, true)
		if (told || len(spans) > 0) && !mayTellTime(text) {
			t.Errorf("mayTellTime(%q) = false, but scanTime reads %v, %v", text, spans, told)
		}
	}
	for _, text := range []string{"nothing here at all", "wonderful weather", "thanks, that sounds great!"} {
		if mayTellTime(text) {
			t.Errorf("mayTellTime(%q) = true", text)
		}
	}
}
