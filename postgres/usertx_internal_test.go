package postgres

import (
	"context"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/internal/jobctx"
)

// TestUserTxTakesTheUsersLock checks that the lock userTx takes in its
// BEGIN, with the key spelled in the query, is the one the statements
// that pass the key as a parameter take (bulk loads, for one), for ids
// that would need quoting, and no other user's.
func TestUserTxTakesTheUsersLock(t *testing.T) {
	ctx := context.Background()
	db := openInternal(t)
	other, err := db.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Release()
	// tryLock reports whether another connection could take the lock of
	// s, as the parameterised statements name it.
	tryLock := func(s memento.Scope) bool {
		t.Helper()
		var got bool
		if err := other.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))`, userKey(s)).Scan(&got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	scopes := []memento.Scope{
		{Tenant: memento.DefaultTenant, User: "ann"},
		{Tenant: memento.DefaultTenant, User: "o'brien"},
		{Tenant: "acme", User: `zoë\'); DROP TABLE users; --`},
		{Tenant: "東京", User: "ユーザー"},
	}
	for i, s := range scopes {
		for _, job := range []bool{false, true} {
			c := ctx
			if job {
				c = jobctx.With(ctx)
			}
			if err := db.userTx(c, s, func(tx pgx.Tx) error {
				if tryLock(s) {
					t.Errorf("%+v (job %v): another connection took the user's lock while userTx held it", s, job)
				}
				if o := scopes[(i+1)%len(scopes)]; !tryLock(o) {
					t.Errorf("%+v (job %v): userTx holds the lock of %+v too", s, job, o)
				}
				return nil
			}); err != nil {
				t.Fatalf("userTx(%+v): %v", s, err)
			}
		}
	}
	// The users' table is still there, and the connection holds nothing.
	if err := db.userTx(ctx, scopes[0], func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `SELECT count(*) FROM users`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// TestUserTxFailedLock checks that a BEGIN whose lock fails (here the
// lock's wait is cut short) returns the error and leaves no connection
// inside a failed transaction: the next transactions run.
func TestUserTxFailedLock(t *testing.T) {
	ctx := context.Background()
	db := openInternal(t)
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	holder, err := db.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, userKey(s)); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 100e6)
	err = db.userTx(short, s, func(tx pgx.Tx) error {
		t.Error("userTx ran while another transaction held the user's lock")
		return nil
	})
	cancel()
	if err == nil {
		t.Fatal("userTx behind a held lock, its context ending: no error")
	}
	if err := holder.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 2 * int(db.pool.Config().MaxConns) {
		if err := db.userTx(ctx, s, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `SELECT 1`)
			return err
		}); err != nil {
			t.Fatalf("transaction %d after the failed lock: %v", i, err)
		}
	}
}

// BenchmarkUserTx measures the frame of a user's transaction, which
// every write of a user's data pays: a connection from the pool, BEGIN,
// the user's lock, and a COMMIT that writes nothing (so waits for no
// flush), on users spread over fifty.
func BenchmarkUserTx(b *testing.B) {
	ctx := context.Background()
	db := openInternal(b)
	i := 0
	for b.Loop() {
		i++
		if err := db.userTx(ctx, memento.Scope{Tenant: memento.DefaultTenant, User: "u" + strconv.Itoa(i%50)}, func(tx pgx.Tx) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
