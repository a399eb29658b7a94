package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/pipeline"
	"github.com/memento-ai/memento/sqlite"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// killText is the i-th message of the ingestion: alternately an event
// (episodic: one memory per message) and a move (semantic: each
// supersedes the one before).
func killText(i int) string {
	if i%2 == 0 {
		return fmt.Sprintf("I went to the museum number %d yesterday", i)
	}
	return fmt.Sprintf("I live in Springfield%d now", i)
}

// killWorker is the remember worker of both processes, saving a
// checkpoint after every node so a kill lands in the middle of runs.
func killWorker(t testing.TB, db *sqlite.DB) *pipeline.Worker {
	p, err := pipeline.New(offline.New(offline.Options{}), db, pipeline.Options{CheckpointAfter: -1, Embedder: offline.NewEmbedder(32)})
	if err != nil {
		t.Fatal(err)
	}
	return &pipeline.Worker{Pipeline: p, Ordered: db}
}

func killJobs(s memento.Scope) func(memento.Message) []memento.JobRequest {
	return func(m memento.Message) []memento.JobRequest {
		return []memento.JobRequest{{Kind: memento.JobRemember, Payload: memento.MessageJob{Tenant: s.Tenant, User: s.User, Thread: m.Thread, Message: m.ID, Seq: m.Seq}}}
	}
}

// TestKillHelperProcess is not a test: run by TestSIGKILLDuringIngestion
// in a child process, it runs the pipeline's workers and appends messages
// one by one, acknowledging each once AppendMessages returned, until it is
// killed.
func TestKillHelperProcess(t *testing.T) {
	db := sqlitetest.ChildStore(t)
	ctx := context.Background()
	w := killWorker(t, db)
	db.Handle(memento.JobRemember, w.Handle, memento.JobOptions{})
	if err := db.Start(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; ; i++ {
		id := fmt.Sprintf("k%05d", i)
		msg := memento.Message{ID: id, Role: memento.RoleUser, Text: killText(i), At: start.Add(time.Duration(i) * time.Minute)}
		if _, err := db.AppendMessages(ctx, s, "t1", []memento.Message{msg}, killJobs(s)); err != nil {
			t.Fatalf("append: %v", err)
		}
		sqlitetest.Ack(id)
	}
}

func TestSIGKILLDuringIngestion(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process")
	}
	path := filepath.Join(t.TempDir(), "kill.db")
	// The child is killed while it appends and its workers run the
	// pipeline.
	acked := sqlitetest.KillChild(t, "TestKillHelperProcess", path, 60)

	// Restart: no acknowledged message is lost.
	ctx := context.Background()
	db := sqlitetest.OpenPath(t, path, sqlitetest.Options())
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	msgs, err := db.Messages(ctx, s, "t1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]memento.Message{}
	for _, m := range msgs {
		stored[m.ID] = m
	}
	for _, id := range acked {
		if _, ok := stored[id]; !ok {
			t.Errorf("acknowledged message %s is missing after SIGKILL", id)
		}
	}
	processedBefore, resumable := 0, 0
	for _, m := range msgs {
		if ok, _ := db.MemoryProcessed(ctx, s, m.ID); ok {
			processedBefore++
		} else if _, ok, _ := db.Checkpointer(s).Load(ctx, pipeline.GraphName+"/"+m.ID); ok {
			resumable++
		}
	}
	t.Logf("child acknowledged %d messages, %d stored; %d processed before the kill, %d runs left with a checkpoint", len(acked), len(msgs), processedBefore, resumable)

	// The restarted workers finish every job. Jobs that were running when
	// the child died are rescued by the queue as it starts (the dead
	// process's lock is free) and run again; before that, the test hands
	// their payloads to the handler directly, twice, as duplicate
	// deliveries would, so each of them runs three times in all.
	w := killWorker(t, db)
	db.Handle(memento.JobRemember, w.Handle, memento.JobOptions{})
	stuck, err := db.Jobs(ctx, memento.JobFilter{Kind: memento.JobRemember, State: memento.JobRunning})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		for _, j := range stuck {
			if err := w.Handle(ctx, j.Kind, j.Payload); err != nil {
				t.Fatalf("re-run of job %d: %v", j.ID, err)
			}
		}
	}
	if err := db.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Stop(context.Background()) })
	waitJobs(t, db, 0, 30*time.Second)

	// Every message ends processed exactly once.
	runs, err := db.MemoryRuns(ctx, s, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != len(msgs) {
		t.Errorf("%d runs for %d messages; want one each", len(runs), len(msgs))
	}
	all, err := db.Memories(ctx, s, memento.MemoryFilter{All: true})
	if err != nil {
		t.Fatal(err)
	}
	byRun := map[string]int{}
	episodes, current := 0, 0
	for _, m := range all {
		byRun[m.RunID]++
		if m.Attribute == "EVENT" {
			episodes++
		}
		if m.Attribute == "LOCATION" && m.ValidTo == nil {
			current++
		}
	}
	for _, r := range runs {
		if r.Outcome != memento.RunStored {
			t.Errorf("run %s: %s (%s)", r.Message, r.Outcome, r.Reason)
		}
		if byRun[r.Message] != len(r.Memories) {
			t.Errorf("run %s wrote %d memories but %d carry its id", r.Message, len(r.Memories), byRun[r.Message])
		}
	}
	events := 0
	for _, m := range msgs {
		if strings.Contains(m.Text, "museum") {
			events++
		}
	}
	if episodes != events {
		t.Errorf("%d EVENT episodes for %d event messages; want exactly one each", episodes, events)
	}
	if current != 1 {
		t.Errorf("%d current LOCATION values; want 1", current)
	}
	// The newest statement of where the user lives wins.
	last := ""
	for _, m := range msgs {
		if strings.Contains(m.Text, "Springfield") {
			last = strings.TrimSuffix(strings.TrimPrefix(m.Text, "I live in "), " now")
		}
	}
	loc, _ := db.Memories(ctx, s, memento.MemoryFilter{Attribute: "LOCATION"})
	if len(loc) != 1 || !strings.Contains(loc[0].Value, last) {
		t.Errorf("current LOCATION = %+v; want the newest, %s", loc, last)
	}
	if failed, _ := db.Jobs(ctx, memento.JobFilter{State: memento.JobFailed}); len(failed) != 0 {
		raw, _ := json.Marshal(failed)
		t.Errorf("failed jobs: %s", raw)
	}
}

// waitJobs waits until at most left jobs have not ended.
func waitJobs(t *testing.T, db *sqlite.DB, left int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		n, err := db.Unfinished(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n <= left {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs unfinished after %s", n, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
