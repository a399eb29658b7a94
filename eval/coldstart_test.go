package eval

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/catalog"
)

func TestNormalizeTitle(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"Matrix, The", "The Matrix"},
		{"Star Is Born, A", "A Star Is Born"},
		{"Dolce Vita, La", "Dolce Vita"},
		{"S.W.A.T.", "SWAT"},
		{"She's Out of My League", "Shes Out of My League"},
		{"Amélie", "Amelie"},
		{"Fast & Furious", "Fast and Furious"},
		{"Spider-Man: Homecoming", "Spider Man Homecoming"},
		{"  Heat ", "heat"},
	} {
		if got, want := NormalizeTitle(tc.a), NormalizeTitle(tc.b); got != want || got == "" {
			t.Errorf("NormalizeTitle(%q) = %q, NormalizeTitle(%q) = %q; want equal", tc.a, got, tc.b, want)
		}
	}
	for _, tc := range []struct{ a, b string }{
		{"Heat", "Heath"},
		{"Up", "Us"},
		{"Alien", "Aliens"},
	} {
		if NormalizeTitle(tc.a) == NormalizeTitle(tc.b) {
			t.Errorf("NormalizeTitle(%q) = NormalizeTitle(%q), want different", tc.a, tc.b)
		}
	}
	// A lone article is a title.
	if got := NormalizeTitle("The"); got != "the" {
		t.Errorf(`NormalizeTitle("The") = %q, want "the"`, got)
	}
}

func TestMovieLensNames(t *testing.T) {
	for _, tc := range []struct {
		in          string
		names, shrt []string
		year        int
	}{
		{"Matrix, The (1999)", []string{"matrix"}, nil, 1999},
		{"City of Lost Children, The (Cité des enfants perdus, La) (1995)", []string{"city of lost children", "cite des enfants perdus"}, nil, 1995},
		{"Seven (a.k.a. Se7en) (1995)", []string{"seven", "se7en"}, nil, 1995},
		{"Star Wars: Episode IV - A New Hope (1977)", []string{"star wars episode iv a new hope"}, []string{"star wars episode iv", "star wars"}, 1977},
		{"Avengers: Infinity War - Part I (2018)", []string{"avengers infinity war part i"}, []string{"avengers infinity war", "avengers"}, 2018},
		{"Cosmos (1980-1981)", []string{"cosmos"}, nil, 1980},
		{"Babylon 5", nil, nil, 0},
	} {
		names, short, year := movieLensNames(tc.in)
		if diff := cmp.Diff(tc.names, names); diff != "" || year != tc.year || !cmp.Equal(tc.shrt, short) {
			t.Errorf("movieLensNames(%q) = %q, %q, %d; want %q, %q, %d", tc.in, names, short, year, tc.names, tc.shrt, tc.year)
		}
	}
}

const tinyMovies = `movieId,title,genres
1,"Matrix, The (1999)",Action|Sci-Fi
2,Heat (1995),Crime
3,Star Wars: Episode IV - A New Hope (1977),Sci-Fi
4,Star Wars (1977),Documentary
5,Seven (a.k.a. Se7en) (1995),Thriller
6,No Ratings (2001),Drama
`

