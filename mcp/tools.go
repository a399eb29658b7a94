package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/profile"
	"github.com/memento-ai/memento/recall"
)

// DefaultThread is the thread add_memory writes to when the call names
// none.
const DefaultThread = "mcp"

// The tools' names, in the order tools/list shows them.
const (
	ToolAddMemory         = "add_memory"
	ToolSearchMemory      = "search_memory"
	ToolGetContext        = "get_context"
	ToolListMemories      = "list_memories"
	ToolUpdateMemory      = "update_memory"
	ToolDeleteMemory      = "delete_memory"
	ToolDeleteAllMemories = "delete_all_memories"
	ToolRecommend         = "recommend"
	ToolRecordEvent       = "record_event"
)

// AddMemoryInput is the input of add_memory.
type AddMemoryInput struct {
	User   string       `json:"user,omitempty" jsonschema:"Id of the user the memory belongs to. May be left out when the API key is scoped to one user."`
	Text   string       `json:"text" jsonschema:"What was said, in the speaker's own words, such as 'I love slow-burn thrillers but can't stand gore'."`
	Thread string       `json:"thread,omitempty" jsonschema:"Conversation the message belongs to (default mcp). Recall can be narrowed to it later."`
	Role   memento.Role `json:"role,omitempty" jsonschema:"Who said it: user (default) or assistant. Only the user's messages become attribute memories."`
	ID     string       `json:"id,omitempty" jsonschema:"Your own id for the message. Sending the same id again stores nothing new, so a retried call is safe."`
}

// AddMemoryOutput is the result of add_memory.
type AddMemoryOutput struct {
	MessageID string `json:"messageId" jsonschema:"Id of the stored message; memories learned from it name it in their sources."`
	Thread    string `json:"thread" jsonschema:"Thread the message was stored in."`
	Seq       int64  `json:"seq" jsonschema:"Position of the message in its thread."`
	Queued    bool   `json:"queued" jsonschema:"True when the message is new and its background jobs (extraction, preferences, recall index) are queued; false when it was stored before."`
}

// SearchMemoryInput is the input of search_memory.
type SearchMemoryInput struct {
	User   string `json:"user,omitempty" jsonschema:"Id of the user the memory belongs to. May be left out when the API key is scoped to one user."`
	Query  string `json:"query" jsonschema:"What to recall, in plain words, such as 'what genres does she avoid'."`
	K      int    `json:"k,omitempty" jsonschema:"How many items to return, 1 to 100 (default 10)."`
	Thread string `json:"thread,omitempty" jsonschema:"Thread the question comes from; its messages and context weigh in."`
}

// SearchMemoryOutput is the result of search_memory.
type SearchMemoryOutput struct {
	Items []memento.RecallItem `json:"items" jsonschema:"Relevant memories, preferences and past messages, best first, each with its kind, text, score, score breakdown (bm25, vector, recency, weight) and the ids of the messages it came from."`
}

// GetContextInput is the input of get_context.
type GetContextInput struct {
	User   string `json:"user,omitempty" jsonschema:"Id of the user the memory belongs to. May be left out when the API key is scoped to one user."`
	Thread string `json:"thread,omitempty" jsonschema:"Thread the prompt is for: adds its active search context and latest summary."`
	Query  string `json:"query,omitempty" jsonschema:"What the prompt is about; relevant memories and messages are ranked against it."`
	K      int    `json:"k,omitempty" jsonschema:"How many relevant items, 1 to 100 (default 10)."`
}

// ListMemoriesInput is the input of list_memories.
type ListMemoriesInput struct {
	User           string `json:"user,omitempty" jsonschema:"Id of the user the memory belongs to. May be left out when the API key is scoped to one user."`
	Attribute      string `json:"attribute,omitempty" jsonschema:"Only memories of this attribute, such as LIKES, DISLIKES, FAVORITE, PLATFORM or GENRE."`
	IncludeHistory bool   `json:"includeHistory,omitempty" jsonschema:"Also list values that were superseded (they carry validTo)."`
}

// MemoriesOutput is the result of list_memories.
type MemoriesOutput struct {
	Memories []memento.Memory `json:"memories" jsonschema:"The user's memories: current semantic values by attribute, then episodes, each with its sources."`
}

