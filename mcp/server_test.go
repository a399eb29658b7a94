package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/engine"
	"github.com/memento-ai/memento/engine/enginetest"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/mcp"
	"github.com/memento-ai/memento/pipeline"
	"github.com/memento-ai/memento/profile"
	"github.com/memento-ai/memento/recall"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// fixture is a real store with the attribute pipeline running, recall,
// the agent over a small catalog, and the MCP server over all of it.
type fixture struct {
	db  engine.Store
	srv *mcp.Server
}

var titles = []memento.Title{
	{ID: "heat", Title: "Heat", Type: "movie", Year: 1995, Genres: []string{"Crime", "Thriller"}},
	{ID: "ronin", Title: "Ronin", Type: "movie", Year: 1998, Genres: []string{"Crime", "Thriller"}},
	{ID: "up", Title: "Up", Type: "movie", Year: 2009, Genres: []string{"Animation", "Comedy"}},
	{ID: "elf", Title: "Elf", Type: "movie", Year: 2003, Genres: []string{"Comedy"}},
	{ID: "alien", Title: "Alien", Type: "movie", Year: 1979, Genres: []string{"Horror", "Science Fiction"}},
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	db := enginetest.Open(t)
	emb := offline.NewEmbedder(64)
	cat := catalog.New(titles)
	model := offline.New(offline.Options{People: cat, Genres: cat.Genres()})
	p, err := pipeline.New(model, db, pipeline.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	db.Handle(memento.JobRemember, (&pipeline.Worker{Pipeline: p, Ordered: db}).Handle, memento.JobOptions{})
	db.Handle(memento.JobSummarise, (&agent.SummaryWorker{Threads: db, Messages: db, Model: model}).Handle, memento.JobOptions{})
	(&profile.Worker{Events: db, Profiles: db, Models: db, Messages: db, Resolve: cat.ResolveTitle, Catalog: cat}).Register(db)
	if err := db.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Stop(context.Background()) })
	jobs := func(s memento.Scope, thread string, m memento.Message) []memento.JobRequest {
		return []memento.JobRequest{{Kind: memento.JobRemember, Payload: memento.MessageJob{Tenant: s.Tenant, User: s.User, Thread: thread, Message: m.ID, Seq: m.Seq}}}
	}
	asm := recall.New(db, emb)
	ag := &agent.Agent{Catalog: cat, Threads: db, Model: model, Resolve: cat.ResolveTitle,
		Jobs: func(s memento.Scope, thread string, stored []memento.Message) []memento.JobRequest {
			js := agent.DefaultJobs(s, thread, stored)
			for _, m := range stored {
				js = append(js, jobs(s, thread, m)...)
			}
			return js
		}}
	srv := &mcp.Server{Store: db, Recall: asm, Agent: ag, Catalog: cat, JobsFor: jobs, EventJobs: profile.EventJobs}
	return &fixture{db: db, srv: srv}
}

// connect returns a client session to the server over an in-memory pipe.
func (f *fixture) connect(t *testing.T) *sdk.ClientSession {
	t.Helper()
	ct, st := sdk.NewInMemoryTransports()
	if _, err := f.srv.Connect(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and decodes its structured result into out, failing
// the test on a tool error.
func call(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any, out any) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s(%v): tool error %s", name, args, text(res))
	}
	if out != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: decode %s: %v", name, b, err)
		}
	}
}

