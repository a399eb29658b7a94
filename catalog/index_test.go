package catalog

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memento-ai/memento"
)

// fixture is a small catalog whose answers can be worked out by hand.
func fixture() []memento.Title {
	titles := []memento.Title{
		{ID: "m01", Title: "Space Heist", Type: "movie", Year: 2010, Genres: []string{"Action", "Science Fiction"},
			Cast: []string{"Ann Lee", "Bob Stone"}, Overview: "A crew plans a heist on a space station."},
		{ID: "m02", Title: "Quiet Love", Type: "movie", Year: 2010, Genres: []string{"Romance", "Drama"},
			Cast: []string{"Cara Díaz"}, Overview: "Two strangers fall in love in Paris."},
		{ID: "m03", Title: "The Heist", Type: "movie", Year: 1995, Genres: []string{"Crime", "Thriller"},
			Cast: []string{"Bob Stone"}, Overview: "Robbers plan a bank job."},
		{ID: "m04", Title: "Bank Job", Type: "movie", Year: 2001, Genres: []string{"Crime"},
			Cast: []string{"Dan Ford"}, Overview: "The story of a heist gone wrong, told by the robbers, the police, the bank and the town."},
		{ID: "m05", Title: "Galaxy Kids", Type: "movie", Year: 2015, Genres: []string{"Animated", "Family", "Science Fiction"},
			Cast: []string{"Eve Ito"}, Overview: "Children explore the galaxy."},
		{ID: "s01", Title: "Galaxy Patrol", Type: "tvSeries", Year: 2015, EndYear: 2018, Genres: []string{"Science Fiction", "Action"},
			Cast: []string{"Ann Lee"}, Overview: "A patrol protects the galaxy."},
		{ID: "a01", Title: "Adult Heist", Type: "movie", Year: 2012, Genres: []string{"Drama"}, IsAdult: true,
			Cast: []string{"Bob Stone"}, Overview: "A heist."},
		{ID: "m06", Title: "Old Western", Type: "movie", Year: 1950, Genres: []string{"Western"}, Cast: []string{"Fay Gray"}},
		{ID: "m07", Title: "Older Western", Type: "movie", Year: 1940, Genres: []string{"Western", "Drama"}, Cast: []string{"Gus Hall"}},
		{ID: "m08", Title: "Western Comedy", Type: "movie", Year: 1960, Genres: []string{"Western", "Comedy"},
			Cast: []string{"Fay Gray", "Gus Hall"}},
		{ID: "m09", Title: "Iron Suit", Type: "movie", Year: 2008, Genres: []string{"Action", "Superhero"},
			Cast: []string{"Robert Downey Jr.", "Ann Lee"}, Overview: "An engineer builds a suit of armor."},
		{ID: "m10", Title: "Heat", Type: "movie", Year: 1972, Genres: []string{"Drama"}, Cast: []string{"Joe Dallesandro"}},
		{ID: "m11", Title: "Heat", Type: "movie", Year: 1995, Genres: []string{"Crime"},
			Cast: []string{"Al Pacino", "Robert De Niro", "Val Kilmer"}},
		{ID: "m12", Title: "Heat", Type: "movie", Year: 2013, Genres: []string{"Comedy"}, Cast: []string{"Ann Lee"}},
		{ID: "m13", Title: "Fast & Furious", Type: "movie", Year: 2009, Genres: []string{"Action"}, Cast: []string{"Vin Diesel"}},
	}
	// Twenty-five satires, five a year from 1990 to 1994, for paging.
	for i := 1; i <= 25; i++ {
		titles = append(titles, memento.Title{
			ID: fmt.Sprintf("c%02d", i), Title: fmt.Sprintf("Satire %d", i), Type: "movie",
			Year: 1990 + (i-1)/5, Genres: []string{"Satire"}, Cast: []string{"Zed Ray"},
		})
	}
	return titles
}

func ids(page *memento.TitlePage) []string {
	out := []string{}
	for _, t := range page.Titles {
		out = append(out, t.ID)
	}
	return out
}

// satireIDs returns the ids of the fixture's satires in search order (year
// descending, then id) from the n-th on (counting from 0).
func satireIDs(from, to int) []string {
	var all []string
	for year := 1994; year >= 1990; year-- {
		for i := 1; i <= 25; i++ {
			if 1990+(i-1)/5 == year {
				all = append(all, fmt.Sprintf("c%02d", i))
			}
		}
	}
	return all[from:min(to, len(all))]
}

