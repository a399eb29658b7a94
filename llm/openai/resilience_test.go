package openai_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/llm/llmtest"
	"github.com/memento-ai/memento/llm/openai"
)

var factsReply = llmtest.ChatJSON(map[string]any{"facts": []any{map[string]any{"text": "loves westerns", "negated": false}}})

func extract(m *openai.Model) ([]memento.Fact, error) {
	return m.ExtractFacts(context.Background(), memento.ExtractInput{Message: "I love westerns"})
}

func TestRepair(t *testing.T) {
	tests := []struct {
		name    string
		first   llmtest.Response
		problem string // in the repair request
	}{
		{"malformed JSON", llmtest.Chat(`{"facts": [{"text": "loves westerns", "negated": false,}]}`), "malformed"},
		{"not closed", llmtest.Chat(`{"facts": [{"text": "loves westerns"`), "not closed"},
		{"no JSON", llmtest.Chat(`You love westerns.`), "no JSON object"},
		{"wrong type", llmtest.ChatJSON(map[string]any{"facts": "loves westerns"}), "$.facts must be an array"},
		{"missing field", llmtest.ChatJSON(map[string]any{"facts": []any{map[string]any{"negated": false}}}), `missing the required field "text"`},
		{"empty", llmtest.Chat(""), "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			f.srv.Enqueue(llmtest.ChatPath, tt.first, factsReply)
			got, err := extract(f.model)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]memento.Fact{{Text: "loves westerns"}}, got); diff != "" {
				t.Errorf("facts mismatch (-want +got):\n%s", diff)
			}
			req := f.chat(t, 1)
			if len(req.Messages) != 4 {
				t.Fatalf("repair request has %d messages, want 4", len(req.Messages))
			}
			if req.Messages[2].Role != "assistant" || req.Messages[3].Role != "user" {
				t.Errorf("repair request roles = %s, %s; want assistant, user", req.Messages[2].Role, req.Messages[3].Role)
			}
			if !strings.Contains(req.Messages[3].Content, tt.problem) {
				t.Errorf("repair request %q does not say %q", req.Messages[3].Content, tt.problem)
			}
			u := f.model.Usage()[openai.TaskExtractFacts]
			if u.Calls != 1 || u.Repairs != 1 || u.Errors != 0 {
				t.Errorf("usage = %+v, want 1 call, 1 repair, 0 errors", u)
			}
		})
	}
}

func TestTolerantParseNeedsNoRepair(t *testing.T) {
	replies := []string{
		"```json\n{\"facts\": [{\"text\": \"loves westerns\", \"negated\": false}]}\n```",
		"Here you go:\n{\"facts\": [{\"text\": \"loves westerns\", \"negated\": false}]}\nAnything else?",
		"<think>The user says {likes}...</think>{\"facts\": [{\"text\": \"loves westerns\", \"negated\": false, \"confidence\": 0.9}]}",
	}
	for _, reply := range replies {
		f := newFixture(t, nil)
		f.srv.Enqueue(llmtest.ChatPath, llmtest.Chat(reply))
		got, err := extract(f.model)
		if err != nil {
			t.Fatalf("reply %q: %v", reply, err)
		}
		if diff := cmp.Diff([]memento.Fact{{Text: "loves westerns"}}, got); diff != "" {
			t.Errorf("reply %q: facts mismatch (-want +got):\n%s", reply, diff)
		}
	}
}

func TestOutputErrorAfterRepair(t *testing.T) {
	tests := []struct {
		name     string
		replies  []llmtest.Response
		wantCode string
	}{
		{"schema-invalid twice", []llmtest.Response{
			llmtest.ChatJSON(map[string]any{"facts": []any{map[string]any{"text": 3}}}),
			llmtest.ChatJSON(map[string]any{"facts": []any{map[string]any{"text": true}}}),
		}, memento.EUPSTREAM},
		{"empty twice", []llmtest.Response{llmtest.Chat(""), llmtest.Chat("  ")}, memento.EUPSTREAM},
		{"cut off", []llmtest.Response{
			llmtest.Completion{Content: `{"facts": [`, FinishReason: "length"}.Response(),
			llmtest.Completion{Content: `{"facts": [{"te`, FinishReason: "length"}.Response(),
		}, memento.EUPSTREAM},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			f.srv.Enqueue(llmtest.ChatPath, tt.replies...)
			_, err := extract(f.model)
			var oe *openai.OutputError
			if !errors.As(err, &oe) {
				t.Fatalf("error = %v, want an *OutputError", err)
			}
			if oe.Task != openai.TaskExtractFacts || oe.Code != tt.wantCode {
				t.Errorf("OutputError task, code = %s, %s; want %s, %s", oe.Task, oe.Code, openai.TaskExtractFacts, tt.wantCode)
			}
			if got := memento.ErrorCode(err); got != tt.wantCode {
				t.Errorf("ErrorCode = %s, want %s", got, tt.wantCode)
			}
			if !strings.Contains(err.Error(), string(openai.TaskExtractFacts)) {
				t.Errorf("error %q does not name the task", err)
			}
			u := f.model.Usage()[openai.TaskExtractFacts]
			if u.Calls != 1 || u.Repairs != 1 || u.Errors != 1 {
				t.Errorf("usage = %+v, want 1 call, 1 repair, 1 error", u)
			}
		})
	}
}

