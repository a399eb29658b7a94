package graph_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/memento-ai/memento/graph"
)

// BenchmarkRun measures the engine's overhead per step: a chain of nodes
// that do nothing, without and with an in-memory checkpointer (which adds a
// JSON encoding of the state per step).
func BenchmarkRun(b *testing.B) {
	const steps = 10
	type small struct {
		N    int      `json:"n"`
		Tags []string `json:"tags"`
	}
	build := func(b *testing.B, opts ...graph.Option) *graph.Runnable[small] {
		b.Helper()
		g := graph.New[small]("bench")
		prev := graph.Start
		for i := 0; i < steps; i++ {
			name := fmt.Sprintf("n%d", i)
			g.AddNode(name, func(_ context.Context, s small) (small, error) { s.N++; return s, nil })
			if i == steps-1 {
				g.AddConditionalEdges(prev, graph.RouteBy(func(small) string { return name }), name, graph.End)
			} else {
				g.AddEdge(prev, name)
			}
			prev = name
		}
		g.AddEdge(prev, graph.End)
		r, err := g.Compile(opts...)
		if err != nil {
			b.Fatal(err)
		}
		return r
	}
	in := small{Tags: []string{"likes science fiction", "dislikes horror"}}
	b.Run("plain", func(b *testing.B) {
		r := build(b)
		ctx := context.Background()
		for b.Loop() {
			if _, err := r.Run(ctx, "run", in); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
	})
	b.Run("checkpointed", func(b *testing.B) {
		cp := graph.NewMemoryCheckpointer()
		r := build(b, graph.WithCheckpointer(cp))
		ctx := context.Background()
		i := 0
		for b.Loop() {
			i++
			if _, err := r.Run(ctx, fmt.Sprint(i), in); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
	})
}