// callErr calls a tool that must fail and returns its error.
func callErr(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) *memento.Error {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !res.IsError {
		t.Fatalf("%s(%v) = %s, want a tool error", name, args, text(res))
	}
	if res.StructuredContent != nil {
		t.Errorf("%s: a tool error carries structured content %v", name, res.StructuredContent)
	}
	return mcp.ParseError(text(res))
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestListTools(t *testing.T) {
	cs := newFixture(t).connect(t)
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ readOnly, destructive, idempotent bool }{
		mcp.ToolAddMemory:         {false, false, false},
		mcp.ToolSearchMemory:      {true, false, true},
		mcp.ToolGetContext:        {true, false, true},
		mcp.ToolListMemories:      {true, false, true},
		mcp.ToolUpdateMemory:      {false, true, true},
		mcp.ToolDeleteMemory:      {false, true, true},
		mcp.ToolDeleteAllMemories: {false, true, true},
		mcp.ToolRecommend:         {false, false, false},
		mcp.ToolRecordEvent:       {false, false, false},
	}
	var got []string
	for _, tl := range res.Tools {
		got = append(got, tl.Name)
		w, ok := want[tl.Name]
		if !ok {
			t.Errorf("unexpected tool %s", tl.Name)
			continue
		}
		if len(tl.Description) < 60 {
			t.Errorf("%s: description %q is too short for an agent to act on", tl.Name, tl.Description)
		}
		if tl.InputSchema == nil || tl.OutputSchema == nil {
			t.Errorf("%s: input schema %v, output schema %v; want both", tl.Name, tl.InputSchema, tl.OutputSchema)
		}
		a := tl.Annotations
		if a == nil || a.DestructiveHint == nil {
			t.Errorf("%s: annotations %+v", tl.Name, a)
			continue
		}
		if a.ReadOnlyHint != w.readOnly || *a.DestructiveHint != w.destructive || a.IdempotentHint != w.idempotent {
			t.Errorf("%s: readOnly=%v destructive=%v idempotent=%v, want %+v", tl.Name, a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint, w)
		}
		// The user is never required: a key scoped to one user names it.
		in, _ := tl.InputSchema.(map[string]any)
		req, _ := in["required"].([]any)
		if slices.Contains(req, any("user")) {
			t.Errorf("%s: user is required in %v", tl.Name, req)
		}
	}
	if len(got) != len(want) {
		t.Errorf("tools = %v, want %d", got, len(want))
	}
}

