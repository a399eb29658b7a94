package catalog

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/memento-ai/memento"
)

// notableFixture is the fixture with notability: the 1995 Heat is the best
// known title, the satires are known in the reverse order of their
// numbers, and Old Western is better known than the later Western Comedy.
func notableFixture() []memento.Title {
	titles := append(fixture(), memento.Title{ID: "m14", Title: "It", Type: "movie", Year: 2017, Genres: []string{"Horror"}})
	known := map[string]float64{"m11": 0.99, "m10": 0.4, "m12": 0.6, "m06": 0.9, "m08": 0.3, "m07": 0.3,
		"m01": 0.2, "m03": 0.8, "m04": 0.5}
	for i := range titles {
		t := &titles[i]
		if n, ok := known[t.ID]; ok {
			t.Notability = n
		}
		var num int
		if _, err := fmt.Sscanf(t.ID, "c%d", &num); err == nil {
			t.Notability = float64(30-num) / 100
		}
	}
	return titles
}

func TestSearchDefaultOrder(t *testing.T) {
	x := New(notableFixture())
	var satires []string // by notability: c01 (0.29) to c25 (0.05)
	for i := 1; i <= 25; i++ {
		satires = append(satires, fmt.Sprintf("c%02d", i))
	}
	tests := []struct {
		name      string
		q         memento.TitleQuery
		want      []string
		wantTotal int
	}{
		// Old Western (0.9) before the two of 0.3, those by year.
		{"genre by notability", memento.TitleQuery{Genres: []string{"Western"}}, []string{"m06", "m08", "m07"}, 3},
		{"genre by year", memento.TitleQuery{Genres: []string{"Western"}, Sort: memento.SortYear}, []string{"m08", "m06", "m07"}, 3},
		{"person", memento.TitleQuery{People: []string{"Bob Stone"}}, []string{"m03", "m01"}, 2},
		{"person by year", memento.TitleQuery{People: []string{"Bob Stone"}, Sort: memento.SortYear}, []string{"m01", "m03"}, 2},
		{"years", memento.TitleQuery{MinYear: 1972, MaxYear: 2001}, []string{"m11", "m03", "m04", "m10", "c01", "c02"}, 29},
		{"first page", memento.TitleQuery{Genres: []string{"Satire"}, Size: 10}, satires[:10], 25},
		{"second page", memento.TitleQuery{Genres: []string{"Satire"}, Page: 2, Size: 10}, satires[10:20], 25},
		{"last page", memento.TitleQuery{Genres: []string{"Satire"}, Page: 3, Size: 10}, satires[20:], 25},
		{"past the end", memento.TitleQuery{Genres: []string{"Satire"}, Page: 4, Size: 10}, []string{}, 25},
		{"far past the end", memento.TitleQuery{Genres: []string{"Satire"}, Page: 1 << 62, Size: 10}, []string{}, 25},
		// The agent excludes what it showed and asks for page 1 again.
		{"exclusions while paging", memento.TitleQuery{Genres: []string{"Satire"}, Size: 10, Exclude: satires[:10]}, satires[10:20], 15},
		{"exclusions and a later page", memento.TitleQuery{Genres: []string{"Satire"}, Page: 2, Size: 5, Exclude: satires[:10]}, satires[15:20], 15},
		// Exact title matches first, by notability; "Heat 1972" names one.
		{"exact title", memento.TitleQuery{Text: "heat"}, []string{"m11", "m12", "m10"}, 3},
		{"exact title and year", memento.TitleQuery{Text: "Heat (1972)"}, []string{"m10", "m11", "m12"}, 3},
		{"exact title by year", memento.TitleQuery{Text: "heat", Sort: memento.SortYear}, []string{"m12", "m11", "m10"}, 3},
		{"article removed", memento.TitleQuery{Text: "Heist"}, []string{"m03", "m01", "m04"}, 3},
		{"exact match with a filter", memento.TitleQuery{Text: "heat", MaxYear: 1990}, []string{"m10"}, 1},
		{"exact match excluded", memento.TitleQuery{Text: "heat", Exclude: []string{"m11"}}, []string{"m12", "m10"}, 2},
		{"text paging", memento.TitleQuery{Text: "heat", Page: 2, Size: 1}, []string{"m12"}, 3},
		{"ampersand", memento.TitleQuery{Text: "fast and furious"}, []string{"m13"}, 1},
		// "It" is all stopwords: a title, but no text to search.
		{"title of stopwords", memento.TitleQuery{Text: "it"}, []string{"m14"}, 1},
		{"title of stopwords by year", memento.TitleQuery{Text: "it", Type: "tvSeries", Sort: memento.SortYear}, []string{"s01"}, 1},
		{"stopwords that are no title", memento.TitleQuery{Text: "the", Type: "tvSeries"}, []string{"s01"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.q.Page == 0 {
				tt.q.Page = 1
			}
			page, err := x.Search(context.Background(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			got := ids(page)
			want := tt.want
			if len(want) > len(got) {
				t.Fatalf("got %v, want %v", got, want)
			}
			// "years" checks only the head of a long page.
			if diff := gocmp.Diff(want, got[:len(want)]); diff != "" {
				t.Errorf("ids mismatch (-want +got):\n%s", diff)
			}
			if page.Total != tt.wantTotal {
				t.Errorf("total = %d, want %d", page.Total, tt.wantTotal)
			}
		})
	}
}

// TestSearchDefaultOrderMatchesSort checks the bounded heap against a full
// sort: for random notability (with many ties) and random queries and
// pages, a page is the matches sorted by notability descending, then year
// descending, then id.
func TestSearchDefaultOrderMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	titles := fixture()
	for i := 0; i < 300; i++ {
		titles = append(titles, memento.Title{ID: fmt.Sprintf("r%03d", i), Title: fmt.Sprintf("Random %d", i),
			Year: 1950 + r.IntN(70), Genres: []string{[]string{"Drama", "Comedy", "Western"}[r.IntN(3)]}})
	}
	for i := range titles {
		titles[i].Notability = float64(r.IntN(20)) / 20
	}
	x := New(titles)
	ctx := context.Background()
	for round := 0; round < 200; round++ {
		q := memento.TitleQuery{Page: 1 + r.IntN(4), Size: 1 + r.IntN(30)}
		if r.IntN(2) == 0 {
			q.Genres = []string{[]string{"Drama", "Comedy", "Western"}[r.IntN(3)]}
		}
		if r.IntN(2) == 0 {
			q.MinYear = 1950 + r.IntN(40)
		}
		for j := r.IntN(20); j > 0; j-- {
			q.Exclude = append(q.Exclude, titles[r.IntN(len(titles))].ID)
		}
		all := q
		all.Page, all.Size, all.Sort = 1, memento.MaxPageSize, memento.SortYear
		var matches []memento.Title
		for p := 1; ; p++ {
			all.Page = p
			page, err := x.Search(ctx, all)
			if err != nil {
				t.Fatal(err)
			}
			matches = append(matches, page.Titles...)
			if page.Last {
				break
			}
		}
		slices.SortStableFunc(matches, func(a, b memento.Title) int {
			return cmp.Compare(b.Notability, a.Notability) // stable: year order within
		})
		from := min((q.Page-1)*q.Size, len(matches))
		want := []string{}
		for _, m := range matches[from:min(from+q.Size, len(matches))] {
			want = append(want, m.ID)
		}
		page, err := x.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if diff := gocmp.Diff(want, ids(page)); diff != "" || page.Total != len(matches) {
			t.Fatalf("query %+v: total %d, want %d; ids (-want +got):\n%s", q, page.Total, len(matches), diff)
		}
	}
}

func TestSearchSortInvalid(t *testing.T) {
	_, err := New(fixture()).Search(context.Background(), memento.TitleQuery{Sort: "rating", Page: 1})
	if got := memento.ErrorCode(err); got != memento.EINVALID {
		t.Errorf("code = %q (%v), want EINVALID", got, err)
	}
}

func TestResolveTitlePrefersNotable(t *testing.T) {
	titles := []memento.Title{
		{ID: "long-cast", Title: "Arrival", Year: 2020, Cast: []string{"A", "B", "C", "D"}, Notability: 0.2},
		{ID: "known", Title: "Arrival", Year: 2016, Cast: []string{"E"}, Notability: 0.9},
		{ID: "short", Title: "The Arrival", Year: 1901, Notability: 0.95},
	}
	x := New(titles)
	for _, tt := range []struct{ text, want string }{
		{"arrival", "known"},
		{"Arrival 2020", "long-cast"},
		{"the arrival", "short"},
	} {
		got, ok := x.ResolveTitle(tt.text)
		if !ok || got.ID != tt.want {
			t.Errorf("ResolveTitle(%q) = %v, want %s", tt.text, got, tt.want)
		}
	}
}

// TestEmbeddedSearchOrder checks the default order on the shipped catalog:
// the films people mean come first.
func TestEmbeddedSearchOrder(t *testing.T) {
	x, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first := func(q memento.TitleQuery) memento.Title {
		t.Helper()
		q.Page = 1
		page, err := x.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Titles) == 0 {
			t.Fatalf("%+v found nothing", q)
		}
		return page.Titles[0]
	}
	for _, tt := range []struct {
		text     string
		wantID   string
		wantYear int
	}{
		{"Heat", "wiki:Heat_(1995_film)", 1995},
		{"heat", "wiki:Heat_(1995_film)", 1995},
		{"Arrival", "", 2016},
		{"the matrix", "", 1999},
		{"Matrix", "", 1999},
		{"Heat 1986", "", 1986},
	} {
		got := first(memento.TitleQuery{Text: tt.text})
		if (tt.wantID != "" && got.ID != tt.wantID) || got.Year != tt.wantYear {
			t.Errorf("q=%q: first is %s (%d), want %s (%d)", tt.text, got.ID, got.Year, tt.wantID, tt.wantYear)
		}
	}
	if got, ok := x.ResolveTitle("heat"); !ok || got.ID != "wiki:Heat_(1995_film)" {
		t.Errorf("ResolveTitle(heat) = %v, want Heat (1995)", got)
	}

	// Every shipped title has a notability, and a search without text
	// starts with well-known titles: the first page of westerns is from
	// the top tenth of the catalog.
	var missing int
	for _, ti := range x.titles {
		if ti.Notability <= 0 || ti.Notability > 1 {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d embedded titles have no notability in (0, 1]", missing)
	}
	page, err := x.Search(ctx, memento.TitleQuery{Genres: []string{"Western"}, Page: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, ti := range page.Titles {
		if ti.Notability < 0.9 {
			t.Errorf("western %d: %s has notability %v, want the best known first", i, ti.ID, ti.Notability)
		}
		if i > 0 && ti.Notability > page.Titles[i-1].Notability {
			t.Errorf("westerns not by notability: %s (%v) after %s (%v)", ti.ID, ti.Notability,
				page.Titles[i-1].ID, page.Titles[i-1].Notability)
		}
	}
	// SortYear keeps the old order: the newest titles first.
	byYear, err := x.Search(ctx, memento.TitleQuery{Genres: []string{"Western"}, Sort: memento.SortYear, Page: 1, Size: 50})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.IsSortedFunc(byYear.Titles, func(a, b memento.Title) int {
		return cmp.Or(cmp.Compare(b.Year, a.Year), cmp.Compare(a.ID, b.ID))
	}) {
		t.Errorf("SortYear westerns not in year, id order: %v", ids(byYear))
	}
}
