package llmcheck_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/llm/llmcheck"
	"github.com/memento-ai/memento/llm/llmtest"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/llm/openai"
)

// allTasks is every task Run checks, in its order.
var allTasks = []string{
	memento.ModelTaskUnderstand, memento.ModelTaskSentinel, memento.ModelTaskExtractFacts,
	memento.ModelTaskReviewExtraction, memento.ModelTaskAssignAttributes, memento.ModelTaskMergeFact,
	memento.ModelTaskReviewMerge, memento.ModelTaskSummarise, memento.ModelTaskPreferences,
	memento.ModelTaskDescribeCluster, memento.ModelTaskWriteReply, memento.ModelTaskEmbed,
}

func tasksOf(rs []llmcheck.Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Task
	}
	return out
}

func TestOffline(t *testing.T) {
	rs := llmcheck.Run(context.Background(), offline.New(offline.Options{}), offline.NewEmbedder(64))
	if got := strings.Join(tasksOf(rs), " "); got != strings.Join(allTasks, " ") {
		t.Errorf("tasks = %s, want %s", got, strings.Join(allTasks, " "))
	}
	for _, r := range rs {
		if !r.OK || r.Error != "" || r.StructuredOutput != "" {
			t.Errorf("%+v, want ok without structured output", r)
		}
	}
	if !llmcheck.OK(rs) {
		t.Error("OK = false for the offline model")
	}
}

func TestOpenAI(t *testing.T) {
	tests := []struct {
		name string
		// brk breaks the scripted answers.
		brk      func(map[string]map[string]any)
		wantFail string // the task that fails, "" for none
		wantErr  string
	}{
		{"every task usable", func(map[string]map[string]any) {}, "", ""},
		{"understanding misses a required field", func(a map[string]map[string]any) {
			delete(a[llmtest.TaskUnderstand], "recognised")
		}, memento.ModelTaskUnderstand, `missing the required field "recognised"`},
		{"summary of the wrong type", func(a map[string]map[string]any) {
			a[llmtest.TaskSummarise]["summary"] = 42
		}, memento.ModelTaskSummarise, "$.summary must be a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t)
			answers := llmtest.Answers()
			tt.brk(answers)
			srv.AnswerAll(answers, 8)
			m, err := openai.New(openai.Config{BaseURL: srv.URL, Model: "m", EmbedModel: "e", MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			rs := llmcheck.Run(context.Background(), m, m.Embedder())
			if got := strings.Join(tasksOf(rs), " "); got != strings.Join(allTasks, " ") {
				t.Fatalf("tasks = %s, want %s", got, strings.Join(allTasks, " "))
			}
			for _, r := range rs {
				wantOK := r.Task != tt.wantFail
				if r.OK != wantOK {
					t.Errorf("%s: ok = %v, want %v (error %q)", r.Task, r.OK, wantOK, r.Error)
				}
				if !wantOK && !strings.Contains(r.Error, tt.wantErr) {
					t.Errorf("%s: error %q does not contain %q", r.Task, r.Error, tt.wantErr)
				}
				if r.Task != memento.ModelTaskEmbed && r.StructuredOutput != openai.StructuredJSONSchema {
					t.Errorf("%s: structured output = %q, want %q", r.Task, r.StructuredOutput, openai.StructuredJSONSchema)
				}
			}
			if got, want := llmcheck.OK(rs), tt.wantFail == ""; got != want {
				t.Errorf("OK = %v, want %v", got, want)
			}
		})
	}
}
