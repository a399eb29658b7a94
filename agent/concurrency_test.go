package agent_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/prefs"
	"github.com/memento-ai/memento/sqlite"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// concurrentTurns sends one turn per message at once, spread over the
// agents round robin, all on one thread, and checks that every message
// landed once, each followed by its answer, and that the thread's active
// context is the one the last stored turn computed.
func concurrentTurns(t *testing.T, db *sqlite.DB, agents []*agent.Agent, n int) {
	t.Helper()
	ctx := context.Background()
	msgs := make([]string, n)
	for i := range msgs {
		msgs[i] = fmt.Sprintf("Discover exactly 3 comedy movies from %d onward.", 2000+i)
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i, m := range msgs {
		wg.Go(func() {
			a := agents[i%len(agents)]
			if _, err := a.Turn(ctx, tenant, agent.Request{User: "u1", Thread: "t1", Message: m}); err != nil {
				errs <- fmt.Errorf("turn %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s := memento.Scope{Tenant: tenant, User: "u1"}
	stored, err := db.Messages(ctx, s, "t1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 2*n {
		t.Fatalf("thread holds %d messages, want %d (%d turns)", len(stored), 2*n, n)
	}
	seen := map[string]int{}
	for i, m := range stored {
		if m.Seq != int64(i+1) {
			t.Errorf("message %d has seq %d", i, m.Seq)
		}
		want := memento.RoleUser
		if i%2 == 1 {
			want = memento.RoleAssistant
		}
		if m.Role != want {
			t.Errorf("message %d (%q) is %s, want %s: answers must follow their messages", i, m.Text, m.Role, want)
		}
		if m.Role == memento.RoleUser {
			seen[m.Text]++
		}
	}
	for _, m := range msgs {
		if seen[m] != 1 {
			t.Errorf("%q stored %d times, want once", m, seen[m])
		}
	}
	state, err := db.ThreadState(ctx, s, "t1")
	if err != nil {
		t.Fatal(err)
	}
	last := stored[len(stored)-2].Text
	var year int
	if _, err := fmt.Sscanf(last, "Discover exactly 3 comedy movies from %d onward.", &year); err != nil {
		t.Fatalf("last user message %q: %v", last, err)
	}
	if state.Context.MinYear == nil || *state.Context.MinYear != year {
		t.Errorf("active context minYear = %v, want %d from the last stored turn %q", state.Context.MinYear, year, last)
	}
	if state.LastSeq != int64(2*n) {
		t.Errorf("thread's last seq = %d, want %d", state.LastSeq, 2*n)
	}
}

// TestConcurrentTurnsOnOneThread: 16 turns at once on one thread of one
// agent all land, in order, none lost as a duplicate id.
func TestConcurrentTurnsOnOneThread(t *testing.T) {
	cat := testCatalog()
	db := sqlitetest.Open(t)
	concurrentTurns(t, db, []*agent.Agent{newAgent(t, db, cat, cat)}, 16)
}

// TestConcurrentTurnsAcrossAgents: two agents on one store stand for two
// processes, which do not share the per-thread lock; the store's version
// check makes the loser of each race compute its turn again.
func TestConcurrentTurnsAcrossAgents(t *testing.T) {
	cat := testCatalog()
	db := sqlitetest.Open(t)
	concurrentTurns(t, db, []*agent.Agent{newAgent(t, db, cat, cat), newAgent(t, db, cat, cat)}, 8)
}

// TestConcurrentTurnsWithMemory: turns on many threads at once, through
// one agent with everything the ranking reads from memory (attribute
// memories read by rules, likeness to named titles, title resolution),
// answer exactly as the same turns do one after another. Run with -race,
// it checks the agent's shared caches (the taste read from memories, the
// title space's vectors) under concurrent use.
func TestConcurrentTurnsWithMemory(t *testing.T) {
	ctx := context.Background()
	cat := testCatalog()
	space := prefs.NewTitleSpace(offline.NewEmbedder(0), cat.All())
	rules := offline.New(offline.Options{People: cat, Genres: cat.Genres()})
	newMemAgent := func() *agent.Agent {
		return &agent.Agent{Catalog: cat, Threads: sqlitetest.Open(t), Model: rules, Rules: rules,
			Resolve: cat.ResolveTitle, Similar: &prefs.Likeness{Titles: space},
			Attributes: memories{
				{ID: "m1", Attribute: "DISLIKES", Value: "can't stand horror films", Sources: []string{"msg-1"}},
				{ID: "m2", Attribute: "LIKES", Value: "likes Tom Hanks", Sources: []string{"msg-2"}},
			}}
	}
	script := []string{
		"Recommend 3 movies",
		"the second one sounds good, more like that",
		"something like Comedy 04",
		"not the first one",
		"I've already seen Comedy 10",
	}
	titlesOf := func(r *agent.Response) string {
		var names []string
		for _, x := range r.Titles {
			names = append(names, x.Title)
		}
		return strings.Join(names, ", ")
	}
	// The serial answers.
	serial := newMemAgent()
	var want []string
	for _, m := range script {
		r, err := serial.Turn(ctx, tenant, agent.Request{User: "u1", Thread: "serial", Message: m})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range r.Titles {
			if slices.Contains(x.Genres, "Horror") {
				t.Errorf("%q: showed the horror title %s to a user who can't stand horror", m, x.Title)
			}
		}
		want = append(want, titlesOf(r))
	}
	// The same script on 8 threads of 4 users at once, through one agent.
	a := newMemAgent()
	const threads = 8
	got := make([][]string, threads)
	var wg sync.WaitGroup
	for i := range threads {
		wg.Go(func() {
			for _, m := range script {
				r, err := a.Turn(ctx, tenant, agent.Request{User: fmt.Sprintf("u%d", i%4), Thread: fmt.Sprintf("t%d", i), Message: m})
				if err != nil {
					t.Errorf("thread %d, %q: %v", i, m, err)
					return
				}
				got[i] = append(got[i], titlesOf(r))
			}
		})
	}
	wg.Wait()
	for i := range threads {
		if diff := cmp.Diff(want, got[i]); diff != "" {
			t.Errorf("thread %d answered unlike the serial run (-serial +concurrent):\n%s", i, diff)
		}
	}
}

// An episodic user's likes and dislikes are episodes: they rank as a
// semantic user's values do, and the newest statement about a genre
// decides.
func TestEpisodicTasteRanks(t *testing.T) {
	ctx := context.Background()
	cat := testCatalog()
	rules := offline.New(offline.Options{People: cat, Genres: cat.Genres()})
	day := func(d int) time.Time { return time.Date(2025, 1, d, 0, 0, 0, 0, time.UTC) }
	newAgent := func(mems memories) *agent.Agent {
		return &agent.Agent{Catalog: cat, Threads: sqlitetest.Open(t), Model: rules, Rules: rules, Attributes: mems}
	}
	horror := func(r *agent.Response) int {
		n := 0
		for _, x := range r.Titles {
			if slices.Contains(x.Genres, "Horror") {
				n++
			}
		}
		return n
	}
	ask := func(a *agent.Agent) *agent.Response {
		r, err := a.Turn(ctx, tenant, agent.Request{User: "u1", Thread: "t", Message: "Recommend 3 movies"})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	likesHorror := memento.Memory{ID: "e1", Kind: memento.MemoryEpisode, Mode: memento.ModeEpisodic, Attribute: "LIKES", Value: "loves horror films", ValidFrom: day(1), Sources: []string{"m1"}}
	hatesHorror := memento.Memory{ID: "e2", Kind: memento.MemoryEpisode, Mode: memento.ModeEpisodic, Attribute: "DISLIKES", Value: "can't stand horror films", ValidFrom: day(2), Sources: []string{"m2"}}
	if n := horror(ask(newAgent(memories{likesHorror}))); n == 0 {
		t.Errorf("an episode saying the user loves horror drew no horror title")
	}
	// Later: can't stand horror. The newer episode decides.
	if n := horror(ask(newAgent(memories{likesHorror, hatesHorror}))); n != 0 {
		t.Errorf("after a newer episode of disliking horror, %d horror titles were shown", n)
	}
	// And the other way round: came around on horror.
	hatesHorror.ValidFrom, likesHorror.ValidFrom = day(1), day(3)
	if n := horror(ask(newAgent(memories{hatesHorror, likesHorror}))); n == 0 {
		t.Errorf("after a newer episode of loving horror, no horror title was shown")
	}
}
