package sqlite_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

func TestTitles(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	heat := memento.Title{ID: "ml:2", Title: "Heat", Type: memento.TypeMovie, Year: 1995, Genres: []string{"Crime", "Thriller"},
		Cast: []string{"Al Pacino", "Robert De Niro"}, Overview: "A cop and a thief.", RuntimeMinutes: 170, Href: "https://example.org/heat", Notability: 0.87}
	sopranos := memento.Title{ID: "imdb:tt0141842", Title: "The Sopranos", Type: memento.TypeTVSeries, Year: 1999, EndYear: 2007,
		Genres: []string{"Crime", "Drama"}, Cast: []string{}, IsAdult: false}
	noLists := memento.Title{ID: "ml:3", Title: "Untitled", Type: memento.TypeMovie}

	n, err := db.PutTitles(ctx, []memento.Title{heat, sopranos, noLists}, false)
	if err != nil || n != 3 {
		t.Fatalf("PutTitles = %d, %v; want 3", n, err)
	}
	got, err := db.Titles(ctx)
	if err != nil {
		t.Fatalf("Titles: %v", err)
	}
	noLists.Genres, noLists.Cast = []string{}, []string{} // stored as empty lists
	if diff := cmp.Diff([]memento.Title{sopranos, heat, noLists}, got); diff != "" {
		t.Errorf("Titles (-want +got):\n%s", diff)
	}

	// Updating one title keeps the others.
	heat.Year = 1996
	if _, err := db.PutTitles(ctx, []memento.Title{heat}, false); err != nil {
		t.Fatalf("PutTitles update: %v", err)
	}
	if c, _ := db.CountTitles(ctx); c != 3 {
		t.Errorf("count after update = %d, want 3", c)
	}

	// Replacing keeps only the given titles.
	if _, err := db.PutTitles(ctx, []memento.Title{heat}, true); err != nil {
		t.Fatalf("PutTitles replace: %v", err)
	}
	got, err = db.Titles(ctx)
	if err != nil {
		t.Fatalf("Titles: %v", err)
	}
	if diff := cmp.Diff([]memento.Title{heat}, got); diff != "" {
		t.Errorf("Titles after replace (-want +got):\n%s", diff)
	}

	_, err = db.PutTitles(ctx, []memento.Title{heat, {Title: "no id"}}, true)
	wantCode(t, err, memento.EINVALID)
	if c, _ := db.CountTitles(ctx); c != 1 {
		t.Errorf("a rejected replace changed the titles: count %d, want 1", c)
	}
}
