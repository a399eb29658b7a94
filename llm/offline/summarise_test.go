package offline

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memento-ai/memento"
)

func msgs(pairs ...string) []memento.Message {
	var out []memento.Message
	for i := 0; i+1 < len(pairs); i += 2 {
		role := memento.RoleUser
		if pairs[i] == "agent" {
			role = memento.RoleAssistant
		}
		out = append(out, memento.Message{Role: role, Text: pairs[i+1]})
	}
	return out
}

func TestSummarise(t *testing.T) {
	m := newTestModel(t)
	ctx := context.Background()
	exchange := msgs(
		"user", "Hi there! Thanks for the help last time. I love sci-fi but can't stand horror. Show me 3 science fiction movies from the 90s.",
		"agent", "Here are 3 science fiction movies from the 1990s: 1. The Matrix (1999) 2. Gattaca (1997) 3. Contact (1997). Enjoy!",
	)

	t.Run("keeps what matters", func(t *testing.T) {
		got, err := m.Summarise(ctx, memento.SummariseInput{Messages: exchange, MaxChars: 240})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) > 240 {
			t.Fatalf("summary is %d bytes, over 240: %q", len(got), got)
		}
		for _, want := range []string{"User:", "Show me 3 science fiction movies from the 90s", "I love sci-fi but can't stand horror"} {
			if !strings.Contains(got, want) {
				t.Errorf("summary %q lacks %q", got, want)
			}
		}
		if strings.Contains(got, "Hi there") || strings.Contains(got, "Enjoy!") {
			t.Errorf("summary %q keeps small talk", got)
		}
	})

	t.Run("chronological order", func(t *testing.T) {
		got, err := m.Summarise(ctx, memento.SummariseInput{Previous: "User: I watch everything on Netflix.", Messages: exchange, MaxChars: 1000})
		if err != nil {
			t.Fatal(err)
		}
		iPrev := strings.Index(got, "Netflix")
		iUser := strings.Index(got, "Show me")
		iAgent := strings.Index(got, "The Matrix (1999)")
		if iPrev < 0 || iUser < 0 || iAgent < 0 || !(iPrev < iUser && iUser < iAgent) {
			t.Errorf("summary out of order or incomplete: %q", got)
		}
	})

	t.Run("newest wins ties", func(t *testing.T) {
		in := memento.SummariseInput{Messages: msgs("user", "Show me westerns.", "user", "Show me musicals."), MaxChars: 30}
		got, err := m.Summarise(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got, "musicals") || strings.Contains(got, "westerns") {
			t.Errorf("Summarise = %q, want the newer request only", got)
		}
	})

	t.Run("limits", func(t *testing.T) {
		for _, limit := range []int{1, 5, 20, 60, 120, 500} {
			got, err := m.Summarise(ctx, memento.SummariseInput{Previous: "User: I love noir films from the 1940s with Humphrey Bogart.", Messages: exchange, MaxChars: limit})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) > limit || !utf8.ValidString(got) {
				t.Errorf("Summarise(limit %d) = %q (%d bytes)", limit, got, len(got))
			}
		}
	})

	t.Run("default limit and empty input", func(t *testing.T) {
		got, err := m.Summarise(ctx, memento.SummariseInput{Messages: exchange})
		if err != nil {
			t.Fatal(err)
		}
		if got == "" || len(got) > defaultSummaryChars {
			t.Errorf("Summarise with no limit = %q", got)
		}
		if got, _ := m.Summarise(ctx, memento.SummariseInput{}); got != "" {
			t.Errorf("Summarise of nothing = %q, want empty", got)
		}
	})

	t.Run("negative limit", func(t *testing.T) {
		_, err := m.Summarise(ctx, memento.SummariseInput{Messages: exchange, MaxChars: -1})
		if memento.ErrorCode(err) != memento.EINVALID {
			t.Errorf("Summarise with a negative limit: error %v, want EINVALID", err)
		}
	})
}

func TestSplitSentences(t *testing.T) {
	got := splitSentences("I love Samuel L. Jackson. Really! What now?\nNext line")
	want := []string{"I love Samuel L. Jackson.", "Really!", "What now?", "Next line"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("splitSentences = %q, want %q", got, want)
	}
}
