package agent

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/memento-ai/memento"
)

// resolve finds the titles refs name: by position in the previous answer,
// by the name of a title it showed, or by name in the catalog (the most
// notable title of that name). It returns the titles found, once each, and
// the names it could not find.
func (a *Agent) resolve(refs []memento.TitleRef, shown []memento.Title) (found []memento.Title, missing []string) {
	add := func(t memento.Title) {
		if !slices.ContainsFunc(found, func(o memento.Title) bool { return o.ID == t.ID }) {
			found = append(found, t)
		}
	}
	for _, r := range refs {
		switch {
		case r.Position > 0 && r.Position <= len(shown):
			add(shown[r.Position-1])
		case r.Position < 0 && -r.Position <= len(shown):
			add(shown[len(shown)+r.Position])
		case r.Position != 0:
			missing = append(missing, ordinal(r.Position))
		case strings.TrimSpace(r.Name) != "":
			if t, ok := byName(shown, r.Name); ok {
				add(t)
			} else if a.Resolve != nil {
				if t, ok := a.Resolve(r.Name); ok {
					add(*t)
				} else {
					missing = append(missing, strings.TrimSpace(r.Name))
				}
			} else {
				missing = append(missing, strings.TrimSpace(r.Name))
			}
		}
	}
	return found, missing
}

// byName returns the shown title a name means, ignoring case, punctuation
// and a leading article.
func byName(shown []memento.Title, name string) (memento.Title, bool) {
	k := nameKey(name)
	for _, t := range shown {
		if nameKey(t.Title) == k {
			return t, true
		}
	}
	return memento.Title{}, false
}

func nameKey(s string) string {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(words) > 1 && (words[0] == "the" || words[0] == "a" || words[0] == "an") {
		words = words[1:]
	}
	return strings.Join(words, " ")
}

func ordinal(pos int) string {
	if pos < 0 {
		return "the last one"
	}
	names := []string{"", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"}
	if pos < len(names) {
		return "the " + names[pos] + " one"
	}
	return fmt.Sprintf("number %d", pos)
}

// titleNames lists titles' names as a phrase: "Heat", "Heat and Ronin",
// "Heat, Ronin and 2 more".
func titleNames(ts []memento.Title) string {
	names := make([]string, 0, len(ts))
	for _, t := range ts {
		names = append(names, t.Title)
	}
	return phrase(names, 2)
}

// phrase joins items as English, naming at most limit of them.
func phrase(items []string, limit int) string {
	switch {
	case len(items) == 0:
		return ""
	case len(items) == 1:
		return items[0]
	case len(items) <= limit:
		return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
	}
	return strings.Join(items[:limit], ", ") + fmt.Sprintf(" and %d more", len(items)-limit)
}

// dropped names the constraints of prev that a topic change left behind.
func dropped(prev, next memento.ActiveContext) []string {
	var out []string
	for _, g := range prev.Genres {
		if !containsFold(next.Genres, g) {
			out = append(out, strings.ToLower(g))
		}
	}
	for _, p := range prev.People {
		if !containsFold(next.People, p) {
			out = append(out, "with "+p)
		}
	}
	if prev.TitleType != "" && prev.TitleType != next.TitleType {
		out = append(out, Describe(memento.ActiveContext{TitleType: prev.TitleType})+" only")
	}
	if (prev.MinYear != nil || prev.MaxYear != nil) && !sameYears(prev, next) {
		out = append(out, strings.TrimSpace(yearPhrase(prev)))
	}
	if prev.FreeText != "" && prev.FreeText != next.FreeText {
		out = append(out, "about "+prev.FreeText)
	}
	if len(prev.Like) > 0 && !slices.Equal(prev.Like, next.Like) {
		out = append(out, "like the title you named")
	}
	return out
}

func sameYears(a, b memento.ActiveContext) bool {
	eq := func(x, y *int) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return eq(a.MinYear, b.MinYear) && eq(a.MaxYear, b.MaxYear)
}

func yearPhrase(ac memento.ActiveContext) string {
	switch {
	case ac.MinYear != nil && ac.MaxYear != nil:
		return fmt.Sprintf(" from %d to %d", *ac.MinYear, *ac.MaxYear)
	case ac.MinYear != nil:
		return fmt.Sprintf(" from %d on", *ac.MinYear)
	case ac.MaxYear != nil:
		return fmt.Sprintf(" up to %d", *ac.MaxYear)
	}
	return ""
}

// mergeSoft returns the soft constraints of prev with those of add, one of
// each kind (a newer runtime wish replaces an older one).
func mergeSoft(prev, add []memento.SoftConstraint) []memento.SoftConstraint {
	out := slices.Clone(prev)
	for _, sc := range add {
		if i := slices.IndexFunc(out, func(o memento.SoftConstraint) bool { return o.Kind == sc.Kind }); i >= 0 {
			out[i] = sc
		} else {
			out = append(out, sc)
		}
	}
	return out
}
