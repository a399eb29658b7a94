package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

// ann and bob are the users most tests write for.
var (
	ann = memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	bob = memento.Scope{Tenant: memento.DefaultTenant, User: "bob"}
)

// t0 is the time the suite's messages are dated from. It has nanoseconds,
// so a store that rounds times is caught.
var t0 = time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.UTC)

// msg returns a message without an id (the store makes one up).
func msg(role memento.Role, text string) memento.Message {
	return memento.Message{Role: role, Text: text}
}

// msgID returns a message with a client id, dated t0 plus minutes.
func msgID(id string, role memento.Role, text string, minutes int) memento.Message {
	return memento.Message{ID: id, Role: role, Text: text, At: t0.Add(time.Duration(minutes) * time.Minute)}
}

// jobsOfKind returns a jobsFor that enqueues one job of kind per message,
// with a MessageJob payload.
func jobsOfKind(kind string, s memento.Scope) func(memento.Message) []memento.JobRequest {
	return func(m memento.Message) []memento.JobRequest {
		return []memento.JobRequest{{Kind: kind, Payload: memento.MessageJob{
			Tenant: s.Tenant, User: s.User, Thread: m.Thread, Message: m.ID, Seq: m.Seq}}}
	}
}

// appendOK appends msgs and fails the test on error.
func appendOK(t *testing.T, st Store, s memento.Scope, thread string, msgs ...memento.Message) *memento.AppendResult {
	t.Helper()
	res, err := st.AppendMessages(t.Context(), s, thread, msgs, nil)
	if err != nil {
		t.Fatalf("AppendMessages(%s, %s): %v", s.User, thread, err)
	}
	return res
}

// messagesOK lists a whole thread and fails the test on error.
func messagesOK(t *testing.T, st Store, s memento.Scope, thread string) []memento.Message {
	t.Helper()
	msgs, err := st.Messages(t.Context(), s, thread, 0, 0)
	if err != nil {
		t.Fatalf("Messages(%s, %s): %v", s.User, thread, err)
	}
	return msgs
}

// wantCode fails the test unless err carries the error code.
func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want %s", what, code)
		return
	}
	if got := memento.ErrorCode(err); got != code {
		t.Errorf("%s: error %v (code %s), want %s", what, err, got, code)
	}
}

// jobsOf lists the jobs of a kind, newest first.
func jobsOf(t *testing.T, st Store, kind string) []memento.Job {
	t.Helper()
	jobs, err := st.Jobs(t.Context(), memento.JobFilter{Kind: kind})
	if err != nil {
		t.Fatalf("Jobs(%s): %v", kind, err)
	}
	return jobs
}

// enqueuedOf counts the jobs of a kind the store keeps, River's and those
// waiting in the users' backlogs (memento.JobRequest.ByUser) alike,
// through the store's job counts when it has them.
func enqueuedOf(t *testing.T, st Store, kind string) int {
	t.Helper()
	jc, ok := st.(JobCounter)
	if !ok {
		return len(jobsOf(t, st, kind))
	}
	stats, err := jc.JobStats(t.Context())
	if err != nil {
		t.Fatalf("JobStats: %v", err)
	}
	k := statsOf(stats, kind)
	return k.Pending + k.Running + k.Retrying + k.Completed + k.Failed
}

// payloadOf decodes a job's MessageJob payload.
func payloadOf(t *testing.T, j memento.Job) memento.MessageJob {
	t.Helper()
	var p memento.MessageJob
	if err := json.Unmarshal(j.Payload, &p); err != nil {
		t.Fatalf("job %d payload %s: %v", j.ID, j.Payload, err)
	}
	return p
}

// waitFor polls cond until it holds or timeout passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// userMessage stores one user message in thread and returns it as stored.
func userMessage(t *testing.T, st Store, s memento.Scope, thread, id, text string, minutes int) memento.Message {
	t.Helper()
	res := appendOK(t, st, s, thread, msgID(id, memento.RoleUser, text, minutes))
	return res.Messages[0]
}

// semantic returns a current semantic memory of attribute from message m.
func semantic(id, attribute, value string, m memento.Message) memento.Memory {
	return memento.Memory{ID: id, Kind: memento.MemoryAttribute, Attribute: attribute, Mode: memento.ModeSemantic,
		Value: value, ValidFrom: m.At, Sources: []string{m.ID}, RunID: m.ID}
}

// episode returns an episodic memory of attribute from message m.
func episode(id, attribute, value string, m memento.Message) memento.Memory {
	return memento.Memory{ID: id, Kind: memento.MemoryEpisode, Attribute: attribute, Mode: memento.ModeEpisodic,
		Value: value, ValidFrom: m.At, Sources: []string{m.ID}, RunID: m.ID}
}

// run returns the run record of a pipeline write over m.
func run(m memento.Message, ids ...string) memento.MemoryRun {
	return memento.MemoryRun{Message: m.ID, Thread: m.Thread, Outcome: memento.RunStored, Rejected: []string{}, Facts: []memento.Fact{},
		Memories: ids, Superseded: []string{}, Steps: []memento.RunStep{}, StartedAt: m.At, FinishedAt: m.At.Add(time.Second)}
}

// writeOK stores w and fails the test unless it was written.
func writeOK(t *testing.T, st Store, s memento.Scope, w memento.MemoryWrite) {
	t.Helper()
	ok, err := st.WriteMemories(t.Context(), s, w)
	if err != nil {
		t.Fatalf("WriteMemories(%s): %v", w.Message.ID, err)
	}
	if !ok {
		t.Fatalf("WriteMemories(%s) wrote nothing", w.Message.ID)
	}
}

// ids returns the ids of memories, in order.
func ids(ms []memento.Memory) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

// texts returns "seq:role:text" of each message, in order.
func texts(msgs []memento.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = fmt.Sprintf("%d:%s:%s", m.Seq, m.Role, m.Text)
	}
	return out
}

// noCtx is a context for calls made outside a test's goroutine.
func noCtx() context.Context { return context.Background() }
