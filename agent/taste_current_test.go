package agent_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/recall"
	"github.com/memento-ai/memento/sqlite"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// indexedMemories lists memories from the store and hands the taste its
// current ones from a recall index, as the engine's agent reads them; it
// counts the listings.
type indexedMemories struct {
	*sqlite.DB
	index    *recall.Index
	listings *atomic.Int64
}

func (m indexedMemories) Memories(ctx context.Context, s memento.Scope, f memento.MemoryFilter) ([]memento.Memory, error) {
	m.listings.Add(1)
	return m.DB.Memories(ctx, s, f)
}

func (m indexedMemories) CurrentMemories(ctx context.Context, s memento.Scope, attributes []string, limit int) ([]memento.Memory, error) {
	return m.index.CurrentMemories(ctx, s, attributes, limit)
}

// TestTasteFromCurrentMemories checks that an agent whose memories hand
// over the current ones itself (agent.CurrentMemories) ranks as one that
// lists them from the store, reasons and cited memories included, and
// lists none: likes and dislikes of one message decide as the store's
// order has them (the semantic value first), a newer statement decides
// over an older one, and an edit and a deletion are seen at the next
// turn.
func TestTasteFromCurrentMemories(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	cat := testCatalog()
	rules := offline.New(offline.Options{People: cat, Genres: cat.Genres()})
	s := memento.Scope{Tenant: tenant, User: "u1"}
	day := func(d int) time.Time { return time.Date(2025, 1, d, 0, 0, 0, 0, time.UTC) }
	res, err := db.AppendMessages(ctx, s, "said", []memento.Message{
		{ID: "m1", Role: memento.RoleUser, Text: "I love horror but hate horror too", At: day(1)},
		{ID: "m2", Role: memento.RoleUser, Text: "Tom Hanks is the best", At: day(2)},
		{ID: "m3", Role: memento.RoleUser, Text: "comedies bore me", At: day(3)},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	write := func(m memento.Message, mems ...memento.Memory) {
		t.Helper()
		if _, err := db.WriteMemories(ctx, s, memento.MemoryWrite{Message: m, Insert: mems, Run: memento.MemoryRun{Message: m.ID, Outcome: memento.RunStored}}); err != nil {
			t.Fatal(err)
		}
	}
	// One message, one time: a semantic like and an episodic dislike of
	// the same genre. The store lists the semantic value first.
	write(res.Messages[0],
		memento.Memory{ID: "dislike-horror", Attribute: "DISLIKES", Mode: memento.ModeEpisodic, Value: "hates horror films", ValidFrom: day(1), Sources: []string{"m1"}},
		memento.Memory{ID: "like-horror", Attribute: "GENRE", Mode: memento.ModeSemantic, Value: "loves horror films", ValidFrom: day(1), Sources: []string{"m1"}},
		memento.Memory{ID: "city", Attribute: "LOCATION", Mode: memento.ModeEpisodic, Value: "lives in Paris", ValidFrom: day(1), Sources: []string{"m1"}})
	write(res.Messages[1], memento.Memory{ID: "hanks", Attribute: "LIKES", Mode: memento.ModeEpisodic, Value: "loves Tom Hanks movies", ValidFrom: day(2), Sources: []string{"m2"}})
	write(res.Messages[2], memento.Memory{ID: "no-comedy", Attribute: "AVOID", Mode: memento.ModeEpisodic, Value: "can't stand comedies", ValidFrom: day(3), Sources: []string{"m3"}})

	var listings atomic.Int64
	listed := &agent.Agent{Catalog: cat, Threads: db, Model: rules, Rules: rules, Attributes: db}
	current := &agent.Agent{Catalog: cat, Threads: db, Model: rules, Rules: rules,
		Attributes: indexedMemories{DB: db, index: recall.NewIndex(db, 0), listings: &listings}}
	ask := func(a *agent.Agent, thread, msg string) *agent.Response {
		t.Helper()
		r, err := a.Turn(ctx, tenant, agent.Request{User: "u1", Thread: thread, Message: msg})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	compare := func(label string) {
		t.Helper()
		for i, msg := range []string{"Recommend 3 movies", "Recommend 5 titles", "Something with Tom Hanks"} {
			want := ask(listed, fmt.Sprintf("%s-listed-%d", label, i), msg)
			got := ask(current, fmt.Sprintf("%s-current-%d", label, i), msg)
			if len(got.Titles) != len(want.Titles) {
				t.Fatalf("%s, %q: %d titles from the current memories, %d from the listing", label, msg, len(got.Titles), len(want.Titles))
			}
			for j := range got.Titles {
				g, w := got.Titles[j], want.Titles[j]
				if g.ID != w.ID || !slices.Equal(g.Why, w.Why) {
					t.Fatalf("%s, %q, title %d: %s %q from the current memories, %s %q from the listing", label, msg, j, g.ID, g.Why, w.ID, w.Why)
				}
			}
			cited := func(r *agent.Response) []string {
				var ids []string
				for _, it := range r.Memory.Used {
					ids = append(ids, it.Kind+":"+it.ID)
				}
				return ids
			}
			if !slices.Equal(cited(got), cited(want)) {
				t.Fatalf("%s, %q: cites %v from the current memories, %v from the listing", label, msg, cited(got), cited(want))
			}
		}
	}
	compare("written")
	r := ask(current, "check", "Recommend 3 movies")
	if !slices.ContainsFunc(r.Titles, func(x agent.TitleResult) bool { return slices.Contains(x.Genres, "Horror") }) {
		t.Errorf("the semantic like of horror, of the same time as the dislike, should decide: %+v", r.Titles)
	}
	// A newer dislike of horror decides; an edit turns the comedies back
	// on; a deletion drops Tom Hanks.
	more, err := db.AppendMessages(ctx, s, "said", []memento.Message{{ID: "m4", Role: memento.RoleUser, Text: "horror is not for me", At: day(4)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	write(more.Messages[0], memento.Memory{ID: "dislike-horror-2", Attribute: "DISLIKES", Mode: memento.ModeEpisodic, Value: "can't stand horror films", ValidFrom: day(4), Sources: []string{"m4"}})
	if _, err := db.UpdateMemory(ctx, s, "no-comedy", memento.MemoryUpdate{Value: "goes to the cinema on Fridays"}); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteMemory(ctx, s, "hanks"); err != nil {
		t.Fatal(err)
	}
	compare("changed")
	r = ask(current, "check-2", "Recommend 3 movies")
	if slices.ContainsFunc(r.Titles, func(x agent.TitleResult) bool { return slices.Contains(x.Genres, "Horror") }) {
		t.Errorf("after a newer dislike of horror, horror titles were shown: %+v", r.Titles)
	}
	if n := listings.Load(); n != 0 {
		t.Errorf("the agent listed the user's memories %d times; it should read the current ones only", n)
	}
}
