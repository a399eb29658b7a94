package offline

import (
	"slices"
	"strings"
	"unicode"

	"github.com/memento-ai/memento"
)

// Title references: the words of a turn that point at a title, either one
// the last answer showed ("the second one", "#2", "Heat" when Heat was
// shown) or one named as written ("something like Inception"). A reference
// is read together with the cue that governs it: "more like" makes it a
// Like, "tell me about" an About, "seen" a Seen and "not" a RejectTitles.
//
// The words a reference and its cue take up are masked out before the
// other rules read the turn, so "the second one" is not a count of one,
// "about the first one" is not a topic and "seen Heat" does not turn down
// everything shown.

// refKind says what a turn does with a title it points at.
type refKind int

const (
	refNone   refKind = iota // named without a cue ("the second one sounds good")
	refLike                  // more like it
	refAbout                 // tell me about it
	refSeen                  // already seen it
	refReject                // not that one
	// refFavourite is a title the user loves and wants more of ("my
	// favorite movies are X and Y", "I prefer X"): seen, and an anchor.
	refFavourite
)

// titleRefs is what the reference rules read from one turn.
type titleRefs struct {
	like, about, seen, reject []memento.TitleRef
	// named are the titles pointed at with no cue ("the second one sounds
	// good").
	named []memento.TitleRef
	// likeNew is true when a Like names a title that was not shown: a new
	// anchor, which replaces the request in force.
	likeNew bool
	// likeAll is true for "more like those" with nothing shown to point at.
	likeAll bool
	// mask marks the tokens the references and their cues take up.
	mask []bool
}

// mention is a reference found in the turn, before its cue is known.
type mention struct {
	refs    []memento.TitleRef
	at, end int
	kind    refKind
}

// ordinals name a position in the last answer; negative counts from its end.
var ordinals = map[string]int{
	"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
	"fifth": 5, "5th": 5, "sixth": 6, "6th": 6, "seventh": 7, "7th": 7, "eighth": 8, "8th": 8,
	"ninth": 9, "9th": 9, "tenth": 10, "10th": 10, "last": -1, "final": -1, "former": 1,
	"latter": -1, "penultimate": -2,
}

// refNouns may follow an ordinal: "the second one", "the last movie".
var refNouns = set("one", "ones", "movie", "movies", "film", "films", "show", "shows", "title",
	"titles", "pick", "picks", "suggestion", "suggestions", "option", "options", "series",
	"flick", "recommendation", "entry", "choice")

// refFollowers may follow a bare "the second" or "the last" that points at
// a title; anything else ("the last 10 years", "the first time") does not.
var refFollowers = set("and", "or", "sounds", "looks", "seems", "seemed", "looked", "was", "is",
	"please", "too", "though", "already", "either", "about", "more", "but", "i", "you",
	"again", "instead", "lol", "then", "also", "a", "an", "looks")

// numberedLeads before a number make it a position: "number 3", "option 2".
var numberedLeads = set("number", "no", "option", "pick", "title", "suggestion", "choice", "entry")

// Cues, as phrases, that govern the reference after them.
var (
	likeCueList = longestFirst(compile([]string{
		"more like", "similar to", "similar as", "similar like", "in the vein of",
		"along the lines of", "in the style of", "reminiscent of", "comparable to", "akin to",
		"the same vibe as", "same vibe as", "in the same vein as", "more of", "the likes of",
		"such as",
	}))
	aboutCueList = longestFirst(compile([]string{
		"tell me more about", "tell me about", "tell us about", "tell us more about", "more about",
		"more info on", "more info about", "info on", "info about", "information on",
		"information about", "details on", "details about", "more details on",
		"more details about", "describe", "know more about", "learn more about",
	}))
	seenCueList   = compile([]string{"already seen", "already watched", "already saw", "seen", "watched", "saw"})
	rejectCueList = longestFirst(compile(append([]string{
		"anything but", "everything but", "except for", "except", "other than", "not", "skip",
		"drop", "remove", "exclude", "excluding", "get rid of", "without", "minus", "not like",
		"nothing like", "never get into", "never got into", "couldn't get into", "could not get into",
		"can't get into", "cannot get into", "never liked", "never cared for", "can't stand",
		"cannot stand", "never been a fan of", "not a big fan of", "not much of a fan of", "didn't love",
		"did not enjoy", "wasn't a fan of", "was not a fan of",
	}, rejectVerbs...)))
	// likePointerList after a Like cue point at what was just shown or
	// named: "more like that", "something similar to those".
	likePointerList = compile([]string{
		"that one", "this one", "those ones", "these ones", "that", "this", "those", "these",
		"them", "it", "em", "the same", "those movies", "these movies", "those films",
		"these films", "those shows", "these shows", "the ones you showed",
	})
)

// longestFirst orders phrases so that matchAny finds the longest: "not a
// fan of" before "not".
func longestFirst(list [][]string) [][]string {
	slices.SortStableFunc(list, func(a, b []string) int { return len(b) - len(a) })
	return list
}

// likeHeads before "like" make it a preposition ("something like
// Inception", "movies like Heat"); after a subject ("I like comedies") it is
// a verb and states a preference instead.
var likeHeads = set("something", "anything", "stuff", "more", "ones", "one", "others", "else",
	"titles", "title", "movie", "movies", "film", "films", "flick", "flicks", "show", "shows",
	"series", "things", "bit")

// similarPointers make "similar" on its own point at what was shown:
// "something similar", "similar ones".
var similarPointers = set("ones", "movies", "films", "shows", "titles", "stuff", "one")

