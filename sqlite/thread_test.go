package sqlite_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

func TestThreadStateOfNewThread(t *testing.T) {
	db := sqlitetest.Open(t)
	s := memento.Scope{User: "ann"}
	got, err := db.ThreadState(context.Background(), s, "new")
	if err != nil {
		t.Fatalf("ThreadState: %v", err)
	}
	want := &memento.ThreadState{
		Thread:    memento.Thread{Tenant: memento.DefaultTenant, User: "ann", ID: "new"},
		Context:   memento.NewActiveContext(),
		LastShown: []string{},
		Shown:     []string{},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ThreadState (-want +got):\n%s", diff)
	}
}

func TestSaveTurn(t *testing.T) {
	ctx := context.Background()
	db := openClocked(t)
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	minYear := 1990
	ac := memento.ActiveContext{Genres: []string{"Thriller"}, MinYear: &minYear, Count: 5, ExcludedTitleIDs: []string{"ml:9"}}

	var jobsFor []memento.Message
	turn := memento.Turn{
		Scope:  s,
		Thread: "t1",
		Messages: []memento.Message{
			{ID: "u1", Role: memento.RoleUser, Text: "Thrillers after 1990"},
			{ID: "a1", Role: memento.RoleAssistant, Text: "Heat, Se7en"},
		},
		State: memento.ThreadState{Context: ac, LastShown: []string{"ml:1", "ml:2"}},
		JobsFor: func(stored []memento.Message) []memento.JobRequest {
			jobsFor = stored
			last := stored[len(stored)-1]
			return []memento.JobRequest{{Kind: memento.JobSummarise, Payload: memento.MessageJob{
				Tenant: s.Tenant, User: s.User, Thread: last.Thread, Message: last.ID, Seq: last.Seq}}}
		},
	}
	stored, err := db.SaveTurn(ctx, turn)
	if err != nil {
		t.Fatalf("SaveTurn: %v", err)
	}
	if len(stored) != 2 || stored[0].Seq != 1 || stored[1].Seq != 2 {
		t.Fatalf("SaveTurn returned %+v, want two messages with seq 1 and 2", stored)
	}
	if diff := cmp.Diff(stored, jobsFor); diff != "" {
		t.Errorf("JobsFor got other messages than stored (-stored +jobsFor):\n%s", diff)
	}

	st, err := db.ThreadState(ctx, s, "t1")
	if err != nil {
		t.Fatalf("ThreadState: %v", err)
	}
	wantCtx := ac.Clone()
	if diff := cmp.Diff(wantCtx, st.Context); diff != "" {
		t.Errorf("active context (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ml:1", "ml:2"}, st.LastShown); diff != "" {
		t.Errorf("last shown (-want +got):\n%s", diff)
	}
	if st.LastSeq != 2 {
		t.Errorf("LastSeq = %d, want 2", st.LastSeq)
	}
	jobs, err := db.Jobs(ctx, memento.JobFilter{Kind: memento.JobSummarise})
	if err != nil {
		t.Fatalf("Jobs: %v", err)
	}
	if len(jobs) != 1 || jobs[0].State != memento.JobPending {
		t.Fatalf("jobs = %+v, want one pending summarise job", jobs)
	}
	if got, want := string(jobs[0].Payload), `{"tenant":"default","user":"ann","thread":"t1","message":"a1","seq":2}`; got != want {
		t.Errorf("payload = %s, want %s", got, want)
	}

	// The same turn again stores nothing new and enqueues nothing.
	jobsFor = nil
	if _, err := db.SaveTurn(ctx, turn); err != nil {
		t.Fatalf("repeated SaveTurn: %v", err)
	}
	if jobsFor != nil {
		t.Errorf("a repeated turn asked for jobs for %+v", jobsFor)
	}
	if got := countJobs(t, db); got != 1 {
		t.Errorf("jobs after a repeated turn = %d, want 1", got)
	}
}

