package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
)

// TestMessagesRunInBatchesByUser stores many messages of two users before
// the workers start, in several appends, and checks that the users'
// batches did every message's work, each once: every message has its
// pipeline run (and the observers heard of each once), the preferences
// and the events the messages tell exist, with the message as their
// source, and not one remember, preference or message-event job ran on
// its own. A tenant's user of the same name stays apart.
func TestMessagesRunInBatchesByUser(t *testing.T) {
	ctx := context.Background()
	e := openEngine(t, filepath.Join(t.TempDir(), "m.db"))
	var mu sync.Mutex
	heard := map[string]int{}
	e.OnRemembered(func(s memento.Scope, m memento.Message) {
		mu.Lock()
		heard[s.Tenant+"/"+s.User+"/"+m.ID]++
		mu.Unlock()
	})
	lines := []string{
		"I love heist movies but I can't stand horror",
		"I watch everything on Netflix",
		"I watched Heat last night and loved it",
		"ok thanks",
		"Actually I've come around on horror",
	}
	scopes := []memento.Scope{{Tenant: memento.DefaultTenant, User: "ann"}, {Tenant: memento.DefaultTenant, User: "bob"}, {Tenant: "other", User: "ann"}}
	var want []string
	for round := range 4 {
		for _, s := range scopes {
			var msgs []memento.Message
			for i, line := range lines {
				msgs = append(msgs, memento.Message{ID: fmt.Sprintf("m%d-%d", round, i), Role: memento.RoleUser, Text: line})
				want = append(want, s.Tenant+"/"+s.User+"/"+fmt.Sprintf("m%d-%d", round, i))
			}
			thread := fmt.Sprintf("t%d", round)
			if _, err := e.Store.AppendMessages(ctx, s, thread, msgs, func(m memento.Message) []memento.JobRequest {
				return e.MessageJobs(s, thread, m)
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Twelve appends of twenty messages' jobs wait in one job per user.
	if waiting, err := e.Store.Jobs(ctx, memento.JobFilter{Kind: memento.JobBacklog}); err != nil || len(waiting) != len(scopes) {
		t.Errorf("backlog jobs before the workers start = %d, %v; want one per user (%d)", len(waiting), err, len(scopes))
	}
	if err := e.StartWorkers(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitForJobs(ctx, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, s := range scopes {
		for round := range 4 {
			for i := range lines {
				id := fmt.Sprintf("m%d-%d", round, i)
				if run, err := e.Store.MemoryRun(ctx, s, id); err != nil || run == nil {
					t.Errorf("%s/%s: no pipeline run of %s: %v", s.Tenant, s.User, id, err)
				}
			}
		}
		sources, err := e.Store.PreferenceSources(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(sources, "m0-0") || !slices.Contains(sources, "m3-4") {
			t.Errorf("%s/%s: preference sources %v lack the first and last messages' tastes", s.Tenant, s.User, sources)
		}
		events, err := e.Store.Events(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if len(events) == 0 {
			t.Errorf("%s/%s: no event from %q", s.Tenant, s.User, lines[2])
		}
	}
	mu.Lock()
	for _, id := range want {
		if n := heard[id]; n != 1 {
			t.Errorf("the observers heard of %s %d times, want once", id, n)
		}
	}
	mu.Unlock()
	for _, kind := range []string{memento.JobRemember, memento.JobPreferences, memento.JobMessageEvents} {
		jobs, err := e.Store.Jobs(ctx, memento.JobFilter{Kind: kind})
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) != 0 {
			t.Errorf("%d %s jobs ran on their own; want every one in its user's batch", len(jobs), kind)
		}
	}
	batches, err := e.Store.Jobs(ctx, memento.JobFilter{Kind: memento.JobBacklog})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(want); len(batches) == 0 || len(batches) > n/2 {
		t.Errorf("%d backlog jobs for %d messages; want a few per user", len(batches), n)
	}
}

// TestTurnSummaryRunsInTheBacklog checks that a turn's summary is asked
// of the user's backlog, with the turn's message, rather than as a job of
// its own, and is written: after three turns and the jobs, the thread's
// summary covers the last turn, and no summarise job ran on its own.
func TestTurnSummaryRunsInTheBacklog(t *testing.T) {
	ctx := context.Background()
	e := openEngine(t, filepath.Join(t.TempDir(), "m.db"))
	if err := e.StartWorkers(ctx); err != nil {
		t.Fatal(err)
	}
	ag, err := e.Agent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	var last *agent.Response
	for _, line := range []string{"I love heist movies. Recommend 3 of them", "not those, different ones", "something from the 90s"} {
		if last, err = ag.Turn(ctx, s.Tenant, agent.Request{User: s.User, Thread: "t1", Message: line}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.WaitForJobs(ctx, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	sum, err := e.Store.LatestSummary(ctx, s, "t1")
	if err != nil || sum == nil {
		t.Fatalf("no summary of the thread after its turns: %v, %v", sum, err)
	}
	msgs, err := e.Store.Messages(ctx, s, "t1", 0, 0)
	if err != nil || len(msgs) == 0 {
		t.Fatalf("the thread's messages: %d, %v", len(msgs), err)
	}
	if end := msgs[len(msgs)-1].Seq; sum.ToSeq != end {
		t.Errorf("the summary ends at %d, the thread at %d (last reply %q)", sum.ToSeq, end, last.Reply)
	}
	jobs, err := e.Store.Jobs(ctx, memento.JobFilter{Kind: memento.JobSummarise})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 0 {
		t.Errorf("%d summarise jobs ran on their own; want each in its user's batch", len(jobs))
	}
	if batches, err := e.Store.Jobs(ctx, memento.JobFilter{Kind: memento.JobBacklog}); err != nil || len(batches) == 0 {
		t.Errorf("no backlog job ran: %d, %v", len(batches), err)
	}
}
