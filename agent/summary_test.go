package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// gatedSummariser summarises only once its gate opens, so the test can
// prove a reply never waits for its summary.
type gatedSummariser struct {
	gate    chan struct{}
	started chan struct{}
	inner   memento.Summariser
}

func (g *gatedSummariser) Summarise(ctx context.Context, in memento.SummariseInput) (string, error) {
	select {
	case g.started <- struct{}{}:
	default:
	}
	select {
	case <-g.gate:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	return g.inner.Summarise(ctx, in)
}

func TestSummaryRunsAfterReply(t *testing.T) {
	ctx := context.Background()
	cat := testCatalog()
	db := sqlitetest.Open(t)
	a := newAgent(t, db, cat, cat)
	g := &gatedSummariser{gate: make(chan struct{}), started: make(chan struct{}, 1), inner: offline.New(offline.Options{})}
	w := &agent.SummaryWorker{Threads: db, Messages: db, Model: g}
	db.Handle(memento.JobSummarise, w.Handle, memento.JobOptions{Timeout: 10 * time.Second})
	if err := db.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Stop(context.Background()) })

	r1 := turn(t, a, "t", "Discover exactly 3 comedy movies from 2010 onward.")
	if r1.Memory.Summary != "" {
		t.Fatalf("first turn already has a summary: %q", r1.Memory.Summary)
	}
	// The reply is back while the summariser is still held at its gate.
	if s, err := db.LatestSummary(ctx, memento.Scope{Tenant: tenant, User: "u1"}, "t"); err != nil || s != nil {
		t.Fatalf("summary exists before the job could finish: %+v, %v", s, err)
	}
	select {
	case <-g.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the summary job never started")
	}
	close(g.gate)
	sqlitetest.WaitForJobs(t, db, 10*time.Second)

	sums, err := db.Summaries(ctx, memento.Scope{Tenant: tenant, User: "u1"}, "t")
	if err != nil || len(sums) != 1 {
		t.Fatalf("summaries = %+v, %v; want one", sums, err)
	}
	if sums[0].FromSeq != 1 || sums[0].ToSeq != 2 || len(sums[0].Sources) != 2 {
		t.Errorf("summary covers %d..%d from %v, want messages 1..2", sums[0].FromSeq, sums[0].ToSeq, sums[0].Sources)
	}

	r2 := turn(t, a, "t", "Not those.")
	if r2.Memory.Summary != sums[0].Text || r2.Memory.Summary == "" {
		t.Errorf("second turn's summary = %q, want the stored %q", r2.Memory.Summary, sums[0].Text)
	}
	sqlitetest.WaitForJobs(t, db, 10*time.Second)
	sums, _ = db.Summaries(ctx, memento.Scope{Tenant: tenant, User: "u1"}, "t")
	if len(sums) != 2 || sums[1].FromSeq != 3 || sums[1].ToSeq != 4 {
		t.Errorf("after turn 2 summaries = %+v, want a second covering 3..4", sums)
	}
}

func TestSummaryJobIsIdempotent(t *testing.T) {
	ctx := context.Background()
	cat := testCatalog()
	db := sqlitetest.Open(t)
	a := newAgent(t, db, cat, cat)
	turn(t, a, "t", "3 comedies please")
	w := &agent.SummaryWorker{Threads: db, Messages: db, Model: offline.New(offline.Options{})}
	payload := []byte(`{"tenant":"default","user":"u1","thread":"t","message":"x","seq":2}`)
	for i := 0; i < 2; i++ {
		if err := w.Handle(ctx, memento.JobSummarise, payload); err != nil {
			t.Fatal(err)
		}
	}
	sums, err := db.Summaries(ctx, memento.Scope{Tenant: tenant, User: "u1"}, "t")
	if err != nil || len(sums) != 1 {
		t.Errorf("after running one job twice: %d summaries, %v; want 1", len(sums), err)
	}
}