func TestSaveTurnIsAtomic(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{User: "ann"}
	appendTexts(t, db, s, "t1", "before")
	before, err := db.ThreadState(ctx, s, "t1")
	if err != nil {
		t.Fatalf("ThreadState: %v", err)
	}

	_, err = db.SaveTurn(ctx, memento.Turn{
		Scope:    s,
		Thread:   "t1",
		Messages: []memento.Message{{Role: memento.RoleUser, Text: "lost"}, {Role: memento.RoleAssistant, Text: "also lost"}},
		State:    memento.ThreadState{Context: memento.ActiveContext{Genres: []string{"Drama"}}, LastShown: []string{"x"}},
		JobsFor: func([]memento.Message) []memento.JobRequest {
			return []memento.JobRequest{
				{Kind: "fine", Payload: 1},
				{Kind: "broken", Payload: make(chan int)}, // cannot be marshalled
			}
		},
	})
	if err == nil {
		t.Fatal("SaveTurn with an unmarshalable payload succeeded")
	}

	msgs, err := db.Messages(ctx, s, "t1", 0, 0)
	if err != nil {
		t.Fatalf("Messages: %v", err)
	}
	if len(msgs) != 1 {
		t.Errorf("after a failed turn the thread has %d messages, want the 1 from before", len(msgs))
	}
	after, err := db.ThreadState(ctx, s, "t1")
	if err != nil {
		t.Fatalf("ThreadState: %v", err)
	}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("a failed turn changed the thread state (-before +after):\n%s", diff)
	}
	if got := countJobs(t, db); got != 0 {
		t.Errorf("a failed turn left %d jobs", got)
	}

	// A turn in a new thread that fails leaves no thread behind either.
	_, err = db.SaveTurn(ctx, memento.Turn{Scope: s, Thread: "t2",
		Messages: []memento.Message{{Role: memento.RoleUser, Text: "x"}},
		JobsFor: func([]memento.Message) []memento.JobRequest {
			return []memento.JobRequest{{Kind: "broken", Payload: func() {}}}
		}})
	if err == nil {
		t.Fatal("SaveTurn with an unmarshalable payload succeeded")
	}
	threads, err := db.Threads(ctx, s)
	if err != nil {
		t.Fatalf("Threads: %v", err)
	}
	if len(threads) != 1 {
		t.Errorf("threads = %+v, want only t1", threads)
	}
}

func TestSaveTurnValidates(t *testing.T) {
	db := sqlitetest.Open(t)
	_, err := db.SaveTurn(context.Background(), memento.Turn{Scope: memento.Scope{User: "ann"}, Thread: "t1",
		Messages: []memento.Message{{Role: "system", Text: "x"}}})
	wantCode(t, err, memento.EINVALID)
}

func TestThreadsNewestFirst(t *testing.T) {
	ctx := context.Background()
	db := openClocked(t)
	s := memento.Scope{User: "ann"}
	appendTexts(t, db, s, "a", "one")
	appendTexts(t, db, s, "b", "two")
	appendTexts(t, db, s, "c", "three")
	appendTexts(t, db, s, "a", "four")

	threads, err := db.Threads(ctx, s)
	if err != nil {
		t.Fatalf("Threads: %v", err)
	}
	var got []string
	for _, th := range threads {
		got = append(got, th.ID)
		if !th.UpdatedAt.After(th.CreatedAt) {
			t.Errorf("thread %s updated %v, created %v: want updated after created", th.ID, th.UpdatedAt, th.CreatedAt)
		}
	}
	if diff := cmp.Diff([]string{"a", "c", "b"}, got); diff != "" {
		t.Errorf("thread order (-want +got):\n%s", diff)
	}
	none, err := db.Threads(ctx, memento.Scope{User: "nobody"})
	if err != nil || len(none) != 0 {
		t.Errorf("Threads of an unknown user = %v, %v; want none", none, err)
	}
}

