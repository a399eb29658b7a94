package agent

import (
	"slices"
	"testing"

	"github.com/memento-ai/memento"
)

func TestFrustrated(t *testing.T) {
	angry := &memento.Emotion{Label: memento.EmotionAnger, Confidence: 0.7}
	unsure := &memento.Emotion{Label: memento.EmotionAnger, Confidence: 0.3}
	happy := &memento.Emotion{Label: memento.EmotionJoy, Confidence: 0.9}
	rejected := memento.ActiveContext{ExcludedTitleIDs: []string{"a", "b"}}
	fresh := memento.ActiveContext{}
	tests := []struct {
		name   string
		u      memento.Understanding
		before memento.ActiveContext
		e      *memento.Emotion
		want   bool
	}{
		{"angry second rejection", memento.Understanding{Reject: true}, rejected, angry, true},
		{"angry rejection of one title, again", memento.Understanding{RejectTitles: []memento.TitleRef{{Position: 1}}}, rejected, angry, true},
		{"first rejection, angry", memento.Understanding{Reject: true}, fresh, angry, false},
		{"second rejection, calm", memento.Understanding{Reject: true}, rejected, happy, false},
		{"second rejection, barely angry", memento.Understanding{Reject: true}, rejected, unsure, false},
		{"second rejection, untagged", memento.Understanding{Reject: true}, rejected, nil, false},
		{"angry, but no rejection", memento.Understanding{Search: true}, rejected, angry, false},
	}
	for _, tt := range tests {
		if got := frustrated(&tt.u, tt.before, tt.e); got != tt.want {
			t.Errorf("%s: frustrated = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestWiden(t *testing.T) {
	y := func(v int) *int { return &v }
	ac := memento.ActiveContext{Genres: []string{"Comedy"}, MinYear: y(1990), MaxYear: y(1999), People: []string{"Tom Hanks"},
		TitleType: memento.TypeMovie, Soft: []memento.SoftConstraint{{Kind: memento.SoftRuntime, Value: "<=120", Said: "not too long"}}}
	got := widen(ac)
	want := []string{"Tom Hanks", "the years 1990 to 1999", "the comedy genre", "movies only"}
	if !slices.Equal(got, want) {
		t.Errorf("widen = %q, want %q (at most four, most restrictive first)", got, want)
	}
	if got := widen(memento.ActiveContext{MinYear: y(2010), Genres: []string{"Drama", "Crime"}}); !slices.Equal(got, []string{"the limit of 2010 onward", "the genres drama or crime"}) {
		t.Errorf("widen = %q", got)
	}
	if got := widen(memento.ActiveContext{}); len(got) != 0 {
		t.Errorf("widen of an empty context = %q", got)
	}
}
