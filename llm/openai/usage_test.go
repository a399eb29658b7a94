package openai_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/llm/llmtest"
	"github.com/memento-ai/memento/llm/openai"
)

func TestUsageAndMetrics(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	reply := func(content string, prompt, completion int) llmtest.Response {
		return llmtest.Completion{Content: content, PromptTokens: prompt, CompletionTokens: completion}.Response()
	}
	f.srv.Enqueue(llmtest.ChatPath,
		// extract: retried once, then malformed, then repaired.
		llmtest.Error(500, "boom"),
		reply(`{"facts": [`, 100, 7),
		reply(`{"facts": []}`, 120, 4),
		// summarise: clean.
		reply(`{"summary": "The user said hello."}`, 50, 6),
		// summarise: fails for good.
		llmtest.Error(400, "bad request"),
	)
	if _, err := f.model.ExtractFacts(ctx, memento.ExtractInput{Message: "hi"}); err != nil {
		t.Fatal(err)
	}
	sum := memento.SummariseInput{Messages: []memento.Message{{Role: memento.RoleUser, Text: "hello"}}}
	if _, err := f.model.Summarise(ctx, sum); err != nil {
		t.Fatal(err)
	}
	if _, err := f.model.Summarise(ctx, sum); err == nil {
		t.Fatal("second Summarise succeeded, want an error")
	}

	want := map[openai.Task]openai.TaskUsage{
		openai.TaskExtractFacts: {Calls: 1, Repairs: 1, Retries: 1, PromptTokens: 220, CompletionTokens: 11},
		openai.TaskSummarise:    {Calls: 2, Errors: 1, PromptTokens: 50, CompletionTokens: 6},
	}
	if diff := cmp.Diff(want, f.model.Usage()); diff != "" {
		t.Errorf("usage mismatch (-want +got):\n%s", diff)
	}

	wantMetrics := map[string]float64{
		`memento_openai_calls_total{task="extract_facts"}`:                    1,
		`memento_openai_calls_total{task="summarise"}`:                        2,
		`memento_openai_errors_total{task="summarise"}`:                       1,
		`memento_openai_repairs_total{task="extract_facts"}`:                  1,
		`memento_openai_retries_total{task="extract_facts"}`:                  1,
		`memento_openai_tokens_total{kind="completion",task="extract_facts"}`: 11,
		`memento_openai_tokens_total{kind="completion",task="summarise"}`:     6,
		`memento_openai_tokens_total{kind="prompt",task="extract_facts"}`:     220,
		`memento_openai_tokens_total{kind="prompt",task="summarise"}`:         50,
		`memento_openai_request_duration_seconds{task="extract_facts"}`:       3,
		`memento_openai_request_duration_seconds{task="summarise"}`:           2,
	}
	if diff := cmp.Diff(wantMetrics, gather(t, f.reg)); diff != "" {
		t.Errorf("metrics mismatch (-want +got):\n%s", diff)
	}
}

// gather flattens a registry into "name{labels}" -> value; histograms
// give their sample count.
func gather(tb testing.TB, g prometheus.Gatherer) map[string]float64 {
	tb.Helper()
	mfs, err := g.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			key := mf.GetName() + "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.GetCounter() != nil:
				out[key] = m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				out[key] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

// TestSharedRegistry checks that a Model and an Embedder can register on
// the same registry.
func TestSharedRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	cfg := openai.Config{BaseURL: "http://localhost:11434/v1", Model: "m", EmbedModel: "e"}
	if _, err := openai.New(cfg, openai.WithRegisterer(reg)); err != nil {
		t.Fatal(err)
	}
	if _, err := openai.NewEmbedder(cfg, openai.WithRegisterer(reg)); err != nil {
		t.Fatalf("second registration: %v", err)
	}
}
