package offline

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
)

// TestAnswersReadWithTheirQuestion checks that a short answer gives the
// fact it states with the question before it, filed under the attribute
// the question is about, and that answers saying nothing lasting give
// none.
func TestAnswersReadWithTheirQuestion(t *testing.T) {
	m := New(Options{})
	schema := append(append([]memento.AttributeSpec{}, movieSchema...), memento.AttributeSpec{Name: "EVENT"})
	tests := []struct {
		asked, message string
		want           []string // "ATTRIBUTE: fact"
	}{
		{"Which service do you watch on?", "Mostly Netflix, sometimes Hulu.", []string{"PLATFORM: mostly watches on Netflix", "PLATFORM: sometimes watches on Hulu"}},
		{"How often do you watch movies?", "A couple of times a week", []string{"FREQUENCY: watches movies a couple of times a week"}},
		{"Do you like horror?", "Not really", []string{"DISLIKES: doesn't like horror"}},
		{"Do you like horror?", "Love it!", []string{"GENRE: loves horror"}},
		{"What's your favourite film?", "Probably Alien.", []string{"FAVORITE: favourite film is Alien"}},
		{"Who do you usually watch with?", "My kids", []string{"WATCHING_HABIT: usually watches with their kids"}},
		{"Anything you want to avoid?", "Jump scares, and animal deaths", []string{"AVOID: wants to avoid Jump scares", "AVOID: wants to avoid animal deaths"}},
		{"Do you prefer short episodes or long films?", "Short episodes", []string{"SHOW_LENGTH: prefers short episodes"}},
		{"Did you like Heat?", "Loved it", []string{"LIKES: loved Heat"}},
		{"Have you seen Heat?", "Yes", []string{"EVENT: has seen Heat"}},
		{"What are you in the mood for tonight?", "Something funny", nil},
		{"Want me to find more?", "Sounds good", nil},
		{"Which service do you watch on?", "Not sure", nil},
		{"Which service do you watch on?", "Can you just show me comedies?", nil},
		{"", "Mostly Netflix, sometimes Hulu.", nil},
	}
	for _, tt := range tests {
		facts, err := m.ExtractFacts(context.Background(), memento.ExtractInput{Message: tt.message, Asked: tt.asked})
		if err != nil {
			t.Fatal(err)
		}
		af, _ := m.AssignAttributes(context.Background(), facts, schema)
		var got []string
		for _, a := range af {
			got = append(got, a.Attribute+": "+a.Fact.Text)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%q after %q (-want +got):\n%s", tt.message, tt.asked, diff)
		}
		// The reviewer reads the answer with its question and accepts
		// what the extractor found.
		v, err := m.ReviewExtraction(context.Background(), asReadPrefix+lastQuestion(tt.asked)+asReadUser+tt.message, facts)
		if tt.asked != "" && (err != nil || !v.OK) {
			t.Errorf("%q after %q: reviewer = %+v, %v; want OK", tt.message, tt.asked, v, err)
		}
	}
}

// TestReadActionsWithQuestion checks the ActionReader, alone and with the
// question a short answer refers to.
func TestReadActionsWithQuestion(t *testing.T) {
	heat := &memento.Title{ID: "heat", Title: "Heat", Year: 1995}
	m := New(Options{Titles: func(s string) (*memento.Title, bool) {
		if s == "Heat" {
			return heat, true
		}
		return nil, false
	}})
	tests := []struct {
		asked, message string
		want           []memento.ReportedAction
	}{
		{"", "I watched Heat and loved it", []memento.ReportedAction{{Type: memento.EventWatched, Title: "Heat", TitleID: "heat"}, {Type: memento.EventLiked, Title: "Heat", TitleID: "heat"}}},
		{"Have you seen Heat?", "Yes", []memento.ReportedAction{{Type: memento.EventWatched, Title: "Heat", TitleID: "heat"}}},
		{"Have you seen Heat?", "No, never", []memento.ReportedAction{}},
		{"", "Have you seen Heat?", []memento.ReportedAction{}},
		{"", "I haven't watched Heat yet", []memento.ReportedAction{}},
	}
	for _, tt := range tests {
		got, err := m.ReadActions(context.Background(), memento.ActionInput{Message: tt.message, Asked: tt.asked})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%q after %q (-want +got):\n%s", tt.message, tt.asked, diff)
		}
	}
	if got, _ := New(Options{}).ReadActions(context.Background(), memento.ActionInput{Message: "I watched Heat"}); len(got) != 0 {
		t.Errorf("without a catalog: %v; want none", got)
	}
}
