package sqlite_test

import (
	"context"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

func TestMessageEmotionStored(t *testing.T) {
	db := sqlitetest.Open(t)
	ctx := context.Background()
	s := memento.Scope{User: "u"}
	res, err := db.AppendMessages(ctx, s, "t", []memento.Message{
		{Role: memento.RoleUser, Text: "I love it", Emotion: &memento.Emotion{Label: memento.EmotionJoy, Confidence: 0.83}},
		{Role: memento.RoleAssistant, Text: "Glad to hear it."},
		{Role: memento.RoleUser, Text: "old client, no tag"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e := res.Messages[0].Emotion; e == nil || e.Label != memento.EmotionJoy {
		t.Errorf("append result emotion = %v", e)
	}
	msgs, err := db.Messages(ctx, s, "t", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if e := msgs[0].Emotion; e == nil || *e != (memento.Emotion{Label: memento.EmotionJoy, Confidence: 0.83}) {
		t.Errorf("stored emotion = %+v, want joy 0.83", e)
	}
	if msgs[1].Emotion != nil || msgs[2].Emotion != nil {
		t.Errorf("untagged messages read back with %+v, %+v", msgs[1].Emotion, msgs[2].Emotion)
	}
	// Search and the export read the same columns.
	hits, err := db.SearchMessages(ctx, s, "love", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Message.Emotion == nil || hits[0].Message.Emotion.Label != memento.EmotionJoy {
		t.Errorf("search hit = %+v", hits)
	}
}

func TestMessageEmotionValidated(t *testing.T) {
	db := sqlitetest.Open(t)
	for _, tt := range []struct {
		e    memento.Emotion
		want string
	}{
		{memento.Emotion{Label: "happy", Confidence: 0.5}, `messages[0].emotion.label must be one of joy, sadness, anger, fear, surprise, disgust, neutral, got "happy"`},
		{memento.Emotion{Label: memento.EmotionJoy, Confidence: 1.5}, "messages[0].emotion.confidence must be between 0 and 1, got 1.5"},
	} {
		_, err := db.AppendMessages(context.Background(), memento.Scope{User: "u"}, "t", []memento.Message{{Role: memento.RoleUser, Text: "x", Emotion: &tt.e}}, nil)
		wantCode(t, err, memento.EINVALID)
		if got := memento.ErrorMessage(err); got != tt.want {
			t.Errorf("message = %q, want %q", got, tt.want)
		}
	}
}
