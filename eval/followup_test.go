package eval

import (
	"context"
	"strings"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
)

// scripted answers each message with the titles and genres it was given.
type scripted struct {
	answers map[string]*agent.Response
}

func (s scripted) Turn(_ context.Context, _ string, req agent.Request) (*agent.Response, error) {
	if r, ok := s.answers[req.Message]; ok {
		return r, nil
	}
	return &agent.Response{ActiveContext: memento.NewActiveContext()}, nil
}

func answer(genres []string, ids ...string) *agent.Response {
	r := &agent.Response{ActiveContext: memento.NewActiveContext()}
	r.ActiveContext.Genres = genres
	for _, id := range ids {
		r.Titles = append(r.Titles, agent.TitleResult{ID: id})
	}
	return r
}

func utter(text string, acts ...IARDAct) IARDUtterance {
	return IARDUtterance{Participant: "USER", Utterance: text, DialogueActs: acts}
}

func genreMap(v string) []string {
	switch strings.ToLower(v) {
	case "thrillers", "thriller":
		return []string{"Thriller"}
	case "comedy":
		return []string{"Comedy"}
	}
	return nil
}

func TestFollowup(t *testing.T) {
	dialogues := []IARDDialogue{
		{ID: "1", Conversation: []IARDUtterance{
			utter("find me something"),
			{Participant: "AGENT", Utterance: "How about It?"},
			utter("seen it, what about thrillers", IARDAct{Intent: "SEE"},
				IARDAct{Intent: "CRI-A", SlotValues: [][]any{{"GENRE", "thrillers", nil, nil}}}),
			utter("not those either", IARDAct{Intent: "REJ"}),
		}},
		{ID: "2", Conversation: []IARDUtterance{
			utter("no wait", IARDAct{Intent: "REJ"}), // nothing shown yet: not judged
			utter("a comedy please", IARDAct{Intent: "CRI-A", SlotValues: [][]any{{"GENRE", "comedy", nil, nil}, {"GENRE", "cheese", nil, nil}}}),
		}},
	}
	ag := scripted{answers: map[string]*agent.Response{
		"find me something":             answer(nil, "a", "b"),
		"seen it, what about thrillers": answer([]string{"Thriller"}, "c", "d"),
		"not those either":              answer([]string{"Thriller"}, "d", "e"), // repeats d: a failure
		"a comedy please":               answer(nil, "x"),                       // genre lost: a failure
	}}
	got, err := Followup(context.Background(), ag, "t", dialogues, genreMap)
	if err != nil {
		t.Fatal(err)
	}
	if got.Dialogues != 2 || got.RejectTurns != 2 || got.CriteriaTurns != 2 {
		t.Fatalf("counts = %+v, want 2 dialogues, 2 reject turns, 2 criteria turns", got)
	}
	if got.RejectCompliance != 0.5 {
		t.Errorf("RejectCompliance = %v, want 0.5", got.RejectCompliance)
	}
	if got.CriteriaCapture != 0.5 {
		t.Errorf("CriteriaCapture = %v, want 0.5", got.CriteriaCapture)
	}
	if len(got.Failures) != 2 || got.Failures[0].Check != "reject" || got.Failures[0].Got[0] != "d" || got.Failures[1].Check != "criteria" {
		t.Errorf("Failures = %+v", got.Failures)
	}
}

func TestReadIARD(t *testing.T) {
	if _, err := ReadIARD(strings.NewReader(`{"not":"an array"}`)); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("ReadIARD(object) error = %v, want EINVALID", err)
	}
	ds, err := ReadIARD(strings.NewReader(`[{"conversation_id":"7","conversation":[{"participant":"USER","utterance":"hi","dialogue_acts":[{"intent":"OTH","slot_values":[]}]}]}]`))
	if err != nil || len(ds) != 1 || ds[0].Conversation[0].DialogueActs[0].Intent != "OTH" {
		t.Fatalf("ReadIARD = %+v, %v", ds, err)
	}
}
