package offline

import (
	"strings"
	"unicode/utf8"

	"github.com/memento-ai/memento"
)

// Misspelt names: when Options.People can also list every name (as
// catalog.Index can, through People), two words in a row that are no
// catalog name but lie within an edit or two of exactly one ("Tom Hnaks",
// "Meryl Strep") are read as that name. The names are bucketed by the
// first letters of their first and last words, which typists rarely miss,
// so a word pair is compared with a few hundred names at most instead of
// the whole cast list, and at most maxNamePairs pairs are tried per turn.

// PeopleLister is implemented by a PersonLookup that can list the
// catalog's names; with it the model also corrects misspelt names.
type PeopleLister interface {
	People() []string
}

// maxNamePairs bounds the word pairs a turn compares with the names.
const maxNamePairs = 8

// nameIndex buckets the catalog's two- and three-word names.
type nameIndex struct {
	names []string
	runes [][]rune
	// byInitials maps the first letters of a name's first and last words
	// to the names that have them.
	byInitials map[[2]rune][]int32
}

func buildNameIndex(names []string) *nameIndex {
	x := &nameIndex{byInitials: map[[2]rune][]int32{}}
	for _, n := range names {
		low := strings.ToLower(strings.TrimSpace(n))
		ws := strings.Fields(low)
		if len(ws) != 2 || utf8.RuneCountInString(low) < 8 || utf8.RuneCountInString(low) > 16 {
			continue // one-word stage names are too easily ordinary words
		}
		key := [2]rune{initial(ws[0]), initial(ws[1])}
		x.byInitials[key] = append(x.byInitials[key], int32(len(x.names)))
		x.names = append(x.names, n)
		x.runes = append(x.runes, []rune(low))
	}
	return x
}

func initial(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

// misspeltPeople finds the misspelt names of toks, each as a person hit
// with the words as written.
func (m *Model) misspeltPeople(toks []token) []personHit {
	if m.names == nil {
		return nil
	}
	var out []personHit
	var index *nameIndex
	tried := 0
	for i := 0; i+1 < len(toks) && tried < maxNamePairs; i++ {
		a, b := toks[i], toks[i+1]
		if b.brk != 0 || !allLetters(a.w) || !allLetters(b.w) || len(a.w) < 2 || len(b.w) < 3 ||
			personEdges[a.w] || personEdges[b.w] || stopwords[a.w] || stopwords[b.w] {
			continue
		}
		if knownWords[a.w] && knownWords[b.w] {
			continue
		}
		cand := a.w + " " + b.w
		if _, ok := m.people.Person(cand); ok {
			continue // spelt right, read by findPeople
		}
		tried++
		if index == nil {
			index = m.names()
		}
		name, ok := index.closest(cand, [2]rune{initial(a.w), initial(b.w)})
		if !ok {
			continue
		}
		out = append(out, personHit{name: name, at: i, n: 2, negated: negatedAt(toks, i, 2)})
		i++
	}
	return out
}

// applyMisspelt adds the misspelt names to the request and returns their
// corrections.
func applyMisspelt(msg string, toks []token, hits []personHit, r *request) []memento.Correction {
	var out []memento.Correction
	for _, h := range hits {
		if h.negated {
			r.negPeople = appendNew(r.negPeople, h.name)
		} else {
			r.people = appendNew(r.people, h.name)
		}
		out = append(out, memento.Correction{From: spanText(msg, toks, h.at, h.at+h.n), To: h.name})
	}
	return out
}

// closest returns the one name within reach of cand.
func (x *nameIndex) closest(cand string, key [2]rune) (string, bool) {
	rc := []rune(cand)
	limit := 1
	if len(rc) >= 10 {
		limit = 2
	}
	best, bestD, ambiguous := int32(-1), limit+1, false
	for _, id := range x.byInitials[key] {
		d := osaDistance(rc, x.runes[id], limit)
		switch {
		case d < bestD:
			best, bestD, ambiguous = id, d, false
		case d == bestD && d <= limit:
			ambiguous = true
		}
	}
	if best < 0 || bestD > limit || bestD == 0 || ambiguous {
		return "", false
	}
	return x.names[best], true
}