// nameWords may stand uncapitalised inside a title's name: "Out of My
// League", "The Lord of the Rings".
var nameWords = set("of", "the", "a", "an", "and", "in", "on", "to", "for", "with", "at", "from",
	"my", "is", "de", "la", "le", "du", "vs", "or", "by", "into", "it's")

// nameStops end an uncapitalised name: "something like inception but
// funnier".
var nameStops = set("but", "and", "or", "with", "from", "please", "that", "which", "in", "on",
	"set", "starring", "featuring", "only", "though", "except", "without", "either", "too",
	"instead", "for", "maybe", "also", "though", "again", "anymore", "already", "before",
	"yet", "lol", "thanks", "thank", "if", "because", "since", "where", "who", "as", "so")

// notNames are capitalised words that never start a title's name.
var notNames = set("i", "i'm", "i've", "i'd", "i'll", "im", "ok", "okay", "thanks", "please",
	"no", "yes", "not", "any", "some", "something", "anything", "more", "movies", "films",
	"shows", "netflix", "hulu", "disney", "hbo", "prime", "amazon", "apple", "peacock",
	"paramount", "you", "me", "we", "they", "it", "that", "this", "those", "these", "them",
	"one", "ones", "another", "other", "others", "again", "too", "either", "yet", "much",
	"very", "really", "just", "only", "so", "what", "which", "how", "why", "when", "where",
	"who", "hey", "hi", "hello", "sure", "yeah", "nah", "nope", "great", "good", "cool", "now",
	"today", "tonight", "tomorrow", "bad", "quite", "exactly", "necessarily", "always", "ever",
	"anymore", "all", "everything", "nothing", "everyone", "anyone", "maybe", "probably")

// findRefs reads the title references of a turn. shown are the titles of
// the last answer, in order; misspelt are names read by edit distance,
// which are no titles either.
func (m *Model) findRefs(msg string, toks []token, shown []memento.Title, misspelt []personHit) titleRefs {
	var tr titleRefs
	if len(toks) == 0 {
		return tr
	}
	shownWords := shownTitleWords(msg, shown)
	var mentions []mention
	for i := 0; i < len(toks); {
		if refs, end, ok := positionAt(msg, toks, i, true); ok {
			mentions = append(mentions, mention{refs: refs, at: i, end: end})
			i = end
			continue
		}
		if pos, end, ok := shownNameAt(toks, i, shownWords, false); ok {
			mentions = append(mentions, mention{refs: []memento.TitleRef{{Position: pos}}, at: i, end: end})
			i = end
			continue
		}
		i++
	}
	mask := make([]bool, len(toks))
	likePointer := false
	var people []personHit
	peopleRead := false
	mentionAt := func(j int) int {
		for k, mt := range mentions {
			if mt.at == j {
				return k
			}
		}
		return -1
	}
	for i := 0; i < len(toks); i++ {
		kind, n := cueAt(toks, i)
		if kind == refNone {
			continue
		}
		j := i + n
		for j < len(toks) && toks[j].brk == 0 && (toks[j].w == "already" || toks[j].w == "also" || toks[j].w == "really") {
			j++
		}
		if j >= len(toks) || toks[j].brk != 0 {
			if kind == refLike && n == 1 && toks[i].w == "similar" {
				likePointer = true // "something similar."
				markRange(mask, i, j)
			}
			continue
		}
		if kind == refLike && toks[i].w == "similar" && n == 1 {
			if similarPointers[toks[j].w] {
				likePointer = true // "similar ones"
				markRange(mask, i, j+1)
			}
			continue
		}
		// A chain of references after one cue: "seen Heat and Alien",
		// "not the first or the third one".
		took := false
		for {
			if k := mentionAt(j); k >= 0 {
				mentions[k].kind = kind
				markRange(mask, i, mentions[k].end)
				j = mentions[k].end
				took = true
			} else if pos, end, ok := shownNameAt(toks, j, shownWords, true); ok {
				mentions = append(mentions, mention{refs: []memento.TitleRef{{Position: pos}}, at: j, end: end, kind: kind})
				markRange(mask, i, end)
				j = end
				took = true
			} else if !took && kind == refLike && matchAny(toks, j, likePointerList) > 0 {
				n := matchAny(toks, j, likePointerList)
				likePointer = true
				markRange(mask, i, j+n)
				break
			} else {
				if !peopleRead {
					people, peopleRead = append(m.findPeople(toks), misspelt...), true
				}
				name, end, ok := m.nameAt(msg, toks, j, people, kind == refLike)
				if ok && (kind == refSeen || kind == refFavourite) && !lovedName(toks, j, end) {
					ok = false
				}
				if !ok {
					break
				}
				mentions = append(mentions, mention{refs: []memento.TitleRef{{Name: name}}, at: j, end: end, kind: kind})
				markRange(mask, i, end)
				j = end
				took = true
				if kind == refLike {
					tr.likeNew = true // favourites add an anchor to the request in force
				}
			}
			// Go on after "and", "or" or a comma; after a comma only in a
			// list ("seen Heat, Alien and Jaws"), not in a new clause
			// ("not Heat, Alien was fine").
			// A bracketed year ends a name without ending the list:
			// "Bridesmaids (2011) and Superbad (2007)".
			afterYear := j > 0 && j < len(toks) && toks[j-1].paren && isDigits(toks[j-1].w) && toks[j].brk == ','
			if j+1 < len(toks) && (toks[j].brk == 0 || afterYear) && (toks[j].w == "and" || toks[j].w == "or" || toks[j].w == "nor") {
				j++
				// "X or even Y", "X and maybe Y".
				if j+1 < len(toks) && toks[j].brk == 0 && (toks[j].w == "even" || toks[j].w == "maybe" || toks[j].w == "perhaps" || toks[j].w == "also") {
					j++
				}
			} else if j < len(toks) && toks[j].brk == ',' {
				e := m.refEnd(msg, toks, j, mentions, shownWords, people, kind == refLike)
				if e < 0 || e < len(toks) && toks[e].brk == 0 && toks[e].w != "and" && toks[e].w != "or" {
					break
				}
			} else {
				break
			}
			if mentionAt(j) < 0 {
				if _, _, ok := shownNameAt(toks, j, shownWords, true); !ok && !startsUpper(toks[j].raw) {
					break
				}
			}
		}
		if took {
			i = j - 1
		}
	}
	// "Pulp Fiction (1994) was good", "Heat is one of my favorites": a
	// judgement after a name says the title was seen.
	for k := 1; k < len(toks); k++ {
		if mask[k] {
			continue
		}
		n, fav := postJudgementAt(toks, k)
		if n == 0 || toks[k].brk != 0 && !(toks[k-1].paren && isDigits(toks[k-1].w)) {
			continue
		}
		kind := refSeen
		if fav {
			kind = refFavourite
		}
		found := false
		for q := range mentions {
			if mentions[q].end == k && mentions[q].kind == refNone {
				mentions[q].kind, found = kind, true
			}
		}
		if !found {
			if !peopleRead {
				people, peopleRead = append(m.findPeople(toks), misspelt...), true
			}
			start := k - 1
			for start > 0 && (toks[start].brk == 0 || toks[start].paren && isDigits(toks[start].w)) {
				start--
			}
			for s := start; s < k && !found; s++ {
				if mask[s] || !startsUpper(toks[s].raw) || insideName(toks, start, s) {
					continue
				}
				name, end, ok := m.nameAt(msg, toks, s, people, false)
				if ok && end == k && lovedName(toks, s, end) {
					mentions = append(mentions, mention{refs: []memento.TitleRef{{Name: name}}, at: s, end: end, kind: kind})
					found = true
				}
			}
		}
		if found {
			markRange(mask, k, k+n)
			k += n - 1
		}
	}
	// "The second one sounds good, more like that": a pointer after a Like
	// cue means the titles named elsewhere in the turn, or, with none, every
	// title just shown.
	if likePointer {
		named := false
		for k := range mentions {
			if mentions[k].kind == refNone {
				mentions[k].kind = refLike
				named = true
			}
		}
		if !named && !hasKind(mentions, refLike) {
			// "I've seen The Godfather, something else like it": the
			// titles the user has seen are the ones to resemble.
			for _, mt := range mentions {
				if mt.kind == refSeen {
					tr.like = append(tr.like, mt.refs...)
					named = true
				}
			}
		}
		if !named && len(tr.like) == 0 && !hasKind(mentions, refLike) {
			for p := 1; p <= len(shown); p++ {
				tr.like = append(tr.like, memento.TitleRef{Position: p})
			}
			tr.likeAll = len(shown) == 0
		}
	}
	for _, mt := range mentions {
		markRange(mask, mt.at, mt.end)
		switch mt.kind {
		case refLike:
			tr.like = append(tr.like, mt.refs...)
		case refAbout:
			tr.about = append(tr.about, mt.refs...)
		case refSeen:
			tr.seen = append(tr.seen, mt.refs...)
		case refReject:
			tr.reject = append(tr.reject, mt.refs...)
		case refFavourite:
			tr.seen = append(tr.seen, mt.refs...)
			tr.like = append(tr.like, mt.refs...)
		default:
			tr.named = append(tr.named, mt.refs...)
		}
	}
	tr.mask = mask
	return tr
}

