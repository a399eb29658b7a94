package http

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/hygiene"
	"github.com/memento-ai/memento/recall"
)

// MaxMessagesPerRequest bounds the messages one POST to the message log
// may carry.
const MaxMessagesPerRequest = 1000

// MemoryStore is what the attribute-memory routes need of the store:
// the message log, users, memories, export and import, and the vectors of
// imported or edited memories.
type MemoryStore interface {
	memento.MessageLog
	memento.UserService
	memento.MemoryService
	ExportUser(ctx context.Context, s memento.Scope) (*memento.UserExport, error)
	ImportUser(ctx context.Context, s memento.Scope, doc *memento.UserExport) (*memento.ImportResult, error)
}

// MemoryRoutes are the dependencies of the attribute-memory routes.
type MemoryRoutes struct {
	Store MemoryStore
	// Assembler answers GET .../context.
	Assembler *recall.Assembler
	// JobsFor returns the background jobs of each newly stored message
	// (the same list agent turns enqueue).
	JobsFor func(s memento.Scope, thread string, m memento.Message) []memento.JobRequest
	// Reindex embeds what an import or an edit left without a vector; nil
	// skips it (recall then finds those by keyword).
	Reindex func(ctx context.Context, s memento.Scope) error
	// Sections are the per-user data of other components, exported and
	// imported with the user.
	Sections []memento.UserSection
	// Emotion, when set, tags each appended user message with the emotion
	// it expresses before it is stored; a message it cannot tag is stored
	// without one.
	Emotion memento.EmotionClassifier
}

// MessageIn is one message as a client posts it to the message log.
type MessageIn struct {
	ID   string       `json:"id,omitempty"`
	Role memento.Role `json:"role"`
	Text string       `json:"text"`
	At   time.Time    `json:"at,omitzero"`
}

// AppendOutput is the body of 202 from POST .../messages.
type AppendOutput struct {
	Messages   []memento.Message `json:"messages"`
	Inserted   int               `json:"inserted"`
	Duplicates int               `json:"duplicates"`
}

// UserPath is the part of every route input that names the user the
// request is about, and its tenant. It is exported because huma reads the
// parameters of exported embedded structs only.
type UserPath struct {
	TenantHeader
	User string `path:"user" doc:"User id"`
}

// scope is the scope of the request's tenant and user.
func (p UserPath) scope() memento.Scope {
	return memento.Scope{Tenant: p.tenant(), User: p.User}
}

// userInput is a route input that embeds UserPath.
type userInput interface{ scope() memento.Scope }

// userHandler adapts a handler of one user's data to huma: it hands fn the
// request's scope and renders the error fn returns.
func userHandler[I userInput, O any](s *Server, fn func(ctx context.Context, sc memento.Scope, in *I) (*O, error)) func(context.Context, *I) (*O, error) {
	return func(ctx context.Context, in *I) (*O, error) {
		out, err := fn(ctx, (*in).scope(), in)
		if err != nil {
			return nil, Error(ctx, s.Logger, err)
		}
		return out, nil
	}
}

type appendInput struct {
	UserPath
	Thread  string `path:"thread" doc:"Thread id"`
	RawBody []byte `contentType:"application/json" doc:"One message {\"id\",\"role\":\"user|assistant\",\"text\",\"at\"} or an array of them"`
}

type appendOutput struct {
	Status int
	Body   AppendOutput
}

type listMemoriesInput struct {
	UserPath
	Kind      string `query:"kind" enum:"attribute,episode" doc:"Only memories of this kind"`
	Attribute string `query:"attribute" doc:"Only memories of this attribute, such as LIKES"`
	Thread    string `query:"thread" doc:"Only memories from this thread"`
	All       bool   `query:"all" doc:"Include superseded values"`
	Limit     int    `query:"limit" minimum:"0" maximum:"10000" doc:"At most this many (0: all)"`
}

type memoriesOutput struct {
	Body struct {
		Memories []memento.Memory `json:"memories"`
	}
}

func memoriesOf(mems []memento.Memory) *memoriesOutput {
	out := &memoriesOutput{}
	out.Body.Memories = nonNilSlice(mems)
	return out
}

type memoryInput struct {
	UserPath
	ID string `path:"id" doc:"Memory id"`
}

