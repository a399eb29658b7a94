package recall

import (
	"slices"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/fulltext"
)

// A message tells when things happened in words relative to when it was
// said ("yesterday", "last week", "in May"); the store resolves those
// expressions against the message's own time when it writes the message
// (fulltext.When) and hands them over with each candidate
// (memento.RecallCandidate.Periods). Here a query's own times are read and
// matched against them.

// asksWhen reports whether a question asks for a time: "when", "what
// year", "how long ago", "since when" and the like.
func asksWhen(query string) bool {
	words := fulltext.Words(query)
	for i, w := range words {
		switch w {
		case "when":
			return true
		case "what", "which":
			if i+1 < len(words) {
				switch words[i+1] {
				case "year", "month", "day", "date", "time", "week", "weekend", "season":
					return true
				}
			}
		case "how":
			if i+2 < len(words) && words[i+1] == "long" {
				return true
			}
		}
	}
	return false
}

// refSpan is the period of a question's date for matching an item's time
// spans: exact with a year; without one, the latest such month or day
// that began by now.
func (d dateRef) refSpan(now time.Time) fulltext.Period {
	if from, to, ok := d.rawSpan(); ok {
		return fulltext.Period{From: from, To: to}
	}
	if d.Day != 0 && d.Month != 0 {
		t := time.Date(now.Year(), d.Month, d.Day, 0, 0, 0, 0, time.UTC)
		if t.After(now) {
			t = t.AddDate(-1, 0, 0)
		}
		return fulltext.Period{From: t.Add(-dayTolerance), To: t.Add(24*time.Hour + dayTolerance)}
	}
	return fulltext.LatestMonth(now, d.Month)
}

// looseSpan is the longest expression of an item that matches any
// period of a query, however narrow: about a week and its margins.
const looseSpan = 10 * 24 * time.Hour

// timeQuery is what a query says about time: the dates it names, every
// period it names (those dates and its relative expressions, resolved
// against the query's time) and whether it asks when.
type timeQuery struct {
	dates []dateRef
	spans []fulltext.Period
	when  bool
	terms []string
}

// coverage is the share of the query's terms in the candidate's text and
// attribute. Only a word that begins as a query term does (Porter's
// stems keep a word's first two letters) is stemmed, so the cost is about
// one pass over the text.
func (tq timeQuery) coverage(c memento.RecallCandidate) float64 {
	if len(tq.terms) == 0 {
		return 1
	}
	var found uint64 // bit i: term i is in the text (the first 64 terms)
	mark := func(text string) {
		if !isASCII(text) {
			for _, t := range fulltext.Tokens(text) {
				found |= tq.termBits(t)
			}
			return
		}
		start := -1
		for i := 0; i <= len(text); i++ {
			if i < len(text) && isWordByte(text[i]) {
				if start < 0 {
					start = i
				}
				continue
			}
			if start >= 0 {
				found |= tq.wordBits(text[start:i])
				start = -1
			}
		}
	}
	mark(c.Text)
	mark(c.Attribute)
	n := 0
	for i := range min(len(tq.terms), 64) {
		if found&(1<<i) != 0 {
			n++
		}
	}
	return float64(n) / float64(len(tq.terms))
}

// wordBits returns the bits of the query terms that an ASCII word's term
// is, stemming it only when its first letters are a query term's.
func (tq timeQuery) wordBits(w string) uint64 {
	var lower [2]byte
	k := min(len(w), 2)
	for i := range k {
		lower[i] = toLowerASCII(w[i])
	}
	for _, t := range tq.terms {
		if len(t) >= k && t[:k] == string(lower[:k]) || len(t) < k && t == string(lower[:len(t)]) {
			return tq.termBits(fulltext.Term(w))
		}
	}
	return 0
}

// termBits returns the bit of the query term t, 0 when it is none.
func (tq timeQuery) termBits(t string) uint64 {
	for i, q := range tq.terms {
		if i < 64 && q == t {
			return 1 << i
		}
	}
	return 0
}

func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

func toLowerASCII(b byte) byte {
	if b >= 'A' && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func newTimeQuery(query string, now time.Time) timeQuery {
	tq := timeQuery{dates: parseDates(query), when: asksWhen(query)}
	for _, w := range fulltext.QueryWords(query) {
		if t := fulltext.Term(w); t != "" && !slices.Contains(tq.terms, t) {
			tq.terms = append(tq.terms, t)
		}
	}
	tq.spans, _ = fulltext.WhenRelative(query, now)
	for _, d := range tq.dates {
		tq.spans = append(tq.spans, d.refSpan(now))
	}
	return tq
}

// period is the span to fetch extra candidates from: that of the first
// date with a known year, else of the query's first relative expression
// ("last week"); zero without either.
func (tq timeQuery) period() (from, to time.Time) {
	for _, d := range tq.dates {
		if f, t, ok := d.span(); ok {
			return f, t
		}
	}
	if len(tq.dates) == 0 && len(tq.spans) > 0 {
		s := tq.spans[0]
		lo := time.Date(memento.MinTimeYear, 1, 1, 0, 0, 0, 0, time.UTC)
		hi := time.Date(memento.MaxTimeYear+1, 1, 1, 0, 0, 0, 0, time.UTC).Add(-time.Nanosecond)
		if s.From.Before(lo) {
			s.From = lo
		}
		if s.To.After(hi) {
			s.To = hi
		}
		if s.From.Before(s.To) {
			return s.From, s.To
		}
	}
	return from, to
}

// score sets an item's date and when parts and adds them to its score,
// from the periods the store resolved when it wrote the item.
func (tq timeQuery) score(s *scored, w Weights) {
	dated := len(tq.spans) > 0
	if !dated && !tq.when {
		return
	}
	if dated {
		s.dated = true
		if dateScore(tq.dates, s.c.At) > 0 {
			s.date = 1
		} else {
			own := day(s.c.At)
		match:
			for _, q := range tq.spans {
				if q.Overlaps(own) {
					s.date = 1
					break
				}
				for _, t := range s.c.Periods {
					// A loose expression ("this year") does not date an
					// item to a narrower period the query names.
					if t.To.Sub(t.From) <= max(q.To.Sub(q.From), looseSpan) && q.Overlaps(fulltext.Period(t)) {
						s.date = 1
						break match
					}
				}
			}
		}
		s.score += w.Date * s.date
	}
	if tq.when {
		s.asked = true
		if s.c.TellsTime {
			s.when = 1
		}
		s.score += w.When * s.when
	}
}

// day returns the calendar day of t.
func day(t time.Time) fulltext.Period {
	d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location())
	return fulltext.Period{From: d, To: d.AddDate(0, 0, 1)}
}
