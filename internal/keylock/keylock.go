// Package keylock is a mutex per key, made when first wanted and dropped
// when nobody holds or waits for it any more, so a map of locks over many
// users or threads stays as small as the work in flight.
package keylock

import (
	"context"
	"sync"
)

// Map is a mutex per key of type K. Its zero value is ready.
type Map[K comparable] struct {
	mu    sync.Mutex
	locks map[K]*entry
}

// entry is one key's lock, a channel that holds a token while the lock is
// held (so that a wait can give up), with a count of its holders and
// waiters. Waiters take the lock in the order they came.
type entry struct {
	held chan struct{}
	refs int
}

// Lock takes k's lock and returns its release.
func (m *Map[K]) Lock(k K) (unlock func()) {
	unlock, _ = m.LockContext(context.Background(), k)
	return unlock
}

// LockContext takes k's lock and returns its release, or gives up when
// ctx ends first and returns ctx's error.
func (m *Map[K]) LockContext(ctx context.Context, k K) (unlock func(), err error) {
	m.mu.Lock()
	if m.locks == nil {
		m.locks = map[K]*entry{}
	}
	e := m.locks[k]
	if e == nil {
		e = &entry{held: make(chan struct{}, 1)}
		m.locks[k] = e
	}
	e.refs++
	m.mu.Unlock()
	drop := func() {
		m.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(m.locks, k)
		}
		m.mu.Unlock()
	}
	select {
	case e.held <- struct{}{}:
	case <-ctx.Done():
		drop()
		return nil, ctx.Err()
	}
	return func() {
		<-e.held
		drop()
	}, nil
}

// Len is how many keys have a lock now: held or waited for.
func (m *Map[K]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.locks)
}
