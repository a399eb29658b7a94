package torture

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"sort"
	"sync"
	"time"
)

// FaultRates are the shares of model requests (0 to 1) that get each
// fault; the rest are answered well. They are drawn in this order, so
// their sum must not exceed 1.
type FaultRates struct {
	// ServerError answers 500, 502 or 503 with an OpenAI error body.
	ServerError float64 `json:"serverError"`
	// Timeout never answers: the request hangs until the client gives
	// up, the server heals or HangMax passes, and then the connection is
	// dropped.
	Timeout float64 `json:"timeout"`
	// Malformed answers 200 with JSON cut off half-way.
	Malformed float64 `json:"malformed"`
	// MissingField answers 200 with well-formed JSON that lacks a
	// required field: of the task's schema when the request has one, else
	// of the completion (no choices, no embedding).
	MissingField float64 `json:"missingField"`
	// Slow answers well after SlowDelay.
	Slow float64 `json:"slow"`
}

// DefaultFaultRates fail about 40 % of the calls, a model server far
// worse than any real one.
var DefaultFaultRates = FaultRates{ServerError: 0.10, Timeout: 0.03, Malformed: 0.10, MissingField: 0.10, Slow: 0.07}

// Validate checks that every rate is a share and that they add up to at
// most 1.
func (r FaultRates) Validate() error {
	sum := 0.0
	for _, f := range []struct {
		name string
		v    float64
	}{{"server error", r.ServerError}, {"timeout", r.Timeout}, {"malformed", r.Malformed}, {"missing field", r.MissingField}, {"slow", r.Slow}} {
		if f.v < 0 || f.v > 1 || math.IsNaN(f.v) {
			return fmt.Errorf("%s rate must be between 0 and 1, got %v", f.name, f.v)
		}
		sum += f.v
	}
	if sum > 1+1e-9 {
		return fmt.Errorf("fault rates add up to %.2f, more than 1", sum)
	}
	return nil
}

// The faults a FaultServer injects, as its counts name them; "ok" is a
// good answer.
const (
	FaultNone         = "ok"
	FaultServerError  = "serverError"
	FaultTimeout      = "timeout"
	FaultMalformed    = "malformed"
	FaultMissingField = "missingField"
	FaultSlow         = "slow"
)

// FaultServer is an OpenAI-compatible model server on loopback that
// answers chat completions and embeddings, well or with a fault at the
// configured rates. A good chat answer is the smallest value the
// request's JSON schema accepts (the task's output schema, sent as
// response_format), or a short reply when there is none; a good embedding
// is a deterministic vector derived from the input's hash.
type FaultServer struct {
	// URL is the base URL to configure a client with, ending in /v1.
	URL string
	// SlowDelay is how long a slow answer waits; default 2s.
	SlowDelay time.Duration
	// HangMax bounds a timeout fault; default 2 minutes.
	HangMax time.Duration
	// EmbedDim is the dimension of the vectors; default 64.
	EmbedDim int

	ln   net.Listener
	srv  *http.Server
	heal chan struct{}

	mu     sync.Mutex
	rates  FaultRates
	rng    *rand.Rand
	counts map[string]map[string]int // path -> fault -> requests
	healed bool
}

// NewFaultServer starts a fault server on 127.0.0.1 with a free port.
// seed makes the sequence of faults repeatable for the same sequence of
// requests.
func NewFaultServer(rates FaultRates, seed uint64) (*FaultServer, error) {
	if err := rates.Validate(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start the fault server: %w", err)
	}
	s := &FaultServer{
		URL:       "http://" + ln.Addr().String() + "/v1",
		SlowDelay: 2 * time.Second,
		HangMax:   2 * time.Minute,
		EmbedDim:  64,
		ln:        ln,
		heal:      make(chan struct{}),
		rates:     rates,
		rng:       rand.New(rand.NewPCG(seed, 0x6661756c7473)),
		counts:    map[string]map[string]int{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("POST /v1/embeddings", s.embeddings)
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		writeJSONBody(w, http.StatusOK, map[string]any{"object": "list", "data": []map[string]string{{"id": "torture", "object": "model"}}})
	})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server, dropping requests that hang.
func (s *FaultServer) Close() error {
	s.Heal()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		return s.srv.Close()
	}
	return nil
}