// refEnd returns where a reference starting at toks[j] ends, or -1.
func (m *Model) refEnd(msg string, toks []token, j int, mentions []mention, shown [][]string, people []personHit, lower bool) int {
	for _, mt := range mentions {
		if mt.at == j {
			return mt.end
		}
	}
	if _, end, ok := shownNameAt(toks, j, shown, true); ok {
		return end
	}
	if _, end, ok := m.nameAt(msg, toks, j, people, lower); ok {
		return end
	}
	return -1
}

// insideName reports a capitalised word that continues a name begun
// before it: "Old Men" in "No Country for Old Men".
func insideName(toks []token, start, s int) bool {
	p := s - 1
	for p >= start && toks[p+1].brk == 0 && nameWords[toks[p].w] && !startsUpper(toks[p].raw) {
		p--
	}
	return p >= start && p < s-0 && toks[p+1].brk == 0 && startsUpper(toks[p].raw) && toks[p].w != "i"
}

// lovedName reports whether toks[s:end], named after a liking, can be a
// title: "I love Christmas" and "I do love 80s movies" name a topic and an
// era.
func lovedName(toks []token, s, end int) bool {
	if _, n, ok := topicTable.match(toks, s); ok && s+n >= end {
		return false
	}
	if _, _, _, ok := yearExpr(toks, s); ok && !unicode.IsLetter(rune(toks[s].raw[0])) {
		return false
	}
	return true
}

func hasKind(ms []mention, k refKind) bool {
	for _, m := range ms {
		if m.kind == k {
			return true
		}
	}
	return false
}

func markRange(mask []bool, from, to int) {
	for k := max(from, 0); k < to && k < len(mask); k++ {
		mask[k] = true
	}
}

