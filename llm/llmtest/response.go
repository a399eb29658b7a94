package llmtest

import (
	"encoding/json"
	"net/http"
	"time"
)

// Response is one scripted answer. Build them with Chat, ChatJSON,
// Completion, Error, RateLimited, Raw or Embeddings, and adjust them with
// WithDelay, WithHold and WithHeader.
type Response struct {
	// Status is the HTTP status; 0 means 200.
	Status int
	// Header is added to the response's headers.
	Header http.Header
	// Body is sent as is when the response was not built from a request.
	Body []byte
	// Delay holds the answer back, as a slow model would. It ends early
	// when the client goes away, so a client timeout is seen as such.
	Delay time.Duration
	// Hold, when not nil, holds the answer back until it is closed (or
	// the client goes away): a slow model whose pace the test sets with a
	// channel instead of a clock.
	Hold <-chan struct{}

	// build makes the body from the request, so that, for example, a
	// completion names the model that was asked for.
	build func(req Request) []byte
}

// WithDelay returns r answered after d.
func (r Response) WithDelay(d time.Duration) Response {
	r.Delay = d
	return r
}

// WithHold returns r answered once release is closed.
func (r Response) WithHold(release <-chan struct{}) Response {
	r.Hold = release
	return r
}

// WithHeader returns r with a header added.
func (r Response) WithHeader(key, value string) Response {
	h := r.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Add(key, value)
	r.Header = h
	return r
}

func (r Response) write(w http.ResponseWriter, req Request) {
	for k, vs := range r.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	body := r.Body
	if r.build != nil {
		body = r.build(req)
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	status := r.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// Completion is a chat completion to answer with. Zero token counts take
// 10 prompt and 5 completion tokens; an empty FinishReason is "stop".
type Completion struct {
	Content          string
	FinishReason     string
	PromptTokens     int
	CompletionTokens int
}

// Response returns the completion as a 200 response naming the model the
// request asked for.
func (c Completion) Response() Response {
	if c.FinishReason == "" {
		c.FinishReason = "stop"
	}
	if c.PromptTokens == 0 {
		c.PromptTokens = 10
	}
	if c.CompletionTokens == 0 {
		c.CompletionTokens = 5
	}
	return Response{build: func(req Request) []byte {
		model := "llmtest-model"
		if cr, err := req.Chat(); err == nil && cr.Model != "" {
			model = cr.Model
		}
		return compactJSON(map[string]any{
			"id":      "chatcmpl-llmtest",
			"object":  "chat.completion",
			"created": 1700000000,
			"model":   model,
			"choices": []any{map[string]any{
				"index":         0,
				"message":       map[string]any{"role": "assistant", "content": c.Content, "refusal": nil},
				"finish_reason": c.FinishReason,
				"logprobs":      nil,
			}},
			"usage": map[string]any{
				"prompt_tokens":     c.PromptTokens,
				"completion_tokens": c.CompletionTokens,
				"total_tokens":      c.PromptTokens + c.CompletionTokens,
			},
		})
	}}
}

// Chat answers a chat completion with content as the assistant's message.
func Chat(content string) Response { return Completion{Content: content}.Response() }

// ChatJSON answers a chat completion with v, marshalled to JSON, as the
// assistant's message.
func ChatJSON(v any) Response {
	b, err := json.Marshal(v)
	if err != nil {
		return Error(http.StatusInternalServerError, "llmtest: marshal scripted content: "+err.Error())
	}
	return Chat(string(b))
}

// Error answers with status and an OpenAI-style error body holding msg.
func Error(status int, msg string) Response {
	typ := "invalid_request_error"
	if status >= 500 {
		typ = "server_error"
	} else if status == http.StatusTooManyRequests {
		typ = "rate_limit_exceeded"
	}
	return Response{Status: status, Body: compactJSON(map[string]any{
		"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil},
	})}
}

// RateLimited answers 429 with the given Retry-After header: seconds
// ("2") or an HTTP date.
func RateLimited(retryAfter string) Response {
	return Error(http.StatusTooManyRequests, "Rate limit reached, please retry later.").WithHeader("Retry-After", retryAfter)
}

// Raw answers with status, content type and body exactly as given, for
// servers that do not speak OpenAI's error format.
func Raw(status int, contentType, body string) Response {
	return Response{Status: status, Body: []byte(body)}.WithHeader("Content-Type", contentType)
}

// Embeddings answers an embeddings request with the given vectors, in
// order. Token usage is one per vector.
func Embeddings(vecs ...[]float32) Response {
	data := make([]any, len(vecs))
	for i, v := range vecs {
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": v}
	}
	return Response{build: func(req Request) []byte {
		model := "llmtest-embed"
		if e, err := req.Embed(); err == nil && e.Model != "" {
			model = e.Model
		}
		return compactJSON(map[string]any{
			"object": "list",
			"data":   data,
			"model":  model,
			"usage":  map[string]any{"prompt_tokens": len(vecs), "total_tokens": len(vecs)},
		})
	}}
}
