package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/engine/enginetest"
	mhttp "github.com/memento-ai/memento/http"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/pipeline"
	"github.com/memento-ai/memento/recall"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// memDo sends a request with a JSON body and decodes the JSON answer, if
// any.
func memDo(t *testing.T, method, url, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if resp.StatusCode != http.StatusNoContent {
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatalf("%s %s: decode answer: %v", method, url, err)
		}
	}
	return resp.StatusCode, out
}

func errCode(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func TestMessageLogAndMemoryRoutes(t *testing.T) {
	ctx := context.Background()
	db := enginetest.Open(t)
	emb := offline.NewEmbedder(64)
	p, err := pipeline.New(offline.New(offline.Options{}), db, pipeline.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	w := &pipeline.Worker{Pipeline: p, Ordered: db}
	db.Handle(memento.JobRemember, w.Handle, memento.JobOptions{})
	jobs := func(s memento.Scope, thread string, m memento.Message) []memento.JobRequest {
		return []memento.JobRequest{{Kind: memento.JobRemember, Payload: memento.MessageJob{Tenant: s.Tenant, User: s.User, Thread: thread, Message: m.ID, Seq: m.Seq}}}
	}
	ts := testServer(t, func(s *mhttp.Server) {
		s.Routes = append(s.Routes, mhttp.RegisterMemory(mhttp.MemoryRoutes{Store: db, Assembler: recall.New(db, emb), JobsFor: jobs}))
	})
	base := ts.URL + "/v1/users/ann"

	body := `[{"id":"m1","role":"user","text":"I love sci-fi but can't stand horror, and I watch everything on Netflix","at":"2025-05-01T20:00:00Z"},
		{"id":"m2","role":"assistant","text":"Noted! Here are some sci-fi films."}]`
	code, out := memDo(t, "POST", base+"/threads/t1/messages", body)
	if code != 202 || out["inserted"] != 2.0 || len(out["messages"].([]any)) != 2 {
		t.Fatalf("append = %d %v; want 202 with 2 inserted", code, out)
	}
	code, out = memDo(t, "POST", base+"/threads/t1/messages", body)
	if code != 202 || out["inserted"] != 0.0 || out["duplicates"] != 2.0 {
		t.Errorf("repeated append = %d %v; want 202, nothing inserted", code, out)
	}
	code, out = memDo(t, "POST", base+"/threads/t1/messages", `{"id":"m3","role":"user","text":"actually I've come around on horror","at":"2025-05-02T20:00:00Z"}`)
	if code != 202 || out["inserted"] != 1.0 {
		t.Errorf("append one object = %d %v", code, out)
	}
	if js, _ := db.Jobs(ctx, memento.JobFilter{Kind: memento.JobRemember}); len(js) != 3 {
		t.Errorf("%d remember jobs; want one per stored message, 3", len(js))
	}
	for _, bad := range []string{``, `[]`, `{"role":"bot","text":"hi"}`, `{"role":"user","text":"  "}`, `{"role":"user","text":"hi","mood":"happy"}`, `{"text":"hi"}`, `[{"role":"user","text":"hi"},3]`} {
		if code, out := memDo(t, "POST", base+"/threads/t1/messages", bad); code != 400 || errCode(out) != memento.EINVALID {
			t.Errorf("append %q = %d %v; want 400 EINVALID", bad, code, out)
		}
	}

	if err := db.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Stop(context.Background()) })
	sqlitetest.WaitForJobs(t, db, 20*time.Second)

	code, out = memDo(t, "GET", base+"/memories", "")
	mems, _ := out["memories"].([]any)
	if code != 200 || len(mems) != 2 {
		t.Fatalf("memories = %d %v; want the GENRE and PLATFORM values", code, out)
	}
	code, out = memDo(t, "GET", base+"/memories?all=true", "")
	if all, _ := out["memories"].([]any); code != 200 || len(all) != 4 {
		t.Errorf("memories with all = %d, %d memories; want 4 (two superseded)", code, len(all))
	}
	code, out = memDo(t, "GET", base+"/memories?attribute=genre", "")
	genres, _ := out["memories"].([]any)
	if code != 200 || len(genres) != 1 {
		t.Fatalf("GENRE = %d %v", code, out)
	}
	genre := genres[0].(map[string]any)
	for _, key := range []string{"id", "kind", "attribute", "mode", "value", "validFrom", "validTo", "sources"} {
		if _, ok := genre[key]; !ok {
			t.Errorf("a memory lacks %q: %v", key, genre)
		}
	}
	id := genre["id"].(string)
	if code, out := memDo(t, "GET", base+"/memories?kind=fact", ""); code != 400 {
		t.Errorf("kind=fact = %d %v; want 400", code, out)
	}

	code, out = memDo(t, "GET", base+"/memories/"+id+"/history", "")
	if hist, _ := out["memories"].([]any); code != 200 || len(hist) != 2 {
		t.Errorf("history = %d %v; want 2 versions", code, out)
	}
	code, out = memDo(t, "PATCH", base+"/memories/"+id, `{"value":"loves science fiction and westerns"}`)
	if code != 200 || out["value"] != "loves science fiction and westerns" || out["id"] != id {
		t.Errorf("patch = %d %v", code, out)
	}
	if code, out := memDo(t, "PATCH", base+"/memories/nope", `{"value":"x"}`); code != 404 {
		t.Errorf("patch of a missing memory = %d %v", code, out)
	}

	code, out = memDo(t, "GET", base+"/context?thread=t1&query=what+sci-fi+does+she+like&k=5", "")
	if code != 200 || out["tokens"].(float64) <= 0 || !strings.Contains(out["text"].(string), "GENRE") || out["activeContext"] == nil {
		t.Errorf("context = %d %v", code, out)
	}
	items, _ := out["items"].([]any)
	if len(items) == 0 {
		t.Fatalf("context has no items: %v", out)
	}
	first := items[0].(map[string]any)
	if _, ok := first["scores"].(map[string]any)["bm25"]; !ok || len(first["sources"].([]any)) == 0 {
		t.Errorf("an item lacks its score breakdown or sources: %v", first)
	}
	if code, out := memDo(t, "GET", base+"/context?k=1000", ""); code != 400 {
		t.Errorf("context with k=1000 = %d %v; want 400", code, out)
	}

	code, out = memDo(t, "GET", base+"/runs", "")
	if runs, _ := out["runs"].([]any); code != 200 || len(runs) != 3 {
		t.Errorf("runs = %d %v; want 3", code, out)
	}
	code, out = memDo(t, "GET", base+"/runs/m1", "")
	if code != 200 || out["outcome"] != "stored" || len(out["steps"].([]any)) < 7 {
		t.Errorf("run of m1 = %d %v", code, out)
	}
	code, out = memDo(t, "PUT", base+"/memory-modes/*", `{"mode":"episodic"}`)
	if code != 200 || out["modes"].(map[string]any)["*"] != "episodic" {
		t.Errorf("set mode = %d %v", code, out)
	}
	if code, out := memDo(t, "PUT", base+"/memory-modes/GENRE", `{"mode":"often"}`); code != 400 {
		t.Errorf("bad mode = %d %v", code, out)
	}

	// Four values from the pipeline, and the old GENRE value the edit closed.
	code, export := memDo(t, "GET", base+"/export", "")
	if code != 200 || export["format"] != memento.UserExportFormat || len(export["memories"].([]any)) != 5 {
		t.Fatalf("export = %d %v", code, export)
	}
	doc, _ := json.Marshal(export)
	code, out = memDo(t, "POST", ts.URL+"/v1/users/bob/import", string(doc))
	if code != 200 || out["messages"] != 3.0 || out["memories"] != 5.0 {
		t.Errorf("import = %d %v", code, out)
	}
	code, out = memDo(t, "GET", ts.URL+"/v1/users/bob/memories", "")
	if got, _ := out["memories"].([]any); code != 200 || len(got) != 2 {
		t.Errorf("bob's memories after import = %d %v", code, out)
	}
	if code, out := memDo(t, "POST", ts.URL+"/v1/users/bob/import", `{"format":"x"}`); code != 400 {
		t.Errorf("import of a bad document = %d %v", code, out)
	}

	if code, _ := memDo(t, "DELETE", base+"/memories/"+id, ""); code != 204 {
		t.Errorf("delete memory = %d", code)
	}
	if code, _ := memDo(t, "GET", base+"/memories/"+id, ""); code != 404 {
		t.Errorf("deleted memory = %d; want 404", code)
	}
	if code, _ := memDo(t, "DELETE", base, ""); code != 204 {
		t.Errorf("delete user = %d", code)
	}
	if code, out := memDo(t, "GET", base+"/export", ""); code != 404 {
		t.Errorf("export of a forgotten user = %d %v; want 404", code, out)
	}
	if code, _ := memDo(t, "DELETE", base, ""); code != 404 {
		t.Errorf("second delete of the user = %d; want 404", code)
	}
}
