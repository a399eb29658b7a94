package pipeline

import (
	"testing"
)

func TestTopicWords(t *testing.T) {
	tests := []struct {
		a, b  string
		share bool
	}{
		{"loves horror films", "can't stand horror", true},
		{"enjoys heist movies", "the heists were boring", true},
		{"watches on Netflix", "doesn't watch Netflix anymore", true},
		{"loves comedies", "hates comedy", true},
		{"likes Amélie", "disliked Amelie", true},
		{"loves horror", "watches on Netflix", false},
		{"don't like it", "didn't like them", false}, // stance and stop words only
	}
	for _, tt := range tests {
		if got := sharesWord(topicWords(tt.a), topicWords(tt.b)); got != tt.share {
			t.Errorf("sharesWord(%q, %q) = %v, want %v (%v, %v)", tt.a, tt.b, got, tt.share, topicWords(tt.a), topicWords(tt.b))
		}
	}
}

func TestSameText(t *testing.T) {
	if !sameText("Loves  science-fiction!", "loves science fiction") {
		t.Error("sameText ignores case, punctuation and spacing: want true")
	}
	if sameText("loves science fiction", "loves fiction") {
		t.Error("sameText of different words = true, want false")
	}
}
