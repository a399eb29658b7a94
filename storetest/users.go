package storetest

import (
	"slices"
	"testing"

	"github.com/memento-ai/memento"
)

// testIsolation writes the same thread, message, event and memory ids for
// users of two tenants and checks that nothing crosses between them.
func testIsolation(t *testing.T, open Opener) {
	st := open(t)
	ctx := t.Context()
	scopes := []memento.Scope{
		{Tenant: memento.DefaultTenant, User: "ann"},
		{Tenant: memento.DefaultTenant, User: "bob"},
		{Tenant: "acme", User: "ann"},
	}
	for i, s := range scopes {
		text := "message of " + s.Tenant + "/" + s.User
		m := userMessage(t, st, s, "shared-thread", "shared-msg", text, i)
		if m.Seq != 1 {
			t.Errorf("%v: first message has seq %d, want 1 (threads of other users must not count)", s, m.Seq)
		}
		writeOK(t, st, s, memento.MemoryWrite{Message: m, Insert: []memento.Memory{semantic("shared-mem", "LIKES", text, m)}, Run: run(m, "shared-mem")})
		if _, err := st.AddEvents(ctx, s, []memento.Event{{ID: "shared-evt", Type: memento.EventWatched, TitleID: "wiki:" + s.User}}, nil); err != nil {
			t.Fatalf("AddEvents(%v): %v", s, err)
		}
		if err := st.SetMemoryMode(ctx, s, "LIKES", []string{memento.ModeSemantic, memento.ModeEpisodic}[i%2]); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range scopes {
		text := "message of " + s.Tenant + "/" + s.User
		msgs := messagesOK(t, st, s, "shared-thread")
		if len(msgs) != 1 || msgs[0].Text != text || msgs[0].Tenant != s.Tenant || msgs[0].User != s.User {
			t.Errorf("%v sees messages %+v, want only its own", s, msgs)
		}
		mem, err := st.Memory(ctx, s, "shared-mem")
		if err != nil || mem.Value != text {
			t.Errorf("%v sees memory %+v, %v; want its own", s, mem, err)
		}
		if all, _ := st.Memories(ctx, s, memento.MemoryFilter{All: true}); len(all) != 1 {
			t.Errorf("%v lists %d memories, want 1", s, len(all))
		}
		if ev, _ := st.Events(ctx, s); len(ev) != 1 || ev[0].TitleID != "wiki:"+s.User {
			t.Errorf("%v sees events %+v, want its own", s, ev)
		}
		if th, _ := st.Threads(ctx, s); len(th) != 1 || th[0].Tenant != s.Tenant {
			t.Errorf("%v lists threads %+v, want its one", s, th)
		}
		if modes, _ := st.MemoryModes(ctx, s); modes["LIKES"] != []string{memento.ModeSemantic, memento.ModeEpisodic}[i%2] {
			t.Errorf("%v has modes %v", s, modes)
		}
		if r, err := st.MemoryRuns(ctx, s, 0); err != nil || len(r) != 1 {
			t.Errorf("%v lists %d runs, want 1", s, len(r))
		}
	}
	// Forgetting one user leaves the others whole, also in the other tenant.
	if err := st.DeleteUser(ctx, scopes[0]); err != nil {
		t.Fatalf("DeleteUser: %v", err)
	}
	if _, err := st.Messages(ctx, scopes[0], "shared-thread", 0, 0); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("the forgotten user's thread is still there: %v", err)
	}
	for _, s := range scopes[1:] {
		if msgs := messagesOK(t, st, s, "shared-thread"); len(msgs) != 1 {
			t.Errorf("%v lost messages when another user was forgotten", s)
		}
		if _, err := st.Memory(ctx, s, "shared-mem"); err != nil {
			t.Errorf("%v lost its memory when another user was forgotten: %v", s, err)
		}
	}
}

