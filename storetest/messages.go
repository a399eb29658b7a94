package storetest

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
)

func testUsers(t *testing.T, open Opener) {
	st := open(t)
	ctx := t.Context()
	u1, err := st.EnsureUser(ctx, ann)
	if err != nil {
		t.Fatalf("EnsureUser: %v", err)
	}
	if u1.ID != "ann" || u1.Tenant != memento.DefaultTenant || u1.CreatedAt.IsZero() {
		t.Errorf("EnsureUser = %+v, want ann of the default tenant with a creation time", u1)
	}
	u2, err := st.EnsureUser(ctx, ann)
	if err != nil {
		t.Fatalf("EnsureUser again: %v", err)
	}
	if !u2.CreatedAt.Equal(u1.CreatedAt) {
		t.Errorf("EnsureUser again: created %v, first time %v; the user must be kept as it was", u2.CreatedAt, u1.CreatedAt)
	}
	// An empty tenant is the default one.
	u3, err := st.EnsureUser(ctx, memento.Scope{User: "ann"})
	if err != nil || u3.Tenant != memento.DefaultTenant || !u3.CreatedAt.Equal(u1.CreatedAt) {
		t.Errorf("EnsureUser without tenant = %+v, %v; want ann of the default tenant", u3, err)
	}
	_, err = st.EnsureUser(ctx, memento.Scope{})
	wantCode(t, "EnsureUser without id", err, memento.EINVALID)
	wantCode(t, "DeleteUser of an unknown user", st.DeleteUser(ctx, memento.Scope{User: "nobody"}), memento.ENOTFOUND)
}

func testMessages(t *testing.T, open Opener) {
	st := open(t)
	ctx := t.Context()
	res, err := st.AppendMessages(ctx, ann, "t1", []memento.Message{
		msgID("m1", memento.RoleUser, "I love heist films", 0),
		msgID("m2", memento.RoleAssistant, "Try Heat.", 1),
		msg(memento.RoleUser, "Something older?"),
	}, jobsOfKind("remember", ann))
	if err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	if res.Inserted != 3 || res.Duplicates != 0 || len(res.Messages) != 3 {
		t.Fatalf("AppendMessages = %d inserted, %d duplicates, %d messages; want 3, 0, 3", res.Inserted, res.Duplicates, len(res.Messages))
	}
	for i, m := range res.Messages {
		if m.Seq != int64(i+1) || m.Thread != "t1" || m.User != "ann" || m.Tenant != memento.DefaultTenant || m.ID == "" || m.CreatedAt.IsZero() {
			t.Errorf("stored message %d = %+v; want seq %d in t1 of ann with an id and a creation time", i, m, i+1)
		}
	}
	if !res.Messages[0].At.Equal(t0) {
		t.Errorf("stored time %v, want %v to the nanosecond", res.Messages[0].At, t0)
	}
	if res.Messages[2].At.IsZero() {
		t.Errorf("a message without a time got none")
	}
	got := messagesOK(t, st, ann, "t1")
	if diff := cmp.Diff(res.Messages, got); diff != "" {
		t.Errorf("Messages differ from what AppendMessages returned (-appended +listed):\n%s", diff)
	}
	// The same call again is a retry: nothing new, no jobs.
	again, err := st.AppendMessages(ctx, ann, "t1", []memento.Message{
		msgID("m1", memento.RoleUser, "I love heist films", 0),
		msgID("m2", memento.RoleAssistant, "Try Heat.", 1),
	}, jobsOfKind("remember", ann))
	if err != nil {
		t.Fatalf("AppendMessages again: %v", err)
	}
	if again.Inserted != 0 || again.Duplicates != 2 || again.Messages[1].Seq != 2 || !again.Messages[0].At.Equal(t0) {
		t.Errorf("repeat = %d inserted, %d duplicates, messages %v; want 0, 2 and the stored ones", again.Inserted, again.Duplicates, texts(again.Messages))
	}
	if jobs := jobsOf(t, st, "remember"); len(jobs) != 3 {
		t.Errorf("%d remember jobs after a repeated append, want 3 (one per new message)", len(jobs))
	}
	// A mixed batch stores only the new ones, after the newest.
	mixed := appendOK(t, st, ann, "t1", msgID("m2", memento.RoleAssistant, "Try Heat.", 1), msgID("m4", memento.RoleUser, "Thanks", 5))
	if mixed.Inserted != 1 || mixed.Duplicates != 1 || mixed.Messages[1].Seq != 4 {
		t.Errorf("mixed batch = %d inserted, %d duplicates, %v; want the new one at seq 4", mixed.Inserted, mixed.Duplicates, texts(mixed.Messages))
	}
	// Paging.
	page, err := st.Messages(ctx, ann, "t1", 1, 2)
	if err != nil {
		t.Fatalf("Messages after 1, limit 2: %v", err)
	}
	if len(page) != 2 || page[0].Seq != 2 || page[1].Seq != 3 {
		t.Errorf("Messages after 1, limit 2 = %v, want seqs 2 and 3", texts(page))
	}
	if rest, err := st.Messages(ctx, ann, "t1", 4, 0); err != nil || len(rest) != 0 || rest == nil {
		t.Errorf("Messages after the newest = %v, %v; want an empty, non-nil list", rest, err)
	}
	_, err = st.Messages(ctx, ann, "nope", 0, 0)
	wantCode(t, "Messages of an unknown thread", err, memento.ENOTFOUND)
	_, err = st.Messages(ctx, ann, "t1", 0, -1)
	wantCode(t, "Messages with a negative limit", err, memento.EINVALID)
}

