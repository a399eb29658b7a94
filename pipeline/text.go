package pipeline

import (
	"strings"

	"github.com/memento-ai/memento/fulltext"
)

// clauseSep separates the clauses of a consolidated semantic value, as the
// offline aggregator writes them ("loves science fiction; watches on
// Netflix"). A value written by another model is one clause unless it uses
// the same separator.
const clauseSep = "; "

// splitClauses cuts a value into its clauses.
func splitClauses(v string) []string {
	var out []string
	for _, c := range strings.Split(v, ";") {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// withoutFact returns a merged value without the clauses that are the fact
// itself, so what a fact leaves of another attribute's value can be told
// from the fact.
func withoutFact(merged, fact string) string {
	var kept []string
	for _, c := range splitClauses(merged) {
		if !sameText(c, fact) {
			kept = append(kept, c)
		}
	}
	return strings.Join(kept, clauseSep)
}

// sameText compares texts ignoring case, punctuation and spacing.
func sameText(a, b string) bool { return normWords(a) == normWords(b) }

func normWords(s string) string {
	return strings.Join(words(s), " ")
}

// words splits s into fulltext's words: lower case, diacritics folded, an
// apostrophe separating ("don't" is "don" and "t").
func words(s string) []string { return fulltext.Words(s) }

// stanceWords say how the user feels about a topic, not what the topic
// is, so two statements about the same topic share topic words whatever
// their stance. They are written as people write them and kept as words
// splits them ("can't" gives "can" and "t").
var stanceWords = setOf("like", "likes", "liked", "love", "loves", "loved", "enjoy", "enjoys", "enjoyed",
	"hate", "hates", "hated", "dislike", "dislikes", "disliked", "prefer", "prefers", "preferred",
	"stand", "can't", "cannot", "can", "not", "don't", "doesn't", "didn't", "never", "no", "really",
	"much", "very", "actually", "come", "came", "around", "warming", "warmed", "anymore", "any",
	"more", "fan", "big", "huge", "fond", "into", "keen", "adore", "adores", "adored", "mind",
	"watch", "watches", "watching", "watched", "is", "are", "was", "were", "has", "have", "had",
	"be", "been", "the", "a", "an", "of", "on", "in", "to", "for", "and", "or", "but", "with",
	"about", "all", "everything", "anything", "things", "stuff", "kind", "kinds", "sort", "lot",
	"lots", "also", "too", "so", "it", "its", "they", "them", "their", "he", "she", "his", "her",
	"i", "me", "my", "i'm", "i've", "i'd", "user", "user's", "now", "still", "again", "used",
	"these", "days", "that", "this", "those", "what", "which", "who", "some", "quite", "pretty",
	"least", "favorite", "favourite", "movies", "movie", "films", "film", "shows", "show")

// setOf returns the set of the words of ws.
func setOf(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		for _, part := range words(w) {
			m[part] = true
		}
	}
	return m
}

// topicWords returns the terms of s that name what it is about: its words
// that are neither stance words, stop words nor shorter than three letters,
// stemmed as fulltext stems them, so "horror films" and "can't stand
// horror" share "horror".
func topicWords(s string) map[string]bool {
	out := map[string]bool{}
	fulltext.EachWord(s, func(w []byte) {
		if len(w) < 3 || stanceWords[string(w)] || fulltext.StopwordBytes(w) {
			return
		}
		out[string(fulltext.StemBytes(w))] = true
	})
	return out
}

// sharesWord reports whether the sets meet.
func sharesWord(a, b map[string]bool) bool {
	if len(b) < len(a) {
		a, b = b, a
	}
	for w := range a {
		if b[w] {
			return true
		}
	}
	return false
}
