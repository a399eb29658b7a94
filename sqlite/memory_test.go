package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/graph"
	"github.com/memento-ai/memento/sqlite"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

var t0 = time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)

// appendAt appends one user message with an id and a time.
func appendAt(t *testing.T, db *sqlite.DB, s memento.Scope, thread, id, text string, at time.Time) memento.Message {
	t.Helper()
	res, err := db.AppendMessages(context.Background(), s, thread, []memento.Message{{ID: id, Role: memento.RoleUser, Text: text, At: at}}, nil)
	if err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	return res.Messages[0]
}

// writeRun stores a run over msg with the given base, closes and inserts.
func writeRun(t *testing.T, db *sqlite.DB, s memento.Scope, msg memento.Message, base map[string]memento.MemoryBase, closes []memento.Supersession, insert ...memento.Memory) bool {
	t.Helper()
	ok, err := db.WriteMemories(context.Background(), s, memento.MemoryWrite{
		Message: msg, Base: base, Close: closes, Insert: insert,
		Run: memento.MemoryRun{Message: msg.ID, Outcome: memento.RunStored},
	})
	if err != nil {
		t.Fatalf("WriteMemories(%s): %v", msg.ID, err)
	}
	return ok
}

func semantic(id, attr, value string, msg memento.Message, sources ...string) memento.Memory {
	return memento.Memory{ID: id, Kind: memento.MemoryAttribute, Attribute: attr, Mode: memento.ModeSemantic, Value: value,
		ValidFrom: msg.At, Sources: sources, RunID: msg.ID}
}

func TestWriteMemoriesSupersedesAndKeepsHistory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{User: "ann"}
	m1 := appendAt(t, db, s, "t1", "m1", "I can't stand horror", t0)
	m2 := appendAt(t, db, s, "t1", "m2", "I've come around on horror", t0.Add(time.Hour))

	if !writeRun(t, db, s, m1, map[string]memento.MemoryBase{"DISLIKES": {}}, nil, semantic("a1", "DISLIKES", "can't stand horror", m1, "m1")) {
		t.Fatal("first write reported nothing written")
	}
	// A repeat of the same run writes nothing.
	if writeRun(t, db, s, m1, nil, nil, semantic("a1-again", "DISLIKES", "can't stand horror", m1, "m1")) {
		t.Error("repeated write of m1 reported written")
	}
	base := map[string]memento.MemoryBase{"DISLIKES": {ID: "a1", Value: "can't stand horror"}}
	writeRun(t, db, s, m2, base, []memento.Supersession{{ID: "a1", Attribute: "DISLIKES"}},
		semantic("a2", "DISLIKES", "likes horror now", m2, "m1", "m2"))

	cur, err := db.Memories(ctx, s, memento.MemoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cur) != 1 || cur[0].ID != "a2" || cur[0].ValidTo != nil {
		t.Fatalf("current memories = %+v; want only a2, current", cur)
	}
	hist, err := db.MemoryHistory(ctx, s, "a2")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range hist {
		ids = append(ids, m.ID)
	}
	if diff := cmp.Diff([]string{"a2", "a1"}, ids); diff != "" {
		t.Fatalf("history ids (-want +got):\n%s", diff)
	}
	if hist[1].ValidTo == nil || !hist[1].ValidTo.Equal(m2.At) {
		t.Errorf("superseded value validTo = %v; want %v (the time of the superseding message)", hist[1].ValidTo, m2.At)
	}
	all, err := db.Memories(ctx, s, memento.MemoryFilter{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 {
		t.Errorf("with All: %d memories; want 2", len(all))
	}
	if run, err := db.MemoryRun(ctx, s, "m2"); err != nil || run.Outcome != memento.RunStored {
		t.Errorf("MemoryRun(m2) = %+v, %v", run, err)
	}
}

func TestWriteMemoriesConflicts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{User: "ann"}
	m1 := appendAt(t, db, s, "t1", "m1", "I live in Berlin", t0)
	m2 := appendAt(t, db, s, "t1", "m2", "I moved to Paris", t0.Add(time.Hour))
	m3 := appendAt(t, db, s, "t1", "m3", "I moved to Rome", t0.Add(2*time.Hour))
	writeRun(t, db, s, m1, map[string]memento.MemoryBase{"LOCATION": {}}, nil, semantic("l1", "LOCATION", "lives in Berlin", m1, "m1"))

	tests := []struct {
		name string
		msg  memento.Message
		base memento.MemoryBase
	}{
		{"merged into no value while one exists", m2, memento.MemoryBase{}},
		{"merged into a stale value", m2, memento.MemoryBase{ID: "l1", Value: "lives in Hamburg"}},
		{"merged into another id", m3, memento.MemoryBase{ID: "l0", Value: "lives in Berlin"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := db.WriteMemories(ctx, s, memento.MemoryWrite{
				Message: tt.msg, Base: map[string]memento.MemoryBase{"LOCATION": tt.base},
				Close:  []memento.Supersession{{ID: "l1", Attribute: "LOCATION"}},
				Insert: []memento.Memory{semantic("l2", "LOCATION", "lives in Paris", tt.msg, "m2")},
				Run:    memento.MemoryRun{Message: tt.msg.ID, Outcome: memento.RunStored},
			})
			wantCode(t, err, memento.ECONFLICT)
		})
	}
	// Nothing of the refused writes is stored, not even the run.
	if _, err := db.MemoryRun(ctx, s, "m2"); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("MemoryRun(m2) after conflicts: %v; want ENOTFOUND", err)
	}
	cur, _ := db.Memories(ctx, s, memento.MemoryFilter{})
	if len(cur) != 1 || cur[0].Value != "lives in Berlin" {
		t.Errorf("current = %+v; want only the Berlin value", cur)
	}
}

