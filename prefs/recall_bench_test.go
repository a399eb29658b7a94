package prefs_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/prefs"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// BenchmarkRecallPreferences measures a context read's recall of the
// preference memory for a user of 200 preferences whose preferences do
// not change between reads, the query embedded by the caller (as the
// assembler does).
func BenchmarkRecallPreferences(b *testing.B) {
	ctx := context.Background()
	db := sqlitetest.Open(b)
	emb := offline.NewEmbedder(0)
	svc := &prefs.Service{Store: db, Messages: db, Embedder: emb, Clock: &clock{t: day0}}
	s := memento.Scope{User: "ann"}
	ps := make([]memento.Preference, 200)
	texts := make([]string, len(ps))
	for i := range ps {
		texts[i] = fmt.Sprintf("concept %d of films about %s", i, []string{"heists", "horror", "westerns", "musicals"}[i%4])
	}
	vs, err := emb.Embed(ctx, texts)
	if err != nil {
		b.Fatal(err)
	}
	for i := range ps {
		ps[i] = memento.Preference{ID: fmt.Sprint("p", i), Concept: texts[i], Weight: 0.8, Kind: memento.KindTaste, Evidence: 1,
			Sources: []string{fmt.Sprint("m", i)}, FirstSeen: day0, LastSeen: day0, Embedder: emb.ID(), Vector: vs[i]}
	}
	if err := db.RestorePreferences(ctx, s, ps, nil); err != nil {
		b.Fatal(err)
	}
	qv, err := emb.Embed(ctx, []string{"a heist film for tonight"})
	if err != nil {
		b.Fatal(err)
	}
	r := &prefs.Recaller{Prefs: svc}
	q := memento.RecallQuery{Scope: s, Query: "a heist film for tonight", Vector: qv[0], Embedder: emb.ID(), K: 10, Now: day0}
	b.ReportAllocs()
	for b.Loop() {
		items, err := r.Recall(ctx, q)
		if err != nil || len(items) == 0 {
			b.Fatalf("Recall = %v, %v", items, err)
		}
	}
}
