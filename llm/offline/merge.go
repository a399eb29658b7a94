package offline

import (
	"context"
	"fmt"
	"strings"

	"github.com/memento-ai/memento"
)

// A consolidated attribute value is a list of clauses separated by "; ".
// Merging keeps every clause the new fact does not supersede and appends
// the fact; a clause is superseded when the fact is about the same thing
// (its topic words are all in the fact: "can't stand horror" and "has come
// around on horror"), or when both say
// where the user lives or what their favourite of one kind is.

const clauseSep = "; "

// MergeFact merges a fact into the current value of an attribute.
func (m *Model) MergeFact(ctx context.Context, in memento.MergeInput) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("merge fact: %w", err)
	}
	return mergeFact(in), nil
}

func mergeFact(in memento.MergeInput) string {
	fact := strings.TrimSpace(strings.TrimRight(in.Fact.Text, " .;"))
	current := splitValue(in.Current)
	if fact == "" {
		return strings.Join(current, clauseSep)
	}
	keep := map[string]bool{}
	for _, q := range noteQuotes(in.RepairNote, false) {
		keep[normText(q)] = true
	}
	var out []string
	f := readSuperseding(fact)
	norm := normText(fact)
	for _, c := range current {
		nc := normText(c)
		if nc == norm {
			// Already known: nothing changes.
			return strings.Join(current, clauseSep)
		}
		if f.supersedes(c) && !keep[nc] {
			continue
		}
		out = append(out, c)
	}
	out = append(out, fact)
	return strings.Join(out, clauseSep)
}

// ReviewMerge checks that merged keeps every clause of the current value
// the fact does not supersede, and holds the fact.
func (m *Model) ReviewMerge(ctx context.Context, in memento.MergeInput, merged string) (*memento.Verdict, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("review merge: %w", err)
	}
	have := stemSet(merged)
	var lost []string
	f := readSuperseding(in.Fact.Text)
	for _, c := range splitValue(in.Current) {
		if f.supersedes(c) {
			continue
		}
		if !containsAll(have, stemSet(c)) {
			lost = append(lost, c)
		}
	}
	var parts []string
	if len(lost) > 0 {
		parts = append(parts, "The merged value lost clauses of the current value that the fact does not supersede (keep them): "+quoteList(lost)+".")
	}
	if f := strings.TrimSpace(in.Fact.Text); f != "" && !containsAll(have, stemSet(f)) {
		parts = append(parts, "The merged value lacks the new fact (add it): "+quoteList([]string{f})+".")
	}
	if len(parts) > 0 {
		return &memento.Verdict{OK: false, Reason: strings.Join(parts, " ")}, nil
	}
	return &memento.Verdict{OK: true}, nil
}

// splitValue cuts a stored value into its clauses.
func splitValue(v string) []string {
	var out []string
	for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == ';' || r == '\n' }) {
		if p := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(part), ".")); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// singleValued are kinds of statement a person has one of at a time.
var singleValued = []struct {
	name  string
	words []string
}{
	{"location", []string{"lives", "live", "moved", "relocated", "is based", "based in", "resides", "is from"}},
	{"occupation", []string{"works as", "works at", "works for", "job is"}},
}

// superseding is a fact read once for supersedes, which compares it with
// each clause of a value.
type superseding struct {
	stems  map[string]bool
	toks   []token
	single []bool // which of singleValued the fact states
	kind   string // favouriteKind's answer
	fave   bool
}

func readSuperseding(fact string) superseding {
	f := superseding{stems: topicStems(fact), toks: tokenize(fact), single: make([]bool, len(singleValued))}
	for i, sv := range singleValued {
		f.single[i] = hasAnyPhrase(f.toks, sv.words)
	}
	f.kind, f.fave = favouriteKind(f.toks)
	return f
}

// supersedes reports whether the fact replaces the clause.
func (f superseding) supersedes(clause string) bool {
	if c := topicStems(clause); len(f.stems) > 0 && len(c) > 0 && containsAll(f.stems, c) {
		return true
	}
	ct := tokenize(clause)
	for i, sv := range singleValued {
		if f.single[i] && hasAnyPhrase(ct, sv.words) {
			return true
		}
	}
	// "favourite movie is Heat" replaces "favourite movie is Alien".
	if f.fave {
		if ck, ok := favouriteKind(ct); ok && f.kind == ck {
			return true
		}
	}
	return false
}

// favouriteKind returns the noun after "favourite" ("movie" in "favourite
// movie is Heat").
func favouriteKind(ts []token) (string, bool) {
	for i, t := range ts {
		if t.w == "favourite" || t.w == "favorite" || t.w == "fave" {
			if i+1 < len(ts) && ts[i+1].w != "is" {
				return stem(ts[i+1].w), true
			}
			return "", true
		}
	}
	return "", false
}

func hasAnyPhrase(ts []token, phrases []string) bool {
	for _, p := range phrases {
		if containsSeq(ts, p) {
			return true
		}
	}
	return false
}

func stemSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, t := range tokenize(s) {
		out[stem(t.w)] = true
	}
	return out
}

// containsAll reports whether every key of b is in a.
func containsAll(a, b map[string]bool) bool {
	for k := range b {
		if !a[k] {
			return false
		}
	}
	return true
}
