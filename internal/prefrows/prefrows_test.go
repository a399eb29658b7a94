package prefrows

import (
	"slices"
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

func TestReplace(t *testing.T) {
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	current := []memento.Preference{
		{ID: "a", FirstSeen: at(0), Weight: 1},
		{ID: "b", FirstSeen: at(1), Weight: 1},
		{ID: "c", FirstSeen: at(2), Weight: 1},
	}
	// b was updated, c is gone (read again and not found), d is new and
	// first seen with a, after it by id.
	fresh := []memento.Preference{{ID: "b", FirstSeen: at(1), Weight: 2}, {ID: "d", FirstSeen: at(0), Weight: 1}}
	got := Replace(current, []string{"b", "c", "d"}, fresh)
	var ids []string
	for _, p := range got {
		ids = append(ids, p.ID)
	}
	if want := []string{"a", "d", "b"}; !slices.Equal(ids, want) {
		t.Fatalf("Replace ids = %v, want %v", ids, want)
	}
	if got[2].Weight != 2 {
		t.Errorf("b's weight = %v, want the fresh row's 2", got[2].Weight)
	}
	if current[1].Weight != 1 || len(current) != 3 {
		t.Errorf("Replace changed its input: %+v", current)
	}
	if got := Replace(current, nil, nil); len(got) != 3 {
		t.Errorf("Replace with nothing changed = %d rows, want 3", len(got))
	}
}
