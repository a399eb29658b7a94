package mcp

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/recall"
)

// Store is what the tools need of the store: the message log, users (for
// forgetting one), attribute memories and events.
type Store interface {
	memento.MessageLog
	memento.UserService
	memento.MemoryService
	memento.EventService
}

// Recall assembles a user's memory for a prompt (recall.Assembler).
type Recall interface {
	// Recall returns the memories and messages relevant to q, best first.
	// Errors: EINVALID.
	Recall(ctx context.Context, q memento.RecallQuery) ([]memento.RecallItem, error)
	// Assemble builds the context document of q. Errors: EINVALID.
	Assemble(ctx context.Context, q memento.RecallQuery) (*recall.Context, error)
}

// Agent answers one message of a thread (agent.Agent).
type Agent interface {
	// Turn runs one turn and stores it. Errors: EINVALID, EUPSTREAM,
	// EUNAVAILABLE.
	Turn(ctx context.Context, tenant string, req agent.Request) (*agent.Response, error)
}

// Hooks let other components follow what the tools do to a user, as
// http.SnapshotHooks do for the REST API: a snapshot store restores an
// unknown user before a call and writes a changed one after it.
type Hooks struct {
	// Ensure runs before every call about a user; its error fails the call.
	Ensure func(ctx context.Context, s memento.Scope) error
	// Changed is told about the user of every successful write.
	Changed func(s memento.Scope)
	// Deleted is told about a user delete_all_memories forgot, before
	// Changed.
	Deleted func(s memento.Scope)
}

// Server is the MCP server. Set its dependencies, then call Handler (HTTP)
// or Run (stdio). Tools whose dependency is nil answer ENOTIMPLEMENTED.
type Server struct {
	Store   Store
	Recall  Recall
	Agent   Agent
	Catalog memento.Catalog
	// JobsFor returns the background jobs of a newly stored message (the
	// same list the message log's REST route and agent turns enqueue).
	JobsFor func(s memento.Scope, thread string, m memento.Message) []memento.JobRequest
	// EventJobs returns the jobsFor of one AddEvents call for a user.
	EventJobs func(s memento.Scope) func(memento.Event) []memento.JobRequest
	// Reindex embeds what an edit left without a vector; nil skips it.
	Reindex func(ctx context.Context, s memento.Scope) error
	Hooks   Hooks
	// Lag and MaxLag are the backpressure of the REST API's appends:
	// while the oldest unfinished background job is older than MaxLag,
	// add_memory is refused with EUNAVAILABLE (nothing stored, so a retry
	// loses nothing). Nil or zero never refuses.
	Lag    memento.LagReporter
	MaxLag time.Duration

	// Tenant is the tenant of calls that carry no API key (stdio, or HTTP
	// in open mode without an X-Memento-Tenant header); empty is the
	// default tenant.
	Tenant string
	// Principal, when set, is who every call acts for when its context
	// carries none: the key `memento mcp --key` was given.
	Principal *memento.Principal

	Version string
	Logger  *slog.Logger

	once sync.Once
	srv  *sdk.Server

	lagMu  sync.Mutex
	lagAt  time.Time
	lagVal *memento.QueueLags
	lagErr error
}

// instructions tell an agent what the server is for and how to use it.
const instructions = `Memento is long-term memory for the people you talk to.
Call add_memory with what a user says (it is queued and remembered in the background; it returns at once),
search_memory or get_context before you answer, to recall what you know about them,
list_memories / update_memory / delete_memory to show and correct what is kept,
delete_all_memories when a user asks to be forgotten,
recommend for film and TV suggestions from the built-in agent, and record_event when a user watched, rated or skipped a title.
When your API key is scoped to one user, the user argument may be left out.`

// MCP returns the SDK server with every tool, built once.
func (s *Server) MCP() *sdk.Server {
	s.once.Do(func() {
		if s.Logger == nil {
			s.Logger = slog.New(slog.DiscardHandler)
		}
		version := s.Version
		if version == "" {
			version = "dev"
		}
		s.srv = sdk.NewServer(&sdk.Implementation{Name: "memento", Title: "Memento", Version: version},
			&sdk.ServerOptions{Instructions: instructions, Logger: quiet(s.Logger), Capabilities: &sdk.ServerCapabilities{}})
		s.addTools(s.srv)
	})
	return s.srv
}

// Handler serves MCP over streamable HTTP in stateless mode: every POST is
// a whole exchange with no session kept, so any of several servers behind
// a balancer can answer it. Answers are JSON rather than event streams.
// It expects to run behind the HTTP server's guard and authentication,
// which check Host and Origin and put the caller's principal in the
// request's context; the SDK's own localhost check is off because the
// guard's allowed hosts decide.
func (s *Server) Handler() http.Handler {
	srv := s.MCP()
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{
		Stateless:                  true,
		JSONResponse:               true,
		Logger:                     quiet(s.Logger),
		DisableLocalhostProtection: true,
	})
}

// Run serves one client over newline-delimited JSON-RPC on in and out (a
// process's standard input and output) until the client disconnects or
// ctx ends.
func (s *Server) Run(ctx context.Context, in io.Reader, out io.Writer) error {
	t := &sdk.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}}
	err := s.MCP().Run(ctx, t)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// Connect serves one client over t, for tests and embedding.
func (s *Server) Connect(ctx context.Context, t sdk.Transport) (*sdk.ServerSession, error) {
	return s.MCP().Connect(ctx, t, nil)
}

// quiet passes on the SDK's warnings and errors only: it logs every
// session's start and end at info, which in stateless mode is every
// request.
func quiet(l *slog.Logger) *slog.Logger { return slog.New(warnHandler{l.Handler()}) }

type warnHandler struct{ slog.Handler }

func (h warnHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= slog.LevelWarn && h.Handler.Enabled(ctx, level)
}

func (h warnHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return warnHandler{h.Handler.WithAttrs(attrs)}
}

func (h warnHandler) WithGroup(name string) slog.Handler {
	return warnHandler{h.Handler.WithGroup(name)}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