func TestSearch(t *testing.T) {
	x := New(fixture())
	yes, no := true, false
	tests := []struct {
		name      string
		q         memento.TitleQuery
		want      []string
		wantTotal int
		wantLast  bool
	}{
		{"genre", memento.TitleQuery{Genres: []string{"Western"}, Page: 1},
			[]string{"m08", "m06", "m07"}, 3, true},
		{"genre case-insensitive", memento.TitleQuery{Genres: []string{"wEsTeRn"}, Page: 1},
			[]string{"m08", "m06", "m07"}, 3, true},
		{"genre alias", memento.TitleQuery{Genres: []string{"sci-fi"}, Page: 1},
			[]string{"m05", "s01", "m01"}, 3, true},
		{"genres any", memento.TitleQuery{Genres: []string{"Superhero", "Family"}, Page: 1},
			[]string{"m05", "m09"}, 2, true},
		{"genres all", memento.TitleQuery{Genres: []string{"Action", "Science Fiction"}, AllGenres: true, Page: 1},
			[]string{"s01", "m01"}, 2, true},
		{"genres any with an unknown one", memento.TitleQuery{Genres: []string{"Western", "Telenovela"}, Page: 1},
			[]string{"m08", "m06", "m07"}, 3, true},
		{"genres all with an unknown one", memento.TitleQuery{Genres: []string{"Western", "Telenovela"}, AllGenres: true, Page: 1},
			[]string{}, 0, true},
		{"unknown genre", memento.TitleQuery{Genres: []string{"Telenovela"}, Page: 1}, []string{}, 0, true},
		{"type", memento.TitleQuery{Type: "tvSeries", Page: 1}, []string{"s01"}, 1, true},
		{"type case-insensitive", memento.TitleQuery{Type: "TVSERIES", Page: 1}, []string{"s01"}, 1, true},
		{"unknown type", memento.TitleQuery{Type: "podcast", Page: 1}, []string{}, 0, true},
		{"years inclusive", memento.TitleQuery{MinYear: 2010, MaxYear: 2013, Page: 1},
			[]string{"m12", "m01", "m02"}, 3, true},
		{"min year only", memento.TitleQuery{MinYear: 2013, Page: 1}, []string{"m05", "s01", "m12"}, 3, true},
		{"max year only", memento.TitleQuery{MaxYear: 1950, Page: 1}, []string{"m06", "m07"}, 2, true},
		{"genre and years", memento.TitleQuery{Genres: []string{"Western"}, MinYear: 1945, MaxYear: 1965, Page: 1},
			[]string{"m08", "m06"}, 2, true},
		{"empty year range", memento.TitleQuery{MinYear: 1970, MaxYear: 1971, Page: 1}, []string{}, 0, true},
		{"person", memento.TitleQuery{People: []string{"Ann Lee"}, Page: 1},
			[]string{"s01", "m12", "m01", "m09"}, 4, true},
		{"person case-insensitive", memento.TitleQuery{People: []string{"ROBERT DOWNEY JR"}, Page: 1},
			[]string{"m09"}, 1, true},
		{"person accents", memento.TitleQuery{People: []string{"cara diaz"}, Page: 1}, []string{"m02"}, 1, true},
		{"people all", memento.TitleQuery{People: []string{"ann lee", "Bob Stone"}, Page: 1}, []string{"m01"}, 1, true},
		{"unknown person", memento.TitleQuery{People: []string{"Nobody Here"}, Page: 1}, []string{}, 0, true},
		{"person and genre and years", memento.TitleQuery{People: []string{"Ann Lee"}, Genres: []string{"Action"}, MaxYear: 2012, Page: 1},
			[]string{"m01", "m09"}, 2, true},
		{"adult left out by default", memento.TitleQuery{People: []string{"Bob Stone"}, Page: 1},
			[]string{"m01", "m03"}, 2, true},
		{"adult only", memento.TitleQuery{People: []string{"Bob Stone"}, IsAdult: &yes, Page: 1},
			[]string{"a01"}, 1, true},
		{"adult false", memento.TitleQuery{People: []string{"Bob Stone"}, IsAdult: &no, Page: 1},
			[]string{"m01", "m03"}, 2, true},
		{"adult only without other filters", memento.TitleQuery{IsAdult: &yes, Page: 1}, []string{"a01"}, 1, true},
		{"exclude", memento.TitleQuery{Genres: []string{"Western"}, Exclude: []string{"m06", "nope"}, Page: 1},
			[]string{"m08", "m07"}, 2, true},
		{"exclude all", memento.TitleQuery{Type: "tvSeries", Exclude: []string{"s01"}, Page: 1}, []string{}, 0, true},
		// By BM25 alone, Space Heist names the heist in title and plot, The
		// Heist in its title, Bank Job once in a long plot. The default order
		// puts The Heist first: "heist" is its title without the article.
		{"text", memento.TitleQuery{Text: "heist", Page: 1}, []string{"m03", "m01", "m04"}, 3, true},
		{"text by year", memento.TitleQuery{Text: "heist", Sort: memento.SortYear, Page: 1}, []string{"m01", "m03", "m04"}, 3, true},
		{"text with filter", memento.TitleQuery{Text: "heist", MinYear: 2000, Page: 1}, []string{"m01", "m04"}, 2, true},
		{"text adult", memento.TitleQuery{Text: "heist", IsAdult: &yes, Page: 1}, []string{"a01"}, 1, true},
		{"text plural", memento.TitleQuery{Text: "Heists", Page: 1}, []string{"m01", "m03", "m04"}, 3, true},
		{"text any term", memento.TitleQuery{Text: "galaxy armor", Page: 1}, []string{"m05", "s01", "m09"}, 3, true},
		{"text unknown word", memento.TitleQuery{Text: "zeppelin", Page: 1}, []string{}, 0, true},
		{"text of stopwords constrains nothing", memento.TitleQuery{Text: "the", Type: "tvSeries", Page: 1},
			[]string{"s01"}, 1, true},
		{"text exclude", memento.TitleQuery{Text: "heist", Exclude: []string{"m01"}, Page: 1}, []string{"m03", "m04"}, 2, true},
		{"first page", memento.TitleQuery{Genres: []string{"Satire"}, Page: 1, Size: 10}, satireIDs(0, 10), 25, false},
		{"middle page", memento.TitleQuery{Genres: []string{"Satire"}, Page: 2, Size: 10}, satireIDs(10, 20), 25, false},
		{"short last page", memento.TitleQuery{Genres: []string{"Satire"}, Page: 3, Size: 10}, satireIDs(20, 25), 25, true},
		{"exact last page", memento.TitleQuery{Genres: []string{"Satire"}, Page: 5, Size: 5}, satireIDs(20, 25), 25, true},
		{"page past the end", memento.TitleQuery{Genres: []string{"Satire"}, Page: 6, Size: 5}, []string{}, 25, true},
		{"page far past the end", memento.TitleQuery{Genres: []string{"Satire"}, Page: 1 << 62, Size: 100}, []string{}, 25, true},
		{"size 1", memento.TitleQuery{Genres: []string{"Satire"}, Page: 3, Size: 1}, satireIDs(2, 3), 25, false},
		{"size max", memento.TitleQuery{Genres: []string{"Satire"}, Page: 1, Size: 100}, satireIDs(0, 25), 25, true},
		{"default size", memento.TitleQuery{Genres: []string{"Satire"}, Page: 2}, satireIDs(12, 24), 25, false},
		{"text paging", memento.TitleQuery{Text: "heist", Page: 2, Size: 2}, []string{"m04"}, 3, true},
		{"text page past the end", memento.TitleQuery{Text: "heist", Page: 3, Size: 2}, []string{}, 3, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, err := x.Search(context.Background(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if page.Titles == nil {
				t.Error("Titles is nil, want an empty slice")
			}
			if diff := cmp.Diff(tt.want, ids(page)); diff != "" {
				t.Errorf("ids mismatch (-want +got):\n%s", diff)
			}
			if page.Total != tt.wantTotal || page.Last != tt.wantLast {
				t.Errorf("total, last = %d, %v, want %d, %v", page.Total, page.Last, tt.wantTotal, tt.wantLast)
			}
			wantSize := tt.q.Size
			if wantSize == 0 {
				wantSize = memento.DefaultPageSize
			}
			if page.Page != tt.q.Page || page.Size != wantSize {
				t.Errorf("page, size = %d, %d, want %d, %d", page.Page, page.Size, tt.q.Page, wantSize)
			}
		})
	}
}

func TestSearchInvalid(t *testing.T) {
	x := New(fixture())
	tests := []struct {
		name    string
		q       memento.TitleQuery
		message string
	}{
		{"page 0", memento.TitleQuery{}, "page must be at least 1, got 0"},
		{"negative page", memento.TitleQuery{Page: -1}, "page must be at least 1, got -1"},
		{"size over max", memento.TitleQuery{Page: 1, Size: 500}, "size must be between 1 and 100, got 500"},
		{"negative size", memento.TitleQuery{Page: 1, Size: -1}, "size must be between 1 and 100, got -1"},
		{"min year too small", memento.TitleQuery{Page: 1, MinYear: 1500}, "minYear 1500 is outside 1870-2100"},
		{"max year too big", memento.TitleQuery{Page: 1, MaxYear: 3000}, "maxYear 3000 is outside 1870-2100"},
		{"negative year", memento.TitleQuery{Page: 1, MinYear: -5}, "minYear -5 is outside 1870-2100"},
		{"min after max", memento.TitleQuery{Page: 1, MinYear: 2020, MaxYear: 2010}, "minYear 2020 is after maxYear 2010"},
		{"text too long", memento.TitleQuery{Page: 1, Text: strings.Repeat("a", MaxTextBytes+1)},
			"text is 2001 bytes long, over the limit of 2000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, err := x.Search(context.Background(), tt.q)
			if page != nil {
				t.Errorf("page = %+v, want nil", page)
			}
			if code := memento.ErrorCode(err); code != memento.EINVALID {
				t.Fatalf("code = %q (%v), want EINVALID", code, err)
			}
			if got := memento.ErrorMessage(err); got != tt.message {
				t.Errorf("message = %q, want %q", got, tt.message)
			}
		})
	}
}

func TestSearchCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New(fixture()).Search(ctx, memento.TitleQuery{Page: 1}); err == nil {
		t.Error("Search with a canceled context succeeded")
	}
}

// TestSearchExcludeAcrossPages checks what the agent relies on for "not
// those": excluding the titles of page 1 makes page 1 show what page 2
// showed, and Total shrinks by the excluded count.
func TestSearchExcludeAcrossPages(t *testing.T) {
	x := New(fixture())
	ctx := context.Background()
	for _, q := range []memento.TitleQuery{
		{Genres: []string{"Satire"}, Size: 5},
		{Text: "satire", Size: 5},
		{People: []string{"zed ray"}, MinYear: 1991, Size: 4},
	} {
		t.Run(fmt.Sprintf("%+v", q), func(t *testing.T) {
			q.Page = 1
			page1, err := x.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			q.Page = 2
			page2, err := x.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			q.Page = 1
			q.Exclude = ids(page1)
			got, err := x.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ids(page2), ids(got)); diff != "" {
				t.Errorf("page 1 after excluding page 1 mismatch (-page 2 +got):\n%s", diff)
			}
			if want := page1.Total - len(page1.Titles); got.Total != want {
				t.Errorf("Total = %d, want %d", got.Total, want)
			}
		})
	}
}

