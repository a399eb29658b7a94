// Package task runs a piece of background work that its owner can stop
// and wait for, as a store stops its back-fills when it closes.
package task

import "context"

// Task is work running in its own goroutine.
type Task struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// Start runs fn in a goroutine with a context that Stop cancels.
func Start(fn func(ctx context.Context)) *Task {
	ctx, cancel := context.WithCancel(context.Background())
	t := &Task{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(t.done)
		fn(ctx)
	}()
	return t
}

// Done is closed once the work has returned.
func (t *Task) Done() <-chan struct{} { return t.done }

// Stop cancels the task's context and waits for fn to return. A nil Task
// is stopped already.
func (t *Task) Stop() {
	if t == nil {
		return
	}
	t.cancel()
	<-t.done
}
