package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// TestBulkRowsReadBack writes one user's rows with Bulk and reads them back
// through the service methods, so bulk-loaded data is the data the rest of
// Memento sees.
func TestBulkRowsReadBack(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "bulk-user"}
	at := time.Date(2025, 4, 1, 9, 0, 0, 0, time.UTC)
	vec := []float32{1, 0, 0, 0}
	rating := 4.5
	err := db.Bulk(ctx, func(b *sqlite.Bulk) error {
		if err := b.User(s); err != nil {
			return err
		}
		if err := b.Thread(s, "t1", 2, at.Add(time.Minute)); err != nil {
			return err
		}
		msgs := []memento.Message{
			{ID: "m1", Thread: "t1", Seq: 1, Role: memento.RoleUser, Text: "I love slow science fiction", At: at},
			{ID: "m2", Thread: "t1", Seq: 2, Role: memento.RoleAssistant, Text: "Noted!", At: at.Add(time.Second)},
		}
		if err := b.Message(s, msgs[0], vec, "test/v1/4"); err != nil {
			return err
		}
		if err := b.Message(s, msgs[1], nil, ""); err != nil {
			return err
		}
		if err := b.Memory(s, memento.Memory{ID: "mem1", Attribute: "likes", Mode: memento.ModeSemantic, Value: "slow science fiction",
			ValidFrom: at, Sources: []string{"m1"}, Thread: "t1", RunID: "m1", Vector: vec, Embedder: "test/v1/4"}); err != nil {
			return err
		}
		if err := b.Run(s, memento.MemoryRun{Message: "m1", Thread: "t1", Outcome: memento.RunStored, Memories: []string{"mem1"}, FinishedAt: at}); err != nil {
			return err
		}
		if err := b.Event(s, memento.Event{ID: "e1", Type: memento.EventRated, TitleID: "wiki:Arrival", Value: &rating, At: at}); err != nil {
			return err
		}
		return b.Preference(s, memento.Preference{ID: "p1", Concept: "slow science fiction", Kind: memento.KindTaste, Weight: 0.8,
			Evidence: 1, Sources: []string{"m1"}, FirstSeen: at, LastSeen: at, Embedder: "test/v1/4", Vector: vec})
	})
	if err != nil {
		t.Fatal(err)
	}

	msgs, err := db.Messages(ctx, s, "t1", 0, 0)
	if err != nil || len(msgs) != 2 || msgs[0].ID != "m1" || msgs[1].Seq != 2 {
		t.Fatalf("messages = %+v, err %v", msgs, err)
	}
	mems, err := db.Memories(ctx, s, memento.MemoryFilter{})
	if err != nil || len(mems) != 1 || mems[0].Attribute != "LIKES" || mems[0].Sources[0] != "m1" {
		t.Fatalf("memories = %+v, err %v", mems, err)
	}
	run, err := db.MemoryRun(ctx, s, "m1")
	if err != nil || run.Outcome != memento.RunStored {
		t.Fatalf("run = %+v, err %v", run, err)
	}
	evs, err := db.Events(ctx, s)
	if err != nil || len(evs) != 1 || *evs[0].Value != rating {
		t.Fatalf("events = %+v, err %v", evs, err)
	}
	prefs, err := db.Preferences(ctx, s)
	if err != nil || len(prefs) != 1 || len(prefs[0].Vector) != 4 {
		t.Fatalf("preferences = %+v, err %v", prefs, err)
	}
	cands, err := db.MessageCandidates(ctx, s, memento.CandidateQuery{Query: "science fiction", Keyword: 10})
	if err != nil || len(cands) != 1 || cands[0].ID != "m1" || len(cands[0].Vector) != 4 {
		t.Fatalf("message candidates = %+v, err %v", cands, err)
	}
	mcands, err := db.MemoryCandidates(ctx, s, memento.CandidateQuery{Query: "science fiction", Keyword: 10})
	if err != nil || len(mcands) != 1 || mcands[0].ID != "mem1" || len(mcands[0].Vector) != 4 {
		t.Fatalf("memory candidates = %+v, err %v", mcands, err)
	}
	// The next appended message follows the bulk-loaded ones.
	res, err := db.AppendMessages(ctx, s, "t1", []memento.Message{{Role: memento.RoleUser, Text: "and thrillers"}}, nil)
	if err != nil || res.Messages[0].Seq != 3 {
		t.Fatalf("append after bulk = %+v, err %v", res, err)
	}
}

