package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// TestJobsRetry dead-letters a job whose handler finds its input invalid,
// lists it, retries it with the command and, with the handler fixed, sees
// it run to completion.
func TestJobsRetry(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	db := sqlitetest.OpenPath(t, path, sqlitetest.Options())
	var fixed atomic.Bool
	db.Handle("concepts", func(context.Context, string, json.RawMessage) error {
		if !fixed.Load() {
			return memento.Errorf(memento.EINVALID, "concept must be at most 200 bytes")
		}
		return nil
	}, memento.JobOptions{})
	s := memento.Scope{User: "ann"}
	jobs := func(memento.Message) []memento.JobRequest {
		return []memento.JobRequest{{Kind: "concepts", Payload: map[string]string{"user": "ann"}}}
	}
	if _, err := db.AppendMessages(ctx, s, "t1", []memento.Message{{Role: memento.RoleUser, Text: "hi"}}, jobs); err != nil {
		t.Fatal(err)
	}
	if err := db.Start(ctx); err != nil {
		t.Fatal(err)
	}
	sqlitetest.WaitForJobs(t, db, 30*time.Second)
	if err := db.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	out, err := run(t, "", "jobs", "list", "--state", "failed", "--json", "--db", path)
	if err != nil {
		t.Fatal(err)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil || len(raw) != 1 {
		t.Fatalf("jobs list --state failed = %s (%v); want one job", out, err)
	}
	wantKeys := []string{"attempt", "createdAt", "errors", "finalizedAt", "id", "kind", "lastError", "maxAttempts", "payload", "reason", "state"}
	if got := keysOf(t, raw[0]); !slices.Equal(got, wantKeys) {
		t.Errorf("failed job JSON keys = %v, want %v", got, wantKeys)
	}
	var failed memento.Job
	if err := json.Unmarshal(raw[0], &failed); err != nil {
		t.Fatal(err)
	}
	if failed.Attempt != 1 || failed.Reason != memento.JobPermanent || !strings.Contains(failed.LastError, "concept must be at most 200 bytes") {
		t.Errorf("dead letter = %+v, want failed for good at the first attempt with its error", failed)
	}

	// Refusals name the problem and retry nothing.
	for _, tt := range []struct {
		args []string
		code string
	}{
		{[]string{"jobs", "retry"}, memento.EINVALID},
		{[]string{"jobs", "retry", "first"}, memento.EINVALID},
		{[]string{"jobs", "retry", "99999"}, memento.ENOTFOUND},
		{[]string{"jobs", "retry", "1", "--failed"}, memento.EINVALID},
	} {
		if _, err := run(t, "", append(tt.args, "--db", path)...); memento.ErrorCode(err) != tt.code {
			t.Errorf("%s: error %v, want %s", strings.Join(tt.args, " "), err, tt.code)
		}
	}

	out, err = run(t, "", "jobs", "retry", "--failed", "--json", "--db", path)
	if err != nil {
		t.Fatal(err)
	}
	var retried []memento.Job
	if err := json.Unmarshal([]byte(out), &retried); err != nil || len(retried) != 1 {
		t.Fatalf("jobs retry --failed --json = %s (%v); want the dead letter", out, err)
	}
	if j := retried[0]; j.ID != failed.ID || j.State != memento.JobRetrying || j.Reason != "" || len(j.Errors) != 1 {
		t.Errorf("retried job = %+v, want job %d retrying with its error kept", j, failed.ID)
	}
	if out, err := run(t, "", "jobs", "retry", "--failed", "--db", path); err != nil || !strings.Contains(out, "No failed jobs") {
		t.Errorf("second jobs retry --failed = %q, %v; want nothing to retry", out, err)
	}

	// Fixed, the queue runs it to completion.
	fixed.Store(true)
	if err := db.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Stop(context.Background()) })
	sqlitetest.WaitForJobs(t, db, 30*time.Second)
	out, err = run(t, "", "jobs", "list", "--json", "--db", path)
	if err != nil {
		t.Fatal(err)
	}
	var all []memento.Job
	if err := json.Unmarshal([]byte(out), &all); err != nil || len(all) != 1 {
		t.Fatalf("jobs list = %s (%v)", out, err)
	}
	if j := all[0]; j.State != memento.JobCompleted || j.Attempt != 2 {
		t.Errorf("job after retry = %+v, want completed at attempt 2", j)
	}
}
