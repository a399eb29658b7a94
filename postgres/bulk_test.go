package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/postgres"
)

// TestBulkRowsReadBack loads users with the bulk writer and reads them
// back through the service methods: messages in order, memories with
// their vectors and history, keyword candidates scored as if written one
// by one, runs, events and preferences.
func TestBulkRowsReadBack(t *testing.T) {
	bulk, _ := openSchema(t, postgres.Options{})
	plain, _ := openSchema(t, postgres.Options{})
	ctx := t.Context()
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	s := memento.Scope{User: "ann"}
	texts := []string{"I love heist films", "and westerns too", "my sister hates horror"}
	// The change log's head before the load: a warm recall index of the
	// user reads what the load wrote as changes after it.
	before, err := bulk.RecallDocs(ctx, s, -1)
	if err != nil {
		t.Fatal(err)
	}
	err = bulk.Bulk(ctx, func(b *postgres.Bulk) error {
		if err := b.User(s); err != nil {
			return err
		}
		if err := b.Thread(s, "t1", int64(len(texts)), t0); err != nil {
			return err
		}
		for i, text := range texts {
			m := memento.Message{ID: fmt.Sprintf("m%d", i), Thread: "t1", Seq: int64(i + 1), Role: memento.RoleUser, Text: text, At: t0.Add(time.Duration(i) * time.Minute)}
			// The last message without a vector: it is logged for recall
			// by its own insert, not by its vector's.
			var vector []float32
			if i < len(texts)-1 {
				vector = []float32{float32(i), 1}
			}
			if err := b.Message(s, m, vector, "e"); err != nil {
				return err
			}
			if err := b.Run(s, memento.MemoryRun{Message: m.ID, Thread: "t1", Outcome: memento.RunStored, FinishedAt: m.At}); err != nil {
				return err
			}
		}
		closed := t0.Add(time.Minute)
		if err := b.Memory(s, memento.Memory{ID: "old", Mode: memento.ModeSemantic, Attribute: "likes", Value: "heist films", ValidFrom: t0, ValidTo: &closed, Sources: []string{"m0"}}); err != nil {
			return err
		}
		if err := b.Memory(s, memento.Memory{ID: "cur", Mode: memento.ModeSemantic, Attribute: "likes", Value: "heist films and westerns", ValidFrom: closed,
			Sources: []string{"m0", "m1"}, Vector: []float32{1, 2}, Embedder: "e"}); err != nil {
			return err
		}
		if err := b.Memory(s, memento.Memory{ID: "ep", Mode: memento.ModeEpisodic, Attribute: "family", Value: "sister hates horror", ValidFrom: t0.Add(2 * time.Minute)}); err != nil {
			return err
		}
		if err := b.Event(s, memento.Event{ID: "e1", Type: memento.EventWatched, TitleID: "wiki:Heat", At: t0}); err != nil {
			return err
		}
		return b.Preference(s, memento.Preference{ID: "p1", Concept: "heist", Kind: memento.KindTaste, Weight: 1, Evidence: 1, FirstSeen: t0, LastSeen: t0, Embedder: "e", Vector: []float32{1, 0}})
	})
	if err != nil {
		t.Fatalf("Bulk: %v", err)
	}
	// The same data through the service methods, for the scores.
	for i, text := range texts {
		res, err := plain.AppendMessages(ctx, s, "t1", []memento.Message{{ID: fmt.Sprintf("m%d", i), Role: memento.RoleUser, Text: text, At: t0.Add(time.Duration(i) * time.Minute)}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		m := res.Messages[0]
		var ins []memento.Memory
		var closes []memento.Supersession
		switch i {
		case 0:
			ins = []memento.Memory{{ID: "old", Mode: memento.ModeSemantic, Attribute: "likes", Value: "heist films", ValidFrom: t0}}
		case 1:
			closes = []memento.Supersession{{ID: "old", Attribute: "LIKES"}}
			ins = []memento.Memory{{ID: "cur", Mode: memento.ModeSemantic, Attribute: "likes", Value: "heist films and westerns", ValidFrom: m.At}}
		case 2:
			ins = []memento.Memory{{ID: "ep", Mode: memento.ModeEpisodic, Attribute: "family", Value: "sister hates horror", ValidFrom: m.At}}
		}
		if _, err := plain.WriteMemories(ctx, s, memento.MemoryWrite{Message: m, Close: closes, Insert: ins, Run: memento.MemoryRun{Message: m.ID, Outcome: memento.RunStored}}); err != nil {
			t.Fatal(err)
		}
	}

	msgs, err := bulk.Messages(ctx, s, "t1", 0, 0)
	if err != nil || len(msgs) != 3 || msgs[2].Text != texts[2] || !msgs[0].At.Equal(t0) {
		t.Errorf("bulk messages = %+v, %v", msgs, err)
	}
	if st, _ := bulk.ThreadState(ctx, s, "t1"); st.LastSeq != 3 {
		t.Errorf("bulk thread lastSeq = %d, want 3", st.LastSeq)
	}
	hist, err := bulk.MemoryHistory(ctx, s, "cur")
	if err != nil || len(hist) != 2 || hist[1].ID != "old" {
		t.Errorf("bulk history = %+v, %v", hist, err)
	}
	if m, err := bulk.Memory(ctx, s, "cur"); err != nil || len(m.Vector) != 2 || m.Embedder != "e" {
		t.Errorf("bulk memory = %+v, %v; want its vector", m, err)
	}
	for _, q := range []string{"heist westerns", "sister horror", "likes family"} {
		got, err := bulk.MemoryCandidates(ctx, s, memento.CandidateQuery{Query: q, Keyword: 5})
		if err != nil {
			t.Fatal(err)
		}
		want, err := plain.MemoryCandidates(ctx, s, memento.CandidateQuery{Query: q, Keyword: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%q: bulk %d candidates, service-written %d", q, len(got), len(want))
		}
		for i := range got {
			if got[i].ID != want[i].ID || got[i].BM25 != want[i].BM25 {
				t.Errorf("%q: candidate %d bulk %s %.9f, service-written %s %.9f", q, i, got[i].ID, got[i].BM25, want[i].ID, want[i].BM25)
			}
		}
	}
	if ok, _ := bulk.MemoryProcessed(ctx, s, "m2"); !ok {
		t.Errorf("bulk run not recorded")
	}
	if ev, _ := bulk.Events(ctx, s); len(ev) != 1 {
		t.Errorf("bulk events = %+v", ev)
	}
	if p, _ := bulk.Preferences(ctx, s); len(p) != 1 || p[0].Concept != "heist" {
		t.Errorf("bulk preferences = %+v", p)
	}
	docs, err := bulk.RecallDocs(ctx, s, -1)
	if err != nil || len(docs.Docs) != 5 {
		t.Errorf("bulk recall docs = %d, %v; want 2 current memories and 3 messages", len(docs.Docs), err)
	}
	changed, err := bulk.RecallDocs(ctx, s, before.Through)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, d := range changed.Docs {
		kinds[d.Candidate.Kind]++
	}
	if changed.Full || kinds[memento.RecallMessage] != 3 || kinds[memento.RecallAttribute] != 2 || kinds[memento.RecallEpisode] != 1 {
		t.Errorf("recall changes after the load: full %v, %v; want 3 messages, 2 attributes (one closed) and 1 episode as changes", changed.Full, kinds)
	}
	if err := bulk.Bulk(ctx, func(b *postgres.Bulk) error {
		if err := b.User(s); err != nil {
			return err
		}
		return b.Thread(s, "t1", 0, t0) // exists: the whole call fails
	}); err == nil {
		t.Errorf("a bulk write of an existing thread succeeded")
	}
}

// TestAnalyzeAfterBulk checks that Analyze gives the planner the numbers
// of rows a bulk load left in the store's tables, and only in the store's
// own schema: another store's tables, never analysed, keep PostgreSQL's
// "unknown" (-1).
func TestAnalyzeAfterBulk(t *testing.T) {
	loaded, _ := openSchema(t, postgres.Options{})
	_, other := openSchema(t, postgres.Options{})
	ctx := t.Context()
	s := memento.Scope{User: "ann"}
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	const n = 2000
	err := loaded.Bulk(ctx, func(b *postgres.Bulk) error {
		if err := b.User(s); err != nil {
			return err
		}
		for i := range n {
			m := memento.Memory{ID: fmt.Sprintf("m%d", i), Mode: memento.ModeEpisodic, Attribute: "seen", Value: fmt.Sprintf("film %d", i), ValidFrom: t0.Add(time.Duration(i) * time.Minute)}
			if err := b.Memory(s, m); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Bulk: %v", err)
	}
	if err := loaded.Analyze(ctx); err != nil {
		t.Fatalf("Analyze: %v", err)
	}
	tuples := func(db *postgres.DB, schema string) float64 {
		t.Helper()
		var x float64
		q := `SELECT reltuples FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relname = 'memories'`
		args := []any{}
		if schema != "" {
			q = `SELECT reltuples FROM pg_class WHERE relnamespace = $1::regnamespace AND relname = 'memories'`
			args = append(args, schema)
		}
		if err := db.Pool().QueryRow(ctx, q, args...).Scan(&x); err != nil {
			t.Fatalf("read the planner's row count: %v", err)
		}
		return x
	}
	if got := tuples(loaded, ""); got < n*9/10 || got > n*11/10 {
		t.Errorf("memories the planner counts after Analyze = %v, want about %d", got, n)
	}
	if got := tuples(loaded, other); got != -1 {
		t.Errorf("memories the planner counts in another store's schema = %v, want -1 (never analysed)", got)
	}
}