// cueFirst holds the first word of every cue, so most words are passed
// over with one lookup.
var cueFirst = func() map[string]bool {
	f := set("like", "similar", "fan")
	for w := range lovedVerbs {
		f[w] = true
	}
	for _, w := range []string{"are", "is", "include", "includes", "were", "was", "would"} {
		f[w] = true
	}
	for _, l := range [][][]string{likeCueList, aboutCueList, seenCueList, rejectCueList} {
		for _, ws := range l {
			f[ws[0]] = true
		}
	}
	return f
}()

// cueAt returns the kind and length of the cue at toks[i].
func cueAt(toks []token, i int) (refKind, int) {
	if !cueFirst[toks[i].w] {
		return refNone, 0
	}
	if n := matchAny(toks, i, aboutCueList); n > 0 {
		return refAbout, n
	}
	if n := matchAny(toks, i, likeCueList); n > 0 {
		if toks[i].w == "more" && toks[i+1].w == "of" && i+2 < len(toks) && toks[i+2].w == "the" && matchSeq(toks, i+2, "the same") {
			return refLike, n // "more of the same"
		}
		return refLike, n
	}
	if toks[i].w == "like" && likePreposition(toks, i) {
		if i >= 2 && toks[i-1].brk == 0 && lovedVerbs[toks[i-2].w] && likeHeads[toks[i-1].w] {
			return refFavourite, 1 // "I like things like X": seen and wanted
		}
		return refLike, 1
	}
	if toks[i].w == "similar" {
		return refLike, 1
	}
	if n := matchAny(toks, i, seenCueList); n > 0 {
		if unseenBefore(toks, i) || i > 0 && toks[i].brk == 0 && toks[i-1].w == "you" {
			return refNone, 0 // "haven't seen", "have you seen"
		}
		return refSeen, n
	}
	if n := matchAny(toks, i, rejectCueList); n > 0 {
		return refReject, n
	}
	if n, fav := lovedCueAt(toks, i); n > 0 {
		if fav {
			return refFavourite, n
		}
		return refSeen, n
	}
	return refNone, 0
}

// likePreposition reports whether "like" at toks[i] compares rather than
// states a liking: after a noun ("movies like Heat"), at the start of a
// clause ("Like The Matrix but funnier"), or after a genre ("comedies like
// Airplane").
func likePreposition(toks []token, i int) bool {
	if i == 0 || toks[i].brk != 0 {
		return i+1 < len(toks) && toks[i+1].brk == 0
	}
	prev := toks[i-1].w
	if likeHeads[prev] {
		return true
	}
	if (prev == "just" || prev == "exactly") && (i == 1 || toks[i-1].brk != 0 || likeHeads[toks[i-2].w]) {
		return true // "Just like Heat", "something exactly like it"
	}
	_, n, ok := fullGenreTable.match(toks, i-1)
	return ok && n == 1
}

// positionAt reads a reference by position at toks[i]: "the second one",
// "the last two", "number 3", "#2". A bare ordinal needs a noun after it
// ("second one") unless lenient chaining allows it.
func positionAt(msg string, toks []token, i int, needLead bool) ([]memento.TitleRef, int, bool) {
	k := i
	det := false
	if k < len(toks) && (toks[k].w == "the" || toks[k].w == "that" || toks[k].w == "this") {
		k++
		det = true
	}
	if k >= len(toks) || det && toks[k].brk != 0 {
		return nil, 0, false
	}
	var refs []memento.TitleRef
	w := toks[k].w
	numbered, several := false, false
	if p, ok := ordinals[w]; ok {
		// "second to last", "second last".
		if p == 2 && matchSeq(toks, k+1, "to last") {
			p, k = -2, k+2
		} else if p == 2 && matchSeq(toks, k+1, "last") {
			p, k = -2, k+1
		}
		k++
		// "the first two", "the last three".
		if det && (p == 1 || p == -1) && k < len(toks) && toks[k].brk == 0 {
			if n, ok := number(toks[k].w); ok && n >= 2 && n <= 10 && (k+1 >= len(toks) || !countUnits[toks[k+1].w] || toks[k+1].brk != 0) {
				for q := 1; q <= n; q++ {
					refs = append(refs, memento.TitleRef{Position: q * p})
				}
				k++
				several = true // "the first two" needs no noun
			}
		}
		if refs == nil {
			refs = []memento.TitleRef{{Position: p}}
		}
	} else if numberedLeads[w] && k+1 < len(toks) && toks[k+1].brk == 0 {
		n, ok := number(toks[k+1].w)
		if !ok || n < 1 || n > memento.MaxCount || w == "no" && !isDigits(toks[k+1].w) {
			return nil, 0, false
		}
		refs = []memento.TitleRef{{Position: n}}
		k += 2
		numbered = true
	} else if isDigits(w) && toks[k].start > 0 && msg[toks[k].start-1] == '#' {
		n, ok := number(w)
		if !ok || n < 1 || n > memento.MaxCount {
			return nil, 0, false
		}
		refs = []memento.TitleRef{{Position: n}}
		k++
		numbered = true
	} else {
		return nil, 0, false
	}
	noun := false
	if k < len(toks) && toks[k].brk == 0 && refNouns[toks[k].w] {
		k++
		noun = true
	}
	if !numbered && !noun && !several {
		if !det && needLead {
			return nil, 0, false
		}
		if k < len(toks) && toks[k].brk == 0 && !refFollowers[toks[k].w] {
			return nil, 0, false // "the last time", "the first 10 minutes"
		}
	}
	if numbered && toks[i].w == "the" {
		return nil, 0, false // "the number 23"
	}
	// "the first and third ones", "the second or the last".
	if k+1 < len(toks) && toks[k].brk == 0 && (toks[k].w == "and" || toks[k].w == "or") {
		if more, end, ok := positionAt(msg, toks, k+1, false); ok {
			return append(refs, more...), end, true
		}
	}
	return refs, k, true
}

