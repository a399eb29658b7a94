package openai_test

import (
	"strings"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/llm/llmtest"
	"github.com/memento-ai/memento/llm/openai"
)

func TestClassifyEmotion(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.EnqueueTask(string(openai.TaskEmotion), llmtest.ChatJSON(map[string]any{"label": "Anger", "confidence": 0.876}))
	got, err := f.model.ClassifyEmotion(t.Context(), "Ugh, not these again.")
	if err != nil {
		t.Fatal(err)
	}
	if got.Label != memento.EmotionAnger || got.Confidence != 0.88 {
		t.Errorf("ClassifyEmotion = %+v, want anger 0.88", got)
	}
	c := f.chat(t, 0)
	if c.ResponseFormat == nil || c.ResponseFormat.JSONSchema == nil || c.ResponseFormat.JSONSchema.Name != string(openai.TaskEmotion) {
		t.Fatalf("request asked for %+v, want the %s schema", c.ResponseFormat, openai.TaskEmotion)
	}
	schema := string(c.ResponseFormat.JSONSchema.Schema)
	for _, l := range memento.EmotionLabels {
		if !strings.Contains(schema, `"`+l+`"`) {
			t.Errorf("schema lacks the label %s: %s", l, schema)
		}
	}
	if !strings.Contains(c.Messages[1].Content, `"Ugh, not these again."`) || !strings.Contains(c.Messages[0].Content, "not the mood of a title") {
		t.Errorf("prompt = %+v", c.Messages)
	}
}

func TestClassifyEmotionRepairsThenFails(t *testing.T) {
	f := newFixture(t, nil)
	// A label outside the list costs one repair request...
	f.srv.EnqueueTask(string(openai.TaskEmotion),
		llmtest.ChatJSON(map[string]any{"label": "frustration", "confidence": 0.9}),
		llmtest.ChatJSON(map[string]any{"label": "anger", "confidence": 0.9}))
	got, err := f.model.ClassifyEmotion(t.Context(), "so annoying")
	if err != nil || got.Label != memento.EmotionAnger {
		t.Fatalf("after repair = %+v, %v; want anger", got, err)
	}
	if n := len(f.srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2 (one repair)", n)
	}
	// ...and one that stays bad is EUPSTREAM.
	bad := llmtest.ChatJSON(map[string]any{"label": "frustration", "confidence": 2})
	f.srv.EnqueueTask(string(openai.TaskEmotion), bad, bad)
	if _, err := f.model.ClassifyEmotion(t.Context(), "so annoying"); memento.ErrorCode(err) != memento.EUPSTREAM {
		t.Errorf("unusable answer: err = %v, want EUPSTREAM", err)
	}
	// An empty message needs no request.
	before := len(f.srv.Requests())
	if e, err := f.model.ClassifyEmotion(t.Context(), "  "); err != nil || e.Label != memento.EmotionNeutral || len(f.srv.Requests()) != before {
		t.Errorf("empty message = %+v, %v, %d requests", e, err, len(f.srv.Requests())-before)
	}
}
