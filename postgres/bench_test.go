package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/postgres"
)

// latencies collects the duration of each operation of a benchmark and
// reports the median and the 99th percentile.
type latencies []time.Duration

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	pct := func(p float64) float64 { return float64(l[int(p*float64(len(l)-1))].Microseconds()) }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}

// BenchmarkAppendMessage measures how long AppendMessages takes to
// acknowledge one message with one job (the latency a client waits for),
// on users spread over a store that already holds some.
func BenchmarkAppendMessage(b *testing.B) {
	db, _ := openSchema(b, postgres.Options{})
	ctx := context.Background()
	lat := make(latencies, 0, b.N)
	i := 0
	for b.Loop() {
		i++
		s := memento.Scope{User: fmt.Sprintf("u%d", i%50)}
		msg := []memento.Message{{ID: fmt.Sprintf("m%d", i), Role: memento.RoleUser, Text: "I would like a quiet thriller from the nineties"}}
		start := time.Now()
		if _, err := db.AppendMessages(ctx, s, "t1", msg, func(m memento.Message) []memento.JobRequest {
			return []memento.JobRequest{{Kind: memento.JobRemember, Payload: memento.MessageJob{User: s.User, Thread: m.Thread, Message: m.ID, Seq: m.Seq}}}
		}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	lat.report(b)
}

// BenchmarkSaveTurn measures storing a whole turn: two messages, the
// thread state and one summarise job.
func BenchmarkSaveTurn(b *testing.B) {
	db, _ := openSchema(b, postgres.Options{})
	ctx := context.Background()
	s := memento.Scope{User: "ann"}
	state := memento.ThreadState{Context: memento.ActiveContext{Genres: []string{"Thriller"}, Count: 3}, LastShown: []string{"ml:4", "ml:5"}}
	lat := make(latencies, 0, b.N)
	for b.Loop() {
		start := time.Now()
		if _, err := db.SaveTurn(ctx, memento.Turn{Scope: s, Thread: "t1", State: state,
			JobsFor: func(stored []memento.Message) []memento.JobRequest {
				return []memento.JobRequest{{Kind: memento.JobSummarise, Payload: memento.MessageJob{Thread: "t1", Seq: stored[len(stored)-1].Seq}}}
			},
			Messages: []memento.Message{{Role: memento.RoleUser, Text: "Something older, please"}, {Role: memento.RoleAssistant, Text: "Try Heat (1995)."}}}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	lat.report(b)
}

// BenchmarkRecallDocsUnchanged measures the read a warm recall index
// makes before every turn and context read of a user with no change
// since its last: the answer is only the change log's position.
func BenchmarkRecallDocsUnchanged(b *testing.B) {
	db, _ := openSchema(b, postgres.Options{})
	ctx := context.Background()
	s := memento.Scope{User: "ann"}
	if _, err := db.AppendMessages(ctx, s, "t1", []memento.Message{{Role: memento.RoleUser, Text: "I liked Heat"}}, nil); err != nil {
		b.Fatal(err)
	}
	first, err := db.RecallDocs(ctx, s, -1)
	if err != nil {
		b.Fatal(err)
	}
	lat := make(latencies, 0, b.N)
	for b.Loop() {
		start := time.Now()
		got, err := db.RecallDocs(ctx, s, first.Through)
		if err != nil {
			b.Fatal(err)
		}
		if got.Full || len(got.Docs) > 0 || got.Through != first.Through {
			b.Fatalf("RecallDocs after no change = %+v, want no documents at %d", got, first.Through)
		}
		lat = append(lat, time.Since(start))
	}
	lat.report(b)
}

// BenchmarkConcurrentTurnsOneThread measures turns saved by 8 goroutines
// at once on one thread, which the user lock serialises.
func BenchmarkConcurrentTurnsOneThread(b *testing.B) {
	db, _ := openSchema(b, postgres.Options{})
	s := memento.Scope{User: "ann"}
	var mu sync.Mutex
	lat := make(latencies, 0, b.N)
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			start := time.Now()
			if _, err := db.SaveTurn(context.Background(), memento.Turn{Scope: s, Thread: "t1", State: memento.ThreadState{Context: memento.NewActiveContext()},
				Messages: []memento.Message{{Role: memento.RoleUser, Text: "more"}, {Role: memento.RoleAssistant, Text: "here"}}}); err != nil {
				b.Error(err)
				return
			}
			d := time.Since(start)
			mu.Lock()
			lat = append(lat, d)
			mu.Unlock()
		}
	})
	lat.report(b)
}

// BenchmarkMemoryCandidates measures the keyword and recency candidates
// of one user among 2,000 memories, with 20 other users' besides.
func BenchmarkMemoryCandidates(b *testing.B) {
	db, _ := openSchema(b, postgres.Options{})
	ctx := context.Background()
	words := []string{"heist", "western", "noir", "comedy", "drama", "space", "horror", "romance", "family", "war", "musical", "crime"}
	for u := range 21 {
		s := memento.Scope{User: fmt.Sprintf("u%d", u)}
		n := 100
		if u == 0 {
			n = 2000
		}
		for i := range n {
			res, err := db.AppendMessages(ctx, s, "t1", []memento.Message{{Role: memento.RoleUser, Text: "I said something " + words[i%len(words)]}}, nil)
			if err != nil {
				b.Fatal(err)
			}
			m := res.Messages[0]
			value := fmt.Sprintf("likes %s films and %s shows, number %d", words[i%len(words)], words[(i*7)%len(words)], i)
			if _, err := db.WriteMemories(ctx, s, memento.MemoryWrite{Message: m, Run: memento.MemoryRun{Message: m.ID, Outcome: memento.RunStored},
				Insert: []memento.Memory{{ID: fmt.Sprintf("mem%d", i), Mode: memento.ModeEpisodic, Attribute: "LIKES", Value: value, ValidFrom: m.At,
					Vector: make([]float32, 64), Embedder: "e"}}}); err != nil {
				b.Fatal(err)
			}
		}
	}
	// A database in service has its planner statistics; a table filled
	// a moment ago has none yet.
	if _, err := db.Pool().Exec(ctx, `ANALYZE`); err != nil {
		b.Fatal(err)
	}
	s := memento.Scope{User: "u0"}
	lat := make(latencies, 0, b.N)
	for b.Loop() {
		start := time.Now()
		c, err := db.MemoryCandidates(ctx, s, memento.CandidateQuery{Query: "a heist or a noir film", Keyword: 50, Recent: 50})
		if err != nil || len(c) == 0 {
			b.Fatal(c, err)
		}
		lat = append(lat, time.Since(start))
	}
	lat.report(b)
}

// BenchmarkBulkMemories measures the bulk writer: one op is one memory
// with its message, keyword index and a 64-dimension embedding each.
func BenchmarkBulkMemories(b *testing.B) {
	db, _ := openSchema(b, postgres.Options{})
	ctx := context.Background()
	words := []string{"heist", "western", "noir", "comedy", "drama", "space", "horror", "romance"}
	s := memento.Scope{User: "bulk"}
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	b.ResetTimer()
	err := db.Bulk(ctx, func(bk *postgres.Bulk) error {
		if err := bk.User(s); err != nil {
			return err
		}
		if err := bk.Thread(s, "t1", int64(b.N), at); err != nil {
			return err
		}
		for i := range b.N {
			m := memento.Message{ID: fmt.Sprintf("m%d", i), Thread: "t1", Seq: int64(i + 1), Role: memento.RoleUser,
				Text: "I really like " + words[i%len(words)] + " films", At: at.Add(time.Duration(i) * time.Second)}
			if err := bk.Message(s, m, nil, ""); err != nil {
				return err
			}
			if err := bk.Memory(s, memento.Memory{ID: fmt.Sprintf("mem%d", i), Mode: memento.ModeEpisodic, Attribute: "LIKES",
				Value: words[i%len(words)] + " films", ValidFrom: m.At, Sources: []string{m.ID}, Vector: make([]float32, 64), Embedder: "e"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
