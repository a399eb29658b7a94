package offline

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/memento-ai/memento"
)

func fact(text string) memento.Fact    { return memento.Fact{Text: text} }
func negFact(text string) memento.Fact { return memento.Fact{Text: text, Negated: true} }

// factCases are messages with every fact the extractor must find, in
// order. They double as the corpus of the reviewer and sentinel tests.
var factCases = []struct {
	msg  string
	want []memento.Fact
}{
	{"I love sci-fi but can't stand horror, and I watch everything on Netflix",
		[]memento.Fact{fact("loves science fiction"), negFact("can't stand horror"), fact("watches everything on Netflix")}},
	{"I don't like horror but I like comedies", []memento.Fact{negFact("doesn't like horror"), fact("likes comedies")}},
	{"I'm into documentaries", []memento.Fact{fact("is into documentaries")}},
	{"I'm not a fan of musicals", []memento.Fact{negFact("is not a fan of musicals")}},
	{"Not a fan of musicals.", []memento.Fact{negFact("is not a fan of musicals")}},
	{"Love sci-fi!", []memento.Fact{fact("loves science fiction")}},
	{"my favourite is Alien", []memento.Fact{fact("favourite is Alien")}},
	{"My favorite movie is The Godfather", []memento.Fact{fact("favorite movie is The Godfather")}},
	{"I want to watch Dune someday", []memento.Fact{fact("wants to watch Dune someday")}},
	{"I'm on Netflix", []memento.Fact{fact("is on Netflix")}},
	{"I watch on weekends", []memento.Fact{fact("watches on weekends")}},
	{"I rewatch The Office every year", []memento.Fact{fact("rewatches The Office every year")}},
	{"I prefer short episodes", []memento.Fact{fact("prefers short episodes")}},
	{"I moved to Lisbon", []memento.Fact{fact("moved to Lisbon")}},
	{"my daughter is 7", []memento.Fact{fact("has a daughter who is 7")}},
	{"My son is 12 and my daughter is 9", []memento.Fact{fact("has a son who is 12"), fact("has a daughter who is 9")}},
	{"I work as a nurse", []memento.Fact{fact("works as a nurse")}},
	{"My wife and I watch rom-coms on Fridays", []memento.Fact{fact("watches romantic comedies on Fridays with their wife")}},
	{"I usually enjoy movies with Seth Rogen and Jonah Hill", []memento.Fact{fact("usually enjoys movies with Seth Rogen and Jonah Hill")}},
	{"I haven't seen that one, but I love Tom Hanks", []memento.Fact{fact("loves Tom Hanks")}},
	{"I usually fall asleep during long movies", []memento.Fact{fact("usually falls asleep during long movies")}},
	{"Horror gives me nightmares", []memento.Fact{fact("horror gives them nightmares")}},
	{"I don't dislike horror", []memento.Fact{negFact("doesn't dislike horror")}},
	{"I no longer watch reality shows", []memento.Fact{negFact("no longer watches reality shows")}},
	{"I have two kids and a dog", []memento.Fact{fact("has two kids and a dog")}},
	{"I love sci-fi, can you recommend some?", []memento.Fact{fact("loves science fiction")}},
	{"I binge-watch crime dramas on Hulu", []memento.Fact{fact("binge-watches crime dramas on Hulu")}},
	{"I like strawberries but I don't like very sweet desserts", []memento.Fact{fact("likes strawberries"), negFact("doesn't like very sweet desserts")}},
	{"I only watch movies in the evening with my husband", []memento.Fact{fact("only watches movies in the evening with their husband")}},
	{"I live in Porto and I work from home", []memento.Fact{fact("lives in Porto"), fact("works from home")}},
	{"I've been a huge Tarantino fan since college", []memento.Fact{fact("has been a huge Tarantino fan since college")}},
	{"We watch a movie every Friday night", []memento.Fact{fact("watches a movie every Friday night")}},
	{"Honestly I can't stand jump scares, although I really love slow psychological thrillers",
		[]memento.Fact{negFact("can't stand jump scares"), fact("really loves slow psychological thrillers")}},
	{"I'm allergic to cats", []memento.Fact{fact("is allergic to cats")}},
	{"I prefer hidden gems over blockbusters", []memento.Fact{fact("prefers hidden gems over blockbusters")}},
	{"Netflix is my go-to", []memento.Fact{fact("Netflix is their go-to")}},
	{"I have seen both and love Superbad", []memento.Fact{fact("loves Superbad")}},

	// Nothing durable: small talk, requests, questions, the titles just shown.
	{"sounds good", nil},
	{"thanks", nil},
	{"ok", nil},
	{"show me comedies", nil},
	{"how does this work?", nil},
	{"I want a comedy tonight", nil},
	{"I'm looking for some good thriller movies", nil},
	{"Can you recommend something like Heat?", nil},
	{"I've seen it", nil},
	{"I'll check it out, thanks!", nil},
	{"I think so", nil},
	{"I don't know", nil},
	{"I'm good, thanks", nil},
	{"I love it!", nil},
	{"Have a great day", nil},
	{"the weather is nice", nil},
}

func TestExtractFacts(t *testing.T) {
	m := newTestModel(t)
	for _, tt := range factCases {
		t.Run(tt.msg, func(t *testing.T) {
			got, err := m.ExtractFacts(context.Background(), memento.ExtractInput{Message: tt.msg})
			if err != nil {
				t.Fatalf("ExtractFacts: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ExtractFacts(%q) mismatch (-want +got):\n%s", tt.msg, diff)
			}
		})
	}
}

