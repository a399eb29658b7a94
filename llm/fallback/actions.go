package fallback

import (
	"context"

	"github.com/memento-ai/memento"
)

// ReadActions implements memento.ActionReader when both models do; a
// primary that does not is answered by the stand-in, and a model without
// the task at all reads no actions.
func (m *Model) ReadActions(ctx context.Context, in memento.ActionInput) ([]memento.ReportedAction, error) {
	standIn, ok := m.standIn.(memento.ActionReader)
	if !ok {
		standIn = noActions{}
	}
	primary, ok := m.primary.(memento.ActionReader)
	if !ok {
		return standIn.ReadActions(ctx, in)
	}
	return ask(ctx, m, memento.ModelTaskReadActions,
		func() ([]memento.ReportedAction, error) { return primary.ReadActions(ctx, in) },
		func() ([]memento.ReportedAction, error) { return standIn.ReadActions(ctx, in) })
}

type noActions struct{}

func (noActions) ReadActions(context.Context, memento.ActionInput) ([]memento.ReportedAction, error) {
	return []memento.ReportedAction{}, nil
}
