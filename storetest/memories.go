package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

func testEvents(t *testing.T, open Opener) {
	st := open(t)
	ctx := t.Context()
	rating := 4.5
	events := []memento.Event{
		{ID: "e2", Type: memento.EventRated, TitleID: "wiki:Heat", Value: &rating, At: t0.Add(time.Hour)},
		{ID: "e1", Type: memento.EventWatched, TitleID: "wiki:Heat", At: t0},
		{Type: memento.EventLiked, TitleID: "wiki:Ronin"},
	}
	perEvent := func(e memento.Event) []memento.JobRequest {
		return []memento.JobRequest{{Kind: memento.JobProfile, Payload: memento.PreferenceEventJob{Tenant: ann.Tenant, User: ann.User, Event: e}}}
	}
	n, err := st.AddEvents(ctx, ann, events, perEvent)
	if err != nil || n != 3 {
		t.Fatalf("AddEvents = %d, %v; want 3 inserted", n, err)
	}
	if n, err := st.AddEvents(ctx, ann, events[:2], perEvent); err != nil || n != 0 {
		t.Errorf("AddEvents again = %d, %v; want 0 (known ids are skipped)", n, err)
	}
	if jobs := jobsOf(t, st, memento.JobProfile); len(jobs) != 3 {
		t.Errorf("%d profile jobs, want 3 (none for repeated events)", len(jobs))
	}
	if events[2].ID != "" || !events[2].At.IsZero() {
		t.Errorf("AddEvents changed the caller's event: %+v", events[2])
	}
	got, err := st.Events(ctx, ann)
	if err != nil {
		t.Fatalf("Events: %v", err)
	}
	if len(got) != 3 || got[0].ID != "e1" || got[1].ID != "e2" {
		t.Fatalf("Events = %+v, want e1, e2 then the undated one, in the order they happened", got)
	}
	if got[1].Value == nil || *got[1].Value != 4.5 || got[0].Value != nil || !got[0].At.Equal(t0) {
		t.Errorf("stored values/times = %v %v %v, want nil at %v and 4.5", got[0].Value, got[0].At, got[1].Value, t0)
	}
	if got[2].ID == "" || got[2].At.IsZero() || got[2].CreatedAt.IsZero() || got[2].User != "ann" {
		t.Errorf("an event without id and time = %+v, want both filled in", got[2])
	}
	// Within one call: a known id is skipped, and an id given twice is
	// its first event.
	mixed := []memento.Event{events[1], {ID: "e3", Type: memento.EventLiked, TitleID: "wiki:Up", At: t0.Add(2 * time.Hour)},
		{ID: "e3", Type: memento.EventLiked, TitleID: "wiki:Cars", At: t0.Add(2 * time.Hour)}, {ID: "e4", Type: memento.EventWatched, TitleID: "wiki:Up", At: t0.Add(3 * time.Hour)}}
	if n, err := st.AddEvents(ctx, ann, mixed, perEvent); err != nil || n != 2 {
		t.Errorf("AddEvents of a known id, an id twice and a new one = %d, %v; want 2 inserted", n, err)
	}
	if jobs := jobsOf(t, st, memento.JobProfile); len(jobs) != 5 {
		t.Errorf("%d profile jobs, want 5 (one for each of e3 and e4)", len(jobs))
	}
	if all, err := st.Events(ctx, ann); err != nil || len(all) != 5 || all[2].ID != "e3" || all[2].TitleID != "wiki:Up" || all[3].ID != "e4" {
		t.Errorf("Events = %+v, %v; want e3 (its first event, wiki:Up) and e4 after e1 and e2", all, err)
	}
	for _, bad := range []memento.Event{
		{Type: "teleported", TitleID: "x"},
		{Type: memento.EventRated, TitleID: "x"},
		{Type: memento.EventWatched},
		{Type: memento.EventWatched, TitleID: "x", Value: &rating},
	} {
		_, err := st.AddEvents(ctx, ann, []memento.Event{bad}, nil)
		wantCode(t, "AddEvents of "+string(bad.Type), err, memento.EINVALID)
	}
	if none, err := st.Events(ctx, bob); err != nil || len(none) != 0 || none == nil {
		t.Errorf("Events of a user without any = %v, %v; want an empty list", none, err)
	}
}

