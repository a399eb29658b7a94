package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/internal/jobctx"
	"github.com/memento-ai/memento/postgres/pgtest"
)

// TestJobTransactionsCommitAsynchronously checks that a background job's
// user transactions commit without waiting for the log to reach the disk,
// and every other transaction waits, also one right after a job's (the
// setting is the transaction's own).
func TestJobTransactionsCommitAsynchronously(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	schema := fmt.Sprintf("sc_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	db, err := Open(ctx, url, Options{Schema: schema, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Close()
		if conn, err := pgx.Connect(context.Background(), url); err == nil {
			conn.Exec(context.Background(), `DROP SCHEMA `+pgx.Identifier{schema}.Sanitize()+` CASCADE`) //nolint:errcheck
			conn.Close(context.Background())
		}
	})
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	setting := func(ctx context.Context) string {
		t.Helper()
		var got string
		if err := db.userTx(ctx, s, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SHOW synchronous_commit`).Scan(&got)
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, c := range []struct {
		what string
		ctx  context.Context
		want string
	}{
		{"a request's transaction", ctx, "on"},
		{"a job's transaction", jobctx.With(ctx), "off"},
		{"a request's transaction after a job's", ctx, "on"},
	} {
		if got := setting(c.ctx); got != c.want {
			t.Errorf("%s: synchronous_commit %s, want %s", c.what, got, c.want)
		}
	}
}
