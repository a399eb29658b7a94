package openai

import (
	"context"
	"fmt"
	"strings"

	"github.com/memento-ai/memento"
)

// TaskReadActions reads the actions a user reports in a message
// (memento.ActionReader). It is not among Tasks: it is no part of
// memento.LanguageModel, and the message-events job asks it of any model
// that has it.
const TaskReadActions Task = "read_actions"

var _ memento.ActionReader = (*Model)(nil)

// actionTypes are the event types a message can report.
var actionTypes = []memento.EventType{memento.EventWatched, memento.EventFinished, memento.EventLiked,
	memento.EventDisliked, memento.EventWatchlisted, memento.EventSkipped, memento.EventAbandoned, memento.EventRated}

func actionsSchema() *jsonSchema {
	return object(prop("actions", array(object(
		prop("type", enumOf(str(), actionTypes...)),
		prop("title", str()),
		prop("rating", nullable(between(number(), 0.5, 5))),
	))))
}

type actionsOutput struct {
	Actions []struct {
		Type   memento.EventType `json:"type"`
		Title  string            `json:"title"`
		Rating *float64          `json:"rating"`
	} `json:"actions"`
}

// ReadActions asks the server which actions on titles the message reports.
// Titles come back as the user wrote them; package profile resolves them
// against the catalog. A rating belongs to "rated" only; a "rated" action
// without one costs one repair request. Errors: EUNAVAILABLE when the
// server fails, EUPSTREAM (an *OutputError) when its output stays
// unusable.
func (m *Model) ReadActions(ctx context.Context, in memento.ActionInput) ([]memento.ReportedAction, error) {
	if strings.TrimSpace(in.Message) == "" {
		return []memento.ReportedAction{}, nil
	}
	out, _, err := run(ctx, m, TaskReadActions, in, actionsSchema(), func(v *actionsOutput) error {
		for i, a := range v.Actions {
			if a.Type == memento.EventRated && a.Rating == nil {
				return fmt.Errorf("action %d is rated but has no rating; give the rating from 0.5 to 5", i)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	actions := make([]memento.ReportedAction, 0, len(out.Actions))
	for _, a := range out.Actions {
		title := strings.TrimSpace(a.Title)
		if title == "" {
			continue
		}
		ra := memento.ReportedAction{Type: a.Type, Title: title}
		if a.Type == memento.EventRated {
			ra.Value = a.Rating
		}
		actions = append(actions, ra)
	}
	return actions, nil
}