func TestMemoryEditDeleteAndModes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{User: "ann"}
	m1 := appendAt(t, db, s, "t1", "m1", "I love sci-fi", t0)
	m2 := appendAt(t, db, s, "t1", "m2", "I went to Rome", t0.Add(time.Hour))
	writeRun(t, db, s, m1, map[string]memento.MemoryBase{"GENRE": {}}, nil, semantic("g1", "GENRE", "loves science fiction", m1, "m1"))
	writeRun(t, db, s, m2, nil, nil, memento.Memory{ID: "e1", Attribute: "EVENT", Mode: memento.ModeEpisodic, Value: "went to Rome", ValidFrom: m2.At, Sources: []string{"m2"}})

	got, err := db.UpdateMemory(ctx, s, "g1", memento.MemoryUpdate{Value: "loves science fiction and westerns"})
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "g1" || got.Value != "loves science fiction and westerns" || got.ValidTo != nil {
		t.Errorf("UpdateMemory = %+v; want g1, current, with the new value", got)
	}
	hist, err := db.MemoryHistory(ctx, s, "g1")
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 2 || hist[1].Value != "loves science fiction" || hist[1].ValidTo == nil {
		t.Fatalf("history after edit = %+v; want the old value closed", hist)
	}
	_, err = db.UpdateMemory(ctx, s, hist[1].ID, memento.MemoryUpdate{Value: "x"})
	wantCode(t, err, memento.ECONFLICT)
	_, err = db.UpdateMemory(ctx, s, "g1", memento.MemoryUpdate{Value: "  "})
	wantCode(t, err, memento.EINVALID)
	_, err = db.UpdateMemory(ctx, s, "nope", memento.MemoryUpdate{Value: "x"})
	wantCode(t, err, memento.ENOTFOUND)

	eps, err := db.Memories(ctx, s, memento.MemoryFilter{Kind: memento.MemoryEpisode})
	if err != nil || len(eps) != 1 || eps[0].ID != "e1" || eps[0].Kind != memento.MemoryEpisode {
		t.Fatalf("episodes = %+v, %v", eps, err)
	}
	if _, err := db.Memories(ctx, s, memento.MemoryFilter{Kind: "fact"}); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("unknown kind: %v; want EINVALID", err)
	}

	// Deleting the current value forgets its history too.
	if err := db.DeleteMemory(ctx, s, "g1"); err != nil {
		t.Fatal(err)
	}
	all, _ := db.Memories(ctx, s, memento.MemoryFilter{All: true})
	if len(all) != 1 || all[0].ID != "e1" {
		t.Errorf("after delete: %+v; want only e1", all)
	}
	wantCode(t, db.DeleteMemory(ctx, s, "g1"), memento.ENOTFOUND)

	if err := db.SetMemoryMode(ctx, s, "genre", memento.ModeEpisodic); err != nil {
		t.Fatal(err)
	}
	if err := db.SetMemoryMode(ctx, s, "*", memento.ModeSemantic); err != nil {
		t.Fatal(err)
	}
	wantCode(t, db.SetMemoryMode(ctx, s, "GENRE", "sometimes"), memento.EINVALID)
	modes, err := db.MemoryModes(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"GENRE": "episodic", "*": "semantic"}, modes); diff != "" {
		t.Errorf("modes (-want +got):\n%s", diff)
	}
	if err := db.SetMemoryMode(ctx, s, "GENRE", ""); err != nil {
		t.Fatal(err)
	}
	if modes, _ := db.MemoryModes(ctx, s); len(modes) != 1 {
		t.Errorf("after clearing GENRE: %v", modes)
	}
}

