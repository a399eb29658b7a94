package fulltext

import (
	"strconv"
	"strings"
	"time"
)

// A text tells when things happened in words relative to when it was
// said: "yesterday", "last week", "two years ago", "on Friday", "in May".
// When reads those expressions and resolves each against the text's own
// time, so "last week" said on 9 June 2023 is the week of 29 May, and a
// question about "the end of May" or "June" can find it. The rules are
// plain English grammar of time, written once for any conversation; they
// know no names or topics. Words are split as everywhere else in the
// toolkit (Words).

// Period is a half-open span of time, [From, To).
type Period struct{ From, To time.Time }

// Overlaps reports whether the two periods share any instant.
func (p Period) Overlaps(o Period) bool { return p.From.Before(o.To) && o.From.Before(p.To) }

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

// day returns the calendar day of t as a period.
func day(t time.Time) Period {
	d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location())
	return Period{d, d.AddDate(0, 0, 1)}
}

// week returns the Monday-to-Sunday week holding t.
func week(t time.Time) Period {
	d := day(t).From
	off := (int(d.Weekday()) + 6) % 7
	from := d.AddDate(0, 0, -off)
	return Period{from, from.AddDate(0, 0, 7)}
}

// weekend returns the Saturday and Sunday of the week holding t.
func weekend(t time.Time) Period {
	w := week(t)
	return Period{w.From.AddDate(0, 0, 5), w.To}
}

func month(t time.Time, add int) Period {
	from := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, t.Location()).AddDate(0, add, 0)
	return Period{from, from.AddDate(0, 1, 0)}
}

func year(t time.Time, add int) Period {
	from := time.Date(t.Year()+add, 1, 1, 0, 0, 0, 0, t.Location())
	return Period{from, from.AddDate(1, 0, 0)}
}

// widen pads a period by d on both sides: people are loose about "last
// week" and "two months ago".
func (p Period) widen(d time.Duration) Period { return Period{p.From.Add(-d), p.To.Add(d)} }

// When returns the periods a text's relative and absolute time
// expressions name, resolved against at, the time the text was said;
// tells reports whether the text says when something happened at all
// (also true for a weekday or "recently", which it cannot always place,
// and for a duration such as "for 4 years"). Stores call it when they
// write a message or a memory, so recall reads what a text tells of time
// without reading the text again.
func When(text string, at time.Time) (periods []Period, tells bool) {
	return scanTime(text, at, true)
}

// WhenRelative is When without month names and years, for a query, whose
// dates the caller reads on its own: only its relative expressions ("last
// week", "two years ago") are resolved, against the query's time.
func WhenRelative(text string, at time.Time) (periods []Period, tells bool) {
	return scanTime(text, at, false)
}

// scanTime is When; without absolute, month names and years are left to
// the caller.
func scanTime(text string, at time.Time, absolute bool) (spans []Period, told bool) {
	if !mayTellTime(text) {
		return nil, false
	}
	words := Words(text)
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
				// "since 2070", said before 2070, names no time yet
				// passed: it tells time, but no period.
				if from := year(at, n-at.Year()).From; from.Before(at) {
					spans = append(spans, Period{from, at.Add(time.Hour)})
				}
				told = true
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
func agoSpan(before []string, at time.Time) (Period, bool) {
	if len(before) < 2 {
		return Period{}, false
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
		return Period{}, false
	}
	if n <= 0 || n > 100 {
		return Period{}, false
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
	return Period{}, false
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
// the period and how many more words it used.
func deicticSpan(w string, rest []string, at time.Time) (Period, int, bool) {
	if len(rest) == 0 {
		return Period{}, 0, false
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
		return Period{start, start.AddDate(0, 3, 0)}, 1, true
	}
	if m, ok := months[u]; ok {
		s := monthBefore(at, m, nil, 0)
		if add > 0 && !s.From.After(at) {
			s = Period{s.From.AddDate(1, 0, 0), s.To.AddDate(1, 0, 0)}
		}
		return s, 1, true
	}
	return Period{}, 0, false
}

// lastWeekday is the most recent day named wd before at's day ("on
// Friday", told afterwards), widened by a day.
func lastWeekday(at time.Time, wd time.Weekday) Period {
	back := (int(at.Weekday()) - int(wd) + 7) % 7
	if back == 0 {
		back = 7
	}
	return day(at.AddDate(0, 0, -back)).widen(24 * time.Hour)
}

// nextWeekday is the next day named wd after at's day.
func nextWeekday(at time.Time, wd time.Weekday) Period {
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
func monthBefore(at time.Time, m time.Month, words []string, i int) Period {
	for j := i + 1; j < len(words) && j <= i+2; j++ {
		if y, err := strconv.Atoi(words[j]); err == nil && y >= 1900 && y <= 2100 && len(words[j]) == 4 {
			from := time.Date(y, m, 1, 0, 0, 0, 0, at.Location())
			return Period{from, from.AddDate(0, 1, 0)}
		}
	}
	from := time.Date(at.Year(), m, 1, 0, 0, 0, 0, at.Location())
	if from.After(at) {
		from = from.AddDate(-1, 0, 0)
	}
	return Period{from, from.AddDate(0, 1, 0)}
}

// months are the month names and their abbreviations.
var months = map[string]time.Month{
	"january": time.January, "february": time.February, "march": time.March, "april": time.April,
	"may": time.May, "june": time.June, "july": time.July, "august": time.August, "september": time.September,
	"october": time.October, "november": time.November, "december": time.December,
	"jan": time.January, "feb": time.February, "mar": time.March, "apr": time.April, "jun": time.June,
	"jul": time.July, "aug": time.August, "sep": time.September, "sept": time.September, "oct": time.October,
	"nov": time.November, "dec": time.December,
}

// Month returns the month a lower-case word names: a month's name or its
// abbreviation ("may", "sept").
func Month(word string) (time.Month, bool) {
	m, ok := months[word]
	return m, ok
}

// LatestMonth returns the latest month m that began by at, the month a
// text means by "in May" without a year (people mostly tell of the past).
func LatestMonth(at time.Time, m time.Month) Period { return monthBefore(at, m, nil, 0) }

func toLowerASCII(b byte) byte {
	if b >= 'A' && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}
