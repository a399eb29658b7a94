package offline

import (
	"context"
	"fmt"
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

// answerText is an answer as the offline reply writer lists titles.
func answerText(titles ...string) string {
	var b strings.Builder
	b.WriteString("Here are some titles:")
	for i, t := range titles {
		fmt.Fprintf(&b, "\n%d. %s: Drama", i+1, t)
	}
	b.WriteString("\nWant something else? Say \"not those\" for different ones.")
	return b.String()
}

// fold summarises each exchange into the previous summary, as the summary
// job does turn after turn: each exchange after the first comes after the
// answer the previous one ended on. It returns every summary written.
func fold(t *testing.T, m *Model, prev string, exchanges ...[]memento.Message) []string {
	t.Helper()
	var out []string
	var answer []memento.Message
	for _, ex := range exchanges {
		in := memento.SummariseInput{Previous: prev, Messages: append(answer, ex...), MaxChars: 1200}
		got, err := m.Summarise(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, got)
		prev = got
		answer = nil
		if last := ex[len(ex)-1]; last.Role == memento.RoleAssistant {
			answer = []memento.Message{last}
		}
	}
	return out
}

func TestSummarise(t *testing.T) {
	m := newTestModel(t)
	ctx := context.Background()
	exchange := msgs(
		"user", "Hi there! Thanks for the help last time. I love sci-fi but can't stand horror. Show me 3 science fiction movies from the 90s.",
		"agent", "Here are 3 science fiction movies from the 1990s:\n1. The Matrix (1999): Science Fiction\n2. Gattaca (1997): Science Fiction\n3. Contact (1997): Science Fiction\nEnjoy!",
	)

	t.Run("the three parts", func(t *testing.T) {
		got, err := m.Summarise(ctx, memento.SummariseInput{Messages: exchange, MaxChars: 600})
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			"Wants: Science Fiction; movies only; from the 1990s.",
			"Turned down: genres Horror.",
			"Said about themselves: loves science fiction; can't stand horror.",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("summary %q lacks %q", got, want)
			}
		}
		for _, small := range []string{"Hi there", "Enjoy", "Thanks", "The Matrix"} {
			if strings.Contains(got, small) {
				t.Errorf("summary %q keeps %q, which a later turn does not need", got, small)
			}
		}
	})

	t.Run("rejected titles are named", func(t *testing.T) {
		got := fold(t, m, "", exchange, msgs("user", "Not those.", "agent", answerText("Cube (1997)")))
		last := got[len(got)-1]
		for _, want := range []string{"titles The Matrix (1999), Gattaca (1997), Contact (1997)", "from the 1990s", "genres Horror"} {
			if !strings.Contains(last, want) {
				t.Errorf("summary after a rejection %q lacks %q", last, want)
			}
		}
		if strings.Contains(last, "Cube") {
			t.Errorf("summary %q names a title shown but not turned down", last)
		}
	})

	t.Run("newest wish wins", func(t *testing.T) {
		got := fold(t, m, "",
			msgs("user", "Show me comedies from the 80s.", "agent", answerText("Big (1988)")),
			msgs("user", "Actually, make it westerns.", "agent", answerText("Unforgiven (1992)")),
		)
		last := got[len(got)-1]
		if !strings.Contains(last, "Western") || strings.Contains(last, "Comedy") {
			t.Errorf("summary %q: want the newer genre (Western) only", last)
		}
		got = fold(t, m, last,
			msgs("user", "I love musicals.", "agent", "Noted."),
			msgs("user", "I can't stand musicals.", "agent", "Noted."),
		)
		last = got[len(got)-1]
		if !strings.Contains(last, "can't stand musicals") || strings.Contains(last, "loves musicals") {
			t.Errorf("summary %q: want the newer stance on musicals only", last)
		}
	})

	t.Run("folds an older summary", func(t *testing.T) {
		prev := "User: I watch everything on Netflix. Show me westerns.\nAgent: Here are 3 westerns."
		got, err := m.Summarise(ctx, memento.SummariseInput{Previous: prev, Messages: msgs("user", "Only from the 60s.")})
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"Western", "from the 1960s", "watches everything on Netflix"} {
			if !strings.Contains(got, want) {
				t.Errorf("summary %q of an old-format summary lacks %q", got, want)
			}
		}
		if strings.Contains(got, "User:") || strings.Contains(got, "Agent:") {
			t.Errorf("summary %q keeps the old transcript format", got)
		}
	})

	t.Run("reads its own summary back", func(t *testing.T) {
		prev, err := m.Summarise(ctx, memento.SummariseInput{Messages: msgs(
			"user", "I have two kids. Give me 5 animated movies with Tom Hanks from 1995 to 2010 about toys.")})
		if err != nil {
			t.Fatal(err)
		}
		again, err := m.Summarise(ctx, memento.SummariseInput{Previous: prev, Messages: msgs("user", "thanks!", "agent", "You're welcome!")})
		if err != nil {
			t.Fatal(err)
		}
		if again != prev {
			t.Errorf("small talk changed the summary:\nbefore %q\nafter  %q", prev, again)
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

// TestSummariseLongThread folds 50 turns one at a time: every summary
// stays bounded, and what the user wants, turned down and said about
// themselves early on survives the folding.
func TestSummariseLongThread(t *testing.T) {
	m := newTestModel(t)
	requests := []string{
		"Show me some comedies.", "Make it older.", "Not those.", "Something from the 2000s.",
		"Any with Tom Hanks?", "Series only.", "Different ones please.", "Movies again.",
		"Show me crime movies from the 70s.", "Not those.",
	}
	var exchanges [][]memento.Message
	for i := 0; i < 50; i++ {
		user := requests[i%len(requests)]
		switch i {
		case 0:
			user = "I have two kids and we watch on Sundays. Show me some comedies."
		case 1:
			user = "No horror please."
		case 4:
			user = "I love musicals."
		case 30:
			user = "I can't stand musicals."
		case 49:
			user = "Show me 5 westerns from the 1960s with Robert De Niro."
		}
		answer := answerText(fmt.Sprintf("Film %d (%d)", 2*i, 1950+i), fmt.Sprintf("Film %d (%d)", 2*i+1, 1951+i))
		exchanges = append(exchanges, msgs("user", user, "agent", answer))
	}
	sums := fold(t, m, "", exchanges...)
	for i, s := range sums {
		if n := len(strings.Fields(s)); n > summaryMaxWords {
			t.Errorf("summary after turn %d has %d words, over %d:\n%s", i+1, n, summaryMaxWords, s)
		}
	}
	last := sums[len(sums)-1]
	if n := len(strings.Fields(last)); n >= 150 {
		t.Fatalf("latest summary of a 50-turn thread has %d words", n)
	}
	for _, want := range []string{
		// What the user wants: the newest request, nothing older.
		"Wants: Western;", "from the 1960s", "with Robert De Niro", "5 at a time",
		// What they turned down, from turn 2 on.
		"genres Horror", "titles ", "more",
		// What they said about themselves in turn 1, and the newer of two stances.
		"has two kids", "can't stand musicals",
	} {
		if !strings.Contains(last, want) {
			t.Errorf("latest summary lacks %q:\n%s", want, last)
		}
	}
	for _, stale := range []string{"Comedy", "Tom Hanks", "series only", "loves musicals"} {
		if strings.Contains(last, stale) {
			t.Errorf("latest summary keeps %q, which a newer wish replaced:\n%s", stale, last)
		}
	}
	if len(sums[49]) > len(sums[25])*2 {
		t.Errorf("summary grows with the thread: %d bytes after 26 turns, %d after 50", len(sums[25]), len(sums[49]))
	}
}

func TestListedTitles(t *testing.T) {
	got := listedTitles("Here are 2:\n1. Heat (1995): Crime, Thriller\n2) Crouching Tiger, Hidden Dragon (2000) - a wuxia film\nnot a line\n3. Alien")
	want := []string{"Heat (1995)", "Crouching Tiger, Hidden Dragon (2000)", "Alien"}
	var names []string
	for _, t := range got {
		names = append(names, titleName(t))
	}
	if strings.Join(names, "|") != strings.Join(want, "|") {
		t.Errorf("listedTitles = %q, want %q", names, want)
	}
}

func TestSplitSentences(t *testing.T) {
	got := splitSentences("I love Samuel L. Jackson. Really! What now?\nNext line")
	want := []string{"I love Samuel L. Jackson.", "Really!", "What now?", "Next line"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("splitSentences = %q, want %q", got, want)
	}
}