func testMessageConflicts(t *testing.T, open Opener) {
	st := open(t)
	ctx := t.Context()
	appendOK(t, st, ann, "t1", msgID("m1", memento.RoleUser, "first", 0))
	for _, c := range []struct {
		name   string
		thread string
		m      memento.Message
		code   string
	}{
		{"same id, other text", "t1", msgID("m1", memento.RoleUser, "second", 1), memento.ECONFLICT},
		{"same id, other role", "t1", msgID("m1", memento.RoleAssistant, "first", 1), memento.ECONFLICT},
		{"same id, other thread", "t2", msgID("m1", memento.RoleUser, "first", 1), memento.ECONFLICT},
		{"empty text", "t1", msgID("m9", memento.RoleUser, "  ", 1), memento.EINVALID},
		{"unknown role", "t1", msgID("m9", "system", "hello", 1), memento.EINVALID},
	} {
		_, err := st.AppendMessages(ctx, ann, c.thread, []memento.Message{c.m}, jobsOfKind("remember", ann))
		wantCode(t, c.name, err, c.code)
	}
	_, err := st.AppendMessages(ctx, ann, "", []memento.Message{msg(memento.RoleUser, "hi")}, nil)
	wantCode(t, "empty thread id", err, memento.EINVALID)
	_, err = st.AppendMessages(ctx, memento.Scope{}, "t1", []memento.Message{msg(memento.RoleUser, "hi")}, nil)
	wantCode(t, "empty user id", err, memento.EINVALID)
	// A failed append stores none of its messages: the good one before
	// the conflicting one is not there, nor its job.
	_, err = st.AppendMessages(ctx, ann, "t1", []memento.Message{
		msgID("m5", memento.RoleUser, "fine", 2), msgID("m1", memento.RoleUser, "clash", 3),
	}, jobsOfKind("remember", ann))
	wantCode(t, "a batch with a conflict", err, memento.ECONFLICT)
	if got := messagesOK(t, st, ann, "t1"); len(got) != 1 {
		t.Errorf("after failed appends the thread holds %v, want only the first message", texts(got))
	}
	if jobs := jobsOf(t, st, "remember"); len(jobs) != 0 {
		t.Errorf("failed appends left %d jobs, want none", len(jobs))
	}
	if _, err := st.Messages(ctx, ann, "t2", 0, 0); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("a failed append to a new thread created it (Messages: %v)", err)
	}
}

