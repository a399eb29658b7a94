package catalog

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memento-ai/memento"
)

// Formats ReadFile understands.
const (
	FormatIMDb      = "imdb"      // IMDb title.basics TSV, plain or gzipped
	FormatMovieLens = "movielens" // MovieLens movies.csv
	FormatJSONL     = "jsonl"     // the catalog's JSON-lines format (FORMAT.md)
)

// formats lists the formats ReadFile understands, in a stable order.
var formats = []string{FormatIMDb, FormatMovieLens, FormatJSONL}

// Reasons a row is skipped. An ImportReport counts skipped rows by these
// names, so a user can tell a file with a few bad lines from one in the
// wrong format.
const (
	ReasonColumns  = "column count"  // a TSV or CSV row has the wrong number of fields
	ReasonJSON     = "bad json"      // a JSON line does not parse
	ReasonID       = "missing id"    // a row has no id, or a malformed one
	ReasonTitle    = "missing title" // a row has no title
	ReasonYear     = "bad year"      // a year is not a number in 1870-2100
	ReasonRuntime  = "bad runtime"   // a runtime is not a non-negative number of minutes
	ReasonAdult    = "bad adult"     // IMDb's isAdult is neither 0 nor 1
	ReasonDup      = "duplicate id"  // an id was already read earlier in the file
	ReasonLong     = "line too long" // a line is over MaxLineBytes
	ReasonEncoding = "bad encoding"  // a row is not valid UTF-8 or not parseable CSV
	// ReasonNotability: a notability is not a number from 0 to 1.
	ReasonNotability = "bad notability"
)

// MaxLineBytes bounds one line of an imported file. Longer lines are skipped
// (ReasonLong) instead of being read into memory whole.
const MaxLineBytes = 1 << 20

// maxRowErrors bounds how many skipped rows an ImportReport lists one by one;
// Skipped and Reasons still count all of them.
const maxRowErrors = 100

// RowError says why one row of an imported file was skipped.
type RowError struct {
	Line   int    `json:"line"`             // 1-based line number in the file
	Reason string `json:"reason"`           // one of the Reason constants
	Detail string `json:"detail,omitempty"` // what exactly was wrong
}

// ImportReport describes the outcome of reading a catalog file: malformed
// rows are skipped with a counted warning rather than failing the import.
type ImportReport struct {
	Format   string         `json:"format"`
	Rows     int            `json:"rows"`     // data rows read (header and blank lines not counted)
	Imported int            `json:"imported"` // titles returned
	Skipped  int            `json:"skipped"`  // rows skipped as malformed
	Reasons  map[string]int `json:"reasons"`  // skipped rows by reason
	Errors   []RowError     `json:"errors"`   // the first skipped rows, with line numbers
	// Notability says where the titles' notability came from
	// (NotabilityCounts, NotabilityFile or NotabilityFields); ReadFile
	// sets it, the stream readers leave it empty.
	Notability string `json:"notability,omitempty"`
	// RatingsFile is the ratings file the counts were read from.
	RatingsFile string `json:"ratingsFile,omitempty"`
}

func newReport(format string) ImportReport {
	return ImportReport{Format: format, Reasons: map[string]int{}, Errors: []RowError{}}
}

// skip records a skipped row.
func (r *ImportReport) skip(line int, reason, format string, args ...any) {
	r.Skipped++
	r.Reasons[reason]++
	if len(r.Errors) < maxRowErrors {
		r.Errors = append(r.Errors, RowError{Line: line, Reason: reason, Detail: fmt.Sprintf(format, args...)})
	}
}

