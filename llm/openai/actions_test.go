package openai_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/llm/llmtest"
	"github.com/memento-ai/memento/llm/openai"
)

// TestReadActions checks the request ReadActions sends (the message and
// the agent's question) and the actions it returns: titles as named, a
// rating only on "rated", blank titles dropped.
func TestReadActions(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.EnqueueTask(string(openai.TaskReadActions), llmtest.ChatJSON(map[string]any{"actions": []any{
		map[string]any{"type": "watched", "title": "Heat", "rating": nil},
		map[string]any{"type": "rated", "title": "Heat", "rating": 4.5},
		map[string]any{"type": "liked", "title": " ", "rating": nil},
	}}))
	got, err := f.model.ReadActions(context.Background(), memento.ActionInput{Message: "Yes, twice. I'd give it 4.5.", Asked: "Have you seen Heat?"})
	if err != nil {
		t.Fatal(err)
	}
	want := []memento.ReportedAction{{Type: memento.EventWatched, Title: "Heat"}, {Type: memento.EventRated, Title: "Heat", Value: ptr(4.5)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadActions (-want +got):\n%s", diff)
	}
	user := f.chat(t, 0).Messages[1].Content
	if !strings.Contains(user, "Have you seen Heat?") || !strings.Contains(user, "Yes, twice.") {
		t.Errorf("the prompt lacks the question or the message:\n%s", user)
	}
}

// TestReadActionsRepairsARatingWithoutValue checks that a "rated" action
// without a rating costs one repair request.
func TestReadActionsRepairsARatingWithoutValue(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.EnqueueTask(string(openai.TaskReadActions),
		llmtest.ChatJSON(map[string]any{"actions": []any{map[string]any{"type": "rated", "title": "Heat", "rating": nil}}}),
		llmtest.ChatJSON(map[string]any{"actions": []any{map[string]any{"type": "rated", "title": "Heat", "rating": 4}}}))
	got, err := f.model.ReadActions(context.Background(), memento.ActionInput{Message: "I gave Heat 4 stars"})
	if err != nil || len(got) != 1 || got[0].Value == nil || *got[0].Value != 4 {
		t.Fatalf("ReadActions = %+v, %v; want Heat rated 4 after one repair", got, err)
	}
	if n := len(f.srv.Requests()); n != 2 {
		t.Errorf("requests = %d; want 2 (one repair)", n)
	}
	if got, err := f.model.ReadActions(context.Background(), memento.ActionInput{Message: "  "}); err != nil || len(got) != 0 {
		t.Errorf("blank message: %v, %v; want none and no request", got, err)
	}
}
