package offline

import (
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memento-ai/memento"
)

// Misspelt genres: a word the rules do not know is compared, by edit
// distance, with the one-word genre names and synonyms of the vocabulary
// ("horor" is "horror", "comdy" is "comedy"). Ordinary English is full of
// words one letter away from a genre ("sunny", "prime", "eastern",
// "thrilled"), so a correction needs all of:
//
//   - a word of five letters or more that no lexicon of this package knows;
//   - the same first letter as the genre word (people rarely miss the first);
//   - one edit at most (two from eight letters on), counting a swap of two
//     neighbouring letters as one, and no other genre word as close;
//   - no inflection the genre word lacks ("thrilled" is not "thriller");
//   - a place where a genre fits: before a title noun or a genre, or at the
//     end of a clause after a word that introduces one ("a comdy", "some
//     horor please").

// typoTarget is a genre word a misspelling may stand for.
type typoTarget struct {
	word  string   // the lexicon word, lower case
	runes []rune   // word as runes
	to    string   // what the correction names: the genre, or the word
	key   []string // the genres it maps to, to tell ambiguous matches apart
}

// buildTypoTargets collects the one-word genre phrases of the table.
func buildTypoTargets(t *phraseTable[[]string]) []typoTarget {
	var out []typoTarget
	for _, first := range slices.Sorted(maps.Keys(t.byFirst)) {
		entries := t.byFirst[first]
		for _, e := range entries {
			if len(e.words) != 1 || utf8.RuneCountInString(first) < 4 || !allLetters(first) {
				continue
			}
			to := first
			if len(e.val) == 1 {
				to = e.val[0]
			}
			out = append(out, typoTarget{word: first, runes: []rune(first), to: to, key: e.val})
		}
	}
	return out
}

// typoSlotLeads introduce a genre at the end of a clause: "a comdy",
// "some horor".
var typoSlotLeads = set("a", "an", "some", "any", "good", "great", "old", "new", "classic", "recent",
	"more", "few", "of", "like", "love", "want", "watch", "no", "not", "and", "or", "the", "best",
	"funny", "scary", "into", "enjoy", "prefer", "with", "but", "maybe", "also", "only", "just",
	"me", "us", "something", "anything", "cool", "nice", "fun", "bad", "recommend", "suggest",
	"90s", "80s", "70s", "60s", "2000s", "fan", "is", "was", "mean")

// typoSlotFollows end the phrase a genre stands in: "horor from the 80s".
var typoSlotFollows = set("from", "with", "set", "about", "for", "please", "that", "or", "and", "but",
	"starring", "featuring", "since", "before", "after", "in", "on", "only", "instead", "too", "then")

// knownWords are every word the rules of this package know; none of them is
// a misspelling.
var knownWords = func() map[string]bool {
	k := map[string]bool{}
	addAll := func(lists ...[]string) {
		for _, l := range lists {
			for _, p := range l {
				for _, w := range words(p) {
					k[w] = true
				}
			}
		}
	}
	addSet := func(sets ...map[string]bool) {
		for _, s := range sets {
			for w := range s {
				k[w] = true
			}
		}
	}
	addAll(requestPhrases, rejectPhrases, rejectVerbs, shownPointers, followUpStarts, followUpAnywhere,
		additiveCues, helpQuestions, titleQuestionStarts, adultWords, topicWords, shiftOlder, shiftNewer)
	addSet(stopwords, smallTalkWords, signalWords, negators, negationBreakers, interjections, countNouns,
		countUnits, countLeads, countFillers, titleNouns, refNouns, refFollowers, likeHeads, nameStops,
		notNames, moodLeads, typoSlotLeads, typoSlotFollows, olderPeople, showObjects, pointerTail,
		freeTextStops, holidays, movieNouns, seriesNouns)
	for _, e := range genreLexicon {
		addAll([]string{e.phrase})
	}
	for w := range numberWords {
		k[w] = true
	}
	for w := range ordinals {
		k[w] = true
	}
	for _, t := range []*phraseTable[string]{platformTable} {
		for w := range t.byFirst {
			k[w] = true
		}
	}
	for w := range moodTable.byFirst {
		k[w] = true
	}
	return k
}()

// correctTypos rewrites misspelt genre words of toks in place to the
// lexicon word and returns the corrections made.
func (m *Model) correctTypos(toks []token) []memento.Correction {
	var out []memento.Correction
	for i := range toks {
		t := &toks[i]
		n := utf8.RuneCountInString(t.w)
		if n < 5 || n > 16 || knownWords[t.w] || !allLetters(t.w) || t.paren {
			continue
		}
		if _, ok := m.genres.byFirst[t.w]; ok {
			continue
		}
		if i > 0 && t.brk == 0 && startsUpper(t.raw) {
			continue // a name or a title
		}
		if !typoSlot(toks, i) {
			continue
		}
		target, ok := m.closestGenreWord(t.w, n)
		if !ok {
			continue
		}
		out = append(out, memento.Correction{From: t.raw, To: target.to})
		t.w = target.word
	}
	return out
}

// typoSlot reports whether a genre fits at toks[i].
func typoSlot(toks []token, i int) bool {
	next := ""
	if i+1 < len(toks) && toks[i+1].brk == 0 {
		next = toks[i+1].w
	}
	if titleNouns[next] && next != "ones" {
		return true
	}
	if next != "" {
		if _, _, ok := fullGenreTable.match(toks, i+1); ok {
			return true
		}
	}
	if next != "" && !typoSlotFollows[next] {
		return false
	}
	if i == 0 || toks[i].brk != 0 {
		return true
	}
	return typoSlotLeads[toks[i-1].w]
}

// closestGenreWord returns the one genre word within reach of w.
func (m *Model) closestGenreWord(w string, n int) (typoTarget, bool) {
	limit := 1
	if n >= 8 {
		limit = 2
	}
	rw := []rune(w)
	best, bestD, ambiguous := typoTarget{}, limit+1, false
	for _, t := range m.typos {
		if t.runes[0] != rw[0] || abs(len(t.runes)-len(rw)) > limit {
			continue
		}
		if inflects(w, t.word) {
			continue
		}
		d := osaDistance(rw, t.runes, limit)
		switch {
		case d < bestD:
			best, bestD, ambiguous = t, d, false
		case d == bestD && !sameGenres(best.key, t.key):
			ambiguous = true
		}
	}
	if bestD > limit || ambiguous {
		return typoTarget{}, false
	}
	return best, true
}

// inflects reports an ending of w that the genre word lacks: "thrilled"
// is an inflection of something, not a way to misspell "thriller".
func inflects(w, target string) bool {
	for _, suf := range []string{"ed", "ing", "ly", "er", "ers", "ness"} {
		if strings.HasSuffix(w, suf) && !strings.HasSuffix(target, suf) {
			return true
		}
	}
	return false
}

func sameGenres(a, b []string) bool { return equalWords(a, b) }

func allLetters(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return s != ""
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// osaDistance is the optimal string alignment distance of a and b (edits,
// with a swap of neighbours as one), or limit+1 once it exceeds limit.
func osaDistance(a, b []rune, limit int) int {
	if abs(len(a)-len(b)) > limit || len(b) > 16 {
		return limit + 1
	}
	// Three rows are enough for the swap rule.
	var buf [3][17]int
	prev2, prev, cur := buf[0][:len(b)+1], buf[1][:len(b)+1], buf[2][:len(b)+1]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		if rowMin > limit {
			return limit + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
