package offline

import (
	"strconv"
	"strings"

	"github.com/memento-ai/memento"
)

// Eras the rules give words like "classic" and "recent".
const (
	recentSpan   = 5    // "recent" means the last five years
	classicUntil = 1979 // "classic" and "old" mean 1979 and before
)

// decadeWords spell decades out.
var decadeWords = map[string]int{
	"twenties": 1920, "thirties": 1930, "forties": 1940, "fifties": 1950, "sixties": 1960,
	"seventies": 1970, "eighties": 1980, "nineties": 1990, "noughties": 2000, "aughts": 2000,
}

// Words before a year that make it a lower bound, an exclusive lower bound,
// an exclusive upper bound or an inclusive upper bound.
var (
	// Negated bounds, read before the plain ones they contain.
	notBeforeWords = []string{"not before", "no earlier than", "not earlier than", "no older than", "not older than"}
	notAfterWords  = []string{"not after", "no later than", "not later than", "no newer than", "not newer than"}
	fromWords      = []string{"since", "starting", "starting in", "starting from", "beginning", "as of"}
	afterWords     = []string{"after", "post", "later than", "newer than", "more recent than", "younger than"}
	beforeWords    = []string{"before", "pre", "prior to", "older than", "earlier than"}
	untilWords     = []string{"until", "till", "up to", "up until", "through", "thru", "by"}
	// Words after a year that make it a lower or an upper bound.
	onwardWords  = []string{"onward", "onwards", "on", "forward", "forwards", "and up", "or later", "and later", "or newer", "and newer", "or after", "and after", "and beyond", "or more recent", "and more recent", "plus"}
	earlierWords = []string{"or earlier", "and earlier", "or before", "and before", "or older", "and older", "and prior"}
	rangeJoins   = set("to", "until", "till", "through", "thru", "and", "or")
	// Nouns that show "new" or "old" describe titles, not something else.
	titleNouns = set("movie", "movies", "film", "films", "flick", "flicks", "show", "shows", "series",
		"title", "titles", "release", "releases", "stuff", "cinema", "tv", "sitcom", "sitcoms",
		"episodes", "picture", "pictures", "documentary", "documentaries", "ones")
)

// yearSpec is what a message says about release years.
type yearSpec struct {
	min, max int    // 0 when unset
	shift    string // "older" or "newer"
	relative bool   // set from "recent", "classic" and the like
}

// yearExpr reads one year or decade at toks[i]: the years it spans and how
// many tokens it takes.
func yearExpr(toks []token, i int) (lo, hi, n int, ok bool) {
	t := toks[i]
	w := t.w
	if t.paren {
		// "Heat (1995)": a title's year, not a constraint.
		return 0, 0, 0, false
	}
	// "early 90s", "mid-80s", "late nineties".
	if (w == "early" || w == "mid" || w == "late") && i+1 < len(toks) && toks[i+1].brk == 0 && !possessiveBefore(toks, i) {
		if dlo, _, dn, dok := decade(toks, i+1); dok {
			switch w {
			case "early":
				return dlo, dlo + 3, dn + 1, true
			case "mid":
				return dlo + 3, dlo + 6, dn + 1, true
			default:
				return dlo + 6, dlo + 9, dn + 1, true
			}
		}
	}
	if lo, hi, n, ok := decade(toks, i); ok {
		return lo, hi, n, true
	}
	if len(w) == 4 && isDigits(w) {
		y, _ := strconv.Atoi(w)
		if y >= memento.MinYear && y <= memento.MaxYear {
			return y, y, 1, true
		}
	}
	return 0, 0, 0, false
}

// decade reads "90s", "1990s", "90's" or "nineties" at toks[i].
func decade(toks []token, i int) (lo, hi, n int, ok bool) {
	w := toks[i].w
	if possessiveBefore(toks, i) || (i > 0 && toks[i].brk == 0 && (toks[i-1].w == "early" || toks[i-1].w == "mid" || toks[i-1].w == "late") && possessiveBefore(toks, i-1)) {
		// "in my twenties" is an age.
		return 0, 0, 0, false
	}
	if d, ok := decadeWords[w]; ok {
		return d, d + 9, 1, true
	}
	s := strings.TrimSuffix(strings.TrimSuffix(w, "s"), "'")
	if s == w || !isDigits(s) {
		return 0, 0, 0, false
	}
	v, _ := strconv.Atoi(s)
	switch {
	case len(s) == 2 && v%10 == 0:
		switch {
		case v >= 30:
			v += 1900
		case v == 20:
			v = 1920
		default:
			v += 2000
		}
	case len(s) == 4 && v%10 == 0 && v >= memento.MinYear && v <= memento.MaxYear:
	default:
		return 0, 0, 0, false
	}
	return v, v + 9, 1, true
}

