package http

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
)

// TenantHeader names the tenant of a request; without it the default tenant
// is used.
type TenantHeader struct {
	Tenant string `header:"X-Memento-Tenant" doc:"Tenant of the request (default: default)"`
}

func (h TenantHeader) tenant() string {
	if h.Tenant == "" {
		return memento.DefaultTenant
	}
	return h.Tenant
}

type chatInput struct {
	TenantHeader
	Body agent.Request
}

type chatOutput struct {
	Body *agent.Response
}

type summariesInput struct {
	TenantHeader
	Thread string `path:"thread" doc:"Thread id"`
	User   string `query:"user" required:"true" doc:"User the thread belongs to"`
}

type summariesOutput struct {
	Body struct {
		Thread    string            `json:"thread"`
		Summaries []memento.Summary `json:"summaries"`
	}
}

type threadsInput struct {
	TenantHeader
	User string `path:"user"`
}

type threadsOutput struct {
	Body struct {
		Threads []memento.Thread `json:"threads"`
	}
}

type threadInput struct {
	TenantHeader
	User   string `path:"user"`
	Thread string `path:"thread"`
}

type threadOutput struct {
	Body struct {
		Thread        string                `json:"thread"`
		ActiveContext memento.ActiveContext `json:"activeContext"`
		LastShown     []string              `json:"lastShown"`
		Messages      []memento.Message     `json:"messages"`
	}
}

// RegisterChat adds the agent's routes: POST /v1/chat and the thread
// memory it keeps (threads, their context, summaries and stored answers).
func RegisterChat(ag *agent.Agent, threads memento.ThreadService, log memento.MessageLog) func(api huma.API, s *Server) {
	return func(api huma.API, s *Server) {
		huma.Register(api, huma.Operation{
			OperationID: "chat", Method: http.MethodPost, Path: "/v1/chat",
			Summary: "Send a message to the recommendation agent", Tags: []string{"agent"},
			Description: "Runs one turn: understands the message against the thread's active context, searches the catalog with the exclusions, and answers with grounded titles, the active context it used, notes and the memory it drew on. " +
				"When the language model's answer is unusable, the offline rules stand in and a note says so; 502 (EUPSTREAM) means the model server answered unusably and nothing could stand in, 503 (EUNAVAILABLE) that it cannot be reached. A model's fault is never a 500. " +
				"A server computes a bounded number of turns at once (--turn-slots); under load a turn first waits for one, and a request whose connection closes meanwhile stores nothing.",
			Errors: []int{http.StatusBadRequest, http.StatusBadGateway, http.StatusServiceUnavailable},
		}, func(ctx context.Context, in *chatInput) (*chatOutput, error) {
			resp, err := ag.Turn(ctx, in.tenant(), in.Body)
			if err != nil {
				return nil, Error(ctx, s.Logger, err)
			}
			return &chatOutput{Body: resp}, nil
		})
		huma.Register(api, huma.Operation{
			OperationID: "listSummaries", Method: http.MethodGet, Path: "/v1/threads/{thread}/summaries",
			Summary: "List a thread's rolling summaries, oldest first", Tags: []string{"agent"},
		}, func(ctx context.Context, in *summariesInput) (*summariesOutput, error) {
			sums, err := threads.Summaries(ctx, memento.Scope{Tenant: in.tenant(), User: in.User}, in.Thread)
			if err != nil {
				return nil, Error(ctx, s.Logger, err)
			}
			out := &summariesOutput{}
			out.Body.Thread = in.Thread
			out.Body.Summaries = nonNilSlice(sums)
			return out, nil
		})
		huma.Register(api, huma.Operation{
			OperationID: "listThreads", Method: http.MethodGet, Path: "/v1/users/{user}/threads",
			Summary: "List a user's threads, most recent first", Tags: []string{"agent"},
		}, func(ctx context.Context, in *threadsInput) (*threadsOutput, error) {
			ts, err := threads.Threads(ctx, memento.Scope{Tenant: in.tenant(), User: in.User})
			if err != nil {
				return nil, Error(ctx, s.Logger, err)
			}
			out := &threadsOutput{}
			out.Body.Threads = nonNilSlice(ts)
			return out, nil
		})
		huma.Register(api, huma.Operation{
			OperationID: "getThread", Method: http.MethodGet, Path: "/v1/users/{user}/threads/{thread}",
			Summary: "Get a thread's active context and messages", Tags: []string{"agent"},
		}, func(ctx context.Context, in *threadInput) (*threadOutput, error) {
			sc := memento.Scope{Tenant: in.tenant(), User: in.User}
			st, err := threads.ThreadState(ctx, sc, in.Thread)
			if err != nil {
				return nil, Error(ctx, s.Logger, err)
			}
			msgs, err := log.Messages(ctx, sc, in.Thread, 0, 0)
			if err != nil && memento.ErrorCode(err) != memento.ENOTFOUND {
				return nil, Error(ctx, s.Logger, err)
			}
			out := &threadOutput{}
			out.Body.Thread = in.Thread
			out.Body.ActiveContext = st.Context
			out.Body.LastShown = nonNilSlice(st.LastShown)
			out.Body.Messages = nonNilSlice(msgs)
			return out, nil
		})
		huma.Register(api, huma.Operation{
			OperationID: "setThreadContext", Method: http.MethodPut, Path: "/v1/users/{user}/threads/{thread}/context",
			Summary: "Replace a thread's active context", Tags: []string{"agent"},
			Description: "Edits the memory the next turn starts from, as removing a constraint chip in the web UI does.",
			Errors:      []int{http.StatusBadRequest, http.StatusNotFound},
		}, func(ctx context.Context, in *setContextInput) (*setContextOutput, error) {
			sc := memento.Scope{Tenant: in.tenant(), User: in.User}
			if err := threads.SetThreadContext(ctx, sc, in.Thread, in.Body); err != nil {
				return nil, Error(ctx, s.Logger, err)
			}
			st, err := threads.ThreadState(ctx, sc, in.Thread)
			if err != nil {
				return nil, Error(ctx, s.Logger, err)
			}
			return &setContextOutput{Body: st.Context}, nil
		})
		registerAnswers(api, s, threads)
	}
}

type setContextInput struct {
	TenantHeader
	User   string `path:"user"`
	Thread string `path:"thread"`
	Body   memento.ActiveContext
}

type setContextOutput struct {
	Body memento.ActiveContext
}

func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
