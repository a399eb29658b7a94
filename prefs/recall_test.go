package prefs_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/prefs"
)

func TestRecaller(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: day0}
	svc, _ := newService(t, clk)
	s := memento.Scope{User: "ann"}
	for i, text := range []string{"I love heist films.", "I like crime thrillers.", "I don't like crime dramas.",
		"I can't stand horror movies.", "I live in Lisbon.", "I don't mind westerns."} {
		if _, err := svc.LearnMessage(ctx, s, memento.Message{ID: "m" + string(rune('1'+i)), Role: memento.RoleUser, Text: text, At: day0}); err != nil {
			t.Fatalf("LearnMessage: %v", err)
		}
	}
	if err := svc.Recluster(ctx, s); err != nil {
		t.Fatalf("Recluster: %v", err)
	}
	r := &prefs.Recaller{Prefs: svc}
	recall := func(query string, k int) []memento.RecallItem {
		t.Helper()
		items, err := r.Recall(ctx, memento.RecallQuery{Scope: s, Query: query, K: k})
		if err != nil {
			t.Fatalf("Recall(%q): %v", query, err)
		}
		return items
	}
	texts := func(items []memento.RecallItem) []string {
		var out []string
		for _, it := range items {
			out = append(out, it.Kind+": "+it.Text)
		}
		return out
	}

	items := recall("a heist movie for tonight", 10)
	got := texts(items)
	if len(items) == 0 || items[0].Text != "strongly likes heist" || items[0].Kind != memento.RecallPreference {
		t.Fatalf("heist query: %q, want \"strongly likes heist\" first", got)
	}
	if items[0].Scores["similarity"] <= 0 || items[0].Scores["weight"] != 1 || len(items[0].Sources) != 1 || items[0].At == nil {
		t.Errorf("heist item = %+v", items[0])
	}
	for _, it := range items {
		if strings.Contains(it.Text, "horror") || strings.Contains(it.Text, "lisbon") || strings.Contains(it.Text, "westerns") {
			t.Errorf("heist query recalled the unrelated %q", it.Text)
		}
	}
	hasCluster := false
	for _, it := range items {
		if it.Kind == memento.RecallCluster {
			hasCluster = true
			if it.Text != "[mixed, confidence 0.50] prefers heist and crime thrillers; dislikes crime dramas" || len(it.Sources) != 3 {
				t.Errorf("cluster item = %+v", it)
			}
		}
	}
	if !hasCluster {
		t.Errorf("heist query: %q, want the crime cluster", got)
	}

	items = recall("anything scary?", 10)
	if len(items) != 1 || items[0].Text != "strongly dislikes horror" {
		t.Errorf("scary query: %q, want the horror dislike only", texts(items))
	}
	items = recall("", 10)
	if len(items) != 7 { // six memories and one cluster
		t.Errorf("no query: %q, want every memory and the cluster", texts(items))
	}
	if items := recall("", 2); len(items) != 2 || items[0].Score < items[1].Score {
		t.Errorf("k=2: %+v", items)
	}
	if _, err := r.Recall(ctx, memento.RecallQuery{Scope: s, K: -1}); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("k=-1: %v, want EINVALID", err)
	}
	if _, err := r.Recall(ctx, memento.RecallQuery{K: 3}); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("no user: %v, want EINVALID", err)
	}
	// A query embedded by the caller is not embedded again.
	vs, _ := svc.Embedder.Embed(ctx, []string{"heist"})
	items, err := r.Recall(ctx, memento.RecallQuery{Scope: s, Query: "(embedded)", K: 1, Vector: vs[0], Embedder: svc.Embedder.ID()})
	if err != nil || len(items) != 1 || items[0].Text != "strongly likes heist" {
		t.Errorf("recall by vector: %q, %v", texts(items), err)
	}
	// Faded memories are not recalled, as of the query's time or the
	// clock's.
	items, _ = r.Recall(ctx, memento.RecallQuery{Scope: s, K: 10, Now: day0.Add(2 * 365 * 24 * time.Hour)})
	if len(items) != 1 || items[0].Text != "lives in lisbon" {
		t.Errorf("two years after (Now): %q, want the fact only", texts(items))
	}
	clk.Set(day0.Add(2 * 365 * 24 * time.Hour))
	items = recall("", 10)
	if len(items) != 1 || items[0].Text != "lives in lisbon" {
		t.Errorf("two years later: %q, want the fact only", texts(items))
	}
	if items := recall("x", 0); len(items) > prefs.DefaultRecallK {
		t.Errorf("k=0 gave %d items", len(items))
	}
}