type memoryOutput struct {
	Body *memento.Memory
}

type patchMemoryInput struct {
	UserPath
	ID   string `path:"id" doc:"Memory id"`
	Body memento.MemoryUpdate
}

type noContent struct{}

type contextInput struct {
	UserPath
	Thread string `query:"thread" doc:"Thread the prompt is for: adds its active context and latest summary"`
	Query  string `query:"query" doc:"What the prompt is about; relevant memories and messages are ranked against it"`
	K      int    `query:"k" minimum:"1" maximum:"100" default:"10" doc:"How many relevant items"`
}

type contextOutput struct {
	Body *recall.Context
}

type exportOutput struct {
	Body *memento.UserExport
}

type importInput struct {
	UserPath
	RawBody []byte `contentType:"application/json" doc:"A document GET .../export produced"`
}

type importOutput struct {
	Body *memento.ImportResult
}

type runsInput struct {
	UserPath
	Limit int `query:"limit" minimum:"0" maximum:"10000" default:"100" doc:"At most this many runs, newest first (0: all)"`
}

type runsOutput struct {
	Body struct {
		Runs []memento.MemoryRun `json:"runs"`
	}
}

type runInput struct {
	UserPath
	Message string `path:"message" doc:"Id of the message the run processed"`
}

type runOutput struct {
	Body *memento.MemoryRun
}

type modesOutput struct {
	Body struct {
		Modes map[string]string `json:"modes"`
	}
}

type setModeInput struct {
	UserPath
	Attribute string `path:"attribute" doc:"Attribute name, or * for every attribute"`
	Body      struct {
		Mode string `json:"mode" enum:"semantic,episodic," doc:"semantic or episodic; empty removes the override"`
	}
}

