package prefs

import (
	"slices"
	"strings"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/fulltext"
	"github.com/memento-ai/memento/internal/memo"
)

// Ranking by embeddings alone misses what a concept names exactly: the
// offline embedder files "heist" under crime, so every short crime plot
// looks like a heist, and a name such as "tom hanks" is two rare words
// among fifty in a title's text. The scorer therefore adds a lexical
// match: a title whose text contains a concept's words, in order, gains
// LexicalWeight × the concept's weight. Words are fulltext's topic terms,
// as the catalog's index and recall spell them (folded, stop words left
// out, Porter-stemmed, so "heists" is "heist" and "lord of the rings" is
// "lord ring" in the concept and in the title alike), and the words of a
// concept that name no kind of thing ("films", "movies", "very") are left
// out of it.

// conceptNoise are the terms (stemmed) left out of a concept's words: the
// kinds of title and the intensifiers that name no topic.
var conceptNoise = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range []string{"very", "really", "good", "film", "movie", "show", "series", "story", "stuff",
		"thing", "kind", "type", "sort"} {
		m[fulltext.Stem(w)] = true
	}
	return m
}()

// words returns the topic terms of text (fulltext.EachTopicTerm) of more
// than one byte.
func words(text string) []string {
	var out []string
	fulltext.EachTopicTerm(text, func(t []byte) {
		if len(t) > 1 {
			out = append(out, string(t))
		}
	})
	return out
}

// conceptWords returns the words of a concept a title must contain.
func conceptWords(concept string) []string {
	var out []string
	for _, w := range words(concept) {
		if !conceptNoise[w] {
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
	// runs keeps the matches of recent runs of several words, keyed by
	// the words joined with spaces (a word never holds one).
	runs memo.Memo[[]int32]
}

// A concept of several words ("romantic comedy") is matched by reading
// again the text of every title holding all its words, thousands of them
// for common words. Folding a user's taste of eight preferences took
// 13 ms (BenchmarkTasteRefold), three quarters of it here, paid by a turn
// each time the background has changed the user's preferences, which
// under load is nearly every turn. The catalog does not change under an
// index, and users name the same concepts again and again, so the index
// keeps the titles of the runs it matched last, in two generations as
// hygiene's verdicts are (internal/memo): runMemoRuns runs, or runMemoTitles title positions
// in all, a generation.
const (
	runMemoRuns   = 4096
	runMemoTitles = 1 << 20
)

// buildTermIndex indexes the words of titles.
func buildTermIndex(titles []memento.Title) *termIndex {
	x := &termIndex{postings: map[string][]int32{}, pos: make(map[string]int32, len(titles)),
		runs: memo.Memo[[]int32]{Keys: runMemoRuns, Weight: runMemoTitles, Weigh: func(m []int32) int { return len(m) }}}
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
// words run, in order; titles gives their texts for the order check and
// are those the index was built from. The slice is shared: callers must
// not modify it.
func (x *termIndex) matches(run []string, titles []memento.Title) []int32 {
	if len(run) <= 1 {
		return x.match(run, titles)
	}
	key := strings.Join(run, " ")
	if out, ok := x.runs.Get(key); ok {
		return out
	}
	out := x.match(run, titles)
	x.runs.Put(key, out)
	return out
}

// match is matches without the memo.
func (x *termIndex) match(run []string, titles []memento.Title) []int32 {
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
