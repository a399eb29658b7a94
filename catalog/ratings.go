package catalog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/memento-ai/memento"
)

// Companion files that hold how many people rated each title, looked for
// beside an imported catalog file (see ReadFile).
const (
	IMDbRatingsFile      = "title.ratings.tsv" // IMDb: tconst, averageRating, numVotes (or .tsv.gz)
	MovieLensRatingsFile = "ratings.csv"       // MovieLens: userId, movieId, rating, timestamp
)

// Where an import took its titles' notability from (ImportReport.Notability).
const (
	NotabilityCounts = "counts" // rating or vote counts from a ratings file
	NotabilityFile   = "file"   // the notability field of the JSON lines
	NotabilityFields = "fields" // the field prior, ComputeNotability
)

// ReadIMDbRatings reads IMDb's title.ratings.tsv (tconst, averageRating,
// numVotes), plain or gzipped, and returns the vote counts by catalog id
// ("imdb:" + tconst). Malformed rows are skipped and counted in the report.
func ReadIMDbRatings(r io.Reader) (map[string]int, ImportReport, error) {
	return readCounts(r, "imdb ratings", []byte("tconst\t"), '\t', 3, func(f [][]byte) (string, int, bool) {
		id := string(bytes.TrimSpace(f[0]))
		if !strings.HasPrefix(id, "tt") || !allDigits(id[2:]) {
			return "", 0, false
		}
		n, err := strconv.Atoi(string(bytes.TrimSpace(f[2])))
		if err != nil || n < 0 {
			return "", 0, false
		}
		return "imdb:" + id, n, true
	})
}

// ReadMovieLensRatings reads a MovieLens ratings.csv (userId, movieId,
// rating, timestamp), plain or gzipped, and returns how many ratings each
// movie has, by catalog id ("ml:" + movieId). Malformed rows are skipped and
// counted in the report.
func ReadMovieLensRatings(r io.Reader) (map[string]int, ImportReport, error) {
	return readCounts(r, "movielens ratings", []byte("userId,"), ',', 4, func(f [][]byte) (string, int, bool) {
		id := bytes.TrimSpace(f[1])
		if n, err := strconv.Atoi(string(id)); err != nil || n < 1 {
			return "", 0, false
		}
		return "ml:" + string(id), 1, true
	})
}

// readCounts adds up the counts that parse finds in the rows of a
// delimited ratings file. Ratings files are large (MovieLens 25M has 25
// million rows), so rows are split in place rather than by a CSV reader;
// neither format quotes its fields.
func readCounts(r io.Reader, format string, header []byte, sep byte, columns int,
	parse func(fields [][]byte) (id string, n int, ok bool)) (map[string]int, ImportReport, error) {
	report := newReport(format)
	in, closeIn, err := maybeGunzip(r)
	if err != nil {
		return nil, report, err
	}
	defer closeIn()
	counts := map[string]int{}
	fields := make([][]byte, 0, columns+1)
	lines := newLineReader(in)
	for lines.next() {
		text := lines.text
		if lines.line == 1 && bytes.HasPrefix(text, header) {
			continue
		}
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		report.Rows++
		fields = fields[:0]
		for rest := text; ; {
			i := bytes.IndexByte(rest, sep)
			if i < 0 {
				fields = append(fields, rest)
				break
			}
			fields = append(fields, rest[:i])
			rest = rest[i+1:]
		}
		if len(fields) != columns {
			report.skip(lines.line, ReasonColumns, "got %d columns, want %d", len(fields), columns)
			continue
		}
		id, n, ok := parse(fields)
		if !ok {
			report.skip(lines.line, ReasonID, "row %q has no title id and count", text)
			continue
		}
		counts[id] += n
		report.Imported++
	}
	if err := lines.error(); err != nil {
		return nil, report, fmt.Errorf("line %d: %w", lines.line+1, err)
	}
	return counts, report, nil
}

// ratingsFileFor returns the companion ratings file of a catalog file in
// the given format that exists beside it, or "".
func ratingsFileFor(path, format string) string {
	var names []string
	switch format {
	case FormatIMDb:
		names = []string{IMDbRatingsFile, IMDbRatingsFile + ".gz"}
	case FormatMovieLens:
		names = []string{MovieLensRatingsFile, MovieLensRatingsFile + ".gz"}
	}
	for _, name := range names {
		p := filepath.Join(filepath.Dir(path), name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && p != filepath.Clean(path) {
			return p
		}
	}
	return ""
}

// readRatingsFile reads the counts of a ratings file in the catalog
// format's companion format.
func readRatingsFile(path, format string) (map[string]int, error) {
	read := ReadMovieLensRatings
	switch format {
	case FormatIMDb:
		read = ReadIMDbRatings
	case FormatMovieLens:
	default:
		return nil, memento.Errorf(memento.EINVALID, "the %s format has no ratings file", format)
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, memento.WrapError(memento.ENOTFOUND, err, "ratings file %s does not exist", path)
	} else if err != nil {
		return nil, fmt.Errorf("open ratings file: %w", err)
	}
	defer f.Close()
	counts, _, err := read(f)
	if err != nil {
		return nil, fmt.Errorf("read ratings %s: %w", path, err)
	}
	return counts, nil
}

// setNotability gives imported titles their notability, from the best
// source there is: the counts of a ratings file, else the file's own
// notability fields when any title has one, else the field prior. It
// returns which it used (NotabilityCounts, NotabilityFile or
// NotabilityFields).
func setNotability(titles []memento.Title, counts map[string]int) string {
	if counts != nil {
		NotabilityFromCounts(titles, counts)
		return NotabilityCounts
	}
	for i := range titles {
		if titles[i].Notability > 0 {
			return NotabilityFile
		}
	}
	ComputeNotability(titles, nil)
	return NotabilityFields
}
