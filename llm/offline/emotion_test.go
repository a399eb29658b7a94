package offline

import (
	"strings"
	"testing"

	"github.com/memento-ai/memento"
)

func TestClassifyEmotion(t *testing.T) {
	tests := []struct {
		text string
		want string
	}{
		// Plain cues of each label.
		{"I'm so happy with these, thank you!", memento.EmotionJoy},
		{"My cat died yesterday and I feel miserable.", memento.EmotionSadness},
		{"This is ridiculous, I'm furious.", memento.EmotionAnger},
		{"I'm terrified of sharks.", memento.EmotionFear},
		{"Wow, I had no idea!", memento.EmotionSurprise},
		{"That was disgusting.", memento.EmotionDisgust},
		{"Show me westerns from the 60s.", memento.EmotionNeutral},
		// Negation turns a cue: a denied joy is disappointment, a
		// denied fear is no fear at all.
		{"I'm not happy with this.", memento.EmotionSadness},
		{"I'm not scared of horror.", memento.EmotionNeutral},
		{"I wasn't angry.", memento.EmotionNeutral},
		// A contrast ends the negation's reach.
		{"Not great at first, but I love it now.", memento.EmotionJoy},
		// Emoji and emoticons.
		{"Inception 😍", memento.EmotionJoy},
		{"these again 😡", memento.EmotionAnger},
		{"ok :(", memento.EmotionSadness},
		{"🤮", memento.EmotionDisgust},
		// A time is no emoticon.
		{"Meet at 10:00 tomorrow.", memento.EmotionNeutral},
		// A feeling word describing the title asked for is not the
		// person's feeling...
		{"I want a scary movie.", memento.EmotionNeutral},
		{"Something sad for a rainy day.", memento.EmotionNeutral},
		// ...but after a first-person subject it is.
		{"I loathe slasher films.", memento.EmotionDisgust},
		// "like" as a comparison is no feeling.
		{"Something like Heat.", memento.EmotionNeutral},
		// Standing alone, "Really?" is disbelief.
		{"Really? That old?", memento.EmotionSurprise},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			got := ClassifyEmotion(tt.text)
			if got.Label != tt.want {
				t.Errorf("ClassifyEmotion(%q) = %s %.2f, want %s (scores %v)", tt.text, got.Label, got.Confidence, tt.want, emotionScores(tt.text))
			}
			if got.Confidence < 0 || got.Confidence > 1 {
				t.Errorf("confidence %v out of [0, 1]", got.Confidence)
			}
		})
	}
}

func TestEmotionIntensity(t *testing.T) {
	// Intensifiers, hedges, capitals, elongation and exclamation marks
	// move the confidence, never the label.
	stronger := []struct{ weak, strong string }{
		{"I'm annoyed.", "I'm extremely annoyed."},
		{"I'm annoyed.", "I'm ANNOYED."},
		{"I'm happy.", "I'm happy!!"},
		{"I'm a bit sad.", "I'm sad."},
		{"I'm sad.", "I'm sooo sad."},
	}
	for _, p := range stronger {
		w, s := ClassifyEmotion(p.weak), ClassifyEmotion(p.strong)
		if s.Label != w.Label && w.Label != memento.EmotionNeutral {
			t.Errorf("%q is %s but %q is %s", p.weak, w.Label, p.strong, s.Label)
		}
		if s.Confidence <= w.Confidence && w.Label != memento.EmotionNeutral {
			t.Errorf("%q (%.2f) should be more confident than %q (%.2f)", p.strong, s.Confidence, p.weak, w.Confidence)
		}
	}
}

func TestClassifyEmotionNeverFails(t *testing.T) {
	m := New(Options{})
	for _, text := range []string{"", "   ", "!!!", strings.Repeat("no ", 2000), "\x00\xff", "🙂🙂🙂🙂"} {
		e, err := m.ClassifyEmotion(t.Context(), text)
		if err != nil || e == nil || !memento.ValidEmotion(e.Label) {
			t.Errorf("ClassifyEmotion(%q) = %v, %v", text, e, err)
		}
	}
}

func TestFrustratedReply(t *testing.T) {
	m := New(Options{})
	titles := []memento.Title{{ID: "a", Title: "Alpha", Type: "movie", Year: 2001}}
	in := memento.ReplyInput{Message: "Ugh, not again", Searched: true, Titles: titles, Context: memento.NewActiveContext(),
		Frustrated: true, Widen: []string{"the comedy genre", "the years 1990 to 1999"}}
	got, err := m.WriteReply(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "Sorry these keep missing the mark.") || !strings.Contains(got, "widen the search") ||
		!strings.Contains(got, "the comedy genre or the years 1990 to 1999") || !strings.Contains(got, "Alpha") {
		t.Errorf("frustrated reply = %q", got)
	}
	in.Frustrated, in.Widen = false, nil
	calm, _ := m.WriteReply(t.Context(), in)
	if strings.Contains(calm, "Sorry") || strings.Contains(calm, "widen") {
		t.Errorf("calm reply owns misses: %q", calm)
	}
	in.Frustrated, in.Titles = true, nil
	none, _ := m.WriteReply(t.Context(), in)
	if !strings.HasPrefix(none, "Sorry, that keeps missing.") || !strings.Contains(none, "another genre or decade") {
		t.Errorf("frustrated reply with nothing found = %q", none)
	}
}

func BenchmarkClassifyEmotion(b *testing.B) {
	text := "Ugh, I told you I don't want horror, why do you keep showing it? This is so annoying 😡"
	for b.Loop() {
		ClassifyEmotion(text)
	}
}
