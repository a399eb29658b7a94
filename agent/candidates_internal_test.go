package agent

import (
	"context"
	"slices"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/catalog"
)

func TestSeriesKey(t *testing.T) {
	same := [][2]string{
		{"Saw", "Saw II"}, {"Saw", "Saw 3D"}, {"Toy Story", "Toy Story 2"}, {"The Matrix", "Matrix"},
		{"Star Wars: A New Hope", "Star Wars: The Empire Strikes Back"}, {"Rocky", "Rocky IV"},
	}
	for _, p := range same {
		if seriesKey(p[0]) != seriesKey(p[1]) {
			t.Errorf("%q and %q are not one series: %q, %q", p[0], p[1], seriesKey(p[0]), seriesKey(p[1]))
		}
	}
	different := [][2]string{{"Heat", "Heathers"}, {"Alien", "Aliens"}, {"It", "Up"}, {"1917", "2012"}}
	for _, p := range different {
		if seriesKey(p[0]) == seriesKey(p[1]) {
			t.Errorf("%q and %q read as one series %q", p[0], p[1], seriesKey(p[0]))
		}
	}
}

func TestDiversifyPassesOverSequels(t *testing.T) {
	var ranked []scored
	for _, name := range []string{"Saw", "Saw II", "Saw III", "Heat", "Ronin", "Saw IV"} {
		ranked = append(ranked, scored{Title: &memento.Title{ID: name, Title: name}})
	}
	order := make([]int, len(ranked))
	for i := range order {
		order[i] = i
	}
	names := func(cs []scored) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Title.Title)
		}
		return out
	}
	if got, want := names(diversify(ranked, order, 3, nil)), []string{"Saw", "Heat", "Ronin"}; !slices.Equal(got, want) {
		t.Errorf("diversify(3) = %v, want %v", got, want)
	}
	// With too few others, sequels fill the answer in their order.
	if got, want := names(diversify(ranked, order, 5, nil)), []string{"Saw", "Heat", "Ronin", "Saw II", "Saw III"}; !slices.Equal(got, want) {
		t.Errorf("diversify(5) = %v, want %v", got, want)
	}
	// The order is ranked's, not cands'.
	back := slices.Clone(order)
	slices.Reverse(back)
	if got, want := names(diversify(ranked, back, 3, nil)), []string{"Saw IV", "Ronin", "Heat"}; !slices.Equal(got, want) {
		t.Errorf("diversify(3) in reverse = %v, want %v", got, want)
	}
	// A disliked title does not jump ahead of the sequels for variety.
	held := func(c *scored) bool { return c.Title.Title == "Ronin" }
	if got, want := names(diversify(ranked, order, 4, held)), []string{"Saw", "Heat", "Saw II", "Saw III"}; !slices.Equal(got, want) {
		t.Errorf("diversify(4, Ronin held) = %v, want %v", got, want)
	}
}

