package sqlite

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memento-ai/memento/fulltext"
)

// TestFulltextTokenizeOption checks that every FTS5 table of the store is
// configured with the tokenizer fulltext reproduces, so a table added with
// another option fails here rather than silently matching other terms.
func TestFulltextTokenizeOption(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "m.db"), Options{Logger: quiet})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer db.Close()
	rows, err := db.read.QueryContext(ctx, `SELECT name, sql FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL TABLE%fts5%'`)
	if err != nil {
		t.Fatalf("list FTS5 tables: %v", err)
	}
	defer rows.Close()
	option := regexp.MustCompile(`tokenize\s*=\s*'([^']*)'`)
	tables := 0
	for rows.Next() {
		var name, sql string
		if err := rows.Scan(&name, &sql); err != nil {
			t.Fatal(err)
		}
		tables++
		m := option.FindStringSubmatch(sql)
		if m == nil || m[1] != fulltext.FTS5Tokenize {
			t.Errorf("FTS5 table %s: tokenize option %q, want %q (fulltext.FTS5Tokenize)", name, m, fulltext.FTS5Tokenize)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if tables == 0 {
		t.Fatal("no FTS5 table found")
	}
}

// TestFulltextMatchesFTS5 tokenizes the same texts with fulltext.Tokens and
// with the store's message_search table (read back, term by term in order,
// through an fts5vocab table) and checks that the terms agree: the texts
// are hand-written hard cases, every turn of the shared LoCoMo
// conversations when they are present, and a sample of the embedded
// catalog's titles and plots.
func TestFulltextMatchesFTS5(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "m.db"), Options{Logger: quiet})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer db.Close()
	texts := []string{
		"I loved the museums, and Melanie's paintings!",
		"Don't stop: Franny's feet. isn’t O’Brien rock'n'roll",
		"Amélie (2001) — café, naïve Pokémon, Penélope Cruz in Málaga",
		"cafe\u0301s e\u0301 \u0301abc x\u0301\u0302y", // decomposed accents
		"Łódź Søren Đorđe ðe ħ ı ŧ ŀl İstanbul ǅemal ế ǖ ḿ",
		"straßes ẞ λόγος ΛΌΓΟΣ ά α\u0301 ΣΑΣ ſ ϐ µ K Ω Москва й и\u0306",
		"x² ½ ① ٣ 𝟙 ﬁne ﬀ ｆｕｌｌ abc\ue000def x\u20ddy a\u0903b a\u200bb c\u00adb",
		"hello_world foo-bar 3.14 e-mail 3rd 1990s 90s mp3s WANTS_TO_WATCH",
		"generalizations oscillators running heisted avengers goodness knowledgeable",
		"ties cats sky happy agreed feed biology sensibility conformabli probably possibly apology",
		strings.Repeat("a", 70) + "ings " + strings.Repeat("b", 60) + "ings",
		"", "  ...  ",
	}
	texts = append(texts, locomoTurns(t)...)
	texts = append(texts, catalogTexts(t, 20)...)

	w := db.write
	if _, err := w.ExecContext(ctx, `CREATE VIRTUAL TABLE temp.search_terms USING fts5vocab(main, message_search, instance)`); err != nil {
		t.Fatalf("create fts5vocab: %v", err)
	}
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	const base = 1 << 40 // rowids no message of the new store has
	for i, text := range texts {
		if _, err := tx.ExecContext(ctx, `INSERT INTO message_search (rowid, text, scope) VALUES (?, ?, 'probe')`, base+i, text); err != nil {
			t.Fatalf("index text %d: %v", i, err)
		}
	}
	got := make([][]string, len(texts))
	rows, err := tx.QueryContext(ctx, `SELECT doc, term FROM temp.search_terms WHERE col = 'text' AND doc >= ? ORDER BY doc, offset`, base)
	if err != nil {
		t.Fatalf("read terms: %v", err)
	}
	for rows.Next() {
		var doc int64
		var term string
		if err := rows.Scan(&doc, &term); err != nil {
			t.Fatal(err)
		}
		got[doc-base] = append(got[doc-base], term)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	bad := 0
	for i, text := range texts {
		want := fulltext.Tokens(text)
		if len(want) == 0 && len(got[i]) == 0 {
			continue
		}
		if diff := cmp.Diff(got[i], want); diff != "" {
			if bad++; bad <= 10 {
				t.Errorf("terms of %q: FTS5 (-) and fulltext.Tokens (+) differ:\n%s", text, diff)
			}
		}
	}
	if bad > 10 {
		t.Errorf("%d of %d texts differ in all", bad, len(texts))
	}
	t.Logf("%d texts compared", len(texts))
}

// locomoTurns returns the turns of the shared LoCoMo conversations, none
// when the data is not there.
func locomoTurns(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob("../../shared/data/locomo/*.json")
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("read %s: %v", f, err)
		}
		var conv map[string]json.RawMessage
		if err := json.Unmarshal(data, &conv); err != nil {
			t.Fatalf("parse %s: %v", f, err)
		}
		for k, v := range conv {
			var turns []struct {
				Text string `json:"text"`
			}
			if !strings.HasPrefix(k, "session_") || json.Unmarshal(v, &turns) != nil {
				continue
			}
			for _, tu := range turns {
				out = append(out, tu.Text)
			}
		}
	}
	return out
}

// catalogTexts returns the title and plot of every nth title of the
// embedded catalog.
func catalogTexts(t *testing.T, nth int) []string {
	t.Helper()
	f, err := os.Open("../catalog/data/titles.jsonl.gz")
	if err != nil {
		t.Fatalf("open catalog: %v", err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("read catalog: %v", err)
	}
	var out []string
	sc := bufio.NewScanner(z)
	sc.Buffer(nil, 1<<20)
	for i := 0; sc.Scan(); i++ {
		if i%nth != 0 {
			continue
		}
		var title struct{ Title, Overview string }
		if err := json.Unmarshal(sc.Bytes(), &title); err != nil {
			t.Fatalf("parse catalog line %d: %v", i+1, err)
		}
		out = append(out, title.Title+" "+title.Overview)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read catalog: %v", err)
	}
	return out
}