// RegisterMemory adds the routes of the message log and attribute memory.
func RegisterMemory(d MemoryRoutes) func(api huma.API, s *Server) {
	return func(api huma.API, s *Server) {
		tags := []string{"memory"}
		huma.Register(api, huma.Operation{
			OperationID: "appendMessages", Method: http.MethodPost, Path: "/v1/users/{user}/threads/{thread}/messages",
			Summary: "Append messages to a thread's log", Tags: tags, DefaultStatus: http.StatusAccepted, SkipValidateBody: true,
			Description: "Stores one message or an array of messages, and their background jobs (the attribute pipeline), in one transaction, and answers 202 once both are durable. A message whose client id is stored already is left as it is, so repeating a call changes nothing; a client id already used by a different message (another text, role or thread) answers 409.",
			Errors:      []int{http.StatusBadRequest, http.StatusConflict, http.StatusRequestEntityTooLarge},
		}, userHandler(s, func(ctx context.Context, sc memento.Scope, in *appendInput) (*appendOutput, error) {
			msgs, err := decodeMessages(in.RawBody)
			if err != nil {
				return nil, err
			}
			if err := memento.TagEmotions(ctx, d.Emotion, msgs); err != nil {
				s.Logger.WarnContext(ctx, "emotion of a message could not be tagged; storing it without", "err", err)
			}
			var jobs func(memento.Message) []memento.JobRequest
			if d.JobsFor != nil {
				jobs = func(m memento.Message) []memento.JobRequest { return d.JobsFor(sc, in.Thread, m) }
			}
			var times memento.WriteTimes
			res, err := d.Store.AppendMessages(memento.WithWriteTimes(ctx, &times), sc, in.Thread, msgs, jobs)
			if err != nil {
				return nil, err
			}
			s.observeWrite(times)
			return &appendOutput{Status: http.StatusAccepted, Body: AppendOutput{Messages: nonNilSlice(res.Messages), Inserted: res.Inserted, Duplicates: res.Duplicates}}, nil
		}))
		describeBody(api, "/v1/users/{user}/threads/{thread}/messages", reflect.TypeFor[MessageIn](), true)
		huma.Register(api, huma.Operation{
			OperationID: "listMemories", Method: http.MethodGet, Path: "/v1/users/{user}/memories",
			Summary: "List what the attribute memory knows about a user", Tags: tags,
			Description: "Current semantic values and episodes, or every version with all=true.",
		}, userHandler(s, func(ctx context.Context, sc memento.Scope, in *listMemoriesInput) (*memoriesOutput, error) {
			mems, err := d.Store.Memories(ctx, sc, memento.MemoryFilter{Kind: in.Kind, Attribute: in.Attribute, Thread: in.Thread, All: in.All, Limit: in.Limit})
			if err != nil {
				return nil, err
			}
			return memoriesOf(mems), nil
		}))
		huma.Register(api, huma.Operation{
			OperationID: "getMemory", Method: http.MethodGet, Path: "/v1/users/{user}/memories/{id}",
			Summary: "Get one memory", Tags: tags, Errors: []int{http.StatusNotFound},
		}, userHandler(s, func(ctx context.Context, sc memento.Scope, in *memoryInput) (*memoryOutput, error) {
			m, err := d.Store.Memory(ctx, sc, in.ID)
			if err != nil {
				return nil, err
			}
			m.Vector, m.Embedder = nil, ""
			return &memoryOutput{Body: m}, nil
		}))
		huma.Register(api, huma.Operation{
			OperationID: "updateMemory", Method: http.MethodPatch, Path: "/v1/users/{user}/memories/{id}",
			Summary: "Edit a memory's value", Tags: tags,
			Description: "A current semantic value keeps its id; its old value joins its history. A superseded value cannot be edited (409).",
			Errors:      []int{http.StatusBadRequest, http.StatusNotFound, http.StatusConflict},
		}, userHandler(s, func(ctx context.Context, sc memento.Scope, in *patchMemoryInput) (*memoryOutput, error) {
			m, err := d.Store.UpdateMemory(ctx, sc, in.ID, in.Body)
			if err != nil {
				return nil, err
			}
			d.reindex(ctx, s, sc)
			return &memoryOutput{Body: m}, nil
		}))
		huma.Register(api, huma.Operation{
			OperationID: "deleteMemory", Method: http.MethodDelete, Path: "/v1/users/{user}/memories/{id}",
			Summary: "Forget a memory (and, for a semantic value, the versions it superseded)", Tags: tags,
			DefaultStatus: http.StatusNoContent, Errors: []int{http.StatusNotFound},
		}, userHandler(s, func(ctx context.Context, sc memento.Scope, in *memoryInput) (*noContent, error) {
			if err := d.Store.DeleteMemory(ctx, sc, in.ID); err != nil {
				return nil, err
			}
			return &noContent{}, nil
		}))
		huma.Register(api, huma.Operation{
			OperationID: "memoryHistory", Method: http.MethodGet, Path: "/v1/users/{user}/memories/{id}/history",
			Summary: "List every version of a memory's attribute value, newest first", Tags: tags, Errors: []int{http.StatusNotFound},
		}, userHandler(s, func(ctx context.Context, sc memento.Scope, in *memoryInput) (*memoriesOutput, error) {
			mems, err := d.Store.MemoryHistory(ctx, sc, in.ID)
			if err != nil {
				return nil, err
			}
			return memoriesOf(mems), nil
		}))
		huma.Register(api, huma.Operation{
			OperationID: "userContext", Method: http.MethodGet, Path: "/v1/users/{user}/context",
			Summary: "Assemble everything a prompt needs about a user", Tags: tags,
			Description: "The thread's active context and latest summary, the user's current semantic attributes, and the memories and past messages most relevant to the query, ranked by BM25, embedding similarity and recency (each with its score breakdown and sources), with a rendered text block and its estimated token count. No language-model call.",
			Errors:      []int{http.StatusBadRequest},
		}, userHandler(s, func(ctx context.Context, sc memento.Scope, in *contextInput) (*contextOutput, error) {
			if d.Assembler == nil {
				return nil, memento.Errorf(memento.ENOTIMPLEMENTED, "context assembly is not configured")
			}
			c, err := d.Assembler.Assemble(ctx, memento.RecallQuery{Scope: sc, Thread: in.Thread, Query: in.Query, K: in.K})
			if err != nil {
				return nil, err
			}
			return &contextOutput{Body: c}, nil
		}))
		huma.Register(api, huma.Operation{
			OperationID: "exportUser", Method: http.MethodGet, Path: "/v1/users/{user}/export",
			Summary: "Export everything Memento keeps about a user as one JSON document", Tags: tags, Errors: []int{http.StatusNotFound},
		}, userHandler(s, func(ctx context.Context, sc memento.Scope, _ *UserPath) (*exportOutput, error) {
			doc, err := memento.ExportUserDocument(ctx, d.Store, d.Sections, sc)
			if err != nil {
				return nil, err
			}
			return &exportOutput{Body: doc}, nil
		}))
		huma.Register(api, huma.Operation{
			OperationID: "importUser", Method: http.MethodPost, Path: "/v1/users/{user}/import",
			Summary: "Import a user export under this user", Tags: tags, SkipValidateBody: true,
			Description: "Stores the document's threads, messages, summaries, events, memories, runs and sections; rows already stored (by id) are skipped, so importing twice changes nothing. A document holding text that carries instructions to the model (a memory, summary, preference, profile value or unrejected message) is refused whole with 400 naming the items.",
			Errors:      []int{http.StatusBadRequest},
		}, userHandler(s, func(ctx context.Context, sc memento.Scope, in *importInput) (*importOutput, error) {
			var doc memento.UserExport
			if err := json.Unmarshal(in.RawBody, &doc); err != nil {
				return nil, memento.Errorf(memento.EINVALID, "the body is not an export document: %v", err)
			}
			// Every text that would become memory or reach a prompt passes
			// the hygiene gate before anything is written: a document with
			// one that carries instructions is refused whole (400 naming
			// the items), so an import is never half-written.
			findings, err := hygiene.ScreenExport(&doc, hygiene.Screeners(d.Sections))
			if err != nil {
				return nil, err
			}
			if err := hygiene.Refuse("the import", findings); err != nil {
				return nil, err
			}
			res, err := memento.ImportUserDocument(ctx, d.Store, d.Sections, sc, &doc)
			if err != nil {
				return nil, err
			}
			d.reindex(ctx, s, sc)
			return &importOutput{Body: res}, nil
		}))
		describeBody(api, "/v1/users/{user}/import", reflect.TypeFor[memento.UserExport](), false)
		huma.Register(api, huma.Operation{
			OperationID: "deleteUser", Method: http.MethodDelete, Path: "/v1/users/{user}",
			Summary: "Forget everything about a user", Tags: tags, DefaultStatus: http.StatusNoContent,
			Description: "Deletes the user's threads, messages, summaries, events, memories, runs, mode overrides and pending jobs.",
			Errors:      []int{http.StatusNotFound},
		}, userHandler(s, func(ctx context.Context, sc memento.Scope, _ *UserPath) (*noContent, error) {
			if err := d.Store.DeleteUser(ctx, sc); err != nil {
				return nil, err
			}
			return &noContent{}, nil
		}))
		huma.Register(api, huma.Operation{
			OperationID: "listMemoryRuns", Method: http.MethodGet, Path: "/v1/users/{user}/runs",
			Summary: "List the attribute pipeline's runs over a user's messages, newest first", Tags: tags,
		}, userHandler(s, func(ctx context.Context, sc memento.Scope, in *runsInput) (*runsOutput, error) {
			runs, err := d.Store.MemoryRuns(ctx, sc, in.Limit)
			if err != nil {
				return nil, err
			}
			out := &runsOutput{}
			out.Body.Runs = nonNilSlice(runs)
			return out, nil
		}))
		huma.Register(api, huma.Operation{
			OperationID: "getMemoryRun", Method: http.MethodGet, Path: "/v1/users/{user}/runs/{message}",
			Summary: "Get the trace of the pipeline run over a message", Tags: tags, Errors: []int{http.StatusNotFound},
		}, userHandler(s, func(ctx context.Context, sc memento.Scope, in *runInput) (*runOutput, error) {
			run, err := d.Store.MemoryRun(ctx, sc, in.Message)
			if err != nil {
				return nil, err
			}
			return &runOutput{Body: run}, nil
		}))
		huma.Register(api, huma.Operation{
			OperationID: "listMemoryModes", Method: http.MethodGet, Path: "/v1/users/{user}/memory-modes",
			Summary: "List a user's overrides of attribute modes", Tags: tags,
		}, userHandler(s, func(ctx context.Context, sc memento.Scope, _ *UserPath) (*modesOutput, error) {
			return d.modes(ctx, sc)
		}))
		huma.Register(api, huma.Operation{
			OperationID: "setMemoryMode", Method: http.MethodPut, Path: "/v1/users/{user}/memory-modes/{attribute}",
			Summary: "Override an attribute's mode (semantic or episodic) for a user", Tags: tags,
			Description: "For experiments: the user's later messages are remembered in this mode. * overrides every attribute without an override of its own; an empty mode removes the override.",
			Errors:      []int{http.StatusBadRequest},
		}, userHandler(s, func(ctx context.Context, sc memento.Scope, in *setModeInput) (*modesOutput, error) {
			if err := d.Store.SetMemoryMode(ctx, sc, in.Attribute, in.Body.Mode); err != nil {
				return nil, err
			}
			return d.modes(ctx, sc)
		}))
	}
}

