package sqlitetest_test

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

func TestOpenGivesFreshStores(t *testing.T) {
	ctx := context.Background()
	s := memento.Scope{User: "ann"}
	a := sqlitetest.Open(t)
	if _, err := a.AppendMessages(ctx, s, "t1", []memento.Message{{Role: memento.RoleUser, Text: "hi"}}, nil); err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	b := sqlitetest.Open(t)
	if a.Path() == b.Path() {
		t.Fatalf("two stores share the file %s", a.Path())
	}
	if threads, err := b.Threads(ctx, s); err != nil || len(threads) != 0 {
		t.Errorf("second store has threads %+v, %v; want none", threads, err)
	}
	v, err := b.SchemaVersion(ctx)
	if err != nil || v < 1 {
		t.Errorf("SchemaVersion = %d, %v; want migrated", v, err)
	}
}

func BenchmarkOpen(b *testing.B) {
	for b.Loop() {
		sqlitetest.Open(b)
	}
}

// TestKillChildHelper is not a test: run by TestKillChild in a child
// process, it acknowledges numbered writes until it is killed.
func TestKillChildHelper(t *testing.T) {
	sqlitetest.ChildStore(t)
	for i := 0; ; i++ {
		sqlitetest.Ack(strconv.Itoa(i))
	}
}

func TestKillChild(t *testing.T) {
	const acks = 10
	acked := sqlitetest.KillChild(t, "TestKillChildHelper", filepath.Join(t.TempDir(), "child.db"), acks)
	if len(acked) < acks {
		t.Fatalf("KillChild returned %d acknowledgements, want at least %d", len(acked), acks)
	}
	for i, id := range acked {
		if id != strconv.Itoa(i) {
			t.Fatalf("acknowledgement %d is %q, want %d: every one, in order", i, id, i)
		}
	}
}
