package recall

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/fulltext"
)

// dateRef is a date a query names: a year, a month or a day, any part of
// which may be unknown (0), as in "in June" or "on 13 October 2023".
type dateRef struct {
	Year  int
	Month time.Month
	Day   int
}

const monthRE = `(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?`

var (
	dayMonthYear = regexp.MustCompile(`\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?` + monthRE + `(?:,?\s+(\d{4}))?\b`)
	monthDayYear = regexp.MustCompile(`\b` + monthRE + `\s+(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(\d{4}))?\b`)
	monthYear    = regexp.MustCompile(`\b` + monthRE + `,?\s+(\d{4})\b`)
	// A month alone needs a preposition before it, so the verb "may" is
	// not read as a month.
	inMonth   = regexp.MustCompile(`\b(?:in|during|since|until|by|of|early|mid|late|last|this|next)\s+` + monthRE + `\b`)
	yearAlone = regexp.MustCompile(`\b(19[5-9]\d|20\d\d)\b`)
)

// parseDates finds the dates a query names, most specific first; a year
// already part of a longer date is not listed again.
func parseDates(query string) []dateRef {
	q := strings.ToLower(query)
	var refs []dateRef
	used := make([]bool, len(q))
	mark := func(loc []int) bool {
		for i := loc[0]; i < loc[1]; i++ {
			if used[i] {
				return false
			}
		}
		for i := loc[0]; i < loc[1]; i++ {
			used[i] = true
		}
		return true
	}
	for _, m := range dayMonthYear.FindAllStringSubmatchIndex(q, -1) {
		if mark(m[:2]) {
			refs = append(refs, dateRef{Year: atoi(q, m[6], m[7]), Month: month(q[m[4]:m[5]]), Day: atoi(q, m[2], m[3])})
		}
	}
	for _, m := range monthDayYear.FindAllStringSubmatchIndex(q, -1) {
		if mark(m[:2]) {
			refs = append(refs, dateRef{Year: atoi(q, m[6], m[7]), Month: month(q[m[2]:m[3]]), Day: atoi(q, m[4], m[5])})
		}
	}
	for _, m := range monthYear.FindAllStringSubmatchIndex(q, -1) {
		if mark(m[:2]) {
			refs = append(refs, dateRef{Year: atoi(q, m[4], m[5]), Month: month(q[m[2]:m[3]])})
		}
	}
	for _, m := range inMonth.FindAllStringSubmatchIndex(q, -1) {
		if mark(m[2:4]) {
			refs = append(refs, dateRef{Month: month(q[m[2]:m[3]])})
		}
	}
	for _, m := range yearAlone.FindAllStringSubmatchIndex(q, -1) {
		if mark(m[:2]) {
			refs = append(refs, dateRef{Year: atoi(q, m[2], m[3])})
		}
	}
	kept := refs[:0]
	for _, r := range refs {
		if r.Day > 31 {
			r.Day = 0
		}
		if r.Year != 0 && (r.Year < memento.MinTimeYear || r.Year > memento.MaxTimeYear) {
			// No stored time is in that year; as a period it would
			// only be refused by the store (memento.CheckTime).
			continue
		}
		if r.Year != 0 || r.Month != 0 {
			kept = append(kept, r)
		}
	}
	return kept
}

// month is the month a name the date patterns matched names.
func month(name string) time.Month {
	m, _ := fulltext.Month(name)
	return m
}

func atoi(s string, i, j int) int {
	if i < 0 || j < 0 {
		return 0
	}
	n, _ := strconv.Atoi(s[i:j])
	return n
}

// dayTolerance is how far from a named day a message may be and still be
// about it: people tell of a day in the days after it.
const dayTolerance = 3 * 24 * time.Hour

// matches reports whether t falls within the date: the same year and
// month where given, and within dayTolerance of the day where given.
func (d dateRef) matches(t time.Time) bool {
	if d.Day != 0 && d.Month != 0 {
		years := []int{d.Year}
		if d.Year == 0 {
			years = []int{t.Year() - 1, t.Year(), t.Year() + 1}
		}
		for _, y := range years {
			day := time.Date(y, d.Month, d.Day, 12, 0, 0, 0, t.Location())
			if diff := t.Sub(day); diff > -dayTolerance-12*time.Hour && diff < dayTolerance+12*time.Hour {
				return true
			}
		}
		return false
	}
	if d.Year != 0 && t.Year() != d.Year {
		return false
	}
	return d.Month == 0 || t.Month() == d.Month
}

// span returns the time range of a date with a known year, to fetch its
// candidates; ok is false for a date without a year. The range is cut to
// the times a store holds (memento.CheckTime), which a day at either end
// of them, with its tolerance, would cross.
func (d dateRef) span() (from, to time.Time, ok bool) {
	from, to, ok = d.rawSpan()
	if !ok {
		return from, to, false
	}
	first := time.Date(memento.MinTimeYear, 1, 1, 0, 0, 0, 0, time.UTC)
	last := time.Date(memento.MaxTimeYear+1, 1, 1, 0, 0, 0, 0, time.UTC).Add(-time.Nanosecond)
	if from.Before(first) {
		from = first
	}
	if to.After(last) {
		to = last
	}
	return from, to, true
}

// rawSpan is span before it is cut to the stored range.
func (d dateRef) rawSpan() (from, to time.Time, ok bool) {
	switch {
	case d.Year == 0:
		return from, to, false
	case d.Month == 0:
		from = time.Date(d.Year, 1, 1, 0, 0, 0, 0, time.UTC)
		return from, from.AddDate(1, 0, 0), true
	case d.Day == 0:
		from = time.Date(d.Year, d.Month, 1, 0, 0, 0, 0, time.UTC)
		return from, from.AddDate(0, 1, 0), true
	}
	day := time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC)
	return day.Add(-dayTolerance), day.Add(24*time.Hour + dayTolerance), true
}

// dateScore is 1 when t matches any of the dates, else 0.
func dateScore(refs []dateRef, t time.Time) float64 {
	for _, r := range refs {
		if r.matches(t) {
			return 1
		}
	}
	return 0
}