// precededBy reports whether one of the phrases ends right before toks[i]
// in the same clause, skipping "the" and "year".
func precededBy(toks []token, i int, phrases []string) bool {
	j := i
	for j > 0 && toks[j].brk == 0 && (toks[j-1].w == "the" || toks[j-1].w == "year") {
		j--
	}
	if toks[j].brk != 0 {
		return false
	}
	for _, p := range phrases {
		if matchSeq(toks, j-strings.Count(p, " ")-1, p) {
			return true
		}
	}
	return false
}

// followedBy reports whether one of the phrases starts at toks[i] in the
// same clause.
func followedBy(toks []token, i int, phrases []string) bool {
	if i >= len(toks) || toks[i].brk != 0 {
		return false
	}
	for _, p := range phrases {
		if matchSeq(toks, i, p) {
			return true
		}
	}
	return false
}

// findYears reads the release-year constraints of a message.
func (m *Model) findYears(msg string, toks []token) yearSpec {
	var mins, maxs []int
	for i := 0; i < len(toks); {
		lo, hi, n, ok := yearExpr(toks, i)
		if !ok {
			i++
			continue
		}
		end := i + n
		// A range: "between 1990 and 2000", "1990-2000", "from the 80s to the 90s".
		j := end
		if j < len(toks) && toks[j].brk == 0 && (rangeJoins[toks[j].w] || toks[j].hyph) {
			k := j
			if rangeJoins[toks[j].w] {
				k++
			}
			if k < len(toks) && toks[k].w == "the" && toks[k].brk == 0 {
				k++
			}
			if k < len(toks) && toks[k].brk == 0 {
				if lo2, hi2, n2, ok2 := yearExpr(toks, k); ok2 {
					if lo2 < lo {
						lo, hi, lo2, hi2 = lo2, hi2, lo, hi
					}
					mins, maxs = append(mins, lo), append(maxs, max(hi, hi2))
					i = k + n2
					continue
				}
			}
		}
		// A year that starts a title ("2001: A Space Odyssey") or ends one
		// ("Blade Runner 2049") is not a constraint.
		if n == 1 && len(toks[i].w) == 4 && (i > 0 && toks[i].brk == 0 && startsUpper(toks[i-1].raw) && toks[i-1].w != "i" ||
			end < len(toks) && toks[end].brk == ':' && startsUpper(toks[end].raw)) {
			i = end
			continue
		}
		switch {
		case precededBy(toks, i, notBeforeWords):
			mins = append(mins, lo)
		case precededBy(toks, i, notAfterWords):
			maxs = append(maxs, hi)
		case negatedAt(toks, i, n):
			// "nothing from the 80s": a window to leave out, which the
			// context cannot hold; set nothing rather than its opposite.
		case precededBy(toks, i, afterWords):
			mins = append(mins, hi+1)
		case precededBy(toks, i, beforeWords):
			maxs = append(maxs, lo-1)
		case precededBy(toks, i, untilWords):
			maxs = append(maxs, hi)
		case followedBy(toks, end, earlierWords):
			maxs = append(maxs, hi)
		case precededBy(toks, i, fromWords) || followedBy(toks, end, onwardWords) ||
			(toks[i].end < len(msg) && msg[toks[i].end] == '+'):
			mins = append(mins, lo)
		default:
			mins, maxs = append(mins, lo), append(maxs, hi)
		}
		i = end
	}
	var ys yearSpec
	if len(mins) > 0 {
		ys.min = minOf(mins)
	}
	if len(maxs) > 0 {
		ys.max = maxOf(maxs)
	}
	now := m.now().Year()
	if ys.min == 0 && ys.max == 0 {
		ys = m.relativeYears(toks, now)
	}
	if ys.min == 0 && ys.max == 0 && !ys.relative {
		ys.shift = yearShift(toks)
	}
	ys.min = clampYear(ys.min)
	ys.max = clampYear(ys.max)
	if ys.min != 0 && ys.max != 0 && ys.min > ys.max {
		// "before 1980 or after 2010" has no single window: set nothing
		// rather than something wrong.
		ys.min, ys.max = 0, 0
	}
	return ys
}