// Heal turns every fault off from now on and drops the requests that
// hang, as a model server coming back would.
func (s *FaultServer) Heal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rates = FaultRates{}
	if !s.healed {
		s.healed = true
		close(s.heal)
	}
}

// Counts returns, per endpoint path, how many requests got each fault.
func (s *FaultServer) Counts() map[string]map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]map[string]int{}
	for p, m := range s.counts {
		out[p] = maps(m)
	}
	return out
}

// draw picks the fault of one request and counts it.
func (s *FaultServer) draw(path string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	x := s.rng.Float64()
	fault := FaultNone
	for _, f := range []struct {
		name string
		rate float64
	}{{FaultServerError, s.rates.ServerError}, {FaultTimeout, s.rates.Timeout}, {FaultMalformed, s.rates.Malformed}, {FaultMissingField, s.rates.MissingField}, {FaultSlow, s.rates.Slow}} {
		if x < f.rate {
			fault = f.name
			break
		}
		x -= f.rate
	}
	if s.counts[path] == nil {
		s.counts[path] = map[string]int{}
	}
	s.counts[path][fault]++
	return fault
}

// common handles the faults that do not depend on the endpoint; it
// reports whether the request is answered already.
func (s *FaultServer) common(w http.ResponseWriter, r *http.Request, fault string) bool {
	switch fault {
	case FaultServerError:
		codes := []int{http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable}
		s.mu.Lock()
		code := codes[s.rng.IntN(len(codes))]
		s.mu.Unlock()
		writeJSONBody(w, code, map[string]any{"error": map[string]any{"message": "torture: injected server error", "type": "server_error"}})
		return true
	case FaultTimeout:
		t := time.NewTimer(s.HangMax)
		defer t.Stop()
		select {
		case <-r.Context().Done():
		case <-s.heal:
		case <-t.C:
		}
		// Drop the connection without an answer.
		panic(http.ErrAbortHandler)
	case FaultSlow:
		t := time.NewTimer(s.SlowDelay)
		defer t.Stop()
		select {
		case <-r.Context().Done():
			return true
		case <-t.C:
		}
	}
	return false
}

