package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/fulltext"
)

// wantPeriods is what a candidate of text said at at must carry: the
// periods of fulltext.When, to the second, and whether it tells a time.
func wantPeriods(text string, at time.Time) ([]memento.Period, bool) {
	ps, tells := fulltext.When(text, at.UTC())
	var out []memento.Period
	for _, p := range ps {
		out = append(out, memento.Period{From: time.Unix(p.From.Unix(), 0).UTC(), To: time.Unix(p.To.Unix(), 0).UTC()})
	}
	return out, tells
}

// samePeriods reports whether a candidate carries the periods of its
// text resolved against its own time.
func samePeriods(c memento.RecallCandidate, want []memento.Period, tells bool) bool {
	if c.TellsTime != tells || len(c.Periods) != len(want) {
		return false
	}
	for i := range want {
		if !c.Periods[i].From.Equal(want[i].From) || !c.Periods[i].To.Equal(want[i].To) {
			return false
		}
	}
	return true
}

// covers reports whether any of the periods holds the instant t.
func covers(ps []memento.Period, t time.Time) bool {
	return slices.ContainsFunc(ps, func(p memento.Period) bool { return !t.Before(p.From) && t.Before(p.To) })
}

// testRecallPeriods checks that a store resolves the time expressions of
// every message and memory against the row's own time when it writes the
// row (a message's time, a memory's validFrom) and hands them over with
// each recall candidate and recall document, and that editing a memory's
// value resolves its new text.
func testRecallPeriods(t *testing.T, open Opener) {
	st := open(t)
	rs, ok := st.(memento.RecallStore)
	if !ok {
		t.Skip("the store does not implement memento.RecallStore")
	}
	ctx := t.Context()
	// t0 is Tuesday 4 March 2025: "last week" is 24 February to 2 March.
	texts := map[string]string{
		"p1": "we went kayaking last week",
		"p2": "kayaking is lovely",
		"p3": "I have been kayaking lately",
		"p4": "the kayaking trip was on Saturday, two days after my birthday in February",
	}
	var stored []memento.Message
	for _, id := range []string{"p1", "p2", "p3", "p4"} {
		stored = append(stored, userMessage(t, st, ann, "tp", id, texts[id], len(stored)))
	}
	writeOK(t, st, ann, memento.MemoryWrite{Message: stored[0],
		Insert: []memento.Memory{episode("pm1", "EVENT", "went kayaking yesterday", stored[0])}, Run: run(stored[0], "pm1")})

	msgs, err := rs.MessageCandidates(ctx, ann, memento.CandidateQuery{Query: "kayaking", Keyword: 10})
	if err != nil {
		t.Fatalf("MessageCandidates: %v", err)
	}
	if len(msgs) != 4 {
		t.Fatalf("MessageCandidates(kayaking) = %d candidates, want 4", len(msgs))
	}
	for _, c := range msgs {
		want, tells := wantPeriods(c.Text, c.At)
		if !samePeriods(c, want, tells) {
			t.Errorf("message %s (%q): periods %v, tells %v; want %v, %v", c.ID, c.Text, c.Periods, c.TellsTime, want, tells)
		}
		switch c.ID {
		case "p1":
			if !covers(c.Periods, time.Date(2025, 2, 26, 12, 0, 0, 0, time.UTC)) || covers(c.Periods, t0) {
				t.Errorf("%q said on %s: periods %v, want the week before", c.Text, c.At.Format("2 Jan 2006"), c.Periods)
			}
		case "p2":
			if c.TellsTime || len(c.Periods) > 0 {
				t.Errorf("%q tells no time, got %v, %v", c.Text, c.Periods, c.TellsTime)
			}
		case "p3":
			if !c.TellsTime || len(c.Periods) > 0 {
				t.Errorf("%q tells a time without a period, got %v, %v", c.Text, c.Periods, c.TellsTime)
			}
		}
	}
	mems, err := rs.MemoryCandidates(ctx, ann, memento.CandidateQuery{Query: "kayaking", Keyword: 10})
	if err != nil || len(mems) != 1 {
		t.Fatalf("MemoryCandidates(kayaking) = %+v, %v; want pm1", mems, err)
	}
	yesterday := time.Date(2025, 3, 3, 12, 0, 0, 0, time.UTC)
	if m := mems[0]; !m.TellsTime || !covers(m.Periods, yesterday) || covers(m.Periods, t0) {
		t.Errorf("memory %q from %s: periods %v, tells %v; want 3 March 2025", m.Text, m.At.Format("2 Jan 2006"), m.Periods, m.TellsTime)
	}

	// An edit resolves the new value against the memory's time.
	if _, err := st.UpdateMemory(ctx, ann, "pm1", memento.MemoryUpdate{Value: "went kayaking with Ann"}); err != nil {
		t.Fatalf("UpdateMemory: %v", err)
	}
	mems, err = rs.MemoryCandidates(ctx, ann, memento.CandidateQuery{Query: "kayaking", Keyword: 10})
	if err != nil || len(mems) != 1 || mems[0].TellsTime || len(mems[0].Periods) > 0 {
		t.Errorf("after an edit that tells no time: %+v, %v", mems, err)
	}

	rc, ok := st.(memento.RecallCorpus)
	if !ok {
		return
	}
	docs, err := rc.RecallDocs(ctx, ann, -1)
	if err != nil {
		t.Fatalf("RecallDocs: %v", err)
	}
	for _, d := range docs.Docs {
		want, tells := wantPeriods(d.Candidate.Text, d.Candidate.At)
		if !samePeriods(d.Candidate, want, tells) {
			t.Errorf("recall document %s (%q): periods %v, tells %v; want %v, %v", d.Candidate.ID, d.Candidate.Text, d.Candidate.Periods, d.Candidate.TellsTime, want, tells)
		}
	}
}
