package memento

import "slices"

// DefaultCount is how many titles a recommendation shows unless the user
// asks for another number.
const DefaultCount = 3

// MaxCount is the most titles one answer shows; a request for more is
// answered with MaxCount and a note saying so.
const MaxCount = 20

// MaxShownRemembered bounds the titles a thread remembers having shown.
const MaxShownRemembered = 500

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
	// Like holds the ids of titles the results should resemble ("more
	// like the second one", "something like Inception"): candidates are
	// drawn and ranked by similarity of plot and genres to them.
	Like []string `json:"like"`
	// Soft are wishes the catalog cannot filter on (runtime, streaming
	// platform, mood): kept while the context is, used in ranking where
	// the data allows, and named in the notes where it does not.
	Soft []SoftConstraint `json:"soft"`
	// Corrections are the words of this turn's request read as something
	// else ("horor" as Horror), so the user sees how they were understood.
	Corrections []Correction `json:"corrections"`
}

// SoftConstraint is a wish the catalog cannot filter on.
type SoftConstraint struct {
	// Kind is SoftRuntime, SoftPlatform or SoftMood.
	Kind string `json:"kind"`
	// Value is what the user wants, normalised: a platform's name
	// ("Netflix"), a mood ("light", "dark", "feel-good", "scary"), or
	// for a runtime a bound such as "<=120" or ">=150" (minutes).
	Value string `json:"value"`
	// Said is the user's own words ("not too long", "on Netflix").
	Said string `json:"said"`
}

// The kinds of soft constraint.
const (
	SoftRuntime  = "runtime"
	SoftPlatform = "platform"
	SoftMood     = "mood"
)

// Correction is a word of a request read as a known name: a misspelt
// genre or person, matched by edit distance against the vocabulary.
type Correction struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// NewActiveContext returns an empty context with the default count and empty
// (not nil) lists, as it is rendered to JSON.
func NewActiveContext() ActiveContext {
	return ActiveContext{Genres: []string{}, People: []string{}, Count: DefaultCount, ExcludedTitleIDs: []string{}, ExcludedGenres: []string{},
		Like: []string{}, Soft: []SoftConstraint{}, Corrections: []Correction{}}
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
	if c.Like == nil {
		c.Like = []string{}
	}
	if c.Soft == nil {
		c.Soft = []SoftConstraint{}
	}
	if c.Corrections == nil {
		c.Corrections = []Correction{}
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
	out.Like = slices.Clone(c.Like)
	out.Soft = slices.Clone(c.Soft)
	out.Corrections = slices.Clone(c.Corrections)
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
		len(c.People) > 0 || c.FreeText != "" || len(c.Like) > 0
}

// ThreadState is what the store keeps for a thread between turns: the active
// context and the titles the last answer showed (which a rejection adds to
// the exclusions).
type ThreadState struct {
	Thread    Thread        `json:"thread"`
	Context   ActiveContext `json:"activeContext"`
	LastShown []string      `json:"lastShown"`
	// Shown are the titles the thread has shown, newest first, at most
	// MaxShownRemembered: an answer puts them after fresh titles, so a
	// thread does not come back to a title it showed a few answers ago
	// while the catalog has others. A store that keeps no such list
	// returns LastShown.
	Shown []string `json:"shown"`
	// LastSeq is the sequence number of the thread's newest message, 0 for
	// a thread with none.
	LastSeq int64 `json:"lastSeq"`
}
