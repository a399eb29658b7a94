package agent

import (
	"context"
	"sync"

	"github.com/memento-ai/memento"
)

// threadKey names one thread of one user.
type threadKey struct {
	scope  memento.Scope
	thread string
}

// threadLocks is a lock per thread, held for the whole of a turn. Its zero
// value is ready; an entry lives only while a turn holds or waits for it,
// so the map stays as small as the number of busy threads.
type threadLocks struct {
	mu    sync.Mutex
	locks map[threadKey]*threadLock
}

// threadLock is one thread's lock: a channel of one slot, so that waiting
// for it can give up when the request's context ends.
type threadLock struct {
	slot    chan struct{}
	waiters int // turns holding or waiting for the slot
}

// lock waits until the thread is free or ctx ends, and returns the
// function that frees it.
func (l *threadLocks) lock(ctx context.Context, k threadKey) (unlock func(), err error) {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[threadKey]*threadLock{}
	}
	tl := l.locks[k]
	if tl == nil {
		tl = &threadLock{slot: make(chan struct{}, 1)}
		l.locks[k] = tl
	}
	tl.waiters++
	l.mu.Unlock()

	release := func() {
		l.mu.Lock()
		if tl.waiters--; tl.waiters == 0 {
			delete(l.locks, k)
		}
		l.mu.Unlock()
	}
	select {
	case tl.slot <- struct{}{}:
		return func() {
			<-tl.slot
			release()
		}, nil
	case <-ctx.Done():
		release()
		return nil, memento.WrapError(memento.EUNAVAILABLE, ctx.Err(), "gave up waiting for the thread's previous turn to finish")
	}
}
