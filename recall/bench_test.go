package recall_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/recall"
	"github.com/memento-ai/memento/sqlite"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// Word lists the benchmark's memories are made of, so that queries match
// some memories by keyword and most by nothing.
var (
	benchPlaces  = []string{"the museum", "the beach", "Berlin", "a concert", "the park", "a pottery class", "the cinema", "Lisbon", "a support group", "the mountains", "a bookshop", "the zoo"}
	benchPeople  = []string{"my sister", "the kids", "Jon", "my partner", "an old friend", "colleagues", "my dad", "the neighbours"}
	benchThings  = []string{"science fiction", "heist films", "jazz", "painting", "running", "board games", "horror", "documentaries", "cooking", "chess"}
	benchQueries = []string{"when did she go to the museum", "what does she think about horror", "who did she go to Lisbon with",
		"does she like jazz", "what happened at the support group", "favourite board games", "trip to the mountains in June 2024", "cooking with the kids"}
)

// seedUser stores a user with the given number of memories (mostly
// episodes, with embeddings) and messages, in few transactions.
func seedUser(b *testing.B, db *sqlite.DB, s memento.Scope, memories, messages int, emb memento.Embedder) {
	b.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var msgs []memento.Message
	for i := range messages {
		text := fmt.Sprintf("I went to %s with %s and talked about %s", benchPlaces[rng.IntN(len(benchPlaces))], benchPeople[rng.IntN(len(benchPeople))], benchThings[rng.IntN(len(benchThings))])
		msgs = append(msgs, memento.Message{ID: fmt.Sprintf("m%d", i), Role: memento.RoleUser, Text: text, At: start.Add(time.Duration(i) * time.Hour)})
	}
	var stored []memento.Message
	for i := 0; i < len(msgs); i += 1000 {
		res, err := db.AppendMessages(ctx, s, fmt.Sprintf("t%d", i/200), msgs[i:min(i+1000, len(msgs))], nil)
		if err != nil {
			b.Fatal(err)
		}
		stored = append(stored, res.Messages...)
	}
	vecs := map[string][]float32{}
	texts := make([]string, len(stored))
	for i, m := range stored {
		texts[i] = m.Text
	}
	mv, err := emb.Embed(ctx, texts)
	if err != nil {
		b.Fatal(err)
	}
	for i, m := range stored {
		vecs[m.ID] = mv[i]
	}
	if err := db.PutVectors(ctx, s, emb.ID(), nil, vecs); err != nil {
		b.Fatal(err)
	}
	// Memories in runs of 1000 per message, as if each message held many
	// statements (one write each).
	for batch := 0; batch*1000 < memories; batch++ {
		var ins []memento.Memory
		var vt []string
		for j := 0; j < 1000 && batch*1000+j < memories; j++ {
			n := batch*1000 + j
			v := fmt.Sprintf("went to %s with %s, loved the %s", benchPlaces[rng.IntN(len(benchPlaces))], benchPeople[rng.IntN(len(benchPeople))], benchThings[rng.IntN(len(benchThings))])
			src := stored[rng.IntN(len(stored))]
			ins = append(ins, memento.Memory{ID: fmt.Sprintf("e%d", n), Attribute: "EVENT", Mode: memento.ModeEpisodic, Value: v,
				ValidFrom: start.Add(time.Duration(n) * 30 * time.Minute), Sources: []string{src.ID}})
			vt = append(vt, v)
		}
		ev, err := emb.Embed(ctx, vt)
		if err != nil {
			b.Fatal(err)
		}
		for j := range ins {
			ins[j].Vector, ins[j].Embedder = ev[j], emb.ID()
		}
		if _, err := db.WriteMemories(ctx, s, memento.MemoryWrite{Message: stored[batch], Insert: ins,
			Run: memento.MemoryRun{Message: stored[batch].ID, Outcome: memento.RunStored}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAssemble measures context assembly (the GET .../context path:
// thread state, summary, semantic values, both recallers, merge, render)
// for a user with 10,000 memories and 2,000 messages, and reports the
// latency percentiles over the iterations.
func BenchmarkAssemble(b *testing.B) {
	for _, size := range []struct{ memories, messages int }{{10000, 2000}} {
		b.Run(fmt.Sprintf("memories=%d", size.memories), func(b *testing.B) {
			opts := sqlitetest.Options()
			opts.Synchronous = "NORMAL"
			db := sqlitetest.OpenWith(b, opts)
			emb := offline.NewEmbedder(256)
			s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
			seedUser(b, db, s, size.memories, size.messages, emb)
			asm := recall.New(db, emb)
			ctx := context.Background()
			now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			var lat []time.Duration
			i := 0
			for b.Loop() {
				start := time.Now()
				c, err := asm.Assemble(ctx, memento.RecallQuery{Scope: s, Thread: "t0", Query: benchQueries[i%len(benchQueries)], K: 10, Now: now})
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
				if len(c.Items) == 0 {
					b.Fatalf("no items for %q", benchQueries[i%len(benchQueries)])
				}
				i++
			}
			slices.Sort(lat)
			pct := func(p float64) float64 {
				return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
			}
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
		})
	}
}
