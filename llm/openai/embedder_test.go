package openai_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/llm/llmtest"
	"github.com/memento-ai/memento/llm/openai"
)

func newEmbedder(tb testing.TB, srv *llmtest.Server, dim int) *openai.Embedder {
	tb.Helper()
	e, err := openai.NewEmbedder(openai.Config{BaseURL: srv.URL, EmbedModel: "test-embed", EmbedDim: dim})
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

func TestEmbedNormalises(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(llmtest.EmbedPath, llmtest.Embeddings([]float32{3, 4}, []float32{0, 0}, []float32{-2, 0}))
	e := newEmbedder(t, srv, 0)
	if got, want := e.ID(), "openai/test-embed/0"; got != want {
		t.Errorf("ID before the first call = %q, want %q", got, want)
	}
	got, err := e.Embed(context.Background(), []string{"a", "", "c"})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float32{{0.6, 0.8}, {0, 0}, {-1, 0}}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-6)); diff != "" {
		t.Errorf("vectors mismatch (-want +got):\n%s", diff)
	}
	if got, want := e.ID(), "openai/test-embed/2"; got != want {
		t.Errorf("ID = %q, want %q", got, want)
	}
	req, err := srv.Requests()[0].Embed()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(embedRequest("test-embed", "a", " ", "c"), req); diff != "" {
		t.Errorf("request mismatch (-want +got):\n%s", diff)
	}
}

func embedRequest(model string, input ...string) llmtest.EmbedRequest {
	return llmtest.EmbedRequest{Model: model, Input: input}
}

func TestEmbedBatches(t *testing.T) {
	srv := llmtest.New(t)
	srv.AutoEmbed(8)
	e := newEmbedder(t, srv, 8)
	texts := make([]string, 130)
	for i := range texts {
		texts[i] = fmt.Sprintf("text %d", i)
	}
	got, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(texts) {
		t.Fatalf("got %d vectors, want %d", len(got), len(texts))
	}
	for i, v := range got {
		var sum float64
		for _, x := range v {
			sum += float64(x) * float64(x)
		}
		if math.Abs(sum-1) > 1e-5 {
			t.Errorf("vector %d has squared norm %v, want 1", i, sum)
		}
	}
	var sizes []int
	seen := map[string]bool{}
	for _, r := range srv.Requests() {
		req, err := r.Embed()
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(req.Input))
		for _, in := range req.Input {
			seen[in] = true
		}
	}
	if diff := cmp.Diff([]int{2, 64, 64}, sizes, cmpopts.SortSlices(func(a, b int) bool { return a < b })); diff != "" {
		t.Errorf("batch sizes mismatch (-want +got):\n%s", diff)
	}
	if len(seen) != len(texts) {
		t.Errorf("server saw %d distinct texts, want %d", len(seen), len(texts))
	}
	// The same text embeds to the same vector, in whichever batch.
	again, err := e.Embed(context.Background(), []string{texts[100]})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got[100], again[0]); diff != "" {
		t.Errorf("vector of the same text differs:\n%s", diff)
	}
	if u := e.Usage()[openai.TaskEmbed]; u.Calls != 2 || u.PromptTokens != 131 {
		t.Errorf("usage = %+v, want 2 calls and 131 tokens", u)
	}
}

func TestEmbedErrors(t *testing.T) {
	tests := []struct {
		name string
		dim  int
		resp llmtest.Response
		code string
	}{
		{"wrong dimension", 3, llmtest.Embeddings([]float32{1, 0}), memento.EUPSTREAM},
		{"mixed dimensions", 0, llmtest.Embeddings([]float32{1, 0}, []float32{1, 0, 0}), memento.EUPSTREAM},
		{"missing vector", 0, llmtest.Embeddings([]float32{1, 0}), memento.EUPSTREAM},
		{"server down", 0, llmtest.Error(401, "no key"), memento.EUNAVAILABLE},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Enqueue(llmtest.EmbedPath, tt.resp)
			e := newEmbedder(t, srv, tt.dim)
			texts := []string{"a", "b"}
			if tt.name == "wrong dimension" {
				texts = texts[:1]
			}
			_, err := e.Embed(context.Background(), texts)
			if got := memento.ErrorCode(err); got != tt.code {
				t.Errorf("error = %v, want code %s", err, tt.code)
			}
		})
	}
}