func (s *FaultServer) chat(w http.ResponseWriter, r *http.Request) {
	fault := s.draw("/chat/completions")
	var req struct {
		Model          string `json:"model"`
		ResponseFormat *struct {
			Type       string `json:"type"`
			JSONSchema *struct {
				Name   string          `json:"name"`
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		writeJSONBody(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": "torture: unreadable request: " + err.Error(), "type": "invalid_request_error"}})
		return
	}
	if s.common(w, r, fault) {
		return
	}
	content := "Here are a few titles you might enjoy."
	if rf := req.ResponseFormat; rf != nil {
		var schema map[string]any
		if rf.JSONSchema != nil && len(rf.JSONSchema.Schema) > 0 {
			if err := json.Unmarshal(rf.JSONSchema.Schema, &schema); err != nil {
				writeJSONBody(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": "torture: unreadable schema: " + err.Error()}})
				return
			}
		}
		v := minimalValue(schema)
		if fault == FaultMissingField {
			v = dropRequired(schema, v)
		}
		b, _ := json.Marshal(v)
		content = string(b)
	}
	answer := map[string]any{
		"id": "chatcmpl-torture", "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}},
		"usage":   map[string]int{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
	}
	if fault == FaultMissingField && req.ResponseFormat == nil {
		delete(answer, "choices")
	}
	s.finish(w, fault, answer)
}

func (s *FaultServer) embeddings(w http.ResponseWriter, r *http.Request) {
	fault := s.draw("/embeddings")
	var req struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	var inputs []string
	if err == nil {
		var one string
		if json.Unmarshal(req.Input, &one) == nil {
			inputs = []string{one}
		} else {
			err = json.Unmarshal(req.Input, &inputs)
		}
	}
	if err != nil {
		writeJSONBody(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": "torture: unreadable embeddings request: " + err.Error(), "type": "invalid_request_error"}})
		return
	}
	if s.common(w, r, fault) {
		return
	}
	data := make([]map[string]any, len(inputs))
	for i, in := range inputs {
		item := map[string]any{"object": "embedding", "index": i, "embedding": hashVector(in, s.EmbedDim)}
		if fault == FaultMissingField {
			delete(item, "embedding")
		}
		data[i] = item
	}
	s.finish(w, fault, map[string]any{"object": "list", "model": req.Model, "data": data, "usage": map[string]int{"prompt_tokens": len(inputs), "total_tokens": len(inputs)}})
}

// finish writes a 200 answer, cut in half for a malformed fault.
func (s *FaultServer) finish(w http.ResponseWriter, fault string, v any) {
	b, _ := json.Marshal(v)
	if fault == FaultMalformed {
		b = b[:len(b)/2]
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

func writeJSONBody(w http.ResponseWriter, code int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

func fnvHash(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// hashVector is a deterministic unit vector of dim dimensions derived
// from text, so equal inputs embed equally.
func hashVector(text string, dim int) []float32 {
	rng := rand.New(rand.NewPCG(uint64(fnvHash(text)), uint64(len(text))))
	v := make([]float32, dim)
	var norm float64
	for i := range v {
		x := rng.NormFloat64()
		v[i] = float32(x)
		norm += x * x
	}
	norm = math.Sqrt(norm)
	for i := range v {
		v[i] = float32(float64(v[i]) / norm)
	}
	return v
}

// minimalValue is the simplest value a JSON schema (decoded into maps)
// accepts: null where null is allowed, the first enum value, the minimum
// of a number, false, a short sentence and empty lists, and an object with
// every property. A nil schema gives an empty object.
func minimalValue(schema map[string]any) any {
	if schema == nil {
		return map[string]any{}
	}
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		for _, e := range enum {
			if e == nil {
				return nil
			}
		}
		return enum[0]
	}
	types := schemaTypes(schema)
	for _, t := range types {
		if t == "null" {
			return nil
		}
	}
	t := ""
	if len(types) > 0 {
		t = types[0]
	}
	switch t {
	case "object", "":
		out := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		for name, p := range props {
			ps, _ := p.(map[string]any)
			out[name] = minimalValue(ps)
		}
		return out
	case "array":
		return []any{}
	case "string":
		// Not empty: an empty reply or reason is unusable by design.
		return "Here are a few titles you might enjoy."
	case "boolean":
		return false
	case "integer", "number":
		if m, ok := schema["minimum"].(float64); ok {
			if t == "integer" {
				return math.Ceil(m)
			}
			return m
		}
		return 0
	}
	return nil
}

func schemaTypes(schema map[string]any) []string {
	switch t := schema["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// dropRequired removes the first required property (in name order) of an
// object value, making it fail the schema; a value with none is returned
// as it is.
func dropRequired(schema map[string]any, v any) any {
	obj, ok := v.(map[string]any)
	if !ok || schema == nil {
		return v
	}
	var req []string
	if list, ok := schema["required"].([]any); ok {
		for _, x := range list {
			if s, ok := x.(string); ok {
				req = append(req, s)
			}
		}
	}
	if len(req) == 0 {
		// A strict schema requires every property; say so even when it
		// does not list them.
		for k := range obj {
			req = append(req, k)
		}
	}
	sort.Strings(req)
	for _, k := range req {
		if _, ok := obj[k]; ok {
			delete(obj, k)
			return obj
		}
	}
	return v
}
