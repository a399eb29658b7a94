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

// benchVocab returns n made-up topic words ("bakuro", "temisa", ...),
// deterministic, so memories and queries can share words at a chosen rate.
func benchVocab(n int) []string {
	syl := []string{"ba", "ku", "ro", "te", "mi", "sa", "lo", "ne", "vi", "da", "po", "ri", "ga", "zu", "fe", "ho"}
	out := make([]string, n)
	for i := range out {
		w := ""
		for x := i + 16*16; x > 0; x /= 16 {
			w += syl[x%16]
		}
		out[i] = w
	}
	return out
}

// seedUser stores// seedUser stores a user with the given number of memories (episodes,
// with embeddings) and messages, in few transactions. Each text names
// three topic words of a vocabulary of vocab words, so a query word
// matches about 3/vocab of everything.
func seedUser(b testing.TB, db *sqlite.DB, s memento.Scope, memories, messages, vocab int, emb memento.Embedder) []string {
	b.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	words := benchVocab(vocab)
	pick := func() string { return words[rng.IntN(len(words))] }
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var msgs []memento.Message
	for i := range messages {
		text := fmt.Sprintf("I went to the %s with my %s and talked about %s", pick(), pick(), pick())
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
			v := fmt.Sprintf("went to the %s with their %s, loved the %s", pick(), pick(), pick())
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
	return words
}

// BenchmarkAssemble measures context assembly (the GET .../context path:
// thread state, summary, semantic values, both recallers, merge, render)
// for a user with 10,000 memories and 2,000 messages, and reports the
// latency percentiles over the iterations. With a vocabulary of 1,000
// topic words a query word matches about 0.3% of a user's history, as in
// conversation; with 30 it matches 10%, a worst case in which BM25 is
// computed for about a thousand matches per query.
func BenchmarkAssemble(b *testing.B) {
	for _, size := range []struct{ memories, messages, vocab int }{{10000, 2000, 1000}, {10000, 2000, 30}} {
		b.Run(fmt.Sprintf("memories=%d/vocab=%d", size.memories, size.vocab), func(b *testing.B) {
			opts := sqlitetest.Options()
			opts.Synchronous = "NORMAL"
			db := sqlitetest.OpenWith(b, opts)
			emb := offline.NewEmbedder(256)
			s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
			words := seedUser(b, db, s, size.memories, size.messages, size.vocab, emb)
			qrng := rand.New(rand.NewPCG(3, 4))
			queries := make([]string, 64)
			for i := range queries {
				w := func() string { return words[qrng.IntN(len(words))] }
				switch i % 4 {
				case 0:
					queries[i] = "when did she go to the " + w()
				case 1:
					queries[i] = "what does she think about " + w() + " and " + w()
				case 2:
					queries[i] = "who went to the " + w() + " with her " + w()
				default:
					queries[i] = "the " + w() + " trip in June 2024"
				}
			}
			asm := recall.New(db, emb)
			ctx := context.Background()
			now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			var lat []time.Duration
			i := 0
			for b.Loop() {
				start := time.Now()
				c, err := asm.Assemble(ctx, memento.RecallQuery{Scope: s, Thread: "t0", Query: queries[i%len(queries)], K: 10, Now: now})
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
				if len(c.Items) == 0 {
					b.Fatalf("no items for %q", queries[i%len(queries)])
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