func testThreads(t *testing.T, open Opener) {
	st := open(t)
	ctx := t.Context()
	empty, err := st.ThreadState(ctx, ann, "t1")
	if err != nil {
		t.Fatalf("ThreadState of a new thread: %v", err)
	}
	if empty.LastSeq != 0 || len(empty.LastShown) != 0 || empty.LastShown == nil || empty.Context.Count != memento.NewActiveContext().Count {
		t.Errorf("state of a new thread = %+v, want an empty one", empty)
	}
	ac := memento.NewActiveContext()
	ac.Genres = []string{"Crime"}
	ac.FreeText = "heist"
	answer := json.RawMessage(`{"reply":"Try Heat.","titles":[]}`)
	stored, err := st.SaveTurn(ctx, memento.Turn{
		Scope: ann, Thread: "t1",
		Messages: []memento.Message{msgID("u1", memento.RoleUser, "heist films", 0), msgID("a1", memento.RoleAssistant, "Try Heat.", 0)},
		State:    memento.ThreadState{Context: ac, LastShown: []string{"wiki:Heat"}, Shown: []string{"wiki:Heat", "wiki:Ronin"}},
		JobsFor: func(ms []memento.Message) []memento.JobRequest {
			return []memento.JobRequest{{Kind: memento.JobSummarise, Payload: memento.MessageJob{Tenant: ann.Tenant, User: ann.User, Thread: "t1", Seq: ms[len(ms)-1].Seq}}}
		},
		Answer: answer,
		Events: []memento.Event{{ID: "e1", Type: memento.EventSkipped, TitleID: "wiki:Ronin", At: t0}},
	})
	if err != nil {
		t.Fatalf("SaveTurn: %v", err)
	}
	if len(stored) != 2 || stored[0].Seq != 1 || stored[1].Seq != 2 {
		t.Fatalf("SaveTurn stored %v, want seqs 1 and 2", texts(stored))
	}
	state, err := st.ThreadState(ctx, ann, "t1")
	if err != nil {
		t.Fatalf("ThreadState: %v", err)
	}
	if state.LastSeq != 2 || !slices.Equal(state.LastShown, []string{"wiki:Heat"}) || !slices.Equal(state.Shown, []string{"wiki:Heat", "wiki:Ronin"}) {
		t.Errorf("state = lastSeq %d, lastShown %v, shown %v; want 2, [wiki:Heat], [wiki:Heat wiki:Ronin]", state.LastSeq, state.LastShown, state.Shown)
	}
	if !slices.Equal(state.Context.Genres, []string{"Crime"}) || state.Context.FreeText != "heist" {
		t.Errorf("stored context = %+v, want the turn's", state.Context)
	}
	if state.Thread.CreatedAt.IsZero() || state.Thread.UpdatedAt.IsZero() {
		t.Errorf("thread times missing: %+v", state.Thread)
	}
	if jobs := jobsOf(t, st, memento.JobSummarise); len(jobs) != 1 || payloadOf(t, jobs[0]).Seq != 2 {
		t.Errorf("summarise jobs = %+v, want one for seq 2", jobs)
	}
	events, err := st.Events(ctx, ann)
	if err != nil || len(events) != 1 || events[0].ID != "e1" {
		t.Errorf("events after the turn = %+v, %v; want e1", events, err)
	}
	answers, err := st.Answers(ctx, ann, "t1", 0)
	if err != nil {
		t.Fatalf("Answers: %v", err)
	}
	if len(answers) != 1 || answers[0].Message != "a1" || answers[0].Seq != 2 {
		t.Errorf("answers = %+v, want the answer of a1 at seq 2", answers)
	} else {
		var got, want any
		_ = json.Unmarshal(answers[0].Answer, &got)
		_ = json.Unmarshal(answer, &want)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("stored answer differs (-want +got):\n%s", diff)
		}
	}
	if none, err := st.Answers(ctx, ann, "nope", 0); err != nil || len(none) != 0 {
		t.Errorf("Answers of an unknown thread = %v, %v; want none", none, err)
	}
	// A repeated turn stores nothing new and enqueues nothing.
	if _, err := st.SaveTurn(ctx, memento.Turn{Scope: ann, Thread: "t1",
		Messages: []memento.Message{msgID("u1", memento.RoleUser, "heist films", 0), msgID("a1", memento.RoleAssistant, "Try Heat.", 0)},
		State:    memento.ThreadState{Context: ac, LastShown: []string{"wiki:Heat"}},
		JobsFor: func(ms []memento.Message) []memento.JobRequest {
			return []memento.JobRequest{{Kind: memento.JobSummarise, Payload: memento.MessageJob{}}}
		}}); err != nil {
		t.Fatalf("repeated SaveTurn: %v", err)
	}
	if n := len(messagesOK(t, st, ann, "t1")); n != 2 {
		t.Errorf("a repeated turn left %d messages, want 2", n)
	}
	if jobs := jobsOf(t, st, memento.JobSummarise); len(jobs) != 1 {
		t.Errorf("a repeated turn enqueued jobs: %d, want 1", len(jobs))
	}

	// The user edits the context.
	edited := memento.NewActiveContext()
	edited.Genres = []string{"Comedy"}
	if err := st.SetThreadContext(ctx, ann, "t1", edited); err != nil {
		t.Fatalf("SetThreadContext: %v", err)
	}
	if state, _ := st.ThreadState(ctx, ann, "t1"); !slices.Equal(state.Context.Genres, []string{"Comedy"}) || state.LastSeq != 2 {
		t.Errorf("after SetThreadContext: genres %v, lastSeq %d; want [Comedy], 2", state.Context.Genres, state.LastSeq)
	}
	wantCode(t, "SetThreadContext of an unknown thread", st.SetThreadContext(ctx, ann, "nope", edited), memento.ENOTFOUND)
	bad := memento.NewActiveContext()
	bad.Count = -1
	wantCode(t, "SetThreadContext with a negative count", st.SetThreadContext(ctx, ann, "t1", bad), memento.EINVALID)

	// Threads, most recently updated first.
	appendOK(t, st, ann, "t2", msg(memento.RoleUser, "another thread"))
	threads, err := st.Threads(ctx, ann)
	if err != nil {
		t.Fatalf("Threads: %v", err)
	}
	if len(threads) != 2 || threads[0].ID != "t2" || threads[1].ID != "t1" {
		t.Errorf("Threads = %+v, want t2 then t1", threads)
	}
	if none, err := st.Threads(ctx, memento.Scope{User: "nobody"}); err != nil || len(none) != 0 || none == nil {
		t.Errorf("Threads of an unknown user = %v, %v; want an empty list", none, err)
	}

	// Summaries.
	if sum, err := st.LatestSummary(ctx, ann, "t1"); err != nil || sum != nil {
		t.Errorf("LatestSummary before any = %+v, %v; want nil", sum, err)
	}
	s1, err := st.AppendSummary(ctx, ann, memento.Summary{Thread: "t1", Text: "Ann likes heists.", FromSeq: 1, ToSeq: 2, Sources: []string{"u1", "a1"}})
	if err != nil {
		t.Fatalf("AppendSummary: %v", err)
	}
	s2, err := st.AppendSummary(ctx, ann, memento.Summary{Thread: "t1", Text: "Ann likes heists and comedies.", FromSeq: 1, ToSeq: 2})
	if err != nil {
		t.Fatalf("AppendSummary: %v", err)
	}
	if s1.ID == 0 || s2.ID <= s1.ID || s1.CreatedAt.IsZero() {
		t.Errorf("summary ids %d, %d and time %v; want growing ids and a time", s1.ID, s2.ID, s1.CreatedAt)
	}
	latest, err := st.LatestSummary(ctx, ann, "t1")
	if err != nil || latest == nil || latest.ID != s2.ID || latest.Sources == nil {
		t.Errorf("LatestSummary = %+v, %v; want the second, with a non-nil source list", latest, err)
	}
	sums, err := st.Summaries(ctx, ann, "t1")
	if err != nil || len(sums) != 2 || sums[0].ID != s1.ID || !slices.Equal(sums[0].Sources, []string{"u1", "a1"}) {
		t.Errorf("Summaries = %+v, %v; want both, oldest first, with their sources", sums, err)
	}
	_, err = st.AppendSummary(ctx, ann, memento.Summary{Thread: "nope", Text: "x", FromSeq: 1, ToSeq: 1})
	wantCode(t, "AppendSummary to an unknown thread", err, memento.ENOTFOUND)
	_, err = st.AppendSummary(ctx, ann, memento.Summary{Thread: "t1", Text: "x", FromSeq: 3, ToSeq: 1})
	wantCode(t, "AppendSummary of a backwards range", err, memento.EINVALID)
	_, err = st.AppendSummary(ctx, ann, memento.Summary{Thread: "t1", Text: " ", FromSeq: 1, ToSeq: 1})
	wantCode(t, "AppendSummary of empty text", err, memento.EINVALID)
}

