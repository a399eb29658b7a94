// Package prefrows holds what both stores do the same way with a batch's
// copy of a user's preferences (memento.PreferenceWrite): the copy is
// read once and brought up to date with the rows each write changed.
package prefrows

import (
	"cmp"
	"slices"
	"strings"

	"github.com/memento-ai/memento"
)

// Replace returns current (a user's preferences, oldest first, as the
// stores list them: by first seen, then id) with the rows of ids replaced
// by fresh, those rows as read again; a row of ids missing from fresh is
// gone from the result.
func Replace(current []memento.Preference, ids []string, fresh []memento.Preference) []memento.Preference {
	stale := make(map[string]bool, len(ids))
	for _, id := range ids {
		stale[id] = true
	}
	out := make([]memento.Preference, 0, len(current)+len(fresh))
	for _, p := range current {
		if !stale[p.ID] {
			out = append(out, p)
		}
	}
	out = append(out, fresh...)
	slices.SortStableFunc(out, func(a, b memento.Preference) int {
		return cmp.Or(a.FirstSeen.Compare(b.FirstSeen), strings.Compare(a.ID, b.ID))
	})
	return out
}
