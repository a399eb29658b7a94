package recall

import (
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/fulltext"
)

// A message tells when things happened in words relative to when it was
// said: "yesterday", "last week", "two years ago", "on Friday", "in May".
// timeSpans reads those expressions and resolves each against the
// message's own time, so "last week" said on 9 June 2023 is the week of
// 29 May, and a question about "the end of May" or "June" can find it.
// The rules are plain English grammar of time, written once for any
// conversation; they know no names or topics.

// span is a half-open period of time, [from, to).
type span struct{ from, to time.Time }

func (s span) overlaps(o span) bool { return s.from.Before(o.to) && o.from.Before(s.to) }

// numberWords are the counts people write out in "two weeks ago".
var numberWords = map[string]int{
	"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
	"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple": 2, "few": 3, "several": 3,
}

var weekdays = map[string]time.Weekday{
	"monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday, "thursday": time.Thursday,
	"friday": time.Friday, "saturday": time.Saturday, "sunday": time.Sunday,
}

// seasons are the months of each season in the northern hemisphere.
var seasons = map[string]time.Month{"spring": time.March, "summer": time.June, "fall": time.September, "autumn": time.September, "winter": time.December}

// timeWords splits text into lower-case words of letters and digits, in
// one pass.
func timeWords(text string) []string {
	out := make([]string, 0, len(text)/5+1)
	start := -1
	for i, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, lowerWord(text[start:i]))
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, lowerWord(text[start:]))
	}
	return out
}

// lowerWord is strings.ToLower without a copy for a word that is lower
// case already.
func lowerWord(w string) string {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c >= 0x80 || c >= 'A' && c <= 'Z' {
			return strings.ToLower(w)
		}
	}
	return w
}

// day returns the calendar day of t as a span.
func day(t time.Time) span {
	d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location())
	return span{d, d.AddDate(0, 0, 1)}
}

// week returns the Monday-to-Sunday week holding t.
func week(t time.Time) span {
	d := day(t).from
	off := (int(d.Weekday()) + 6) % 7
	from := d.AddDate(0, 0, -off)
	return span{from, from.AddDate(0, 0, 7)}
}

// weekend returns the Saturday and Sunday of the week holding t.
func weekend(t time.Time) span {
	w := week(t)
	return span{w.from.AddDate(0, 0, 5), w.to}
}

func month(t time.Time, add int) span {
	from := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, t.Location()).AddDate(0, add, 0)
	return span{from, from.AddDate(0, 1, 0)}
}

func year(t time.Time, add int) span {
	from := time.Date(t.Year()+add, 1, 1, 0, 0, 0, 0, t.Location())
	return span{from, from.AddDate(1, 0, 0)}
}

// widen pads a span by d on both sides: people are loose about "last
// week" and "two months ago".
func (s span) widen(d time.Duration) span { return span{s.from.Add(-d), s.to.Add(d)} }

// timeSpans returns the periods a text's relative and absolute time
// expressions name, resolved against at, the time it was said; told
// reports whether the text says when something happened at all (also
// true for a weekday or "recently", which it cannot always place).
func timeSpans(text string, at time.Time) (spans []span, told bool) {
	return scanTime(text, at, true)
}

// scanTime is timeSpans; without absolute, month names and years are left
// to parseDates (a query's dates).
func scanTime(text string, at time.Time, absolute bool) (spans []span, told bool) {
	if !mayTellTime(text) {
		return nil, false
	}
	words := timeWords(text)
	next := func(i int) string {
		if i+1 < len(words) {
			return words[i+1]
		}
		return ""
	}
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch w {
		case "yesterday":
			spans, told = append(spans, day(at.AddDate(0, 0, -1))), true
		case "today", "tonight":
			spans, told = append(spans, day(at)), true
		case "tomorrow":
			spans, told = append(spans, day(at.AddDate(0, 0, 1))), true
		case "recently", "lately":
			// Too loose to place, but it dates what it tells.
			told = true
		case "ago":
			if s, ok := agoSpan(words[:i], at); ok {
				spans, told = append(spans, s), true
			}
		case "last", "this", "next", "past":
			s, n, ok := deicticSpan(w, words[i+1:], at)
			if ok {
				spans, told = append(spans, s), true
				i += n
			}
		case "since":
			if n, err := strconv.Atoi(next(i)); err == nil && n >= 1900 && n <= 2100 {
				spans, told = append(spans, span{year(at, n-at.Year()).from, at.Add(time.Hour)}), true
				i++
			}
		default:
			if wd, ok := weekdays[w]; ok {
				spans, told = append(spans, lastWeekday(at, wd)), true
			} else if m, ok := months[w]; ok && absolute && monthWord(words, i) {
				spans, told = append(spans, monthBefore(at, m, words, i)), true
			} else if n, err := strconv.Atoi(w); err == nil && n >= 1900 && n <= 2100 && len(w) == 4 {
				if absolute {
					spans = append(spans, year(at, n-at.Year()))
				}
				told = true
			} else if durationUnit(next(i)) && (err == nil || numberWords[w] > 1) {
				// A duration ("for 4 years", "two months now") says how
				// long, which is when too.
				told = true
			}
		}
	}
	return spans, told
}

