package sqlite_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// episodeWrite is the pipeline's write of one episode remembered from msg.
func episodeWrite(msg memento.Message, id string) memento.MemoryWrite {
	return memento.MemoryWrite{
		Message: msg,
		Insert: []memento.Memory{{ID: id, Kind: memento.MemoryEpisode, Attribute: "WATCHING_HABIT", Mode: memento.ModeEpisodic,
			Value: "watched " + msg.ID, ValidFrom: msg.At, Sources: []string{msg.ID}, RunID: msg.ID}},
		Run: memento.MemoryRun{Message: msg.ID, Outcome: memento.RunStored, Memories: []string{id}},
	}
}

// TestGroupCommitConcurrentWriters has many writers append messages and
// write pipeline runs at once, so that their writes share commits, some
// of them failing on purpose: each caller must get its own result, the
// failures must stay with their callers, and every acknowledged write
// must be stored once.
func TestGroupCommitConcurrentWriters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlitetest.Open(t)
	const writers, perWriter = 24, 8
	var wg sync.WaitGroup
	errs := make(chan error, writers*perWriter*4)
	for w := range writers {
		wg.Go(func() {
			s := memento.Scope{Tenant: memento.DefaultTenant, User: fmt.Sprintf("u%02d", w)}
			for i := range perWriter {
				id := fmt.Sprintf("m%02d-%d", w, i)
				res, err := db.AppendMessages(ctx, s, "t1", []memento.Message{{ID: id, Role: memento.RoleUser, Text: "message " + id}},
					messageJobs("extract", s))
				if err != nil {
					errs <- fmt.Errorf("append %s: %w", id, err)
					return
				}
				if len(res.Messages) != 1 || res.Messages[0].ID != id || res.Messages[0].User != s.User || res.Messages[0].Seq != int64(i+1) || res.Inserted != 1 {
					errs <- fmt.Errorf("append %s got %+v; want its own message with seq %d", id, res, i+1)
				}
				msg := res.Messages[0]
				// Failures of their own kinds, batched with the others:
				// a message that does not exist, a base that changed.
				if _, err := db.WriteMemories(ctx, s, episodeWrite(memento.Message{ID: id + "-missing", At: msg.At}, "mem-missing-"+id)); memento.ErrorCode(err) != memento.ENOTFOUND {
					errs <- fmt.Errorf("write for a missing message: %v, want ENOTFOUND", err)
				}
				stale := episodeWrite(msg, "mem-stale-"+id)
				stale.Base = map[string]memento.MemoryBase{"LIKES": {ID: "mem-gone", Value: "gone"}}
				if _, err := db.WriteMemories(ctx, s, stale); memento.ErrorCode(err) != memento.ECONFLICT {
					errs <- fmt.Errorf("write over a stale base: %v, want ECONFLICT", err)
				}
				if written, err := db.WriteMemories(ctx, s, episodeWrite(msg, "mem-"+id)); err != nil || !written {
					errs <- fmt.Errorf("write memories of %s: written %t, %v", id, written, err)
				}
				// A repeat writes nothing.
				if written, err := db.WriteMemories(ctx, s, episodeWrite(msg, "mem-again-"+id)); err != nil || written {
					errs <- fmt.Errorf("repeated write of %s: written %t, %v", id, written, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	for w := range writers {
		s := memento.Scope{User: fmt.Sprintf("u%02d", w)}
		msgs, err := db.Messages(ctx, s, "t1", 0, 0)
		if err != nil || len(msgs) != perWriter {
			t.Errorf("user %s: %d messages (%v), want %d", s.User, len(msgs), err, perWriter)
		}
		mems, err := db.Memories(ctx, s, memento.MemoryFilter{All: true})
		if err != nil || len(mems) != perWriter {
			t.Errorf("user %s: %d memories (%v), want %d", s.User, len(mems), err, perWriter)
		}
		runs, err := db.MemoryRuns(ctx, s, 0)
		if err != nil || len(runs) != perWriter {
			t.Errorf("user %s: %d runs (%v), want %d", s.User, len(runs), err, perWriter)
		}
		// The full-text index holds the user's stored memories and none
		// of the failed writes'.
		found, err := db.MemoryCandidates(ctx, s, memento.CandidateQuery{Query: "watched", Keyword: 4 * perWriter})
		if err != nil {
			t.Fatal(err)
		}
		var got, want []string
		for _, c := range found {
			got = append(got, c.ID)
		}
		for i := range perWriter {
			want = append(want, fmt.Sprintf("mem-m%02d-%d", w, i))
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("user %s: search finds %v, want %v", s.User, got, want)
		}
	}
	if n := countJobs(t, db); n != writers*perWriter {
		t.Errorf("%d jobs, want one per message, %d", n, writers*perWriter)
	}
}

// TestGroupCommitCancelledCaller checks that a caller whose context is
// already done writes nothing and hears so.
func TestGroupCommitCancelledCaller(t *testing.T) {
	t.Parallel()
	db := sqlitetest.Open(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := memento.Scope{User: "ann"}
	if _, err := db.AppendMessages(ctx, s, "t1", []memento.Message{{Role: memento.RoleUser, Text: "hi"}}, nil); err == nil {
		t.Fatal("append with a cancelled context succeeded")
	}
	if _, err := db.Messages(context.Background(), s, "t1", 0, 0); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("the thread of a cancelled append exists (%v)", err)
	}
}

// BenchmarkConcurrentAppend measures acknowledgements of single messages
// by many clients at once, which share commits: the throughput and each
// client's latency.
func BenchmarkConcurrentAppend(b *testing.B) {
	for _, clients := range []int{1, 4, 16, 64} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			db := sqlitetest.OpenWith(b, sqlitetest.Options())
			benchConcurrentAppend(b, db, clients)
		})
	}
}

func benchConcurrentAppend(b *testing.B, db *sqlite.DB, clients int) {
	ctx := context.Background()
	var mu sync.Mutex
	lat := make(latencies, 0, b.N)
	next := make(chan int)
	var wg sync.WaitGroup
	b.ResetTimer()
	for c := range clients {
		wg.Go(func() {
			s := memento.Scope{User: fmt.Sprintf("u%d", c)}
			jobs := messageJobs("extract", s)
			for i := range next {
				msg := []memento.Message{{ID: fmt.Sprintf("m%d", i), Role: memento.RoleUser, Text: "I would like a quiet thriller from the nineties"}}
				start := time.Now()
				if _, err := db.AppendMessages(ctx, s, "t1", msg, jobs); err != nil {
					b.Error(err)
					return
				}
				d := time.Since(start)
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		})
	}
	for i := range b.N {
		next <- i
	}
	close(next)
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	lat.report(b)
}