func TestRecallCandidates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{User: "ann"}
	texts := []string{"Hi there", "I adopted a dog called Rex", "What breed is he?", "A beagle, he is three", "Nice!", "I also paint on weekends"}
	var msgs []memento.Message
	for i, text := range texts {
		msgs = append(msgs, appendAt(t, db, s, "t1", "d"+string(rune('0'+i)), text, t0.Add(time.Duration(i)*time.Minute)))
	}
	other := appendAt(t, db, s, "t2", "x1", "my dog Rex loves the beach", t0.Add(time.Hour))
	writeRun(t, db, s, msgs[1], nil, nil, memento.Memory{ID: "e1", Attribute: "FAMILY", Mode: memento.ModeEpisodic,
		Value: "adopted a dog called Rex", ValidFrom: msgs[1].At, Sources: []string{"d1"}, Vector: []float32{1, 0}, Embedder: "test/2"})
	_ = other

	got, err := db.MessageCandidates(ctx, s, memento.CandidateQuery{Query: "dog", Keyword: 5, Neighbors: 1, ExcludeThread: "t2"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range got {
		ids = append(ids, c.ID)
		if c.ID == "d1" && (c.BM25 <= 0 || c.Neighbor) {
			t.Errorf("keyword match d1 = %+v; want a positive BM25, not a neighbour", c)
		}
		if (c.ID == "d0" || c.ID == "d2") && !c.Neighbor {
			t.Errorf("%s should be a neighbour", c.ID)
		}
	}
	if diff := cmp.Diff([]string{"d1", "d0", "d2"}, ids, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("message candidates (-want +got):\n%s", diff)
	}
	got, err = db.MessageCandidates(ctx, s, memento.CandidateQuery{Query: "", Recent: 2})
	if err != nil || len(got) != 2 || got[0].ID != "x1" {
		t.Errorf("recent candidates = %+v, %v; want x1 then d5", got, err)
	}
	mems, err := db.MemoryCandidates(ctx, s, memento.CandidateQuery{Query: "dogs", Keyword: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(mems) != 1 || mems[0].ID != "e1" || mems[0].BM25 <= 0 || mems[0].Embedder != "test/2" || len(mems[0].Vector) != 2 {
		t.Errorf("memory candidates = %+v", mems)
	}
	if _, err := db.MemoryCandidates(ctx, s, memento.CandidateQuery{Recent: memento.MaxCandidateRecent + 1}); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("over the bound: %v; want EINVALID", err)
	}
}

func TestCheckpointerAndDeleteUser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{User: "ann"}
	m1 := appendAt(t, db, s, "t1", "m1", "I live in Berlin", t0)
	cp := db.Checkpointer(s)
	want := graph.Checkpoint{Graph: "remember", Next: "extract", State: []byte(`{"a":1}`),
		Trace: []graph.Step{{Node: "sentinel", Outcome: "extract", Started: t0}}, SavedAt: t0}
	if err := cp.Save(ctx, "remember/m1", want); err != nil {
		t.Fatal(err)
	}
	got, ok, err := cp.Load(ctx, "remember/m1")
	if err != nil || !ok {
		t.Fatalf("Load = %v, %v", ok, err)
	}
	if diff := cmp.Diff(want, *got); diff != "" {
		t.Errorf("checkpoint round trip (-want +got):\n%s", diff)
	}
	if _, ok, _ := db.Checkpointer(memento.Scope{User: "bob"}).Load(ctx, "remember/m1"); ok {
		t.Error("another user sees ann's checkpoint")
	}
	// The write that records the run deletes its checkpoint.
	_, err = db.WriteMemories(ctx, s, memento.MemoryWrite{Message: m1, Checkpoint: "remember/m1",
		Insert: []memento.Memory{semantic("l1", "LOCATION", "lives in Berlin", m1, "m1")},
		Run:    memento.MemoryRun{Message: "m1", Outcome: memento.RunStored}, Vector: []float32{0, 1}, Embedder: "test/2"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := cp.Load(ctx, "remember/m1"); ok {
		t.Error("checkpoint survived the run's write")
	}
	if err := db.SetMemoryMode(ctx, s, "*", memento.ModeEpisodic); err != nil {
		t.Fatal(err)
	}
	if err := cp.Save(ctx, "remember/other", want); err != nil {
		t.Fatal(err)
	}

	if err := db.DeleteUser(ctx, s); err != nil {
		t.Fatal(err)
	}
	if mems, _ := db.Memories(ctx, s, memento.MemoryFilter{All: true}); len(mems) != 0 {
		t.Errorf("memories after DeleteUser: %+v", mems)
	}
	if _, err := db.MemoryRun(ctx, s, "m1"); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("run after DeleteUser: %v", err)
	}
	if modes, _ := db.MemoryModes(ctx, s); len(modes) != 0 {
		t.Errorf("modes after DeleteUser: %v", modes)
	}
	if _, ok, _ := cp.Load(ctx, "remember/other"); ok {
		t.Error("checkpoint after DeleteUser")
	}
	if c, _ := db.MessageCandidates(ctx, s, memento.CandidateQuery{Recent: 10}); len(c) != 0 {
		t.Errorf("messages after DeleteUser: %+v", c)
	}
}

func TestExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{User: "ann"}
	m1 := appendAt(t, db, s, "t1", "m1", "I live in Berlin", t0)
	m2 := appendAt(t, db, s, "t2", "m2", "I moved to Paris", t0.Add(time.Hour))
	writeRun(t, db, s, m1, map[string]memento.MemoryBase{"LOCATION": {}}, nil, semantic("l1", "LOCATION", "lives in Berlin", m1, "m1"))
	writeRun(t, db, s, m2, map[string]memento.MemoryBase{"LOCATION": {ID: "l1", Value: "lives in Berlin"}},
		[]memento.Supersession{{ID: "l1", Attribute: "LOCATION"}}, semantic("l2", "LOCATION", "lives in Paris", m2, "m1", "m2"))
	if _, err := db.AppendSummary(ctx, s, memento.Summary{Thread: "t1", Text: "Ann lives in Berlin.", FromSeq: 1, ToSeq: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddEvents(ctx, s, []memento.Event{{ID: "e1", Type: memento.EventWatched, TitleID: "wiki:Heat", At: t0}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.SetMemoryMode(ctx, s, "EVENT", memento.ModeSemantic); err != nil {
		t.Fatal(err)
	}
	doc, err := db.ExportUser(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Threads) != 2 || len(doc.Memories) != 2 || len(doc.Runs) != 2 || len(doc.Events) != 1 || doc.Modes["EVENT"] != "semantic" {
		t.Fatalf("export = %+v", doc)
	}
	if _, err := db.ExportUser(ctx, memento.Scope{User: "nobody"}); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("export of an unknown user: %v", err)
	}

	// Import under another user, then export that one: the same document
	// but for the names and times of storage.
	bob := memento.Scope{User: "bob"}
	res, err := db.ImportUser(ctx, bob, doc)
	if err != nil {
		t.Fatal(err)
	}
	want := memento.ImportResult{Threads: 2, Messages: 2, Summaries: 1, Events: 1, Memories: 2, Runs: 2}
	if diff := cmp.Diff(want, *res); diff != "" {
		t.Errorf("import result (-want +got):\n%s", diff)
	}
	again, err := db.ImportUser(ctx, bob, doc)
	if err != nil {
		t.Fatal(err)
	}
	if again.Messages+again.Memories+again.Runs+again.Events+again.Summaries+again.Threads != 0 || again.Skipped == 0 {
		t.Errorf("second import stored %+v; want everything skipped", again)
	}
	back, err := db.ExportUser(ctx, bob)
	if err != nil {
		t.Fatal(err)
	}
	ignore := cmp.Options{
		cmpopts.IgnoreFields(memento.UserExport{}, "User", "ExportedAt"),
		cmpopts.IgnoreFields(memento.Thread{}, "User"),
		cmpopts.IgnoreFields(memento.Message{}, "User", "CreatedAt"),
		cmpopts.IgnoreFields(memento.Event{}, "User", "CreatedAt"),
		cmpopts.IgnoreFields(memento.Memory{}, "CreatedAt", "UpdatedAt"),
		cmpopts.IgnoreFields(memento.Summary{}, "ID"),
	}
	if diff := cmp.Diff(doc, back, ignore); diff != "" {
		t.Errorf("export after import differs (-original +imported):\n%s", diff)
	}
	doc.Format = "other/v9"
	if _, err := db.ImportUser(ctx, bob, doc); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("import of an unknown format: %v; want EINVALID", err)
	}
}

func TestEarlierUnprocessedAndVectors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{User: "ann"}
	m1 := appendAt(t, db, s, "t1", "m1", "one", t0)
	appendAt(t, db, s, "t2", "m2", "two", t0.Add(time.Minute))
	if _, err := db.AppendMessages(ctx, s, "t2", []memento.Message{{ID: "r2", Role: memento.RoleAssistant, Text: "reply", At: t0.Add(2 * time.Minute)}}, nil); err != nil {
		t.Fatal(err)
	}
	appendAt(t, db, s, "t1", "m3", "three", t0.Add(3*time.Minute))
	writeRun(t, db, s, m1, nil, nil)

	got, err := db.EarlierUnprocessed(ctx, s, "m3", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != "m2" {
		t.Errorf("EarlierUnprocessed(m3) = %+v; want m2 only (m1 is done, r2 is the assistant's)", got)
	}
	if _, err := db.EarlierUnprocessed(ctx, s, "nope", 10); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("unknown message: %v", err)
	}

	_, msgs, err := db.MissingVectors(ctx, s, "test/2", 100)
	if err != nil || len(msgs) != 4 {
		t.Fatalf("MissingVectors = %d messages, %v; want 4", len(msgs), err)
	}
	if err := db.PutVectors(ctx, s, "test/2", nil, map[string][]float32{"m1": {1, 0}, "m2": {0, 1}}); err != nil {
		t.Fatal(err)
	}
	if _, msgs, _ := db.MissingVectors(ctx, s, "test/2", 100); len(msgs) != 2 {
		t.Errorf("after PutVectors, %d messages miss vectors; want 2", len(msgs))
	}
	if _, msgs, _ := db.MissingVectors(ctx, s, "other/3", 100); len(msgs) != 4 {
		t.Errorf("another embedder: %d messages miss vectors; want 4", len(msgs))
	}
}
