package catalog

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memento-ai/memento"
)

// TestCandidatesAreSearchsFirstTitles checks that Candidates, whichever
// way it walks, returns exactly the first n titles Search pages through,
// for broad queries (the notability walk that stops early) and narrow
// ones (paging), with exclusions.
func TestCandidatesAreSearchsFirstTitles(t *testing.T) {
	x, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, err := x.Search(ctx, memento.TitleQuery{Page: 1, Size: 5})
	if err != nil {
		t.Fatal(err)
	}
	exclude := []string{first.Titles[0].ID, first.Titles[3].ID}
	queries := []memento.TitleQuery{
		{},
		{Type: memento.TypeMovie},
		{Type: memento.TypeMovie, Exclude: exclude},
		{Genres: []string{"Drama"}},
		{Genres: []string{"Drama", "Comedy"}, ExcludeGenres: []string{"Horror"}},
		{Genres: []string{"Western"}},
		{MinYear: 1980, MaxYear: 1989},
		{MinYear: 1950},
		{People: []string{"Tom Hanks"}},
		{Text: "heist"},
		{Sort: memento.SortYear, Genres: []string{"Comedy"}},
		{Genres: []string{"No Such Genre"}},
	}
	for _, q := range queries {
		for _, n := range []int{1, 10, 150, 250} {
			t.Run(fmt.Sprintf("%+v/%d", q, n), func(t *testing.T) {
				got, err := x.Candidates(ctx, q, n)
				if err != nil {
					t.Fatal(err)
				}
				var want []memento.Title
				for page := 1; len(want) < n; page++ {
					pq := q
					pq.Page, pq.Size = page, 100
					res, err := x.Search(ctx, pq)
					if err != nil {
						t.Fatal(err)
					}
					want = append(want, res.Titles...)
					if res.Last {
						break
					}
				}
				want = want[:min(n, len(want))]
				ids := func(ts []memento.Title) []string {
					out := make([]string, len(ts))
					for i, t := range ts {
						out[i] = t.ID
					}
					return out
				}
				if g, w := ids(got), ids(want); !slices.Equal(g, w) {
					t.Errorf("Candidates gives %d titles %v…, paging Search %d %v…", len(g), g[:min(5, len(g))], len(w), w[:min(5, len(w))])
				}
			})
		}
	}
	if _, err := x.Candidates(ctx, memento.TitleQuery{MinYear: 1990, MaxYear: 1980}, 5); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("a bad query: %v, want EINVALID", err)
	}
}

// TestCandidatesAreCopies checks that the titles Candidates and Search
// hand out are the index's, field for field, and the caller's own: a
// list changed or appended to leaves the index and the other titles as
// they were.
func TestCandidatesAreCopies(t *testing.T) {
	x, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, q := range []memento.TitleQuery{{}, {Genres: []string{"Drama"}}, {Text: "heist"}} {
		got, err := x.Candidates(ctx, q, 300)
		if err != nil {
			t.Fatal(err)
		}
		page, err := x.Search(ctx, memento.TitleQuery{Genres: q.Genres, Text: q.Text, Page: 1, Size: 50})
		if err != nil {
			t.Fatal(err)
		}
		for _, titles := range [][]memento.Title{got, page.Titles} {
			want := make([]memento.Title, len(titles))
			for i, tt := range titles {
				d, ok := x.byID[tt.ID]
				if !ok {
					t.Fatalf("%s is not in the index", tt.ID)
				}
				orig := cloneTitle(&x.titles[d])
				if !reflect.DeepEqual(tt, orig) {
					t.Fatalf("%+v: got %+v, index holds %+v", q, tt, orig)
				}
				want[i] = orig
			}
			lists := 0
			for i := range titles {
				if len(titles[i].Genres) > 0 {
					titles[i].Genres[0] = "Changed"
					lists++
				}
				titles[i].Genres = append(titles[i].Genres, "Appended")
				titles[i].Cast = append(titles[i].Cast, "Someone")
			}
			if lists == 0 {
				t.Fatalf("%+v: no title has genres", q)
			}
			for i, tt := range titles {
				if orig := x.titles[x.byID[tt.ID]]; !cmp.Equal(orig, want[i], cmpopts.EquateEmpty()) {
					t.Fatalf("changing what %+v gave changed the index's %s: %+v", q, tt.ID, orig)
				}
				if n := len(want[i].Genres); tt.Genres[n] != "Appended" || n > 0 && tt.Genres[0] != "Changed" {
					t.Fatalf("%s: genres %q after the caller's changes", tt.ID, tt.Genres)
				}
				if n := len(want[i].Cast); !slices.Equal(tt.Cast[:n], want[i].Cast) || tt.Cast[n] != "Someone" {
					t.Fatalf("%s: cast %q after the caller's changes, want %q then Someone", tt.ID, tt.Cast, want[i].Cast)
				}
			}
		}
	}
}

// TestResolveTitleByArticleName checks that a title is found by the name
// of its Wikipedia article where that differs from the title.
func TestResolveTitleByArticleName(t *testing.T) {
	x, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Dr. Seuss' How the Grinch Stole Christmas (2000)", "dr seuss how the grinch stole christmas"} {
		got, ok := x.ResolveTitle(name)
		if !ok || got.ID != "wiki:Dr._Seuss'_How_the_Grinch_Stole_Christmas_(2000_film)" {
			t.Errorf("ResolveTitle(%q) = %v, %v; want the 2000 film", name, got, ok)
		}
	}
	for id, want := range map[string]string{
		"wiki:Dr._Seuss'_How_the_Grinch_Stole_Christmas_(2000_film)": "Dr. Seuss' How the Grinch Stole Christmas",
		"wiki:Heat_(1995_film)": "Heat", "wiki:Amélie": "Amélie", "wiki:Se7en%3F": "Se7en?", "imdb:tt0113277": "",
	} {
		if got := pageName(id); got != want {
			t.Errorf("pageName(%q) = %q, want %q", id, got, want)
		}
	}
}
