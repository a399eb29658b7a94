package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/internal/jobctx"
)

// roundTrips counts what a connection sends the server: each statement
// sent alone, and each batch as one.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// during returns the round trips fn made.
func (r *roundTrips) during(fn func()) int64 {
	before := r.n.Load()
	fn()
	return r.n.Load() - before
}

// countRoundTrips gives db a pool whose connections count their round
// trips.
func countRoundTrips(t *testing.T, db *DB) *roundTrips {
	t.Helper()
	rt := &roundTrips{}
	cfg := db.pool.Config()
	cfg.ConnConfig.Tracer = rt
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	old := db.pool
	db.pool = pool
	t.Cleanup(old.Close)
	return rt
}

// TestBatchRoundTrips checks that a batch of a user's memory writes, and
// one of preference writes, go to the server in as many round trips
// whatever the number of writes in them: three for the memories'
// (besides BEGIN and COMMIT), and for the preferences' one for the batch
// and one a write that changes something.
func TestBatchRoundTrips(t *testing.T) {
	ctx := jobctx.With(context.Background())
	db := openInternal(t)
	rt := countRoundTrips(t, db)
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var msgs []memento.Message
	for i := range 18 {
		msgs = append(msgs, memento.Message{ID: fmt.Sprintf("m%d", i), Role: memento.RoleUser, Text: fmt.Sprintf("I like film %d", i), At: t0.Add(time.Duration(i) * time.Minute)})
	}
	res, err := db.AppendMessages(ctx, s, "t1", msgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Each write supersedes the value the one before it left.
	prev := memento.MemoryBase{}
	writes := func(from, to int) []memento.MemoryWrite {
		var ws []memento.MemoryWrite
		for i := from; i < to; i++ {
			m := res.Messages[i]
			id := fmt.Sprintf("v%d", i)
			w := memento.MemoryWrite{Message: m, Base: map[string]memento.MemoryBase{"LIKES": prev},
				Insert: []memento.Memory{{ID: id, Kind: memento.KindFact, Attribute: "LIKES", Mode: memento.ModeSemantic, Value: m.Text,
					ValidFrom: m.At, Sources: []string{m.ID}, Thread: "t1"}},
				Run: memento.MemoryRun{Message: m.ID, Outcome: memento.RunStored}, Vector: []float32{1, 0}, Embedder: "e"}
			if prev.ID != "" {
				w.Close = []memento.Supersession{{ID: prev.ID, Attribute: "LIKES"}}
			}
			ws = append(ws, w)
			prev = memento.MemoryBase{ID: id, Value: m.Text}
		}
		return ws
	}
	memories := func(ws []memento.MemoryWrite) int64 {
		t.Helper()
		return rt.during(func() {
			written, err := db.WriteMemoryBatch(ctx, s, ws)
			if err != nil {
				t.Fatal(err)
			}
			for i, ok := range written {
				if !ok {
					t.Fatalf("write %d of %d not written", i, len(ws))
				}
			}
		})
	}
	few, many := memories(writes(0, 3)), memories(writes(3, 18))
	if few != many || many > 5 {
		t.Errorf("memory batches of 3 and 15 writes took %d and %d round trips, want the same, at most 5", few, many)
	}

	// Preferences: the first write of each batch adds a concept, the
	// others change nothing.
	n := 0
	prefWrites := func(k int) []memento.PreferenceWrite {
		var ws []memento.PreferenceWrite
		for i := range k {
			n++
			ws = append(ws, memento.PreferenceWrite{Source: fmt.Sprintf("p%d", n), Embedder: "e",
				Merge: func(current []memento.Preference) (memento.PreferenceChanges, error) {
					if i > 0 {
						return memento.PreferenceChanges{}, nil
					}
					return memento.PreferenceChanges{Insert: []memento.Preference{{Concept: fmt.Sprintf("c%d", n), Kind: memento.KindTaste, Weight: 1,
						Evidence: 1, Embedder: "e", Vector: []float32{0, 1}, FirstSeen: t0, LastSeen: t0}}}, nil
				}})
		}
		return ws
	}
	prefs := func(ws []memento.PreferenceWrite) int64 {
		t.Helper()
		return rt.during(func() {
			if _, err := db.WritePreferenceBatch(ctx, s, ws); err != nil {
				t.Fatal(err)
			}
		})
	}
	prefs(prefWrites(2)) // the first change asks for a clustering
	few, many = prefs(prefWrites(3)), prefs(prefWrites(15))
	if few != many || many > 4 {
		t.Errorf("preference batches of 3 and 15 writes took %d and %d round trips, want the same, at most 4", few, many)
	}
}

// TestAppendRoundTrips checks that an append's jobs go in the round trip
// of its messages: BEGIN with the user's lock, the thread's head, the
// messages with their jobs, and COMMIT, however many messages, once the
// user's backlog has a job waiting.
func TestAppendRoundTrips(t *testing.T) {
	ctx := context.Background()
	db := openInternal(t)
	rt := countRoundTrips(t, db)
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	jobsFor := func(m memento.Message) []memento.JobRequest {
		return []memento.JobRequest{{Kind: memento.JobRemember, Payload: memento.MessageJob{Thread: m.Thread, Message: m.ID}, ByUser: true}}
	}
	n := 0
	appendN := func(k int) int64 {
		t.Helper()
		var msgs []memento.Message
		for range k {
			n++
			msgs = append(msgs, memento.Message{ID: fmt.Sprintf("m%d", n), Role: memento.RoleUser, Text: fmt.Sprintf("message %d", n)})
		}
		return rt.during(func() {
			res, err := db.AppendMessages(ctx, s, "t1", msgs, jobsFor)
			if err != nil || res.Inserted != k {
				t.Fatalf("AppendMessages = %+v, %v", res, err)
			}
		})
	}
	appendN(1) // enqueues the backlog's job
	if one, ten := appendN(1), appendN(10); one != 4 || ten != 4 {
		t.Errorf("appends of 1 and 10 messages took %d and %d round trips, want 4", one, ten)
	}
	var rows int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM backlog WHERE tenant_id = $1 AND user_id = $2`, s.Tenant, s.User).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 12 {
		t.Errorf("%d jobs in the backlog, want 12", rows)
	}
}

// TestEventsRoundTrips checks that events go to the server in one
// statement however many there are, with their jobs in one round trip
// after it, and that a profile is saved in two round trips however many
// keys it writes and deletes (besides BEGIN with the user's lock and
// COMMIT in both).
func TestEventsRoundTrips(t *testing.T) {
	ctx := context.Background()
	db := openInternal(t)
	rt := countRoundTrips(t, db)
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	jobsFor := func(e memento.Event) []memento.JobRequest {
		return []memento.JobRequest{{Kind: memento.JobProfile, Payload: memento.PreferenceEventJob{Tenant: s.Tenant, User: s.User, Event: e}, ByUser: true}}
	}
	n := 0
	addN := func(k int) int64 {
		t.Helper()
		var events []memento.Event
		for range k {
			n++
			events = append(events, memento.Event{ID: fmt.Sprintf("e%d", n), Type: memento.EventWatched, TitleID: fmt.Sprintf("wiki:T%d", n)})
		}
		return rt.during(func() {
			if added, err := db.AddEvents(ctx, s, events, jobsFor); err != nil || added != k {
				t.Fatalf("AddEvents = %d, %v; want %d", added, err, k)
			}
		})
	}
	addN(1) // creates the user and enqueues the backlog's job
	if one, ten := addN(1), addN(10); one != ten || ten > 5 {
		t.Errorf("events 1 and 10 at once took %d and %d round trips, want the same, at most 5", one, ten)
	}

	keys := func(k int, value string) map[string]memento.ProfileEntry {
		out := map[string]memento.ProfileEntry{}
		for i := range k {
			out[fmt.Sprintf("k%s%02d", value, i)] = memento.ProfileEntry{Value: json.RawMessage(value), Evidence: []string{"e1"}}
		}
		return out
	}
	save := func(keys map[string]memento.ProfileEntry) int64 {
		t.Helper()
		return rt.during(func() {
			if _, err := db.SaveLearned(ctx, s, keys); err != nil {
				t.Fatal(err)
			}
		})
	}
	// One key written; then twelve written and that one deleted.
	if one, many := save(keys(1, `1`)), save(keys(12, `2`)); one != 4 || many != 4 {
		t.Errorf("profile saves of 1 and 12 keys took %d and %d round trips, want 4", one, many)
	}
	if none := save(keys(12, `2`)); none != 3 {
		t.Errorf("a save that changes nothing took %d round trips, want 3", none)
	}
}