// UpdateMemoryInput is the input of update_memory.
type UpdateMemoryInput struct {
	User  string `json:"user,omitempty" jsonschema:"Id of the user the memory belongs to. May be left out when the API key is scoped to one user."`
	ID    string `json:"id" jsonschema:"Id of the memory, as list_memories shows it."`
	Value string `json:"value" jsonschema:"The corrected value. The old value is kept in the memory's history."`
}

// DeleteMemoryInput is the input of delete_memory.
type DeleteMemoryInput struct {
	User string `json:"user,omitempty" jsonschema:"Id of the user the memory belongs to. May be left out when the API key is scoped to one user."`
	ID   string `json:"id" jsonschema:"Id of the memory, as list_memories shows it."`
}

// DeleteMemoryOutput is the result of delete_memory.
type DeleteMemoryOutput struct {
	Deleted string `json:"deleted" jsonschema:"Id of the memory forgotten, with the versions it superseded."`
}

// DeleteAllInput is the input of delete_all_memories.
type DeleteAllInput struct {
	User string `json:"user,omitempty" jsonschema:"Id of the user to forget. May be left out when the API key is scoped to one user."`
}

// DeleteAllOutput is the result of delete_all_memories.
type DeleteAllOutput struct {
	Deleted string `json:"deleted" jsonschema:"Id of the user forgotten."`
}

// RecommendInput is the input of recommend.
type RecommendInput struct {
	User    string `json:"user,omitempty" jsonschema:"Id of the user the memory belongs to. May be left out when the API key is scoped to one user."`
	Thread  string `json:"thread" jsonschema:"Conversation id; follow-ups in one thread refine its search context ('older', 'not those')."`
	Message string `json:"message" jsonschema:"The user's request, such as 'a funny heist movie from the 2000s'."`
}

// RecordEventInput is the input of record_event.
type RecordEventInput struct {
	User    string   `json:"user,omitempty" jsonschema:"Id of the user the memory belongs to. May be left out when the API key is scoped to one user."`
	Type    string   `json:"type" jsonschema:"What the user did with the title."`
	TitleID string   `json:"titleId" jsonschema:"Catalog id of the title, as recommend returns it (such as wiki:Heat_(1995_film))."`
	Rating  *float64 `json:"rating,omitempty" jsonschema:"The rating, 0.5 to 5: required for rated, left out otherwise."`
	Watched *float64 `json:"watched,omitempty" jsonschema:"For abandoned only: the fraction watched, 0 to 1."`
	ID      string   `json:"id,omitempty" jsonschema:"Your own id for the event; sending it again records nothing new."`
	At      string   `json:"at,omitempty" jsonschema:"When it happened, RFC 3339 such as 2025-01-02T20:00:00Z (default now)."`
}

// RecordEventOutput is the result of record_event.
type RecordEventOutput struct {
	EventID  string `json:"eventId" jsonschema:"Id of the event."`
	Inserted bool   `json:"inserted" jsonschema:"False when an event of this id was recorded before."`
}

// schemaOf infers the schema of T and lets edit refine its properties.
func schemaOf[T any](edit func(props map[string]*jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: schema of %T: %v", *new(T), err))
	}
	if edit != nil {
		edit(s.Properties)
	}
	return s
}

func kRange(p *jsonschema.Schema) {
	p.Minimum, p.Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(float64(recall.MaxK))
}

func notEmpty(p *jsonschema.Schema) { p.MinLength = jsonschema.Ptr(1) }

// hints returns tool annotations.
func hints(title string, readOnly, destructive, idempotent bool) *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{Title: title, ReadOnlyHint: readOnly, DestructiveHint: &destructive, IdempotentHint: idempotent, OpenWorldHint: new(bool)}
}