func testMemories(t *testing.T, open Opener) {
	st := open(t)
	ctx := t.Context()
	m1 := userMessage(t, st, ann, "t1", "m1", "I love heist films", 0)
	m2 := userMessage(t, st, ann, "t1", "m2", "Actually I love heist films and westerns", 10)
	m3 := userMessage(t, st, ann, "t1", "m3", "I watched Heat yesterday", 20)

	v1 := semantic("mem1", "likes", "heist films", m1)
	v1.Vector, v1.Embedder = []float32{1, 0, 0.5}, "test-embedder"
	writeOK(t, st, ann, memento.MemoryWrite{Message: m1, Base: map[string]memento.MemoryBase{"LIKES": {}},
		Insert: []memento.Memory{v1}, Run: run(m1, "mem1"), Vector: []float32{0.1, 0.2}, Embedder: "test-embedder"})
	// A repeated run writes nothing.
	if ok, err := st.WriteMemories(ctx, ann, memento.MemoryWrite{Message: m1, Insert: []memento.Memory{semantic("mem1b", "LIKES", "x", m1)}, Run: run(m1)}); err != nil || ok {
		t.Errorf("repeated WriteMemories = %v, %v; want false, nil", ok, err)
	}
	got, err := st.Memory(ctx, ann, "mem1")
	if err != nil {
		t.Fatalf("Memory: %v", err)
	}
	if got.Attribute != "LIKES" || got.Kind != memento.MemoryAttribute || got.Value != "heist films" || !got.ValidFrom.Equal(m1.At) ||
		got.ValidTo != nil || !slices.Equal(got.Sources, []string{"m1"}) || got.Thread != "t1" || got.RunID != "m1" {
		t.Errorf("stored memory = %+v; want LIKES (upper case), current, from m1 in t1", got)
	}
	if got.Embedder != "test-embedder" || !slices.Equal(got.Vector, []float32{1, 0, 0.5}) {
		t.Errorf("stored vector = %v by %q, want [1 0 0.5] by test-embedder", got.Vector, got.Embedder)
	}

	// A base that is not current any more is a conflict, and nothing is written.
	_, err = st.WriteMemories(ctx, ann, memento.MemoryWrite{Message: m2, Base: map[string]memento.MemoryBase{"LIKES": {}},
		Insert: []memento.Memory{semantic("mem2", "LIKES", "westerns", m2)}, Run: run(m2, "mem2")})
	wantCode(t, "WriteMemories from a stale base", err, memento.ECONFLICT)
	if _, err := st.Memory(ctx, ann, "mem2"); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("the refused write stored its memory (Memory: %v)", err)
	}
	if _, err := st.MemoryRun(ctx, ann, "m2"); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("the refused write stored its run (MemoryRun: %v)", err)
	}
	// Superseding: the old value is closed at the new message's time.
	writeOK(t, st, ann, memento.MemoryWrite{Message: m2, Base: map[string]memento.MemoryBase{"LIKES": {ID: "mem1", Value: "heist films"}},
		Close:  []memento.Supersession{{ID: "mem1", Attribute: "LIKES"}},
		Insert: []memento.Memory{semantic("mem2", "LIKES", "heist films and westerns", m2)}, Run: run(m2, "mem2")})
	writeOK(t, st, ann, memento.MemoryWrite{Message: m3,
		Insert: []memento.Memory{episode("ep1", "WATCHING_HABIT", "watched Heat", m3)}, Run: run(m3, "ep1")})

	old, err := st.Memory(ctx, ann, "mem1")
	if err != nil || old.ValidTo == nil || !old.ValidTo.Equal(m2.At) {
		t.Errorf("superseded memory = %+v, %v; want validTo %v", old, err, m2.At)
	}
	current, err := st.Memories(ctx, ann, memento.MemoryFilter{})
	if err != nil {
		t.Fatalf("Memories: %v", err)
	}
	if !slices.Equal(ids(current), []string{"mem2", "ep1"}) {
		t.Errorf("current memories = %v, want [mem2 ep1] (semantic first)", ids(current))
	}
	all, err := st.Memories(ctx, ann, memento.MemoryFilter{All: true})
	if err != nil || !slices.Equal(ids(all), []string{"mem1", "mem2", "ep1"}) {
		t.Errorf("all memories = %v, %v; want [mem1 mem2 ep1]", ids(all), err)
	}
	for _, c := range []struct {
		f    memento.MemoryFilter
		want []string
	}{
		{memento.MemoryFilter{Kind: memento.MemoryEpisode}, []string{"ep1"}},
		{memento.MemoryFilter{Mode: memento.ModeSemantic}, []string{"mem2"}},
		{memento.MemoryFilter{Attribute: "likes", All: true}, []string{"mem1", "mem2"}},
		{memento.MemoryFilter{Thread: "t1", Limit: 1}, []string{"mem2"}},
		{memento.MemoryFilter{Thread: "other"}, []string{}},
	} {
		got, err := st.Memories(ctx, ann, c.f)
		if err != nil || !slices.Equal(ids(got), c.want) {
			t.Errorf("Memories(%+v) = %v, %v; want %v", c.f, ids(got), err, c.want)
		}
	}
	_, err = st.Memories(ctx, ann, memento.MemoryFilter{Kind: "dream"})
	wantCode(t, "Memories of an unknown kind", err, memento.EINVALID)

	hist, err := st.MemoryHistory(ctx, ann, "mem1")
	if err != nil || !slices.Equal(ids(hist), []string{"mem2", "mem1"}) {
		t.Errorf("MemoryHistory(mem1) = %v, %v; want [mem2 mem1], newest first", ids(hist), err)
	}
	if hist, err := st.MemoryHistory(ctx, ann, "ep1"); err != nil || !slices.Equal(ids(hist), []string{"ep1"}) {
		t.Errorf("MemoryHistory(ep1) = %v, %v; want the episode alone", ids(hist), err)
	}
	_, err = st.MemoryHistory(ctx, ann, "nope")
	wantCode(t, "MemoryHistory of an unknown memory", err, memento.ENOTFOUND)
	_, err = st.Memory(ctx, ann, "nope")
	wantCode(t, "Memory of an unknown id", err, memento.ENOTFOUND)

	// Closing a value that is not current is a conflict, alone as well
	// as with a new value.
	m4 := userMessage(t, st, ann, "t1", "m4", "I like noir", 30)
	_, err = st.WriteMemories(ctx, ann, memento.MemoryWrite{Message: m4, Close: []memento.Supersession{{ID: "mem1", Attribute: "LIKES"}},
		Run: run(m4)})
	wantCode(t, "closing a superseded value", err, memento.ECONFLICT)
	_, err = st.WriteMemories(ctx, ann, memento.MemoryWrite{Message: m4, Close: []memento.Supersession{{ID: "mem1", Attribute: "LIKES"}},
		Insert: []memento.Memory{semantic("mem3", "LIKES", "noir", m4)}, Run: run(m4, "mem3")})
	wantCode(t, "closing a superseded value and adding one", err, memento.ECONFLICT)
	// Two current values of one semantic attribute are a conflict.
	_, err = st.WriteMemories(ctx, ann, memento.MemoryWrite{Message: m4,
		Insert: []memento.Memory{semantic("mem3", "LIKES", "noir", m4)}, Run: run(m4, "mem3")})
	wantCode(t, "a second current value", err, memento.ECONFLICT)
	_, err = st.WriteMemories(ctx, ann, memento.MemoryWrite{Message: memento.Message{ID: "ghost"}, Run: memento.MemoryRun{Message: "ghost"}})
	wantCode(t, "a write for an unknown message", err, memento.ENOTFOUND)
	_, err = st.WriteMemories(ctx, ann, memento.MemoryWrite{Message: m4, Insert: []memento.Memory{{ID: "bad", Mode: "dreamy", Attribute: "X", Value: "v", ValidFrom: t0}}})
	wantCode(t, "a memory of an unknown mode", err, memento.EINVALID)
}