// String summarises the report in one line, e.g. for a CLI.
func (r ImportReport) String() string {
	s := fmt.Sprintf("%s: %d rows, %d imported, %d skipped", r.Format, r.Rows, r.Imported, r.Skipped)
	if r.Skipped > 0 {
		var parts []string
		for _, reason := range []string{ReasonColumns, ReasonJSON, ReasonID, ReasonTitle, ReasonYear,
			ReasonRuntime, ReasonAdult, ReasonDup, ReasonLong, ReasonEncoding, ReasonNotability} {
			if n := r.Reasons[reason]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s: %d", reason, n))
			}
		}
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

// ReadFile reads the catalog file at path in the given format (FormatIMDb,
// FormatMovieLens or FormatJSONL) and gives every title its notability.
// Gzipped files are recognised by their magic bytes whatever their name.
//
// Notability comes from rating counts where the source has them: for IMDb,
// the numVotes of title.ratings.tsv (or .tsv.gz) beside the file; for
// MovieLens, the number of ratings of each movie in ratings.csv beside
// movies.csv (NotabilityFromCounts). JSON lines keep their notability
// fields when any line has one. Otherwise it is the field prior
// (ComputeNotability). The report says which (Notability, RatingsFile).
//
// Errors: EINVALID for an unknown format, ENOTFOUND for a missing file.
func ReadFile(path, format string) ([]memento.Title, ImportReport, error) {
	return ReadFileRatings(path, format, "")
}

// ReadFileRatings is ReadFile with the ratings file named: ratings is the
// path of an IMDb title.ratings.tsv or a MovieLens ratings.csv to take the
// counts from, or "" to look beside the catalog file as ReadFile does.
// Errors: EINVALID for an unknown format or a ratings file with a format
// that has none (JSON lines), ENOTFOUND for a missing file.
func ReadFileRatings(path, format, ratings string) ([]memento.Title, ImportReport, error) {
	format = strings.ToLower(format)
	titles, report, err := readFile(path, format)
	if err != nil {
		return nil, report, err
	}
	if ratings == "" {
		ratings = ratingsFileFor(path, format)
	}
	var counts map[string]int
	if ratings != "" {
		if counts, err = readRatingsFile(ratings, format); err != nil {
			return nil, report, err
		}
		report.RatingsFile = ratings
	}
	report.Notability = setNotability(titles, counts)
	return titles, report, nil
}

// readFile reads the catalog file at path with the reader of its format.
func readFile(path, format string) ([]memento.Title, ImportReport, error) {
	read, ok := readers[strings.ToLower(format)]
	if !ok {
		return nil, newReport(format), memento.Errorf(memento.EINVALID,
			"unknown catalog format %q: want one of %s", format, strings.Join(formats, ", "))
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, newReport(format), memento.WrapError(memento.ENOTFOUND, err, "catalog file %s does not exist", path)
	} else if err != nil {
		return nil, newReport(format), fmt.Errorf("open catalog file: %w", err)
	}
	defer f.Close()
	titles, report, err := read(f)
	if err != nil {
		return nil, report, fmt.Errorf("read %s catalog %s: %w", format, path, err)
	}
	return titles, report, nil
}

// Load reads the catalog file at path in the given format (see ReadFile)
// and indexes its titles, e.g. to serve an imported catalog instead of the
// embedded one.
func Load(path, format string) (*Index, ImportReport, error) {
	titles, report, err := ReadFile(path, format)
	if err != nil {
		return nil, report, err
	}
	return New(titles), report, nil
}

var readers = map[string]func(io.Reader) ([]memento.Title, ImportReport, error){
	FormatIMDb:      ReadIMDb,
	FormatMovieLens: ReadMovieLens,
	FormatJSONL:     ReadJSONL,
}

// readLines is the loop of the line-based formats. It reads r, gunzipped
// when it starts with the gzip magic bytes, line by line: it passes over
// blank lines and a first line that starts with header (when header is not
// nil), and counts every other line as a row. It skips, with its reason in
// the report, a row over MaxLineBytes, a row parse turns down (a non-empty
// reason) and a title whose id appeared earlier. Only a read error fails
// it.
func readLines(r io.Reader, format string, header []byte, parse func(text []byte) (t memento.Title, reason, detail string)) ([]memento.Title, ImportReport, error) {
	report := newReport(format)
	in, closeIn, err := maybeGunzip(r)
	if err != nil {
		return nil, report, err
	}
	defer closeIn()
	var titles []memento.Title
	seen := map[string]bool{}
	lines := newLineReader(in)
	for lines.next() {
		text := lines.text
		if header != nil && lines.line == 1 && bytes.HasPrefix(text, header) {
			continue
		}
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		report.Rows++
		if lines.long {
			report.skip(lines.line, ReasonLong, "line is over %d bytes", MaxLineBytes)
			continue
		}
		t, reason, detail := parse(text)
		if reason == "" && seen[t.ID] {
			reason, detail = ReasonDup, fmt.Sprintf("%s appeared earlier", t.ID)
		}
		if reason != "" {
			report.skip(lines.line, reason, "%s", detail)
			continue
		}
		seen[t.ID] = true
		titles = append(titles, t)
	}
	if err := lines.error(); err != nil {
		return nil, report, fmt.Errorf("line %d: %w", lines.line+1, err)
	}
	report.Imported = len(titles)
	return titles, report, nil
}

// maybeGunzip returns a reader of r's content, decompressed when it starts
// with the gzip magic bytes. close releases the decompressor.
func maybeGunzip(r io.Reader) (io.Reader, func() error, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	magic, err := br.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, fmt.Errorf("peek: %w", err)
	}
	if !bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		return br, func() error { return nil }, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, nil, memento.WrapError(memento.EINVALID, err, "the file looks gzipped but its header is damaged")
	}
	return zr, zr.Close, nil
}

