package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// The endpoints the server answers, relative to its URL.
const (
	ChatPath  = "/chat/completions"
	EmbedPath = "/embeddings"
)

// Server is a scripted OpenAI-compatible server. It is safe for concurrent
// use: the client under test may send requests from many goroutines while
// the test enqueues and inspects.
type Server struct {
	// URL is the base URL to configure a client with, ending in "/v1" as
	// OpenAI's does.
	URL string

	srv *httptest.Server

	mu          sync.Mutex
	paths       map[string][]Response
	tasks       map[string][]Response
	defaults    map[string]Response
	onRequest   func(Request)
	requests    []Request
	autoDim     int
	inFlight    int
	maxInFlight int
}

// New starts a server and stops it when the test ends.
func New(tb testing.TB) *Server {
	tb.Helper()
	s := &Server{paths: map[string][]Response{}, tasks: map[string][]Response{}, defaults: map[string]Response{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/v1"
	tb.Cleanup(s.Close)
	return s
}

// Close stops the server. It waits for requests in progress, which end
// early when their client goes away.
func (s *Server) Close() { s.srv.Close() }

// Enqueue appends responses to the queue of an endpoint (ChatPath or
// EmbedPath). They answer requests in order.
func (s *Server) Enqueue(path string, rs ...Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.paths[path] = append(s.paths[path], rs...)
}

// EnqueueTask appends responses to the queue of a chat task: requests whose
// response_format names a JSON schema with that name take from it before
// the endpoint's queue.
func (s *Server) EnqueueTask(task string, rs ...Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tasks[task] = append(s.tasks[task], rs...)
}

// Default makes r the answer to every request of a chat task that the
// task's queue does not cover, before the endpoint's queue is tried: a
// server that always answers one task the same way, well or badly, however
// often it is asked.
func (s *Server) Default(task string, r Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.defaults[task] = r
}

// OnRequest makes the server call fn with every request as it arrives,
// before the answer (and its delay or hold), so a test can wait on a
// channel until a request is in flight. fn runs on the server's goroutine
// and must not block for long.
func (s *Server) OnRequest(fn func(Request)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onRequest = fn
}

// AutoEmbed makes the server answer embedding requests that no script
// covers with deterministic, unnormalised vectors of dim dimensions derived
// from each input's hash; 0 turns it off.
func (s *Server) AutoEmbed(dim int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.autoDim = dim
}

// Pending reports how many scripted responses are still queued, over all
// endpoints and tasks, so a test can check that its script was used up.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, q := range s.paths {
		n += len(q)
	}
	for _, q := range s.tasks {
		n += len(q)
	}
	return n
}

// Requests returns every request received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// MaxInFlight is the largest number of requests the server was handling at
// the same moment, to check a client's concurrency limit.
func (s *Server) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInFlight
}

// Request is one request the server received.
type Request struct {
	Method string
	Path   string // relative to URL, such as ChatPath
	Header http.Header
	Body   []byte
	// Task is the name of the JSON schema a chat request asks for, or "".
	Task string
}

// ChatRequest is the part of a chat completion request tests look at.
type ChatRequest struct {
	Model          string          `json:"model"`
	Messages       []ChatMessage   `json:"messages"`
	ResponseFormat *ResponseFormat `json:"response_format"`
}

// ChatMessage is one message of a chat request. Content is the text of a
// plain string content.
type ChatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// ResponseFormat is the response_format of a chat request.
type ResponseFormat struct {
	Type       string `json:"type"`
	JSONSchema *struct {
		Name   string          `json:"name"`
		Strict bool            `json:"strict"`
		Schema json.RawMessage `json:"schema"`
	} `json:"json_schema"`
}

// Chat decodes the body of a chat completion request.
func (r Request) Chat() (ChatRequest, error) {
	var c ChatRequest
	if err := json.Unmarshal(r.Body, &c); err != nil {
		return c, fmt.Errorf("decode chat request: %w", err)
	}
	return c, nil
}

// EmbedRequest is the part of an embeddings request tests look at.
type EmbedRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

// Embed decodes the body of an embeddings request whose input is a list of
// strings.
func (r Request) Embed() (EmbedRequest, error) {
	var e EmbedRequest
	if err := json.Unmarshal(r.Body, &e); err != nil {
		return e, fmt.Errorf("decode embeddings request: %w", err)
	}
	return e, nil
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "llmtest: read body: "+err.Error())
		return
	}
	req := Request{
		Method: r.Method,
		Path:   strings.TrimPrefix(r.URL.Path, "/v1"),
		Header: r.Header.Clone(),
		Body:   body,
	}
	if req.Path == ChatPath {
		if c, err := req.Chat(); err == nil && c.ResponseFormat != nil && c.ResponseFormat.JSONSchema != nil {
			req.Task = c.ResponseFormat.JSONSchema.Name
		}
	}

	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.inFlight++
	s.maxInFlight = max(s.maxInFlight, s.inFlight)
	resp, ok := s.pop(req)
	autoDim := s.autoDim
	onRequest := s.onRequest
	s.mu.Unlock()
	if onRequest != nil {
		onRequest(req)
	}
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()

	switch {
	case ok:
	case req.Path == EmbedPath && autoDim > 0:
		resp = autoEmbedding(req, autoDim)
	case req.Path != ChatPath && req.Path != EmbedPath:
		writeError(w, http.StatusNotFound, fmt.Sprintf("llmtest: no endpoint %s %s", r.Method, req.Path))
		return
	default:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("llmtest: no scripted response for %s %s (task %q)", r.Method, req.Path, req.Task))
		return
	}

	if resp.Delay > 0 {
		t := time.NewTimer(resp.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if resp.Hold != nil {
		select {
		case <-resp.Hold:
		case <-r.Context().Done():
			return
		}
	}
	resp.write(w, req)
}

// pop takes the next response for req; s.mu is held.
func (s *Server) pop(req Request) (Response, bool) {
	if req.Task != "" {
		if q := s.tasks[req.Task]; len(q) > 0 {
			s.tasks[req.Task] = q[1:]
			return q[0], true
		}
		if r, ok := s.defaults[req.Task]; ok {
			return r, true
		}
	}
	if q := s.paths[req.Path]; len(q) > 0 {
		s.paths[req.Path] = q[1:]
		return q[0], true
	}
	return Response{}, false
}

// autoEmbedding answers an unscripted embeddings request with vectors
// seeded by a hash of each input.
func autoEmbedding(req Request, dim int) Response {
	e, err := req.Embed()
	if err != nil {
		return Error(http.StatusBadRequest, err.Error())
	}
	vecs := make([][]float32, len(e.Input))
	for i, text := range e.Input {
		h := fnv.New64a()
		h.Write([]byte(text))
		x := h.Sum64()
		v := make([]float32, dim)
		for j := range v {
			// xorshift: cheap, deterministic, spread over [-1, 1).
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			v[j] = float32(int64(x%2000)-1000) / 1000
		}
		vecs[i] = v
	}
	return Embeddings(vecs...)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	Error(status, msg).write(w, Request{})
}

// compactJSON is a helper for building bodies: it marshals v or, failing
// that, returns a JSON string describing the failure so the client sees it.
func compactJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"error": map[string]any{"message": "llmtest: " + err.Error()}})
	}
	return bytes.TrimSpace(b)
}
