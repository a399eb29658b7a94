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

// openInternal opens a store in a schema of its own, dropped at the end.
func openInternal(t testing.TB) *DB {
	t.Helper()
	return openInternalWith(t, Options{})
}

// openInternalWith is openInternal with options; the schema and the
// logger are its own.
func openInternalWith(t testing.TB, opts Options) *DB {
	t.Helper()
	url := pgtest.URL(t)
	schema := fmt.Sprintf("sc_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	opts.Schema, opts.Logger = schema, slog.New(slog.DiscardHandler)
	db, err := Open(context.Background(), url, opts)
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
	return db
}

// TestUserTxWriteTimes checks that a write asked for its times
// (memento.WithWriteTimes) reports its wait for the user's lock, held by
// another transaction of the user, as Waited, its statements and commit
// as Wrote, and no separate sync.
func TestUserTxWriteTimes(t *testing.T) {
	ctx := context.Background()
	db := openInternal(t)
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	const hold = 150 * time.Millisecond
	locked := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- db.userTx(ctx, s, func(tx pgx.Tx) error {
			close(locked)
			time.Sleep(hold)
			return nil
		})
	}()
	<-locked
	var times memento.WriteTimes
	start := time.Now()
	if _, err := db.AppendMessages(memento.WithWriteTimes(ctx, &times), s, "t1", []memento.Message{{Role: memento.RoleUser, Text: "I loved Alien"}}, nil); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if times.Waited < hold/2 || times.Wrote <= 0 || times.Synced != 0 {
		t.Errorf("times %+v behind a transaction holding the user for %s; want Waited about that, Wrote above 0 and Synced 0", times, hold)
	}
	if sum := times.Waited + times.Wrote; sum > took {
		t.Errorf("Waited+Wrote %s is more than the call took (%s)", sum, took)
	}
}

// TestJobTransactionsCommitAsynchronously checks that a background job's
// user transactions commit without waiting for the log to reach the disk,
// and every other transaction waits, also one right after a job's (the
// setting is the transaction's own).
func TestJobTransactionsCommitAsynchronously(t *testing.T) {
	ctx := context.Background()
	db := openInternal(t)
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
