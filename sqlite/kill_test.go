package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// TestHelperProcess is not a test: run by TestSIGKILLKeepsAcknowledgedWrites
// in a child process, it appends messages one by one, each with a job, and
// acknowledges each as soon as AppendMessages returned, until it is killed.
func TestHelperProcess(t *testing.T) {
	db := sqlitetest.ChildStore(t)
	ctx := context.Background()
	s := memento.Scope{User: "ann"}
	for i := 0; ; i++ {
		id := fmt.Sprintf("m%06d", i)
		_, err := db.AppendMessages(ctx, s, "t1", []memento.Message{{ID: id, Role: memento.RoleUser, Text: "message " + id}}, messageJobs("extract", s))
		if err != nil {
			t.Fatalf("append: %v", err)
		}
		sqlitetest.Ack(id)
	}
}

func TestSIGKILLKeepsAcknowledgedWrites(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kill.db")
	acked := sqlitetest.KillChild(t, "TestHelperProcess", path, 100)

	db := sqlitetest.OpenPath(t, path, sqlitetest.Options())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	msgs, err := db.Messages(ctx, memento.Scope{User: "ann"}, "t1", 0, 0)
	if err != nil {
		t.Fatalf("Messages after kill: %v", err)
	}
	stored := map[string]bool{}
	for _, m := range msgs {
		stored[m.ID] = true
	}
	for _, id := range acked {
		if !stored[id] {
			t.Errorf("acknowledged message %s is missing after SIGKILL", id)
		}
	}
	jobs, err := db.Jobs(ctx, memento.JobFilter{Kind: "extract"})
	if err != nil {
		t.Fatalf("Jobs: %v", err)
	}
	if len(jobs) != len(msgs) {
		t.Errorf("%d messages but %d jobs after SIGKILL; want one job per message", len(msgs), len(jobs))
	}
	t.Logf("child acknowledged %d messages; %d stored", len(acked), len(msgs))
}
