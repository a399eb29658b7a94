package sqlitetest_test

import (
	"context"
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
