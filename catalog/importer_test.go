package catalog

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/memento-ai/memento"
)

// gzipFile writes a gzipped copy of a testdata file to a temporary folder
// under a name without .gz, to show that gzip is detected by content.
func gzipFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// ignoreNotability leaves Notability out of a comparison of titles, for
// tests of the other fields; notability has tests of its own.
func ignoreNotability() cmp.Option {
	return cmpopts.IgnoreFields(memento.Title{}, "Notability")
}

// checkReport compares the counts of a report and the line and reason of
// each skipped row.
func checkReport(t *testing.T, got ImportReport, rows, imported int, skipped []RowError) {
	t.Helper()
	if got.Rows != rows || got.Imported != imported || got.Skipped != len(skipped) {
		t.Errorf("report rows/imported/skipped = %d/%d/%d, want %d/%d/%d",
			got.Rows, got.Imported, got.Skipped, rows, imported, len(skipped))
	}
	reasons := map[string]int{}
	for _, s := range skipped {
		reasons[s.Reason]++
	}
	if diff := cmp.Diff(reasons, got.Reasons); diff != "" {
		t.Errorf("reasons mismatch (-want +got):\n%s", diff)
	}
	var gotLines []RowError
	for _, e := range got.Errors {
		if e.Detail == "" {
			t.Errorf("line %d (%s) has no detail", e.Line, e.Reason)
		}
		gotLines = append(gotLines, RowError{Line: e.Line, Reason: e.Reason})
	}
	if diff := cmp.Diff(skipped, gotLines); diff != "" {
		t.Errorf("skipped rows mismatch (-want +got):\n%s", diff)
	}
}

func TestReadIMDb(t *testing.T) {
	want := []memento.Title{
		{ID: "imdb:tt0000001", Title: "Carmencita", Type: "short", Year: 1894, RuntimeMinutes: 1,
			Genres: []string{"Documentary", "Short"}, Cast: []string{}},
		{ID: "imdb:tt0111161", Title: "The Shawshank Redemption", Type: "movie", Year: 1994, RuntimeMinutes: 142,
			Genres: []string{"Drama"}, Cast: []string{}},
		{ID: "imdb:tt0903747", Title: "Breaking Bad", Type: "tvSeries", Year: 2008, EndYear: 2013, RuntimeMinutes: 49,
			Genres: []string{"Crime", "Drama", "Thriller"}, Cast: []string{}},
		{ID: "imdb:tt0133093", Title: "The Matrix", Type: "movie", Year: 1999, RuntimeMinutes: 136,
			Genres: []string{"Action", "Science Fiction"}, Cast: []string{}},
		{ID: "imdb:tt1234567", Title: "An Adult Film", Type: "movie", Year: 2001, RuntimeMinutes: 80, IsAdult: true,
			Genres: []string{"Adult"}, Cast: []string{}},
		{ID: "imdb:tt7366338", Title: "Chernobyl", Type: "tvMiniSeries", Year: 2019, EndYear: 2019, RuntimeMinutes: 330,
			Genres: []string{"Drama", "Historical", "Thriller"}, Cast: []string{}},
		{ID: "imdb:tt0000002", Title: `"Quoted" Title`, Type: "movie", Genres: []string{}, Cast: []string{}},
	}
	skipped := []RowError{
		{Line: 5, Reason: ReasonColumns}, {Line: 6, Reason: ReasonYear}, {Line: 8, Reason: ReasonID},
		{Line: 10, Reason: ReasonDup}, {Line: 14, Reason: ReasonRuntime}, {Line: 15, Reason: ReasonAdult},
		{Line: 16, Reason: ReasonColumns},
	}
	for name, path := range map[string]string{"plain": filepath.Join("testdata", "title.basics.tsv"), "gzipped": gzipFile(t, "title.basics.tsv")} {
		t.Run(name, func(t *testing.T) {
			got, report, err := ReadFile(path, FormatIMDb)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, ignoreNotability()); diff != "" {
				t.Errorf("titles mismatch (-want +got):\n%s", diff)
			}
			checkReport(t, report, 14, 7, skipped)
		})
	}
}

