// Package pgtest gives a test a PostgreSQL database of its own: a fresh
// schema in the database MEMENTO_TEST_POSTGRES names, dropped when the
// test ends. Tests that need PostgreSQL skip, saying why, when the
// variable is unset, so `go test ./...` runs anywhere.
package pgtest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Env is the variable that names the test database.
const Env = "MEMENTO_TEST_POSTGRES"

var schemas atomic.Int64

// URL returns the test database's URL, or skips the test when Env is
// unset.
func URL(tb testing.TB) string {
	tb.Helper()
	url := os.Getenv(Env)
	if url == "" {
		tb.Skip(Env + " is not set (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable); skipping the PostgreSQL tests")
	}
	return url
}

// SchemaURL returns the test database's URL with search_path naming a
// schema of the test's own, which a store opened on it creates, and which
// is dropped when the test ends (after the stores the test closes in its
// own cleanups). It skips the test when Env is unset.
func SchemaURL(tb testing.TB) string {
	tb.Helper()
	base := URL(tb)
	schema := fmt.Sprintf("t_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, schemas.Add(1))
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			tb.Logf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
			tb.Logf("drop schema %s: %v", schema, err)
		}
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + schema
}
