package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// answerTurn is turn n of thread t1: a user message and an answer, with
// the answer's JSON when answer is set.
func answerTurn(s memento.Scope, n int, answer string) memento.Turn {
	t := memento.Turn{
		Scope: s, Thread: "t1",
		Messages: []memento.Message{
			{ID: fmt.Sprintf("u%d", n), Role: memento.RoleUser, Text: fmt.Sprintf("request %d", n)},
			{ID: fmt.Sprintf("a%d", n), Role: memento.RoleAssistant, Text: fmt.Sprintf("answer %d", n)},
		},
		State: memento.ThreadState{Context: memento.NewActiveContext()},
	}
	if answer != "" {
		t.Answer = json.RawMessage(answer)
	}
	return t
}

func TestSaveTurnStoresAnswers(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	ann := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	for n, answer := range []string{``, `{"reply":"one","titles":[{"id":"x","why":["because"]}]}`, `{"reply":"two"}`, `{"reply":"three"}`} {
		if _, err := db.SaveTurn(ctx, answerTurn(ann, n, answer)); err != nil {
			t.Fatalf("SaveTurn %d: %v", n, err)
		}
	}
	// Saving a turn again (a retried request) stores nothing twice.
	if _, err := db.SaveTurn(ctx, answerTurn(ann, 3, `{"reply":"three again"}`)); err != nil {
		t.Fatalf("SaveTurn again: %v", err)
	}

	tests := []struct {
		name  string
		scope memento.Scope
		limit int
		want  []memento.TurnAnswer
	}{
		{"all, oldest first, the turn without an answer left out", ann, 0, []memento.TurnAnswer{
			{Message: "a1", Seq: 4, Answer: json.RawMessage(`{"reply":"one","titles":[{"id":"x","why":["because"]}]}`)},
			{Message: "a2", Seq: 6, Answer: json.RawMessage(`{"reply":"two"}`)},
			{Message: "a3", Seq: 8, Answer: json.RawMessage(`{"reply":"three"}`)},
		}},
		{"the newest two", ann, 2, []memento.TurnAnswer{
			{Message: "a2", Seq: 6, Answer: json.RawMessage(`{"reply":"two"}`)},
			{Message: "a3", Seq: 8, Answer: json.RawMessage(`{"reply":"three"}`)},
		}},
		{"negative limit is all", ann, -1, nil},
		{"another user", memento.Scope{Tenant: memento.DefaultTenant, User: "bob"}, 0, []memento.TurnAnswer{}},
		{"another tenant", memento.Scope{Tenant: "other", User: "ann"}, 0, []memento.TurnAnswer{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.Answers(ctx, tt.scope, "t1", tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == nil {
				if len(got) != 3 {
					t.Errorf("Answers(limit %d) = %d answers, want all 3", tt.limit, len(got))
				}
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Answers (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("unknown thread", func(t *testing.T) {
		got, err := db.Answers(ctx, ann, "nope", 0)
		if err != nil || got == nil || len(got) != 0 {
			t.Errorf("Answers of an unknown thread = %v, %v; want an empty list", got, err)
		}
	})
	t.Run("invalid thread id", func(t *testing.T) {
		if _, err := db.Answers(ctx, ann, "", 0); memento.ErrorCode(err) != memento.EINVALID {
			t.Errorf("Answers of an empty thread id: %v, want EINVALID", err)
		}
	})
	t.Run("forgetting the user forgets the answers", func(t *testing.T) {
		if err := db.DeleteUser(ctx, ann); err != nil {
			t.Fatal(err)
		}
		got, err := db.Answers(ctx, ann, "t1", 0)
		if err != nil && memento.ErrorCode(err) != memento.ENOTFOUND {
			t.Fatal(err)
		}
		if len(got) != 0 {
			t.Errorf("after DeleteUser, Answers = %v", got)
		}
	})
}

// TestSaveTurnRefusesAnswerThatIsNotJSON checks that the turn is stored
// whole or not at all: an answer the store cannot keep leaves no messages.
func TestSaveTurnRefusesAnswerThatIsNotJSON(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	if _, err := db.SaveTurn(ctx, answerTurn(s, 1, `{"reply":`)); err == nil {
		t.Fatal("SaveTurn stored an answer that is not JSON")
	}
	msgs, err := db.Messages(ctx, s, "t1", 0, 0)
	if err != nil && memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Fatal(err)
	}
	if len(msgs) != 0 {
		t.Errorf("a refused turn left %d messages", len(msgs))
	}
}