// relativeYears reads "recent", "the last 10 years", "classic" and the like.
func (m *Model) relativeYears(toks []token, now int) yearSpec {
	var ys yearSpec
	recent, classic := false, false
	for i, t := range toks {
		switch t.w {
		case "last", "past":
			if i+1 >= len(toks) || toks[i+1].brk != 0 {
				continue
			}
			next := toks[i+1].w
			switch {
			case next == "year" && (i == 0 || toks[i-1].w != "the"):
				return yearSpec{min: now - 1, max: now - 1, relative: true}
			case next == "decade":
				return yearSpec{min: now - 10, relative: true}
			case next == "few" && matchSeq(toks, i+2, "years"):
				return yearSpec{min: now - 3, relative: true}
			case next == "couple" && (matchSeq(toks, i+2, "years") || matchSeq(toks, i+2, "of years")):
				return yearSpec{min: now - 2, relative: true}
			}
			if n, ok := number(next); ok && n > 0 && n <= 100 && matchSeq(toks, i+2, "years") {
				return yearSpec{min: now - n, relative: true}
			}
		case "this":
			if matchSeq(toks, i+1, "year") && !negatedAt(toks, i, 2) {
				return yearSpec{min: now, max: now, relative: true}
			}
		case "recent", "latest", "newest", "modern", "contemporary":
			if i > 0 && t.brk == 0 && (toks[i-1].w == "more" || toks[i-1].w == "less") {
				continue // "more recent" is a shift, read by yearShift
			}
			if !negatedAt(toks, i, 1) {
				recent = true
			}
		case "new":
			if (describesTitles(toks, i) && !negatedAt(toks, i, 1)) || matchSeq(toks, i-1, "brand new") {
				recent = true
			}
		case "classic", "classics", "vintage", "oldies":
			if !negatedAt(toks, i, 1) && !(i > 0 && toks[i].brk == 0 && newClassic[toks[i-1].w]) {
				classic = true
			}
		case "old":
			if (describesTitles(toks, i) || matchSeq(toks, i-1, "something old") || matchSeq(toks, i+1, "school")) && !negatedAt(toks, i, 1) {
				classic = true
			}
		case "golden":
			if matchSeq(toks, i+1, "age") {
				classic = true
			}
		}
	}
	switch {
	case recent && classic:
		// "modern classics" and the like: no single window.
	case recent:
		ys = yearSpec{min: now - recentSpan, relative: true}
	case classic:
		ys = yearSpec{max: classicUntil, relative: true}
	}
	return ys
}

// newClassic words make "classic" say nothing of age: "cult classics",
// "modern classics", "Christmas classics".
var newClassic = set("modern", "cult", "instant", "future", "holiday", "christmas", "new", "recent", "comedy", "family")

// describesTitles reports whether the adjective at toks[i] qualifies titles:
// a title noun or a genre word follows within three words.
func describesTitles(toks []token, i int) bool {
	for j := i + 1; j < len(toks) && j <= i+3; j++ {
		if toks[j].brk != 0 {
			return false
		}
		if titleNouns[toks[j].w] && toks[j].w != "ones" {
			return true
		}
		if _, _, ok := fullGenreTable.match(toks, j); ok {
			return true
		}
	}
	return false
}

// shiftOlder and shiftNewer move the year window relative to what was shown.
var (
	shiftOlder = []string{"older", "earlier", "less recent", "not as new", "not so new", "further back", "older stuff"}
	shiftNewer = []string{"newer", "more recent", "more modern", "less old", "later ones", "later films", "later movies", "not as old", "not so old", "fresher"}
	// Nouns after "older" that make it about people: "my older brother".
	olderPeople = set("brother", "brothers", "sister", "sisters", "kid", "kids", "son", "daughter", "people", "viewers", "audience", "audiences", "relative", "relatives", "cousin", "cousins", "friend", "friends")
)

// yearShift reads a relative move: "make it older", "something newer".
func yearShift(toks []token) string {
	for i := range toks {
		if i+1 < len(toks) && toks[i+1].brk == 0 && toks[i+1].w == "than" {
			continue // "older than 2000" is absolute, handled before
		}
		if toks[i].w == "older" && i+1 < len(toks) && toks[i+1].brk == 0 && olderPeople[toks[i+1].w] {
			continue
		}
		if i > 0 && toks[i].brk == 0 && toks[i-1].w == "the" {
			continue // "the newer one" names a title
		}
		for _, p := range shiftOlder {
			if matchSeq(toks, i, p) {
				return "older"
			}
		}
		for _, p := range shiftNewer {
			if matchSeq(toks, i, p) {
				return "newer"
			}
		}
	}
	return ""
}

func clampYear(y int) int {
	switch {
	case y == 0:
		return 0
	case y < memento.MinYear:
		return memento.MinYear
	case y > memento.MaxYear:
		return memento.MaxYear
	}
	return y
}

func minOf(xs []int) int {
	m := xs[0]
	for _, x := range xs[1:] {
		m = min(m, x)
	}
	return m
}

func maxOf(xs []int) int {
	m := xs[0]
	for _, x := range xs[1:] {
		m = max(m, x)
	}
	return m
}

// possessiveBefore reports "my", "her" and the like right before toks[i].
func possessiveBefore(toks []token, i int) bool {
	if i == 0 || toks[i].brk != 0 {
		return false
	}
	switch toks[i-1].w {
	case "my", "her", "his", "their", "our", "your":
		return true
	}
	return false
}
