package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// TestConcurrentWritersAndWorkers has several clients append messages
// while the queue's workers write summaries through the same single writer
// connection and readers read: nothing may deadlock, fail with
// SQLITE_BUSY or get lost.
func TestConcurrentWritersAndWorkers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlitetest.Open(t)
	db.Handle(memento.JobSummarise, func(ctx context.Context, kind string, payload json.RawMessage) error {
		var p memento.MessageJob
		if err := json.Unmarshal(payload, &p); err != nil {
			return err
		}
		s := memento.Scope{Tenant: p.Tenant, User: p.User}
		if _, err := db.ThreadState(ctx, s, p.Thread); err != nil {
			return err
		}
		_, err := db.AppendSummary(ctx, s, memento.Summary{Thread: p.Thread, Text: "summary of " + p.Message, FromSeq: 1, ToSeq: p.Seq})
		return err
	}, memento.JobOptions{})
	startQueue(t, db)

	const clients, perClient = 4, 15
	var wg sync.WaitGroup
	errs := make(chan error, clients*perClient)
	for c := range clients {
		wg.Go(func() {
			s := memento.Scope{Tenant: memento.DefaultTenant, User: fmt.Sprintf("u%d", c)}
			for i := range perClient {
				_, err := db.AppendMessages(ctx, s, "t1", []memento.Message{{Role: memento.RoleUser, Text: fmt.Sprintf("message %d", i)}},
					messageJobs(memento.JobSummarise, s))
				if err != nil {
					errs <- err
					return
				}
				if _, err := db.Messages(ctx, s, "t1", 0, 0); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("client: %v", err)
	}
	sqlitetest.WaitForJobs(t, db, 20*time.Second)

	for c := range clients {
		s := memento.Scope{User: fmt.Sprintf("u%d", c)}
		msgs, err := db.Messages(ctx, s, "t1", 0, 0)
		if err != nil || len(msgs) != perClient {
			t.Errorf("user %s has %d messages (%v), want %d", s.User, len(msgs), err, perClient)
		}
		sums, err := db.Summaries(ctx, s, "t1")
		if err != nil || len(sums) != perClient {
			t.Errorf("user %s has %d summaries (%v), want %d", s.User, len(sums), err, perClient)
		}
	}
	failed, _ := db.Jobs(ctx, memento.JobFilter{State: memento.JobFailed})
	if len(failed) != 0 {
		t.Errorf("failed jobs: %+v", failed)
	}
}
