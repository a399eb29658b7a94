package recall

import (
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

// TestDatesOutsideTheStoredRange checks that a query naming a date no
// stored time can have is read without that date (rather than with a
// period the store would refuse, or one wrapped around), and that a day at
// either end of the range gives a period the store accepts.
func TestDatesOutsideTheStoredRange(t *testing.T) {
	for _, q := range []string{"what did I do on 13 October 9999?", "on 1 January 1600", "in March 3000"} {
		if refs := parseDates(q); len(refs) != 0 {
			t.Errorf("parseDates(%q) = %+v, want no date", q, refs)
		}
	}
	tests := []struct {
		q        string
		from, to time.Time
	}{
		{"on 1 January 1678", time.Date(1678, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1678, 1, 5, 0, 0, 0, 0, time.UTC)},
		{"on 31 December 2261", time.Date(2261, 12, 28, 0, 0, 0, 0, time.UTC), time.Date(2261, 12, 31, 23, 59, 59, 999999999, time.UTC)},
		{"in December 2261", time.Date(2261, 12, 1, 0, 0, 0, 0, time.UTC), time.Date(2261, 12, 31, 23, 59, 59, 999999999, time.UTC)},
	}
	for _, tt := range tests {
		from, to := newTimeQuery(tt.q, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)).period()
		if !from.Equal(tt.from) || !to.Equal(tt.to) {
			t.Errorf("period(%q) = %v to %v, want %v to %v", tt.q, from, to, tt.from, tt.to)
		}
		if err := (memento.CandidateQuery{From: from, To: to}).Check(); err != nil {
			t.Errorf("period(%q) is refused by the store: %v", tt.q, err)
		}
	}
}