// agoSpan reads "<count> <unit> ago" from the words before "ago".
func agoSpan(before []string, at time.Time) (span, bool) {
	if len(before) < 2 {
		return span{}, false
	}
	unit := strings.TrimSuffix(before[len(before)-1], "s")
	j := len(before) - 2
	if before[j] == "of" && j > 0 { // "a couple of weeks ago"
		j--
	}
	n, ok := numberWords[before[j]]
	if v, err := strconv.Atoi(before[j]); err == nil {
		n, ok = v, true
	}
	if !ok {
		return span{}, false
	}
	if n <= 0 || n > 100 {
		return span{}, false
	}
	switch unit {
	case "day":
		return day(at.AddDate(0, 0, -n)).widen(24 * time.Hour), true
	case "week":
		return week(at.AddDate(0, 0, -7*n)).widen(3 * 24 * time.Hour), true
	case "weekend":
		return weekend(at.AddDate(0, 0, -7*n)).widen(24 * time.Hour), true
	case "month":
		return month(at, -n).widen(10 * 24 * time.Hour), true
	case "year":
		return year(at, -n), true
	}
	return span{}, false
}

// timeTriggers are the words without one of which a text tells no time
// that scanTime reads (numbers aside).
var timeTriggers = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("yesterday today tonight tomorrow recently lately ago last this next past since") {
		m[w] = true
	}
	for w := range weekdays {
		m[w] = true
	}
	for w := range months {
		m[w] = true
	}
	for w, n := range numberWords {
		if n > 1 { // "two years", a duration
			m[w] = true
		}
	}
	return m
}()

// mayTellTime reports whether text holds a digit or a word of
// timeTriggers, without allocating, so that the many texts that tell no
// time cost one pass.
func mayTellTime(text string) bool {
	var buf [12]byte
	n, long := 0, false
	flush := func() bool {
		hit := !long && n > 0 && timeTriggers[string(buf[:n])]
		n, long = 0, false
		return hit
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c >= '0' && c <= '9', c >= 0x80:
			return true // a number, or text scanTime must read in full
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			if n < len(buf) {
				buf[n] = toLowerASCII(c)
				n++
			} else {
				long = true
			}
		default:
			if flush() {
				return true
			}
		}
	}
	return flush()
}

// durationUnit reports whether w is a unit of time a duration counts.
func durationUnit(w string) bool {
	switch strings.TrimSuffix(w, "s") {
	case "day", "week", "weekend", "month", "year", "hour":
		return true
	}
	return false
}

// deicticSpan reads "last/this/next/past <unit>" after word w, returning
// the span and how many more words it used.
func deicticSpan(w string, rest []string, at time.Time) (span, int, bool) {
	if len(rest) == 0 {
		return span{}, 0, false
	}
	add := map[string]int{"last": -1, "past": -1, "this": 0, "next": 1}[w]
	u := rest[0]
	switch u {
	case "night":
		if w == "last" {
			return day(at.AddDate(0, 0, -1)), 1, true
		}
		return day(at), 1, true
	case "morning", "afternoon", "evening":
		if w == "this" {
			return day(at), 1, true
		}
	case "week":
		return week(at.AddDate(0, 0, 7*add)).widen(24 * time.Hour), 1, true
	case "weekend":
		if add == 0 {
			// "this weekend" said on a weekday is the coming one, said on
			// a Monday the one just gone: the nearest either way.
			return weekend(at).widen(2 * 24 * time.Hour), 1, true
		}
		return weekend(at.AddDate(0, 0, 7*add)).widen(24 * time.Hour), 1, true
	case "month":
		return month(at, add).widen(3 * 24 * time.Hour), 1, true
	case "year":
		return year(at, add), 1, true
	}
	if wd, ok := weekdays[u]; ok {
		s := lastWeekday(at, wd)
		if add > 0 {
			s = nextWeekday(at, wd)
		}
		return s, 1, true
	}
	if m, ok := seasons[u]; ok {
		start := time.Date(at.Year(), m, 1, 0, 0, 0, 0, at.Location())
		if add < 0 || (add == 0 && start.After(at)) {
			for !start.Before(at) || (add < 0 && start.AddDate(0, 3, 0).After(at)) {
				start = start.AddDate(-1, 0, 0)
			}
		} else if add > 0 && start.Before(at) {
			start = start.AddDate(1, 0, 0)
		}
		return span{start, start.AddDate(0, 3, 0)}, 1, true
	}
	if m, ok := months[u]; ok {
		s := monthBefore(at, m, nil, 0)
		if add > 0 && !s.from.After(at) {
			s = span{s.from.AddDate(1, 0, 0), s.to.AddDate(1, 0, 0)}
		}
		return s, 1, true
	}
	return span{}, 0, false
}

