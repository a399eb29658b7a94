package http_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/engine/enginetest"
	mhttp "github.com/memento-ai/memento/http"
)

// TestOutOfRangeTimesAndBadIDsAreRefused checks that values the store
// would mangle (a time it cannot hold, an id that is not UTF-8) answer 400
// naming the field, and that nothing is stored or enqueued for them.
func TestOutOfRangeTimesAndBadIDsAreRefused(t *testing.T) {
	ctx := context.Background()
	db := enginetest.Open(t)
	var enqueued atomic.Int64
	jobs := func(s memento.Scope, thread string, m memento.Message) []memento.JobRequest {
		enqueued.Add(1)
		return []memento.JobRequest{{Kind: memento.JobRemember, Payload: memento.MessageJob{Tenant: s.Tenant, User: s.User, Thread: thread, Message: m.ID, Seq: m.Seq}}}
	}
	var ensured atomic.Int64
	hooks := mhttp.SnapshotHooks{Ensure: func(context.Context, memento.Scope) error { ensured.Add(1); return nil }}
	ts := testServer(t, func(s *mhttp.Server) {
		s.Routes = append(s.Routes,
			mhttp.RegisterSnapshots(hooks),
			mhttp.RegisterMemory(mhttp.MemoryRoutes{Store: db, JobsFor: jobs}),
			mhttp.RegisterProfile(mhttp.ProfileRoutes{Events: db, Profiles: db}))
	})
	base := ts.URL + "/v1/users/"
	doc := func(at string) string {
		return `{"format":"memento.user/v1","threads":[{"thread":{"id":"t1"},"messages":[{"id":"m1","role":"user","text":"hi","at":"` + at + `"}]}]}`
	}
	tests := []struct {
		name, path, body string
		msg              string // the start of the error message
	}{
		{"message at year 9999", "ann/threads/t1/messages", `{"id":"m1","role":"user","text":"hello","at":"9999-12-31T00:00:00Z"}`,
			"messages[0].at 9999-12-31T00:00:00Z is out of range: times must be from 1678-01-01 to 2261-12-31 UTC"},
		{"second message at year 1600", "ann/threads/t1/messages", `[{"role":"user","text":"a"},{"role":"user","text":"b","at":"1600-01-01T00:00:00Z"}]`,
			"messages[1].at 1600-01-01T00:00:00Z is out of range"},
		{"user id not UTF-8", "%FFann/threads/t1/messages", `{"id":"m1","role":"user","text":"hello"}`, "user id is not valid UTF-8"},
		{"user id with a control character", "ann%01/threads/t1/messages", `{"id":"m1","role":"user","text":"hello"}`, "user id holds the control character U+0001"},
		{"thread id not UTF-8", "ann/threads/t%C3/messages", `{"id":"m1","role":"user","text":"hello"}`, "thread id is not valid UTF-8"},
		{"message id not UTF-8", "ann/threads/t1/messages", "{\"id\":\"m\xff\",\"role\":\"user\",\"text\":\"hello\"}", "messages[0].id holds U+FFFD at byte 1: it was not valid UTF-8"},
		{"message id with a newline", "ann/threads/t1/messages", `{"id":"m1\nx","role":"user","text":"hello"}`, "messages[0].id holds the control character U+000A"},
		{"event at year 9999", "ann/events", `{"type":"liked","title":"t01","at":"9999-12-31T00:00:00Z"}`, "events[0].at 9999-12-31T00:00:00Z is out of range"},
		{"event user id not UTF-8", "%FF/events", `{"type":"liked","title":"t01"}`, "user id is not valid UTF-8"},
		{"import at year 9999", "ann/import", doc("9999-12-31T00:00:00Z"), "threads[0].messages[0].at 9999-12-31T00:00:00Z is out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := memDo(t, "POST", base+tt.path, tt.body)
			e, _ := body["error"].(map[string]any)
			msg, _ := e["message"].(string)
			if detail, _ := body["detail"].(string); msg == "" {
				msg = detail // the snapshot middleware answers in huma's shape
			}
			if code != 400 || !strings.HasPrefix(msg, tt.msg) {
				t.Errorf("POST %s = %d %v, want 400 with a message starting %q", tt.path, code, body, tt.msg)
			}
		})
	}
	users, err := db.Users(ctx, memento.DefaultTenant)
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 0 {
		t.Errorf("users stored after refused requests: %q", users)
	}
	if n := enqueued.Load(); n != 0 {
		t.Errorf("%d messages were given jobs after refused requests", n)
	}
	jobList, err := db.Jobs(ctx, memento.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobList) != 0 {
		t.Errorf("%d jobs enqueued after refused requests", len(jobList))
	}
	if n := ensured.Load(); n != 7 {
		// Only requests whose user id is valid reach a restore.
		t.Errorf("the snapshot restore ran %d times, want 7", n)
	}

	// The same requests within range are stored.
	if code, body := memDo(t, "POST", base+"ann/threads/t1/messages", `{"id":"m1","role":"user","text":"hello","at":"2261-12-31T00:00:00Z"}`); code != 202 {
		t.Errorf("message at 2261-12-31 = %d %v, want 202", code, body)
	}
	msgs, err := db.Messages(ctx, memento.Scope{User: "ann"}, "t1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || msgs[0].At.Year() != 2261 {
		t.Errorf("stored %v, want one message of 2261", msgs)
	}
	if jobList, err = db.Jobs(ctx, memento.JobFilter{}); err != nil || len(jobList) != 1 {
		t.Errorf("jobs after one stored message: %d (err %v), want 1", len(jobList), err)
	}
}