// addTools registers every tool on srv.
func (s *Server) addTools(srv *sdk.Server) {
	srv.AddReceivingMiddleware(s.errorShape)

	sdk.AddTool(srv, &sdk.Tool{
		Name: ToolAddMemory, Title: "Remember a message",
		Description: "Store something a user (or you) said so Memento can remember it. Returns at once with the message id: " +
			"facts, tastes and preferences are extracted in the background and show in search_memory and list_memories a moment later. " +
			"Send the user's own words, one message per call; give an id to make a retried call safe.",
		// Not idempotent: without an id, each call stores a new message.
		Annotations: hints("Remember a message", false, false, false),
		InputSchema: schemaOf[AddMemoryInput](func(p map[string]*jsonschema.Schema) {
			notEmpty(p["text"])
			p["role"].Enum = []any{string(memento.RoleUser), string(memento.RoleAssistant)}
		}),
	}, tool(s, ToolAddMemory, write, func(in AddMemoryInput) string { return in.User }, s.addMemory))

	sdk.AddTool(srv, &sdk.Tool{
		Name: ToolSearchMemory, Title: "Search memory",
		Description: "Recall what Memento knows about a user that is relevant to a query: attribute memories, preferences and past messages, best first, " +
			"each with its kind, score breakdown and the messages it came from. Use it before answering a user. No language-model call; fast.",
		Annotations: hints("Search memory", true, false, true),
		InputSchema: schemaOf[SearchMemoryInput](func(p map[string]*jsonschema.Schema) {
			notEmpty(p["query"])
			kRange(p["k"])
		}),
	}, tool(s, ToolSearchMemory, read, func(in SearchMemoryInput) string { return in.User }, s.searchMemory))

	sdk.AddTool(srv, &sdk.Tool{
		Name: ToolGetContext, Title: "Get a user's context",
		Description: "Assemble everything a prompt needs about a user: the thread's active search context and latest summary, the user's current attributes, " +
			"and the memories most relevant to the query, with a rendered text block (field text) ready to put into a prompt and its token estimate. " +
			"The same document as GET /v1/users/{user}/context.",
		Annotations: hints("Get a user's context", true, false, true),
		InputSchema: schemaOf[GetContextInput](func(p map[string]*jsonschema.Schema) { kRange(p["k"]) }),
	}, tool(s, ToolGetContext, read, func(in GetContextInput) string { return in.User }, s.getContext))

	sdk.AddTool(srv, &sdk.Tool{
		Name: ToolListMemories, Title: "List memories",
		Description: "List what the attribute memory keeps about a user: one current value per attribute (LIKES, DISLIKES, PLATFORM, ...) and episodes, " +
			"each with its id, value, validity and source messages. Use it to show a user what is remembered, or to find the id to update or delete.",
		Annotations: hints("List memories", true, false, true),
		InputSchema: schemaOf[ListMemoriesInput](nil),
	}, tool(s, ToolListMemories, read, func(in ListMemoriesInput) string { return in.User }, s.listMemories))

	sdk.AddTool(srv, &sdk.Tool{
		Name: ToolUpdateMemory, Title: "Correct a memory",
		Description: "Replace the value of one memory when the user corrects it. A current value keeps its id and its old value joins its history; " +
			"a superseded value cannot be edited (ECONFLICT): edit the current one.",
		Annotations: hints("Correct a memory", false, true, true),
		InputSchema: schemaOf[UpdateMemoryInput](func(p map[string]*jsonschema.Schema) { notEmpty(p["id"]); notEmpty(p["value"]) }),
	}, tool(s, ToolUpdateMemory, write, func(in UpdateMemoryInput) string { return in.User }, s.updateMemory))

	sdk.AddTool(srv, &sdk.Tool{
		Name: ToolDeleteMemory, Title: "Forget a memory",
		Description: "Forget one memory (and, for an attribute value, the versions it superseded) when the user asks you to. ENOTFOUND when there is no such memory.",
		Annotations: hints("Forget a memory", false, true, true),
		InputSchema: schemaOf[DeleteMemoryInput](func(p map[string]*jsonschema.Schema) { notEmpty(p["id"]) }),
	}, tool(s, ToolDeleteMemory, write, func(in DeleteMemoryInput) string { return in.User }, s.deleteMemory))

	sdk.AddTool(srv, &sdk.Tool{
		Name: ToolDeleteAllMemories, Title: "Forget a user",
		Description: "Forget everything about a user: threads, messages, summaries, events, memories, preferences, profile and pending jobs. " +
			"Only when the user asks to be forgotten; it cannot be undone. ENOTFOUND when the user is unknown.",
		Annotations: hints("Forget a user", false, true, true),
		InputSchema: schemaOf[DeleteAllInput](nil),
	}, tool(s, ToolDeleteAllMemories, write, func(in DeleteAllInput) string { return in.User }, s.deleteAll))

	sdk.AddTool(srv, &sdk.Tool{
		Name: ToolRecommend, Title: "Recommend films and series",
		Description: "Ask Memento's recommendation agent for films or TV series. It reads the user's memory and the thread's context, searches the catalog, " +
			"and answers with a reply, titles with reasons, and the activeContext it used; follow-ups in the same thread refine it ('only movies', 'older', 'not those'). " +
			"The turn is stored and learned from like add_memory.",
		Annotations: hints("Recommend films and series", false, false, false),
		InputSchema: schemaOf[RecommendInput](func(p map[string]*jsonschema.Schema) { notEmpty(p["thread"]); notEmpty(p["message"]) }),
	}, tool(s, ToolRecommend, write, func(in RecommendInput) string { return in.User }, s.recommend))

	sdk.AddTool(srv, &sdk.Tool{
		Name: ToolRecordEvent, Title: "Record what a user did",
		Description: "Record that a user watched, rated, liked, disliked, watchlisted, skipped, abandoned or finished a catalog title. " +
			"The user's profile (preferred genres, runtime, era) is learned from events in the background and shapes later recommendations.",
		// Not idempotent: without an id, each call records a new event.
		Annotations: hints("Record what a user did", false, false, false),
		InputSchema: schemaOf[RecordEventInput](func(p map[string]*jsonschema.Schema) {
			types := make([]any, len(memento.EventTypes))
			for i, t := range memento.EventTypes {
				types[i] = string(t)
			}
			p["type"].Enum = types
			notEmpty(p["titleId"])
			p["rating"].Minimum, p["rating"].Maximum = jsonschema.Ptr(0.5), jsonschema.Ptr(5.0)
			p["watched"].Minimum, p["watched"].Maximum = jsonschema.Ptr(0.0), jsonschema.Ptr(1.0)
			p["at"].Format = "date-time"
		}),
	}, tool(s, ToolRecordEvent, write, func(in RecordEventInput) string { return in.User }, s.recordEvent))
}

