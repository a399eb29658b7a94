package fulltext

import (
	"testing"
	"time"
)

func TestWhen(t *testing.T) {
	t.Parallel()
	// Friday 9 June 2023.
	at := time.Date(2023, 6, 9, 14, 0, 0, 0, time.UTC)
	d := func(m time.Month, day int) time.Time { return time.Date(2023, m, day, 0, 0, 0, 0, time.UTC) }
	tests := []struct {
		text  string
		in    []time.Time // days the expression must cover
		out   []time.Time // days it must not
		tells bool
	}{
		{"I went to a support group yesterday.", []time.Time{d(6, 8)}, []time.Time{d(6, 9), d(6, 7)}, true},
		{"We went camping last week", []time.Time{d(5, 29), d(6, 2)}, []time.Time{d(6, 8), d(5, 20)}, true},
		{"my sister visited two weeks ago", []time.Time{d(5, 26)}, []time.Time{d(6, 9)}, true},
		{"we went camping with my fam two weekends ago", []time.Time{d(5, 27)}, []time.Time{d(6, 9)}, true},
		{"a few days ago I ran a race", []time.Time{d(6, 6)}, []time.Time{d(5, 20)}, true},
		{"I moved here 4 years ago", []time.Time{d(1, 1).AddDate(-4, 0, 0)}, []time.Time{d(1, 1)}, true},
		{"the pottery class was on Tuesday", []time.Time{d(6, 6)}, []time.Time{d(6, 9)}, true},
		{"Next month I'm having an art show", []time.Time{d(7, 15)}, []time.Time{d(6, 15)}, true},
		{"I painted it in May", []time.Time{d(5, 10)}, []time.Time{d(6, 1)}, true},
		{"in December 2022 we moved", []time.Time{d(12, 10).AddDate(-1, 0, 0)}, []time.Time{d(12, 10)}, true},
		{"I have known them for 4 years", nil, nil, true},
		{"We have loved painting together lately", nil, nil, true},
		// "may" and "march" as verbs are no months.
		{"You may march on", nil, []time.Time{d(5, 10), d(3, 10)}, false},
		{"Thanks, that sounds great!", nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			periods, tells := When(tt.text, at)
			if tells != tt.tells {
				t.Errorf("tells = %v, want %v", tells, tt.tells)
			}
			covers := func(day time.Time) bool {
				for _, p := range periods {
					if p.Overlaps(Period{day, day.AddDate(0, 0, 1)}) {
						return true
					}
				}
				return false
			}
			for _, day := range tt.in {
				if !covers(day) {
					t.Errorf("periods %v do not cover %s", periods, day.Format("2 Jan 2006"))
				}
			}
			for _, day := range tt.out {
				if covers(day) {
					t.Errorf("periods %v cover %s", periods, day.Format("2 Jan 2006"))
				}
			}
		})
	}
}

// TestWhenRelative checks that a query's month names and years are left
// to its own date reading, while its relative expressions are resolved.
func TestWhenRelative(t *testing.T) {
	t.Parallel()
	at := time.Date(2023, 6, 9, 14, 0, 0, 0, time.UTC)
	if p, _ := WhenRelative("what did she paint in May 2022?", at); len(p) != 0 {
		t.Errorf("WhenRelative read a month and year: %v", p)
	}
	p, tells := WhenRelative("what did she do last week?", at)
	if !tells || len(p) != 1 || !p[0].Overlaps(Period{time.Date(2023, 5, 31, 0, 0, 0, 0, time.UTC), time.Date(2023, 6, 1, 0, 0, 0, 0, time.UTC)}) {
		t.Errorf("WhenRelative(last week) = %v, %v", p, tells)
	}
}

// TestMayTellTime checks the cheap test before scanTime: every text that
// scanTime dates passes it.
func TestMayTellTime(t *testing.T) {
	t.Parallel()
	at := time.Date(2023, 6, 9, 14, 0, 0, 0, time.UTC)
	for _, text := range []string{
		"I went yesterday", "Last week was fun", "on TUESDAY", "two weeks ago", "in May", "for 4 years",
		"lately I paint", "this weekend", "for two years now", "a couple of months", "Amélie came", "nothing here at all", "wonderful day", "", "Ago",
	} {
		periods, tells := When(text, at)
		if (tells || len(periods) > 0) && !mayTellTime(text) {
			t.Errorf("mayTellTime(%q) = false, but When reads %v, %v", text, periods, tells)
		}
	}
	for _, text := range []string{"nothing here at all", "wonderful weather", "thanks, that sounds great!"} {
		if mayTellTime(text) {
			t.Errorf("mayTellTime(%q) = true", text)
		}
	}
}

// FuzzWhen feeds When any text: every period it returns is non-empty.
func FuzzWhen(f *testing.F) {
	for _, seed := range []string{"two weeks ago", "since 2001", "next spring", "last Tuesday", "in May 2023", "", "a couple of years ago"} {
		f.Add(seed)
	}
	at := time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, text string) {
		periods, _ := When(text, at)
		for _, p := range periods {
			if !p.From.Before(p.To) {
				t.Fatalf("When(%q) holds an empty period %v to %v", text, p.From, p.To)
			}
		}
	})
}
