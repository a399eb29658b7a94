package openai_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memento-ai/memento/llm/llmtest"
	"github.com/memento-ai/memento/llm/openai"
)

// sleeps records the waits between retries and returns at once, so retry
// tests take no time.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.d)
}

// fixture is a Model wired to a scripted server, with recorded sleeps, a
// jitter that always waits the full ceiling, and a private registry.
type fixture struct {
	srv    *llmtest.Server
	model  *openai.Model
	sleeps *sleeps
	reg    *prometheus.Registry
}

func newFixture(tb testing.TB, adjust func(*openai.Config), opts ...openai.Option) *fixture {
	tb.Helper()
	srv := llmtest.New(tb)
	cfg := openai.Config{BaseURL: srv.URL, Model: "test-model", EmbedModel: "test-embed"}
	if adjust != nil {
		adjust(&cfg)
	}
	f := &fixture{srv: srv, sleeps: &sleeps{}, reg: prometheus.NewRegistry()}
	opts = append([]openai.Option{
		openai.WithSleep(f.sleeps.sleep),
		openai.WithJitter(func(ceiling time.Duration) time.Duration { return ceiling }),
		openai.WithRegisterer(f.reg),
	}, opts...)
	m, err := openai.New(cfg, opts...)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	f.model = m
	return f
}

// chat decodes the i-th request the server received as a chat request.
func (f *fixture) chat(tb testing.TB, i int) llmtest.ChatRequest {
	tb.Helper()
	reqs := f.srv.Requests()
	if i >= len(reqs) {
		tb.Fatalf("server received %d requests, want at least %d", len(reqs), i+1)
	}
	c, err := reqs[i].Chat()
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func ptr[T any](v T) *T { return &v }