// lastWeekday is the most recent day named wd before at's day ("on
// Friday", told afterwards), widened by a day.
func lastWeekday(at time.Time, wd time.Weekday) span {
	back := (int(at.Weekday()) - int(wd) + 7) % 7
	if back == 0 {
		back = 7
	}
	return day(at.AddDate(0, 0, -back)).widen(24 * time.Hour)
}

// nextWeekday is the next day named wd after at's day.
func nextWeekday(at time.Time, wd time.Weekday) span {
	ahead := (int(wd) - int(at.Weekday()) + 7) % 7
	if ahead == 0 {
		ahead = 7
	}
	return day(at.AddDate(0, 0, ahead)).widen(24 * time.Hour)
}

// monthWord reports whether words[i], a month name, is used as one: "may"
// and "march" are verbs too, so those two need a preposition before them
// or a day or year next to them.
func monthWord(words []string, i int) bool {
	w := words[i]
	if w != "may" && w != "march" && w != "mar" && w != "jan" && w != "sep" && w != "dec" {
		return true
	}
	if i > 0 {
		switch words[i-1] {
		case "in", "during", "since", "until", "by", "of", "early", "mid", "late", "end", "beginning":
			return true
		}
		if _, err := strconv.Atoi(words[i-1]); err == nil {
			return true
		}
	}
	if i+1 < len(words) {
		if _, err := strconv.Atoi(words[i+1]); err == nil {
			return true
		}
	}
	return false
}

// monthBefore is the month m named near words[i]: of the year written
// after it when there is one, else the latest such month that began by
// at (people mostly tell of the past).
func monthBefore(at time.Time, m time.Month, words []string, i int) span {
	for j := i + 1; j < len(words) && j <= i+2; j++ {
		if y, err := strconv.Atoi(words[j]); err == nil && y >= 1900 && y <= 2100 && len(words[j]) == 4 {
			from := time.Date(y, m, 1, 0, 0, 0, 0, at.Location())
			return span{from, from.AddDate(0, 1, 0)}
		}
	}
	from := time.Date(at.Year(), m, 1, 0, 0, 0, 0, at.Location())
	if from.After(at) {
		from = from.AddDate(-1, 0, 0)
	}
	return span{from, from.AddDate(0, 1, 0)}
}

// asksWhen reports whether a question asks for a time: "when", "what
// year", "how long ago", "since when" and the like.
func asksWhen(query string) bool {
	words := timeWords(query)
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
func (d dateRef) refSpan(now time.Time) span {
	if from, to, ok := d.rawSpan(); ok {
		return span{from, to}
	}
	if d.Day != 0 && d.Month != 0 {
		t := time.Date(now.Year(), d.Month, d.Day, 0, 0, 0, 0, time.UTC)
		if t.After(now) {
			t = t.AddDate(-1, 0, 0)
		}
		return span{t.Add(-dayTolerance), t.Add(24*time.Hour + dayTolerance)}
	}
	return monthBefore(now, d.Month, nil, 0)
}

// looseSpan is the longest expression of an item that matches any
// period of a query, however narrow: about a week and its margins.
const looseSpan = 10 * 24 * time.Hour

// timeQuery is what a query says about time: the dates it names, every
// period it names (those dates and its relative expressions, resolved
// against the query's time) and whether it asks when.
type timeQuery struct {
	dates []dateRef
	spans []span
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
	tq.spans, _ = scanTime(query, now, false)
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
		if s.from.Before(lo) {
			s.from = lo
		}
		if s.to.After(hi) {
			s.to = hi
		}
		if s.from.Before(s.to) {
			return s.from, s.to
		}
	}
	return from, to
}

// score sets an item's date and when parts and adds them to its score.
// The item's own time expressions are read only for a query that names or
// asks for a time.
func (tq timeQuery) score(s *scored, w Weights) {
	dated := len(tq.spans) > 0
	if !dated && !tq.when {
		return
	}
	var told []span
	var tells bool
	if s.c.Text != "" {
		told, tells = timeSpans(s.c.Text, s.c.At)
	}
	if dated {
		s.dated = true
		if dateScore(tq.dates, s.c.At) > 0 {
			s.date = 1
		} else {
			own := day(s.c.At)
		match:
			for _, q := range tq.spans {
				if q.overlaps(own) {
					s.date = 1
					break
				}
				for _, t := range told {
					// A loose expression ("this year") does not date an
					// item to a narrower period the query names.
					if t.to.Sub(t.from) <= max(q.to.Sub(q.from), looseSpan) && q.overlaps(t) {
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
		if tells {
			s.when = 1
		}
		s.score += w.When * s.when
	}
}