// TestSummaryOfLongThread runs 50 turns, each summarised as the job does
// after it: the latest summary stays under 150 words, keeps what the user
// wants now, what they turned down and what they said about themselves,
// and the summary an answer carries does not grow with the thread.
func TestSummaryOfLongThread(t *testing.T) {
	ctx := context.Background()
	cat := testCatalog()
	db := sqlitetest.Open(t)
	a := newAgent(t, db, cat, cat)
	w := &agent.SummaryWorker{Threads: db, Messages: db, Model: offline.New(offline.Options{People: cat})}
	s := memento.Scope{Tenant: tenant, User: "u1"}
	follow := []string{"Not those.", "Movies only.", "Something from the 2010s.", "Different ones please.", "Series only."}
	var sizes []int
	for i := 0; i < 50; i++ {
		msg := follow[i%len(follow)]
		switch {
		case i == 0:
			msg = "I have two kids. Show me 3 comedies."
		case i == 1:
			msg = "No horror please."
		case i%10 == 0:
			msg = "Show me 3 comedies."
		}
		resp := turn(t, a, "long", msg)
		sizes = append(sizes, len(resp.Memory.Summary))
		st, err := db.ThreadState(ctx, s, "long")
		if err != nil {
			t.Fatal(err)
		}
		payload, _ := json.Marshal(memento.MessageJob{Tenant: tenant, User: "u1", Thread: "long", Seq: st.LastSeq})
		if err := w.Handle(ctx, memento.JobSummarise, payload); err != nil {
			t.Fatalf("summary job after turn %d: %v", i+1, err)
		}
	}
	latest, err := db.LatestSummary(ctx, s, "long")
	if err != nil || latest == nil {
		t.Fatalf("LatestSummary = %v, %v", latest, err)
	}
	if n := len(strings.Fields(latest.Text)); n >= 150 {
		t.Errorf("latest summary of a 50-turn thread has %d words:\n%s", n, latest.Text)
	}
	for _, want := range []string{"Wants: Comedy", "Turned down: genres Horror", "titles Comedy", "Said about themselves: has two kids"} {
		if !strings.Contains(latest.Text, want) {
			t.Errorf("latest summary lacks %q:\n%s", want, latest.Text)
		}
	}
	t.Logf("latest summary:\n%s", latest.Text)
	if early, late := sizes[10], sizes[49]; late > 2*early || late > agent.DefaultSummaryChars {
		t.Errorf("the summary an answer carries grows with the thread: %d bytes at turn 11, %d at turn 50", early, late)
	}
}

// TestSummaryOfSmallTalkWaits checks that an exchange with nothing to keep
// writes no summary (an empty one would be refused and retried), and is
// folded in with the next exchange.
func TestSummaryOfSmallTalkWaits(t *testing.T) {
	ctx := context.Background()
	cat := testCatalog()
	db := sqlitetest.Open(t)
	a := newAgent(t, db, cat, cat)
	w := &agent.SummaryWorker{Threads: db, Messages: db, Model: offline.New(offline.Options{})}
	s := memento.Scope{Tenant: tenant, User: "u1"}
	handle := func(seq int64) {
		t.Helper()
		payload, _ := json.Marshal(memento.MessageJob{Tenant: tenant, User: "u1", Thread: "t", Seq: seq})
		if err := w.Handle(ctx, memento.JobSummarise, payload); err != nil {
			t.Fatalf("summary job: %v", err)
		}
	}
	turn(t, a, "t", "hello")
	handle(2)
	if sums, err := db.Summaries(ctx, s, "t"); err != nil || len(sums) != 0 {
		t.Fatalf("after small talk: summaries %+v, %v; want none", sums, err)
	}
	turn(t, a, "t", "3 comedies please")
	handle(4)
	sums, err := db.Summaries(ctx, s, "t")
	if err != nil || len(sums) != 1 {
		t.Fatalf("summaries = %+v, %v; want one", sums, err)
	}
	if sums[0].FromSeq != 1 || sums[0].ToSeq != 4 || !strings.Contains(sums[0].Text, "Comedy") {
		t.Errorf("summary = %+v, want one of messages 1..4 that names the comedies", sums[0])
	}
}
