// Package enginetest opens a fresh store of the kind a test run asks for,
// so that tests written once over engine.Store (the HTTP API's, say) run
// against both stores: SQLite by default, and PostgreSQL when
// MEMENTO_TEST_STORE=postgres and MEMENTO_TEST_POSTGRES names a database
// (.ci/run runs the HTTP tests both ways).
package enginetest

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/memento-ai/memento/engine"
	"github.com/memento-ai/memento/postgres"
	"github.com/memento-ai/memento/postgres/pgtest"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// StoreEnv selects the store Open opens: "postgres", or "sqlite" (the
// default, also when unset).
const StoreEnv = "MEMENTO_TEST_STORE"

// Kind is the kind of store Open opens in this run.
func Kind() string {
	if os.Getenv(StoreEnv) == engine.KindPostgres {
		return engine.KindPostgres
	}
	return engine.KindSQLite
}

// Open opens an empty store for one test, closed when the test ends: an
// SQLite file in the test's temporary folder, or, with
// MEMENTO_TEST_STORE=postgres, a schema of the test's own in the database
// MEMENTO_TEST_POSTGRES names (the test fails when that is unset: a run
// that asks for PostgreSQL must not pass on SQLite). Its queue polls often
// and retries quickly, since tests wait for jobs.
func Open(tb testing.TB) engine.Store {
	tb.Helper()
	if Kind() == engine.KindSQLite {
		return sqlitetest.Open(tb)
	}
	if os.Getenv(pgtest.Env) == "" {
		tb.Fatalf("%s=postgres needs %s to name a database", StoreEnv, pgtest.Env)
	}
	url := pgtest.SchemaURL(tb)
	conn, schema := splitSchema(tb, url)
	db, err := postgres.Open(context.Background(), conn, postgres.Options{
		Schema:       schema,
		MaxConns:     8,
		Logger:       slog.New(slog.DiscardHandler),
		RetryDelay:   func(int) time.Duration { return 10 * time.Millisecond },
		PollInterval: 20 * time.Millisecond,
	})
	if err != nil {
		tb.Fatalf("open postgres store: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = db.Stop(ctx)
		db.Close()
	})
	return db
}

// splitSchema takes the schema out of a pgtest URL.
func splitSchema(tb testing.TB, url string) (conn, schema string) {
	tb.Helper()
	c, opts, err := engine.PostgresOptions(url)
	if err != nil {
		tb.Fatalf("test database URL: %v", err)
	}
	return c, opts.Schema
}