// tool adapts a handler of one user's data to the SDK: it resolves and
// checks the scope, runs fn, tells the hooks about a write and renders an
// error as Memento's error document.
func tool[In, Out any](s *Server, name string, a access, user func(In) string, fn func(ctx context.Context, sc memento.Scope, in In) (*Out, error)) sdk.ToolHandlerFor[In, *Out] {
	return func(ctx context.Context, req *sdk.CallToolRequest, in In) (*sdk.CallToolResult, *Out, error) {
		sc, err := s.scope(ctx, req, user(in), a)
		if err != nil {
			return nil, nil, s.fail(ctx, name, err)
		}
		out, err := fn(ctx, sc, in)
		if err != nil {
			return nil, nil, s.fail(ctx, name, err)
		}
		if a == write && name != ToolDeleteAllMemories {
			s.changed(sc)
		}
		return nil, out, nil
	}
}

// errorShape makes every tool error an error document: the SDK's own
// (arguments that fail the input schema) become EINVALID.
func (s *Server) errorShape(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		r, ok := res.(*sdk.CallToolResult)
		if err != nil || !ok || !r.IsError {
			return res, err
		}
		if _, ok := r.GetError().(*toolError); ok {
			return res, err
		}
		msg := "the tool call failed"
		if len(r.Content) > 0 {
			if t, ok := r.Content[0].(*sdk.TextContent); ok {
				msg = t.Text
			}
		}
		msg = strings.TrimPrefix(msg, `validating "arguments": `)
		doc := &toolError{ErrorDocument{ErrorDetail{Code: memento.EINVALID, Message: "invalid arguments: " + msg}}}
		r.Content = []sdk.Content{&sdk.TextContent{Text: doc.Error()}}
		r.StructuredContent = nil
		return r, nil
	}
}