func TestReadMovieLens(t *testing.T) {
	want := []memento.Title{
		{ID: "ml:1", Title: "Toy Story", Type: "movie", Year: 1995,
			Genres: []string{"Adventure", "Animated", "Family", "Comedy", "Fantasy"}, Cast: []string{}},
		{ID: "ml:2", Title: "The American President", Type: "movie", Year: 1995,
			Genres: []string{"Comedy", "Drama", "Romance"}, Cast: []string{}},
		{ID: "ml:3", Title: "The City of Lost Children", Type: "movie", Year: 1995,
			Genres: []string{"Adventure", "Drama", "Fantasy", "Mystery", "Science Fiction"}, Cast: []string{}},
		{ID: "ml:4", Title: "Blade Runner", Type: "movie", Year: 1982,
			Genres: []string{"Action", "Science Fiction", "Thriller"}, Cast: []string{}},
		{ID: "ml:7", Title: "Hyena Road", Type: "movie", Genres: []string{}, Cast: []string{}},
		{ID: "ml:8", Title: "Strange Days", Type: "movie", Year: 1995,
			Genres: []string{"Noir", "Science Fiction"}, Cast: []string{}},
		{ID: "ml:9", Title: "Babylon 5", Type: "movie", Year: 1994, Genres: []string{"Science Fiction"}, Cast: []string{}},
		{ID: "ml:10", Title: "Seven", Type: "movie", Year: 1995, Genres: []string{"Mystery", "Thriller"}, Cast: []string{}},
		{ID: "ml:12", Title: "L'Appartement", Type: "movie", Year: 1996,
			Genres: []string{"Drama", "Mystery", "Romance"}, Cast: []string{}},
	}
	skipped := []RowError{
		{Line: 6, Reason: ReasonColumns}, {Line: 7, Reason: ReasonYear}, {Line: 9, Reason: ReasonID},
		{Line: 13, Reason: ReasonDup}, {Line: 15, Reason: ReasonTitle},
	}
	for name, path := range map[string]string{"plain": filepath.Join("testdata", "movies.csv"), "gzipped": gzipFile(t, "movies.csv")} {
		t.Run(name, func(t *testing.T) {
			got, report, err := ReadFile(path, FormatMovieLens)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, ignoreNotability()); diff != "" {
				t.Errorf("titles mismatch (-want +got):\n%s", diff)
			}
			checkReport(t, report, 14, 9, skipped)
		})
	}
}

func TestReadJSONL(t *testing.T) {
	want := []memento.Title{
		{ID: "t1", Title: "Alpha", Type: "movie", Year: 2001, Genres: []string{"Drama"}, Cast: []string{"A Person"}},
		{ID: "t2", Title: "Beta", Type: "tvSeries", Year: 2005, EndYear: 2008, Genres: []string{}, Cast: []string{}},
		{ID: "t6", Title: "Epsilon", Type: "movie", Genres: []string{"Science Fiction", "Comedy"},
			Cast: []string{"B Person"}, Overview: "An overview.", RuntimeMinutes: 95, IsAdult: true,
			Href: "https://example.org/e"},
		{ID: "t7", Title: "Zeta", Type: "movie", Genres: []string{}, Cast: []string{}},
		{ID: "t8", Title: `Eta é"quoted"`, Type: "movie", Genres: []string{}, Cast: []string{}},
	}
	skipped := []RowError{
		{Line: 3, Reason: ReasonJSON}, {Line: 4, Reason: ReasonID}, {Line: 5, Reason: ReasonYear},
		{Line: 6, Reason: ReasonYear}, {Line: 7, Reason: ReasonTitle}, {Line: 8, Reason: ReasonDup},
		{Line: 13, Reason: ReasonRuntime}, {Line: 14, Reason: ReasonJSON}, {Line: 15, Reason: ReasonJSON},
	}
	for name, path := range map[string]string{"plain": filepath.Join("testdata", "titles.jsonl"), "gzipped": gzipFile(t, "titles.jsonl")} {
		t.Run(name, func(t *testing.T) {
			got, report, err := ReadFile(path, FormatJSONL)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, ignoreNotability()); diff != "" {
				t.Errorf("titles mismatch (-want +got):\n%s", diff)
			}
			checkReport(t, report, 14, 5, skipped)
		})
	}
}

func TestImportReportString(t *testing.T) {
	_, report, err := ReadFile(filepath.Join("testdata", "titles.jsonl"), FormatJSONL)
	if err != nil {
		t.Fatal(err)
	}
	want := "jsonl: 14 rows, 5 imported, 9 skipped (bad json: 3, missing id: 1, missing title: 1, bad year: 2, bad runtime: 1, duplicate id: 1)"
	if got := report.String(); got != want {
		t.Errorf("String() = %q\nwant %q", got, want)
	}
}

