package eval

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/memento-ai/memento"
)

func TestScoreEmotions(t *testing.T) {
	// Worked by hand: joy tp 2 fp 1 fn 0 (P 2/3, R 1, F1 0.8); anger tp 1
	// fp 0 fn 1 (P 1, R 0.5, F1 2/3); neutral tp 1 fp 1 fn 1 (P 0.5, R
	// 0.5, F1 0.5). Accuracy 4/6; macro-F1 (0.8 + 2/3 + 0.5) / 3.
	gold := []string{"joy", "joy", "anger", "anger", "neutral", "neutral"}
	got := []string{"joy", "joy", "anger", "neutral", "neutral", "joy"}
	s := ScoreEmotions(gold, got)
	if s.N != 6 || s.Accuracy != round4(4.0/6) {
		t.Errorf("accuracy = %v of %d, want %v", s.Accuracy, s.N, round4(4.0/6))
	}
	if want := round4((0.8 + 2.0/3 + 0.5) / 3); s.MacroF1 != want {
		t.Errorf("macro-F1 = %v, want %v", s.MacroF1, want)
	}
	if j := s.Labels["joy"]; j.Precision != round4(2.0/3) || j.Recall != 1 || j.F1 != 0.8 || j.Support != 2 {
		t.Errorf("joy = %+v", j)
	}
	if s.Confusion["neutral"]["joy"] != 1 || s.Confusion["anger"]["neutral"] != 1 {
		t.Errorf("confusion = %v", s.Confusion)
	}
	if _, ok := s.Labels["fear"]; ok {
		t.Errorf("fear has neither gold nor predictions but is scored: %v", s.Labels)
	}
}

func TestReadEmotionsRefusesBadLines(t *testing.T) {
	for _, tt := range []struct{ data, want string }{
		{`{"id":"a","text":"hi","label":"happy","split":"dev"}`, "label must be one of"},
		{`{"id":"a","text":"hi","label":"joy","split":"train"}`, "split must be"},
		{`{"id":"a","text":" ","label":"joy","split":"dev"}`, "text is empty"},
		{"{\"id\":\"a\",\"text\":\"hi\",\"label\":\"joy\",\"split\":\"dev\"}\n{\"id\":\"a\",\"text\":\"yo\",\"label\":\"joy\",\"split\":\"dev\"}", "already used on line 1"},
		{"# nothing\n", "no examples"},
	} {
		_, err := ReadEmotions(strings.NewReader(tt.data))
		if memento.ErrorCode(err) != memento.EINVALID || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ReadEmotions(%q) = %v, want EINVALID with %q", tt.data, err, tt.want)
		}
	}
}

type constEmotion string

func (c constEmotion) ClassifyEmotion(context.Context, string) (*memento.Emotion, error) {
	return &memento.Emotion{Label: string(c), Confidence: 1}, nil
}

func TestEmotionShippedSet(t *testing.T) {
	f, err := os.Open("emotion.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := ReadEmotions(f)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Emotion(t.Context(), data, []NamedEmotionClassifier{{"always joy", constEmotion("joy")}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Examples < 200 || res.Dev < 100 || res.Test < 100 {
		t.Errorf("the set has %d examples (%d dev, %d test); want at least 200, half held out", res.Examples, res.Dev, res.Test)
	}
	for _, l := range memento.EmotionLabels {
		if res.Baselines[0].Test.Labels[l].Support < 10 {
			t.Errorf("label %s has %d held-out examples; want at least 10", l, res.Baselines[0].Test.Labels[l].Support)
		}
	}
	// The majority baseline comes from the dev split and is the same on
	// both splits; a constant classifier scores as it does.
	if res.Baselines[0].Name != "majority (neutral)" {
		t.Errorf("majority baseline = %s", res.Baselines[0].Name)
	}
	if got, want := res.Models[0].Test.Accuracy, res.Baselines[0].Test.Labels["neutral"].Support; got == 0 || want == 0 {
		t.Errorf("constant classifier accuracy %v", got)
	}
}
