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

// TestSecondHopAndWhen runs the message recaller over the store and its
// index: the turn that names what a first hit is about comes back through
// the second hop though it shares no word with the question, and for a
// question that asks when, the turn that dates the event ranks above the
// ones that only mention it.
func TestSecondHopAndWhen(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	day := time.Date(2023, 6, 9, 14, 0, 0, 0, time.UTC)
	var msgs []memento.Message
	add := func(thread, id, text string) {
		msgs = append(msgs, memento.Message{ID: id, Thread: thread, Role: memento.RoleUser, Text: text, At: day.Add(time.Duration(len(msgs)) * time.Hour)})
	}
	add("s1", "book", "Mel: I finally finished the book you gave me, the one by Amy Ellis Nutt.")
	add("s1", "f1", "Ana: Glad you liked it!")
	add("s1", "f2", "Mel: It was lovely.")
	for i := range 12 {
		add("s2", fmt.Sprintf("x%d", i), fmt.Sprintf("Ana: the weather is nice again, day %d of sun.", i))
	}
	add("s3", "nutt", "Ana: Nutt wrote it after years of interviews with the family.")
	add("s4", "camp1", "Mel: camping is the best thing for the kids")
	add("s4", "camp2", "Mel: we went camping with the kids two weekends ago")
	add("s4", "camp3", "Mel: camping gear is expensive for kids")
	for _, m := range msgs {
		if _, err := db.AppendMessages(ctx, s, m.Thread, []memento.Message{m}, nil); err != nil {
			t.Fatal(err)
		}
	}
	idx := recall.NewIndex(db, 0)
	now := day.Add(30 * 24 * time.Hour)
	ask := func(w recall.Weights, query string, k int) []string {
		t.Helper()
		r := &recall.Messages{Store: idx, Weights: w, Neighbors: -1}
		items, err := r.Recall(ctx, memento.RecallQuery{Scope: s, Query: query, K: k, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, it := range items {
			ids = append(ids, it.ID)
		}
		return ids
	}
	w := recall.DefaultWeights
	off := w
	off.Expand = 0
	if got := ask(off, "Which book did Mel finish?", 20); slices.Contains(got, "nutt") {
		t.Errorf("without the second hop %v holds the turn that shares no word with the question", got)
	}
	if got := ask(w, "Which book did Mel finish?", 20); !slices.Contains(got, "nutt") {
		t.Errorf("with the second hop %v lacks the turn about the book's author", got)
	}
	noWhen := w
	noWhen.When = 0
	if got := ask(noWhen, "When did Mel go camping with the kids?", 3); len(got) > 0 && got[0] == "camp2" {
		t.Errorf("without the when part camp2 is first anyway (%v): the test shows nothing", got)
	}
	if got := ask(w, "When did Mel go camping with the kids?", 3); len(got) == 0 || got[0] != "camp2" {
		t.Errorf("asked when: %v, want camp2 (the turn that dates the trip) first", got)
	}
}
