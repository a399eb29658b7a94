package offline

import (
	"testing"

	"github.com/memento-ai/memento"
)

// FuzzClassifyEmotion checks that any text gets one of the labels with a
// confidence in [0, 1], and the same answer every time.
func FuzzClassifyEmotion(f *testing.F) {
	for _, s := range []string{"", "I'm not happy :(", "SO ANNOYING!!!", "sooo good 😍", "a scary, sad film", "D: 10:00 >:(", "not", "really?!"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		e := ClassifyEmotion(text)
		if e == nil || !memento.ValidEmotion(e.Label) || !(e.Confidence >= 0 && e.Confidence <= 1) {
			t.Fatalf("ClassifyEmotion(%q) = %+v", text, e)
		}
		if again := ClassifyEmotion(text); *again != *e {
			t.Fatalf("ClassifyEmotion(%q) = %+v, then %+v", text, e, again)
		}
	})
}
