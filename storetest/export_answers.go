package storetest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
)

// answerTurn is turn n of thread t1: a request and an answer (ids un and
// an), the answer's JSON stored with it.
func answerTurn(s memento.Scope, n int, answer string, lastShown, shown []string) memento.Turn {
	return memento.Turn{
		Scope: s, Thread: "t1",
		Messages: []memento.Message{
			{ID: fmt.Sprintf("u%d", n), Role: memento.RoleUser, Text: fmt.Sprintf("request %d", n)},
			{ID: fmt.Sprintf("a%d", n), Role: memento.RoleAssistant, Text: fmt.Sprintf("answer %d", n)},
		},
		State:  memento.ThreadState{Context: memento.NewActiveContext(), LastShown: lastShown, Shown: shown},
		Answer: json.RawMessage(answer),
	}
}

// sameJSON compares two answers as JSON values: a store may keep an
// answer in a normalised form (PostgreSQL's jsonb), so only its value must
// survive.
var sameJSON = cmp.Comparer(func(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	return cmp.Equal(x, y)
})

// testExportShownAnswers checks that an export carries every title a
// thread has shown and the agent's stored answers, and that an import
// restores them (once): a thread moved to another store, or restored from
// a snapshot, does not show again what it showed, and its page shows the
// cards of every earlier turn.
func testExportShownAnswers(t *testing.T, open Opener) {
	st := open(t)
	ex, ok := st.(Exporter)
	if !ok {
		t.Skip("the store does not implement storetest.Exporter (ExportUser, ImportUser)")
	}
	ctx := t.Context()
	turns := []memento.Turn{
		answerTurn(ann, 0, `{"reply":"answer","titles":[{"id":"x1"}]}`, []string{"x1", "x2"}, []string{"x1", "x2"}),
		answerTurn(ann, 1, `{"reply":"another","titles":[{"id":"x3","why":["because"]}]}`, []string{"x3"}, []string{"x3", "x1", "x2"}),
	}
	for i, turn := range turns {
		if _, err := st.SaveTurn(ctx, turn); err != nil {
			t.Fatalf("SaveTurn %d: %v", i, err)
		}
	}
	doc, err := ex.ExportUser(ctx, ann)
	if err != nil {
		t.Fatalf("ExportUser: %v", err)
	}
	if len(doc.Threads) != 1 {
		t.Fatalf("export holds %d threads, want 1", len(doc.Threads))
	}
	th := doc.Threads[0]
	if diff := cmp.Diff([]string{"x3", "x1", "x2"}, th.Shown); diff != "" {
		t.Errorf("exported shown (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"x3"}, th.LastShown); diff != "" {
		t.Errorf("exported last shown (-want +got):\n%s", diff)
	}
	want := []memento.TurnAnswer{{Message: "a0", Seq: 2, Answer: turns[0].Answer}, {Message: "a1", Seq: 4, Answer: turns[1].Answer}}
	if diff := cmp.Diff(want, th.Answers, sameJSON); diff != "" {
		t.Fatalf("exported answers (-want +got):\n%s", diff)
	}

	res, err := ex.ImportUser(ctx, bob, doc)
	if err != nil {
		t.Fatalf("ImportUser: %v", err)
	}
	if res.Answers != 2 || res.Messages != 4 {
		t.Errorf("import stored %+v, want 4 messages and 2 answers", res)
	}
	state, err := st.ThreadState(ctx, bob, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"x3", "x1", "x2"}, state.Shown); diff != "" {
		t.Errorf("imported thread's shown (-want +got):\n%s", diff)
	}
	answers, err := st.Answers(ctx, bob, "t1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(th.Answers, answers, sameJSON); diff != "" {
		t.Errorf("imported answers (-exported +imported):\n%s", diff)
	}
	if again, err := ex.ImportUser(ctx, bob, doc); err != nil || again.Answers != 0 {
		t.Errorf("a second import stored %+v, %v; want no answer twice", again, err)
	}
	if answers, _ := st.Answers(ctx, bob, "t1", 0); len(answers) != 2 {
		t.Errorf("after a second import the thread has %d answers, want 2", len(answers))
	}

	// A document from before Shown restores the last answer's titles.
	old := *doc
	old.Threads = []memento.ThreadExport{th}
	old.Threads[0].Shown = nil
	cara := memento.Scope{Tenant: memento.DefaultTenant, User: "cara"}
	if _, err := ex.ImportUser(ctx, cara, &old); err != nil {
		t.Fatalf("ImportUser of a document without shown: %v", err)
	}
	if state, err := st.ThreadState(ctx, cara, "t1"); err != nil || !cmp.Equal(state.Shown, []string{"x3"}) {
		t.Errorf("shown restored from an older document = %v, %v; want the last answer's [x3]", state.Shown, err)
	}

	// An answer that is not a JSON object is refused, and nothing of the
	// document is stored.
	bad := *doc
	bad.Threads = []memento.ThreadExport{th}
	bad.Threads[0].Answers = []memento.TurnAnswer{{Message: "a0", Answer: json.RawMessage(`"text"`)}}
	dan := memento.Scope{Tenant: memento.DefaultTenant, User: "dan"}
	_, err = ex.ImportUser(ctx, dan, &bad)
	if memento.ErrorCode(err) != memento.EINVALID || !strings.Contains(memento.ErrorMessage(err), "threads[0].answers[0]") {
		t.Errorf("import of a bad answer: %v; want EINVALID naming threads[0].answers[0]", err)
	}
	if _, err := st.Messages(ctx, dan, "t1", 0, 0); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("a refused import left the thread: %v", err)
	}
}
