package catalog

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

// BenchmarkEmbedded measures loading the default catalog from scratch:
// decompress, parse and index (Embedded caches this after the first call).
func BenchmarkEmbedded(b *testing.B) {
	start := cpuTime()
	for b.Loop() {
		x, err := loadEmbedded()
		if err != nil {
			b.Fatal(err)
		}
		if x.Len() < 30000 {
			b.Fatalf("Len() = %d", x.Len())
		}
	}
	reportCPU(b, start)
}

// reportCPU reports the process CPU time per operation since start, which
// counts the work of every core (and the garbage collector's) whatever the
// machine's load.
func reportCPU(b *testing.B, start time.Duration) {
	b.Helper()
	if used := cpuTime() - start; used > 0 {
		b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkEmbeddedParse measures only decompressing and parsing the
// embedded file, as Embedded does it (on every core).
func BenchmarkEmbeddedParse(b *testing.B) {
	start := cpuTime()
	for b.Loop() {
		if _, err := EmbeddedTitles(); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
}

// BenchmarkReadJSONL measures the streaming JSON-lines reader that imports
// use, on the embedded file.
func BenchmarkReadJSONL(b *testing.B) {
	for b.Loop() {
		if _, _, err := ReadJSONL(bytes.NewReader(embeddedData)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNew measures only building the index of the embedded titles.
func BenchmarkNew(b *testing.B) {
	titles, err := EmbeddedTitles()
	if err != nil {
		b.Fatal(err)
	}
	start := cpuTime()
	for b.Loop() {
		New(titles)
	}
	reportCPU(b, start)
}

func benchIndex(b *testing.B) *Index {
	b.Helper()
	x, err := Embedded()
	if err != nil {
		b.Fatal(err)
	}
	return x
}

// benchSearch runs the queries round robin and reports, besides ns/op, the
// median and 99th percentile latency of one search.
func benchSearch(b *testing.B, x *Index, queries []memento.TitleQuery) {
	b.Helper()
	ctx := context.Background()
	durations := make([]time.Duration, 0, 1<<16)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		start := time.Now()
		page, err := x.Search(ctx, queries[i%len(queries)])
		if len(durations) < cap(durations) {
			durations = append(durations, time.Since(start))
		}
		if err != nil {
			b.Fatal(err)
		}
		if page.Total == 0 {
			b.Fatalf("query %+v matched nothing", queries[i%len(queries)])
		}
		i++
	}
	slices.Sort(durations)
	pct := func(p float64) float64 {
		return float64(durations[int(p*float64(len(durations)-1))].Nanoseconds())
	}
	b.ReportMetric(pct(0.50), "p50-ns")
	b.ReportMetric(pct(0.99), "p99-ns")
}

var benchGenres = []string{"Drama", "Comedy", "Western", "Horror", "Science Fiction", "Romance", "Crime", "Action"}

func BenchmarkSearchGenreYear(b *testing.B) {
	x := benchIndex(b)
	var qs []memento.TitleQuery
	for i, g := range benchGenres {
		from := 1930 + 10*i
		qs = append(qs, memento.TitleQuery{Genres: []string{g}, MinYear: from, MaxYear: from + 20, Page: 1})
	}
	benchSearch(b, x, qs)
}

// BenchmarkSearchGenreYearByYear is BenchmarkSearchGenreYear in the order
// of earlier versions (memento.SortYear), which needs no heap.
func BenchmarkSearchGenreYearByYear(b *testing.B) {
	x := benchIndex(b)
	var qs []memento.TitleQuery
	for i, g := range benchGenres {
		from := 1930 + 10*i
		qs = append(qs, memento.TitleQuery{Genres: []string{g}, MinYear: from, MaxYear: from + 20, Sort: memento.SortYear, Page: 1})
	}
	benchSearch(b, x, qs)
}

// BenchmarkSearchAll is a search without any constraint, the agent's
// "recommend 10 movies": the whole catalog through the bounded heap.
func BenchmarkSearchAll(b *testing.B) {
	x := benchIndex(b)
	benchSearch(b, x, []memento.TitleQuery{{Page: 1, Size: 10}, {Page: 3, Size: 10}})
}

// BenchmarkSearchAllByYear is BenchmarkSearchAll in the order of earlier
// versions.
func BenchmarkSearchAllByYear(b *testing.B) {
	x := benchIndex(b)
	benchSearch(b, x, []memento.TitleQuery{{Page: 1, Size: 10, Sort: memento.SortYear}, {Page: 3, Size: 10, Sort: memento.SortYear}})
}

// BenchmarkSearchTitle is a search for a title by its name, as a user
// types it.
func BenchmarkSearchTitle(b *testing.B) {
	x := benchIndex(b)
	var qs []memento.TitleQuery
	for _, t := range []string{"Heat", "Arrival", "the matrix", "Heat 1995", "Blade Runner 2049"} {
		qs = append(qs, memento.TitleQuery{Text: t, Page: 1})
	}
	benchSearch(b, x, qs)
}

func BenchmarkSearchGenreYearExclude(b *testing.B) {
	x := benchIndex(b)
	var qs []memento.TitleQuery
	for i, g := range benchGenres {
		from := 1930 + 10*i
		q := memento.TitleQuery{Genres: []string{g, "Thriller"}, MinYear: from, MaxYear: from + 20, Page: 1, Size: 12}
		// Exclude the first five pages, as the agent does after "not those".
		q.Exclude = benchTopIDs(b, x, memento.TitleQuery{Genres: q.Genres, MinYear: q.MinYear, MaxYear: q.MaxYear, Page: 1, Size: 60})
		qs = append(qs, q)
	}
	benchSearch(b, x, qs)
}

func BenchmarkSearchPerson(b *testing.B) {
	x := benchIndex(b)
	var qs []memento.TitleQuery
	for _, p := range []string{"John Wayne", "tom hanks", "Meryl Streep", "robert downey jr"} {
		qs = append(qs, memento.TitleQuery{People: []string{p}, Page: 1})
	}
	benchSearch(b, x, qs)
}

func BenchmarkSearchText(b *testing.B) {
	x := benchIndex(b)
	var qs []memento.TitleQuery
	for _, t := range []string{"heist", "space alien invasion", "american film about a boxer", "haunted house ghost", "love story in paris"} {
		qs = append(qs, memento.TitleQuery{Text: t, Page: 1})
	}
	benchSearch(b, x, qs)
}

func BenchmarkSearchTextFiltered(b *testing.B) {
	x := benchIndex(b)
	var qs []memento.TitleQuery
	for i, t := range []string{"heist", "space alien invasion", "murder detective", "haunted house ghost", "love story"} {
		q := memento.TitleQuery{Text: t, MinYear: 1960, Genres: []string{benchGenres[i]}, Page: 2}
		q.Exclude = benchTopIDs(b, x, memento.TitleQuery{Text: t, Page: 1, Size: 60})
		qs = append(qs, q)
	}
	benchSearch(b, x, qs)
}

func benchTopIDs(b *testing.B, x *Index, q memento.TitleQuery) []string {
	b.Helper()
	page, err := x.Search(context.Background(), q)
	if err != nil {
		b.Fatal(err)
	}
	var ids []string
	for _, t := range page.Titles {
		ids = append(ids, t.ID)
	}
	if len(ids) == 0 {
		b.Fatal(fmt.Sprintf("no titles for %+v", q))
	}
	return ids
}

// BenchmarkCandidates is a turn's candidate pool: the constraint pool of
// a broad request and of a genre, and a draw by a liked topic, each of
// hundreds of titles at once.
func BenchmarkCandidates(b *testing.B) {
	x := benchIndex(b)
	ctx := context.Background()
	queries := []struct {
		q memento.TitleQuery
		n int
	}{
		{memento.TitleQuery{}, 300},
		{memento.TitleQuery{Genres: []string{"Drama"}}, 300},
		{memento.TitleQuery{Text: "heist"}, 160},
	}
	start := cpuTime()
	i := 0
	for b.Loop() {
		c := queries[i%len(queries)]
		if got, err := x.Candidates(ctx, c.q, c.n); err != nil || len(got) == 0 {
			b.Fatalf("Candidates(%+v): %d titles, %v", c.q, len(got), err)
		}
		i++
	}
	reportCPU(b, start)
}
