package postgres_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/postgres"
)

// TestPeriodsWrittenAndBackfilled checks that every write stores what a
// message's text and a memory's value tell of time, that rows stored
// before migration 0007 (NULL) are read with the same periods resolved on
// the fly, and that a store opened on such rows back-fills them.
func TestPeriodsWrittenAndBackfilled(t *testing.T) {
	db, schema := openSchema(t, postgres.Options{})
	ctx := context.Background()
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	said := time.Date(2023, 6, 9, 14, 0, 0, 0, time.UTC)
	res, err := db.AppendMessages(ctx, s, "t1", []memento.Message{
		{ID: "m1", Role: memento.RoleUser, Text: "I went to a support group yesterday", At: said},
		{ID: "m2", Role: memento.RoleUser, Text: "support groups help", At: said.Add(time.Second)},
		{ID: "m3", Role: memento.RoleUser, Text: "I have been going to support groups lately", At: said.Add(2 * time.Second)},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m1 := res.Messages[0]
	if _, err := db.WriteMemories(ctx, s, memento.MemoryWrite{Message: m1, Insert: []memento.Memory{{
		ID: "e1", Kind: memento.MemoryEpisode, Attribute: "EVENT", Mode: memento.ModeEpisodic,
		Value: "went to a support group last week", ValidFrom: m1.At, Sources: []string{"m1"}}},
		Run: memento.MemoryRun{Message: "m1", Outcome: memento.RunStored}}); err != nil {
		t.Fatal(err)
	}
	stored := func(db *postgres.DB) map[string]*string {
		t.Helper()
		rows, err := db.Pool().Query(ctx, `SELECT id, periods FROM messages UNION ALL SELECT id, periods FROM memories`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]*string{}
		for rows.Next() {
			var id string
			var p *string
			if err := rows.Scan(&id, &p); err != nil {
				t.Fatal(err)
			}
			out[id] = p
		}
		return out
	}
	day := func(m time.Month, d int) time.Time { return time.Date(2023, m, d, 0, 0, 0, 0, time.UTC) }
	want := map[string]string{
		"m1": memento.FormatPeriods([]memento.Period{{From: day(6, 8), To: day(6, 9)}}, true),
		"m2": "",
		"m3": "[]",
		"e1": memento.FormatPeriods([]memento.Period{{From: day(5, 28), To: day(6, 6)}}, true),
	}
	check := func(label string, db *postgres.DB) {
		t.Helper()
		got := map[string]string{}
		for id, p := range stored(db) {
			if p == nil {
				t.Fatalf("%s: %s has no periods", label, id)
			}
			got[id] = *p
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%s: stored periods (-want +got):\n%s", label, diff)
		}
	}
	check("written", db)
	candidates := func() []memento.RecallCandidate {
		t.Helper()
		msgs, err := db.MessageCandidates(ctx, s, memento.CandidateQuery{Query: "support group", Keyword: 10})
		if err != nil {
			t.Fatal(err)
		}
		mems, err := db.MemoryCandidates(ctx, s, memento.CandidateQuery{Query: "support group", Keyword: 10})
		if err != nil {
			t.Fatal(err)
		}
		return append(msgs, mems...)
	}
	before := candidates()
	unresolve := func() {
		t.Helper()
		for _, table := range []string{"messages", "memories"} {
			if _, err := db.Pool().Exec(ctx, `UPDATE `+table+` SET periods = NULL`); err != nil {
				t.Fatal(err)
			}
		}
	}
	unresolve()
	if diff := cmp.Diff(before, candidates()); diff != "" {
		t.Errorf("candidates of rows without stored periods differ (-stored +resolved on read):\n%s", diff)
	}
	if n, err := db.BackfillPeriods(ctx); err != nil || n != 4 {
		t.Fatalf("BackfillPeriods = %d, %v; want 4 rows", n, err)
	}
	check("back-filled", db)

	// A second process opening the schema back-fills what it finds.
	unresolve()
	b, err := postgres.Open(ctx, testURL(t), postgres.Options{Schema: schema, MaxConns: 2, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		done := true
		for _, p := range stored(db) {
			done = done && p != nil
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("opening the store did not back-fill the rows without periods")
		}
		time.Sleep(20 * time.Millisecond)
	}
	check("back-filled at open", db)
}
