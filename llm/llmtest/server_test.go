package llmtest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento/llm/llmtest"
)

func post(tb testing.TB, url string, body any) (int, http.Header, []byte) {
	tb.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		tb.Fatal(err)
	}
	res, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return res.StatusCode, res.Header, out
}

func chatBody(task string) map[string]any {
	body := map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": "hi"}}}
	if task != "" {
		body["response_format"] = map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": task, "strict": true, "schema": map[string]any{}}}
	}
	return body
}

func content(tb testing.TB, body []byte) string {
	tb.Helper()
	var c struct {
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &c); err != nil || len(c.Choices) != 1 {
		tb.Fatalf("not a chat completion: %s", body)
	}
	return c.Model + ":" + c.Choices[0].Message.Content
}

func TestQueues(t *testing.T) {
	s := llmtest.New(t)
	s.Enqueue(llmtest.ChatPath, llmtest.Chat("path 1"), llmtest.Chat("path 2"))
	s.EnqueueTask("extract_facts", llmtest.Chat("task 1"))

	var got []string
	for _, task := range []string{"extract_facts", "extract_facts", ""} {
		status, _, body := post(t, s.URL+llmtest.ChatPath, chatBody(task))
		if status != http.StatusOK {
			t.Fatalf("status %d: %s", status, body)
		}
		got = append(got, content(t, body))
	}
	want := []string{"m:task 1", "m:path 1", "m:path 2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers mismatch (-want +got):\n%s", diff)
	}
	if s.Pending() != 0 {
		t.Errorf("pending = %d, want 0", s.Pending())
	}

	status, _, body := post(t, s.URL+llmtest.ChatPath, chatBody("summarise"))
	if status != http.StatusBadRequest || !strings.Contains(string(body), `no scripted response for POST /chat/completions (task \"summarise\")`) {
		t.Errorf("unscripted request = %d %s, want 400 naming the task", status, body)
	}

	reqs := s.Requests()
	if len(reqs) != 4 || reqs[0].Task != "extract_facts" || reqs[2].Task != "" || reqs[3].Task != "summarise" {
		t.Errorf("recorded requests = %+v", reqs)
	}
	if c, err := reqs[0].Chat(); err != nil || c.Messages[0].Content != "hi" || c.ResponseFormat.JSONSchema.Name != "extract_facts" {
		t.Errorf("decoded request = %+v, %v", c, err)
	}
}

func TestErrorsAndHeaders(t *testing.T) {
	s := llmtest.New(t)
	s.Enqueue(llmtest.ChatPath, llmtest.RateLimited("7"), llmtest.Raw(502, "text/plain", "bad gateway"))
	status, h, body := post(t, s.URL+llmtest.ChatPath, chatBody(""))
	if status != 429 || h.Get("Retry-After") != "7" || !strings.Contains(string(body), `"message":"Rate limit reached`) {
		t.Errorf("rate limited = %d %v %s", status, h, body)
	}
	status, h, body = post(t, s.URL+llmtest.ChatPath, chatBody(""))
	if status != 502 || h.Get("Content-Type") != "text/plain" || string(body) != "bad gateway" {
		t.Errorf("raw = %d %v %s", status, h, body)
	}
	status, _, _ = post(t, s.URL+"/models", nil)
	if status != http.StatusNotFound {
		t.Errorf("unknown endpoint = %d, want 404", status)
	}
}

func TestEmbeddings(t *testing.T) {
	s := llmtest.New(t)
	s.Enqueue(llmtest.EmbedPath, llmtest.Embeddings([]float32{1, 2}))
	s.AutoEmbed(4)
	type resp struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
		Model string `json:"model"`
	}
	decode := func(body []byte) resp {
		var r resp
		if err := json.Unmarshal(body, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	_, _, body := post(t, s.URL+llmtest.EmbedPath, map[string]any{"model": "e", "input": []string{"x"}})
	if r := decode(body); r.Model != "e" || len(r.Data) != 1 || len(r.Data[0].Embedding) != 2 {
		t.Errorf("scripted embeddings = %s", body)
	}
	_, _, a := post(t, s.URL+llmtest.EmbedPath, map[string]any{"model": "e", "input": []string{"x", "y"}})
	_, _, b := post(t, s.URL+llmtest.EmbedPath, map[string]any{"model": "e", "input": []string{"x"}})
	ra, rb := decode(a), decode(b)
	if len(ra.Data) != 2 || len(ra.Data[1].Embedding) != 4 || ra.Data[1].Index != 1 {
		t.Fatalf("auto embeddings = %s", a)
	}
	if diff := cmp.Diff(ra.Data[0].Embedding, rb.Data[0].Embedding); diff != "" {
		t.Errorf("auto embedding of the same text differs:\n%s", diff)
	}
	if cmp.Equal(ra.Data[0].Embedding, ra.Data[1].Embedding) {
		t.Error("auto embeddings of different texts are equal")
	}
}

func TestDefault(t *testing.T) {
	s := llmtest.New(t)
	s.Default("summarise", llmtest.Chat("always"))
	s.EnqueueTask("summarise", llmtest.Chat("queued"))
	s.Enqueue(llmtest.ChatPath, llmtest.Chat("path"))

	var got []string
	for _, task := range []string{"summarise", "summarise", "summarise", "extract_facts"} {
		_, _, body := post(t, s.URL+llmtest.ChatPath, chatBody(task))
		got = append(got, content(t, body))
	}
	want := []string{"m:queued", "m:always", "m:always", "m:path"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers mismatch (-want +got):\n%s", diff)
	}
}

func TestHoldAndOnRequest(t *testing.T) {
	s := llmtest.New(t)
	arrived := make(chan llmtest.Request, 1)
	s.OnRequest(func(r llmtest.Request) { arrived <- r })
	release := make(chan struct{})
	s.Enqueue(llmtest.ChatPath, llmtest.Chat("held").WithHold(release))

	answered := make(chan string, 1)
	go func() {
		_, _, body := post(t, s.URL+llmtest.ChatPath, chatBody("summarise"))
		answered <- content(t, body)
	}()
	if r := <-arrived; r.Task != "summarise" {
		t.Errorf("arrived task = %q, want summarise", r.Task)
	}
	select {
	case got := <-answered:
		t.Fatalf("answered %q before the hold was released", got)
	default:
	}
	close(release)
	if got := <-answered; got != "m:held" {
		t.Errorf("answer = %q, want m:held", got)
	}
}