// TestSearchDeterministic checks that equal queries give equal pages and
// that pages tile the result list without gaps or repeats.
func TestSearchDeterministic(t *testing.T) {
	x := New(fixture())
	// Build the same catalog from the titles in reverse: the order of input
	// must not matter.
	rev := fixture()
	slices.Reverse(rev)
	y := New(rev)
	ctx := context.Background()
	for _, q := range []memento.TitleQuery{
		{Size: 7},
		{Text: "heist galaxy western satire", Size: 3},
		{Genres: []string{"Western", "Satire", "Action"}, Size: 4},
	} {
		var all []string
		for p := 1; ; p++ {
			q.Page = p
			a, err := x.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			b, err := y.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(a, b); diff != "" {
				t.Fatalf("%+v: catalogs built in different orders disagree (-a +b):\n%s", q, diff)
			}
			all = append(all, ids(a)...)
			if a.Last {
				if len(all) != a.Total {
					t.Errorf("%+v: pages hold %d titles, Total is %d", q, len(all), a.Total)
				}
				break
			}
		}
		seen := map[string]bool{}
		for _, id := range all {
			if seen[id] {
				t.Errorf("%+v: %s on two pages", q, id)
			}
			seen[id] = true
		}
	}
	// Without text the order is year descending, then id.
	page, err := x.Search(ctx, memento.TitleQuery{Page: 1, Size: 100})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.IsSortedFunc(page.Titles, func(a, b memento.Title) int {
		if a.Year != b.Year {
			return b.Year - a.Year
		}
		return strings.Compare(a.ID, b.ID)
	}) {
		t.Errorf("titles not in year-descending, id order: %v", ids(page))
	}
}

