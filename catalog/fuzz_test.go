package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memento-ai/memento"
)

// checkImport checks what every reader promises whatever its input: no
// panic, every row either imported or skipped, and titles with an id and a
// title.
func checkImport(t *testing.T, titles []memento.Title, report ImportReport, err error) {
	t.Helper()
	if err != nil {
		return
	}
	if report.Imported != len(titles) || report.Imported+report.Skipped != report.Rows {
		t.Fatalf("report %+v does not add up for %d titles", report, len(titles))
	}
	if len(report.Errors) > maxRowErrors {
		t.Fatalf("report lists %d errors", len(report.Errors))
	}
	seen := map[string]bool{}
	for _, tt := range titles {
		if tt.ID == "" || tt.Title == "" || tt.Type == "" || seen[tt.ID] || !validYear(tt.Year) ||
			!(tt.Notability >= 0 && tt.Notability <= 1) {
			t.Fatalf("bad title %+v", tt)
		}
		seen[tt.ID] = true
	}
}

func addSeeds(f *testing.F, name string) {
	f.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		f.Add(line)
	}
}

func FuzzReadJSONL(f *testing.F) {
	addSeeds(f, "titles.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		titles, report, err := ReadJSONL(bytes.NewReader(data))
		checkImport(t, titles, report, err)
	})
}

func FuzzReadIMDb(f *testing.F) {
	addSeeds(f, "title.basics.tsv")
	f.Fuzz(func(t *testing.T, data []byte) {
		titles, report, err := ReadIMDb(bytes.NewReader(data))
		checkImport(t, titles, report, err)
	})
}

func FuzzReadMovieLens(f *testing.F) {
	addSeeds(f, "movies.csv")
	f.Fuzz(func(t *testing.T, data []byte) {
		titles, report, err := ReadMovieLens(bytes.NewReader(data))
		checkImport(t, titles, report, err)
	})
}

// FuzzDecodeTitleFast checks the fast JSON decoder against encoding/json:
// whenever it accepts a line, it must decode it exactly as encoding/json
// does.
func FuzzDecodeTitleFast(f *testing.F) {
	addSeeds(f, "titles.jsonl")
	f.Add([]byte(`{"id":"x","title":"a\u00e9\ud83d\ude00\"","year":-0,"genres":null,"cast":["a",null]}`))
	f.Add([]byte(`{"id":"x","title":"\xff"}`))
	for _, n := range []string{"0.1234", "1", "0", "1e-3", "0.10000000000000001", "00.5", "-0.5", "2.", "1.5", `"0.5"`} {
		f.Add([]byte(`{"id":"x","title":"a","notability":` + n + `}`))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var fast jsonTitle
		if !decodeTitleFast(line, &fast) {
			return
		}
		var slow jsonTitle
		if err := json.Unmarshal(line, &slow); err != nil {
			t.Fatalf("fast decoder accepted %q, encoding/json says %v", line, err)
		}
		if diff := cmp.Diff(slow, fast, cmp.AllowUnexported(jsonTitle{})); diff != "" {
			t.Fatalf("decoders disagree on %q (-json +fast):\n%s", line, diff)
		}
	})
}

// FuzzSearch checks that no query panics and that every answer is either
// EINVALID or a consistent page.
func FuzzSearch(f *testing.F) {
	x := New(fixture())
	f.Add("heist", "Action", "Ann Lee", "movie", 1990, 2020, 1, 5, false, "m01")
	f.Add("", "sci-fi", "", "", 0, 0, 2, 0, true, "")
	f.Fuzz(func(t *testing.T, text, genre, person, typ string, minYear, maxYear, page, size int, all bool, exclude string) {
		q := memento.TitleQuery{Text: text, Genres: []string{genre}, People: []string{person}, Type: typ,
			MinYear: minYear, MaxYear: maxYear, Page: page, Size: size, AllGenres: all, Exclude: []string{exclude}}
		got, err := x.Search(context.Background(), q)
		if err != nil {
			if memento.ErrorCode(err) != memento.EINVALID {
				t.Fatalf("Search(%+v) error %v is not EINVALID", q, err)
			}
			return
		}
		if got.Titles == nil || len(got.Titles) > got.Size || got.Total > x.Len() {
			t.Fatalf("Search(%+v) = inconsistent page %+v", q, got)
		}
		for _, tt := range got.Titles {
			if tt.ID == exclude {
				t.Fatalf("Search(%+v) returned excluded %s", q, exclude)
			}
		}
	})
}
