package pipeline_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/pipeline"
)

// ask stores an agent's turn in the fixture's thread.
func (f *fixture) ask(t *testing.T, text string) {
	t.Helper()
	f.n++
	id := "a" + string(rune('0'+f.n/10)) + string(rune('0'+f.n%10))
	if _, err := f.db.AppendMessages(context.Background(), f.s, "t1",
		[]memento.Message{{ID: id, Role: memento.RoleAssistant, Text: text, At: t0.Add(time.Duration(f.n) * time.Hour)}}, nil); err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
}

// TestAnswerToQuestionBecomesMemory checks that a short answer is read
// with the agent's question before it: alone it says nothing, after
// "Which service do you watch on?" it is two platforms, sourced from the
// answer.
func TestAnswerToQuestionBecomesMemory(t *testing.T) {
	f := newFixture(t, pipeline.Options{})
	alone := f.say(t, "Mostly Netflix, sometimes Hulu.")
	if run := f.process(t, alone); run.Outcome != memento.RunNothing {
		t.Errorf("the answer without its question: outcome %s (%s); want nothing", run.Outcome, run.Reason)
	}
	f.ask(t, "Great choice. Which service do you watch on?")
	answer := f.say(t, "Mostly Netflix, sometimes Hulu.")
	run := f.process(t, answer)
	if run.Outcome != memento.RunStored {
		t.Fatalf("outcome %s (%s); want stored. Steps: %+v", run.Outcome, run.Reason, run.Steps)
	}
	got := f.current(t)["PLATFORM"]
	if len(got) != 1 || !strings.Contains(got[0], "Netflix") || !strings.Contains(got[0], "Hulu") {
		t.Errorf("PLATFORM = %q; want Netflix and Hulu", got)
	}
	mems, err := f.db.Memories(context.Background(), f.s, memento.MemoryFilter{Attribute: "PLATFORM"})
	if err != nil || len(mems) != 1 || len(mems[0].Sources) != 1 || mems[0].Sources[0] != answer.ID {
		t.Errorf("PLATFORM memory = %+v (%v); want the answer %s as its one source", mems, err, answer.ID)
	}
	var hygiene memento.RunStep
	for _, s := range run.Steps {
		if s.Node == pipeline.NodeHygiene {
			hygiene = s
		}
	}
	if !strings.Contains(hygiene.Detail, "Which service do you watch on?") {
		t.Errorf("hygiene step detail %q; want the question the message answers", hygiene.Detail)
	}
}

// TestSmallTalkAfterQuestionStoresNothing checks that the sentinel's way
// round for answers still stores nothing for small talk, a request for now
// or an answer that says nothing.
func TestSmallTalkAfterQuestionStoresNothing(t *testing.T) {
	for _, tt := range []struct{ asked, text string }{
		{"Want me to find more like these?", "Sounds good."},
		{"Here are three comedies.\nWant something else? Say \"not those\" for different ones.", "Netflix."},
		{"What are you in the mood for tonight?", "Something funny."},
		{"Which service do you watch on?", "Not sure, whatever is on."},
		{"Have you seen The Matrix?", "No, never."},
	} {
		f := newFixture(t, pipeline.Options{})
		f.ask(t, tt.asked)
		if run := f.process(t, f.say(t, tt.text)); run.Outcome != memento.RunNothing || len(run.Memories) != 0 {
			t.Errorf("%q after %q: outcome %s, memories %v; want nothing", tt.text, tt.asked, run.Outcome, run.Memories)
		}
	}
}

// TestOfferIsNotAQuestionAboutTheUser checks that after an offer ("Want
// something else?") a message the sentinel turns down costs no more model
// calls, while after a question about the user it goes on to the
// extractor.
func TestOfferIsNotAQuestionAboutTheUser(t *testing.T) {
	f := newFixture(t, pipeline.Options{})
	f.ask(t, "Here are three comedies. Want something else?")
	f.process(t, f.say(t, "ok"))
	if n := f.model.total(); n != 1 {
		t.Errorf("after an offer: %d model calls; want the sentinel's only", n)
	}
	f.ask(t, "Which service do you watch on?")
	f.process(t, f.say(t, "ok"))
	if n := f.model.total(); n < 3 {
		t.Errorf("after a question about the user: %d model calls; want the extractor and its reviewer too", n)
	}
}

// TestSeenIsNeverAWish checks that "I've already seen Heat" and "I
// watched Heat" are remembered as something the user did, never as a
// title they want to watch.
func TestSeenIsNeverAWish(t *testing.T) {
	for _, text := range []string{"I've already seen Heat.", "I watched Heat last night.", "I saw Heat at the cinema."} {
		f := newFixture(t, pipeline.Options{})
		f.process(t, f.say(t, text))
		cur := f.current(t)
		if len(cur["WANTS_TO_WATCH"]) > 0 {
			t.Errorf("%q: WANTS_TO_WATCH = %q", text, cur["WANTS_TO_WATCH"])
		}
		if ev := cur["EVENT"]; len(ev) != 1 || !strings.Contains(ev[0], "Heat") {
			t.Errorf("%q: EVENT = %q; want the viewing", text, ev)
		}
	}
}
