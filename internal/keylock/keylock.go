// Package keylock is a mutex per key, made when first wanted and dropped
// when nobody holds or waits for it any more, so a map of locks over many
// users or threads stays as small as the work in flight.
package keylock

import "sync"

// Map is a mutex per key of type K. Its zero value is ready.
type Map[K comparable] struct {
	mu    sync.Mutex
	locks map[K]*entry
}

// entry is one key's mutex with a count of its holders and waiters.
type entry struct {
	mu   sync.Mutex
	refs int
}

// Lock takes k's lock and returns its release.
func (m *Map[K]) Lock(k K) (unlock func()) {
	m.mu.Lock()
	if m.locks == nil {
		m.locks = map[K]*entry{}
	}
	e := m.locks[k]
	if e == nil {
		e = &entry{}
		m.locks[k] = e
	}
	e.refs++
	m.mu.Unlock()
	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		m.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(m.locks, k)
		}
		m.mu.Unlock()
	}
}

// Len is how many keys have a lock now: held or waited for.
func (m *Map[K]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.locks)
}