func TestRetries(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		first     llmtest.Response
		wantSleep time.Duration
	}{
		{"429 Retry-After seconds", llmtest.RateLimited("2"), 2 * time.Second},
		{"429 Retry-After date", llmtest.RateLimited(now.Add(7 * time.Second).Format(http.TimeFormat)), 7 * time.Second},
		{"429 Retry-After-Ms", llmtest.Error(429, "slow down").WithHeader("Retry-After-Ms", "1500"), 1500 * time.Millisecond},
		{"429 without Retry-After", llmtest.Error(429, "slow down"), 500 * time.Millisecond},
		{"500", llmtest.Error(500, "boom"), 500 * time.Millisecond},
		{"502 plain text", llmtest.Raw(502, "text/html", "<html>Bad Gateway</html>"), 500 * time.Millisecond},
		{"503 with Retry-After", llmtest.Error(503, "overloaded").WithHeader("Retry-After", "3"), 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil, openai.WithClock(fixedClock{now}))
			f.srv.Enqueue(llmtest.ChatPath, tt.first, factsReply)
			if _, err := extract(f.model); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]time.Duration{tt.wantSleep}, f.sleeps.got()); diff != "" {
				t.Errorf("sleeps mismatch (-want +got):\n%s", diff)
			}
			if u := f.model.Usage()[openai.TaskExtractFacts]; u.Retries != 1 || u.Errors != 0 {
				t.Errorf("usage = %+v, want 1 retry and no error", u)
			}
		})
	}
}

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

// TestBackoffGrows checks exponential ceilings and the give-up after
// MaxRetries.
func TestBackoffGrows(t *testing.T) {
	f := newFixture(t, func(c *openai.Config) { c.MaxRetries = 3 })
	for range 4 {
		f.srv.Enqueue(llmtest.ChatPath, llmtest.Error(500, "boom"))
	}
	_, err := extract(f.model)
	if got := memento.ErrorCode(err); got != memento.EUNAVAILABLE {
		t.Fatalf("error = %v, want EUNAVAILABLE", err)
	}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}
	if diff := cmp.Diff(want, f.sleeps.got()); diff != "" {
		t.Errorf("sleeps mismatch (-want +got):\n%s", diff)
	}
	if n := len(f.srv.Requests()); n != 4 {
		t.Errorf("requests = %d, want 4", n)
	}
}

