package recall

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

// FuzzParseDates feeds parseDates (the dates a recall query names) any
// text: every date it finds has a month 0-12 and a day 0-31, a year that is
// unknown or one a store can hold, and a period (span) that is a
// non-empty range of times a store can hold.
func FuzzParseDates(f *testing.F) {
	for _, seed := range []string{
		"What did I say on 13 October 2023?", "When did Caroline go to the LGBTQ support group?",
		"in June", "may I ask about May 7th, 2023", "Sept. 3 2022 or 31st of december 1999", "the 1990s, 2020 and 2099",
		"on 13 October 9999", "1 January 1600", "1 January 1678", "31 December 2261", "2261", "99 march 2023", "dec 0000", "", "june june june 2023 2023",
		"İN JUNE 2023", "early march", "the 32nd of may 2024",
	} {
		f.Add(seed)
	}
	now := time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, q string) {
		refs := parseDates(q)
		for _, r := range refs {
			switch {
			case r.Year == 0 && r.Month == 0:
				t.Fatalf("parseDates(%q) kept an empty date %+v", q, r)
			case r.Month < 0 || r.Month > 12 || r.Day < 0 || r.Day > 31:
				t.Fatalf("parseDates(%q) = %+v, out of the calendar", q, r)
			case r.Year != 0 && (r.Year < memento.MinTimeYear || r.Year > memento.MaxTimeYear):
				t.Fatalf("parseDates(%q) = %+v, a year no stored time has", q, r)
			}
			if from, to, ok := r.span(); ok {
				if !from.Before(to) {
					t.Fatalf("span of %+v is empty: %v to %v", r, from, to)
				}
				q := memento.CandidateQuery{From: from, To: to}
				if err := q.Check(); err != nil {
					t.Fatalf("span of %+v = %v to %v, which a store refuses: %v", r, from, to, err)
				}
			}
			_ = r.matches(now)
		}
		if from, to := newTimeQuery(q, now).period(); !from.IsZero() {
			if !from.Before(to) {
				t.Fatalf("period of %q is empty: %v to %v", q, from, to)
			}
			if err := (memento.CandidateQuery{From: from, To: to}).Check(); err != nil {
				t.Fatalf("period of %q = %v to %v, which a store refuses: %v", q, from, to, err)
			}
		}
	})
}

// FuzzReadLoCoMo feeds the LoCoMo reader (`memento ingest --format
// locomo`, `memento eval locomo`) arbitrary documents, seeded with a short
// conversation in LoCoMo's format written for this test: it refuses with
// EINVALID, or returns sessions in order whose messages have text, a
// thread and a time a store can hold.
func FuzzReadLoCoMo(f *testing.F) {
	excerpt, err := os.ReadFile("testdata/locomo-format.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(excerpt)
	f.Add(bytes.Replace(excerpt, []byte("8 May, 2023"), []byte("8 May, 9999"), 1))
	f.Add(bytes.Replace(excerpt, []byte(`"1:56 pm on 8 May, 2023"`), []byte(`"11:59 pm on 31 December, 2261"`), 1))
	f.Add([]byte(`{"speaker_a":"A","session_1":[{"speaker":"A","dia_id":"D1:1","text":"hi"}],"session_1_date_time":"1:56 pm on 8 May, 2023","qa":[{"question":"q","adversarial_answer":["x"],"evidence":[]}]}`))
	f.Add([]byte(`{"session_1":[],"session_1_date_time":"yesterday"}`))
	f.Add([]byte(`{"conversation":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ReadLoCoMo(bytes.NewReader(data))
		if err != nil {
			if memento.ErrorCode(err) != memento.EINVALID {
				t.Fatalf("ReadLoCoMo = %v, want EINVALID", err)
			}
			return
		}
		if len(c.Sessions) == 0 {
			t.Fatal("ReadLoCoMo returned a conversation without sessions")
		}
		for i := 1; i < len(c.Sessions); i++ {
			if c.Sessions[i].N < c.Sessions[i-1].N {
				t.Fatalf("sessions out of order: %d before %d", c.Sessions[i-1].N, c.Sessions[i].N)
			}
		}
		for _, m := range c.Messages() {
			switch {
			case strings.TrimSpace(m.Text) == "" || m.Thread == "" || m.Role != memento.RoleUser:
				t.Fatalf("message %+v lacks text, thread or role", m)
			case memento.CheckTime("at", m.At) != nil:
				t.Fatalf("message %q at %v, a time no store can hold", m.ID, m.At)
			}
		}
	})
}