// modes is the body of the memory-modes routes: the user's overrides.
func (d MemoryRoutes) modes(ctx context.Context, sc memento.Scope) (*modesOutput, error) {
	modes, err := d.Store.MemoryModes(ctx, sc)
	if err != nil {
		return nil, err
	}
	out := &modesOutput{}
	out.Body.Modes = modes
	return out, nil
}

// describeBody replaces the OpenAPI schema of a POST taking a raw JSON
// body (huma documents raw bodies as binary) with t's schema, or with one
// t or an array of them.
func describeBody(api huma.API, path string, t reflect.Type, orArray bool) {
	item := api.OpenAPI().Paths[path]
	if item == nil || item.Post == nil || item.Post.RequestBody == nil {
		return
	}
	reg := api.OpenAPI().Components.Schemas
	one := reg.Schema(t, true, t.Name())
	schema := one
	if orArray {
		schema = &huma.Schema{OneOf: []*huma.Schema{one, {Type: huma.TypeArray, Items: one, MaxItems: ptr(MaxMessagesPerRequest)}}}
	}
	item.Post.RequestBody.Content = map[string]*huma.MediaType{"application/json": {Schema: schema}}
}

func ptr[T any](v T) *T { return &v }

// reindex embeds what an edit or import left without a vector; a failure
// only costs recall its vector part for those items, so it is logged.
func (d MemoryRoutes) reindex(ctx context.Context, s *Server, sc memento.Scope) {
	if d.Reindex == nil {
		return
	}
	if err := d.Reindex(ctx, sc); err != nil {
		s.Logger.WarnContext(ctx, "embedding after an edit failed; recall finds the items by keyword", "user", sc.User, "err", err)
	}
}

