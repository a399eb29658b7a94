package memento

import "slices"

// DefaultCount is how many titles a recommendation shows unless the user
// asks for another number.
const DefaultCount = 3

// ActiveContext is the structured short-term memory of a thread: the search
// constraints in force and the titles the user has already been shown and
// turned down. A follow-up turn modifies it instead of starting over, and
// every answer returns it so the memory is visible. Its JSON shape is a
// contract; add fields, never rename them.
type ActiveContext struct {
	Genres           []string `json:"genres"`
	TitleType        string   `json:"titleType"`
	MinYear          *int     `json:"minYear"`
	MaxYear          *int     `json:"maxYear"`
	People           []string `json:"people"`
	FreeText         string   `json:"freeText"`
	IsAdult          bool     `json:"isAdult"`
	Count            int      `json:"count"`
	ExcludedTitleIDs []string `json:"excludedTitleIds"`
	// ExcludedGenres are genres the user turned down; no title of any of
	// them is shown.
	ExcludedGenres []string `json:"excludedGenres"`
}

// NewActiveContext returns an empty context with the default count and empty
// (not nil) lists, as it is rendered to JSON.
func NewActiveContext() ActiveContext {
	return ActiveContext{Genres: []string{}, People: []string{}, Count: DefaultCount, ExcludedTitleIDs: []string{}, ExcludedGenres: []string{}}
}

// Normalize replaces nil lists with empty ones and a non-positive count with
// the default, so the JSON shape is always the same.
func (c *ActiveContext) Normalize() {
	if c.Genres == nil {
		c.Genres = []string{}
	}
	if c.People == nil {
		c.People = []string{}
	}
	if c.ExcludedTitleIDs == nil {
		c.ExcludedTitleIDs = []string{}
	}
	if c.ExcludedGenres == nil {
		c.ExcludedGenres = []string{}
	}
	if c.Count <= 0 {
		c.Count = DefaultCount
	}
}

// Clone returns a deep copy of c.
func (c ActiveContext) Clone() ActiveContext {
	out := c
	out.Genres = slices.Clone(c.Genres)
	out.People = slices.Clone(c.People)
	out.ExcludedTitleIDs = slices.Clone(c.ExcludedTitleIDs)
	out.ExcludedGenres = slices.Clone(c.ExcludedGenres)
	if c.MinYear != nil {
		v := *c.MinYear
		out.MinYear = &v
	}
	if c.MaxYear != nil {
		v := *c.MaxYear
		out.MaxYear = &v
	}
	out.Normalize()
	return out
}

// HasConstraints reports whether any search constraint is set.
func (c ActiveContext) HasConstraints() bool {
	return len(c.Genres) > 0 || len(c.ExcludedGenres) > 0 || c.TitleType != "" || c.MinYear != nil || c.MaxYear != nil ||
		len(c.People) > 0 || c.FreeText != ""
}

// ThreadState is what the store keeps for a thread between turns: the active
// context and the titles the last answer showed (which a rejection adds to
// the exclusions).
type ThreadState struct {
	Thread    Thread        `json:"thread"`
	Context   ActiveContext `json:"activeContext"`
	LastShown []string      `json:"lastShown"`
	// LastSeq is the sequence number of the thread's newest message, 0 for
	// a thread with none.
	LastSeq int64 `json:"lastSeq"`
}
