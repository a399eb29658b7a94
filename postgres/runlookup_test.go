package postgres_test

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/graph"
	"github.com/memento-ai/memento/pipeline"
	"github.com/memento-ai/memento/postgres"
)

var _ pipeline.RunLookup = (*postgres.DB)(nil)

// TestRunsAndCheckpoints checks the batch's one read of which messages
// have runs recorded and which runs have checkpoints: only the user's.
func TestRunsAndCheckpoints(t *testing.T) {
	ctx := context.Background()
	db, _ := openSchema(t, postgres.Options{})
	ann := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	bob := memento.Scope{Tenant: memento.DefaultTenant, User: "bob"}
	for _, s := range []memento.Scope{ann, bob} {
		res, err := db.AppendMessages(ctx, s, "t1", []memento.Message{{ID: "m1", Role: memento.RoleUser, Text: "I love westerns"},
			{ID: "m2", Role: memento.RoleUser, Text: "and noir"}, {ID: "m3", Role: memento.RoleUser, Text: "not musicals"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s == bob {
			// Bob's m2 is processed and his m3 has a checkpoint: none of
			// it is ann's.
			m := res.Messages[1]
			if _, err := db.WriteMemories(ctx, s, memento.MemoryWrite{Message: m, Run: memento.MemoryRun{Message: m.ID, Outcome: memento.RunStored}}); err != nil {
				t.Fatal(err)
			}
			if err := db.Checkpointer(s).Save(ctx, "remember/m3", graph.Checkpoint{Graph: "remember", Next: "extract", State: []byte(`{}`)}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		m := res.Messages[0]
		if _, err := db.WriteMemories(ctx, s, memento.MemoryWrite{Message: m, Run: memento.MemoryRun{Message: m.ID, Outcome: memento.RunStored}}); err != nil {
			t.Fatal(err)
		}
		if err := db.Checkpointer(s).Save(ctx, "remember/m2", graph.Checkpoint{Graph: "remember", Next: "extract", State: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	recorded, saved, err := db.RunsAndCheckpoints(ctx, ann, []string{"m1", "m2", "m3", "gone"}, []string{"remember/m1", "remember/m2", "remember/m3"})
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(recorded)); !slices.Equal(got, []string{"m1"}) {
		t.Errorf("recorded runs = %v, want [m1]", got)
	}
	if got := slices.Sorted(maps.Keys(saved)); !slices.Equal(got, []string{"remember/m2"}) {
		t.Errorf("saved checkpoints = %v, want [remember/m2]", got)
	}
	if _, _, err := db.RunsAndCheckpoints(ctx, memento.Scope{User: ""}, nil, nil); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("RunsAndCheckpoints without a user: %v, want EINVALID", err)
	}
}
