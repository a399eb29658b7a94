package sqlite_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// syncModes are the durability settings the write benchmarks compare.
var syncModes = []string{"FULL", "NORMAL"}

// latencies collects the duration of each operation of a benchmark and
// reports the median and the 99th percentile.
type latencies []time.Duration

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	pct := func(p float64) float64 {
		return float64(l[int(p*float64(len(l)-1))].Microseconds())
	}
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}

// BenchmarkAppendMessage measures how long AppendMessages takes to
// acknowledge one message with one job: the latency a client waits for;
// and the pages each append adds to the log (pages/op), which do not
// depend on the disk. by-user enqueues the engine's three jobs of a
// user's message in the user's backlog instead of one job in the queue.
func BenchmarkAppendMessage(b *testing.B) {
	byUser := func(s memento.Scope) func(memento.Message) []memento.JobRequest {
		return func(m memento.Message) []memento.JobRequest {
			p := memento.MessageJob{Tenant: s.Tenant, User: s.User, Thread: m.Thread, Message: m.ID, Seq: m.Seq}
			return []memento.JobRequest{{Kind: memento.JobRemember, Payload: p, ByUser: true},
				{Kind: memento.JobPreferences, Payload: p, ByUser: true}, {Kind: memento.JobMessageEvents, Payload: p, ByUser: true}}
		}
	}
	for _, mode := range append(syncModes, "FULL/by-user") {
		b.Run("sync="+mode, func(b *testing.B) {
			opts := sqlitetest.Options()
			opts.Synchronous, _, _ = strings.Cut(mode, "/")
			db := sqlitetest.OpenWith(b, opts)
			ctx := context.Background()
			s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
			jobs := messageJobs("extract", s)
			if strings.HasSuffix(mode, "/by-user") {
				jobs = byUser(s)
			}
			// The thread and the user's backlog exist, as they do for
			// all but a user's first message.
			if _, err := db.AppendMessages(ctx, s, "t1", []memento.Message{{ID: "m0", Role: memento.RoleUser, Text: "hello"}}, jobs); err != nil {
				b.Fatal(err)
			}
			lat := make(latencies, 0, b.N)
			pages := db.WriterStats().LogPages
			i := 0
			for b.Loop() {
				i++
				msg := []memento.Message{{ID: fmt.Sprintf("m%d", i), Role: memento.RoleUser, Text: "I would like a quiet thriller from the nineties"}}
				start := time.Now()
				if _, err := db.AppendMessages(ctx, s, "t1", msg, jobs); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			lat.report(b)
			b.ReportMetric(float64(db.WriterStats().LogPages-pages)/float64(i), "pages/op")
		})
	}
}

// BenchmarkSaveTurn measures storing a whole turn: two messages, the
// thread state and one summarise job.
func BenchmarkSaveTurn(b *testing.B) {
	for _, mode := range syncModes {
		b.Run("sync="+mode, func(b *testing.B) {
			opts := sqlitetest.Options()
			opts.Synchronous = mode
			db := sqlitetest.OpenWith(b, opts)
			ctx := context.Background()
			s := memento.Scope{User: "ann"}
			state := memento.ThreadState{Context: memento.ActiveContext{Genres: []string{"Thriller"}, Count: 3,
				ExcludedTitleIDs: []string{"ml:1", "ml:2", "ml:3"}}, LastShown: []string{"ml:4", "ml:5", "ml:6"}}
			jobsFor := func(stored []memento.Message) []memento.JobRequest {
				last := stored[len(stored)-1]
				return []memento.JobRequest{{Kind: memento.JobSummarise, Payload: memento.MessageJob{Thread: last.Thread, Seq: last.Seq}}}
			}
			lat := make(latencies, 0, b.N)
			for b.Loop() {
				start := time.Now()
				_, err := db.SaveTurn(ctx, memento.Turn{Scope: s, Thread: "t1", State: state, JobsFor: jobsFor, Messages: []memento.Message{
					{Role: memento.RoleUser, Text: "Something older, please"},
					{Role: memento.RoleAssistant, Text: "Here are three thrillers from before 1990."},
				}})
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			lat.report(b)
		})
	}
}

// BenchmarkThreadState measures the read at the start of every turn.
func BenchmarkThreadState(b *testing.B) {
	db := sqlitetest.Open(b)
	ctx := context.Background()
	s := memento.Scope{User: "ann"}
	for i := range 50 {
		if _, err := db.SaveTurn(ctx, memento.Turn{Scope: s, Thread: fmt.Sprintf("t%d", i%5),
			State:    memento.ThreadState{Context: memento.ActiveContext{Genres: []string{"Drama"}}, LastShown: []string{"ml:1"}},
			Messages: []memento.Message{{Role: memento.RoleUser, Text: "hello"}}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := db.ThreadState(ctx, s, "t3"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearchMessages measures a BM25 search over 2,000 messages of a
// user among 10,000.
func BenchmarkSearchMessages(b *testing.B) {
	db := sqlitetest.Open(b)
	ctx := context.Background()
	words := []string{"thriller", "comedy", "quiet", "loud", "nineties", "space", "western", "romance", "heist", "documentary"}
	for u := range 5 {
		s := memento.Scope{User: fmt.Sprintf("u%d", u)}
		msgs := make([]memento.Message, 2000)
		for i := range msgs {
			msgs[i] = memento.Message{Role: memento.RoleUser, Text: fmt.Sprintf("I want a %s %s film, maybe %s",
				words[i%10], words[(i/10)%10], words[(i/100)%10])}
		}
		if _, err := db.AppendMessages(ctx, s, "t1", msgs, nil); err != nil {
			b.Fatal(err)
		}
	}
	s := memento.Scope{User: "u2"}
	b.ResetTimer()
	for b.Loop() {
		if _, err := db.SearchMessages(ctx, s, "quiet heist thriller", 10); err != nil {
			b.Fatal(err)
		}
	}
}