func testMemoryEdits(t *testing.T, open Opener) {
	st := open(t)
	ctx := t.Context()
	m1 := userMessage(t, st, ann, "t1", "m1", "I love heist films", 0)
	m2 := userMessage(t, st, ann, "t1", "m2", "I watched Heat", 1)
	m3 := userMessage(t, st, ann, "t1", "m3", "Now I love westerns", 2)
	v1 := semantic("mem1", "LIKES", "heist films", m1)
	v1.Vector, v1.Embedder = []float32{1, 2}, "e"
	writeOK(t, st, ann, memento.MemoryWrite{Message: m1, Insert: []memento.Memory{v1}, Run: run(m1, "mem1")})
	writeOK(t, st, ann, memento.MemoryWrite{Message: m2, Insert: []memento.Memory{episode("ep1", "WATCHING_HABIT", "watched Heat", m2)}, Run: run(m2, "ep1")})

	// Editing a current semantic value keeps its id; the old value joins
	// its history, and the stale vector goes.
	edited, err := st.UpdateMemory(ctx, ann, "mem1", memento.MemoryUpdate{Value: "heist and caper films"})
	if err != nil {
		t.Fatalf("UpdateMemory: %v", err)
	}
	if edited.ID != "mem1" || edited.Value != "heist and caper films" || edited.ValidTo != nil {
		t.Errorf("edited = %+v, want mem1, current, with the new value", edited)
	}
	hist, err := st.MemoryHistory(ctx, ann, "mem1")
	if err != nil || len(hist) != 2 || hist[0].ID != "mem1" || hist[1].Value != "heist films" || hist[1].ValidTo == nil {
		t.Errorf("history after the edit = %+v, %v; want mem1 then the closed old value", hist, err)
	}
	if got, _ := st.Memory(ctx, ann, "mem1"); got == nil || got.Vector != nil {
		t.Errorf("after an edit the memory keeps its old vector: %+v", got)
	}
	if got, err := st.UpdateMemory(ctx, ann, "ep1", memento.MemoryUpdate{Value: "watched Heat twice"}); err != nil || got.Value != "watched Heat twice" {
		t.Errorf("UpdateMemory(ep1) = %+v, %v", got, err)
	}
	if hist, _ := st.MemoryHistory(ctx, ann, "ep1"); len(hist) != 1 {
		t.Errorf("an edited episode has %d versions, want 1", len(hist))
	}
	_, err = st.UpdateMemory(ctx, ann, "mem1", memento.MemoryUpdate{Value: "  "})
	wantCode(t, "UpdateMemory to an empty value", err, memento.EINVALID)
	_, err = st.UpdateMemory(ctx, ann, "nope", memento.MemoryUpdate{Value: "x"})
	wantCode(t, "UpdateMemory of an unknown memory", err, memento.ENOTFOUND)
	closed := hist[1].ID
	_, err = st.UpdateMemory(ctx, ann, closed, memento.MemoryUpdate{Value: "x"})
	wantCode(t, "UpdateMemory of a superseded value", err, memento.ECONFLICT)

	// Forgetting a current value forgets the versions it superseded too.
	// (A chain of pipeline writes: an edit is dated now, after the
	// suite's message times.)
	writeOK(t, st, ann, memento.MemoryWrite{Message: m3, Insert: []memento.Memory{semantic("g1", "GENRE", "westerns", m3)}, Run: run(m3, "g1")})
	m4 := userMessage(t, st, ann, "t1", "m4", "westerns and noir", 3)
	writeOK(t, st, ann, memento.MemoryWrite{Message: m4, Close: []memento.Supersession{{ID: "g1", Attribute: "GENRE"}},
		Insert: []memento.Memory{semantic("g2", "GENRE", "westerns and noir", m4)}, Run: run(m4, "g2")})
	if err := st.DeleteMemory(ctx, ann, "g2"); err != nil {
		t.Fatalf("DeleteMemory: %v", err)
	}
	left, err := st.Memories(ctx, ann, memento.MemoryFilter{All: true, Attribute: "GENRE"})
	if err != nil || len(left) != 0 {
		t.Errorf("after deleting the current value: %v, %v; want nothing of GENRE (the versions it superseded go with it)", ids(left), err)
	}
	if got, err := st.Memory(ctx, ann, "ep1"); err != nil || got.Value != "watched Heat twice" {
		t.Errorf("deleting GENRE touched ep1: %+v, %v", got, err)
	}
	wantCode(t, "DeleteMemory of an unknown memory", st.DeleteMemory(ctx, ann, "g2"), memento.ENOTFOUND)
}