// shownTitleWords splits the names of the titles shown into words, once
// per turn, skipping those the message cannot contain.
func shownTitleWords(msg string, shown []memento.Title) [][]string {
	if len(shown) == 0 {
		return nil
	}
	low := strings.ToLower(msg)
	out := make([][]string, len(shown))
	for k, t := range shown {
		ws := words(t.Title)
		if len(ws) > 0 && ws[0] == "the" || len(ws) > 0 && (ws[0] == "a" || ws[0] == "an") && len(ws) > 1 {
			if !strings.Contains(low, ws[1]) {
				continue
			}
		} else if len(ws) == 0 || !strings.Contains(low, ws[0]) {
			continue
		}
		out[k] = ws
	}
	return out
}

// shownNameAt reports whether the name of a title just shown starts at
// toks[i], returning its position. A one-word name made of a common word
// ("Up", "Heat") must be capitalised unless it follows a cue (afterCue).
func shownNameAt(toks []token, i int, shown [][]string, afterCue bool) (int, int, bool) {
	best, bestEnd := 0, 0
	for k, ws := range shown {
		if len(ws) == 0 {
			continue
		}
		for _, cand := range [][]string{ws, withoutArticle(ws)} {
			if len(cand) == 0 || !matchNameAt(toks, i, cand) {
				continue
			}
			end := i + len(cand)
			if cand[0] != ws[0] && i > 0 && toks[i-1].w == "the" && toks[i].brk == 0 {
				continue // read with its article at i-1
			}
			content := 0
			for _, w := range cand {
				if !stopwords[w] {
					content++
				}
			}
			if content == 0 {
				continue
			}
			if content == 1 && len(cand) <= 2 && !startsUpper(toks[i].raw) && !(afterCue && !isCommonWord(cand)) {
				continue
			}
			if end-i > bestEnd-i || bestEnd == 0 {
				best, bestEnd = k+1, end
			}
		}
	}
	if bestEnd == 0 {
		return 0, 0, false
	}
	return best, bestEnd, true
}

// isCommonWord reports a one-word name that is also a genre, topic or
// title noun, which needs a capital to be read as a name.
func isCommonWord(ws []string) bool {
	if len(ws) != 1 {
		return false
	}
	w := ws[0]
	if stopwords[w] || titleNouns[w] || countNouns[w] || numberWords[w] != 0 {
		return true
	}
	if _, ok := fullGenreTable.byFirst[w]; ok {
		return true
	}
	return false
}

func withoutArticle(ws []string) []string {
	if len(ws) > 1 && (ws[0] == "the" || ws[0] == "a" || ws[0] == "an") {
		return ws[1:]
	}
	return nil
}

// matchNameAt is matchAt for a title's name, which may hold a colon or
// comma ("Alien: Resurrection").
func matchNameAt(toks []token, i int, ws []string) bool {
	if i < 0 || i+len(ws) > len(toks) {
		return false
	}
	for k, w := range ws {
		t := toks[i+k]
		if t.w != w || k > 0 && t.brk != 0 && t.brk != ':' && t.brk != ',' {
			return false
		}
	}
	return true
}

