package recall_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/recall"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// TestRecollectFollowsMemoryAliases checks the expansion from the user's
// memories: a question names the dog, the turn that tells what happened
// names only "Rex", and the memory "has a dog named Rex" links the two.
// Neither the question's words nor the second hop (the first hits name no
// Rex) find the turn without it.
func TestRecollectFollowsMemoryAliases(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	day := time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)
	var msgs []memento.Message
	add := func(thread, id, text string) {
		msgs = append(msgs, memento.Message{ID: id, Thread: thread, Role: memento.RoleUser, Text: text, At: day.Add(time.Duration(len(msgs)) * time.Hour)})
	}
	add("s1", "named", "We finally picked a name for the puppy.")
	add("s2", "park", "The dog park was closed today.")
	add("s3", "shoes", "Rex chewed my new running shoes again.")
	for i := range 12 {
		add("s4", fmt.Sprintf("x%d", i), fmt.Sprintf("the weather is nice again, day %d of sun.", i))
	}
	for _, m := range msgs {
		if _, err := db.AppendMessages(ctx, s, m.Thread, []memento.Message{m}, nil); err != nil {
			t.Fatal(err)
		}
	}
	src := msgs[0]
	if _, err := db.WriteMemories(ctx, s, memento.MemoryWrite{Message: src, Insert: []memento.Memory{{
		ID: "pet", Kind: memento.MemoryAttribute, Attribute: "FAMILY", Mode: memento.ModeSemantic,
		Value: "has a dog named Rex; walks every morning", ValidFrom: src.At, Sources: []string{src.ID}}},
		Run: memento.MemoryRun{Message: src.ID, Outcome: memento.RunStored}}); err != nil {
		t.Fatal(err)
	}
	idx := recall.NewIndex(db, 0)
	ask := func(w recall.Weights) []string {
		t.Helper()
		r := &recall.Messages{Store: idx, Weights: w, Neighbors: -1}
		items, err := r.Recall(ctx, memento.RecallQuery{Scope: s, Query: "What did my dog ruin?", K: 10, Now: day.AddDate(0, 1, 0)})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, it := range items {
			ids = append(ids, it.ID)
			if it.ID == "shoes" && it.Scores["recollect"] <= 0 {
				t.Errorf("the turn about Rex came back without a recollect part: %v", it.Scores)
			}
		}
		return ids
	}
	off := recall.DefaultWeights
	off.Recollect = 0
	if got := ask(off); slices.Contains(got, "shoes") {
		t.Errorf("without the expansion from memories %v holds the turn that names only Rex", got)
	}
	if got := ask(recall.DefaultWeights); !slices.Contains(got, "shoes") {
		t.Errorf("with the expansion from memories %v lacks the turn about Rex", got)
	}
}