// TestToolsEndToEnd drives every tool over the protocol against the real
// store and pipeline: what add_memory queues is learned in the background,
// found by search_memory and get_context, corrected and forgotten, and
// delete_all_memories leaves nothing of the user.
func TestToolsEndToEnd(t *testing.T) {
	f := newFixture(t)
	cs := f.connect(t)
	user := map[string]any{"user": "ana"}
	with := func(kv ...any) map[string]any {
		m := map[string]any{"user": "ana"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}

	var added mcp.AddMemoryOutput
	call(t, cs, mcp.ToolAddMemory, with("text", "I love crime thrillers like Heat.", "id", "m1"), &added)
	if added.MessageID != "m1" || !added.Queued || added.Thread != mcp.DefaultThread {
		t.Errorf("add_memory = %+v, want m1 queued in thread %s", added, mcp.DefaultThread)
	}
	call(t, cs, mcp.ToolAddMemory, with("text", "I watch films on Netflix.", "thread", "t1"), &added)
	if added.MessageID == "" || added.Thread != "t1" {
		t.Errorf("add_memory = %+v", added)
	}
	// The same id again stores nothing and queues nothing.
	call(t, cs, mcp.ToolAddMemory, with("text", "I love crime thrillers like Heat.", "id", "m1"), &added)
	if added.Queued {
		t.Errorf("repeated add_memory queued again: %+v", added)
	}
	sqlitetest.WaitForJobs(t, f.db, 20*time.Second)

	var found mcp.SearchMemoryOutput
	call(t, cs, mcp.ToolSearchMemory, with("query", "crime thrillers", "k", 5), &found)
	if len(found.Items) == 0 {
		t.Fatal("search_memory found nothing")
	}
	top := found.Items[0]
	if !strings.Contains(strings.ToLower(top.Text), "thriller") || top.Kind == "" || len(top.Scores) == 0 || len(top.Sources) == 0 {
		t.Errorf("top item = %+v, want the thriller memory with kind, scores and sources", top)
	}

	var doc recall.Context
	call(t, cs, mcp.ToolGetContext, with("query", "what to watch", "thread", "t1"), &doc)
	if doc.User != "ana" || doc.Text == "" || doc.Tokens == 0 || len(doc.Attributes) == 0 || doc.ActiveContext == nil {
		t.Errorf("get_context = %+v", doc)
	}

	var mems mcp.MemoriesOutput
	call(t, cs, mcp.ToolListMemories, user, &mems)
	if len(mems.Memories) == 0 {
		t.Fatal("list_memories is empty after the pipeline ran")
	}
	for _, m := range mems.Memories {
		if len(m.Sources) == 0 {
			t.Errorf("memory %s has no sources", m.ID)
		}
	}
	// The memory learned from m1 (its attribute is the offline model's
	// reading: GENRE or LIKES).
	var likes *memento.Memory
	for i, m := range mems.Memories {
		if slices.Contains(m.Sources, "m1") {
			likes = &mems.Memories[i]
		}
	}
	if likes == nil {
		t.Fatalf("no memory from m1 in %+v", mems.Memories)
	}
	call(t, cs, mcp.ToolListMemories, with("attribute", "PLATFORM"), &mems)
	for _, m := range mems.Memories {
		if m.Attribute != "PLATFORM" {
			t.Errorf("list_memories(attribute=PLATFORM) gave %s", m.Attribute)
		}
	}

	var upd memento.Memory
	call(t, cs, mcp.ToolUpdateMemory, with("id", likes.ID, "value", "slow-burn crime thrillers"), &upd)
	if upd.ID != likes.ID || upd.Value != "slow-burn crime thrillers" {
		t.Errorf("update_memory = %+v", upd)
	}
	call(t, cs, mcp.ToolListMemories, with("attribute", likes.Attribute, "includeHistory", true), &mems)
	if len(mems.Memories) < 2 {
		t.Errorf("history of %s = %d versions, want the edit and the old value", likes.Attribute, len(mems.Memories))
	}

	var rec agent.Response
	call(t, cs, mcp.ToolRecommend, with("thread", "t2", "message", "Recommend 2 crime thrillers."), &rec)
	if rec.Reply == "" || len(rec.Titles) == 0 || len(rec.ActiveContext.Genres) == 0 {
		t.Errorf("recommend = %+v", rec)
	}
	var ev mcp.RecordEventOutput
	call(t, cs, mcp.ToolRecordEvent, with("type", "rated", "titleId", "heat", "rating", 4.5), &ev)
	if ev.EventID == "" || !ev.Inserted {
		t.Errorf("record_event = %+v", ev)
	}
	if e := callErr(t, cs, mcp.ToolRecordEvent, with("type", "rated", "titleId", "nope", "rating", 4)); e.Code != memento.EINVALID || !strings.Contains(e.Message, "not in the catalog") {
		t.Errorf("record_event of an unknown title = %v", e)
	}

	var del mcp.DeleteMemoryOutput
	call(t, cs, mcp.ToolDeleteMemory, with("id", likes.ID), &del)
	if e := callErr(t, cs, mcp.ToolDeleteMemory, with("id", likes.ID)); e.Code != memento.ENOTFOUND {
		t.Errorf("second delete_memory = %v, want ENOTFOUND", e)
	}

	sqlitetest.WaitForJobs(t, f.db, 20*time.Second)
	var gone mcp.DeleteAllOutput
	call(t, cs, mcp.ToolDeleteAllMemories, user, &gone)
	if gone.Deleted != "ana" {
		t.Errorf("delete_all_memories = %+v", gone)
	}
	// Nothing of ana is left, through the tools or in the store.
	call(t, cs, mcp.ToolListMemories, with("includeHistory", true), &mems)
	if len(mems.Memories) != 0 {
		t.Errorf("after delete_all_memories: %d memories", len(mems.Memories))
	}
	call(t, cs, mcp.ToolSearchMemory, with("query", "crime thrillers Netflix"), &found)
	if len(found.Items) != 0 {
		t.Errorf("after delete_all_memories: search found %+v", found.Items)
	}
	sc := memento.Scope{Tenant: memento.DefaultTenant, User: "ana"}
	if ev, err := f.db.Events(t.Context(), sc); err != nil || len(ev) != 0 {
		t.Errorf("after delete_all_memories: events %v, %v", ev, err)
	}
	if _, err := f.db.ExportUser(t.Context(), sc); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("after delete_all_memories: export = %v, want ENOTFOUND", err)
	}
	if e := callErr(t, cs, mcp.ToolDeleteAllMemories, user); e.Code != memento.ENOTFOUND {
		t.Errorf("second delete_all_memories = %v, want ENOTFOUND", e)
	}
}

