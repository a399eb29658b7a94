package main

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/llm/fallback"
	"github.com/memento-ai/memento/llm/llmtest"
)

// TestChatFallsBackToOfflineUnderstanding is the composition of the
// binary against a model server whose understanding misses a required
// field: the turn is answered with the offline understanding and says so.
func TestChatFallsBackToOfflineUnderstanding(t *testing.T) {
	srv := llmtest.New(t)
	answers := llmtest.Answers()
	answers[llmtest.TaskUnderstand]["genres"] = []string{"Horror"}
	delete(answers[llmtest.TaskUnderstand], "recognised")
	srv.AnswerAll(answers, 8)

	var out, stderr bytes.Buffer
	m := NewMain()
	m.Stdin = strings.NewReader("three comedy movies from the 90s\n")
	m.Stdout, m.Stderr = &out, &stderr
	env := map[string]string{"MEMENTO_LLM_BASE_URL": srv.URL, "MEMENTO_LLM_MODEL": "fake-model", "MEMENTO_EMBED_MODEL": "fake-embed"}
	m.Getenv = func(k string) string { return env[k] }
	ctx := context.Background()
	if err := m.ParseFlags(ctx, []string{"chat", "--json", "--user", "ana", "--thread", "t1", "--db", t.TempDir() + "/m.db", "--log-level", "error"}); err != nil {
		t.Fatal(err)
	}
	err := m.Run(ctx)
	closeCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	m.Close(closeCtx)
	if err != nil {
		t.Fatalf("chat: %v\n%s", err, stderr.String())
	}
	var resp agent.Response
	if err := json.Unmarshal(out.Bytes(), &resp); err != nil {
		t.Fatalf("%v: %q (stderr %s)", err, out.String(), stderr.String())
	}
	if !slices.Equal(resp.ActiveContext.Genres, []string{"Comedy"}) || !resp.Searched {
		t.Errorf("active context = %+v, searched %v; want the offline understanding (Comedy)", resp.ActiveContext, resp.Searched)
	}
	if want := fallback.Note(memento.ModelTaskUnderstand); !slices.Contains(resp.Notes, want) {
		t.Errorf("notes = %q, want %q", resp.Notes, want)
	}
}

// TestJobsRunInBackground holds the queue the app starts to what the
// model's budgets rely on: a job's context is marked as background work,
// so its model calls take the job budget, not the turns'.
func TestJobsRunInBackground(t *testing.T) {
	m := NewMain()
	m.Stdout, m.Stderr = &bytes.Buffer{}, &bytes.Buffer{}
	m.Getenv = func(string) string { return "" }
	ctx := context.Background()
	if err := m.ParseFlags(ctx, []string{"llm", "check", "--db", t.TempDir() + "/m.db", "--log-level", "error"}); err != nil {
		t.Fatal(err)
	}
	app, err := m.App(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		closeCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		m.Close(closeCtx)
	})
	const kind = "test_background"
	background := make(chan bool, 1)
	gate := make(chan *memento.ProcessorGate, 1)
	app.Store.Handle(kind, func(ctx context.Context, _ string, _ json.RawMessage) error {
		background <- memento.IsBackground(ctx)
		gate <- memento.ProcessorGateOf(ctx)
		return nil
	}, memento.JobOptions{})
	if err := app.StartWorkers(ctx); err != nil {
		t.Fatal(err)
	}
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ana"}
	_, err = app.Store.SaveTurn(ctx, memento.Turn{
		Scope: s, Thread: "t1",
		Messages: []memento.Message{{ID: "m1", Role: memento.RoleUser, Text: "hello", At: time.Now().UTC()}},
		State:    memento.ThreadState{Context: memento.NewActiveContext()},
		JobsFor: func([]memento.Message) []memento.JobRequest {
			return []memento.JobRequest{{Kind: kind, Payload: map[string]string{"x": "y"}}}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !<-background {
		t.Error("a job ran with a context not marked as background work")
	}
	// The jobs compute on the background's processors: by default as
	// many as Go used at start (StartWorkers adds as many to GOMAXPROCS
	// when the background runs at a lower priority).
	if g := <-gate; g == nil {
		t.Error("a job ran with no processor gate on its context")
	} else if g.Size() != startProcs {
		t.Errorf("the jobs' processor gate has %d processors, want GOMAXPROCS at start %d", g.Size(), startProcs)
	}
	families, err := app.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(families, func(f *dto.MetricFamily) bool { return f.GetName() == "memento_background_processors_in_use" }) {
		t.Error("/metrics has no memento_background_processors_in_use")
	}
	if memento.IsBackground(ctx) {
		t.Error("the caller's context was marked too")
	}
}

// startProcs is GOMAXPROCS as the test binary started, before any
// StartWorkers raised it.
var startProcs = runtime.GOMAXPROCS(0)