// TestWorthRemembering checks the sentinel against the fact cases: a
// message is worth remembering exactly when it holds a fact.
func TestWorthRemembering(t *testing.T) {
	m := newTestModel(t)
	extra := []struct {
		msg  string
		want bool
	}{
		{"sounds good", false},
		{"Thank you so much, goodbye.", false},
		{"show me comedies", false},
		{"What's that movie about?", false},
		{"Is it on Netflix?", false},
		{"Not those, something else", false},
		{"I'm vegetarian", true},
		{"I can't stand gore", true},
		{"I watch TV every night before bed", true},
		{"my husband hates musicals", true},
	}
	for _, tt := range factCases {
		extra = append(extra, struct {
			msg  string
			want bool
		}{tt.msg, len(tt.want) > 0})
	}
	for _, tt := range extra {
		t.Run(tt.msg, func(t *testing.T) {
			v, err := m.WorthRemembering(context.Background(), tt.msg, movieSchema)
			if err != nil {
				t.Fatalf("WorthRemembering: %v", err)
			}
			if v.OK != tt.want {
				t.Errorf("WorthRemembering(%q) = %v (%s), want %v", tt.msg, v.OK, v.Reason, tt.want)
			}
		})
	}
}

// TestReviewExtractionAcceptsOwnFacts checks that the reviewer passes every
// extraction of the extractor, so the pipeline does not loop on good work.
func TestReviewExtractionAcceptsOwnFacts(t *testing.T) {
	m := newTestModel(t)
	ctx := context.Background()
	for _, tt := range factCases {
		facts, err := m.ExtractFacts(ctx, memento.ExtractInput{Message: tt.msg})
		if err != nil {
			t.Fatal(err)
		}
		v, err := m.ReviewExtraction(ctx, tt.msg, facts)
		if err != nil {
			t.Fatal(err)
		}
		if !v.OK {
			t.Errorf("ReviewExtraction(%q, %v) = not OK: %s", tt.msg, facts, v.Reason)
		}
	}
}

func TestReviewExtraction(t *testing.T) {
	m := newTestModel(t)
	msg := "I love sci-fi but can't stand horror, and I watch everything on Netflix"
	tests := []struct {
		name   string
		facts  []memento.Fact
		ok     bool
		naming []string // phrases the reason must name
	}{
		{"faithful", []memento.Fact{fact("loves science fiction"), negFact("can't stand horror"), fact("watches everything on Netflix")}, true, nil},
		{"paraphrased sentiment", []memento.Fact{fact("enjoys sci-fi"), fact("hates horror"), fact("watches on Netflix")}, true, nil},
		{"invented", []memento.Fact{fact("loves science fiction"), fact("loves jazz"), negFact("can't stand horror"), fact("watches everything on Netflix")}, false, []string{`"loves jazz"`}},
		{"garbled", []memento.Fact{fact("loves science fishing"), negFact("can't stand horror"), fact("watches everything on Hulu")}, false, []string{`"loves science fishing"`, `"watches everything on Hulu"`}},
		{"flipped sentiment", []memento.Fact{fact("loves science fiction"), fact("loves horror"), fact("watches everything on Netflix")}, false, []string{`"loves horror"`}},
		{"missing", []memento.Fact{fact("loves science fiction")}, false, []string{"Missing", `"can't stand horror"`, `"watches everything on Netflix"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := m.ReviewExtraction(context.Background(), msg, tt.facts)
			if err != nil {
				t.Fatal(err)
			}
			if v.OK != tt.ok {
				t.Fatalf("ReviewExtraction OK = %v (%s), want %v", v.OK, v.Reason, tt.ok)
			}
			for _, n := range tt.naming {
				if !strings.Contains(v.Reason, n) {
					t.Errorf("reason %q does not name %s", v.Reason, n)
				}
			}
		})
	}
}

// TestExtractFactsRepair runs the extractor-reviewer loop: the reviewer's
// note drops the invented fact and the repaired extraction passes review.
func TestExtractFactsRepair(t *testing.T) {
	m := newTestModel(t)
	ctx := context.Background()
	msg := "I love sci-fi and I watch on weekends"
	previous := []memento.Fact{fact("loves science fiction"), fact("has a cat named Bob"), fact("watches on weekends")}
	v, err := m.ReviewExtraction(ctx, msg, previous)
	if err != nil {
		t.Fatal(err)
	}
	if v.OK {
		t.Fatal("ReviewExtraction passed an invented fact")
	}
	got, err := m.ExtractFacts(ctx, memento.ExtractInput{Message: msg, Previous: previous, RepairNote: v.Reason})
	if err != nil {
		t.Fatal(err)
	}
	want := []memento.Fact{fact("loves science fiction"), fact("watches on weekends")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("repaired facts mismatch (-want +got):\n%s", diff)
	}
	if v, _ := m.ReviewExtraction(ctx, msg, got); !v.OK {
		t.Errorf("repaired facts fail review: %s", v.Reason)
	}
	// A note in other words is honoured too.
	got, err = m.ExtractFacts(ctx, memento.ExtractInput{Message: msg, Previous: previous,
		RepairNote: `The fact "has a cat named Bob" is not stated in the message; drop it.`})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("facts after a free-text note mismatch (-want +got):\n%s", diff)
	}
}

func TestNoteQuotes(t *testing.T) {
	note := `Unsupported facts, not stated in the message (drop them): "a", "b". Missing facts (add them): "c".`
	if diff := cmp.Diff([]string{"a", "b"}, noteQuotes(note, true)); diff != "" {
		t.Errorf("drop quotes mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"c"}, noteQuotes(note, false)); diff != "" {
		t.Errorf("add quotes mismatch (-want +got):\n%s", diff)
	}
	if got := noteQuotes(`unterminated "quote`, true); len(got) != 0 {
		t.Errorf("noteQuotes of an unterminated quote = %q, want none", got)
	}
}