func TestToolErrors(t *testing.T) {
	cs := newFixture(t).connect(t)
	for _, c := range []struct {
		tool string
		args map[string]any
		code string
		in   string
	}{
		{mcp.ToolAddMemory, map[string]any{"text": "hi"}, memento.EINVALID, "user is required"},
		{mcp.ToolAddMemory, map[string]any{"user": "ana", "text": ""}, memento.EINVALID, "text"},
		{mcp.ToolAddMemory, map[string]any{"user": "ana", "text": "hi", "role": "system"}, memento.EINVALID, "role"},
		{mcp.ToolSearchMemory, map[string]any{"user": "ana", "query": "x", "k": 1000}, memento.EINVALID, "k"},
		{mcp.ToolSearchMemory, map[string]any{"user": "ana", "query": "x", "colour": "red"}, memento.EINVALID, "colour"},
		{mcp.ToolUpdateMemory, map[string]any{"user": "ana", "id": "nope", "value": "v"}, memento.ENOTFOUND, ""},
		{mcp.ToolRecommend, map[string]any{"user": "ana", "thread": "t"}, memento.EINVALID, "message"},
		{mcp.ToolRecordEvent, map[string]any{"user": "ana", "type": "rated", "titleId": "heat"}, memento.EINVALID, "value is required"},
		{mcp.ToolRecordEvent, map[string]any{"user": "ana", "type": "watched", "titleId": "heat", "watched": 0.5}, memento.EINVALID, "abandoned"},
		{mcp.ToolGetContext, map[string]any{"user": "a\tb"}, memento.EINVALID, "user"},
		{mcp.ToolGetContext, map[string]any{"user": " ana"}, memento.EINVALID, "space"},
	} {
		e := callErr(t, cs, c.tool, c.args)
		if e.Code != c.code || !strings.Contains(e.Message, c.in) {
			t.Errorf("%s(%v) = %s %q, want %s containing %q", c.tool, c.args, e.Code, e.Message, c.code, c.in)
		}
	}
}

// keyed serves the MCP handler behind a stand-in for the HTTP server's
// authentication: the X-Test-Key header names the principal a request
// carries in its context.
func keyed(t *testing.T, srv *mcp.Server, keys map[string]memento.Principal) *httptest.Server {
	t.Helper()
	h := srv.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, ok := keys[r.Header.Get("X-Test-Key")]; ok {
			r = r.WithContext(memento.WithPrincipal(r.Context(), p))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// headers adds fixed headers to every request.
type headers struct {
	h    map[string]string
	next http.RoundTripper
}

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.h {
		r.Header.Set(k, v)
	}
	return h.next.RoundTrip(r)
}

func httpSession(t *testing.T, url string, hdr map[string]string) *sdk.ClientSession {
	t.Helper()
	tr := &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: headers{hdr, http.DefaultTransport}}, MaxRetries: -1}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestPrincipalMatrix calls every tool over HTTP with keys of tenant A