func TestSecondPerson(t *testing.T) {
	for in, want := range map[string]string{
		"hates musicals":             "hate musicals",
		"can't stand slasher films":  "can't stand slasher films",
		"is not a fan of horror":     "are not a fan of horror",
		"watches too many westerns":  "watch too many westerns",
		"doesn't like gore":          "don't like gore",
		"dislikes romantic comedies": "dislike romantic comedies",
		"avoids jump scares":         "avoid jump scares",
	} {
		if got := secondPerson(in); got != want {
			t.Errorf("secondPerson(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRuntimeBounds(t *testing.T) {
	tests := []struct {
		in     string
		lo, hi int
		ok     bool
	}{
		{"<=120", 0, 120, true}, {">=150", 150, 0, true}, {"90-120", 90, 120, true},
		{"<= 100", 0, 100, true}, {"long", 0, 0, false}, {"120-90", 0, 0, false}, {"<=0", 0, 0, false},
	}
	for _, tt := range tests {
		lo, hi, ok := runtimeBounds(tt.in)
		if lo != tt.lo || hi != tt.hi || ok != tt.ok {
			t.Errorf("runtimeBounds(%q) = %d, %d, %v; want %d, %d, %v", tt.in, lo, hi, ok, tt.lo, tt.hi, tt.ok)
		}
	}
}

func TestRememberKeepsNewestFirstOnceEach(t *testing.T) {
	if got, want := remember([]string{"c", "a"}, []string{"a", "b"}), []string{"c", "a", "b"}; !slices.Equal(got, want) {
		t.Errorf("remember = %v, want %v", got, want)
	}
	long := make([]string, memento.MaxShownRemembered+5)
	for i := range long {
		long[i] = string(rune('a'+i%26)) + string(rune('0'+i/26%10)) + string(rune('0'+i/260))
	}
	if got := remember([]string{"new"}, long); len(got) != memento.MaxShownRemembered || got[0] != "new" {
		t.Errorf("remember kept %d titles starting %q, want %d starting \"new\"", len(got), got[0], memento.MaxShownRemembered)
	}
}

// TestApplyTasteHonoursARequestAgainstADislike checks that a dislike the
// request asks for does not push its titles down, and is reported.
func TestApplyTasteHonoursARequestAgainstADislike(t *testing.T) {
	taste := &Taste{
		Dislikes: []TasteItem{{Genre: "Musical", Memory: "m1", Said: "hates musicals"}, {Genre: "Horror", Memory: "m2", Said: "can't stand horror"}},
		Likes:    []TasteItem{{Word: "heist", Memory: "m3", Said: "loves heist movies"}},
	}
	cands := []scored{
		{Title: &memento.Title{ID: "1", Title: "Grease", Genres: []string{"Musical"}}},
		{Title: &memento.Title{ID: "2", Title: "Halloween", Genres: []string{"Horror"}}},
		{Title: &memento.Title{ID: "3", Title: "Heat", Genres: []string{"Crime"}, Overview: "A heist goes wrong."}},
	}
	ac := memento.NewActiveContext()
	ac.Genres = []string{"Musical"}
	got := applyTaste(ac, taste, cands)
	if len(got) != 1 || got[0].Genre != "Musical" {
		t.Errorf("contradicted = %+v, want the musical dislike", got)
	}
	if cands[0].Score != 0 || cands[1].Score != tasteDislike || cands[2].Score != tasteLikeWeight {
		t.Errorf("scores = %v, %v, %v; want 0, %v, %v", cands[0].Score, cands[1].Score, cands[2].Score, tasteDislike, tasteLikeWeight)
	}
	if !slices.Contains(cands[2].Why, "you like heist") || len(cands[0].Why) != 0 {
		t.Errorf("reasons = %v / %v", cands[2].Why, cands[0].Why)
	}
}

func TestUngroundedSeesPastShownNames(t *testing.T) {
	ghost := memento.Title{ID: "gb", Title: "Ghostbusters", Type: "movie", Year: 1984}
	sequel := memento.Title{ID: "gb2", Title: "Ghostbusters II", Type: "movie", Year: 1989}
	heat := memento.Title{ID: "heat", Title: "Heat", Type: "movie", Year: 1995}
	a := &Agent{Catalog: catalog.New([]memento.Title{ghost, sequel, heat})}
	ac := memento.ActiveContext{ExcludedTitleIDs: []string{"gb", "heat"}}
	ctx := context.Background()
	// The sequel's name holds the excluded title's: not a reply naming it.
	if bad := a.ungrounded(ctx, "1. Ghostbusters II (1989): Comedy", []memento.Title{sequel}, ac, nil); bad != "" {
		t.Errorf("a reply naming only the shown sequel is flagged for %q", bad)
	}
	// Naming the excluded title itself still is.
	if bad := a.ungrounded(ctx, "Ghostbusters II, or Ghostbusters again", []memento.Title{sequel}, ac, nil); bad != "Ghostbusters" {
		t.Errorf("a reply naming the excluded Ghostbusters is flagged for %q, want Ghostbusters", bad)
	}
	if bad := a.ungrounded(ctx, "You might like Heat.", []memento.Title{sequel}, ac, nil); bad != "Heat" {
		t.Errorf("a reply naming the excluded Heat is flagged for %q, want Heat", bad)
	}
}

// pagedCatalog is a catalog that only pages (no CandidateSource).
type pagedCatalog struct{ memento.Catalog }

// TestPoolLeavesOutWhatItHas checks that a pool drawn from a catalog that
// hands out candidates, which leaves out the titles the pool already has,
// is the pool drawn by paging the same catalog and passing over them:
// for plain and filtered requests, liked genres, people and words,
// anchors, and titles shown before.
func TestPoolLeavesOutWhatItHas(t *testing.T) {
	cat, err := catalog.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	direct := &Agent{Catalog: cat}
	paged := &Agent{Catalog: pagedCatalog{cat}}
	if _, ok := direct.Catalog.(CandidateSource); !ok {
		t.Fatal("the embedded catalog hands out no candidates: the test compares one path with itself")
	}
	heat, ok := cat.ResolveTitle("Heat 1995")
	if !ok {
		t.Fatal("no Heat in the catalog")
	}
	first, err := cat.Search(ctx, memento.TitleQuery{Page: 1, Size: 40})
	if err != nil {
		t.Fatal(err)
	}
	var shown []string
	for _, tt := range first.Titles[:30] {
		shown = append(shown, tt.ID)
	}
	year := 1990
	taste := &Taste{Likes: []TasteItem{{Genre: "Crime"}, {Genre: "Thriller"}, {Person: "Tom Hanks"}, {Word: "heist"}, {Genre: "Comedy"}}}
	cases := []struct {
		name    string
		ac      memento.ActiveContext
		taste   *Taste
		anchors []memento.Title
		shown   []string
	}{
		{"plain", memento.ActiveContext{Count: 5}, nil, nil, nil},
		{"taste", memento.ActiveContext{Count: 5}, taste, nil, nil},
		{"taste and shown", memento.ActiveContext{Count: 5}, taste, nil, shown},
		{"anchor", memento.ActiveContext{Count: 5, Like: []string{heat.ID}}, taste, []memento.Title{*heat}, shown[:5]},
		{"filtered", memento.ActiveContext{Count: 3, Genres: []string{"Drama"}, MinYear: &year}, taste, nil, shown},
	}
	for _, c := range cases {
		got, err := direct.pool(ctx, c.ac, c.taste, c.anchors, c.shown)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want, err := paged.pool(ctx, c.ac, c.taste, c.anchors, c.shown)
		if err != nil {
			t.Fatalf("%s, paged: %v", c.name, err)
		}
		ids := func(ts []memento.Title) []string {
			out := make([]string, len(ts))
			for i, tt := range ts {
				out[i] = tt.ID
			}
			return out
		}
		if g, w := ids(got), ids(want); !slices.Equal(g, w) {
			t.Errorf("%s: a pool of %d titles, %v…; paged, %d, %v…", c.name, len(g), g[:min(8, len(g))], len(w), w[:min(8, len(w))])
		}
		if c.taste != nil && len(got) <= CandidatePool {
			t.Errorf("%s: %d titles, no more than the constraint pool: the draws added nothing", c.name, len(got))
		}
	}
}
