package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// TestJobsStats counts queued jobs by kind and shows how long the oldest
// has waited.
func TestJobsStats(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	db := sqlitetest.OpenPath(t, path, sqlitetest.Options())
	s := memento.Scope{User: "ann"}
	jobs := func(m memento.Message) []memento.JobRequest {
		// Each message's own payload: equal requests of one transaction
		// are enqueued once.
		p := map[string]string{"user": "ann", "message": m.ID}
		return []memento.JobRequest{{Kind: "concepts", Payload: p}, {Kind: "remember", Payload: p}}
	}
	if _, err := db.AppendMessages(ctx, s, "t1", []memento.Message{{Role: memento.RoleUser, Text: "hi"}, {Role: memento.RoleUser, Text: "there"}}, jobs); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, "", "jobs", "stats", "--json", "--db", path)
	if err != nil {
		t.Fatal(err)
	}
	var st memento.JobStats
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("jobs stats --json = %s: %v", out, err)
	}
	if st.Waiting != 4 || len(st.Kinds) != 2 || st.Kinds[0].Kind != "concepts" || st.Kinds[0].Pending != 2 || st.Kinds[0].Waiting != 2 || st.OldestSeconds <= 0 {
		t.Errorf("jobs stats = %+v, want 2 pending jobs of each kind, waiting", st)
	}
	for _, key := range []string{`"kinds"`, `"waiting"`, `"oldestSeconds"`, `"pending"`, `"running"`, `"retrying"`, `"completed"`, `"failed"`} {
		if !strings.Contains(out, key) {
			t.Errorf("jobs stats --json lacks %s: %s", key, out)
		}
	}
	text, err := run(t, "", "jobs", "stats", "--db", path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "concepts") || !strings.Contains(text, "waiting: 4 jobs") {
		t.Errorf("jobs stats = %q", text)
	}

}
