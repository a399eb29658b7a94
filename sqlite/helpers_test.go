package sqlite_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// stepClock is a memento.Clock that advances one second on every reading,
// so that every stored time differs and orders are deterministic.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func newStepClock() *stepClock {
	return &stepClock{t: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

// openClocked opens a test store whose clock is a stepClock.
func openClocked(t *testing.T) *sqlite.DB {
	t.Helper()
	opts := sqlitetest.Options()
	opts.Clock = newStepClock()
	return sqlitetest.OpenWith(t, opts)
}

// messageJobs returns a jobsFor that enqueues one job of kind per message,
// with a memento.MessageJob payload.
func messageJobs(kind string, s memento.Scope) func(memento.Message) []memento.JobRequest {
	return func(m memento.Message) []memento.JobRequest {
		return []memento.JobRequest{{Kind: kind, Payload: memento.MessageJob{
			Tenant: s.Tenant, User: s.User, Thread: m.Thread, Message: m.ID, Seq: m.Seq,
		}}}
	}
}

// appendTexts appends user messages with the given texts and fails the test
// on error.
func appendTexts(t *testing.T, db *sqlite.DB, s memento.Scope, thread string, texts ...string) *memento.AppendResult {
	t.Helper()
	msgs := make([]memento.Message, len(texts))
	for i, text := range texts {
		msgs[i] = memento.Message{Role: memento.RoleUser, Text: text}
	}
	res, err := db.AppendMessages(context.Background(), s, thread, msgs, nil)
	if err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	return res
}

// wantCode fails the test unless err carries the application error code.
func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := memento.ErrorCode(err); got != code {
		t.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}

// countJobs counts the jobs of the store, in any state.
func countJobs(t *testing.T, db *sqlite.DB) int {
	t.Helper()
	jobs, err := db.Jobs(context.Background(), memento.JobFilter{})
	if err != nil {
		t.Fatalf("Jobs: %v", err)
	}
	return len(jobs)
}