func TestNotRetried(t *testing.T) {
	tests := []struct {
		name     string
		resp     llmtest.Response
		wantCode string
	}{
		{"400", llmtest.Error(400, "context length exceeded"), memento.EUPSTREAM},
		{"401", llmtest.Error(401, "bad key"), memento.EUNAVAILABLE},
		{"404", llmtest.Error(404, "model not found"), memento.EUNAVAILABLE},
		{"429 asks for an hour", llmtest.RateLimited("3600"), memento.EUNAVAILABLE},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			f.srv.Enqueue(llmtest.ChatPath, tt.resp)
			_, err := extract(f.model)
			if got := memento.ErrorCode(err); got != tt.wantCode {
				t.Errorf("error = %v, want code %s", err, tt.wantCode)
			}
			if n := len(f.srv.Requests()); n != 1 {
				t.Errorf("requests = %d, want 1", n)
			}
			if f.model.StructuredOutput() != openai.StructuredJSONSchema {
				t.Error("an unrelated 4xx switched the model to json_object")
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	f := newFixture(t, func(c *openai.Config) {
		c.Timeout = 30 * time.Millisecond
		c.MaxRetries = 2
	})
	for range 3 {
		f.srv.Enqueue(llmtest.ChatPath, factsReply.WithDelay(5*time.Second))
	}
	start := time.Now()
	_, err := extract(f.model)
	if got := memento.ErrorCode(err); got != memento.EUNAVAILABLE {
		t.Fatalf("error = %v, want EUNAVAILABLE", err)
	}
	if !strings.Contains(err.Error(), "no answer within 30ms") {
		t.Errorf("error %q does not say it timed out", err)
	}
	if n := len(f.srv.Requests()); n != 3 {
		t.Errorf("requests = %d, want 3 (1 + 2 retries)", n)
	}
	if n := len(f.sleeps.got()); n != 2 {
		t.Errorf("sleeps = %d, want 2", n)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %s; the timeout was not applied per request", d)
	}
}

func TestContextCanceled(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.Enqueue(llmtest.ChatPath, factsReply.WithDelay(5*time.Second))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(20 * time.Millisecond)
		cancel()
	}()
	_, err := f.model.ExtractFacts(ctx, memento.ExtractInput{Message: "I love westerns"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled in its chain", err)
	}
	if n := len(f.sleeps.got()); n != 0 {
		t.Errorf("slept %d times after cancellation, want 0", n)
	}
}

func TestJSONObjectFallback(t *testing.T) {
	tests := []struct {
		name   string
		refuse llmtest.Response
	}{
		{"OpenAI style", llmtest.Error(400, "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.")},
		{"llama.cpp style", llmtest.Raw(400, "application/json", `{"error": "json_schema is not supported"}`)},
		{"vLLM style", llmtest.Raw(400, "application/json", `{"detail": "Unknown response format: json_schema"}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			f.srv.Enqueue(llmtest.ChatPath, tt.refuse, factsReply, factsReply)
			for i := range 2 {
				if _, err := extract(f.model); err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			reqs := f.srv.Requests()
			if len(reqs) != 3 {
				t.Fatalf("requests = %d, want 3: refused, fallback, next call", len(reqs))
			}
			for i := 1; i < 3; i++ {
				req := f.chat(t, i)
				if req.ResponseFormat == nil || req.ResponseFormat.Type != "json_object" {
					t.Errorf("request %d response_format = %+v, want json_object", i, req.ResponseFormat)
				}
				if !strings.Contains(req.Messages[0].Content, `"additionalProperties": false`) {
					t.Errorf("request %d system prompt does not spell out the schema", i)
				}
			}
			if got := f.model.StructuredOutput(); got != openai.StructuredJSONObject {
				t.Errorf("StructuredOutput = %s, want json_object", got)
			}
			if u := f.model.Usage()[openai.TaskExtractFacts]; u.Retries != 0 || u.Errors != 0 {
				t.Errorf("usage = %+v; the fallback is neither a retry nor an error", u)
			}
		})
	}
	t.Run("json_schema forced", func(t *testing.T) {
		f := newFixture(t, func(c *openai.Config) { c.StructuredOutput = openai.StructuredJSONSchema })
		f.srv.Enqueue(llmtest.ChatPath, tests[0].refuse)
		if _, err := extract(f.model); memento.ErrorCode(err) != memento.EUPSTREAM {
			t.Errorf("error = %v, want EUPSTREAM", err)
		}
	})
	t.Run("json_object configured", func(t *testing.T) {
		f := newFixture(t, func(c *openai.Config) { c.StructuredOutput = openai.StructuredJSONObject })
		f.srv.Enqueue(llmtest.ChatPath, factsReply)
		if _, err := extract(f.model); err != nil {
			t.Fatal(err)
		}
		if rf := f.chat(t, 0).ResponseFormat; rf == nil || rf.Type != "json_object" {
			t.Errorf("response_format = %+v, want json_object", rf)
		}
	})
}

func TestConcurrencyLimit(t *testing.T) {
	const limit, calls = 2, 8
	f := newFixture(t, func(c *openai.Config) { c.Concurrency = limit })
	for range calls {
		f.srv.Enqueue(llmtest.ChatPath, factsReply.WithDelay(20*time.Millisecond))
	}
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for range calls {
		wg.Go(func() {
			if _, err := extract(f.model); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := f.srv.MaxInFlight(); got > limit || got < 1 {
		t.Errorf("max in flight = %d, want between 1 and %d", got, limit)
	}
	if got := f.model.Usage()[openai.TaskExtractFacts].Calls; got != calls {
		t.Errorf("calls = %d, want %d", got, calls)
	}
}
