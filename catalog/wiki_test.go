package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memento-ai/memento"
)

func TestBuildWikiMovies(t *testing.T) {
	titles, report, err := BuildWikiMovies(filepath.Join("testdata", "wiki"))
	if err != nil {
		t.Fatal(err)
	}
	wantReport := BuildReport{
		Files: 2, Raw: 12, Titles: 7, Malformed: 1, NoTitle: 1, NoYear: 2, Duplicates: 1,
		NoHref: 1, SharedHrefs: 1, CastRepaired: 3, CastDropped: 8, OverviewsTrimmed: 0,
	}
	if diff := cmp.Diff(wantReport, report); diff != "" {
		t.Errorf("report mismatch (-want +got):\n%s", diff)
	}
	want := []memento.Title{
		{ID: "wiki:The_Artist's_Dilemma", Title: "The Artist's Dilemma", Type: "movie", Year: 2001,
			Genres: []string{}, Cast: []string{"Carl Fox"}, Href: WikipediaURL + "The_Artist%27s_Dilemma"},
		{ID: "wiki:The_Train_Wreckers#1998", Title: "The Train Wreckers", Type: "movie", Year: 1998,
			Genres: []string{"Drama"}, Cast: []string{}, Href: WikipediaURL + "The_Train_Wreckers"},
		{ID: "wiki:Unlinked_Film#1996", Title: "Unlinked Film", Type: "movie", Year: 1996,
			Genres: []string{"Documentary"}, Cast: []string{"Ann Lee", "Bob Stone"}},
		{ID: "wiki:Heat_(1995_film)", Title: "Heat", Type: "movie", Year: 1995,
			Genres: []string{"Crime", "Thriller", "Drama"},
			Cast:   []string{"Al Pacino", "Robert De Niro", "Val Kilmer", "Jon Voight"},
			Overview: "Heat is a 1995 American crime film written and directed by Michael Mann. " +
				"It stars Al Pacino and Robert De Niro.",
			Href: WikipediaURL + "Heat_(1995_film)"},
		{ID: "wiki:The_Train_Wreckers", Title: "The Train Wreckers", Type: "movie", Year: 1995,
			Genres: []string{"Drama"}, Cast: []string{}, Href: WikipediaURL + "The_Train_Wreckers"},
		{ID: "wiki:Only_You_(1994_film)", Title: "Only You", Type: "movie", Year: 1994,
			Genres: []string{"Romance", "Sports"}, Cast: []string{"Marisa Tomei", "Robert Downey Jr."},
			Href: WikipediaURL + "Only_You_(1994_film)"},
		{ID: "wiki:Chaplin_(film)", Title: "Chaplin", Type: "movie", Year: 1992,
			Genres: []string{"Biography"}, Cast: []string{"Robert Downey Jr.", "Dan Aykroyd"},
			Href: WikipediaURL + "Chaplin_(film)"},
	}
	if diff := cmp.Diff(want, titles, ignoreNotability()); diff != "" {
		t.Errorf("titles mismatch (-want +got):\n%s", diff)
	}
	// Heat has the longest plot and cast of the test films.
	best := titles[0]
	for _, tt := range titles {
		if tt.Notability <= 0 || tt.Notability > 1 {
			t.Errorf("%s: notability %v is not in (0, 1]", tt.ID, tt.Notability)
		}
		if tt.Notability > best.Notability {
			best = tt
		}
	}
	if best.ID != "wiki:Heat_(1995_film)" || best.Notability != 1 {
		t.Errorf("most notable = %s (%v), want wiki:Heat_(1995_film) (1)", best.ID, best.Notability)
	}
}