// nameAt reads a title's name as written at toks[i]. With a title lookup
// the longest run of words that names a catalog title wins; without one,
// a run of capitalised words (with the small words between them) is taken
// as a name, or, when lower is set and the message is written all in lower
// case, the words up to the next connective ("something like inception"). Genres, people and platforms are not names.
func (m *Model) nameAt(msg string, toks []token, i int, people []personHit, lower bool) (string, int, bool) {
	if i >= len(toks) || toks[i].paren {
		return "", 0, false
	}
	// "It (2017)": a bracketed year makes even a common word a name.
	yearNamed := startsUpper(toks[i].raw) && i+1 < len(toks) && toks[i+1].paren && isDigits(toks[i+1].w) && len(toks[i+1].w) == 4
	if notNames[toks[i].w] && !yearNamed {
		return "", 0, false
	}
	// "the Star Wars movies": a lower-case article before a name.
	if toks[i].w == "the" && !startsUpper(toks[i].raw) && i+1 < len(toks) && toks[i+1].brk == 0 && startsUpper(toks[i+1].raw) && !notNames[toks[i+1].w] {
		if name, end, ok := m.nameAt(msg, toks, i+1, people, false); ok {
			return name, end, true
		}
	}
	if _, ok := number(toks[i].w); ok && (!startsUpper(toks[i].raw) || isDigits(toks[i].w) && (i+1 >= len(toks) || !startsUpper(toks[i+1].raw) || isDigits(toks[i+1].w))) {
		return "", 0, false // "something like 10 movies"
	}
	for _, p := range people {
		if i >= p.at && i < p.at+p.n {
			return "", 0, false
		}
	}
	if _, _, ok := m.genres.match(toks, i); ok && !startsUpper(toks[i].raw) {
		return "", 0, false
	}
	// The clause the name must stay in.
	limit := i + 1
	for limit < len(toks) && limit < i+10 && (toks[limit].brk == 0 || toks[limit].brk == ':' || toks[limit].paren && isDigits(toks[limit].w)) {
		limit++
	}
	if m.titles != nil {
		upper := startsUpper(toks[i].raw)
		if !upper && (stopwords[toks[i].w] && toks[i].w != "the" || !lower) {
			// Written in lower case, a name must follow "like" and start
			// with a word of its own: "not in the mood" is no title.
			return "", 0, false
		}
		for end := limit; end > i; end-- {
			if stopwords[toks[end-1].w] && !toks[end-1].paren && !startsUpper(toks[end-1].raw) {
				continue
			}
			text := spanText(msg, toks, i, end)
			if t, ok := m.titles(text); ok && t != nil {
				return text, end, true
			}
		}
		return "", 0, false
	}
	end := 0
	if startsUpper(toks[i].raw) {
		for k := i; k < limit; k++ {
			t := toks[k]
			switch {
			case t.paren && isDigits(t.w) && len(t.w) == 4:
				end = k + 1
				k = limit // a year in brackets ends the name
			case t.paren:
				k = limit
			case startsUpper(t.raw):
				if k > i && (t.w == "i" || notNames[t.w] && t.w != "it" && t.w != "one") {
					k = limit
					continue
				}
				end = k + 1
			case nameWords[t.w]:
			default:
				k = limit
			}
		}
	} else if lower && !hasUpper(msg) {
		for k := i; k < limit && k < i+6; k++ {
			if nameStops[toks[k].w] {
				break
			}
			if _, _, _, ok := yearExpr(toks, k); ok && k > i {
				break
			}
			if !stopwords[toks[k].w] {
				end = k + 1
			}
		}
		if end > 0 && (stopwords[toks[i].w] && toks[i].w != "the") {
			return "", 0, false // "something like a comedy"
		}
		for k := i; k < end; k++ {
			if _, _, ok := m.genres.match(toks, k); ok || titleNouns[toks[k].w] {
				return "", 0, false
			}
		}
	}
	if end == 0 {
		return "", 0, false
	}
	for k := i; k < end; k++ {
		for _, p := range people {
			if k >= p.at && k < p.at+p.n {
				return "", 0, false
			}
		}
	}
	if end == i+1 {
		if gs, n, ok := m.genres.match(toks, i); ok && n == 1 && len(gs) > 0 {
			return "", 0, false // "like Horror"
		}
		if platformAt(msg, toks, i) > 0 {
			return "", 0, false
		}
	}
	return spanText(msg, toks, i, end), end, true
}

// spanText is the message's text from toks[i] to the end of toks[end-1],
// with a closing bracket kept after a bracketed year.
func spanText(msg string, toks []token, i, end int) string {
	to := toks[end-1].end
	if toks[end-1].paren && to < len(msg) && (msg[to] == ')' || msg[to] == ']') {
		to++
	}
	return strings.TrimSpace(msg[toks[i].start:to])
}

func hasUpper(s string) bool {
	for _, r := range s {
		if unicode.IsUpper(r) {
			return true
		}
	}
	return false
}

// Seen without a name: "I have seen it", "I did see that", "I have both on
// dvd", "lol, I have. Who hasn't", "loved that one". Said after an answer,
// such a turn says the user knows the titles just shown, so the agent
// answers with others and keeps the request.

// seenVerbs say a title was seen; "see" and "watch" only after "did",
// "do" or "have" ("I did see that").
var seenVerbs = set("seen", "saw", "watched", "see", "watch")

// seenPointers point at the titles just shown after a verb of seeing,
// owning or liking ("seen all of those", "have both").
var seenPointers = longestFirst(compile(append([]string{
	"all of those", "all of them", "all of these", "all those", "all these", "all three", "all",
	"each of them", "every one of them", "every one of those", "each one of them", "every one",
	"every single one", "both of them", "both of those", "that movie",
	"that film", "this movie", "those movies", "those films", "those already",
}, shownPointers...)))

// seenTails may follow a pointer in a turn that says it was seen: "seen it
// already", "have both on dvd".
var seenTails = set("already", "before", "too", "lol", "haha", "on", "at", "yet", "already", "years",
	"twice", "recently", "lately", "as", "a", "multiple", "many", "several", "so", "actually", "movies",
	"films", "ones", "one", "and", "but", "though", "in", "with", "when", "last", "back", "already.")

// seenSubjects say who saw or owns a title.
var seenSubjects = set("i", "we", "i've", "we've", "ive", "i'd", "id")

// seenAdverbs may stand between the subject and its verb: "I have
// actually already seen".
var seenAdverbs = set("have", "had", "did", "do", "already", "actually", "also", "both", "really", "just",
	"definitely", "totally", "absolutely", "sure", "all", "think", "have", "been", "always", "still",
	"personally", "honestly", "even", "truly", "genuinely", "loved", "both", "once")

// ownVerbs say the user owns a title, which means seen: "I have both on
// dvd", "we own it".
var ownVerbs = set("have", "own", "owned", "bought", "got", "has")

// lovedVerbs state a liking of a title, which means seen: "loved it",
// "I really liked that one".
var lovedVerbs = set("loved", "liked", "enjoyed", "adored", "love", "adore", "enjoy", "like", "prefer", "preferred")

// bareFillers may surround a bare "I have" that answers "have you seen
// it?" ("lol, I have", "yes I did").
var bareFillers = set("lol", "yes", "yeah", "yep", "yup", "oh", "haha", "hah", "ya", "sure", "well", "um",
	"ok", "okay", "actually", "already", "too", "indeed", "definitely", "absolutely")

