package profile_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/profile"
)

// testTitles is a small catalog for the tests of this package.
func testTitles() []memento.Title {
	mk := func(id, title string, year int, genres []string, cast ...string) memento.Title {
		return memento.Title{ID: id, Title: title, Type: memento.TypeMovie, Year: year, Genres: genres, Cast: cast}
	}
	return []memento.Title{
		mk("heat", "Heat", 1995, []string{"Crime", "Thriller"}, "Al Pacino", "Robert De Niro", "Val Kilmer"),
		mk("collateral", "Collateral", 2004, []string{"Crime", "Thriller"}, "Tom Cruise", "Jamie Foxx"),
		mk("insider", "The Insider", 1999, []string{"Drama", "Thriller"}, "Al Pacino", "Russell Crowe"),
		mk("godfather", "The Godfather", 1972, []string{"Crime", "Drama"}, "Marlon Brando", "Al Pacino"),
		mk("casino", "Casino", 1995, []string{"Crime", "Drama"}, "Robert De Niro", "Sharon Stone"),
		mk("pride", "Pride and Prejudice", 2005, []string{"Romance", "Drama"}, "Keira Knightley"),
		mk("pride2014", "Pride", 2014, []string{"Comedy", "Drama"}, "Bill Nighy"),
		mk("it", "It", 2017, []string{"Horror"}, "Bill Skarsgard"),
		mk("up", "Up", 2009, []string{"Animated", "Family"}, "Ed Asner"),
		mk("conjuring", "The Conjuring", 2013, []string{"Horror"}, "Vera Farmiga", "Patrick Wilson"),
		mk("insidious", "Insidious", 2010, []string{"Horror"}, "Patrick Wilson", "Rose Byrne"),
		mk("love", "Love Actually", 2003, []string{"Romance", "Comedy"}, "Hugh Grant"),
		mk("schindler", "Schindler's List", 1993, []string{"Drama", "History"}, "Liam Neeson"),
		mk("notebook", "The Notebook", 2004, []string{"Romance", "Drama"}, "Ryan Gosling"),
		mk("hangover", "The Hangover", 2009, []string{"Comedy"}, "Bradley Cooper"),
	}
}

// readEvents reads a message's events through the offline model's
// ActionReader over idx (nil: a model without a catalog).
func readEvents(t *testing.T, id, previous, text string, at time.Time, idx *catalog.Index) []memento.Event {
	t.Helper()
	opts := offline.Options{}
	var resolve profile.Resolver
	if idx != nil {
		opts.Titles, resolve = idx.ResolveTitle, idx.ResolveTitle
	}
	got, err := profile.MessageEvents(context.Background(), offline.New(opts),
		profile.MessageInput{ID: id, Text: text, At: at, Previous: previous, Resolve: resolve})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// summary renders events as "type:title[=value]" for comparison.
func summary(events []memento.Event) []string {
	out := []string{}
	for _, e := range events {
		s := string(e.Type) + ":" + e.TitleID
		if e.Value != nil {
			s += fmt.Sprintf("=%g", *e.Value)
		}
		out = append(out, s)
	}
	return out
}

func TestEventsFromMessage(t *testing.T) {
	idx := catalog.New(testTitles())
	tests := []struct {
		text string
		want []string
	}{
		{"I watched Heat and loved it", []string{"watched:heat", "liked:heat"}},
		{"I watched Heat last night and it was great!", []string{"watched:heat", "liked:heat"}},
		{"i saw heat yesterday, it was boring", []string{"watched:heat", "disliked:heat"}},
		{"I watched Pride and Prejudice and loved it.", []string{"watched:pride", "liked:pride"}},
		{"I've seen The Godfather. Heat was amazing", []string{"watched:godfather", "liked:heat"}},
		{"I loved Collateral", []string{"liked:collateral"}},
		{"I didn't like The Conjuring", []string{"disliked:conjuring"}},
		{"I really hated Insidious, it's so dull", []string{"disliked:insidious"}},
		{"I haven't watched Heat yet", []string{}},
		{"I never saw Casino.", []string{}},
		{"Have you seen Heat?", []string{}},
		{"Something like Heat please", []string{}},
		{"I'd like to watch Up", []string{"watchlisted:up"}},
		{"Please add The Insider to my watchlist", []string{"watchlisted:insider"}},
		{"I want to watch Schindler's List", []string{"watchlisted:schindler"}},
		{"I gave up on Love Actually", []string{"abandoned:love"}},
		{"I gave Heat 4.5 stars", []string{"rated:heat=4.5"}},
		{"I'd rate Casino 3/5", []string{"rated:casino=3"}},
		{"I finished The Notebook, it was not good", []string{"finished:notebook"}},
		{"I watched it and loved it", []string{}},
		{"I watched a movie with my wife", []string{}},
		{"I watched It and loved it", []string{"watched:it", "liked:it"}},
		{"sounds good, thanks", []string{}},
		{"I watched Heat and Casino", []string{"watched:heat", "watched:casino"}},
		{"I loved Heat, Collateral and The Insider", []string{"liked:heat", "liked:collateral", "liked:insider"}},
		{"I don't like The Hangover", []string{"disliked:hangover"}},
		{"I do not want to watch Heat", []string{}},
		{"Love Actually was wonderful", []string{"liked:love"}},
		{"I watched the movie Heat", []string{"watched:heat"}},
		{"I enjoyed the notebook trip", []string{}},
		{"I think the notebook was great", []string{}},
		{"I love comedy and I hate horror", []string{}},
		{"I liked \"up\"", []string{"liked:up"}},
		{"i loved heat", []string{}},
		{"i loved the notebook", []string{}},
		{"i loved love actually", []string{"liked:love"}},
		{"I watched Nonexistent Film", []string{}},
	}
	at := time.Date(2025, 3, 4, 20, 0, 0, 0, time.UTC)
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			got := readEvents(t, "m1", "", tt.text, at, idx)
			if diff := cmp.Diff(tt.want, summary(got)); diff != "" {
				t.Errorf("MessageEvents(%q) (-want +got):\n%s", tt.text, diff)
			}
			for _, e := range got {
				if !e.At.Equal(at) || !strings.HasPrefix(e.ID, "msg-") {
					t.Errorf("event %+v: want time %v and a msg- id", e, at)
				}
			}
		})
	}
}

func TestEventsFromMessageIDsAreStable(t *testing.T) {
	idx := catalog.New(testTitles())
	at := time.Now()
	a := readEvents(t, "m1", "", "I watched Heat and loved it", at, idx)
	b := readEvents(t, "m1", "", "I watched Heat and loved it", at, idx)
	c := readEvents(t, "m2", "", "I watched Heat and loved it", at, idx)
	ids := func(es []memento.Event) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.ID)
		}
		return out
	}
	if !slices.Equal(ids(a), ids(b)) {
		t.Errorf("the same message gave ids %v and %v", ids(a), ids(b))
	}
	if slices.ContainsFunc(ids(c), func(id string) bool { return slices.Contains(ids(a), id) }) {
		t.Errorf("another message reused ids: %v and %v", ids(a), ids(c))
	}
	if got := readEvents(t, "m1", "", "I watched Heat", at, nil); got != nil {
		t.Errorf("without a catalog got %v, want nothing", got)
	}
}
