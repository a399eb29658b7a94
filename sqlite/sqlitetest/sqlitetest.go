// Package sqlitetest opens fresh embedded stores for tests of any package:
// each in its own temporary directory, closed when the test ends.
//
// Creating a store runs every migration, which costs tens of milliseconds
// (and far more under the race detector), so the first Open of a test
// binary builds a migrated template database, keeps its bytes and writes
// a copy for every later store.
package sqlitetest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/memento-ai/memento/sqlite"
)

// Open returns a new, empty store in tb's temporary directory, with test
// friendly options (see Options), and closes it when the test ends.
func Open(tb testing.TB) *sqlite.DB {
	tb.Helper()
	return OpenWith(tb, Options())
}

// OpenWith is Open with the given options.
func OpenWith(tb testing.TB, opts sqlite.Options) *sqlite.DB {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "memento.db")
	data, err := template()
	if err != nil {
		tb.Fatalf("build template store: %v", err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tb.Fatalf("copy template store: %v", err)
	}
	return OpenPath(tb, path, opts)
}

// OpenPath opens the store at path (which may exist, to test reopening) and
// closes it when the test ends.
func OpenPath(tb testing.TB, path string, opts sqlite.Options) *sqlite.DB {
	tb.Helper()
	db, err := sqlite.Open(context.Background(), path, opts)
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Errorf("close store: %v", err)
		}
	})
	return db
}

// Options returns options suited to tests: a discarding logger, retries
// after 10ms instead of seconds, and a 10ms poll so jobs start at once.
// Durability stays FULL, as in production.
func Options() sqlite.Options {
	return sqlite.Options{
		Logger:       slog.New(slog.DiscardHandler),
		RetryDelay:   func(int) time.Duration { return 10 * time.Millisecond },
		PollInterval: 10 * time.Millisecond,
	}
}

// templateOnce builds the template database once per process.
var templateOnce = sync.OnceValues(buildTemplate)

// template returns the bytes of a freshly migrated database.
func template() ([]byte, error) { return templateOnce() }

// buildTemplate creates and migrates a database in a scratch directory and
// returns its file. Closing the store checkpoints the write-ahead log into
// the file and removes the log, so the file alone is the whole database.
func buildTemplate() ([]byte, error) {
	dir, err := os.MkdirTemp("", "memento-sqlitetest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "template.db")
	db, err := sqlite.Open(context.Background(), path, Options())
	if err != nil {
		return nil, err
	}
	if err := db.Close(); err != nil {
		return nil, err
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		return nil, fmt.Errorf("template %s kept its write-ahead log after Close", path)
	}
	return os.ReadFile(path)
}

// WaitForJobs waits until the store has no unfinished jobs, failing the
// test after timeout.
func WaitForJobs(tb testing.TB, db interface {
	Unfinished(context.Context) (int, error)
}, timeout time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		n, err := db.Unfinished(context.Background())
		if err != nil {
			tb.Fatalf("count unfinished jobs: %v", err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%d jobs still unfinished after %s", n, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
