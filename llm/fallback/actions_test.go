package fallback_test

import (
	"context"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/llm/fallback"
	"github.com/memento-ai/memento/llm/offline"
)

// failingActions is a failing primary that also reads actions, and fails.
type failingActions struct{ failing }

func (f *failingActions) ReadActions(context.Context, memento.ActionInput) ([]memento.ReportedAction, error) {
	return nil, f.fail()
}

// TestReadActionsFallsBack checks that an unusable answer of the primary's
// ReadActions is replaced by the stand-in's, that a primary without the
// task is answered by the stand-in, and that a server failure is returned.
func TestReadActionsFallsBack(t *testing.T) {
	heat := &memento.Title{ID: "heat", Title: "Heat"}
	standIn := offline.New(offline.Options{Titles: func(s string) (*memento.Title, bool) { return heat, s == "Heat" }})
	in := memento.ActionInput{Message: "I watched Heat"}

	primary := &failingActions{failing{err: memento.Errorf(memento.EUPSTREAM, "unusable")}}
	m, err := fallback.New(primary, standIn, fallback.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.ReadActions(context.Background(), in)
	if err != nil || len(got) != 1 || got[0].TitleID != "heat" || m.Fallbacks()[memento.ModelTaskReadActions] != 1 {
		t.Errorf("after an unusable answer: %+v, %v, fallbacks %v; want the stand-in's watched Heat", got, err, m.Fallbacks())
	}

	without, _ := fallback.New(&failing{err: memento.Errorf(memento.EUPSTREAM, "unusable")}, standIn, fallback.Options{})
	if got, err := without.ReadActions(context.Background(), in); err != nil || len(got) != 1 {
		t.Errorf("a primary without the task: %+v, %v; want the stand-in's answer", got, err)
	}

	down, _ := fallback.New(&failingActions{failing{err: memento.Errorf(memento.EUNAVAILABLE, "down")}}, standIn, fallback.Options{})
	if _, err := down.ReadActions(context.Background(), in); memento.ErrorCode(err) != memento.EUNAVAILABLE {
		t.Errorf("a failing server: err = %v; want EUNAVAILABLE, so the job retries", err)
	}
}