func TestLoad(t *testing.T) {
	x, report, err := Load(filepath.Join("testdata", "title.basics.tsv"), "IMDb")
	if err != nil {
		t.Fatal(err)
	}
	if x.Len() != report.Imported || x.Len() != 7 {
		t.Errorf("Len() = %d, imported %d, want 7", x.Len(), report.Imported)
	}
	page, err := x.Search(context.Background(), memento.TitleQuery{Type: "tvSeries", Genres: []string{"crime"}, Page: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Titles) != 1 || page.Titles[0].ID != "imdb:tt0903747" {
		t.Errorf("search of the imported catalog = %v, want Breaking Bad", ids(page))
	}
	if _, _, err := Load(filepath.Join("testdata", "nope.csv"), FormatMovieLens); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("Load of a missing file: %v, want ENOTFOUND", err)
	}
}

func TestReadFileErrors(t *testing.T) {
	tests := []struct {
		name, path, format, code, message string
	}{
		{"unknown format", filepath.Join("testdata", "titles.jsonl"), "xml", memento.EINVALID,
			`unknown catalog format "xml": want one of imdb, movielens, jsonl`},
		{"missing file", filepath.Join("testdata", "nope.tsv"), FormatIMDb, memento.ENOTFOUND, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ReadFile(tt.path, tt.format)
			if got := memento.ErrorCode(err); got != tt.code {
				t.Fatalf("code = %q (%v), want %q", got, err, tt.code)
			}
			if tt.message != "" && memento.ErrorMessage(err) != tt.message {
				t.Errorf("message = %q, want %q", memento.ErrorMessage(err), tt.message)
			}
		})
	}
}

func TestReadLongLine(t *testing.T) {
	in := `{"id":"a","title":"A"}` + "\n" + `{"id":"b","title":"` + strings.Repeat("x", MaxLineBytes) + `"}` + "\n" + `{"id":"c","title":"C"}`
	got, report, err := ReadJSONL(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "a" || got[1].ID != "c" {
		t.Errorf("titles = %v, want a and c", got)
	}
	checkReport(t, report, 3, 2, []RowError{{Line: 2, Reason: ReasonLong}})
}

func TestReadCorruptGzip(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write([]byte(strings.Repeat(`{"id":"a","title":"A"}`+"\n", 1000))); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	whole := buf.Bytes()
	for name, data := range map[string][]byte{
		"damaged header": {0x1f, 0x8b, 0, 0},
		"truncated":      whole[:len(whole)/2],
		"bad checksum":   append(slices.Clone(whole[:len(whole)-8]), 0, 0, 0, 0, 0, 0, 0, 0),
	} {
		t.Run(name, func(t *testing.T) {
			for format, read := range readers {
				_, _, err := read(bytes.NewReader(data))
				if code := memento.ErrorCode(err); code != memento.EINVALID {
					t.Errorf("%s: code = %q (%v), want EINVALID", format, code, err)
				}
			}
		})
	}
}

func TestWriteJSONLRoundTrip(t *testing.T) {
	titles := []memento.Title{
		{ID: "wiki:X_(1999_film)", Title: "X & <Y>", Type: "movie", Year: 1999, Genres: []string{"Drama"},
			Cast: []string{"Ann Lee"}, Overview: "Plot \"quoted\".", RuntimeMinutes: 90, Href: WikipediaURL + "X"},
		{ID: "imdb:tt1", Title: "Series", Type: "tvSeries", Year: 2001, EndYear: 2004, IsAdult: true,
			Genres: []string{}, Cast: []string{}},
	}
	var buf bytes.Buffer
	if err := WriteJSONL(&buf, titles); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), `\u0026`) {
		t.Errorf("WriteJSONL escaped HTML characters: %s", buf.String())
	}
	if n := strings.Count(buf.String(), "\n"); n != len(titles) {
		t.Errorf("WriteJSONL wrote %d lines, want %d", n, len(titles))
	}
	got, report, err := ReadJSONL(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if report.Skipped != 0 {
		t.Errorf("round trip skipped rows: %v", report)
	}
	if diff := cmp.Diff(titles, got); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
}
