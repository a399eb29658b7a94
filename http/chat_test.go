package http_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/engine/enginetest"
	mhttp "github.com/memento-ai/memento/http"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

func post(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	return resp.StatusCode, out
}

func TestChatAndSummaries(t *testing.T) {
	db := enginetest.Open(t)
	titles := []memento.Title{
		{ID: "a", Title: "Alpha", Type: "movie", Year: 2012, Genres: []string{"Comedy"}},
		{ID: "b", Title: "Beta", Type: "movie", Year: 2014, Genres: []string{"Comedy"}},
		{ID: "c", Title: "Gamma", Type: "movie", Year: 2016, Genres: []string{"Comedy"}},
		{ID: "d", Title: "Delta", Type: "movie", Year: 2018, Genres: []string{"Comedy"}},
	}
	cat := catalog.New(titles)
	model := offline.New(offline.Options{})
	ag := &agent.Agent{Catalog: cat, Threads: db, Model: model}
	w := &agent.SummaryWorker{Threads: db, Messages: db, Model: model}
	db.Handle(memento.JobSummarise, w.Handle, memento.JobOptions{})
	ts := testServer(t, func(s *mhttp.Server) {
		s.Catalog = cat
		s.Routes = append(s.Routes, mhttp.RegisterChat(ag, db, db))
	})

	code, body := post(t, ts.URL+"/v1/chat", `{"user":"ana","thread":"t1","message":"Discover exactly 2 comedy movies from 2010 onward."}`)
	if code != 200 || len(body["titles"].([]any)) != 2 || body["searched"] != true {
		t.Fatalf("chat = %d %v", code, body)
	}
	code, body = post(t, ts.URL+"/v1/chat", `{"user":"ana","thread":"t1"}`)
	if code != 400 || body["error"].(map[string]any)["code"] != "EINVALID" {
		t.Errorf("chat without a message = %d %v, want 400 EINVALID", code, body)
	}

	if err := db.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Stop(t.Context()) })
	sqlitetest.WaitForJobs(t, db, 10*time.Second)
	code, body = get(t, ts.URL+"/v1/threads/t1/summaries?user=ana")
	if code != 200 || len(body["summaries"].([]any)) != 1 {
		t.Errorf("summaries = %d %v, want one", code, body)
	}
	code, body = get(t, ts.URL+"/v1/users/ana/threads/t1")
	if code != 200 || len(body["messages"].([]any)) != 2 || len(body["lastShown"].([]any)) != 2 {
		t.Errorf("thread = %d %v", code, body)
	}
}

func TestSetThreadContext(t *testing.T) {
	db := enginetest.Open(t)
	cat := catalog.New([]memento.Title{
		{ID: "a", Title: "Alpha", Type: "movie", Year: 2012, Genres: []string{"Comedy"}},
		{ID: "b", Title: "Beta", Type: "movie", Year: 1990, Genres: []string{"Drama"}},
	})
	ag := &agent.Agent{Catalog: cat, Threads: db, Model: offline.New(offline.Options{})}
	ts := testServer(t, func(s *mhttp.Server) {
		s.Catalog = cat
		s.Routes = append(s.Routes, mhttp.RegisterChat(ag, db, db))
	})
	put := func(path, body string) (int, map[string]any) {
		req, _ := http.NewRequest(http.MethodPut, ts.URL+path, bytes.NewBufferString(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	if code, _ := put("/v1/users/ana/threads/none/context", `{"genres":[],"titleType":"","minYear":null,"maxYear":null,"people":[],"freeText":"","isAdult":false,"count":3,"excludedTitleIds":[]}`); code != 404 {
		t.Errorf("unknown thread: %d, want 404", code)
	}
	post(t, ts.URL+"/v1/chat", `{"user":"ana","thread":"t1","message":"comedy movies from 2010 onward"}`)
	if code, body := put("/v1/users/ana/threads/t1/context", `{"genres":[],"titleType":"","minYear":2020,"maxYear":2010,"people":[],"freeText":"","isAdult":false,"count":3,"excludedTitleIds":[]}`); code != 400 {
		t.Errorf("reversed years: %d %v, want 400", code, body)
	}
	// Removing the genre and year chips widens the next turn.
	code, body := put("/v1/users/ana/threads/t1/context", `{"genres":[],"titleType":"movie","minYear":null,"maxYear":null,"people":[],"freeText":"","isAdult":false,"count":3,"excludedTitleIds":[]}`)
	if code != 200 || len(body["genres"].([]any)) != 0 {
		t.Fatalf("set context = %d %v", code, body)
	}
	_, body = post(t, ts.URL+"/v1/chat", `{"user":"ana","thread":"t1","message":"different ones"}`)
	if n := len(body["titles"].([]any)); n != 1 || body["titles"].([]any)[0].(map[string]any)["id"] != "b" {
		t.Errorf("after removing the chips the next turn shows %v, want the drama", body["titles"])
	}
}
