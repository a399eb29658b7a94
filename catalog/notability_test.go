package catalog

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memento-ai/memento"
)

func TestRankNormalise(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want []float64
	}{
		{"empty", []float64{}, []float64{}},
		{"distinct", []float64{3, 1, 2, 4}, []float64{0.75, 0.25, 0.5, 1}},
		{"ties share their mean rank", []float64{5, 1, 5, 1}, []float64{0.875, 0.375, 0.875, 0.375}},
		{"all equal", []float64{2, 2}, []float64{0.75, 0.75}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, rankNormalise(tt.in)); diff != "" {
				t.Errorf("rankNormalise(%v) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// notabilityOf returns the notability of each title by id.
func notabilityOf(titles []memento.Title) map[string]float64 {
	out := map[string]float64{}
	for _, t := range titles {
		out[t.ID] = t.Notability
	}
	return out
}

// rankedIDs returns the ids from the most notable to the least, ties by id.
func rankedIDs(titles []memento.Title) []string {
	c := slices.Clone(titles)
	slices.SortStableFunc(c, func(a, b memento.Title) int {
		if a.Notability != b.Notability {
			if a.Notability > b.Notability {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	var ids []string
	for _, t := range c {
		ids = append(ids, t.ID)
	}
	return ids
}

func TestComputeNotability(t *testing.T) {
	titles := []memento.Title{
		// A well-documented film with a known cast, a sequel and a poster.
		{ID: "star", Title: "Big Film", Year: 2000, Genres: []string{"Action", "Drama"},
			Cast:     []string{"Ann Lee", "Bob Stone", "Cara Díaz", "Dan Ford"},
			Overview: strings.Repeat("A long plot. ", 20), Href: "https://example.org/big"},
		{ID: "sequel", Title: "Big Film 2", Year: 2003, Genres: []string{"Action"},
			Cast: []string{"Ann Lee", "Bob Stone"}, Overview: strings.Repeat("Plot. ", 10), Href: "https://example.org/big2"},
		{ID: "other", Title: "Another", Year: 1999, Genres: []string{"Drama"},
			Cast: []string{"Cara Díaz", "Dan Ford"}, Overview: "A plot of middling length here.", Href: "https://example.org/a"},
		// Nothing known about it.
		{ID: "obscure", Title: "Lost Reel", Year: 1921, Genres: []string{}, Cast: []string{"Nobody Else"}},
	}
	signals := []TitleSignals{{TextChars: 3000, Image: true}, {Image: true}, {}, {}}
	ComputeNotability(titles, signals)
	if diff := cmp.Diff([]string{"star", "sequel", "other", "obscure"}, rankedIDs(titles)); diff != "" {
		t.Errorf("order by notability mismatch (-want +got):\n%s", diff)
	}
	for _, tt := range titles {
		if tt.Notability <= 0 || tt.Notability > 1 {
			t.Errorf("%s: notability %v is not in (0, 1]", tt.ID, tt.Notability)
		}
	}

	// The result depends on the titles, not on their order.
	want := notabilityOf(titles)
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 5; i++ {
		perm := r.Perm(len(titles))
		shuffled := make([]memento.Title, len(titles))
		sig := make([]TitleSignals, len(titles))
		for j, p := range perm {
			shuffled[j], sig[j] = titles[p], signals[p]
			shuffled[j].Notability = 0
		}
		ComputeNotability(shuffled, sig)
		if diff := cmp.Diff(want, notabilityOf(shuffled)); diff != "" {
			t.Fatalf("notability depends on the order of titles (-want +got):\n%s", diff)
		}
	}
}

func TestNotabilityFromCounts(t *testing.T) {
	titles := []memento.Title{
		{ID: "few", Title: "Few Votes", Overview: strings.Repeat("Long plot. ", 30), Cast: []string{"A B", "C D"}},
		{ID: "many", Title: "Many Votes"},
		{ID: "none-rich", Title: "No Votes, Long Plot", Overview: strings.Repeat("Long plot. ", 30)},
		{ID: "none", Title: "No Votes"},
		{ID: "mid", Title: "Some Votes"},
	}
	NotabilityFromCounts(titles, map[string]int{"few": 10, "many": 100000, "mid": 500, "unknown": 7})
	// Counted titles by count; the uncounted below them, by the field prior.
	if diff := cmp.Diff([]string{"many", "mid", "few", "none-rich", "none"}, rankedIDs(titles)); diff != "" {
		t.Errorf("order mismatch (-want +got):\n%s", diff)
	}
	if got := titles[1].Notability; got != 1 {
		t.Errorf("most voted title has notability %v, want 1", got)
	}
}

// writeFiles writes the named files into a new temporary folder.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestReadFileNotability(t *testing.T) {
	basics, err := os.ReadFile(filepath.Join("testdata", "title.basics.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	movies, err := os.ReadFile(filepath.Join("testdata", "movies.csv"))
	if err != nil {
		t.Fatal(err)
	}
	imdbRatings := "tconst\taverageRating\tnumVotes\n" +
		"tt0111161\t9.3\t2900000\n" + "tt0903747\t9.5\t2100000\n" + "tt0133093\t8.7\t2000000\n" +
		"tt0000001\t5.7\t2100\n" + "broken row\n" + "tt9999999\t7.0\t12\n"
	// Blade Runner (4) is rated three times, Toy Story (1) twice, Seven (10) once.
	mlRatings := "userId,movieId,rating,timestamp\n" +
		"1,4,4.0,1\n2,4,5.0,1\n3,4,3.5,1\n1,1,4.0,1\n2,1,3.0,1\n1,10,5.0,1\nnot,a,row\n"

	t.Run("imdb with title.ratings.tsv beside", func(t *testing.T) {
		dir := writeFiles(t, map[string]string{"title.basics.tsv": string(basics), IMDbRatingsFile: imdbRatings})
		titles, report, err := ReadFile(filepath.Join(dir, "title.basics.tsv"), FormatIMDb)
		if err != nil {
			t.Fatal(err)
		}
		got := rankedIDs(titles)[:4]
		want := []string{"imdb:tt0111161", "imdb:tt0903747", "imdb:tt0133093", "imdb:tt0000001"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("most notable mismatch (-want +got):\n%s", diff)
		}
		if report.Notability != NotabilityCounts || report.RatingsFile != filepath.Join(dir, IMDbRatingsFile) {
			t.Errorf("report notability, ratings file = %q, %q", report.Notability, report.RatingsFile)
		}
	})
	t.Run("imdb with a named ratings file", func(t *testing.T) {
		dir := writeFiles(t, map[string]string{"basics.tsv": string(basics), "votes.tsv": imdbRatings})
		titles, report, err := ReadFileRatings(filepath.Join(dir, "basics.tsv"), FormatIMDb, filepath.Join(dir, "votes.tsv"))
		if err != nil {
			t.Fatal(err)
		}
		if got := rankedIDs(titles)[0]; got != "imdb:tt0111161" || report.Notability != NotabilityCounts {
			t.Errorf("most notable = %s (%s), want imdb:tt0111161 from counts", got, report.Notability)
		}
	})
	t.Run("imdb without ratings", func(t *testing.T) {
		titles, report, err := ReadFile(filepath.Join("testdata", "title.basics.tsv"), FormatIMDb)
		if err != nil {
			t.Fatal(err)
		}
		if report.Notability != NotabilityFields || report.RatingsFile != "" {
			t.Errorf("report notability, ratings file = %q, %q, want fields", report.Notability, report.RatingsFile)
		}
		for _, tt := range titles {
			if tt.Notability <= 0 || tt.Notability > 1 {
				t.Errorf("%s: notability %v is not in (0, 1]", tt.ID, tt.Notability)
			}
		}
	})
	t.Run("movielens with ratings.csv beside", func(t *testing.T) {
		dir := writeFiles(t, map[string]string{"movies.csv": string(movies), MovieLensRatingsFile: mlRatings})
		titles, report, err := ReadFile(filepath.Join(dir, "movies.csv"), FormatMovieLens)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"ml:4", "ml:1", "ml:10"}, rankedIDs(titles)[:3]); diff != "" {
			t.Errorf("most notable mismatch (-want +got):\n%s", diff)
		}
		if report.Notability != NotabilityCounts {
			t.Errorf("report notability = %q, want counts", report.Notability)
		}
	})
	t.Run("missing named ratings file", func(t *testing.T) {
		_, _, err := ReadFileRatings(filepath.Join("testdata", "movies.csv"), FormatMovieLens, filepath.Join(t.TempDir(), "nope.csv"))
		if got := memento.ErrorCode(err); got != memento.ENOTFOUND {
			t.Errorf("code = %q (%v), want ENOTFOUND", got, err)
		}
	})
	t.Run("ratings for jsonl", func(t *testing.T) {
		dir := writeFiles(t, map[string]string{"r.csv": mlRatings})
		_, _, err := ReadFileRatings(filepath.Join("testdata", "titles.jsonl"), FormatJSONL, filepath.Join(dir, "r.csv"))
		if got := memento.ErrorCode(err); got != memento.EINVALID {
			t.Errorf("code = %q (%v), want EINVALID", got, err)
		}
	})
	t.Run("jsonl keeps its notability", func(t *testing.T) {
		dir := writeFiles(t, map[string]string{"t.jsonl": `{"id":"a","title":"A","notability":0.25}` + "\n" +
			`{"id":"b","title":"B","notability":0.9}` + "\n" + `{"id":"c","title":"C"}` + "\n"})
		titles, report, err := ReadFile(filepath.Join(dir, "t.jsonl"), FormatJSONL)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]float64{"a": 0.25, "b": 0.9, "c": 0}, notabilityOf(titles)); diff != "" {
			t.Errorf("notability mismatch (-want +got):\n%s", diff)
		}
		if report.Notability != NotabilityFile {
			t.Errorf("report notability = %q, want file", report.Notability)
		}
	})
	t.Run("jsonl without notability", func(t *testing.T) {
		titles, report, err := ReadFile(filepath.Join("testdata", "titles.jsonl"), FormatJSONL)
		if err != nil {
			t.Fatal(err)
		}
		if report.Notability != NotabilityFields {
			t.Errorf("report notability = %q, want fields", report.Notability)
		}
		// Epsilon has a plot, a cast and a page; Zeta has nothing.
		n := notabilityOf(titles)
		if n["t6"] <= n["t7"] {
			t.Errorf("notability of t6 %v, t7 %v: want t6 above", n["t6"], n["t7"])
		}
	})
}

func TestReadRatings(t *testing.T) {
	counts, report, err := ReadIMDbRatings(strings.NewReader("tconst\taverageRating\tnumVotes\ntt1\t8\t10\ntt2\t7\tx\nbad\n\ntt3\t6\t0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"imdb:tt1": 10, "imdb:tt3": 0}, counts); diff != "" {
		t.Errorf("imdb counts mismatch (-want +got):\n%s", diff)
	}
	if report.Rows != 4 || report.Skipped != 2 {
		t.Errorf("imdb report rows, skipped = %d, %d, want 4, 2", report.Rows, report.Skipped)
	}
	counts, _, err = ReadMovieLensRatings(strings.NewReader("userId,movieId,rating,timestamp\r\n1,5,4,1\r\n2,5,3,1\r\n2,6,3,1\r\n3,x,1,1\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"ml:5": 2, "ml:6": 1}, counts); diff != "" {
		t.Errorf("movielens counts mismatch (-want +got):\n%s", diff)
	}
}

func TestJSONLNotabilityRoundTrip(t *testing.T) {
	titles := []memento.Title{
		{ID: "a", Title: "A", Type: "movie", Year: 2000, Genres: []string{"Drama"}, Cast: []string{"X Y"}, Notability: 0.1234},
		{ID: "b", Title: "B", Type: "movie", Genres: []string{}, Cast: []string{}, Notability: 1},
		{ID: "c", Title: "C", Type: "movie", Genres: []string{}, Cast: []string{}, Notability: 0.0001},
		{ID: "d", Title: "D", Type: "movie", Genres: []string{}, Cast: []string{}},
		{ID: "e", Title: "E", Type: "movie", Genres: []string{}, Cast: []string{}, Notability: 0.30000000000000004},
	}
	var buf bytes.Buffer
	if err := WriteJSONL(&buf, titles); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	if !strings.Contains(lines[0], `"notability":0.1234`) || strings.Contains(lines[3], "notability") {
		t.Errorf("want notability on line 1 and left out of line 4:\n%s", buf.String())
	}
	got, report, err := ReadJSONL(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(titles, got); diff != "" || report.Skipped != 0 {
		t.Errorf("round trip mismatch (-want +got), %d skipped:\n%s", report.Skipped, diff)
	}

	bad := `{"id":"x1","title":"X","notability":2}` + "\n" + `{"id":"x2","title":"X","notability":-0.5}` + "\n" +
		`{"id":"x3","title":"X","notability":"high"}` + "\n" + `{"id":"x4","title":"X","notability":1e-3}` + "\n"
	got, report, err = ReadJSONL(strings.NewReader(bad))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != "x4" || got[0].Notability != 0.001 {
		t.Errorf("got %+v, want only x4 with notability 0.001", got)
	}
	if report.Reasons[ReasonNotability] != 3 {
		t.Errorf("reasons = %v, want 3 %q", report.Reasons, ReasonNotability)
	}
}

func TestMentionCounts(t *testing.T) {
	titles := []memento.Title{
		{ID: "psycho60", Title: "Psycho", Year: 1960},
		{ID: "psycho98", Title: "Psycho", Year: 1998},
		{ID: "september", Title: "September", Year: 1987},
		{ID: "ben", Title: "Ben", Year: 1972},
		{ID: "jaws", Title: "Jaws", Year: 1975},
		{ID: "star", Title: "Star Wars: Episode IV", Year: 1977},
	}
	tests := []struct {
		name string
		text string
		want map[string]float64
	}{
		{"year before picks the film", "It is a remake of the 1960 film Psycho by Hitchcock.", map[string]float64{"psycho60": 1}},
		{"year in brackets after", "It remade Psycho (1998) shot for shot.", map[string]float64{"psycho98": 1}},
		{"possessive year", "It borrows from 1975's Jaws and more.", map[string]float64{"jaws": 1}},
		{"a year off by one still counts", "the 1976 film Jaws was a hit", map[string]float64{"jaws": 1}},
		{"no year, no mention", "Filming began in September and ended soon.", map[string]float64{}},
		{"a year for no film of that title", "the 1990 film Jaws", map[string]float64{}},
		{"inside a longer name", "the 1972 film Ben Stiller made", map[string]float64{}},
		{"after a word with a capital", "the 1975 film Spielberg Jaws", map[string]float64{}},
		{"once per text", "the 1975 film Jaws, and again the 1975 film Jaws.", map[string]float64{"jaws": 1}},
		{"titles with colons", "a parody of the 1977 film Star Wars: Episode IV and more", map[string]float64{"star": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			texts := make([]string, len(titles)+1)
			texts[len(titles)] = tt.text
			all := append(slices.Clone(titles), memento.Title{ID: "citing", Title: "Citing Film", Year: 2000})
			got := map[string]float64{}
			for i, v := range mentionCounts(all, texts) {
				if v != 0 {
					got[all[i].ID] = v
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("mentionCounts(%q) mismatch (-want +got):\n%s", tt.text, diff)
			}
		})
	}
	// A film's own text does not mention it.
	self := []string{"Jaws is a 1975 film. It was a sequel to the 1975 film Jaws."}
	if got := mentionCounts(titles[4:5], self); got[0] != 0 {
		t.Errorf("a film's own text counts %v mentions of it, want 0", got[0])
	}
}

func TestSignalShapesRise(t *testing.T) {
	// Every default weight is non-negative, the release year's too, so more
	// of a signal never lowers a title, in a catalog of any size.
	w := DefaultNotabilityWeights()
	for f, sw := range w.vector() {
		for _, n := range []int{4, 100, 36000} {
			prev := math.Inf(-1)
			for r := 1 / float64(n); r <= 1; r += 1 / float64(n) {
				v := sw.apply(shapes(r, n))
				if v < prev-1e-12 {
					t.Fatalf("signal %d falls from %v to %v at rank %v of %d titles", f, prev, v, r, n)
				}
				prev = v
			}
		}
	}
}

func TestCastRank(t *testing.T) {
	// Ann leads three films, two of them well documented; Bob leads as
	// many films, all of them obscure. Ann's third film and Bob's third
	// film are alike on their own, so only what the propagation passes
	// along tells them apart.
	billed := [][]string{
		{"ann"}, {"ann"}, {"ann", "cid"}, // 0, 1: notable; 2: Ann's third
		{"bob"}, {"bob"}, {"bob", "dee"}, // 3, 4: obscure; 5: Bob's third
		{"cid"}, {"dee"}, // 6: with Ann's co-lead; 7: with Bob's
		{}, // 8: no cast
	}
	base := []float64{1, 0.95, 0.3, 0.1, 0.1, 0.3, 0.2, 0.2, 0.2}
	for _, rounds := range []int{1, 2, 3} {
		got := castRank(billed, base, rounds)
		if got[2] <= got[5] {
			t.Errorf("rounds %d: Ann's third film scores %v, Bob's %v; want Ann's higher", rounds, got[2], got[5])
		}
		if got[8] != 0 {
			t.Errorf("rounds %d: a film without cast scores %v, want 0", rounds, got[8])
		}
	}
	// From the second round on, fame passes two steps: Cid's other film
	// (6) gains from Ann's fame through film 2, which Dee's (7) does not.
	got := castRank(billed, base, 1)
	if got[6] != got[7] {
		t.Errorf("after one round films 6 and 7 score %v and %v, want equal", got[6], got[7])
	}
	got = castRank(billed, base, 3)
	if got[6] <= got[7] {
		t.Errorf("after three rounds film 6 scores %v, film 7 %v; want film 6 higher", got[6], got[7])
	}
}
