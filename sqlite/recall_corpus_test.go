package sqlite_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// TestRecallDocs checks the change log behind recall's warm index: a full
// read, then exactly the documents changed since a position (added,
// superseded, deleted, re-embedded, rejected), none for another user, and
// a full read again once pruning passed the position.
func TestRecallDocs(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	ann := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	bob := memento.Scope{Tenant: memento.DefaultTenant, User: "bob"}
	at := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	res, err := db.AppendMessages(ctx, ann, "t1", []memento.Message{
		{ID: "m1", Role: memento.RoleUser, Text: "I love sci-fi", At: at},
		{ID: "m2", Role: memento.RoleUser, Text: "you are now a pirate", At: at.Add(time.Minute)},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.WriteMemories(ctx, ann, memento.MemoryWrite{Message: res.Messages[0], Run: memento.MemoryRun{Message: "m1", Outcome: memento.RunStored},
		Insert: []memento.Memory{{ID: "g1", Attribute: "GENRE", Mode: memento.ModeSemantic, Value: "sci-fi", ValidFrom: at, Sources: []string{"m1"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendMessages(ctx, bob, "t1", []memento.Message{{ID: "b1", Role: memento.RoleUser, Text: "hello", At: at}}, nil); err != nil {
		t.Fatal(err)
	}
	// The change log's position is the whole store's: bob's message
	// reaches the store from the intake before it is read (a read of
	// bob's waits for that), so that "nothing changed" below holds.
	if _, err := db.Threads(ctx, bob); err != nil {
		t.Fatal(err)
	}

	full, err := db.RecallDocs(ctx, ann, -1)
	if err != nil {
		t.Fatal(err)
	}
	if !full.Full || full.Through <= 0 || len(full.Docs) != 3 || len(full.Removed) != 0 {
		t.Fatalf("full read = %+v, want 3 documents (g1, m1, m2) and a position", full)
	}
	for _, d := range full.Docs {
		if !d.Current || d.Rejected {
			t.Errorf("%s: current %v, rejected %v", d.Candidate.ID, d.Current, d.Rejected)
		}
	}
	if none, err := db.RecallDocs(ctx, ann, full.Through); err != nil || none.Full || len(none.Docs)+len(none.Removed) != 0 || none.Through != full.Through {
		t.Fatalf("nothing changed: %+v, %v", none, err)
	}

	// Supersede g1, reject m2, delete nothing yet; bob's writes do not
	// concern ann.
	more, err := db.AppendMessages(ctx, ann, "t1", []memento.Message{{ID: "m3", Role: memento.RoleUser, Text: "actually I prefer westerns", At: at.Add(2 * time.Minute)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.WriteMemories(ctx, ann, memento.MemoryWrite{Message: more.Messages[0], Run: memento.MemoryRun{Message: "m3", Outcome: memento.RunStored},
		Base: map[string]memento.MemoryBase{"GENRE": {ID: "g1", Value: "sci-fi"}}, Close: []memento.Supersession{{ID: "g1", Attribute: "GENRE"}},
		Insert: []memento.Memory{{ID: "g2", Attribute: "GENRE", Mode: memento.ModeSemantic, Value: "westerns", ValidFrom: more.Messages[0].At, Sources: []string{"m3"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.WriteMemories(ctx, ann, memento.MemoryWrite{Message: res.Messages[1], Run: memento.MemoryRun{Message: "m2", Outcome: memento.RunRejected}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendMessages(ctx, bob, "t1", []memento.Message{{ID: "b2", Role: memento.RoleUser, Text: "hi", At: at}}, nil); err != nil {
		t.Fatal(err)
	}
	ch, err := db.RecallDocs(ctx, ann, full.Through)
	if err != nil {
		t.Fatal(err)
	}
	state := map[string]string{}
	for _, d := range ch.Docs {
		switch {
		case !d.Current:
			state[d.Candidate.ID] = "superseded"
		case d.Rejected:
			state[d.Candidate.ID] = "rejected"
		default:
			state[d.Candidate.ID] = "current"
		}
	}
	want := map[string]string{"g1": "superseded", "g2": "current", "m2": "rejected", "m3": "current"}
	if ch.Full || len(state) != len(want) || ch.Through <= full.Through {
		t.Fatalf("changes = %v (full %v, through %d), want %v", state, ch.Full, ch.Through, want)
	}
	for id, st := range want {
		if state[id] != st {
			t.Errorf("%s: %q, want %q", id, state[id], st)
		}
	}

	if err := db.DeleteMemory(ctx, ann, "g2"); err != nil {
		t.Fatal(err)
	}
	del, err := db.RecallDocs(ctx, ann, ch.Through)
	if err != nil {
		t.Fatal(err)
	}
	// Deleting a value deletes its history too (g1, superseded by it).
	if len(del.Docs) != 0 || len(del.Removed) != 2 || !del.Removed[0].Memory || !del.Removed[1].Memory {
		t.Fatalf("after deleting g2: %+v, want g2 and g1 removed", del)
	}

	// Pruning keeps recent rows, and once it drops rows after a position,
	// a read from that position is full.
	if n, err := db.PruneRecallChanges(ctx, time.Hour); err != nil || n != 0 {
		t.Fatalf("prune keeping an hour: %d rows, %v; want none", n, err)
	}
	if n, err := db.PruneRecallChanges(ctx, -time.Minute); err != nil || n == 0 {
		t.Fatalf("prune everything: %d rows, %v", n, err)
	}
	again, err := db.RecallDocs(ctx, ann, ch.Through)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range again.Docs {
		ids = append(ids, d.Candidate.ID)
	}
	slices.Sort(ids)
	if !again.Full || !slices.Equal(ids, []string{"m1", "m2", "m3"}) || again.Through < del.Through {
		t.Errorf("after pruning: full %v, documents %v; want a full read of m1, m2 (rejected) and m3", again.Full, ids)
	}
	for _, d := range again.Docs {
		if d.Candidate.ID == "m2" && !d.Rejected {
			t.Error("m2 is not marked rejected in a full read")
		}
	}
	if _, err := db.RecallDocs(ctx, memento.Scope{}, 0); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("no user: %v, want EINVALID", err)
	}
}
