package catalog

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/memento-ai/memento"
)

// imdbColumns are the columns of IMDb's title.basics.tsv, in order.
var imdbColumns = []string{"tconst", "titleType", "primaryTitle", "originalTitle",
	"isAdult", "startYear", "endYear", "runtimeMinutes", "genres"}

// ReadIMDb reads IMDb's title.basics.tsv (https://developer.imdb.com/non-commercial-datasets/),
// plain or gzipped (recognised by its magic bytes). Each row becomes a title
// with id "imdb:" + tconst, the primary title, IMDb's titleType as it is
// (movie, tvSeries, tvMiniSeries, short, ...), start and end years, runtime,
// the adult flag and the genres mapped to the catalog vocabulary. `\N` is
// IMDb's null. The header line is optional. Rows with the wrong number of
// columns, a malformed id, year, runtime or adult flag, or a repeated id are
// skipped and counted in the report; only a read error fails the import.
func ReadIMDb(r io.Reader) ([]memento.Title, ImportReport, error) {
	fields := make([]string, 0, len(imdbColumns)+1)
	return readLines(r, FormatIMDb, []byte("tconst\t"), func(text []byte) (memento.Title, string, string) {
		if !utf8.Valid(text) {
			return memento.Title{}, ReasonEncoding, "line is not valid UTF-8"
		}
		fields = splitTabs(fields[:0], string(text))
		if len(fields) != len(imdbColumns) {
			return memento.Title{}, ReasonColumns, fmt.Sprintf("got %d columns, want %d", len(fields), len(imdbColumns))
		}
		return imdbTitle(fields)
	})
}

// splitTabs splits s at tabs into dst. IMDb's TSV does not quote fields, so
// a plain split is the right parse (a CSV reader would choke on the stray
// quotes in titles).
func splitTabs(dst []string, s string) []string {
	for {
		i := strings.IndexByte(s, '\t')
		if i < 0 {
			return append(dst, s)
		}
		dst = append(dst, s[:i])
		s = s[i+1:]
	}
}

// imdbTitle converts one row of title.basics, or says why it cannot.
func imdbTitle(f []string) (t memento.Title, reason, detail string) {
	null := func(s string) bool { return s == `\N` || s == "" }
	id := strings.TrimSpace(f[0])
	if !strings.HasPrefix(id, "tt") || len(id) < 3 || !allDigits(id[2:]) {
		return t, ReasonID, fmt.Sprintf("tconst %q is not an IMDb title id (tt followed by digits)", f[0])
	}
	t.ID = "imdb:" + id
	t.Title = collapseSpace(f[2])
	if null(f[2]) || t.Title == "" {
		t.Title = collapseSpace(f[3])
		if null(f[3]) || t.Title == "" {
			return t, ReasonTitle, fmt.Sprintf("%s has no primaryTitle", t.ID)
		}
	}
	t.Type = strings.TrimSpace(f[1])
	if null(f[1]) || t.Type == "" {
		t.Type = memento.TypeMovie
	}
	switch f[4] {
	case "0", `\N`, "":
	case "1":
		t.IsAdult = true
	default:
		return t, ReasonAdult, fmt.Sprintf("isAdult %q is neither 0 nor 1", f[4])
	}
	var ok bool
	if t.Year, ok = parseYear(f[5], null); !ok {
		return t, ReasonYear, fmt.Sprintf("startYear %q is not a year in %d-%d", f[5], memento.MinYear, memento.MaxYear)
	}
	if t.EndYear, ok = parseYear(f[6], null); !ok {
		return t, ReasonYear, fmt.Sprintf("endYear %q is not a year in %d-%d", f[6], memento.MinYear, memento.MaxYear)
	}
	if !null(f[7]) {
		n, err := strconv.Atoi(f[7])
		if err != nil || n < 0 || n > 100000 {
			return t, ReasonRuntime, fmt.Sprintf("runtimeMinutes %q is not a number of minutes", f[7])
		}
		t.RuntimeMinutes = n
	}
	var genres []string
	if !null(f[8]) {
		genres = strings.Split(f[8], ",")
	}
	t.Genres = cleanList(genres, CanonicalGenre)
	t.Cast = []string{}
	return t, "", ""
}

// parseYear parses a year column, where null means unknown (0).
func parseYear(s string, null func(string) bool) (int, bool) {
	if null(s) {
		return 0, true
	}
	y, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || !validYear(y) || y == 0 {
		return 0, false
	}
	return y, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