func tinyPopularity(t *testing.T) *Popularity {
	t.Helper()
	p, err := readMovies(strings.NewReader(tinyMovies), "movies.csv", map[string]int{"1": 300, "2": 40, "3": 250, "4": 2, "5": 19})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPopularityRatings(t *testing.T) {
	p := tinyPopularity(t)
	for _, tc := range []struct {
		title string
		year  int
		want  int
	}{
		{"The Matrix", 1999, 300},
		{"Matrix", 2000, 300},           // a year either side
		{"The Matrix", 2001, 0},         // but no further
		{"Heat", 1995, 40},              // exact
		{"Heat", 1986, 0},               // another film of the name
		{"Star Wars", 1977, 2},          // a full title beats a short form
		{"Se7en", 1995, 19},             // the a.k.a. form
		{"Seven", 1995, 19},             // and the main one
		{"No Ratings", 2001, 0},         // in movies.csv, never rated
		{"A Film Nobody Made", 1999, 0}, // unmatched
		{"Star Wars Episode IV A New Hope", 1977, 250},
	} {
		if got := p.Ratings(tc.title, tc.year); got != tc.want {
			t.Errorf("Ratings(%q, %d) = %d, want %d", tc.title, tc.year, got, tc.want)
		}
	}
}

// coldAgent answers each request with the titles and context given.
type coldAgent map[string]*agent.Response

func (c coldAgent) Turn(_ context.Context, _ string, req agent.Request) (*agent.Response, error) {
	if r, ok := c[req.Message]; ok {
		return r, nil
	}
	return &agent.Response{ActiveContext: memento.NewActiveContext()}, nil
}

func shows(genres []string, ts ...memento.Title) *agent.Response {
	r := &agent.Response{ActiveContext: memento.NewActiveContext()}
	r.ActiveContext.Genres = genres
	for _, t := range ts {
		r.Titles = append(r.Titles, agent.TitleResult{ID: t.ID, Title: t.Title, Year: t.Year})
	}
	return r
}

func TestColdstart(t *testing.T) {
	movie := func(id, title string, year int, notability float64, genre string) memento.Title {
		return memento.Title{ID: id, Title: title, Type: memento.TypeMovie, Year: year, Genres: []string{genre}, Notability: notability}
	}
	a := movie("a", "Obscure", 2020, 0.1, "Crime")        // no ratings
	b := movie("b", "Famous", 2019, 0.9, "Crime")         // 99 ratings
	c := movie("c", "Half Known", 2018, 0.5, "Crime")     // 19 ratings: not known
	d := movie("d", "Just Known", 2010, 0.8, "Crime")     // 20 ratings: known
	e := movie("e", "The Big Laugh", 2021, 0.2, "Comedy") // 999 ratings
	idx := catalog.New([]memento.Title{a, b, c, d, e})
	pop, err := readMovies(strings.NewReader(`movieId,title,genres
1,Famous (2019),Crime
2,Half Known (2018),Crime
3,Just Known (2011),Crime
4,"Big Laugh, The (2021)",Comedy
`), "movies.csv", map[string]int{"1": 99, "2": 19, "3": 20, "4": 999})
	if err != nil {
		t.Fatal(err)
	}
	ag := coldAgent{
		"crime films": shows([]string{"Crime"}, c, a),
		"a comedy":    shows([]string{"Comedy"}), // nothing shown: judged on K titles, scores 0
	}
	var progress strings.Builder
	got, err := Coldstart(context.Background(), ag, ColdstartOptions{Requests: []string{"crime films", "a comedy"}, K: 3,
		Catalog: idx, Popularity: pop, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	g := func(n int) float64 { return math.Log1p(float64(n)) }
	// "crime films" is judged on the 2 titles shown; the oracle's best two
	// are b and d. "a comedy" is judged on 3, and only e matches.
	oracle1, oracle2 := (g(99)+g(20))/2, g(999)
	want := &ColdstartResult{Requests: 2,
		ColdstartFigures: figures((g(19)+0)/2/2, 0, (g(19)+0)/2/(oracle1+oracle2)),
		Baselines: map[string]ColdstartFigures{
			// Year order: a (2020), b (2019); then e.
			BaselineCatalogOrder: figures((g(99)/2+g(999))/2, 2.0/3, (g(99)/2+g(999))/(oracle1+oracle2)),
			// Notability order: b, d; then e.
			BaselinePrior: figures((oracle1+oracle2)/2, 1, 1),
		}}
	if diff := cmp.Diff(want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".PerRequest" }, cmp.Ignore())); diff != "" {
		t.Errorf("Coldstart (-want +got):\n%s", diff)
	}
	if len(got.PerRequest) != 2 || got.PerRequest[0].Judged != 2 || got.PerRequest[1].Judged != 3 || got.PerRequest[0].Matches != 4 {
		t.Errorf("PerRequest = %+v", got.PerRequest)
	}
	if n := strings.Count(progress.String(), "\n"); n != 2 {
		t.Errorf("progress has %d lines, want 2:\n%s", n, progress.String())
	}
}

func figures(mean, known, ratio float64) ColdstartFigures {
	return ColdstartFigures{MeanGain: round3(mean), Known: round3(known), OracleRatio: round3(ratio)}
}

func TestColdstartErrors(t *testing.T) {
	pop := tinyPopularity(t)
	idx := catalog.New(nil)
	for _, tc := range []struct {
		name string
		o    ColdstartOptions
	}{
		{"no requests", ColdstartOptions{Catalog: idx, Popularity: pop}},
		{"no ratings", ColdstartOptions{Requests: []string{"x"}, Catalog: idx}},
		{"k too large", ColdstartOptions{Requests: []string{"x"}, Catalog: idx, Popularity: pop, K: 1000}},
	} {
		if _, err := Coldstart(context.Background(), coldAgent{}, tc.o); memento.ErrorCode(err) != memento.EINVALID {
			t.Errorf("%s: error = %v, want EINVALID", tc.name, err)
		}
	}
	if _, err := ReadPopularity(t.TempDir()); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("ReadPopularity(empty dir) error = %v, want EINVALID", err)
	}
	if _, err := ReadRequests(strings.NewReader("# only a comment\n\n")); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("ReadRequests(no requests) error = %v, want EINVALID", err)
	}
}

func TestReadRequests(t *testing.T) {
	got, err := ReadRequests(strings.NewReader("# dev set\nRecommend 10 movies\n\n  10 westerns  \n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Recommend 10 movies", "10 westerns"}, got); diff != "" {
		t.Errorf("ReadRequests (-want +got):\n%s", diff)
	}
}

// TestPopularityMovieLensSmall reads the shared MovieLens files when they
// are there: films written the MovieLens way are found under their usual
// names.
func TestPopularityMovieLensSmall(t *testing.T) {
	dir := "../../shared/data/movielens"
	if _, err := os.Stat(dir); err != nil {
		t.Skip("no shared MovieLens data")
	}
	p, err := ReadPopularity(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		title string
		year  int
	}{{"The Matrix", 1999}, {"Se7en", 1995}, {"The Shawshank Redemption", 1994}, {"Amélie", 2001}} {
		if n := p.Ratings(tc.title, tc.year); n < KnownRatings {
			t.Errorf("Ratings(%q, %d) = %d, want a known film", tc.title, tc.year, n)
		}
	}
}

// TestRequestFiles checks the shipped request files: enough requests, and
// the held-out file shares none with the development file.
func TestRequestFiles(t *testing.T) {
	read := func(name string) []string {
		f, err := os.Open(filepath.Join("requests", name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r, err := ReadRequests(f)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	dev, test := read("coldstart-dev.txt"), read("coldstart-test.txt")
	if len(dev) < 30 || len(test) < 15 {
		t.Errorf("%d development and %d held-out requests, want at least 30 and 15", len(dev), len(test))
	}
	for _, r := range test {
		if slices.ContainsFunc(dev, func(d string) bool { return strings.EqualFold(d, r) }) {
			t.Errorf("held-out request %q is also a development request", r)
		}
	}
}