// lineReader yields the lines of a file without their line ending, counting
// them, and skips over lines longer than MaxLineBytes instead of buffering
// them whole.
type lineReader struct {
	r    *bufio.Reader
	line int    // number of the line last returned
	text []byte // the line last returned; valid until the next call
	long bool   // the line last returned was over MaxLineBytes and is truncated
	err  error
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next advances to the next line and reports whether there is one.
func (lr *lineReader) next() bool {
	if lr.err != nil {
		return false
	}
	lr.text = lr.text[:0]
	lr.long = false
	read := false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if len(chunk) > 0 {
			read = true
			if len(lr.text)+len(chunk) <= MaxLineBytes+1 {
				lr.text = append(lr.text, chunk...)
			} else {
				lr.long = true
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				lr.err = err
				return false
			}
			lr.err = io.EOF
			if !read {
				return false
			}
		}
		break
	}
	lr.line++
	lr.text = bytes.TrimSuffix(lr.text, []byte{'\n'})
	lr.text = bytes.TrimSuffix(lr.text, []byte{'\r'})
	if len(lr.text) > MaxLineBytes {
		lr.long = true
	}
	return true
}

// error returns the read error that ended the lines, if any.
func (lr *lineReader) error() error {
	if lr.err == nil || errors.Is(lr.err, io.EOF) {
		return nil
	}
	return readError(lr.err)
}

// readError classifies an error reading a catalog file: a damaged or
// truncated gzip stream is the user's to fix (EINVALID); anything else is
// returned as it is.
func readError(err error) error {
	var corrupt flate.CorruptInputError
	if errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &corrupt) {
		return memento.WrapError(memento.EINVALID, err, "the file is damaged or truncated: %v", err)
	}
	return err
}

// cleanList trims every entry of list, drops blank ones and duplicates
// (case-insensitively, keeping the first spelling), and never returns nil.
// canon, if not nil, rewrites each entry first. It works in place: the
// result shares list's backing array, which callers must own.
func cleanList(list []string, canon func(string) string) []string {
	if list == nil {
		return []string{}
	}
	out := list[:0]
	var seen map[string]bool // only for long lists; short ones are scanned
	if len(list) > 16 {
		seen = make(map[string]bool, len(list))
	}
next:
	for _, s := range list {
		s = collapseSpace(s)
		if canon != nil {
			s = canon(s)
		}
		if s == "" {
			continue
		}
		if seen != nil {
			k := strings.ToLower(s)
			if seen[k] {
				continue
			}
			seen[k] = true
		} else {
			for _, o := range out {
				if strings.EqualFold(o, s) {
					continue next
				}
			}
		}
		out = append(out, s)
	}
	clear(list[len(out):]) // let dropped strings be collected
	return out
}

// collapseSpace trims s and turns every run of white space inside it into
// one space. Already clean strings are returned without allocating.
func collapseSpace(s string) string {
	if isCollapsed(s) {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// isCollapsed reports whether s has no leading, trailing, repeated or
// non-space white space.
func isCollapsed(s string) bool {
	if s == "" {
		return true
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	prevSpace := false
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch c {
			case ' ':
				if prevSpace {
					return false
				}
				prevSpace = true
				continue
			case '\t', '\n', '\v', '\f', '\r':
				return false
			}
			prevSpace = false
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if unicode.IsSpace(r) {
			return false
		}
		prevSpace = false
	}
	return true
}

// validYear reports whether y is a year the catalog accepts; 0 means unknown
// and is accepted.
func validYear(y int) bool {
	return y == 0 || (memento.MinYear <= y && y <= memento.MaxYear)
}