// TestSearchRanking checks BM25 sanity: a title named after the query beats
// one whose plot mentions it once, and more matching terms beat fewer.
func TestSearchRanking(t *testing.T) {
	x := New([]memento.Title{
		{ID: "plot", Title: "Bank Job", Year: 2020, Overview: "A long story in which a heist happens once among many other things that happen to many other people."},
		{ID: "name", Title: "The Heist", Year: 1990, Overview: "Robbers rob a bank."},
		{ID: "both", Title: "Shark Heist", Year: 1980, Overview: "A shark and a heist."},
		{ID: "none", Title: "Shark", Year: 2000, Overview: "A shark."},
		{ID: "f1", Title: "Filler One", Overview: "Something else."},
		{ID: "f2", Title: "Filler Two", Overview: "Something else."},
		{ID: "f3", Title: "Filler Three", Overview: "Something else."},
	})
	// SortYear ranks by BM25 alone; the default order would put "The
	// Heist" first as a near-exact title match.
	page, err := x.Search(context.Background(), memento.TitleQuery{Text: "heist", Sort: memento.SortYear, Page: 1})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"both", "name", "plot"}, ids(page)); diff != "" {
		t.Errorf("ranking mismatch (-want +got):\n%s", diff)
	}
	page, err = x.Search(context.Background(), memento.TitleQuery{Text: "shark heist", Page: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(page); len(got) != 4 || got[0] != "both" {
		t.Errorf("ranking for two terms = %v, want both first of 4", got)
	}
}

// TestSearchCommonTerms checks that a term in most titles does not make
// every title a match when the query has a rarer one.
func TestSearchCommonTerms(t *testing.T) {
	x := New([]memento.Title{
		{ID: "1", Title: "One", Overview: "A film about a shark."},
		{ID: "2", Title: "Two", Overview: "A film about a dog."},
		{ID: "3", Title: "Three", Overview: "A film about a cat."},
	})
	for _, tt := range []struct {
		text string
		want []string
	}{
		{"film about sharks", []string{"1"}},
		{"film", []string{"1", "2", "3"}},
	} {
		page, err := x.Search(context.Background(), memento.TitleQuery{Text: tt.text, Page: 1})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, ids(page)); diff != "" {
			t.Errorf("Search(%q) mismatch (-want +got):\n%s", tt.text, diff)
		}
	}
}

func TestTitle(t *testing.T) {
	x := New(fixture())
	got, err := x.Title(context.Background(), "m09")
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "Iron Suit" {
		t.Errorf("Title(m09) = %q, want Iron Suit", got.Title)
	}
	// The caller's copy is its own.
	got.Cast[0] = "Someone Else"
	again, _ := x.Title(context.Background(), "m09")
	if again.Cast[0] != "Robert Downey Jr." {
		t.Errorf("changing a returned title changed the index: cast %v", again.Cast)
	}
	_, err = x.Title(context.Background(), "nope")
	if code := memento.ErrorCode(err); code != memento.ENOTFOUND {
		t.Errorf("Title(nope) code = %q (%v), want ENOTFOUND", code, err)
	}
}

