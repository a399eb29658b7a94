package sqlite_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/internal/logtest"
	"github.com/memento-ai/memento/sqlite"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

func TestOpenReopenIsIdempotent(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memento.db")
	s := memento.Scope{User: "ann"}

	db, err := sqlite.Open(ctx, path, sqlitetest.Options())
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	first, err := db.SchemaVersion(ctx)
	if err != nil {
		t.Fatalf("SchemaVersion: %v", err)
	}
	if first < 1 {
		t.Fatalf("schema version after Open = %d, want >= 1", first)
	}
	appendTexts(t, db, s, "t1", "hello")
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	for range 2 {
		db = sqlitetest.OpenPath(t, path, sqlitetest.Options())
		again, err := db.SchemaVersion(ctx)
		if err != nil {
			t.Fatalf("SchemaVersion: %v", err)
		}
		if again != first {
			t.Errorf("schema version after reopen = %d, want %d", again, first)
		}
		msgs, err := db.Messages(ctx, s, "t1", 0, 0)
		if err != nil {
			t.Fatalf("Messages: %v", err)
		}
		if len(msgs) != 1 || msgs[0].Text != "hello" {
			t.Errorf("messages after reopen = %+v, want the one stored", msgs)
		}
		if err := db.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
}

// Opening a store whose schema is up to date logs nothing of River's
// migrations (every command opens the store, and printed River's "No
// migrations to apply"); a new store logs the migrations it applies.
func TestReopenLogsNoJobQueueMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memento.db")
	open := func() string {
		t.Helper()
		var log logtest.Buffer
		opts := sqlitetest.Options()
		opts.Logger = slog.New(slog.NewTextHandler(&log, nil))
		db, err := sqlite.Open(ctx, path, opts)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		if err := db.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		return log.String()
	}
	if first := open(); !strings.Contains(first, "Applied migration") {
		t.Errorf("a new store's log does not name River's migrations:\n%s", first)
	}
	if again := open(); strings.Contains(again, "rivermigrate") {
		t.Errorf("reopening an up-to-date store logs River's migrator:\n%s", again)
	}
}

func TestOpenMemory(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, ":memory:", sqlitetest.Options())
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer db.Close()
	s := memento.Scope{User: "ann"}
	appendTexts(t, db, s, "t1", "hello", "again")
	msgs, err := db.Messages(ctx, s, "t1", 0, 0)
	if err != nil {
		t.Fatalf("Messages: %v", err)
	}
	if len(msgs) != 2 {
		t.Errorf("got %d messages, want 2", len(msgs))
	}
	if err := db.Ping(ctx); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

func TestOpenRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name string
		path string
		opts sqlite.Options
	}{
		{"empty path", "", sqlite.Options{}},
		{"synchronous", "x.db", sqlite.Options{Synchronous: "SOMETIMES"}},
		{"negative attempts", "x.db", sqlite.Options{MaxAttempts: -1}},
		{"negative timeout", "x.db", sqlite.Options{JobTimeout: -1}},
		{"negative readers", "x.db", sqlite.Options{ReadConns: -2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.path
			if path != "" {
				path = filepath.Join(t.TempDir(), path)
			}
			db, err := sqlite.Open(context.Background(), path, tt.opts)
			if err == nil {
				db.Close()
			}
			wantCode(t, err, memento.EINVALID)
		})
	}
}

func TestSynchronousNormalOpens(t *testing.T) {
	opts := sqlitetest.Options()
	opts.Synchronous = "normal"
	db := sqlitetest.OpenWith(t, opts)
	appendTexts(t, db, memento.Scope{User: "ann"}, "t1", "hello")
}
