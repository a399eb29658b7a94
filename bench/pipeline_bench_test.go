package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/catalog"
)

// BenchmarkMeasurePipeline runs the direct pipeline measurement of
// `memento bench` over a small built store (100 measured users of 200
// memories, with the embedded catalog's vocabulary) with several numbers
// of runs in flight, to show how group commit fills with them. Each
// iteration measures 2,000 freshly ingested messages; use -benchtime=1x.
func BenchmarkMeasurePipeline(b *testing.B) {
	ctx := context.Background()
	cat, err := catalog.Embedded()
	if err != nil {
		b.Fatal(err)
	}
	for _, runs := range []int{2, 8, 32, 64} {
		b.Run(fmt.Sprintf("runs=%d", runs), func(b *testing.B) {
			d, _ := deps(b)
			d.Catalog = cat
			cfg := Config{Users: 100, Memories: 20, MeasuredUsers: 100, MeasuredMemories: 200, End: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)}.withDefaults()
			vocab := NewVocab(cat.All(), cat.Genres())
			if _, err := build(ctx, d, cfg, vocab); err != nil {
				b.Fatal(err)
			}
			users := make([]memento.Scope, cfg.MeasuredUsers)
			for i := range users {
				users[i] = memento.Scope{Tenant: memento.DefaultTenant, User: measuredUser(i)}
			}
			r := rand.New(rand.NewPCG(1, 7))
			var total, secs float64
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				fresh := make([]stored, 0, cfg.PipelineMessages)
				for j := range cfg.PipelineMessages {
					s := users[j%len(users)]
					msg := memento.Message{ID: fmt.Sprintf("bench-p%d-%d", i, j), Role: memento.RoleUser, Text: vocab.Statement(r)}
					if _, err := d.DB.AppendMessages(ctx, s, fmt.Sprintf("bench-p%d", i), []memento.Message{msg}, nil); err != nil {
						b.Fatal(err)
					}
					fresh = append(fresh, stored{s, msg.ID})
				}
				b.StartTimer()
				tp, err := measurePipeline(ctx, d, fresh, runs)
				if err != nil {
					b.Fatal(err)
				}
				total += float64(tp.Messages)
				secs += tp.Seconds
			}
			b.ReportMetric(total/secs, "msgs/s")
		})
	}
}