func testMemoryModesAndRuns(t *testing.T, open Opener) {
	st := open(t)
	ctx := t.Context()
	if err := st.SetMemoryMode(ctx, ann, "likes", memento.ModeEpisodic); err != nil {
		t.Fatalf("SetMemoryMode: %v", err)
	}
	if err := st.SetMemoryMode(ctx, ann, "*", memento.ModeSemantic); err != nil {
		t.Fatalf("SetMemoryMode(*): %v", err)
	}
	if err := st.SetMemoryMode(ctx, ann, "LIKES", memento.ModeSemantic); err != nil {
		t.Fatalf("SetMemoryMode again: %v", err)
	}
	modes, err := st.MemoryModes(ctx, ann)
	if err != nil || len(modes) != 2 || modes["LIKES"] != memento.ModeSemantic || modes["*"] != memento.ModeSemantic {
		t.Errorf("MemoryModes = %v, %v; want LIKES and * semantic", modes, err)
	}
	if err := st.SetMemoryMode(ctx, ann, "likes", ""); err != nil {
		t.Fatalf("remove override: %v", err)
	}
	if modes, _ := st.MemoryModes(ctx, ann); len(modes) != 1 {
		t.Errorf("after removing one override: %v", modes)
	}
	wantCode(t, "SetMemoryMode to an unknown mode", st.SetMemoryMode(ctx, ann, "LIKES", "dreamy"), memento.EINVALID)
	if modes, err := st.MemoryModes(ctx, bob); err != nil || modes == nil || len(modes) != 0 {
		t.Errorf("MemoryModes of a user without any = %v, %v; want an empty map", modes, err)
	}

	m1 := userMessage(t, st, ann, "t1", "m1", "I love heist films", 0)
	m2 := userMessage(t, st, ann, "t1", "m2", "ok", 1)
	r1 := run(m1, "mem1")
	r1.Facts = []memento.Fact{{Text: "loves heist films"}}
	r1.Steps = []memento.RunStep{{Node: "sentinel", Started: m1.At, Duration: time.Millisecond, Outcome: "ok"}}
	writeOK(t, st, ann, memento.MemoryWrite{Message: m1, Insert: []memento.Memory{semantic("mem1", "LIKES", "heist films", m1)}, Run: r1})
	r2 := run(m2)
	r2.Outcome, r2.Reason, r2.FinishedAt = memento.RunNothing, "sentinel: nothing durable", m2.At.Add(time.Hour)
	writeOK(t, st, ann, memento.MemoryWrite{Message: m2, Run: r2})
	got, err := st.MemoryRun(ctx, ann, "m1")
	if err != nil || got.Outcome != memento.RunStored || len(got.Facts) != 1 || len(got.Steps) != 1 || got.Steps[0].Node != "sentinel" {
		t.Errorf("MemoryRun(m1) = %+v, %v; want the stored run with its fact and step", got, err)
	}
	runs, err := st.MemoryRuns(ctx, ann, 0)
	if err != nil || len(runs) != 2 || runs[0].Message != "m2" {
		t.Errorf("MemoryRuns = %d runs (%v), first %+v; want m2 then m1", len(runs), err, runs)
	}
	if runs, _ := st.MemoryRuns(ctx, ann, 1); len(runs) != 1 {
		t.Errorf("MemoryRuns limit 1 = %d runs", len(runs))
	}
	_, err = st.MemoryRun(ctx, ann, "nope")
	wantCode(t, "MemoryRun of an unprocessed message", err, memento.ENOTFOUND)
}
