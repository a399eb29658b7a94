package postgres_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memento-ai/memento/internal/logtest"
	"github.com/memento-ai/memento/postgres"
	"github.com/memento-ai/memento/storetest"
)

// testURL is the database the tests use, from MEMENTO_TEST_POSTGRES.
func testURL(tb testing.TB) string {
	tb.Helper()
	url := os.Getenv("MEMENTO_TEST_POSTGRES")
	if url == "" {
		tb.Skip("MEMENTO_TEST_POSTGRES is not set (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable); skipping the PostgreSQL tests")
	}
	return url
}

var schemas atomic.Int64

// openSchema opens a store in a fresh schema of its own, dropped when the
// test ends, so tests and runs never see each other's rows.
func openSchema(tb testing.TB, opts postgres.Options) (*postgres.DB, string) {
	tb.Helper()
	url := testURL(tb)
	schema := fmt.Sprintf("mt_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, schemas.Add(1))
	opts.Schema = schema
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.RetryDelay == nil {
		opts.RetryDelay = func(int) time.Duration { return 10 * time.Millisecond }
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = 50 * time.Millisecond
	}
	if opts.MaxConns == 0 {
		opts.MaxConns = 8
	}
	db, err := postgres.Open(context.Background(), url, opts)
	if err != nil {
		tb.Fatalf("open postgres store: %v", err)
	}
	tb.Cleanup(func() {
		db.Close()
		if os.Getenv("MEMENTO_TEST_POSTGRES_KEEP") != "" {
			tb.Logf("kept schema %s (MEMENTO_TEST_POSTGRES_KEEP is set)", schema)
			return
		}
		conn, err := pgx.Connect(context.Background(), url)
		if err != nil {
			tb.Logf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), `DROP SCHEMA `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil && !strings.Contains(err.Error(), "does not exist") {
			tb.Logf("drop schema %s: %v", schema, err)
		}
	})
	return db, schema
}

// TestConformance runs the store conformance suite against PostgreSQL.
func TestConformance(t *testing.T) {
	testURL(t)
	storetest.Run(t, func(tb testing.TB) storetest.Store {
		db, _ := openSchema(tb, postgres.Options{})
		return db
	})
}

// TestWarnsWithoutAutovacuum checks that opening a store logs a warning
// when, and only when, the server's autovacuum is off.
func TestWarnsWithoutAutovacuum(t *testing.T) {
	var logs logtest.Buffer
	db, _ := openSchema(t, postgres.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	var on string
	if err := db.Pool().QueryRow(t.Context(), `SHOW autovacuum`).Scan(&on); err != nil {
		t.Fatal(err)
	}
	warned := strings.Contains(logs.String(), "autovacuum is off")
	if warned != (on != "on") {
		t.Errorf("autovacuum %s; warned %v, logs:\n%s", on, warned, logs.String())
	}
}

// Opening a store whose schema is up to date logs nothing of River's
// migrations; a new one logs those it applies.
func TestReopenLogsNoJobQueueMigration(t *testing.T) {
	url := testURL(t)
	schema := fmt.Sprintf("mt_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, schemas.Add(1))
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), url)
		if err != nil {
			return
		}
		defer conn.Close(context.Background())
		conn.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`) //nolint:errcheck
	})
	open := func() string {
		t.Helper()
		var log logtest.Buffer
		db, err := postgres.Open(context.Background(), url, postgres.Options{Schema: schema, Logger: slog.New(slog.NewTextHandler(&log, nil))})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		db.Close()
		return log.String()
	}
	if first := open(); !strings.Contains(first, "Applied migration") {
		t.Errorf("a new store's log does not name River's migrations:\n%s", first)
	}
	if again := open(); strings.Contains(again, "rivermigrate") {
		t.Errorf("reopening an up-to-date store logs River's migrator:\n%s", again)
	}
}