func TestNewInput(t *testing.T) {
	in := []memento.Title{
		{ID: "a", Title: "First"},
		{ID: "", Title: "No id"},
		{ID: "  ", Title: "Blank id"},
		{ID: "a", Title: "Repeated"},
		{ID: "b", Title: "Second", Year: 2000, Genres: []string{"comedy"}, Type: "tvSeries"},
	}
	x := New(in)
	if x.Len() != 2 {
		t.Fatalf("Len() = %d, want 2", x.Len())
	}
	want := []memento.Title{
		{ID: "b", Title: "Second", Year: 2000, Genres: []string{"comedy"}, Cast: []string{}, Type: "tvSeries"},
		{ID: "a", Title: "First", Type: "movie", Genres: []string{}, Cast: []string{}},
	}
	if diff := cmp.Diff(want, x.All()); diff != "" {
		t.Errorf("All() mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Comedy"}, x.Genres()); diff != "" {
		t.Errorf("Genres() mismatch (-want +got):\n%s", diff)
	}
	if in[0].Type != "" || in[4].Genres[0] != "comedy" {
		t.Errorf("New modified its input: %+v", in)
	}
	empty := New(nil)
	page, err := empty.Search(context.Background(), memento.TitleQuery{Text: "x", Genres: []string{"Drama"}, Page: 1})
	if err != nil || page.Total != 0 || page.Titles == nil || !page.Last {
		t.Errorf("search of an empty index = %+v, %v", page, err)
	}
}

func TestStats(t *testing.T) {
	x := New(fixture())
	got, err := x.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := &memento.CatalogStats{
		Titles: 40,
		Types:  map[string]int{"movie": 39, "tvSeries": 1},
		Genres: map[string]int{"Action": 4, "Animated": 1, "Comedy": 2, "Crime": 3, "Drama": 4, "Family": 1,
			"Romance": 1, "Satire": 25, "Science Fiction": 3, "Superhero": 1, "Thriller": 1, "Western": 3},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Stats mismatch (-want +got):\n%s", diff)
	}
	got.Types["movie"] = 0
	if again, _ := x.Stats(context.Background()); again.Types["movie"] != 39 {
		t.Error("changing returned stats changed the index")
	}
	if diff := cmp.Diff([]string{"movie", "tvSeries"}, x.Types()); diff != "" {
		t.Errorf("Types() mismatch (-want +got):\n%s", diff)
	}
}

func TestResolveTitle(t *testing.T) {
	x := New(fixture())
	tests := []struct {
		in, want string
	}{
		{"heat", "m11"},        // three films: the one with the longest cast
		{"HEAT!", "m11"},       // case and punctuation
		{"Heat (1972)", "m10"}, // a year picks the film
		{"heat 2013", "m12"},
		{"heat 1999", "m11"}, // no such year: the best title
		{"the heist", "m03"},
		{"heist", "m03"},           // article added
		{"The Space Heist", "m01"}, // article removed
		{"fast and furious", "m13"},
		{"Fast & Furious", "m13"},
		{"iron  suit", "m09"},
		{"nothing like this", ""},
		{"", ""},
		{"!!!", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := x.ResolveTitle(tt.in)
			gotID := ""
			if ok {
				gotID = got.ID
			}
			if gotID != tt.want {
				t.Errorf("ResolveTitle(%q) = %q, want %q", tt.in, gotID, tt.want)
			}
		})
	}
}

func TestPerson(t *testing.T) {
	x := New([]memento.Title{
		{ID: "1", Title: "A", Cast: []string{"Robert Downey Jr.", "Penélope Cruz"}},
		{ID: "2", Title: "B", Cast: []string{"Robert Downey Jr", "Tom Hanks"}},
		{ID: "3", Title: "C", Cast: []string{"Robert Downey Jr.", "Cher"}},
	})
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"Robert Downey Jr.", "Robert Downey Jr.", true},
		{"robert downey jr", "Robert Downey Jr.", true}, // the most common spelling wins
		{"ROBERT DOWNEY, JR.", "Robert Downey Jr.", true},
		{"penelope cruz", "Penélope Cruz", true},
		{"cher", "Cher", true},
		{"Robert Downey", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, ok := x.Person(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Person(%q) = %q, %v, want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	if diff := cmp.Diff([]string{"Cher", "Penélope Cruz", "Robert Downey Jr.", "Tom Hanks"}, x.People()); diff != "" {
		t.Errorf("People() mismatch (-want +got):\n%s", diff)
	}
	gotIn := x.PeopleIn("Something with tom hanks, or Robert Downey Jr. and penelope cruz; not Cher, not tom.")
	if diff := cmp.Diff([]string{"Tom Hanks", "Robert Downey Jr.", "Penélope Cruz"}, gotIn); diff != "" {
		t.Errorf("PeopleIn mismatch (-want +got):\n%s", diff)
	}
}
