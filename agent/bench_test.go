package agent_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/llm/offline"
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
	ctx := context.Background()
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
