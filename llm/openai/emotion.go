package openai

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/memento-ai/memento"
)

// TaskEmotion tags a user's message with the emotion it expresses
// (memento.EmotionClassifier). It is not among Tasks: it is no part of
// memento.LanguageModel, and only a server configured to tag emotions is
// asked it.
const TaskEmotion Task = "classify_emotion"

var _ memento.EmotionClassifier = (*Model)(nil)

func emotionSchema() *jsonSchema {
	return object(
		prop("label", enumOf(str(), memento.EmotionLabels...)),
		prop("confidence", between(number(), 0, 1)),
	)
}

type emotionOutput struct {
	Label      string  `json:"label"`
	Confidence float64 `json:"confidence"`
}

// ClassifyEmotion asks the server which of memento.EmotionLabels the
// message expresses, and how confidently. A label outside the list costs
// one repair request. Errors: EUNAVAILABLE when the server fails,
// EUPSTREAM (an *OutputError) when its output stays unusable.
func (m *Model) ClassifyEmotion(ctx context.Context, text string) (*memento.Emotion, error) {
	if strings.TrimSpace(text) == "" {
		return &memento.Emotion{Label: memento.EmotionNeutral, Confidence: 1}, nil
	}
	out, _, err := run(ctx, m, TaskEmotion, struct{ Message string }{text}, emotionSchema(), func(v *emotionOutput) error {
		v.Label = strings.ToLower(strings.TrimSpace(v.Label))
		if !memento.ValidEmotion(v.Label) {
			return fmt.Errorf("label must be one of %s, got %q", strings.Join(memento.EmotionLabels, ", "), v.Label)
		}
		if math.IsNaN(v.Confidence) || v.Confidence < 0 || v.Confidence > 1 {
			return fmt.Errorf("confidence must be between 0 and 1, got %v", v.Confidence)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &memento.Emotion{Label: out.Label, Confidence: math.Round(out.Confidence*100) / 100}, nil
}
