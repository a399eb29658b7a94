package catalog

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/memento-ai/memento"
)

var (
	// mlYear matches the release year MovieLens appends to a title:
	// "Toy Story (1995)", and the odd series range "Babylon 5 (1994-1998)".
	mlYear = regexp.MustCompile(`^(.*?)\s*\((\d{4})(?:\s*[-–]\s*\d{0,4})?\)\s*$`)
	// mlAlt matches an alternate (usually original-language) title that
	// MovieLens appends in parentheses: "Shanghai Triad (Yao a yao yao dao
	// waipo qiao)", "Seven (a.k.a. Se7en)".
	mlAlt = regexp.MustCompile(`^(.*\S)\s+\([^()]*\)$`)
	// mlArticle matches a leading article MovieLens moved to the end:
	// "Usual Suspects, The".
	mlArticle = regexp.MustCompile(`^(.+), (The|A|An|Les|La|Le|L'|Il|El|Los|Las|Der|Die|Das|Det|Den|Gli|Lo|Un|Une)$`)
)

// ReadMovieLens reads a MovieLens movies.csv (movieId,title,genres), plain
// or gzipped. Each row becomes a movie with id "ml:" + movieId. The year is
// taken from the trailing "(1995)" of the title and removed from it; an
// alternate title in trailing parentheses is dropped, and a leading article
// that MovieLens moved to the end is put back ("Usual Suspects, The" becomes
// "The Usual Suspects"). Genres are split on "|", "(no genres listed)" means
// none, and MovieLens names are mapped to the catalog vocabulary ("Sci-Fi"
// to "Science Fiction", "Children" to "Family", "Animation" to "Animated",
// "Film-Noir" to "Noir"). Malformed rows are skipped and counted.
func ReadMovieLens(r io.Reader) ([]memento.Title, ImportReport, error) {
	report := newReport(FormatMovieLens)
	in, closeIn, err := maybeGunzip(r)
	if err != nil {
		return nil, report, err
	}
	defer closeIn()
	cr := csv.NewReader(in)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.ReuseRecord = true
	var titles []memento.Title
	seen := map[string]bool{}
	first := true
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			report.Rows++
			report.skip(pe.StartLine, ReasonEncoding, "%v", pe.Err)
			first = false
			continue
		} else if err != nil {
			return nil, report, fmt.Errorf("read csv: %w", readError(err))
		}
		line, _ := cr.FieldPos(0)
		if first {
			first = false
			if len(rec) > 0 && strings.EqualFold(strings.TrimPrefix(rec[0], "\ufeff"), "movieId") {
				continue
			}
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		report.Rows++
		if len(rec) != 3 {
			report.skip(line, ReasonColumns, "got %d columns, want 3 (movieId,title,genres)", len(rec))
			continue
		}
		t, reason, detail := movieLensTitle(rec)
		if reason == "" && seen[t.ID] {
			reason, detail = ReasonDup, fmt.Sprintf("%s appeared earlier", t.ID)
		}
		if reason != "" {
			report.skip(line, reason, "%s", detail)
			continue
		}
		seen[t.ID] = true
		titles = append(titles, t)
	}
	report.Imported = len(titles)
	return titles, report, nil
}

// movieLensTitle converts one row of movies.csv, or says why it cannot.
func movieLensTitle(rec []string) (t memento.Title, reason, detail string) {
	for _, f := range rec {
		if !utf8.ValidString(f) {
			return t, ReasonEncoding, "row is not valid UTF-8"
		}
	}
	id := strings.TrimSpace(rec[0])
	if n, err := strconv.Atoi(id); err != nil || n < 1 {
		return t, ReasonID, fmt.Sprintf("movieId %q is not a positive number", rec[0])
	}
	t.ID = "ml:" + id
	t.Type = memento.TypeMovie
	name := collapseSpace(rec[1])
	if m := mlYear.FindStringSubmatch(name); m != nil {
		y, _ := strconv.Atoi(m[2])
		if !validYear(y) || y == 0 {
			return t, ReasonYear, fmt.Sprintf("year %s of %q is not in %d-%d", m[2], rec[1], memento.MinYear, memento.MaxYear)
		}
		name, t.Year = m[1], y
	}
	if m := mlAlt.FindStringSubmatch(name); m != nil {
		name = m[1]
	}
	if m := mlArticle.FindStringSubmatch(name); m != nil {
		sep := " "
		if strings.HasSuffix(m[2], "'") {
			sep = ""
		}
		name = m[2] + sep + m[1]
	}
	if name == "" {
		return t, ReasonTitle, fmt.Sprintf("%s has no title", t.ID)
	}
	t.Title = name
	var genres []string
	if g := strings.TrimSpace(rec[2]); g != "" && g != "(no genres listed)" {
		genres = strings.Split(g, "|")
	}
	t.Genres = cleanList(genres, CanonicalGenre)
	t.Cast = []string{}
	return t, "", ""
}
