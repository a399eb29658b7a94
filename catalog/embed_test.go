package catalog

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memento-ai/memento"
)

func TestEmbedded(t *testing.T) {
	x, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := Embedded(); again != x {
		t.Error("Embedded() built the index twice")
	}
	titles := x.All()
	if len(titles) < 30000 {
		t.Fatalf("embedded catalog has %d titles, want at least 30,000", len(titles))
	}
	seen := make(map[string]bool, len(titles))
	for _, tt := range titles {
		switch {
		case seen[tt.ID]:
			t.Errorf("id %q is not unique", tt.ID)
		case !strings.HasPrefix(tt.ID, "wiki:"):
			t.Errorf("id %q does not start with wiki:", tt.ID)
		case tt.Year < 1870 || tt.Year > 2100:
			t.Errorf("%s has year %d", tt.ID, tt.Year)
		case tt.Type != memento.TypeMovie:
			t.Errorf("%s has type %q", tt.ID, tt.Type)
		case tt.Title == "":
			t.Errorf("%s has no title", tt.ID)
		case len(tt.Overview) > 2*OverviewChars+10:
			t.Errorf("%s has an overview of %d bytes", tt.ID, len(tt.Overview))
		}
		seen[tt.ID] = true
		for _, c := range tt.Cast {
			if c == "Jr." || strings.HasSuffix(c, ", Jr.") || c == ")" || c == "" {
				t.Errorf("%s has cast name %q", tt.ID, c)
			}
		}
	}
	if got, ok := x.Person("robert downey jr."); !ok || got != "Robert Downey Jr." {
		t.Errorf(`Person("robert downey jr.") = %q, %v, want "Robert Downey Jr."`, got, ok)
	}
	page, err := x.Search(context.Background(), memento.TitleQuery{People: []string{"Robert Downey Jr."}, Page: 1})
	if err != nil {
		t.Fatal(err)
	}
	if page.Total < 30 {
		t.Errorf("Robert Downey Jr. is in %d titles, want at least 30", page.Total)
	}
	for in, want := range map[string]string{
		"heat":         "wiki:Heat_(1995_film)",
		"The Avengers": "wiki:The_Avengers_(2012_film)",
		"titanic":      "wiki:Titanic_(1997_film)",
	} {
		if got, ok := x.ResolveTitle(in); !ok || got.ID != want {
			t.Errorf("ResolveTitle(%q) = %v, want %s", in, got, want)
		}
	}
	wantGenres := []string{"Action", "Adventure", "Animated", "Biography", "Comedy", "Crime", "Dance",
		"Disaster", "Documentary", "Drama", "Erotic", "Family", "Fantasy", "Found Footage", "Historical",
		"Horror", "Independent", "Legal", "Live Action", "Martial Arts", "Musical", "Mystery", "Noir",
		"Performance", "Political", "Romance", "Satire", "Science Fiction", "Short", "Silent", "Slasher",
		"Sports", "Spy", "Superhero", "Supernatural", "Suspense", "Teen", "Thriller", "War", "Western"}
	if diff := cmp.Diff(wantGenres, x.Genres()); diff != "" {
		t.Errorf("Genres() mismatch (-want +got):\n%s", diff)
	}
}

// TestEmbeddedUpToDate rebuilds the catalog from the source data, when it
// is at hand, and checks that the embedded file is what the generator
// makes of it: run go generate ./catalog after changing the cleaning.
func TestEmbeddedUpToDate(t *testing.T) {
	src := filepath.Join("..", "..", "shared", "data", "wikimovies")
	if testing.Short() || raceEnabled {
		t.Skip("rebuilding the catalog takes a second, and half a minute under the race detector")
	}
	if _, err := os.Stat(src); err != nil {
		t.Skipf("source data not found: %v", err)
	}
	want, _, err := BuildWikiMovies(src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := EmbeddedTitles()
	if err != nil {
		t.Fatal(err)
	}
	// cmp.Diff of 36,000 titles is slow; compare them one by one and show
	// the first difference.
	if len(want) != len(got) {
		t.Fatalf("embedded catalog is stale (%d titles, a rebuild makes %d); run go generate ./catalog", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(want[i], got[i]) {
			t.Fatalf("embedded catalog is stale; run go generate ./catalog. First difference (-built +embedded):\n%s",
				cmp.Diff(want[i], got[i]))
		}
	}
}
