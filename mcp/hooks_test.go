package mcp_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/mcp"
)

// hookLog records what the hooks were told, as a snapshot store would be.
type hookLog struct {
	mu      sync.Mutex
	ensured []string
	changed []string
	deleted []string
	refuse  string // Ensure fails for this user
}

func (h *hookLog) hooks() mcp.Hooks {
	return mcp.Hooks{
		Ensure: func(_ context.Context, s memento.Scope) error {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.ensured = append(h.ensured, s.User)
			if s.User == h.refuse {
				return memento.Errorf(memento.EUNAVAILABLE, "the snapshot store cannot be reached")
			}
			return nil
		},
		Changed: func(s memento.Scope) { h.mu.Lock(); h.changed = append(h.changed, s.User); h.mu.Unlock() },
		Deleted: func(s memento.Scope) { h.mu.Lock(); h.deleted = append(h.deleted, s.User); h.mu.Unlock() },
	}
}

// With a snapshot store, a tool first restores a user the local store
// does not know (Ensure), tells the write-behind about every write
// (Changed) and about a forgotten user (Deleted); a user that cannot be
// restored fails the call and writes nothing.
func TestToolsRunTheSnapshotHooks(t *testing.T) {
	f := newFixture(t)
	log := &hookLog{refuse: "zed"}
	f.srv.Hooks = log.hooks()
	cs := f.connect(t)
	call(t, cs, "add_memory", map[string]any{"user": "ann", "text": "I love heist films"}, nil)
	call(t, cs, "search_memory", map[string]any{"user": "ann", "query": "heist"}, nil)
	call(t, cs, "delete_all_memories", map[string]any{"user": "ann"}, nil)
	e := callErr(t, cs, "add_memory", map[string]any{"user": "zed", "text": "hello"})
	if e == nil || e.Code != memento.EUNAVAILABLE {
		t.Errorf("add_memory for a user that cannot be restored: %v, want EUNAVAILABLE", e)
	}
	if _, err := f.db.Messages(context.Background(), memento.Scope{Tenant: memento.DefaultTenant, User: "zed"}, "mcp", 0, 0); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("the refused call wrote zed's thread: %v", err)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if !slices.Equal(log.ensured, []string{"ann", "ann", "ann", "zed"}) {
		t.Errorf("ensured %v, want every call's user first", log.ensured)
	}
	if !slices.Contains(log.changed, "ann") || slices.Contains(log.changed, "zed") {
		t.Errorf("changed %v, want ann's writes only", log.changed)
	}
	if !slices.Equal(log.deleted, []string{"ann"}) {
		t.Errorf("deleted %v, want ann", log.deleted)
	}
}