func (s *Server) addMemory(ctx context.Context, sc memento.Scope, in AddMemoryInput) (*AddMemoryOutput, error) {
	if s.Store == nil {
		return nil, notConfigured("the message log")
	}
	thread := strings.TrimSpace(in.Thread)
	if thread == "" {
		thread = DefaultThread
	}
	if err := memento.CheckID("thread", thread); err != nil {
		return nil, err
	}
	role := in.Role
	if role == "" {
		role = memento.RoleUser
	}
	if !role.Valid() {
		return nil, memento.Errorf(memento.EINVALID, "role must be %q or %q, got %q", memento.RoleUser, memento.RoleAssistant, role)
	}
	if strings.TrimSpace(in.Text) == "" {
		return nil, memento.Errorf(memento.EINVALID, "text must not be empty")
	}
	if err := memento.CheckOptionalID("id", in.ID); err != nil {
		return nil, err
	}
	if err := s.checkLag(ctx); err != nil {
		return nil, err
	}
	var jobs func(memento.Message) []memento.JobRequest
	if s.JobsFor != nil {
		jobs = func(m memento.Message) []memento.JobRequest { return s.JobsFor(sc, thread, m) }
	}
	res, err := s.Store.AppendMessages(ctx, sc, thread, []memento.Message{{ID: in.ID, Role: role, Text: in.Text}}, jobs)
	if err != nil {
		return nil, err
	}
	if len(res.Messages) != 1 {
		return nil, fmt.Errorf("add memory: the store returned %d messages for one", len(res.Messages))
	}
	m := res.Messages[0]
	return &AddMemoryOutput{MessageID: m.ID, Thread: thread, Seq: m.Seq, Queued: res.Inserted == 1}, nil
}

func (s *Server) searchMemory(ctx context.Context, sc memento.Scope, in SearchMemoryInput) (*SearchMemoryOutput, error) {
	if s.Recall == nil {
		return nil, notConfigured("recall")
	}
	if strings.TrimSpace(in.Query) == "" {
		return nil, memento.Errorf(memento.EINVALID, "query must not be empty")
	}
	items, err := s.Recall.Recall(ctx, memento.RecallQuery{Scope: sc, Thread: in.Thread, Query: in.Query, K: in.K})
	if err != nil {
		return nil, err
	}
	return &SearchMemoryOutput{Items: nonNil(items)}, nil
}

func (s *Server) getContext(ctx context.Context, sc memento.Scope, in GetContextInput) (*recall.Context, error) {
	if s.Recall == nil {
		return nil, notConfigured("context assembly")
	}
	c, err := s.Recall.Assemble(ctx, memento.RecallQuery{Scope: sc, Thread: in.Thread, Query: in.Query, K: in.K})
	if err != nil {
		return nil, err
	}
	c.Attributes, c.Items = nonNil(c.Attributes), nonNil(c.Items)
	return c, nil
}

func (s *Server) listMemories(ctx context.Context, sc memento.Scope, in ListMemoriesInput) (*MemoriesOutput, error) {
	if s.Store == nil {
		return nil, notConfigured("attribute memory")
	}
	mems, err := s.Store.Memories(ctx, sc, memento.MemoryFilter{Attribute: in.Attribute, All: in.IncludeHistory})
	if err != nil {
		return nil, err
	}
	return &MemoriesOutput{Memories: nonNil(mems)}, nil
}

func (s *Server) updateMemory(ctx context.Context, sc memento.Scope, in UpdateMemoryInput) (*memento.Memory, error) {
	if s.Store == nil {
		return nil, notConfigured("attribute memory")
	}
	m, err := s.Store.UpdateMemory(ctx, sc, in.ID, memento.MemoryUpdate{Value: in.Value})
	if err != nil {
		return nil, err
	}
	if s.Reindex != nil {
		// As the REST route does: a failed embedding leaves the memory to
		// keyword recall, it does not fail the edit.
		if err := s.Reindex(ctx, sc); err != nil {
			s.Logger.WarnContext(ctx, "reindex after a memory edit", "err", err)
		}
	}
	m.Vector, m.Embedder = nil, ""
	m.Sources = nonNil(m.Sources)
	return m, nil
}

func (s *Server) deleteMemory(ctx context.Context, sc memento.Scope, in DeleteMemoryInput) (*DeleteMemoryOutput, error) {
	if s.Store == nil {
		return nil, notConfigured("attribute memory")
	}
	if err := s.Store.DeleteMemory(ctx, sc, in.ID); err != nil {
		return nil, err
	}
	return &DeleteMemoryOutput{Deleted: in.ID}, nil
}

func (s *Server) deleteAll(ctx context.Context, sc memento.Scope, _ DeleteAllInput) (*DeleteAllOutput, error) {
	if s.Store == nil {
		return nil, notConfigured("the store")
	}
	if err := s.Store.DeleteUser(ctx, sc); err != nil {
		return nil, err
	}
	if s.Hooks.Deleted != nil {
		s.Hooks.Deleted(sc)
	}
	s.changed(sc)
	return &DeleteAllOutput{Deleted: sc.User}, nil
}