// (one scoped to user a, one to the whole tenant, one read-only) about
// user b of tenant B and user b of tenant A: each gets an error or
// nothing of B, never B's data; a read key writes nothing.
func TestPrincipalMatrix(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	// B's data: a message, a memory (after the pipeline), an event.
	for _, sc := range []memento.Scope{{Tenant: "B", User: "b"}, {Tenant: "A", User: "b"}} {
		msgs := []memento.Message{{ID: "secret", Role: memento.RoleUser, Text: "I love crime thrillers like Heat, says zanzibar."}}
		if _, err := f.db.AppendMessages(ctx, sc, "t", msgs, func(m memento.Message) []memento.JobRequest {
			return f.srv.JobsFor(sc, "t", m)
		}); err != nil {
			t.Fatal(err)
		}
	}
	sqlitetest.WaitForJobs(t, f.db, 20*time.Second)
	bMems, err := f.db.Memories(ctx, memento.Scope{Tenant: "B", User: "b"}, memento.MemoryFilter{})
	if err != nil || len(bMems) == 0 {
		t.Fatalf("B's memories = %v, %v", bMems, err)
	}
	bID := bMems[0].ID

	ts := keyed(t, f.srv, map[string]memento.Principal{
		"userA":   {KeyID: "k1", Tenant: "A", User: "a", Role: memento.KeyWrite},
		"tenantA": {KeyID: "k2", Tenant: "A", Role: memento.KeyWrite},
		"readA":   {KeyID: "k3", Tenant: "A", User: "a", Role: memento.KeyRead},
	})
	args := func(tool, user string) map[string]any {
		m := map[string]any{}
		if user != "" {
			m["user"] = user
		}
		switch tool {
		case mcp.ToolAddMemory:
			m["text"] = "I like comedies."
		case mcp.ToolSearchMemory:
			m["query"] = "crime thrillers"
		case mcp.ToolGetContext:
			m["query"] = "crime thrillers"
			m["thread"] = "t"
		case mcp.ToolUpdateMemory:
			m["id"], m["value"] = bID, "overwritten"
		case mcp.ToolDeleteMemory:
			m["id"] = bID
		case mcp.ToolRecommend:
			m["thread"], m["message"] = "t", "Recommend 2 crime thrillers."
		case mcp.ToolRecordEvent:
			m["type"], m["titleId"] = "watched", "heat"
		}
		return m
	}
	tools := []string{mcp.ToolAddMemory, mcp.ToolSearchMemory, mcp.ToolGetContext, mcp.ToolListMemories, mcp.ToolUpdateMemory,
		mcp.ToolDeleteMemory, mcp.ToolRecommend, mcp.ToolRecordEvent, mcp.ToolDeleteAllMemories}
	leaks := func(t *testing.T, tool string, res *sdk.CallToolResult) {
		t.Helper()
		if s := text(res); strings.Contains(s, "zanzibar") || strings.Contains(s, bID) && tool != mcp.ToolDeleteMemory && tool != mcp.ToolUpdateMemory {
			t.Errorf("%s leaked B's data: %s", tool, s)
		}
	}

	for _, tc := range []struct {
		name   string
		hdr    map[string]string
		user   string
		code   string // the error every tool gets; "" when the call reaches an empty scope
		writes bool   // whether write tools succeed
	}{
		{"user key, other user", map[string]string{"X-Test-Key": "userA"}, "b", memento.EFORBIDDEN, false},
		{"user key, other tenant's header", map[string]string{"X-Test-Key": "userA", "X-Memento-Tenant": "B"}, "", memento.EFORBIDDEN, false},
		{"tenant key, other tenant's header", map[string]string{"X-Test-Key": "tenantA", "X-Memento-Tenant": "B"}, "b", memento.EFORBIDDEN, false},
		{"read key, own user", map[string]string{"X-Test-Key": "readA"}, "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := httpSession(t, ts.URL, tc.hdr)
			for _, tool := range tools {
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args(tool, tc.user)})
				if err != nil {
					t.Fatalf("%s: %v", tool, err)
				}
				leaks(t, tool, res)
				readOnly := tool == mcp.ToolSearchMemory || tool == mcp.ToolGetContext || tool == mcp.ToolListMemories
				want := tc.code
				if want == "" && !readOnly && !tc.writes {
					want = memento.EFORBIDDEN
				}
				if want == "" {
					if res.IsError {
						t.Errorf("%s: %s, want an answer", tool, text(res))
					}
					continue
				}
				if !res.IsError {
					t.Errorf("%s = %s, want %s", tool, text(res), want)
					continue
				}
				if e := mcp.ParseError(text(res)); e.Code != want {
					t.Errorf("%s = %s %q, want %s", tool, e.Code, e.Message, want)
				}
			}
		})
	}

	// A tenant key reaches user b of its own tenant, never tenant B's b:
	// B's memory id is unknown there and B's message is not found.
	t.Run("tenant key, same user id in another tenant", func(t *testing.T) {
		cs := httpSession(t, ts.URL, map[string]string{"X-Test-Key": "tenantA"})
		for _, tool := range []string{mcp.ToolUpdateMemory, mcp.ToolDeleteMemory} {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args(tool, "b")})
			if err != nil {
				t.Fatal(err)
			}
			if e := mcp.ParseError(text(res)); !res.IsError || e.Code != memento.ENOTFOUND {
				t.Errorf("%s of B's memory with a key of A = %s, want ENOTFOUND", tool, text(res))
			}
		}
		var mems mcp.MemoriesOutput
		call(t, cs, mcp.ToolListMemories, map[string]any{"user": "b"}, &mems)
		for _, m := range mems.Memories {
			if m.ID == bID {
				t.Errorf("list_memories with a key of A shows B's memory %s", bID)
			}
		}
	})

	// The user key names its user when the call does not.
	t.Run("user key, user left out", func(t *testing.T) {
		cs := httpSession(t, ts.URL, map[string]string{"X-Test-Key": "userA"})
		var added mcp.AddMemoryOutput
		call(t, cs, mcp.ToolAddMemory, map[string]any{"text": "I like comedies."}, &added)
		msgs, err := f.db.Messages(ctx, memento.Scope{Tenant: "A", User: "a"}, mcp.DefaultThread, 0, 0)
		if err != nil || len(msgs) != 1 || msgs[0].ID != added.MessageID {
			t.Errorf("A/a's messages = %v, %v; want the one added", msgs, err)
		}
	})

	// B's data is untouched by all of it.
	after, err := f.db.Memories(ctx, memento.Scope{Tenant: "B", User: "b"}, memento.MemoryFilter{})
	if err != nil || len(after) != len(bMems) || after[0].Value != bMems[0].Value {
		t.Errorf("B's memories after the matrix = %v, %v; want %v", after, err, bMems)
	}
	if msgs, err := f.db.Messages(ctx, memento.Scope{Tenant: "B", User: "b"}, "t", 0, 0); err != nil || len(msgs) != 1 {
		t.Errorf("B's messages after the matrix = %v, %v", msgs, err)
	}
}