func TestBuildWikiMoviesErrors(t *testing.T) {
	t.Run("no files", func(t *testing.T) {
		_, _, err := BuildWikiMovies(t.TempDir())
		if got := memento.ErrorCode(err); got != memento.ENOTFOUND {
			t.Errorf("code = %q (%v), want ENOTFOUND", got, err)
		}
	})
	t.Run("not an array", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "movies-1990s.json"), []byte(`{"title":"x"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := BuildWikiMovies(dir)
		if got := memento.ErrorCode(err); got != memento.EINVALID {
			t.Errorf("code = %q (%v), want EINVALID", got, err)
		}
	})
}

func TestCleanCast(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"clean", []string{"Al Pacino", "Robert De Niro"}, []string{"Al Pacino", "Robert De Niro"}},
		{"split suffix", []string{"Robert Downey", "Jr.", "Gwyneth Paltrow"}, []string{"Robert Downey Jr.", "Gwyneth Paltrow"}},
		{"comma suffix", []string{"Robert Downey, Jr.", "Sammy Davis, Jr", "Clarence Williams, III"},
			[]string{"Robert Downey Jr.", "Sammy Davis Jr.", "Clarence Williams III"}},
		{"split senior", []string{"House Peters", "Sr.", "Myrtle Stedman"}, []string{"House Peters Sr.", "Myrtle Stedman"}},
		{"suffix first", []string{"Jr.", "Ann Lee"}, []string{"Ann Lee"}},
		{"stray tokens", []string{"Franny's Feet", ")", "", "  ", ".", "?", "&", "Phoebe McAuley"},
			[]string{"Franny's Feet", "Phoebe McAuley"}},
		{"award note", []string{"Paul Muni", "(", "Academy Award for Best Actor", ")", "Josephine Hutchinson"},
			[]string{"Paul Muni", "Josephine Hutchinson"}},
		{"nominee note", []string{"Walter Huston", "(", "Best Actor", "nominee)", "Ruth Chatterton"},
			[]string{"Walter Huston", "Ruth Chatterton"}},
		{"role notes", []string{"Alois Havrilla (narrator)", "(voices)", "John Wood (English actor)", "Dave (Tex) O'Brien"},
			[]string{"Alois Havrilla", "John Wood", "Dave (Tex) O'Brien"}},
		{"labels", []string{"voices of", "Cliff Edwards", "and", "Narrated by", "with", "and Ateesh Randev"},
			[]string{"Cliff Edwards", "Ateesh Randev"}},
		{"footnotes", []string{"Caitlyn Jenner", "[a]", "Katherine MacDonald]]", "Steve Guttenberg[2]"},
			[]string{"Caitlyn Jenner", "Katherine MacDonald", "Steve Guttenberg"}},
		{"descriptions", []string{"the life of", "Tupac Shakur", "survivors", "will.i.am"},
			[]string{"Tupac Shakur", "will.i.am"}},
		{"leading punctuation", []string{". Caroline Martin", `"Weird Al" Yankovic`}, []string{"Caroline Martin", `"Weird Al" Yankovic`}},
		{"duplicates", []string{"Ann Lee", "ann lee", " Ann  Lee "}, []string{"Ann Lee"}},
		{"empty", nil, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, _ := cleanCast(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("cleanCast(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestTrimOverview(t *testing.T) {
	long := strings.Repeat("word ", 100)
	tests := []struct {
		name, in, want string
		trimmed        bool
	}{
		{"short", "A short plot.", "A short plot.", false},
		{"whitespace", "  A   short\nplot. ", "A short plot.", false},
		{"last sentence within limit",
			"Heat is a 1995 American crime film directed by Michael Mann. " + strings.Repeat("It is long. ", 30),
			"Heat is a 1995 American crime film directed by Michael Mann. " + strings.TrimSpace(strings.Repeat("It is long. ", 20)),
			true},
		{"abbreviations are not sentence ends",
			"Mr. Smith Goes to Washington is a film by Frank Capra with James Stewart and Jean Arthur and many others in the cast of the U.S. production. It " + long,
			"Mr. Smith Goes to Washington is a film by Frank Capra with James Stewart and Jean Arthur and many others in the cast of the U.S. production.",
			true},
		{"no sentence end", long, strings.TrimSpace(strings.Repeat("word ", 60)) + "…", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, trimmed := trimOverview(tt.in, 300)
			if got != tt.want || trimmed != tt.trimmed {
				t.Errorf("trimOverview() = %q, %v\nwant %q, %v", got, trimmed, tt.want, tt.trimmed)
			}
		})
	}
}
