package recall_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

func BenchmarkParts(b *testing.B) {
	opts := sqlitetest.Options()
	opts.Synchronous = "NORMAL"
	db := sqlitetest.OpenWith(b, opts)
	emb := offline.NewEmbedder(256)
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	seedUser(b, db, s, 10000, 2000, emb)
	ctx := context.Background()
	parts := map[string]memento.CandidateQuery{
		"mem-kw":      {Query: "when did she go to the museum", Keyword: 100},
		"mem-recent":  {Recent: 100},
		"msg-kw":      {Query: "when did she go to the museum", Keyword: 100},
		"msg-kw-nb":   {Query: "when did she go to the museum", Keyword: 100, Neighbors: 2},
		"msg-recent":  {Recent: 100},
		"mem-kw-date": {Query: "museum", Keyword: 100, From: time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2024, 7, 1, 0, 0, 0, 0, time.UTC)},
	}
	for name, q := range parts {
		b.Run(name, func(b *testing.B) {
			n := 0
			for b.Loop() {
				var c []memento.RecallCandidate
				var err error
				if name[:3] == "mem" {
					c, err = db.MemoryCandidates(ctx, s, q)
				} else {
					c, err = db.MessageCandidates(ctx, s, q)
				}
				if err != nil {
					b.Fatal(err)
				}
				n = len(c)
			}
			b.ReportMetric(float64(n), "cands")
		})
	}
	_ = fmt.Sprint
}
