package pipeline_test

import (
	"slices"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/llm/fallback"
	"github.com/memento-ai/memento/llm/llmtest"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/llm/openai"
	"github.com/memento-ai/memento/pipeline"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// TestRunTraceNotesAFallback runs the pipeline against a model server
// whose extractions never fit the schema: the offline model extracts
// instead, and the run's trace says so at the extract step.
func TestRunTraceNotesAFallback(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t)
	answers := llmtest.Answers()
	answers[llmtest.TaskExtractFacts]["facts"] = []map[string]any{{"text": 3}}
	srv.AnswerAll(answers, 0)
	primary, err := openai.New(openai.Config{BaseURL: srv.URL, Model: "test-model", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	model, err := fallback.New(primary, offline.New(offline.Options{}), fallback.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db := sqlitetest.Open(t)
	schema := memento.Schema{Name: "case", Attributes: []memento.AttributeSpec{
		{Name: "LIKES", Description: "What the user likes.", Mode: "semantic"},
		{Name: "DISLIKES", Description: "What the user dislikes.", Mode: "semantic"},
	}}
	p, err := pipeline.New(model, db, pipeline.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{db: db, p: p, s: memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}}
	run := f.process(t, f.say(t, "I loved Arrival."))
	want := fallback.Note(memento.ModelTaskExtractFacts)
	var noted []string
	for _, st := range run.Steps {
		if slices.Contains(st.Notes, want) {
			noted = append(noted, st.Node)
		}
	}
	if !slices.Equal(noted, []string{pipeline.NodeExtract}) {
		t.Errorf("steps noting the fallback = %v, want [%s]; trace %+v", noted, pipeline.NodeExtract, run.Steps)
	}
	if run.Outcome != memento.RunStored {
		t.Errorf("outcome = %s (%s), want stored from the offline extraction", run.Outcome, run.Reason)
	}
	stored, err := db.MemoryRun(t.Context(), f.s, run.Message)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stored.Steps {
		if st.Node == pipeline.NodeExtract && !slices.Contains(st.Notes, want) {
			t.Errorf("the stored trace lost the note: %+v", st)
		}
	}
}
