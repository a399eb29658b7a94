package sqlite_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// Size of the store BenchmarkAppendToLargeStore appends to: large enough
// that a checkpoint writes pages all over a file far bigger than the
// log, as in a store in use.
const (
	largeUsers       = 2000
	largeUserThreads = 5
	largeThreadMsgs  = 20
	warmAppends      = 3000
)

// buildLargeStore builds the store in dir and returns its path; each
// variant of the benchmark appends to a copy.
func buildLargeStore(dir string) (string, error) {
	path := filepath.Join(dir, "large.db")
	ctx := context.Background()
	opts := sqlitetest.Options()
	db, err := sqlite.Open(ctx, path, opts)
	if err != nil {
		return "", err
	}
	words := []string{"quiet", "thriller", "nineties", "space", "western", "romance", "heist", "documentary", "comedy", "noir",
		"slow", "funny", "scary", "family", "epic", "french", "animated", "musical", "war", "detective"}
	r := rand.New(rand.NewPCG(1, 2))
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for u0 := 0; u0 < largeUsers; u0 += 200 {
		err := db.Bulk(ctx, func(b *sqlite.Bulk) error {
			for u := u0; u < u0+200; u++ {
				s := memento.Scope{Tenant: memento.DefaultTenant, User: fmt.Sprintf("u%05d", u)}
				if err := b.User(s); err != nil {
					return err
				}
				for th := range largeUserThreads {
					thread := fmt.Sprintf("t%d", th)
					if err := b.Thread(s, thread, largeThreadMsgs, at); err != nil {
						return err
					}
					for i := range largeThreadMsgs {
						text := fmt.Sprintf("I would like a %s %s film, maybe %s or %s", words[r.IntN(20)], words[r.IntN(20)], words[r.IntN(20)], words[r.IntN(20)])
						m := memento.Message{ID: fmt.Sprintf("m%d-%d", th, i), Thread: thread, Seq: int64(i + 1), Role: memento.RoleUser, Text: text, At: at}
						if err := b.Message(s, m, nil, ""); err != nil {
							return err
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			db.Close()
			return "", err
		}
	}
	if err := db.Close(); err != nil {
		return "", err
	}
	return path, nil
}

// BenchmarkAppendToLargeStore measures the acknowledgement of one message
// with three jobs (as the message log stores them) appended to random
// users of a store of 200,000 messages, with the background checkpointer
// and with SQLite's checkpoints inside the commit that crosses 1,000 pages.
// Run it with -benchtime=2000x or more, so the tail holds several
// checkpoints.
func BenchmarkAppendToLargeStore(b *testing.B) {
	src, err := buildLargeStore(b.TempDir())
	if err != nil {
		b.Fatalf("build the store: %v", err)
	}
	for _, v := range []struct {
		name  string
		pages int
	}{{"checkpoint=background", 0}, {"checkpoint=in-commit", -1}} {
		b.Run(v.name, func(b *testing.B) {
			data, err := os.ReadFile(src)
			if err != nil {
				b.Fatal(err)
			}
			path := filepath.Join(b.TempDir(), "large.db")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				b.Fatal(err)
			}
			opts := sqlitetest.Options()
			opts.CheckpointPages = v.pages
			db := sqlitetest.OpenPath(b, path, opts)
			ctx := context.Background()
			r := rand.New(rand.NewPCG(3, 4))
			i := 0
			appendOne := func() time.Duration {
				i++
				s := memento.Scope{Tenant: memento.DefaultTenant, User: fmt.Sprintf("u%05d", r.IntN(largeUsers))}
				jobs := func(m memento.Message) []memento.JobRequest {
					p := memento.MessageJob{Tenant: s.Tenant, User: s.User, Thread: m.Thread, Message: m.ID, Seq: m.Seq}
					return []memento.JobRequest{{Kind: "remember", Payload: p}, {Kind: "preferences", Payload: p}, {Kind: "profile", Payload: p}}
				}
				msg := []memento.Message{{ID: fmt.Sprintf("new-%d", i), Role: memento.RoleUser, Text: "I would like a quiet thriller from the nineties"}}
				start := time.Now()
				if _, err := db.AppendMessages(ctx, s, fmt.Sprintf("t%d", r.IntN(largeUserThreads)), msg, jobs); err != nil {
					b.Fatal(err)
				}
				return time.Since(start)
			}
			// A store in use has been written before: its log file has
			// grown to its working size (which takes 40 MB of log with
			// the background checkpointer, 4 MB without).
			for range warmAppends {
				appendOne()
			}
			lat := make(latencies, 0, b.N)
			for b.Loop() {
				lat = append(lat, appendOne())
			}
			lat.report(b)
			over := 0
			for _, d := range lat {
				if d >= 5*time.Millisecond {
					over++
				}
			}
			b.ReportMetric(100*float64(over)/float64(len(lat)), "%≥5ms")
		})
	}
}
