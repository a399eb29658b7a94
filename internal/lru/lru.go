// Package lru keeps state by key, such as what a background job holds of
// each user between its runs, within a bound on the sum of the states'
// weights: past it, the states used least recently are dropped, and their
// users are read in full at their next run.
package lru

import (
	"container/list"
	"sync"
)

// Cache holds values by key. The zero value is empty and ready; it is safe
// for concurrent use, and the values are the caller's to guard.
type Cache[V any] struct {
	mu        sync.Mutex
	byKey     map[string]*Entry[V]
	order     list.List // of *Entry[V], the most recently used first
	weight    int
	evictions int64
}

// Entry is a key's place in a Cache, and its value.
type Entry[V any] struct {
	Value  V
	key    string
	el     *list.Element // nil once dropped
	weight int
}

// Get returns the entry of key, made with the value fresh returns when
// none is held, and makes it the most recently used.
func (c *Cache[V]) Get(key string, fresh func() V) *Entry[V] {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.order.MoveToFront(e.el)
		return e
	}
	if c.byKey == nil {
		c.byKey = map[string]*Entry[V]{}
	}
	e := &Entry[V]{Value: fresh(), key: key}
	e.el = c.order.PushFront(e)
	c.byKey[key] = e
	return e
}

// Drop forgets e; the next Get of its key makes a new entry. Dropping an
// entry dropped before does nothing.
func (c *Cache[V]) Drop(e *Entry[V]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.remove(e)
}

// remove takes e out of c, under c.mu.
func (c *Cache[V]) remove(e *Entry[V]) {
	if e.el == nil {
		return
	}
	c.order.Remove(e.el)
	e.el = nil
	delete(c.byKey, e.key)
	c.weight -= e.weight
	e.weight = 0
}

// Weigh records that e now weighs weight and drops the entries used least
// recently while the weights held pass limit; e itself stays, whatever it
// weighs. It returns how many entries it dropped.
func (c *Cache[V]) Weigh(e *Entry[V], weight, limit int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.el == nil {
		return 0 // dropped meanwhile: its weight is nobody's
	}
	c.weight += weight - e.weight
	e.weight = weight
	n := 0
	for c.weight > limit {
		old := c.order.Back().Value.(*Entry[V])
		if old == e {
			break
		}
		c.remove(old)
		c.evictions++
		n++
	}
	return n
}

// Stats returns the entries held, the sum of their weights and how many
// entries Weigh has dropped.
func (c *Cache[V]) Stats() (entries, weight int, evictions int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byKey), c.weight, c.evictions
}
