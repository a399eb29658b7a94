package agent_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/prefs"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// BenchmarkTurn measures one offline turn end to end on the embedded
// catalog: understand, search with exclusions, rank, reply and persist the
// turn with its jobs (synchronous=FULL). Threads alternate a request and a
// rejection, so half the turns search with exclusions.
func BenchmarkTurn(b *testing.B) {
	cat, err := catalog.Embedded()
	if err != nil {
		b.Fatal(err)
	}
	db := sqlitetest.Open(b)
	a := &agent.Agent{Catalog: cat, Threads: db, Model: offline.New(offline.Options{People: cat, Genres: cat.Genres()})}
	msgs := []string{
		"Discover exactly 3 comedy movies from 2010 onward.",
		"I didn't like them, please discover different ones.",
		"Movie only.",
		"Make it older.",
	}
	measureTurns(b, a, msgs)
}

// memories is a user's attribute memories, as the store would list them.
type memories []memento.Memory

func (m memories) Memories(ctx context.Context, s memento.Scope, f memento.MemoryFilter) ([]memento.Memory, error) {
	var out []memento.Memory
	for _, x := range m {
		kind := x.Kind
		if kind == "" {
			kind = memento.MemoryAttribute
		}
		if f.Kind == "" || f.Kind == kind {
			out = append(out, x)
		}
	}
	return out, nil
}

// BenchmarkTurnWithMemory measures an offline turn with everything the
// candidate generation draws on: attribute memories (likes and dislikes
// read in code), likeness to named titles in the whitened title space,
// and follow-ups that name shown titles. The title vectors are embedded
// before the timer starts, as a serving process warms them at start.
func BenchmarkTurnWithMemory(b *testing.B) {
	cat, err := catalog.Embedded()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	space := prefs.NewTitleSpace(offline.NewEmbedder(0), cat.All())
	if err := space.Warm(ctx); err != nil {
		b.Fatal(err)
	}
	rules := offline.New(offline.Options{People: cat, Genres: cat.Genres()})
	a := &agent.Agent{Catalog: cat, Threads: sqlitetest.Open(b), Model: rules, Rules: rules,
		Resolve: cat.ResolveTitle, Similar: &prefs.Likeness{Titles: space},
		Attributes: memories{
			{ID: "m1", Attribute: "DISLIKES", Value: "can't stand slasher films"},
			{ID: "m2", Attribute: "LIKES", Value: "loves heist movies"},
			{ID: "m3", Attribute: "LIKES", Value: "likes Tom Hanks"},
			{ID: "m4", Attribute: "AVOID", Value: "avoids musicals"},
		}}
	msgs := []string{
		"Recommend 10 movies",
		"the second one sounds good, more like that",
		"something like Heat from the 90s",
		"not the first one",
		"I've already seen Ronin",
		"actually I'm in the mood for a scary movie from the 80s",
	}
	measureTurns(b, a, msgs)
}

// measureTurns runs b.N turns, cycling through msgs in threads of one
// cycle each, and reports the median and 99th percentile of a turn. One
// cycle runs before the timer starts, as a serving process has answered
// turns before: tables built on first use (such as the index of names
// that misspellings are matched against) are not counted.
func measureTurns(b *testing.B, a *agent.Agent, msgs []string) {
	ctx := context.Background()
	for _, m := range msgs {
		if _, err := a.Turn(ctx, tenant, agent.Request{User: "bench", Thread: "warm-up", Message: m}); err != nil {
			b.Fatal(err)
		}
	}
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := agent.Request{User: "bench", Thread: fmt.Sprintf("t%d", i/len(msgs)), Message: msgs[i%len(msgs)]}
		start := time.Now()
		if _, err := a.Turn(ctx, tenant, req); err != nil {
			b.Fatal(err)
		}
		durations = append(durations, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(durations)
	b.ReportMetric(float64(durations[len(durations)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(durations[len(durations)*99/100].Microseconds())/1000, "p99-ms")
}