// judgements said of a title show it was seen: "that one was great",
// "Pulp Fiction was good".
var judgements = set("good", "great", "amazing", "awesome", "fantastic", "excellent", "hilarious",
	"brilliant", "wonderful", "incredible", "fun", "ok", "okay", "decent", "alright", "bad", "terrible",
	"awful", "horrible", "meh", "solid", "cool", "nice", "perfect", "underrated", "overrated", "funny",
	"entertaining", "enjoyable", "epic", "superb", "outstanding", "classic", "best", "worst", "phenomenal")

// judgementNouns may close a judgement: "was a great movie".
var judgementNouns = set("movie", "movies", "film", "films", "one", "ones", "show", "classic", "flick", "watch", "time")

// seenShown reports a turn that says the titles just shown were seen,
// owned or loved, without naming them. A negated verb ("I haven't seen
// it", "I didn't see that") never counts.
func seenShown(toks []token) bool {
	for i := range toks {
		if seenShownAt(toks, i) {
			return true
		}
	}
	return bareSeen(toks)
}

// seenShownAt reads one verb of seeing, owning or loving at toks[i], or a
// judgement with a pointer as its subject ("that one was great").
func seenShownAt(toks []token, i int) bool {
	w := toks[i].w
	pointerAfter := func(j int) bool {
		if j >= len(toks) || toks[j].brk != 0 {
			return false
		}
		n := matchAny(toks, j, seenPointers)
		if n == 0 {
			return false
		}
		end := j + n
		return end >= len(toks) || toks[end].brk != 0 || seenTails[toks[end].w] || pointerTail[toks[end].w]
	}
	prev := ""
	if i > 0 && toks[i].brk == 0 {
		prev = toks[i-1].w
	}
	switch {
	case seenVerbs[w]:
		if unseenBefore(toks, i) || prev == "you" || prev == "to" || prev == "u" {
			return false // "haven't seen", "have you seen", "want to see"
		}
		if (w == "see" || w == "watch") && prev != "did" && prev != "do" && prev != "have" {
			return false
		}
		return pointerAfter(i + 1)
	case ownVerbs[w] || w == "i've" || w == "we've":
		// "I have both on dvd", "we own it", "I've got that one".
		k := i - 1
		if w == "i've" || w == "we've" {
			k = i
		} else {
			for k >= 0 && toks[k+1].brk == 0 && (toks[k].w == "already" || toks[k].w == "actually" || toks[k].w == "also" || toks[k].w == "do") {
				k--
			}
			if k < 0 || toks[k+1].brk != 0 || !seenSubjects[toks[k].w] {
				return false
			}
		}
		j := i + 1
		if w == "i've" || w == "we've" {
			if j < len(toks) && toks[j].brk == 0 && (toks[j].w == "got" || toks[j].w == "already") {
				j++
			} else {
				return false
			}
		} else if j < len(toks) && toks[j].brk == 0 && toks[j].w == "got" {
			j++
		}
		if negatedBefore(toks, i) {
			return false
		}
		if j >= len(toks) || toks[j].brk != 0 {
			return false
		}
		n := matchAny(toks, j, seenPointers)
		if n == 0 || toks[j].w == "this" || toks[j].w == "that" && n == 1 || toks[j].w == "any" {
			return false // "I have that feeling"
		}
		end := j + n
		if end >= len(toks) || toks[end].brk != 0 {
			return toks[j].w == "both" || toks[j].w == "all" || n > 1 || toks[j].w == "it" || toks[j].w == "them"
		}
		switch toks[end].w {
		case "on", "at", "already", "too", "lol", "haha", "in":
			return true
		}
		return false
	case lovedVerbs[w]:
		// "loved it", "I really liked that one", "love that movie".
		k := i - 1
		for k >= 0 && toks[k+1].brk == 0 && seenAdverbs[toks[k].w] {
			k--
		}
		subject := k < 0 || toks[k+1].brk != 0 || seenSubjects[toks[k].w] && toks[k].w != "i'd" && toks[k].w != "id"
		if !subject || negatedBefore(toks, i) {
			return false
		}
		past := w == "loved" || w == "liked" || w == "enjoyed" || w == "adored"
		j := i + 1
		if j >= len(toks) || toks[j].brk != 0 {
			return false
		}
		n := matchAny(toks, j, seenPointers)
		if n == 0 {
			return false
		}
		end := j + n
		noun := n > 1 || toks[j].w == "both"
		if !past && !(w == "love" && noun) {
			return false // "I like that", "I'd love it"
		}
		return end >= len(toks) || toks[end].brk != 0 || seenTails[toks[end].w] || pointerTail[toks[end].w]
	case w == "was" || w == "is" || w == "were":
		// "that one was great", "it was good", "that one is pretty good".
		if i == 0 || toks[i].brk != 0 {
			return false
		}
		s := i - 1
		for s > 0 && toks[s].brk == 0 && (toks[s].w == "one" || toks[s].w == "movie" || toks[s].w == "film") {
			s--
		}
		subj := toks[s].w
		if subj != "it" && subj != "that" && subj != "this" && subj != "both" && subj != "those" && subj != "they" {
			return false
		}
		if s > 0 && toks[s].brk == 0 && !interjections[toks[s-1].w] && !seenAdverbs[toks[s-1].w] && toks[s-1].w != "and" && toks[s-1].w != "but" {
			return false // "something that is fun"
		}
		noun := s < i-1
		j := i + 1
		for j < len(toks) && toks[j].brk == 0 && toneIntensifiers[toks[j].w] {
			j++
		}
		soSo := j == i+3 && toks[i+1].w == "so" && toks[i+2].w == "so" && toks[i+2].hyph // "it was so-so"
		if !soSo && (j >= len(toks) || toks[j].brk != 0 || !judgements[toks[j].w]) {
			return false
		}
		if soSo {
			return !negatedBefore(toks, i)
		}
		if w == "is" && !noun && !(toks[i+1].w == "a" && j+1 < len(toks) && toks[j+1].brk == 0 && judgementNouns[toks[j+1].w]) {
			return false // "that is great" may greet an answer; "that is a great movie" knows it
		}
		return !negatedBefore(toks, i)
	}
	return false
}