func testTurnCheckSeq(t *testing.T, open Opener) {
	st := open(t)
	ctx := t.Context()
	turn := func(id string, base int64) memento.Turn {
		return memento.Turn{Scope: ann, Thread: "t1", CheckSeq: true, BaseSeq: base,
			Messages: []memento.Message{msgID("u"+id, memento.RoleUser, "question "+id, 0), msgID("a"+id, memento.RoleAssistant, "answer "+id, 0)},
			State:    memento.ThreadState{Context: memento.NewActiveContext(), LastShown: []string{"title:" + id}},
			JobsFor: func([]memento.Message) []memento.JobRequest {
				return []memento.JobRequest{{Kind: "turn-job", Payload: id}}
			},
		}
	}
	if _, err := st.SaveTurn(ctx, turn("1", 0)); err != nil {
		t.Fatalf("first turn of a new thread with BaseSeq 0: %v", err)
	}
	// A second turn computed from the same (empty) state must not land.
	_, err := st.SaveTurn(ctx, turn("2", 0))
	wantCode(t, "a turn computed from a stale state", err, memento.ECONFLICT)
	state, _ := st.ThreadState(ctx, ann, "t1")
	if state.LastSeq != 2 || !slices.Equal(state.LastShown, []string{"title:1"}) {
		t.Errorf("after the refused turn: lastSeq %d, lastShown %v; want 2, [title:1]", state.LastSeq, state.LastShown)
	}
	if n := len(jobsOf(t, st, "turn-job")); n != 1 {
		t.Errorf("the refused turn left jobs: %d, want 1", n)
	}
	if _, err := st.SaveTurn(ctx, turn("2", state.LastSeq)); err != nil {
		t.Fatalf("turn from the current state: %v", err)
	}
	got := texts(messagesOK(t, st, ann, "t1"))
	want := []string{"1:user:question 1", "2:assistant:answer 1", "3:user:question 2", "4:assistant:answer 2"}
	if !slices.Equal(got, want) {
		t.Errorf("thread = %v, want %v", got, want)
	}
	// A message id reused with another text is ECONFLICT for a turn too.
	bad := turn("3", 4)
	bad.Messages[0] = msgID("u1", memento.RoleUser, "other text", 0)
	_, err = st.SaveTurn(ctx, bad)
	wantCode(t, "a turn reusing a message id", err, memento.ECONFLICT)
	_, err = st.SaveTurn(ctx, memento.Turn{Scope: ann, Thread: "t1", Messages: []memento.Message{msg("bot", "x")}})
	wantCode(t, "a turn with an unknown role", err, memento.EINVALID)
}
