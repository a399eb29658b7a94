package http

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
)

// Limits of GET /v1/users/{user}/threads/{thread}/answers.
const (
	answersDefaultLimit = 100
	answersMaxLimit     = 1000
)

type answersInput struct {
	TenantHeader
	User   string `path:"user"`
	Thread string `path:"thread"`
	Limit  int    `query:"limit" minimum:"0" maximum:"1000" doc:"How many of the newest answers to return (0: the default of 100)"`
}

// StoredAnswer is an answer of the agent as a thread keeps it: the
// assistant message it came with and the answer, as POST /v1/chat
// returned it.
type StoredAnswer struct {
	Message string         `json:"message" doc:"Id of the assistant message the answer came with"`
	Seq     int64          `json:"seq" doc:"Position of that message in the thread"`
	Answer  agent.Response `json:"answer" doc:"The answer as POST /v1/chat returned it"`
}

type answersOutput struct {
	Body struct {
		Answers []StoredAnswer `json:"answers"`
	}
}

// registerAnswers adds GET /v1/users/{user}/threads/{thread}/answers: the
// stored answers of a thread, oldest first, so a page reloaded later can
// show every turn's cards, reasons and the memory it drew on, not only
// its text.
func registerAnswers(api huma.API, s *Server, threads memento.ThreadService) {
	huma.Register(api, huma.Operation{
		OperationID: "listThreadAnswers", Method: http.MethodGet, Path: "/v1/users/{user}/threads/{thread}/answers",
		Summary: "List a thread's stored answers, oldest first", Tags: []string{"agent"},
		Description: "Returns the newest `limit` answers of the thread (titles with their reasons, notes, the active context and the memory used), each with the id and position of its assistant message. " +
			"Turns stored before answers were kept have none; an unknown thread has none.",
		Errors: []int{http.StatusBadRequest},
	}, func(ctx context.Context, in *answersInput) (*answersOutput, error) {
		limit := in.Limit
		if limit == 0 {
			limit = answersDefaultLimit
		}
		stored, err := threads.Answers(ctx, memento.Scope{Tenant: in.tenant(), User: in.User}, in.Thread, min(limit, answersMaxLimit))
		if err != nil {
			return nil, Error(ctx, s.Logger, err)
		}
		out := &answersOutput{}
		out.Body.Answers = decodeAnswers(ctx, s, stored)
		return out, nil
	})
}

// decodeAnswers reads stored answers. One that no longer reads as an
// answer is left out and logged: a reload then shows that turn's text
// only, as for a turn stored before answers were kept.
func decodeAnswers(ctx context.Context, s *Server, stored []memento.TurnAnswer) []StoredAnswer {
	out := make([]StoredAnswer, 0, len(stored))
	for _, a := range stored {
		var resp agent.Response
		if err := json.Unmarshal(a.Answer, &resp); err != nil {
			s.Logger.WarnContext(ctx, "stored answer does not decode", "message", a.Message, "err", err)
			continue
		}
		resp.Titles = nonNilSlice(resp.Titles)
		resp.Notes = nonNilSlice(resp.Notes)
		resp.Memory.Used = nonNilSlice(resp.Memory.Used)
		for i := range resp.Titles {
			resp.Titles[i].Why = nonNilSlice(resp.Titles[i].Why)
		}
		out = append(out, StoredAnswer{Message: a.Message, Seq: a.Seq, Answer: resp})
	}
	return out
}
