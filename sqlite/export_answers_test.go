package sqlite_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// An export carries every title a thread has shown and the agent's stored
// answers, and an import restores them: a thread moved to another store
// (or restored from a snapshot) does not show again what it showed, and
// its page shows the cards of every earlier turn.
func TestExportImportKeepsShownAndAnswers(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	ann := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	for n, shown := range [][]string{{"x1", "x2"}, {"x3"}} {
		turn := answerTurn(ann, n, `{"reply":"answer","titles":[{"id":"`+shown[0]+`"}]}`)
		turn.State.LastShown = shown
		turn.State.Shown = append(shown, []string{"x1", "x2"}[:2*n]...)
		if _, err := db.SaveTurn(ctx, turn); err != nil {
			t.Fatal(err)
		}
	}
	doc, err := db.ExportUser(ctx, ann)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Threads) != 1 {
		t.Fatalf("export holds %d threads", len(doc.Threads))
	}
	th := doc.Threads[0]
	if diff := cmp.Diff([]string{"x3", "x1", "x2"}, th.Shown); diff != "" {
		t.Errorf("exported shown (-want +got):\n%s", diff)
	}
	if len(th.Answers) != 2 || th.Answers[0].Message != "a0" || th.Answers[1].Message != "a1" {
		t.Fatalf("exported answers = %+v", th.Answers)
	}

	bob := memento.Scope{Tenant: memento.DefaultTenant, User: "bob"}
	res, err := db.ImportUser(ctx, bob, doc)
	if err != nil {
		t.Fatal(err)
	}
	if res.Answers != 2 {
		t.Errorf("import stored %d answers, want 2", res.Answers)
	}
	state, err := db.ThreadState(ctx, bob, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"x3", "x1", "x2"}, state.Shown); diff != "" {
		t.Errorf("imported thread's shown (-want +got):\n%s", diff)
	}
	answers, err := db.Answers(ctx, bob, "t1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(th.Answers, answers); diff != "" {
		t.Errorf("imported answers (-exported +imported):\n%s", diff)
	}
	if again, err := db.ImportUser(ctx, bob, doc); err != nil || again.Answers != 0 {
		t.Errorf("a second import stored %+v, %v; want no answer twice", again, err)
	}

	// A document from before Shown restores the last answer's titles.
	old := *doc
	old.Threads = []memento.ThreadExport{th}
	old.Threads[0].Shown = nil
	cara := memento.Scope{Tenant: memento.DefaultTenant, User: "cara"}
	if _, err := db.ImportUser(ctx, cara, &old); err != nil {
		t.Fatal(err)
	}
	if state, err := db.ThreadState(ctx, cara, "t1"); err != nil || !cmp.Equal(state.Shown, []string{"x3"}) {
		t.Errorf("shown restored from an older document = %v, %v; want the last answer's [x3]", state.Shown, err)
	}

	// An answer that is not a JSON object is refused whole.
	bad := *doc
	bad.Threads = []memento.ThreadExport{th}
	bad.Threads[0].Answers = []memento.TurnAnswer{{Message: "a0", Answer: json.RawMessage(`"text"`)}}
	_, err = db.ImportUser(ctx, memento.Scope{Tenant: memento.DefaultTenant, User: "dan"}, &bad)
	if memento.ErrorCode(err) != memento.EINVALID || !strings.Contains(memento.ErrorMessage(err), "threads[0].answers[0]") {
		t.Errorf("import of a bad answer: %v; want EINVALID naming threads[0].answers[0]", err)
	}
}
