// Package memo keeps the answers of recent keys, bounded, for work whose
// answer depends on its key alone and is asked for again soon: a text's
// verdict under fixed rules, the titles a catalog that does not change
// matches to a run of words.
//
// A Memo holds two generations. A lookup reads both; once the current
// generation is full, it becomes the old one and the older is dropped, so
// a key asked again while it is among the last Keys to 2×Keys keys put is
// answered from memory, and the memo never holds more than two
// generations. A generation is full at Keys keys, or, with Weigh set, once
// its values' weights would pass Weight: values of very different sizes
// (one title or ten thousand) are bounded by what they hold, not by their
// number.
package memo

import "sync"

// Memo is a bounded memo of recent values by key, safe for concurrent use.
// Set its bounds in a composite literal before its first use; the values
// it returns are shared, so callers must not modify them.
type Memo[V any] struct {
	// Keys bounds the keys of a generation (at least 1).
	Keys int
	// Weigh, when set, weighs a value, and Weight bounds the weights of a
	// generation's values.
	Weigh  func(V) int
	Weight int

	mu       sync.Mutex
	cur, old map[string]V
	held     int // the weights of cur's values
}

// Get returns the value kept for key.
func (m *Memo[V]) Get(key string) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok := m.cur[key]; ok {
		return v, true
	}
	v, ok := m.old[key]
	return v, ok
}

// Put keeps v for key, starting a new generation first when the current
// one is full.
func (m *Memo[V]) Put(key string, v V) {
	w := 0
	if m.Weigh != nil {
		w = m.Weigh(v)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.cur) >= max(m.Keys, 1) || m.Weigh != nil && m.held+w > m.Weight && len(m.cur) > 0 {
		m.old, m.cur, m.held = m.cur, nil, 0
	}
	if m.cur == nil {
		m.cur = make(map[string]V, max(m.Keys, 1))
	}
	m.cur[key] = v
	m.held += w
}

// Len returns the number of keys kept, in both generations (a key in both
// counts twice).
func (m *Memo[V]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.cur) + len(m.old)
}