// negatedBefore reports a negator within three words before toks[i] in
// its clause: "I don't have it", "I didn't love that one".
func negatedBefore(toks []token, i int) bool {
	for k := i - 1; k >= 0 && k >= i-3; k-- {
		if toks[k+1].brk != 0 {
			return false
		}
		if negators[toks[k].w] && toks[k].w != "too" || unseenMarkers[toks[k].w] {
			return true
		}
	}
	return false
}

// bareSeen reports a clause that only says "I have" or "I did" ("lol, I
// have.", "Yes I did"), or asks "who hasn't?", or says "my favorite": the
// answer to having seen what was shown.
func bareSeen(toks []token) bool {
	for start := 0; start < len(toks); {
		end := start + 1
		for end < len(toks) && toks[end].brk == 0 {
			end++
		}
		var core []string
		from := start
		if matchSeq(toks, start, "of course") {
			from += 2
		}
		for _, t := range toks[from:end] {
			if !bareFillers[t.w] {
				core = append(core, t.w)
			}
		}
		switch {
		case len(core) == 2 && (core[0] == "i" || core[0] == "we") && (core[1] == "have" || core[1] == "did" || core[1] == "had"):
			return true
		case len(core) >= 2 && core[0] == "who" && (core[1] == "hasn't" || core[1] == "hasnt" || core[1] == "hasn’t"):
			return true
		case len(core) >= 2 && len(core) <= 4 && core[0] == "my" && isFavourite(core[len(core)-1]):
			return true // "My absolute favorite!!"
		case len(core) >= 4 && len(core) <= 5 && core[0] == "one" && core[1] == "of" && core[2] == "my" && isFavourite(core[len(core)-1]):
			return true
		}
		start = end
	}
	return false
}

func isFavourite(w string) bool {
	return w == "favorite" || w == "favourite" || w == "favorites" || w == "favourites" || w == "fave" || w == "faves"
}

// lovedCueAt reads a liking of a title at toks[i] ("I love", "I really
// liked", "I prefer", "my favorite movies are", "a big fan of") and
// returns its length and whether it also asks for more of the kind
// (preferences and favourites do).
func lovedCueAt(toks []token, i int) (int, bool) {
	w := toks[i].w
	switch w {
	case "are", "is", "include", "includes", "were", "was", "would":
		// "my favorite movies are", "one of my favorite thrillers is",
		// "favorites include": the cue is the verb, so the genre words
		// before it are still read ("favorite comedies").
		n := 1
		if w == "would" {
			if !matchSeq(toks, i+1, "be") {
				return 0, false
			}
			n = 2
		}
		for k := i - 1; k >= 0 && k >= i-4 && toks[k+1].brk == 0; k-- {
			t := toks[k].w
			if isFavourite(t) {
				return n, true
			}
			if _, _, ok := fullGenreTable.match(toks, k); ok || titleNouns[t] || t == "all" || t == "time" || t == "ones" {
				continue
			}
			break
		}
		return 0, false
	}
	if w == "fan" && matchSeq(toks, i+1, "of") {
		if negatedBefore(toks, i) {
			return 0, false
		}
		return 2, false
	}
	if !lovedVerbs[w] {
		return 0, false
	}
	k := i - 1
	for k >= 0 && toks[k+1].brk == 0 && seenAdverbs[toks[k].w] && toks[k].w != "loved" {
		k--
	}
	atStart := k < 0 || toks[k+1].brk != 0
	if !atStart && !(toks[k].w == "i" || toks[k].w == "we") || negatedBefore(toks, i) {
		return 0, false
	}
	if atStart && (w == "like" || w == "enjoy" || w == "prefer") {
		return 0, false // "Like The Matrix but funnier" compares
	}
	return 1, w == "prefer" || w == "preferred"
}

// postJudgementAt reads a judgement after a title's name at toks[k]:
// "was good", "is one of my favorites", "is another one my favorites". It
// returns its length and whether it names a favourite.
func postJudgementAt(toks []token, k int) (int, bool) {
	w := toks[k].w
	if w != "was" && w != "is" && w != "were" && w != "are" {
		return 0, false
	}
	j := k + 1
	for j < len(toks) && toks[j].brk == 0 && (toneIntensifiers[toks[j].w] || toks[j].w == "an" || toks[j].w == "such" || toks[j].w == "the") {
		j++
	}
	if j >= len(toks) || toks[j].brk != 0 {
		return 0, false
	}
	// "one of my favorites", "another one my favorites", "my favorite".
	for e := j; e < len(toks) && e <= j+4 && (e == j || toks[e].brk == 0); e++ {
		if isFavourite(toks[e].w) {
			ok := true
			for _, t := range toks[j:e] {
				switch t.w {
				case "one", "of", "my", "another", "all", "time", "absolute", "personal", "our":
				default:
					ok = false
				}
			}
			if ok {
				return e + 1 - k, true
			}
			break
		}
	}
	if !judgements[toks[j].w] {
		return 0, false
	}
	end := j + 1
	if end < len(toks) && toks[end].brk == 0 && judgementNouns[toks[end].w] {
		end++
	}
	return end - k, false
}