// TestOpenHTTPTenantHeader: without a key the X-Memento-Tenant header
// names the tenant, as on the REST API in open mode.
func TestOpenHTTPTenantHeader(t *testing.T) {
	f := newFixture(t)
	ts := keyed(t, f.srv, nil)
	cs := httpSession(t, ts.URL, map[string]string{"X-Memento-Tenant": "acme"})
	call(t, cs, mcp.ToolAddMemory, map[string]any{"user": "ana", "text": "I like comedies."}, nil)
	if msgs, err := f.db.Messages(t.Context(), memento.Scope{Tenant: "acme", User: "ana"}, mcp.DefaultThread, 0, 0); err != nil || len(msgs) != 1 {
		t.Errorf("acme/ana's messages = %v, %v", msgs, err)
	}
}

// lagging is a queue that trails the log by a fixed age.
type lagging struct{ oldest time.Duration }

func (l lagging) QueueLag(context.Context) (*memento.QueueLags, error) {
	return &memento.QueueLags{At: time.Now(), Waiting: 7, OldestSeconds: l.oldest.Seconds()}, nil
}

// TestAddMemoryBackpressure: while memory formation lags past MaxLag,
// add_memory is refused with EUNAVAILABLE and stores nothing, as the
// REST append is.
func TestAddMemoryBackpressure(t *testing.T) {
	f := newFixture(t)
	f.srv.Lag, f.srv.MaxLag = lagging{10 * time.Minute}, 5*time.Minute
	cs := f.connect(t)
	e := callErr(t, cs, mcp.ToolAddMemory, map[string]any{"user": "ana", "text": "I like comedies."})
	if e.Code != memento.EUNAVAILABLE || !strings.Contains(e.Message, "retry after") {
		t.Errorf("add_memory while lagging = %v, want EUNAVAILABLE saying when to retry", e)
	}
	if _, err := f.db.Messages(t.Context(), memento.Scope{Tenant: memento.DefaultTenant, User: "ana"}, mcp.DefaultThread, 0, 0); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("messages after a refused add_memory: %v, want none (ENOTFOUND)", err)
	}
	// Reads go on.
	call(t, cs, mcp.ToolListMemories, map[string]any{"user": "ana"}, nil)

	g := newFixture(t)
	g.srv.Lag, g.srv.MaxLag = lagging{time.Minute}, 5*time.Minute
	call(t, g.connect(t), mcp.ToolAddMemory, map[string]any{"user": "ana", "text": "I like comedies."}, nil)
}
