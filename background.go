package memento

import "context"

// Background work (the jobs of the queue: memory formation, summaries,
// preferences) and the work someone waits for (a chat turn, a context
// read) share the language model. A provider keeps a separate budget of
// requests for each, so a backlog of jobs never makes a person wait; it
// tells them apart by this mark, which the job runner puts on every job's
// context.

type backgroundKey struct{}

// InBackground returns ctx marked as background work.
func InBackground(ctx context.Context) context.Context {
	return context.WithValue(ctx, backgroundKey{}, true)
}

// IsBackground reports whether ctx is marked as background work. Unmarked
// work is someone's turn.
func IsBackground(ctx context.Context) bool {
	b, _ := ctx.Value(backgroundKey{}).(bool)
	return b
}