// testDeleteUser forgets a user with everything they own: threads,
// messages, summaries, events, memories, runs, modes and pending jobs.
func testDeleteUser(t *testing.T, open Opener) {
	st := open(t)
	ctx := t.Context()
	for _, s := range []memento.Scope{ann, bob} {
		res, err := st.AppendMessages(ctx, s, "t1", []memento.Message{msgID("m1", memento.RoleUser, "I love heist films", 0)}, jobsOfKind("remember", s))
		if err != nil {
			t.Fatal(err)
		}
		m := res.Messages[0]
		writeOK(t, st, s, memento.MemoryWrite{Message: m, Insert: []memento.Memory{semantic("mem1", "LIKES", "heist films", m)}, Run: run(m, "mem1")})
		if _, err := st.AppendSummary(ctx, s, memento.Summary{Thread: "t1", Text: "likes heists", FromSeq: 1, ToSeq: 1}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.AddEvents(ctx, s, []memento.Event{{Type: memento.EventWatched, TitleID: "wiki:Heat"}}, nil); err != nil {
			t.Fatal(err)
		}
		if err := st.SetMemoryMode(ctx, s, "LIKES", memento.ModeEpisodic); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.DeleteUser(ctx, ann); err != nil {
		t.Fatalf("DeleteUser: %v", err)
	}
	if th, _ := st.Threads(ctx, ann); len(th) != 0 {
		t.Errorf("threads left: %+v", th)
	}
	if sums, _ := st.Summaries(ctx, ann, "t1"); len(sums) != 0 {
		t.Errorf("summaries left: %+v", sums)
	}
	if ev, _ := st.Events(ctx, ann); len(ev) != 0 {
		t.Errorf("events left: %+v", ev)
	}
	if all, _ := st.Memories(ctx, ann, memento.MemoryFilter{All: true}); len(all) != 0 {
		t.Errorf("memories left: %+v", all)
	}
	if runs, _ := st.MemoryRuns(ctx, ann, 0); len(runs) != 0 {
		t.Errorf("runs left: %+v", runs)
	}
	if modes, _ := st.MemoryModes(ctx, ann); len(modes) != 0 {
		t.Errorf("modes left: %v", modes)
	}
	var users []string
	for _, j := range jobsOf(t, st, "remember") {
		users = append(users, payloadOf(t, j).User)
	}
	if !slices.Equal(users, []string{"bob"}) {
		t.Errorf("remember jobs left for %v, want only bob's", users)
	}
	if st2, _ := st.ThreadState(ctx, ann, "t1"); st2 == nil || st2.LastSeq != 0 {
		t.Errorf("the forgotten thread's state = %+v, want a new thread's", st2)
	}
	wantCode(t, "DeleteUser twice", st.DeleteUser(ctx, ann), memento.ENOTFOUND)
	// The user can start again from nothing.
	if m := userMessage(t, st, ann, "t1", "m1", "hello again", 0); m.Seq != 1 {
		t.Errorf("a returning user's first message has seq %d, want 1", m.Seq)
	}
}

// testExportImport exports a user, forgets them, imports the document
// under another user and finds the same threads, messages, summaries,
// events, memories (history included), runs and modes.
func testExportImport(t *testing.T, open Opener) {
	st := open(t)
	ex, ok := st.(Exporter)
	if !ok {
		t.Skip("the store does not implement storetest.Exporter (ExportUser, ImportUser)")
	}
	ctx := t.Context()
	m1 := userMessage(t, st, ann, "t1", "m1", "I love heist films", 0)
	m2 := userMessage(t, st, ann, "t1", "m2", "and westerns", 1)
	writeOK(t, st, ann, memento.MemoryWrite{Message: m1, Insert: []memento.Memory{semantic("mem1", "LIKES", "heist films", m1)}, Run: run(m1, "mem1")})
	writeOK(t, st, ann, memento.MemoryWrite{Message: m2, Close: []memento.Supersession{{ID: "mem1", Attribute: "LIKES"}},
		Insert: []memento.Memory{semantic("mem2", "LIKES", "heist films and westerns", m2)}, Run: run(m2, "mem2")})
	if _, err := st.AppendSummary(ctx, ann, memento.Summary{Thread: "t1", Text: "likes heists", FromSeq: 1, ToSeq: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddEvents(ctx, ann, []memento.Event{{ID: "e1", Type: memento.EventWatched, TitleID: "wiki:Heat", At: t0}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.SetMemoryMode(ctx, ann, "GENRE", memento.ModeEpisodic); err != nil {
		t.Fatal(err)
	}
	_, err := ex.ExportUser(ctx, memento.Scope{User: "nobody"})
	wantCode(t, "ExportUser of an unknown user", err, memento.ENOTFOUND)
	doc, err := ex.ExportUser(ctx, ann)
	if err != nil {
		t.Fatalf("ExportUser: %v", err)
	}
	if doc.Format != memento.UserExportFormat || len(doc.Threads) != 1 || len(doc.Threads[0].Messages) != 2 || len(doc.Memories) != 2 ||
		len(doc.Runs) != 2 || len(doc.Events) != 1 || doc.Modes["GENRE"] != memento.ModeEpisodic || len(doc.Threads[0].Summaries) != 1 {
		t.Fatalf("export = %d threads, %d memories, %d runs, %d events, modes %v; want everything", len(doc.Threads), len(doc.Memories), len(doc.Runs), len(doc.Events), doc.Modes)
	}
	carol := memento.Scope{User: "carol"}
	res, err := ex.ImportUser(ctx, carol, doc)
	if err != nil {
		t.Fatalf("ImportUser: %v", err)
	}
	if res.Threads != 1 || res.Messages != 2 || res.Memories != 2 || res.Runs != 2 || res.Events != 1 || res.Summaries != 1 || res.Skipped != 0 {
		t.Errorf("import result = %+v, want every row stored", res)
	}
	again, err := ex.ImportUser(ctx, carol, doc)
	if err != nil || again.Messages != 0 || again.Memories != 0 || again.Skipped == 0 {
		t.Errorf("a second import = %+v, %v; want every row skipped", again, err)
	}
	msgs := messagesOK(t, st, carol, "t1")
	if len(msgs) != 2 || msgs[0].ID != "m1" || !msgs[0].At.Equal(m1.At) || msgs[1].Seq != 2 {
		t.Errorf("imported messages = %+v", msgs)
	}
	hist, err := st.MemoryHistory(ctx, carol, "mem2")
	if err != nil || !slices.Equal(ids(hist), []string{"mem2", "mem1"}) || hist[1].ValidTo == nil {
		t.Errorf("imported history = %v, %v; want mem2 then the closed mem1", ids(hist), err)
	}
	if r, err := st.MemoryRun(ctx, carol, "m2"); err != nil || r.Outcome != memento.RunStored {
		t.Errorf("imported run = %+v, %v", r, err)
	}
	if modes, _ := st.MemoryModes(ctx, carol); modes["GENRE"] != memento.ModeEpisodic {
		t.Errorf("imported modes = %v", modes)
	}
	_, err = ex.ImportUser(ctx, carol, &memento.UserExport{Format: "other/v9"})
	wantCode(t, "ImportUser of another format", err, memento.EINVALID)
}