func (s *Server) recommend(ctx context.Context, sc memento.Scope, in RecommendInput) (*agent.Response, error) {
	if s.Agent == nil {
		return nil, notConfigured("the recommendation agent")
	}
	resp, err := s.Agent.Turn(ctx, sc.Tenant, agent.Request{User: sc.User, Thread: in.Thread, Message: in.Message})
	if err != nil {
		return nil, err
	}
	resp.Titles, resp.Notes, resp.Memory.Used = nonNil(resp.Titles), nonNil(resp.Notes), nonNil(resp.Memory.Used)
	for i := range resp.Titles {
		resp.Titles[i].Why = nonNil(resp.Titles[i].Why)
	}
	return resp, nil
}

func (s *Server) recordEvent(ctx context.Context, sc memento.Scope, in RecordEventInput) (*RecordEventOutput, error) {
	if s.Store == nil {
		return nil, notConfigured("events")
	}
	e := memento.Event{ID: in.ID, Type: memento.EventType(in.Type), TitleID: in.TitleID}
	switch {
	case in.Rating != nil && in.Watched != nil:
		return nil, memento.Errorf(memento.EINVALID, "give rating (for rated) or watched (for abandoned), not both")
	case in.Rating != nil:
		e.Value = in.Rating
	case in.Watched != nil:
		if e.Type != memento.EventAbandoned {
			return nil, memento.Errorf(memento.EINVALID, "watched is the fraction of an abandoned title; leave it out for %s", e.Type)
		}
		e.Value = in.Watched
	}
	if in.At != "" {
		at, err := time.Parse(time.RFC3339, in.At)
		if err != nil {
			return nil, memento.Errorf(memento.EINVALID, "at must be an RFC 3339 time such as 2025-01-02T20:00:00Z, got %q", in.At)
		}
		e.At = at
	}
	if e.ID == "" {
		e.ID = newEventID()
	}
	if err := profile.CheckEvents(ctx, []memento.Event{e}, s.Catalog); err != nil {
		return nil, memento.Errorf(memento.ErrorCode(err), "%s", strings.Replace(memento.ErrorMessage(err), "events[0].", "", 1))
	}
	var jobs func(memento.Event) []memento.JobRequest
	if s.EventJobs != nil {
		jobs = s.EventJobs(sc)
	}
	n, err := s.Store.AddEvents(ctx, sc, []memento.Event{e}, jobs)
	if err != nil {
		return nil, err
	}
	return &RecordEventOutput{EventID: e.ID, Inserted: n == 1}, nil
}

// newEventID makes the id of an event the call gave none, so the result
// can name it.
func newEventID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "evt_" + hex.EncodeToString(b[:])
}

// lagTTL is how long a reading of the queue's lag is reused.
const lagTTL = time.Second

// checkLag refuses a new message while memory formation trails the
// message log by more than MaxLag, as the REST API's appends are refused.
// Errors: EUNAVAILABLE.
func (s *Server) checkLag(ctx context.Context) error {
	if s.Lag == nil || s.MaxLag <= 0 {
		return nil
	}
	s.lagMu.Lock()
	if s.lagAt.IsZero() || time.Since(s.lagAt) >= lagTTL {
		s.lagVal, s.lagErr = s.Lag.QueueLag(ctx)
		s.lagAt = time.Now()
	}
	lag, err := s.lagVal, s.lagErr
	s.lagMu.Unlock()
	if err != nil {
		// An unreadable lag refuses nothing: the append reports a store
		// that is down.
		s.Logger.WarnContext(ctx, "read the queue's lag", "err", err)
		return nil
	}
	behind := time.Duration(lag.OldestSeconds * float64(time.Second))
	if behind <= s.MaxLag {
		return nil
	}
	wait := min(max(time.Second, (behind-s.MaxLag)/4), time.Minute)
	return memento.Errorf(memento.EUNAVAILABLE, "memory formation is %s behind (bound %s, %d jobs waiting): nothing was stored; retry after %d s",
		behind.Round(time.Second), s.MaxLag, lag.Waiting, int((wait+time.Second-1)/time.Second))
}

func notConfigured(what string) error {
	return memento.Errorf(memento.ENOTIMPLEMENTED, "%s is not configured on this server", what)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
