package prefs

import (
	"slices"
	"strings"
	"unicode"

	"github.com/memento-ai/memento"
)

// Ranking by embeddings alone misses what a concept names exactly: the
// offline embedder files "heist" under crime, so every short crime plot
// looks like a heist, and a name such as "tom hanks" is two rare words
// among fifty in a title's text. The scorer therefore adds a lexical
// match: a title whose text contains a concept's words, in order, gains
// LexicalWeight × the concept's weight. Words are lower-cased, split at
// anything but letters and digits, and lightly stemmed (plurals), and the
// words of a concept that name no kind of thing ("films", "movies",
// "very") are left out.

// conceptStopwords are left out of a concept's words.
var conceptStopwords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "and": true, "or": true, "with": true, "in": true,
	"on": true, "about": true, "very": true, "really": true, "good": true, "film": true, "movie": true,
	"show": true, "series": true, "story": true, "stuff": true, "thing": true, "kind": true, "type": true,
	"some": true, "any": true, "all": true, "more": true, "most": true,
}

// words returns the normalised words of text.
func words(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len(w) > 1 {
			out = append(out, stemWord(w))
		}
	}
	return out
}

// stemWord folds English plurals: "comedies" → "comedy", "heists" →
// "heist", "boxes" → "box".
func stemWord(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 4 && (strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "sses")):
		return w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:len(w)-1]
	}
	return w
}

// conceptWords returns the words of a concept a title must contain.
func conceptWords(concept string) []string {
	var out []string
	for _, w := range words(concept) {
		if !conceptStopwords[w] {
			out = append(out, w)
		}
	}
	return out
}

// containsRun reports whether seq contains run, in order and adjacent.
func containsRun(seq, run []string) bool {
	if len(run) == 0 {
		return false
	}
	for i := 0; i+len(run) <= len(seq); i++ {
		if seq[i] == run[0] && slices.Equal(seq[i:i+len(run)], run) {
			return true
		}
	}
	return false
}

// termIndex maps each word of the catalog's titles to the positions (in
// the catalog's order) of the titles that contain it.
type termIndex struct {
	postings map[string][]int32
	pos      map[string]int32 // title id -> position
}

// buildTermIndex indexes the words of titles.
func buildTermIndex(titles []memento.Title) *termIndex {
	x := &termIndex{postings: map[string][]int32{}, pos: make(map[string]int32, len(titles))}
	for i, t := range titles {
		if _, ok := x.pos[t.ID]; !ok {
			x.pos[t.ID] = int32(i)
		}
		seen := map[string]bool{}
		for _, w := range words(TitleText(t)) {
			if !seen[w] {
				seen[w] = true
				x.postings[w] = append(x.postings[w], int32(i))
			}
		}
	}
	return x
}

// matches returns the positions of the titles whose text contains the
// words run, in order; titles gives their texts for the order check.
func (x *termIndex) matches(run []string, titles []memento.Title) []int32 {
	if len(run) == 0 {
		return nil
	}
	lists := make([][]int32, len(run))
	for i, w := range run {
		lists[i] = x.postings[w]
		if len(lists[i]) == 0 {
			return nil
		}
	}
	slices.SortFunc(lists, func(a, b []int32) int { return len(a) - len(b) })
	cand := lists[0]
	for _, l := range lists[1:] {
		cand = intersect(cand, l)
		if len(cand) == 0 {
			return nil
		}
	}
	if len(run) == 1 {
		return cand
	}
	out := cand[:0:0]
	for _, p := range cand {
		if containsRun(words(TitleText(titles[p])), run) {
			out = append(out, p)
		}
	}
	return out
}

// intersect returns the common elements of two sorted lists.
func intersect(a, b []int32) []int32 {
	var out []int32
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}
