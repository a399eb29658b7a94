package sqlite_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

func TestSearchMessagesRanksByBM25(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{User: "ann"}
	res := appendTexts(t, db, s, "t1",
		"I watched a documentary about whales yesterday",                         // 0: one of the words
		"Spy thrillers are my favourite, especially spy thrillers set in Berlin", // 1: both words, repeated
		"Let's talk about cooking",                                               // 2: none
		"Maybe a spy movie tonight",                                              // 3: one word
	)
	appendTexts(t, db, s, "t2", "Thriller night with friends") // 4: stemmed match in another thread
	id := func(i int) string { return res.Messages[i].ID }

	hits, err := db.SearchMessages(ctx, s, "Spy THRILLERS?", 10)
	if err != nil {
		t.Fatalf("SearchMessages: %v", err)
	}
	var got []string
	for i, h := range hits {
		got = append(got, h.Message.Text)
		if h.Score <= 0 {
			t.Errorf("hit %d has score %v, want > 0", i, h.Score)
		}
		if i > 0 && h.Score > hits[i-1].Score {
			t.Errorf("hit %d scores %v above hit %d's %v", i, h.Score, i-1, hits[i-1].Score)
		}
	}
	if len(hits) != 3 || hits[0].Message.ID != id(1) {
		t.Fatalf("hits = %q, want 3 with the message about spy thrillers first", got)
	}
	if hits[0].Message.Thread != "t1" || hits[0].Message.Seq != 2 {
		t.Errorf("top hit = %+v, want the stored message", hits[0].Message)
	}
	threads := map[string]bool{}
	for _, h := range hits {
		threads[h.Message.Thread] = true
	}
	if !threads["t2"] {
		t.Errorf("the stemmed match in t2 was not found: %q", got)
	}

	top, err := db.SearchMessages(ctx, s, "spy thrillers", 1)
	if err != nil {
		t.Fatalf("SearchMessages k=1: %v", err)
	}
	if len(top) != 1 || top[0].Message.ID != id(1) {
		t.Errorf("k=1 gave %+v", top)
	}

	for _, q := range []string{"", "   ", "!!", "zebra"} {
		hits, err := db.SearchMessages(ctx, s, q, 10)
		if err != nil {
			t.Errorf("SearchMessages(%q): %v", q, err)
		}
		if len(hits) != 0 {
			t.Errorf("SearchMessages(%q) = %+v, want none", q, hits)
		}
	}

	// FTS syntax in the query is plain text, not an error.
	hits, err = db.SearchMessages(ctx, s, `cooking" OR NEAR(`, 10)
	if err != nil {
		t.Fatalf("SearchMessages with FTS syntax: %v", err)
	}
	if len(hits) != 1 || hits[0].Message.ID != id(2) {
		t.Errorf("hits = %+v, want the cooking message", hits)
	}

	_, err = db.SearchMessages(ctx, s, "spy", -1)
	wantCode(t, err, memento.EINVALID)
}

func TestSearchMessagesSeesOnlyLiveMessages(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	ann, bob := memento.Scope{User: "ann"}, memento.Scope{User: "bob"}
	appendTexts(t, db, ann, "t1", "westerns with horses")
	appendTexts(t, db, bob, "t1", "westerns in space")

	if err := db.DeleteUser(ctx, ann); err != nil {
		t.Fatalf("DeleteUser: %v", err)
	}
	hits, err := db.SearchMessages(ctx, ann, "westerns", 10)
	if err != nil || len(hits) != 0 {
		t.Errorf("deleted user's search = %+v, %v; want none", hits, err)
	}
	hits, err = db.SearchMessages(ctx, bob, "westerns", 10)
	if err != nil {
		t.Fatalf("SearchMessages: %v", err)
	}
	var texts []string
	for _, h := range hits {
		texts = append(texts, h.Message.Text)
	}
	if diff := cmp.Diff([]string{"westerns in space"}, texts); diff != "" {
		t.Errorf("bob's hits (-want +got):\n%s", diff)
	}
}
