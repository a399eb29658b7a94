// Package jobctx marks the context in which a store's queue runs a
// background job. The stores commit what such a context writes without
// waiting for the disk: a job's results derive from data already
// committed, and its completion is committed after them, so a power loss
// that takes them takes the completion too and the job runs again.
//
// memento.InBackground marks the same contexts for another purpose (the
// language model's budget of background requests) and is put on by the
// engine; this mark is put on by the stores' own workers, and nothing
// else, so that no write anyone waits on can commit unsynced.
package jobctx

import "context"

type key struct{}

// With returns ctx marked as a background job's.
func With(ctx context.Context) context.Context {
	return context.WithValue(ctx, key{}, true)
}

// Is reports whether ctx is a background job's (With).
func Is(ctx context.Context) bool {
	v, _ := ctx.Value(key{}).(bool)
	return v
}