func TestEmbedNothing(t *testing.T) {
	srv := llmtest.New(t)
	got, err := newEmbedder(t, srv, 0).Embed(context.Background(), nil)
	if err != nil || len(got) != 0 {
		t.Errorf("Embed(nil) = %v, %v; want nothing", got, err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("requests = %d, want 0", n)
	}
}

func TestCheck(t *testing.T) {
	t.Run("json_schema supported", func(t *testing.T) {
		f := newFixture(t, nil)
		f.srv.AutoEmbed(16)
		f.srv.EnqueueTask(string(openai.TaskCheck), llmtest.ChatJSON(map[string]any{"ok": true}))
		r, err := f.model.Check(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		want := &openai.CheckResult{BaseURL: f.srv.URL, Model: "test-model", StructuredOutput: openai.StructuredJSONSchema,
			JSONSchema: true, EmbedModel: "test-embed", EmbedDim: 16}
		if diff := cmp.Diff(want, r, cmpopts.IgnoreFields(openai.CheckResult{}, "Latency", "EmbedLatency")); diff != "" {
			t.Errorf("check mismatch (-want +got):\n%s", diff)
		}
		if got := f.model.Embedder().ID(); got != "openai/test-embed/16" {
			t.Errorf("embedder ID after check = %q", got)
		}
	})
	t.Run("json_object fallback", func(t *testing.T) {
		f := newFixture(t, func(c *openai.Config) { c.EmbedModel = "" })
		f.srv.Enqueue(llmtest.ChatPath, llmtest.Error(400, "response_format json_schema unsupported"), llmtest.Chat(`{"ok": true}`))
		r, err := f.model.Check(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if r.JSONSchema || r.StructuredOutput != openai.StructuredJSONObject || r.EmbedDim != 0 {
			t.Errorf("check = %+v, want json_object and no embedder", r)
		}
	})
	t.Run("server down", func(t *testing.T) {
		f := newFixture(t, func(c *openai.Config) { c.MaxRetries = -1 })
		f.srv.Enqueue(llmtest.ChatPath, llmtest.Error(503, "loading model"))
		if _, err := f.model.Check(context.Background()); memento.ErrorCode(err) != memento.EUNAVAILABLE {
			t.Errorf("error = %v, want EUNAVAILABLE", err)
		}
		if n := len(f.srv.Requests()); n != 1 {
			t.Errorf("requests = %d, want 1 with retries disabled", n)
		}
	})
}

func TestConfigValidate(t *testing.T) {
	ok := openai.Config{BaseURL: "http://localhost:11434/v1", Model: "llama3.2"}
	tests := []struct {
		name   string
		adjust func(*openai.Config)
		want   string // "" for valid
	}{
		{"valid", func(*openai.Config) {}, ""},
		{"embed only", func(c *openai.Config) { c.Model, c.EmbedModel = "", "nomic-embed-text" }, ""},
		{"no URL", func(c *openai.Config) { c.BaseURL = "" }, `MEMENTO_LLM_BASE_URL must be an http(s) URL, got ""`},
		{"not a URL", func(c *openai.Config) { c.BaseURL = "x" }, `MEMENTO_LLM_BASE_URL must be an http(s) URL, got "x"`},
		{"ftp", func(c *openai.Config) { c.BaseURL = "ftp://host/v1" }, `MEMENTO_LLM_BASE_URL must be an http(s) URL, got "ftp://host/v1"`},
		{"credentials in URL", func(c *openai.Config) { c.BaseURL = "https://user:pw@host/v1" }, "MEMENTO_LLM_BASE_URL must not hold credentials; set MEMENTO_LLM_API_KEY instead"},
		{"no model", func(c *openai.Config) { c.Model = "" }, "MEMENTO_LLM_MODEL or MEMENTO_EMBED_MODEL must name a model"},
		{"negative timeout", func(c *openai.Config) { c.Timeout = -1 }, "LLM timeout must not be negative, got -1ns"},
		{"negative concurrency", func(c *openai.Config) { c.Concurrency = -2 }, "LLM concurrency must not be negative, got -2"},
		{"negative dim", func(c *openai.Config) { c.EmbedDim = -1 }, "embedding dimension must not be negative, got -1"},
		{"bad mode", func(c *openai.Config) { c.StructuredOutput = "xml" }, `LLM structured output must be "auto", "json_schema" or "json_object", got "xml"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			tt.adjust(&cfg)
			err := cfg.Validate()
			if tt.want == "" {
				if err != nil {
					t.Errorf("Validate() = %v, want nil", err)
				}
				return
			}
			if memento.ErrorCode(err) != memento.EINVALID || memento.ErrorMessage(err) != tt.want {
				t.Errorf("Validate() = %v, want EINVALID %q", err, tt.want)
			}
		})
	}
	if _, err := openai.New(openai.Config{BaseURL: "http://h/v1", EmbedModel: "e"}); memento.ErrorMessage(err) != "MEMENTO_LLM_MODEL must name a chat model" {
		t.Errorf("New without a chat model = %v", err)
	}
	if _, err := openai.NewEmbedder(ok); memento.ErrorMessage(err) != "MEMENTO_EMBED_MODEL must name an embedding model" {
		t.Errorf("NewEmbedder without an embedding model = %v", err)
	}
	m, err := openai.New(ok)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Name(); got != "openai/llama3.2" {
		t.Errorf("Name() = %q", got)
	}
	if m.Embedder() != nil {
		t.Error("Embedder() is set without an embedding model")
	}
}
