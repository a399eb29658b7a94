package offline

import (
	"context"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memento-ai/memento"
)

// fuzzSeeds are the seed corpus of every fuzz target: tricky real phrasings
// and odd inputs.
var fuzzSeeds = []string{
	"Discover exactly 3 comedy movies from 2010 onward.",
	"I didn't like them, please discover different ones",
	"before 1870 or after 2100",
	"between 2100 and 1870",
	"from the 20s to the 10s",
	"early 90s-late 80s",
	"top 1000 movies",
	"I love sci-fi but can't stand horror, and I watch everything on Netflix",
	"I don't dislike horror, not only comedies",
	"my daughter is 7 and my wife and I watch rom-coms",
	"Not a fan of musicals.",
	"((((2010)))) -- // ,,, ???",
	"'90s''s 1990's 19990s",
	"\u00a0\u200bcomédies françaises des années 90",
	"I I I I I",
	"not not not not horror",
	"",
	"a",
	"with with with Tom Hanks Tom Hanks",
	"movies from 1869 and 2101",
}

func FuzzUnderstand(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	m := newTestModel(f)
	ctxs := []memento.ActiveContext{memento.NewActiveContext(), func() memento.ActiveContext {
		c := memento.NewActiveContext()
		c.Genres = []string{"Comedy"}
		c.MinYear = intPtr(2010)
		return c
	}()}
	f.Fuzz(func(t *testing.T, msg string) {
		for _, c := range ctxs {
			got, err := m.UnderstandRequest(context.Background(), memento.UnderstandInput{Message: msg, Context: c})
			if err != nil {
				t.Fatalf("UnderstandRequest(%q): %v", msg, err)
			}
			checkUnderstanding(t, msg, got)
		}
	})
}

// checkUnderstanding asserts what holds for every Understanding.
func checkUnderstanding(t *testing.T, msg string, u *memento.Understanding) {
	t.Helper()
	for _, g := range u.Genres {
		if !slices.Contains(DefaultGenres, g) {
			t.Errorf("%q: genre %q is not in the vocabulary", msg, g)
		}
	}
	for _, y := range []*int{u.MinYear, u.MaxYear} {
		if y != nil && (*y < memento.MinYear || *y > memento.MaxYear) {
			t.Errorf("%q: year %d out of range", msg, *y)
		}
	}
	if u.MinYear != nil && u.MaxYear != nil && *u.MinYear > *u.MaxYear {
		t.Errorf("%q: min year %d above max year %d", msg, *u.MinYear, *u.MaxYear)
	}
	if u.Count < 0 || u.Count > memento.MaxPageSize {
		t.Errorf("%q: count %d out of range", msg, u.Count)
	}
	switch u.YearShift {
	case "", "older", "newer":
	default:
		t.Errorf("%q: year shift %q", msg, u.YearShift)
	}
	switch u.TitleType {
	case "", memento.TypeMovie, memento.TypeTVSeries:
	default:
		t.Errorf("%q: title type %q", msg, u.TitleType)
	}
	if (u.Replace || u.Reject) && !u.Search {
		t.Errorf("%q: replace or reject without a search: %+v", msg, u)
	}
	if u.Search && !u.Recognised {
		t.Errorf("%q: a search of a turn not recognised: %+v", msg, u)
	}
	if !u.Recognised && (u.Genres != nil || u.People != nil || u.MinYear != nil || u.MaxYear != nil ||
		u.TitleType != "" || u.FreeText != "" || u.Count != 0 || u.YearShift != "") {
		t.Errorf("%q: constraints on a turn not recognised: %+v", msg, u)
	}
}

func FuzzExtractFacts(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	m := newTestModel(f)
	names := map[string]bool{"": true}
	for _, a := range movieSchema {
		names[a.Name] = true
	}
	f.Fuzz(func(t *testing.T, msg string) {
		ctx := context.Background()
		facts, err := m.ExtractFacts(ctx, memento.ExtractInput{Message: msg})
		if err != nil {
			t.Fatal(err)
		}
		for _, fa := range facts {
			if strings.TrimSpace(fa.Text) == "" {
				t.Errorf("%q: empty fact", msg)
			}
			if utf8.ValidString(msg) && !utf8.ValidString(fa.Text) {
				t.Errorf("%q: fact %q is not valid UTF-8", msg, fa.Text)
			}
		}
		if v, err := m.WorthRemembering(ctx, msg, movieSchema); err != nil || v.OK != (len(facts) > 0) {
			t.Errorf("%q: sentinel %+v, %v disagrees with %d facts", msg, v, err, len(facts))
		}
		if _, err := m.ReviewExtraction(ctx, msg, facts); err != nil {
			t.Fatal(err)
		}
		attributed, err := m.AssignAttributes(ctx, facts, movieSchema)
		if err != nil || len(attributed) != len(facts) {
			t.Fatalf("%q: AssignAttributes = %v, %v", msg, attributed, err)
		}
		for _, a := range attributed {
			if !names[a.Attribute] {
				t.Errorf("%q: attribute %q is not in the schema", msg, a.Attribute)
			}
		}
		merged, err := m.MergeFact(ctx, memento.MergeInput{Current: msg, Fact: memento.Fact{Text: "likes westerns"}})
		if err != nil || !strings.Contains(merged, "likes westerns") {
			t.Errorf("%q: MergeFact = %q, %v", msg, merged, err)
		}
	})
}

func FuzzPreferences(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	m := newTestModel(f)
	f.Fuzz(func(t *testing.T, msg string) {
		got, err := m.ExtractPreferences(context.Background(), msg)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range got {
			if strings.TrimSpace(c.Concept) == "" || c.Concept != strings.ToLower(c.Concept) {
				t.Errorf("%q: concept %q is empty or not lower case", msg, c.Concept)
			}
			if c.Sign != 1 && c.Sign != -1 {
				t.Errorf("%q: sign %d", msg, c.Sign)
			}
			if c.Strength <= 0 || c.Strength > 1 {
				t.Errorf("%q: strength %v", msg, c.Strength)
			}
			if c.Kind != memento.KindTaste && c.Kind != memento.KindFact {
				t.Errorf("%q: kind %q", msg, c.Kind)
			}
		}
	})
}

func FuzzSummarise(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, 80)
	}
	m := newTestModel(f)
	f.Fuzz(func(t *testing.T, msg string, limit int) {
		if limit < 0 {
			limit = -limit
		}
		limit %= 2000
		got, err := m.Summarise(context.Background(), memento.SummariseInput{
			Previous: msg,
			Messages: []memento.Message{{Role: memento.RoleUser, Text: msg}},
			MaxChars: limit,
		})
		if err != nil {
			t.Fatal(err)
		}
		max := limit
		if max == 0 {
			max = defaultSummaryChars
		}
		if len(got) > max {
			t.Errorf("summary of %d bytes over the limit %d", len(got), max)
		}
	})
}
