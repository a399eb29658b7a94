package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
)

// storedPeriods returns the periods column of every message and memory,
// by id, with nil for NULL.
func storedPeriods(t *testing.T, db *DB) map[string]*string {
	t.Helper()
	rows, err := db.write.QueryContext(context.Background(), `SELECT id, periods FROM messages UNION ALL SELECT id, periods FROM memories`)
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

// TestPeriodsWrittenAndBackfilled checks that every write stores what a
// message's text and a memory's value tell of time, resolved against the
// row's own time; that rows stored before migration 0013 (NULL) are read
// with the same periods resolved on the fly; and that reopening the store
// back-fills them.
func TestPeriodsWrittenAndBackfilled(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "p.db")
	db, err := Open(ctx, path, Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	said := time.Date(2023, 6, 9, 14, 0, 0, 0, time.UTC) // a Friday
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
	day := func(m time.Month, d int) time.Time { return time.Date(2023, m, d, 0, 0, 0, 0, time.UTC) }
	want := map[string]string{
		"m1": memento.FormatPeriods([]memento.Period{{From: day(6, 8), To: day(6, 9)}}, true),
		"m2": "",
		"m3": "[]",
		// Monday 29 May to Sunday 4 June, widened by a day.
		"e1": memento.FormatPeriods([]memento.Period{{From: day(5, 28), To: day(6, 6)}}, true),
	}
	got := map[string]string{}
	for id, p := range storedPeriods(t, db) {
		if p == nil {
			t.Fatalf("%s was written without its periods", id)
		}
		got[id] = *p
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("stored periods (-want +got):\n%s", diff)
	}
	candidates := func(db *DB) []memento.RecallCandidate {
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
	before := candidates(db)
	if len(before) != 4 {
		t.Fatalf("%d candidates, want 4", len(before))
	}

	// The rows as an older release left them.
	for _, table := range []string{"messages", "memories"} {
		if _, err := db.write.ExecContext(ctx, `UPDATE `+table+` SET periods = NULL`); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(before, candidates(db)); diff != "" {
		t.Errorf("candidates of rows without stored periods differ (-stored +resolved on read):\n%s", diff)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(ctx, path, Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.backfill == nil {
		t.Fatal("Open did not start the back-fill of rows without periods")
	}
	<-db.backfill.Done()
	got = map[string]string{}
	for id, p := range storedPeriods(t, db) {
		if p == nil {
			t.Fatalf("%s was not back-filled", id)
		}
		got[id] = *p
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("back-filled periods (-want +got):\n%s", diff)
	}
	if n, err := db.BackfillPeriods(ctx); err != nil || n != 0 {
		t.Errorf("BackfillPeriods again = %d, %v; want 0", n, err)
	}
}
