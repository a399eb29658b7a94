package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

// CompletionAtOnce checks that a job that ends is recorded as completed
// before its worker takes the next job, not when River's completer next
// records a batch of completions (every 250 ms when few jobs end). st is
// a fresh store whose queue runs one job at a time and is not started:
// the second job of each of five pairs then starts only after the first's
// worker returned, and must find it completed. (River's completer, on its
// own, is sometimes quick enough for one pair, rarely for five.)
func CompletionAtOnce(t *testing.T, st Store) {
	t.Helper()
	const pairs = 5
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	seen := make(chan string, pairs)
	var reqs []memento.JobRequest
	for k := range pairs {
		first, second := fmt.Sprintf("first-%d", k), fmt.Sprintf("second-%d", k)
		st.Handle(first, func(context.Context, string, json.RawMessage) error { return nil }, memento.JobOptions{})
		st.Handle(second, func(ctx context.Context, _ string, _ json.RawMessage) error {
			jobs, err := st.Jobs(ctx, memento.JobFilter{Kind: first})
			if err != nil || len(jobs) != 1 {
				t.Errorf("Jobs(%s) = %v, %v; want one", first, jobs, err)
				seen <- ""
				return nil
			}
			seen <- jobs[0].State
			return nil
		}, memento.JobOptions{})
		reqs = append(reqs, memento.JobRequest{Kind: first, Payload: k}, memento.JobRequest{Kind: second, Payload: k})
	}
	jobs := func(memento.Message) []memento.JobRequest { return reqs }
	if _, err := st.AppendMessages(context.Background(), s, "t", []memento.Message{{Role: memento.RoleUser, Text: "hi"}}, jobs); err != nil {
		t.Fatal(err)
	}
	if err := st.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = st.Stop(ctx)
	})
	for k := range pairs {
		select {
		case state := <-seen:
			if state != memento.JobCompleted {
				t.Errorf("pair %d: the first job, seen by the second, is %q, want %q", k, state, memento.JobCompleted)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("pair %d: the second job did not run", k)
		}
	}
}
