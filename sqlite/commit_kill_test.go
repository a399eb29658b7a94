package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// commitKillWriters is how many goroutines of the child write at once, so
// that their writes share commits.
const commitKillWriters = 16

// TestCommitKillHelperProcess is not a test: run by
// TestSIGKILLDuringGroupCommits in a child process, it has many goroutines
// append messages and write their runs at once, acknowledging "m ID" once
// AppendMessages returned and "r ID" once WriteMemories returned, until it
// is killed.
func TestCommitKillHelperProcess(t *testing.T) {
	db := sqlitetest.ChildStore(t)
	ctx := context.Background()
	failed := make(chan error, commitKillWriters)
	for w := range commitKillWriters {
		go func() {
			s := memento.Scope{Tenant: memento.DefaultTenant, User: fmt.Sprintf("u%02d", w)}
			for i := 0; ; i++ {
				id := fmt.Sprintf("w%02d-%06d", w, i)
				res, err := db.AppendMessages(ctx, s, "t1", []memento.Message{{ID: id, Role: memento.RoleUser, Text: "message " + id}}, messageJobs("extract", s))
				if err != nil {
					failed <- fmt.Errorf("append: %w", err)
					return
				}
				sqlitetest.Ack("m " + id)
				if _, err := db.WriteMemories(ctx, s, episodeWrite(res.Messages[0], "mem-"+id)); err != nil {
					failed <- fmt.Errorf("write memories: %w", err)
					return
				}
				sqlitetest.Ack("r " + id)
			}
		}()
	}
	t.Fatal(<-failed) // or, as intended, killed first
}

// TestSIGKILLDuringGroupCommits kills a process whose writers share
// commits and checks that every write it acknowledged survived, with its
// job and its run.
func TestSIGKILLDuringGroupCommits(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kill.db")
	messages, runs := map[string]bool{}, map[string]bool{}
	for _, ack := range sqlitetest.KillChild(t, "TestCommitKillHelperProcess", path, 400) {
		if id, ok := strings.CutPrefix(ack, "m "); ok {
			messages[id] = true
		} else if id, ok := strings.CutPrefix(ack, "r "); ok {
			runs[id] = true
		}
	}

	db := sqlitetest.OpenPath(t, path, sqlitetest.Options())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stored := map[string]bool{}
	total := 0
	for w := range commitKillWriters {
		s := memento.Scope{User: fmt.Sprintf("u%02d", w)}
		msgs, err := db.Messages(ctx, s, "t1", 0, 0)
		if err != nil && memento.ErrorCode(err) != memento.ENOTFOUND {
			t.Fatalf("Messages after kill: %v", err)
		}
		for _, m := range msgs {
			stored[m.ID] = true
		}
		total += len(msgs)
	}
	for id := range messages {
		if !stored[id] {
			t.Errorf("acknowledged message %s is missing after SIGKILL", id)
		}
	}
	for id := range runs {
		s := memento.Scope{User: "u" + id[1:3]}
		if ok, err := db.MemoryProcessed(ctx, s, id); err != nil || !ok {
			t.Errorf("acknowledged run of %s is missing after SIGKILL (%v)", id, err)
		}
		if _, err := db.Memory(ctx, s, "mem-"+id); err != nil {
			t.Errorf("memory of the acknowledged run of %s: %v", id, err)
		}
	}
	jobs, err := db.Jobs(ctx, memento.JobFilter{Kind: "extract"})
	if err != nil {
		t.Fatalf("Jobs: %v", err)
	}
	if len(jobs) != total {
		t.Errorf("%d messages but %d jobs after SIGKILL; want one job per message", total, len(jobs))
	}
	t.Logf("child acknowledged %d messages and %d runs; %d messages stored", len(messages), len(runs), total)
}