func TestBulkRollsBackOnError(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "bulk-user"}
	boom := errors.New("boom")
	err := db.Bulk(ctx, func(b *sqlite.Bulk) error {
		if err := b.User(s); err != nil {
			return err
		}
		if err := b.Thread(s, "t1", 0, time.Now()); err != nil {
			return err
		}
		if b.Rows() != 3 {
			t.Errorf("rows = %d, want 3 (tenant, user, thread)", b.Rows())
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	threads, err := db.Threads(ctx, s)
	if err != nil || len(threads) != 0 {
		t.Fatalf("threads after rollback = %+v, err %v", threads, err)
	}
	// A duplicate id fails the batch instead of being skipped.
	err = db.Bulk(ctx, func(b *sqlite.Bulk) error {
		if err := b.User(s); err != nil {
			return err
		}
		if err := b.Thread(s, "t1", 0, time.Now()); err != nil {
			return err
		}
		return b.Thread(s, "t1", 0, time.Now())
	})
	if err == nil {
		t.Fatal("a duplicate thread should fail the batch")
	}
}

// TestBulkManyRows writes more messages and memories than one multi-row
// statement holds, with vectors, and finds every one with its embedding.
func TestBulkManyRows(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "bulk-many"}
	at := time.Date(2025, 4, 1, 9, 0, 0, 0, time.UTC)
	const n = 1234
	err := db.Bulk(ctx, func(b *sqlite.Bulk) error {
		if err := b.User(s); err != nil {
			return err
		}
		if err := b.Thread(s, "t", n, at); err != nil {
			return err
		}
		for i := 1; i <= n; i++ {
			id := fmt.Sprintf("m%d", i)
			var vec []float32
			if i%2 == 1 {
				vec = []float32{float32(i), 1}
			}
			if err := b.Message(s, memento.Message{ID: id, Thread: "t", Seq: int64(i), Role: memento.RoleUser, Text: fmt.Sprintf("word%d common", i), At: at.Add(time.Duration(i) * time.Second)}, vec, "e/v1/2"); err != nil {
				return err
			}
			if err := b.Memory(s, memento.Memory{ID: "mem" + id, Attribute: "EVENT", Mode: memento.ModeEpisodic, Value: fmt.Sprintf("value%d", i), ValidFrom: at, Sources: []string{id}}); err != nil {
				return err
			}
		}
		// A run refers to a buffered message: it is written first.
		if err := b.Run(s, memento.MemoryRun{Message: "m1234", Thread: "t", Outcome: memento.RunNothing, FinishedAt: at}); err != nil {
			return err
		}
		if err := b.Flush(); err != nil {
			return err
		}
		if want := 3 + n + (n+1)/2 + n + 1; b.Rows() != want {
			t.Errorf("rows = %d, want %d", b.Rows(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := db.Messages(ctx, s, "t", 0, 0)
	if err != nil || len(msgs) != n {
		t.Fatalf("%d messages, err %v; want %d", len(msgs), err, n)
	}
	mems, err := db.Memories(ctx, s, memento.MemoryFilter{})
	if err != nil || len(mems) != n {
		t.Fatalf("%d memories, err %v; want %d", len(mems), err, n)
	}
	cands, err := db.MessageCandidates(ctx, s, memento.CandidateQuery{Query: "word777", Keyword: 5})
	if err != nil || len(cands) != 1 || cands[0].ID != "m777" || len(cands[0].Vector) != 2 || cands[0].Vector[0] != 777 {
		t.Fatalf("candidates for word777 = %+v, err %v", cands, err)
	}
	// The memories' index entries are buffered apart from the rows.
	mcands, err := db.MemoryCandidates(ctx, s, memento.CandidateQuery{Query: "value1001", Keyword: 5})
	if err != nil || len(mcands) != 1 || mcands[0].ID != "memm1001" {
		t.Fatalf("memory candidates for value1001 = %+v, err %v", mcands, err)
	}
}
