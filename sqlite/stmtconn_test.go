package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/memento-ai/memento"
)

func openCachedTest(t *testing.T) (*sql.DB, *keptStats) {
	t.Helper()
	stats := &keptStats{}
	db, err := openCached("file:"+filepath.Join(t.TempDir(), "kept.db")+"?_pragma=journal_mode(WAL)", stats)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)`); err != nil {
		t.Fatal(err)
	}
	return db, stats
}

func TestKeepable(t *testing.T) {
	for q, want := range map[string]bool{
		`SELECT 1`:                   true,
		"  insert INTO t VALUES (?)": true,
		"-- name: JobInsertFastMany :many\nINSERT INTO x":     true,
		"/* a */ -- b\n WITH x AS (SELECT 1) SELECT * FROM x": true,
		"(SELECT 1)":                  true,
		`PRAGMA synchronous = FULL`:   false,
		"-- x\nPRAGMA cache_size = 5": false,
		`BEGIN`:                       false,
		`SELECTED`:                    false,
		"-- no end":                   false,
		"/* no end":                   false,
		``:                            false,
	} {
		if got := keepable(q); got != want {
			t.Errorf("keepable(%q) = %v, want %v", q, got, want)
		}
	}
}

// TestKeptStatementsRunAgain checks that a text run often runs from the
// connection's kept statement with each call's arguments, and that a
// query whose rows are open while the same text runs again gets its own.
func TestKeptStatementsRunAgain(t *testing.T) {
	ctx := context.Background()
	db, stats := openCachedTest(t)
	db.SetMaxOpenConns(1)
	hits := stats.hits.Load()
	for i := range 10 {
		if _, err := db.ExecContext(ctx, `INSERT INTO t (id, v) VALUES (?, ?)`, i, string(rune('a'+i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 10 {
		var v string
		if err := db.QueryRowContext(ctx, `SELECT v FROM t WHERE id = ?`, i).Scan(&v); err != nil {
			t.Fatal(err)
		}
		if want := string(rune('a' + i)); v != want {
			t.Errorf("row %d = %q, want %q", i, v, want)
		}
	}
	if got := stats.hits.Load() - hits; got < 16 {
		t.Errorf("%d calls ran from kept statements, want at least 16 of 20", got)
	}

	// Nested: the outer rows stay open on the one connection (in a
	// transaction) while the same text runs for every row.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	const q = `SELECT id, v FROM t WHERE id >= ? ORDER BY id`
	rows, err := tx.QueryContext(ctx, q, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var id int
		var v string
		if err := rows.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		inner, err := tx.QueryContext(ctx, q, id)
		if err != nil {
			t.Fatal(err)
		}
		m := 0
		for inner.Next() {
			m++
		}
		if err := inner.Close(); err != nil {
			t.Fatal(err)
		}
		if m != 10-id {
			t.Errorf("inner query from %d read %d rows, want %d", id, m, 10-id)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if n != 10 {
		t.Errorf("outer query read %d rows, want 10", n)
	}
}

// TestPragmasAreNotKept checks that a PRAGMA, which SQLite documents it
// may carry out while compiling it, is parsed every time it runs (no
// statement is kept for it), and takes effect and reads the current value
// every time.
func TestPragmasAreNotKept(t *testing.T) {
	ctx := context.Background()
	db, stats := openCachedTest(t)
	db.SetMaxOpenConns(1)
	kept := stats.kept.Load()
	for i, size := range []int{-1000, -2000, -1000, -2000, -1000, -2000} {
		set := `PRAGMA cache_size = -1000`
		if size == -2000 {
			set = `PRAGMA cache_size = -2000`
		}
		if _, err := db.ExecContext(ctx, set); err != nil {
			t.Fatal(err)
		}
		var got int
		if err := db.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != size {
			t.Errorf("round %d: cache_size = %d, want %d", i, got, size)
		}
	}
	if n := stats.kept.Load() - kept; n != 0 {
		t.Errorf("%d statements kept for PRAGMAs, want none", n)
	}
}

// TestKeptStatementsUnderConcurrency runs the same texts from several
// goroutines on a pool of connections, each with its kept statements.
func TestKeptStatementsUnderConcurrency(t *testing.T) {
	ctx := context.Background()
	db, _ := openCachedTest(t)
	db.SetMaxOpenConns(4)
	if _, err := db.ExecContext(ctx, `INSERT INTO t (id, v) VALUES (1, 'x')`); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for range 200 {
				var v string
				if err := db.QueryRowContext(ctx, `SELECT v FROM t WHERE id = ?`, 1).Scan(&v); err != nil {
					errs <- err
					return
				}
				if v != "x" {
					errs <- sql.ErrNoRows
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestStoreKeepsStatements checks that the store's own connections keep
// the statements run as text, River's inserts of jobs among them, and
// that the jobs are all there.
func TestStoreKeepsStatements(t *testing.T) {
	ctx := context.Background()
	db := openInternal(t, Options{})
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	for i := range 5 {
		msg := []memento.Message{{ID: fmt.Sprint("m", i), Role: memento.RoleUser, Text: "hello"}}
		jobs := func(memento.Message) []memento.JobRequest {
			return []memento.JobRequest{{Kind: "probe", Payload: []byte(`{}`)}}
		}
		if _, err := db.AppendMessages(ctx, s, "t1", msg, jobs); err != nil {
			t.Fatal(err)
		}
	}
	if db.kept.kept.Load() == 0 || db.kept.hits.Load() == 0 {
		t.Errorf("the store's connections kept %d statements and ran %d calls from them, want some of each",
			db.kept.kept.Load(), db.kept.hits.Load())
	}
	// Once the messages are in the store (Unfinished may count a message
	// twice at the moment it moves from the intake).
	if _, err := db.Threads(ctx, s); err != nil {
		t.Fatal(err)
	}
	n, err := db.Unfinished(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != 5 {
		t.Errorf("%d jobs unfinished, want the 5 appended", n)
	}
}
