package offline

import (
	"strings"
)

// personEdges are words a name never starts or ends with, so the scan does
// not ask the catalog about "with the" or "and I".
var personEdges = set(
	"a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "for", "with", "by",
	"from", "is", "are", "was", "i", "me", "my", "you", "it", "that", "this", "some", "any",
	"movies", "movie", "films", "film", "shows", "show", "series", "starring", "featuring",
	"please", "like", "love", "no", "not", "only", "just", "also",
)

// personHit is a cast member found in a message.
type personHit struct {
	name    string
	at, n   int
	negated bool
}

// findPeople scans every 3- and 2-word sequence of the message, longest
// first and without overlaps, and asks the catalog whether it is a cast
// member's name. Capitalisation does not matter: "tom hanks" is found as
// well as "Tom Hanks", and after "with", "starring", "featuring" or "by" as
// well as anywhere else.
func (m *Model) findPeople(toks []token) []personHit {
	if m.people == nil {
		return nil
	}
	var hits []personHit
	seen := map[string]bool{}
	for i := 0; i < len(toks); {
		found := false
		for n := 3; n >= 2 && !found; n-- {
			if i+n > len(toks) || !nameSpan(toks, i, n) {
				continue
			}
			for _, cand := range nameCandidates(toks[i : i+n]) {
				name, ok := m.people.Person(cand)
				if !ok || name == "" {
					continue
				}
				if !seen[strings.ToLower(name)] {
					seen[strings.ToLower(name)] = true
					hits = append(hits, personHit{name: name, at: i, n: n, negated: negatedAt(toks, i, n)})
				}
				i += n
				found = true
				break
			}
		}
		if !found {
			i++
		}
	}
	return hits
}

// nameSpan reports whether toks[i:i+n] can be a name: letters only, no
// clause break inside (a full stop after an initial is not a break), and no
// function word at either edge.
func nameSpan(toks []token, i, n int) bool {
	if personEdges[toks[i].w] || personEdges[toks[i+n-1].w] {
		return false
	}
	for k := i; k < i+n; k++ {
		if k > i && toks[k].brk != 0 {
			return false
		}
		if isDigits(toks[k].w) {
			return false
		}
	}
	return true
}

// nameCandidates spells a span the ways a catalog may hold it: "samuel l
// jackson" is also tried as "samuel l. jackson", and a possessive is dropped
// ("Tom Hanks's").
func nameCandidates(span []token) []string {
	plain := make([]string, len(span))
	dotted := make([]string, len(span))
	changed := false
	for k, t := range span {
		w := t.raw
		if k == len(span)-1 {
			w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
		}
		plain[k] = w
		dotted[k] = w
		if len([]rune(w)) == 1 || strings.EqualFold(w, "jr") || strings.EqualFold(w, "sr") {
			dotted[k] = w + "."
			changed = true
		}
	}
	out := []string{strings.Join(plain, " ")}
	if changed {
		out = append(out, strings.Join(dotted, " "))
	}
	return out
}
