package offline

import "github.com/memento-ai/memento"

// Counts: how many titles a turn asks for, in digits, words or phrases
// ("3", "ten", "twenty five", "a dozen", "10 of them").

// countNouns after a number make it a count of titles.
var countNouns = set("movie", "movies", "film", "films", "flick", "flicks", "show", "shows",
	"series", "title", "titles", "ones", "options", "recommendations", "suggestions", "picks",
	"choices", "more", "documentaries", "sitcoms", "results", "things", "of", "good", "great")

// countUnits after a number make it something else: "5 and 10 year olds",
// "2 hours", "3 seasons".
var countUnits = set("year", "years", "yr", "yrs", "minutes", "minute", "min", "mins", "hours",
	"hour", "hrs", "seasons", "season", "episodes", "episode", "stars", "star", "times", "olds",
	"old", "percent", "kids", "people", "children", "days", "weeks", "months", "am", "pm",
	"dollars", "bucks", "out", "or", "to", "and", "x", "points", "people's")

// countLeads before a number make it a count.
var countLeads = set("exactly", "just", "only", "top", "about", "around", "roughly", "maybe",
	"me", "us", "recommend", "suggest", "list", "pick", "find", "want", "need", "another",
	"give", "show", "discover", "get", "least", "most", "max", "up", "some")

// findCount reads how many titles the turn asks for, 0 when it does not say.
func findCount(toks []token) int {
	for i := range toks {
		switch {
		case matchSeq(toks, i, "half a dozen"):
			return 6
		case matchSeq(toks, i, "a couple") || matchSeq(toks, i, "a pair of"):
			return 2
		case matchSeq(toks, i, "a few"):
			return 3
		case matchSeq(toks, i, "a handful"):
			return 5
		case matchSeq(toks, i, "a dozen"):
			return 12
		case matchSeq(toks, i, "a single"):
			return 1
		}
		n, ok := number(toks[i].w)
		if !ok || n <= 0 || toks[i].paren || toks[i].w == "single" || toks[i].w == "pair" || toks[i].w == "dozen" {
			continue
		}
		if i > 0 && toks[i].brk == 0 && !isDigits(toks[i].w) && startsUpper(toks[i].raw) {
			continue // "films like Seven": a title
		}
		// "twenty five", "twenty-five": one number in two words.
		span := 1
		if tens[toks[i].w] && i+1 < len(toks) && toks[i+1].brk == 0 {
			if u, ok := numberWords[toks[i+1].w]; ok && u >= 1 && u <= 9 && toks[i+1].w != "single" && toks[i+1].w != "pair" {
				n, span = n+u, 2
			}
		}
		prev, next := "", ""
		if i > 0 && toks[i].brk == 0 {
			prev = toks[i-1].w
		}
		if i+span < len(toks) && toks[i+span].brk == 0 {
			next = toks[i+span].w
		}
		// "10 of them", "give me five of those": a count of the titles to
		// come, unless a verb before it says something about them ("I've
		// seen two of them").
		if next == "of" && i+span+1 < len(toks) && toks[i+span+1].brk == 0 && ofThem[toks[i+span+1].w] {
			if prev == "" || countLeads[prev] || interjections[prev] {
				return clampCount(n)
			}
			continue
		}
		if span == 2 {
			switch {
			case prev == "the":
			case countUnits[next] && next != "or" && next != "to":
			case countLeads[prev], followsCountNoun(toks, i+1), len(toks) <= 3 && i == 0,
				next == "please" || next == "" && (prev == "" || interjections[prev]):
				return clampCount(n)
			}
			continue
		}
		if prev == "the" {
			continue // "the first two", "the two of them": titles shown
		}
		if i+1 < len(toks) && toks[i+1].hyph && toks[i+1].brk == 0 {
			if _, ok := number(toks[i+1].w); ok {
				next = "or" // "3-4 movies" is "3 or 4 movies"
			}
		}
		if countUnits[next] && !(next == "or" || next == "to") {
			continue
		}
		if next == "or" || next == "to" {
			// "3 or 4 movies": take the larger; "2 to 3 hours": a unit.
			if i+2 < len(toks) && (toks[i+2].brk == 0 || toks[i+1].hyph && toks[i+1].w != "or") {
				if n2, ok := number(toks[i+2].w); ok && followsCountNoun(toks, i+2) {
					return clampCount(max(n, n2))
				}
			}
			continue
		}
		if toks[i].w == "one" {
			switch prev {
			case "that", "this", "the", "which", "any", "every", "no", "each", "another", "last", "first", "other":
				continue
			}
			if next == "of" || next == "more" && prev == "" {
				continue
			}
		}
		switch {
		case countLeads[prev] && !(prev == "like" && toks[i].w == "one"):
			return clampCount(n)
		case followsCountNoun(toks, i):
			return clampCount(n)
		case len(toks) <= 2 && i == 0:
			return clampCount(n) // "3", "five please"
		case next == "please" && (prev == "" || interjections[prev]) && !(toks[i].w == "one" && prev == ""):
			return clampCount(n) // "ok, ten please"
		}
	}
	return 0
}

// followsCountNoun reports whether a title noun or a genre follows the
// number at toks[i] within four words of its clause.
func followsCountNoun(toks []token, i int) bool {
	for j := i + 1; j < len(toks) && j <= i+4; j++ {
		if toks[j].brk != 0 {
			return false
		}
		if countNouns[toks[j].w] && !(toks[j].w == "of" && j == i+1) {
			return true
		}
		if _, _, ok := fullGenreTable.match(toks, j); ok {
			return true
		}
		if countUnits[toks[j].w] || stopwords[toks[j].w] && !countFillers[toks[j].w] {
			return false
		}
	}
	return false
}

// countFillers may stand between a number and its noun: "3 more good
// comedies", "5 of the best".
var countFillers = set("more", "of", "the", "other", "really", "very", "new", "old", "best", "great", "good", "different")

func clampCount(n int) int { return max(1, min(n, memento.MaxPageSize)) }

// tens combine with a unit word after them: "twenty five".
var tens = set("twenty", "thirty", "forty", "fifty")

// ofThem after "N of" make N a count of titles: "10 of them".
var ofThem = set("them", "those", "these", "em", "the", "your")
