package agent

import (
	"slices"
	"strings"

	"github.com/memento-ai/memento"
)

// yearWindow is the span a relative year move uses when the context has no
// window of its own.
const yearWindow = 10

// Apply returns the active context after a turn understood as u, given the
// context before it and the titles the previous answer showed. It is pure:
// the rules of the thread memory live here, where tests can reach them.
//
//   - A turn that needs no search leaves the context as it was.
//   - A new, unrelated request (Replace) starts from an empty context,
//     keeping only the exclusions.
//   - A rejection keeps every constraint and adds the shown titles to the
//     exclusions; exclusions accumulate over follow-ups.
//   - "Older" and "newer" move the year window just past the years of the
//     titles shown.
//   - Soft wishes accumulate, one of each kind; corrections are the
//     turn's own. Titles named by reference (Like, Seen, RejectTitles) are
//     resolved and applied by the turn, which knows the catalog.
func Apply(prev memento.ActiveContext, u memento.Understanding, shown []memento.Title, thisYear int) memento.ActiveContext {
	prev.Normalize()
	if !u.Search {
		next := prev.Clone()
		next.Corrections = []memento.Correction{}
		return next
	}
	next := prev.Clone()
	if u.Replace {
		// Titles seen or turned down stay out after a change of topic:
		// a user who said no to them said no to them, whatever they
		// ask for next.
		next = memento.NewActiveContext()
		next.ExcludedTitleIDs = slices.Clone(prev.ExcludedTitleIDs)
	}
	// Corrections are this turn's: how its words were read.
	next.Corrections = slices.Clone(u.Corrections)
	if u.Soft != nil {
		next.Soft = mergeSoft(next.Soft, u.Soft)
	}
	if u.Reject {
		for _, t := range shown {
			if !slices.Contains(next.ExcludedTitleIDs, t.ID) {
				next.ExcludedTitleIDs = append(next.ExcludedTitleIDs, t.ID)
			}
		}
	}
	if u.Genres != nil {
		next.Genres = dedupe(u.Genres)
		// Asking for a genre again takes it off the turned-down list.
		next.ExcludedGenres = slices.DeleteFunc(next.ExcludedGenres, func(g string) bool { return containsFold(next.Genres, g) })
	}
	if u.ExcludeGenres != nil {
		next.ExcludedGenres = dedupe(append(next.ExcludedGenres, u.ExcludeGenres...))
		next.Genres = slices.DeleteFunc(next.Genres, func(g string) bool { return containsFold(next.ExcludedGenres, g) })
	}
	if u.TitleType != "" {
		next.TitleType = u.TitleType
	}
	if u.People != nil {
		next.People = dedupe(u.People)
	}
	if u.FreeText != "" {
		next.FreeText = strings.TrimSpace(u.FreeText)
	}
	if u.IsAdult != nil {
		next.IsAdult = *u.IsAdult
	}
	if u.Count > 0 {
		next.Count = u.Count
	}
	if u.MinYear != nil || u.MaxYear != nil {
		// A bound given alone keeps the other one while they still make
		// a window.
		lo, hi := next.MinYear, next.MaxYear
		if u.MinYear != nil {
			lo = copyInt(u.MinYear)
			if u.MaxYear == nil && hi != nil && *hi < *lo {
				hi = nil
			}
		}
		if u.MaxYear != nil {
			hi = copyInt(u.MaxYear)
			if u.MinYear == nil && lo != nil && *lo > *hi {
				lo = nil
			}
		}
		next.MinYear, next.MaxYear = lo, hi
	}
	switch u.YearShift {
	case "older":
		shiftOlder(&next, shown, thisYear)
	case "newer":
		shiftNewer(&next, shown, thisYear)
	}
	next.Normalize()
	return next
}

// shiftOlder moves the window to end before the oldest title shown. A
// closed window keeps its width; an open one gets ten years when its start
// would pass its end.
func shiftOlder(c *memento.ActiveContext, shown []memento.Title, thisYear int) {
	oldest := 0
	for _, t := range shown {
		if t.Year > 0 && (oldest == 0 || t.Year < oldest) {
			oldest = t.Year
		}
	}
	width := yearWindow
	closed := c.MinYear != nil && c.MaxYear != nil
	if closed {
		width = max(*c.MaxYear-*c.MinYear, 1)
	}
	var newMax int
	switch {
	case oldest > 0:
		newMax = oldest - 1
	case c.MinYear != nil:
		newMax = *c.MinYear - 1
	case c.MaxYear != nil:
		newMax = *c.MaxYear - width
	default:
		newMax = thisYear - width
	}
	newMax = max(newMax, memento.MinYear)
	c.MaxYear = &newMax
	// A closed window moves whole; an open one ("from 2010 on") keeps its
	// start while the start stays below the new end.
	if closed || c.MinYear == nil || *c.MinYear > newMax {
		newMin := max(newMax-width, memento.MinYear)
		c.MinYear = &newMin
	}
}

// shiftNewer moves the window to start after the newest title shown.
func shiftNewer(c *memento.ActiveContext, shown []memento.Title, thisYear int) {
	newest := 0
	for _, t := range shown {
		if t.Year > newest {
			newest = t.Year
		}
	}
	width := yearWindow
	if c.MinYear != nil && c.MaxYear != nil {
		width = max(*c.MaxYear-*c.MinYear, 1)
	}
	var newMin int
	switch {
	case newest > 0:
		newMin = newest + 1
	case c.MaxYear != nil:
		newMin = *c.MaxYear + 1
	case c.MinYear != nil:
		newMin = *c.MinYear + width
	default:
		newMin = thisYear - width
	}
	newMin = min(newMin, thisYear)
	c.MinYear = &newMin
	if c.MaxYear != nil && *c.MaxYear < newMin {
		c.MaxYear = nil
	}
}

// Query turns an active context into a catalog query for one page.
func Query(c memento.ActiveContext, page, size int) memento.TitleQuery {
	q := memento.TitleQuery{
		Genres:        c.Genres,
		ExcludeGenres: c.ExcludedGenres,
		Type:          c.TitleType,
		People:        c.People,
		Text:          c.FreeText,
		Exclude:       c.ExcludedTitleIDs,
		Page:          page,
		Size:          size,
	}
	if c.MinYear != nil {
		q.MinYear = *c.MinYear
	}
	if c.MaxYear != nil {
		q.MaxYear = *c.MaxYear
	}
	if c.IsAdult {
		v := true
		q.IsAdult = &v
	}
	return q
}

func copyInt(p *int) *int {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func containsFold(list []string, s string) bool {
	return slices.ContainsFunc(list, func(o string) bool { return strings.EqualFold(o, s) })
}

func dedupe(in []string) []string {
	out := make([]string, 0, len(in))
	for _, s := range in {
		s = strings.TrimSpace(s)
		if s != "" && !slices.ContainsFunc(out, func(o string) bool { return strings.EqualFold(o, s) }) {
			out = append(out, s)
		}
	}
	return out
}
