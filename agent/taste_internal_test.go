package agent

import (
	"slices"
	"testing"

	"github.com/memento-ai/memento"
)

func TestTopicWordsMatchPlots(t *testing.T) {
	title := memento.Title{Title: "The Heists", Overview: "Slashers stalk a café where thieves, led by Amélie, plan robberies."}
	plot := plotWords(title)
	tests := []struct {
		topic string
		want  []string
		hit   bool
	}{
		{"heist movies", []string{"heist"}, true},
		{"can't stand slasher films", []string{"slasher"}, true},
		{"robbery", []string{"robberi"}, true},
		{"amelie and cafes", []string{"ameli", "cafe"}, true},
		{"films about war", nil, false}, // short and generic words only
		{"space westerns", []string{"space", "western"}, false},
	}
	for _, tt := range tests {
		got := topicWords(tt.topic)
		if !slices.Equal(got, tt.want) {
			t.Errorf("topicWords(%q) = %q, want %q", tt.topic, got, tt.want)
		}
		hit := slices.ContainsFunc(got, func(w string) bool { return plot[w] })
		if hit != tt.hit {
			t.Errorf("topic %q in plot = %v, want %v (plot terms %v)", tt.topic, hit, tt.hit, plot)
		}
	}
}

// BenchmarkPlotWords measures the terms of one candidate's plot, which a
// turn with topic words in the user's taste reads for every candidate.
func BenchmarkPlotWords(b *testing.B) {
	title := memento.Title{Title: "Heat", Overview: "Obsessive master thief Neil McCauley leads a top-notch crew on various daring heists " +
		"throughout Los Angeles while determined detective Vincent Hanna pursues him without rest. Each man recognizes " +
		"and respects the ability and the dedication of the other even though they are aware their cat-and-mouse game may end in violence."}
	b.ReportAllocs()
	for b.Loop() {
		plotWords(title)
	}
}
