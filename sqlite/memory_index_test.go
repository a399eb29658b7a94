package sqlite

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
)

// TestMemoryWritesIndexInOneSegment writes a batch of pipeline runs that
// insert nine memories: the full-text index of memories gains one segment,
// where a trigger on each insert left a segment per memory. A memory that
// one run inserts and a later run of the same batch closes is never found;
// keyword search finds exactly the current memories after each batch,
// after an edit and after an import.
func TestMemoryWritesIndexInOneSegment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openInternal(t, Options{})
	db.ftsMerge.close() // the segments the writes leave, unmerged
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var msgs []memento.Message
	for i := range 5 {
		msgs = append(msgs, memento.Message{ID: fmt.Sprintf("m%d", i), Role: memento.RoleUser, Text: fmt.Sprintf("message %d", i), At: at.Add(time.Duration(i) * time.Minute)})
	}
	if _, err := db.AppendMessages(ctx, s, "t", msgs, nil); err != nil {
		t.Fatal(err)
	}
	mem := func(id, attr, mode, value string, i int) memento.Memory {
		return memento.Memory{ID: id, Attribute: attr, Mode: mode, Value: value, ValidFrom: msgs[i].At, Sources: []string{msgs[i].ID},
			Vector: []float32{1, 0, 0, 0}, Embedder: "test"}
	}
	run := func(i int) memento.MemoryRun {
		return memento.MemoryRun{Message: msgs[i].ID, Thread: "t", Outcome: memento.RunStored}
	}
	write := func(ws ...memento.MemoryWrite) {
		t.Helper()
		written, err := db.WriteMemoryBatch(ctx, s, ws)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(written, false) {
			t.Fatalf("written %v", written)
		}
	}
	found := func(query string) []string {
		t.Helper()
		cs, err := db.MemoryCandidates(ctx, s, memento.CandidateQuery{Query: query, Keyword: 50})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range cs {
			ids = append(ids, c.ID)
		}
		slices.Sort(ids)
		return ids
	}

	before := segments(t, db, "memories_fts")
	write(
		memento.MemoryWrite{Message: msgs[0], Run: run(0), Insert: []memento.Memory{
			mem("food1", "food", memento.ModeSemantic, "loves quince jam", 0),
			mem("trip1", "travel", memento.ModeEpisodic, "quince orchard visit in Porto", 0),
			mem("pet1", "pet", memento.ModeSemantic, "a quince coloured cat", 0),
		}},
		memento.MemoryWrite{Message: msgs[1], Run: run(1), Insert: []memento.Memory{
			mem("film1", "films", memento.ModeSemantic, "quince documentaries", 1),
			mem("trip2", "travel", memento.ModeEpisodic, "quince market in Lisbon", 1),
			mem("music1", "music", memento.ModeSemantic, "quince folk songs", 1),
		}},
		memento.MemoryWrite{Message: msgs[2], Run: run(2), Insert: []memento.Memory{
			mem("book1", "books", memento.ModeSemantic, "quince cookbooks", 2),
			mem("trip3", "travel", memento.ModeEpisodic, "quince fair in Braga", 2),
			mem("sport1", "sport", memento.ModeSemantic, "quince relay running", 2),
		}},
	)
	if got := segments(t, db, "memories_fts") - before; got != 1 {
		t.Errorf("a batch of nine memories added %d segments to the index, want 1", got)
	}
	want := []string{"book1", "film1", "food1", "music1", "pet1", "sport1", "trip1", "trip2", "trip3"}
	if diff := cmp.Diff(want, found("quince")); diff != "" {
		t.Errorf("search after the batch (-want +got):\n%s", diff)
	}

	// The second run closes what the first inserted, in one batch.
	before = segments(t, db, "memories_fts")
	write(
		memento.MemoryWrite{Message: msgs[3], Run: run(3), Base: map[string]memento.MemoryBase{"food": {ID: "food1", Value: "loves quince jam"}},
			Close:  []memento.Supersession{{ID: "food1", Attribute: "food"}},
			Insert: []memento.Memory{mem("food2", "food", memento.ModeSemantic, "loves medlar jam", 3)}},
		memento.MemoryWrite{Message: msgs[4], Run: run(4), Base: map[string]memento.MemoryBase{"food": {ID: "food2", Value: "loves medlar jam"}},
			Close:  []memento.Supersession{{ID: "food2", Attribute: "food"}},
			Insert: []memento.Memory{mem("food3", "food", memento.ModeSemantic, "loves rowan jam", 4)}},
	)
	if got := segments(t, db, "memories_fts") - before; got != 1 {
		t.Errorf("a batch that closes a memory it inserted added %d segments to the index, want 1", got)
	}
	if diff := cmp.Diff([]string{"food3"}, found("jam")); diff != "" {
		t.Errorf("search after a batch that closes its own memory (-want +got):\n%s", diff)
	}
	if got := found("medlar"); len(got) != 0 {
		t.Errorf("the memory the batch inserted and closed is still found: %v", got)
	}

	// An edit keeps the current row (indexed by its trigger) and inserts
	// a closed copy, which is not indexed.
	if _, err := db.UpdateMemory(ctx, s, "food3", memento.MemoryUpdate{Value: "loves sloe jam"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"food3"}, found("jam")); diff != "" {
		t.Errorf("search after an edit (-want +got):\n%s", diff)
	}
	if got := found("rowan"); len(got) != 0 {
		t.Errorf("the edited value is still found: %v", got)
	}

	// An import indexes the current memories it brings and not the others.
	doc, err := db.ExportUser(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	other := memento.Scope{Tenant: memento.DefaultTenant, User: "bob"}
	if _, err := db.ImportUser(ctx, other, doc); err != nil {
		t.Fatal(err)
	}
	cs, err := db.MemoryCandidates(ctx, other, memento.CandidateQuery{Query: "jam", Keyword: 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].ID != "food3" || cs[0].Text != "loves sloe jam" {
		t.Errorf("search of the imported user for jam: %+v, want food3 alone", cs)
	}
}
