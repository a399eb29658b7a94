package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/llm/llmtest"
)

// TestServeKeepsTitleVectors restarts `memento serve` against an
// embedding server: the first start embeds the catalog's titles and keeps
// their vectors in the store, the restart reads them and sends the server
// none, and --embed-cache off embeds them again.
func TestServeKeepsTitleVectors(t *testing.T) {
	srv := llmtest.New(t)
	srv.AutoEmbed(256)
	env := map[string]string{"MEMENTO_LLM_BASE_URL": srv.URL, "MEMENTO_LLM_MODEL": "fake-model", "MEMENTO_EMBED_MODEL": "fake-embed"}
	db := filepath.Join(t.TempDir(), "memento.db")
	catalogFile := tinyCatalogFile(t)
	names := []string{"Heat", "Arrival", "Up", "The Notebook", "The Conjuring"} // tinyCatalogFile's

	// titlesEmbedded counts the catalog's titles the embedding server
	// was given since request number from.
	titlesEmbedded := func(from int) int {
		n := 0
		for _, r := range srv.Requests()[from:] {
			if r.Path != llmtest.EmbedPath {
				continue
			}
			e, err := r.Embed()
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range e.Input {
				for _, name := range names {
					if strings.Contains(in, ". "+name+". ") {
						n++
					}
				}
			}
		}
		return n
	}
	// start serves until ready and returns how many titles it embedded
	// and its log.
	start := func(args ...string) (int, string) {
		t.Helper()
		from := len(srv.Requests())
		s, err := serveWith(t, env, append([]string{"--db", db, "--catalog", catalogFile, "--log-level", "info"}, args...)...)
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
		deadline := time.Now().Add(time.Minute)
		for {
			code, body := s.do(t, "GET", "/readyz", "")
			if code == 200 {
				break
			}
			if code != 503 || time.Now().After(deadline) {
				t.Fatalf("/readyz = %d %v, want 503 then 200 within a minute\n%s", code, body, s.stderr.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.m.Close(ctx); err != nil {
			t.Fatalf("close: %v", err)
		}
		return titlesEmbedded(from), s.stderr.String()
	}

	if n, log := start(); n < len(names) {
		t.Fatalf("first start embedded %d titles, want every one of %d\n%s", n, len(names), log)
	}
	// The embedder learns its dimension (MEMENTO_EMBED_DIM is for the
	// offline one) from its first answer: one text, which the restart
	// sends before it reads the store under the id that names it.
	n, log := start()
	if n > 1 {
		t.Errorf("restart embedded %d titles, want at most 1: their vectors are in the store", n)
	}
	if !strings.Contains(log, "title vectors ready") || !strings.Contains(log, "embedded="+strconv.Itoa(n)+"\n") {
		t.Errorf("the restart's log does not say the titles came from the store, %d embedded:\n%s", n, log)
	}
	if n, _ := start("--embed-cache", "off"); n < len(names) {
		t.Errorf("with --embed-cache off, %d titles embedded; want every one of %d", n, len(names))
	}
}

// TestCatalogImportPrunesTitleVectors imports a catalog, lets a server
// (--embed-cache on, the offline embedder) keep its titles' vectors, and
// imports a catalog that drops one title, keeps one and adds one: the
// import removes the dropped title's vector alone, and the next start
// embeds the new title alone.
func TestCatalogImportPrunesTitleVectors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "memento.db")
	file := func(name string, titles ...memento.Title) string {
		var b bytes.Buffer
		if err := catalog.WriteJSONL(&b, titles); err != nil {
			t.Fatal(err)
		}
		return writeFile(t, name, b.String())
	}
	heat := memento.Title{ID: "heat", Title: "Heat", Type: memento.TypeMovie, Year: 1995, Genres: []string{"Crime"}, Overview: "A crew of thieves."}
	alien := memento.Title{ID: "alien", Title: "Alien", Type: memento.TypeMovie, Year: 1979, Genres: []string{"Horror"}, Overview: "A crew meets a creature."}
	up := memento.Title{ID: "up", Title: "Up", Type: memento.TypeMovie, Year: 2009, Genres: []string{"Animated"}, Overview: "A house flies."}
	importJSON := func(f string) importReport {
		t.Helper()
		out, err := run(t, "", "catalog", "import", f, "--replace", "--json", "--db", db)
		if err != nil {
			t.Fatalf("catalog import: %v", err)
		}
		var rep importReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return rep
	}
	// warm serves until ready and returns its "title vectors ready" line.
	warm := func() string {
		t.Helper()
		s, err := serveWith(t, nil, "--db", db, "--embed-cache", "on", "--log-level", "info")
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
		deadline := time.Now().Add(time.Minute)
		for code, _ := s.do(t, "GET", "/readyz", ""); code != 200; code, _ = s.do(t, "GET", "/readyz", "") {
			if time.Now().After(deadline) {
				t.Fatalf("not ready within a minute:\n%s", s.stderr.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err := s.m.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(s.stderr.String(), "\n") {
			if strings.Contains(line, "title vectors ready") {
				return line
			}
		}
		t.Fatalf("no \"title vectors ready\" in the log:\n%s", s.stderr.String())
		return ""
	}
	if rep := importJSON(file("first.jsonl", heat, alien)); rep.VectorsPruned != 0 {
		t.Errorf("first import pruned %d vectors, want 0", rep.VectorsPruned)
	}
	if line := warm(); !strings.HasSuffix(line, "embedded=2") {
		t.Errorf("first start: %s; want both titles embedded", line)
	}
	if rep := importJSON(file("second.jsonl", heat, up)); rep.VectorsPruned != 1 {
		t.Errorf("the import that drops Alien pruned %d vectors, want 1", rep.VectorsPruned)
	}
	if line := warm(); !strings.HasSuffix(line, "embedded=1") {
		t.Errorf("start after the second import: %s; want Up embedded alone", line)
	}
}