// decodeMessages reads one message or an array of them, strictly: unknown
// fields and bad roles are refused with a message naming the message.
func decodeMessages(body []byte) ([]memento.Message, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, memento.Errorf(memento.EINVALID, "the body must be a message or an array of messages")
	}
	var ins []MessageIn
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var err error
	if body[0] == '[' {
		err = dec.Decode(&ins)
	} else {
		var one MessageIn
		err = dec.Decode(&one)
		ins = []MessageIn{one}
	}
	if err != nil {
		return nil, memento.Errorf(memento.EINVALID, "the body must be a message {\"id\",\"role\",\"text\",\"at\"} or an array of them: %v", err)
	}
	if len(ins) == 0 {
		return nil, memento.Errorf(memento.EINVALID, "the array holds no message")
	}
	if len(ins) > MaxMessagesPerRequest {
		return nil, memento.Errorf(memento.ETOOLARGE, "%d messages in one request, over the limit of %d", len(ins), MaxMessagesPerRequest)
	}
	msgs := make([]memento.Message, len(ins))
	for i, m := range ins {
		if m.Role == "" {
			return nil, memento.Errorf(memento.EINVALID, "messages[%d].role is required: %q or %q", i, memento.RoleUser, memento.RoleAssistant)
		}
		if strings.TrimSpace(m.Text) == "" {
			return nil, memento.Errorf(memento.EINVALID, "messages[%d].text must not be empty", i)
		}
		if err := memento.CheckOptionalID(fmt.Sprintf("messages[%d].id", i), m.ID); err != nil {
			return nil, err
		}
		if err := memento.CheckTime(fmt.Sprintf("messages[%d].at", i), m.At); err != nil {
			return nil, err
		}
		msgs[i] = memento.Message{ID: m.ID, Role: m.Role, Text: m.Text, At: m.At}
	}
	return msgs, nil
}
