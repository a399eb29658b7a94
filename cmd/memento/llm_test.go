package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/llm/llmtest"
)

// checkedTasks are the tasks `llm check` runs, in order.
var checkedTasks = []string{
	memento.ModelTaskUnderstand, memento.ModelTaskSentinel, memento.ModelTaskExtractFacts,
	memento.ModelTaskReviewExtraction, memento.ModelTaskAssignAttributes, memento.ModelTaskMergeFact,
	memento.ModelTaskReviewMerge, memento.ModelTaskSummarise, memento.ModelTaskPreferences,
	memento.ModelTaskDescribeCluster, memento.ModelTaskWriteReply, memento.ModelTaskEmbed,
}

func checkTasks(got llmCheck) string {
	var names []string
	for _, t := range got.Tasks {
		names = append(names, t.Task)
	}
	return strings.Join(names, " ")
}

func TestLLMCheckOffline(t *testing.T) {
	out, err := run(t, "", "llm", "check", "--json", "--db", t.TempDir()+"/m.db")
	if err != nil {
		t.Fatal(err)
	}
	var got llmCheck
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !got.OK || got.Provider != "offline" || got.EmbedDim != 256 || !strings.HasPrefix(got.Embedder, "offline-hash/") {
		t.Errorf("check = %+v", got)
	}
	if names := checkTasks(got); names != strings.Join(checkedTasks, " ") {
		t.Errorf("tasks = %s, want %s", names, strings.Join(checkedTasks, " "))
	}
}

// llmCheckAgainst runs `memento llm check --json` against srv and returns
// what it printed and its error.
func llmCheckAgainst(t *testing.T, srv *llmtest.Server) (llmCheck, error) {
	t.Helper()
	var out bytes.Buffer
	m := NewMain()
	m.Stdout, m.Stderr = &out, &bytes.Buffer{}
	env := map[string]string{"MEMENTO_LLM_BASE_URL": srv.URL, "MEMENTO_LLM_MODEL": "fake-model", "MEMENTO_EMBED_MODEL": "fake-embed"}
	m.Getenv = func(k string) string { return env[k] }
	ctx := context.Background()
	if err := m.ParseFlags(ctx, []string{"llm", "check", "--json", "--db", t.TempDir() + "/m.db", "--log-level", "error"}); err != nil {
		t.Fatal(err)
	}
	if m.Config.LLM.Provider != "openai" || m.Config.Embed.Provider != "openai" {
		t.Fatalf("a base URL must select the openai providers: %+v", m.Config)
	}
	err := m.Run(ctx)
	m.Close(ctx)
	var got llmCheck
	if jerr := json.Unmarshal(out.Bytes(), &got); jerr != nil {
		t.Fatalf("stdout is not the JSON report (%v): %s", jerr, out.String())
	}
	return got, err
}

func TestLLMCheckOpenAICompatible(t *testing.T) {
	srv := llmtest.New(t)
	srv.AnswerAll(llmtest.Answers(), 8)
	got, err := llmCheckAgainst(t, srv)
	if err != nil {
		t.Fatal(err)
	}
	if !got.OK || got.Provider != "openai" || !got.JSONSchema || got.EmbedDim != 8 || got.BaseURL != srv.URL {
		t.Errorf("check = %+v", got)
	}
	if names := checkTasks(got); names != strings.Join(checkedTasks, " ") {
		t.Errorf("tasks = %s, want %s", names, strings.Join(checkedTasks, " "))
	}
	for _, task := range got.Tasks {
		if !task.OK {
			t.Errorf("%+v, want ok", task)
		}
	}
}

// A server whose understanding misses a required field passed the old
// check (one tiny request) and then failed every chat.
func TestLLMCheckReportsAnUnusableTask(t *testing.T) {
	srv := llmtest.New(t)
	answers := llmtest.Answers()
	delete(answers[llmtest.TaskUnderstand], "recognised")
	srv.AnswerAll(answers, 8)
	got, err := llmCheckAgainst(t, srv)
	if err == nil || !strings.Contains(memento.ErrorMessage(err), memento.ModelTaskUnderstand) {
		t.Errorf("error = %v, want a failure naming the understand task", err)
	}
	if got.OK {
		t.Error(`report says "ok": true`)
	}
	if names := checkTasks(got); names != strings.Join(checkedTasks, " ") {
		t.Errorf("tasks = %s, want every task checked: %s", names, strings.Join(checkedTasks, " "))
	}
	for _, task := range got.Tasks {
		wantOK := task.Task != memento.ModelTaskUnderstand
		if task.OK != wantOK {
			t.Errorf("%s: ok = %v, want %v (%s)", task.Task, task.OK, wantOK, task.Error)
		}
		if !wantOK && !strings.Contains(task.Error, `missing the required field "recognised"`) {
			t.Errorf("%s: error %q does not name the missing field", task.Task, task.Error)
		}
	}
}

func TestLLMConcurrencySettings(t *testing.T) {
	m := NewMain()
	m.Stdout, m.Stderr = &bytes.Buffer{}, &bytes.Buffer{}
	env := map[string]string{"MEMENTO_LLM_CONCURRENCY": "6", "MEMENTO_LLM_JOB_CONCURRENCY": "3"}
	m.Getenv = func(k string) string { return env[k] }
	if err := m.ParseFlags(context.Background(), []string{"llm", "check", "--llm-job-concurrency", "1"}); err != nil {
		t.Fatal(err)
	}
	if c := m.Config.OpenAI(); c.Concurrency != 6 || c.JobConcurrency != 1 {
		t.Errorf("openai config concurrency = %d, job %d; want 6 from the environment and 1 from the flag", c.Concurrency, c.JobConcurrency)
	}
	for _, tt := range []struct{ args []string }{
		{[]string{"llm", "check", "--llm-concurrency", "0"}},
		{[]string{"llm", "check", "--llm-job-concurrency", "-1"}},
	} {
		m := NewMain()
		m.Getenv = func(string) string { return "" }
		err := m.ParseFlags(context.Background(), tt.args)
		if err == nil || !strings.Contains(memento.ErrorMessage(err), tt.args[2]) {
			t.Errorf("%v: error = %v, want one naming %s", tt.args, err, tt.args[2])
		}
	}
}
