package graph

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"
)

// Checkpoint is the saved progress of one run: where it goes next, the state
// after the last completed node and the trace so far. A durable
// Checkpointer stores it as it is (every field is JSON-encodable).
type Checkpoint struct {
	// Graph is the name of the graph the run belongs to.
	Graph string `json:"graph"`
	// Next is the node to run when the run resumes; End once Done.
	Next string `json:"next"`
	// State is the JSON encoding of the state after the last completed node.
	State json.RawMessage `json:"state"`
	// Trace is every step completed so far.
	Trace []Step `json:"trace"`
	// Done is true once the run reached End; State is then its result.
	Done bool `json:"done"`
	// SavedAt is when the checkpoint was written, by the graph's clock.
	SavedAt time.Time `json:"savedAt"`
}

// Checkpointer stores checkpoints by key, so that a run interrupted by a
// crash or a failing node resumes where it stopped. The key a Runnable uses
// is its graph's name, a slash and the run id (see Runnable.CheckpointKey),
// so several graphs can share one Checkpointer. Implementations must be safe
// for concurrent use; a Runnable never runs the same key twice at once
// unless its caller does.
type Checkpointer interface {
	// Load returns the checkpoint saved under key; ok is false when there
	// is none.
	Load(ctx context.Context, key string) (cp *Checkpoint, ok bool, err error)
	// Save stores cp under key, replacing any earlier checkpoint.
	Save(ctx context.Context, key string, cp Checkpoint) error
	// Delete forgets the checkpoint under key, so the next run with that
	// key starts afresh. Deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
}

// Pacer is a Checkpointer that keeps only some of the saves a run offers
// (say, one a second): Runnable asks Due before it encodes the state
// after a node, and neither encodes nor saves when Due says no. done is
// true for the save after the run's last node. A Pacer's Save may still
// decline what Due allowed.
type Pacer interface {
	Checkpointer
	Due(done bool) bool
}

// MemoryCheckpointer is a Checkpointer that keeps checkpoints in memory, for
// tests and for processes that need no crash recovery. Its zero value is
// ready to use.
type MemoryCheckpointer struct {
	mu  sync.Mutex
	cps map[string]Checkpoint
	// saves counts Save calls, for tests that check how often a run saves.
	saves int
}

// NewMemoryCheckpointer returns an empty in-memory checkpointer.
func NewMemoryCheckpointer() *MemoryCheckpointer { return &MemoryCheckpointer{} }

// Load returns a copy of the checkpoint saved under key.
func (m *MemoryCheckpointer) Load(_ context.Context, key string) (*Checkpoint, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cp, ok := m.cps[key]
	if !ok {
		return nil, false, nil
	}
	cp = cloneCheckpoint(cp)
	return &cp, true, nil
}

// Save stores a copy of cp under key.
func (m *MemoryCheckpointer) Save(_ context.Context, key string, cp Checkpoint) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cps == nil {
		m.cps = make(map[string]Checkpoint)
	}
	m.cps[key] = cloneCheckpoint(cp)
	m.saves++
	return nil
}

// Delete forgets the checkpoint under key.
func (m *MemoryCheckpointer) Delete(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.cps, key)
	return nil
}

// Keys lists the keys with a saved checkpoint, sorted, so tests and
// debugging tools can see what is stored.
func (m *MemoryCheckpointer) Keys() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := make([]string, 0, len(m.cps))
	for k := range m.cps {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Saves returns how many times Save was called.
func (m *MemoryCheckpointer) Saves() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.saves
}

// cloneCheckpoint copies the slices of cp, so a stored checkpoint never
// shares memory with a caller's.
func cloneCheckpoint(cp Checkpoint) Checkpoint {
	cp.State = slices.Clone(cp.State)
	cp.Trace = slices.Clone(cp.Trace)
	return cp
}
