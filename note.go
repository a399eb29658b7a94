package memento

import (
	"context"
	"slices"
	"sync"
)

// Notes are what a component deep in a call wants the person behind the
// call to know, without failing it: the language model's answer was
// unusable and the offline rules stood in, for example. The caller that
// shows them (the agent's turn, the pipeline's run trace) opens a
// collector with WithNotes, and whoever has something to say calls
// AddNote with the same context. Without a collector a note goes nowhere,
// so components add notes whether or not anyone listens.

type notesKey struct{}

// noteSet is one collector. Model calls of a turn may run concurrently, so
// it is locked.
type noteSet struct {
	mu    sync.Mutex
	notes []string
}

// WithNotes returns ctx with a new, empty collector of notes. A collector
// already in ctx is hidden, so a step that opens its own sees only its
// notes.
func WithNotes(ctx context.Context) context.Context {
	return context.WithValue(ctx, notesKey{}, &noteSet{})
}

// AddNote records text in ctx's collector, once: a note already there is
// not repeated. It reports whether a collector took it.
func AddNote(ctx context.Context, text string) bool {
	set, ok := ctx.Value(notesKey{}).(*noteSet)
	if !ok || text == "" {
		return false
	}
	set.mu.Lock()
	defer set.mu.Unlock()
	if !slices.Contains(set.notes, text) {
		set.notes = append(set.notes, text)
	}
	return true
}

// Notes returns the notes recorded in ctx's collector so far, in the order
// they were added; nil without a collector or notes.
func Notes(ctx context.Context) []string {
	set, ok := ctx.Value(notesKey{}).(*noteSet)
	if !ok {
		return nil
	}
	set.mu.Lock()
	defer set.mu.Unlock()
	return slices.Clone(set.notes)
}
