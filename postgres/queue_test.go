package postgres_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/postgres"
)

// TestQueueRecordsACompletionAtOnce: a job that ends is recorded as
// completed before its worker takes the next job, not when River's
// completer next records a batch of completions (every 250 ms when few
// jobs end). With one worker, the second of two jobs starts only after
// the first's worker returned, and finds it completed.
func TestQueueRecordsACompletionAtOnce(t *testing.T) {
	db, _ := openSchema(t, postgres.Options{Workers: 1})
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	db.Handle("first", func(context.Context, string, json.RawMessage) error { return nil }, memento.JobOptions{})
	seen := make(chan string, 1)
	db.Handle("second", func(ctx context.Context, _ string, _ json.RawMessage) error {
		jobs, err := db.Jobs(ctx, memento.JobFilter{Kind: "first"})
		if err != nil || len(jobs) != 1 {
			t.Errorf("Jobs(first) = %v, %v; want one", jobs, err)
			seen <- ""
			return nil
		}
		seen <- jobs[0].State
		return nil
	}, memento.JobOptions{})
	jobs := func(memento.Message) []memento.JobRequest {
		return []memento.JobRequest{{Kind: "first", Payload: "a"}, {Kind: "second", Payload: "b"}}
	}
	if _, err := db.AppendMessages(context.Background(), s, "t", []memento.Message{{Role: memento.RoleUser, Text: "hi"}}, jobs); err != nil {
		t.Fatal(err)
	}
	if err := db.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = db.Stop(ctx)
	})
	select {
	case st := <-seen:
		if st != memento.JobCompleted {
			t.Errorf("the first job, seen by the second, is %q, want %q", st, memento.JobCompleted)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the second job did not run")
	}
}
