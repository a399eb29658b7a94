package http_test

import (
	"slices"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/engine/enginetest"
	mhttp "github.com/memento-ai/memento/http"
	"github.com/memento-ai/memento/llm/fallback"
	"github.com/memento-ai/memento/llm/llmtest"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/llm/openai"
)

// TestChatWithAFaultyModel runs POST /v1/chat against model servers that
// fail in the ways real ones do. A model's fault never answers 500: an
// unusable answer is replaced by the offline model's, with a note, when a
// stand-in is configured, and is 502 EUPSTREAM when not; a server that
// cannot be reached is 503 EUNAVAILABLE.
func TestChatWithAFaultyModel(t *testing.T) {
	noRecognised := func(s *llmtest.Server) {
		a := llmtest.Answers()
		// Horror, not the comedies asked for: the answer the offline
		// stand-in gives is told apart by its genre.
		a[llmtest.TaskUnderstand]["genres"] = []string{"Horror"}
		delete(a[llmtest.TaskUnderstand], "recognised")
		s.AnswerAll(a, 0)
	}
	rejects := func(s *llmtest.Server) {
		s.AnswerAll(llmtest.Answers(), 0)
		s.Default(llmtest.TaskUnderstand, llmtest.Error(400, "This model's maximum context length is 4096 tokens."))
	}
	tests := []struct {
		name     string
		script   func(*llmtest.Server)
		down     bool // the server is closed before the chat
		standIn  bool
		wantCode int
		wantErr  string
	}{
		{name: "answer misses a required field, stand-in", script: noRecognised, standIn: true, wantCode: 200},
		{name: "server rejects the request, stand-in", script: rejects, standIn: true, wantCode: 200},
		{name: "answer misses a required field, no stand-in", script: noRecognised, wantCode: 502, wantErr: memento.EUPSTREAM},
		{name: "server rejects the request, no stand-in", script: rejects, wantCode: 502, wantErr: memento.EUPSTREAM},
		{name: "server down", script: func(*llmtest.Server) {}, down: true, standIn: true, wantCode: 503, wantErr: memento.EUNAVAILABLE},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t)
			tt.script(srv)
			if tt.down {
				srv.Close()
			}
			cat := catalog.New([]memento.Title{
				{ID: "a", Title: "Alpha", Type: "movie", Year: 1993, Genres: []string{"Comedy"}},
				{ID: "b", Title: "Beta", Type: "movie", Year: 1995, Genres: []string{"Comedy"}},
				{ID: "c", Title: "Gamma", Type: "movie", Year: 1997, Genres: []string{"Horror"}},
			})
			primary, err := openai.New(openai.Config{BaseURL: srv.URL, Model: "m", MaxRetries: -1}, openai.WithGenres(cat.Genres()))
			if err != nil {
				t.Fatal(err)
			}
			var model agent.Model = primary
			if tt.standIn {
				if model, err = fallback.New(primary, offline.New(offline.Options{Genres: cat.Genres()}), fallback.Options{}); err != nil {
					t.Fatal(err)
				}
			}
			db := enginetest.Open(t)
			ag := &agent.Agent{Catalog: cat, Threads: db, Model: model}
			ts := testServer(t, func(s *mhttp.Server) {
				s.Catalog = cat
				s.Routes = append(s.Routes, mhttp.RegisterChat(ag, db, db))
			})

			code, body := post(t, ts.URL+"/v1/chat", `{"user":"ana","thread":"t1","message":"three comedy movies from the 90s"}`)
			if code != tt.wantCode {
				t.Fatalf("chat = %d %v, want %d", code, body, tt.wantCode)
			}
			if tt.wantErr != "" {
				if got := body["error"].(map[string]any)["code"]; got != tt.wantErr {
					t.Errorf("error code = %v, want %s", got, tt.wantErr)
				}
				return
			}
			ac := body["activeContext"].(map[string]any)
			if genres, _ := ac["genres"].([]any); !slices.Equal(genres, []any{"Comedy"}) {
				t.Errorf("active context genres = %v, want the offline understanding's [Comedy]", ac["genres"])
			}
			var notes []string
			for _, n := range body["notes"].([]any) {
				notes = append(notes, n.(string))
			}
			if want := fallback.Note(memento.ModelTaskUnderstand); !slices.Contains(notes, want) {
				t.Errorf("notes = %q, want one saying %q", notes, want)
			}
			if titles := body["titles"].([]any); len(titles) != 2 {
				t.Errorf("titles = %v, want the two comedies", titles)
			}
		})
	}
}