func TestSummaries(t *testing.T) {
	ctx := context.Background()
	db := openClocked(t)
	s := memento.Scope{User: "ann"}

	_, err := db.AppendSummary(ctx, s, memento.Summary{Thread: "t1", Text: "x", FromSeq: 1, ToSeq: 2})
	wantCode(t, err, memento.ENOTFOUND)

	appendTexts(t, db, s, "t1", "a", "b", "c", "d")
	latest, err := db.LatestSummary(ctx, s, "t1")
	if err != nil || latest != nil {
		t.Fatalf("LatestSummary before any = %v, %v; want nil, nil", latest, err)
	}

	first, err := db.AppendSummary(ctx, s, memento.Summary{Thread: "t1", Text: "Ann likes thrillers.", FromSeq: 1, ToSeq: 2, Sources: []string{"m1", "m2"}})
	if err != nil {
		t.Fatalf("AppendSummary: %v", err)
	}
	second, err := db.AppendSummary(ctx, s, memento.Summary{Thread: "t1", Text: "Ann likes old thrillers.", FromSeq: 1, ToSeq: 4})
	if err != nil {
		t.Fatalf("AppendSummary: %v", err)
	}
	if first.ID == 0 || second.ID <= first.ID || first.CreatedAt.IsZero() {
		t.Errorf("summaries got ids %d, %d and time %v", first.ID, second.ID, first.CreatedAt)
	}
	if second.Sources == nil {
		t.Error("nil sources came back nil, want empty")
	}

	latest, err = db.LatestSummary(ctx, s, "t1")
	if err != nil {
		t.Fatalf("LatestSummary: %v", err)
	}
	if diff := cmp.Diff(second, latest); diff != "" {
		t.Errorf("LatestSummary (-want +got):\n%s", diff)
	}
	all, err := db.Summaries(ctx, s, "t1")
	if err != nil {
		t.Fatalf("Summaries: %v", err)
	}
	if diff := cmp.Diff([]memento.Summary{*first, *second}, all); diff != "" {
		t.Errorf("Summaries (-want +got):\n%s", diff)
	}

	other, err := db.Summaries(ctx, memento.Scope{User: "bob"}, "t1")
	if err != nil || len(other) != 0 {
		t.Errorf("another user's Summaries = %v, %v; want none", other, err)
	}

	bad := []memento.Summary{
		{Thread: "t1", Text: " ", FromSeq: 1, ToSeq: 2},
		{Thread: "t1", Text: "x", FromSeq: 3, ToSeq: 2},
		{Thread: "", Text: "x"},
	}
	for _, sum := range bad {
		_, err := db.AppendSummary(ctx, s, sum)
		wantCode(t, err, memento.EINVALID)
	}
}

// TestThreadRemembersWhatItShowed checks that a thread keeps every title
// it showed (newest first, bounded), apart from the last answer's.
func TestThreadRemembersWhatItShowed(t *testing.T) {
	db := sqlitetest.Open(t)
	ctx := context.Background()
	s := memento.Scope{User: "ann"}
	many := make([]string, memento.MaxShownRemembered+10)
	for i := range many {
		many[i] = fmt.Sprintf("t%d", i)
	}
	for i, st := range []memento.ThreadState{
		{LastShown: []string{"a", "b"}, Shown: []string{"a", "b"}},
		{LastShown: []string{"c"}, Shown: []string{"c", "a", "b"}},
		{LastShown: []string{"d"}}, // a caller that keeps no list: the last answer's titles
		{LastShown: []string{"e"}, Shown: many},
	} {
		if _, err := db.SaveTurn(ctx, memento.Turn{Scope: s, Thread: "t", State: st,
			Messages: []memento.Message{{ID: fmt.Sprint("m", i), Role: memento.RoleUser, Text: "x"}}}); err != nil {
			t.Fatal(err)
		}
		got, err := db.ThreadState(ctx, s, "t")
		if err != nil {
			t.Fatal(err)
		}
		want := st.Shown
		if want == nil {
			want = st.LastShown
		}
		want = want[:min(len(want), memento.MaxShownRemembered)]
		if !slices.Equal(got.Shown, want) || !slices.Equal(got.LastShown, st.LastShown) {
			t.Errorf("turn %d: shown %d titles %v…, last %v; want %d %v…, last %v", i+1, len(got.Shown), got.Shown[:min(3, len(got.Shown))], got.LastShown, len(want), want[:min(3, len(want))], st.LastShown)
		}
	}
}
