package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/client"
	"github.com/memento-ai/memento/postgres/pgtest"
	"github.com/memento-ai/memento/torture"
)

// TestTwoServersOnePostgres starts two `memento serve` processes on one
// PostgreSQL schema and checks what several stateless servers promise:
// 1,000 messages posted across both are each processed exactly once (one
// run each, no duplicate memory, no job left), recall on either server
// finds what was written through the other, and 32 concurrent turns on
// one thread, half through each server, are all stored once and in order.
func TestTwoServersOnePostgres(t *testing.T) {
	db := pgtest.SchemaURL(t)
	t.Setenv(tortureChild, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	launcher := &torture.Exec{Binary: exe, Args: []string{"--catalog", profileCatalog(t), "--workers", "8"}}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	var clients [2]*client.Client
	for i := range clients {
		srv, err := launcher.Start(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Stop(context.Background()) })
		if clients[i], err = client.New(srv.URL()); err != nil {
			t.Fatal(err)
		}
	}

	// 1,000 messages from 20 users, 50 each, every user's through one
	// server (users 0-9 through the first, 10-19 through the second), 8
	// at a time, ten messages a request.
	const users, perUser, batch = 20, 50, 10
	lines := []string{
		"I love heist movies", "I can't stand horror films", "I watch everything on Netflix",
		"My favourite actor is Al Pacino", "I usually watch movies on Friday nights", "sounds good",
		"I've seen Heat twice", "thanks!", "I prefer films under two hours", "Robert De Niro is great",
	}
	type work struct{ user, from int }
	jobs := make(chan work)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for w := range jobs {
				c := clients[w.user/(users/2)]
				var msgs []client.Message
				for i := w.from; i < w.from+batch; i++ {
					msgs = append(msgs, client.Message{ID: fmt.Sprintf("m%02d-%03d", w.user, i), Role: memento.RoleUser, Text: fmt.Sprintf("%s (%d)", lines[i%len(lines)], i)})
				}
				if _, err := c.AppendMessages(ctx, fmt.Sprintf("u%02d", w.user), "t", msgs...); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for u := range users {
		for from := 0; from < perUser; from += batch {
			jobs <- work{u, from}
		}
	}
	close(jobs)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("append: %v", err)
	}
	stats := waitForQueue(t, ctx, db)
	if stats.Running != 0 || stats.Waiting != 0 || stats.Failed != 0 {
		t.Errorf("jobs after the queue settled: %+v, want none running, waiting or failed", stats)
	}

	// Each message processed exactly once: one pipeline run each, and no
	// memory stored twice from one message.
	for u := range users {
		user := fmt.Sprintf("u%02d", u)
		doc, err := clients[0].Export(ctx, user)
		if err != nil {
			t.Fatalf("export %s: %v", user, err)
		}
		if n := len(doc.Threads); n != 1 || len(doc.Threads[0].Messages) != perUser {
			t.Fatalf("%s holds %d threads, want 1 of %d messages", user, n, perUser)
		}
		runs := map[string]int{}
		for _, r := range doc.Runs {
			runs[r.Message]++
		}
		for _, m := range doc.Threads[0].Messages {
			if runs[m.ID] != 1 {
				t.Errorf("%s: message %s has %d pipeline runs, want 1", user, m.ID, runs[m.ID])
			}
		}
		seen := map[string]bool{}
		for _, m := range doc.Memories {
			k := fmt.Sprint(m.Sources, m.Attribute, m.Value, m.ValidFrom)
			if seen[k] {
				t.Errorf("%s: memory %q (%s) stored twice from %v", user, m.Value, m.Attribute, m.Sources)
			}
			seen[k] = true
		}
	}

	// Recall on either server finds what came in through the other: u00
	// wrote through the first, u19 through the second.
	for _, tc := range []struct {
		user string
		c    *client.Client
	}{{"u00", clients[1]}, {"u19", clients[0]}} {
		c, err := tc.c.Context(ctx, tc.user, client.ContextQuery{Query: "which actor do I like?"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.ToLower(c.Text), "pacino") {
			t.Errorf("the context of %s through the other server does not hold Al Pacino:\n%s", tc.user, c.Text)
		}
	}

	// 32 concurrent turns on one thread, alternating between the servers.
	const turns = 32
	var tw sync.WaitGroup
	turnErrs := make(chan error, turns)
	for i := range turns {
		tw.Go(func() {
			if _, err := clients[i%2].Chat(ctx, agent.Request{User: "chatter", Thread: "shared", Message: fmt.Sprintf("Recommend crime movies, request %d", i)}); err != nil {
				turnErrs <- err
			}
		})
	}
	tw.Wait()
	close(turnErrs)
	for err := range turnErrs {
		t.Fatalf("chat: %v", err)
	}
	th, err := clients[1].Thread(ctx, "chatter", "shared")
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	for i, m := range th.Messages {
		if m.Seq != int64(i+1) {
			t.Errorf("message %d has seq %d, want %d: every message once, in order", i, m.Seq, i+1)
		}
		if m.Role == memento.RoleUser {
			asked = append(asked, m.Text)
		} else if i == 0 || th.Messages[i-1].Role != memento.RoleUser {
			t.Errorf("answer at seq %d does not follow its question", m.Seq)
		}
	}
	if len(asked) != turns || len(th.Messages) != 2*turns {
		t.Errorf("the thread holds %d questions and %d messages, want %d and %d", len(asked), len(th.Messages), turns, 2*turns)
	}
	unique := map[string]bool{}
	for _, a := range asked {
		unique[a] = true
	}
	if len(unique) != turns {
		t.Errorf("%d distinct questions stored of %d", len(unique), turns)
	}
}

// queueStats is what `memento jobs stats --json` prints, in part.
type queueStats struct {
	Waiting   int `json:"waiting"`
	Running   int
	Failed    int
	Completed int
}

// waitForQueue polls `memento jobs stats` on db until no job waits or
// runs, and returns the totals.
func waitForQueue(t *testing.T, ctx context.Context, db string) queueStats {
	t.Helper()
	for {
		out, err := run(t, "", "jobs", "stats", "--db", db, "--json")
		if err != nil {
			t.Fatalf("jobs stats: %v", err)
		}
		var doc struct {
			Waiting int `json:"waiting"`
			Kinds   []struct {
				Running   int `json:"running"`
				Retrying  int `json:"retrying"`
				Completed int `json:"completed"`
				Failed    int `json:"failed"`
			} `json:"kinds"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("jobs stats printed %q: %v", out, err)
		}
		s := queueStats{Waiting: doc.Waiting}
		for _, k := range doc.Kinds {
			s.Running += k.Running + k.Retrying
			s.Failed += k.Failed
			s.Completed += k.Completed
		}
		if s.Waiting == 0 && s.Running == 0 {
			return s
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the queue did not settle: %+v", s)
		case <-time.After(500 * time.Millisecond):
		}
	}
}
