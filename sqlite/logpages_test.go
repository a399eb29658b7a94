package sqlite

import (
	"context"
	"database/sql"
	"os"
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

// TestLogPages checks the pages counted for the group commits against the
// log file itself, across a commit that begins the log again.
func TestLogPages(t *testing.T) {
	t.Parallel()
	// Checkpoints only where the test runs them (SQLite's own come at
	// 1,000 pages, far above what it writes).
	db := openInternal(t, Options{CheckpointPages: -1})
	db.ftsMerge.close()
	ctx := context.Background()
	var pageSize int64
	if err := db.write.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize); err != nil {
		t.Fatal(err)
	}
	// rows writes n rows of most of a page each into a table of its own.
	rows := func(table string, n int) {
		t.Helper()
		err := db.groupTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+table+` (b BLOB)`); err != nil {
				return err
			}
			for range n {
				if _, err := tx.ExecContext(ctx, `INSERT INTO `+table+` VALUES (zeroblob(?))`, pageSize*3/4); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	pages := func() int64 { return db.WriterStats().LogPages }
	if _, err := db.write.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	logFrames := func() int64 {
		t.Helper()
		st, err := os.Stat(db.path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() == 0 {
			return 0
		}
		return (st.Size() - 32) / (pageSize + 24) // the header, then frames
	}
	if n := logFrames(); n != 0 {
		t.Fatalf("the log holds %d frames after a TRUNCATE checkpoint", n)
	}

	start := pages()
	rows("t1", 10)
	rows("t1", 10)
	got, frames := pages()-start, logFrames()
	if got != frames {
		t.Errorf("counted %d pages; the log holds %d frames", got, frames)
	}
	if got < 20 {
		t.Errorf("counted %d pages for 20 rows of a page each", got)
	}

	// A commit that only reads appends nothing.
	start = pages()
	err := db.groupTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var n int
		return tx.QueryRowContext(ctx, `SELECT count(*) FROM t1`).Scan(&n)
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := pages() - start; n != 0 {
		t.Errorf("a commit that only read counted %d pages", n)
	}

	// Once a checkpoint has copied the whole log, the next commit writes
	// it again from its first frame: fewer frames than the log held.
	// (A reader of the store's own, such as the recall backfill, may hold
	// an older snapshot for a moment.)
	for try := 0; ; try++ {
		var busy, logged, copied int64
		if err := db.write.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &logged, &copied); err != nil {
			t.Fatal(err)
		}
		if busy == 0 && copied == logged {
			break
		}
		if try == 100 {
			t.Fatalf("the checkpoint copied %d of %d frames (busy %d)", copied, logged, busy)
		}
		time.Sleep(10 * time.Millisecond)
	}
	shm, err := os.Open(db.path + "-shm")
	if err != nil {
		t.Fatal(err)
	}
	defer shm.Close()
	old, ok := readWALIndex(shm)
	if !ok {
		t.Fatal("cannot read the wal-index")
	}
	start = pages()
	rows("t2", 2)
	now, ok := readWALIndex(shm)
	if !ok {
		t.Fatal("cannot read the wal-index")
	}
	if now.salt == old.salt || now.frames >= old.frames {
		t.Fatalf("the log did not begin again: %d frames before, %d after", old.frames, now.frames)
	}
	if got := pages() - start; got != int64(now.frames) || got < 2 {
		t.Errorf("counted %d pages for the commit that began the log again; it holds %d", got, now.frames)
	}
}

// TestIntakeLogPages checks that the intake's commits are counted apart.
func TestIntakeLogPages(t *testing.T) {
	t.Parallel()
	db := openInternal(t, Options{Intake: true})
	before := db.WriterStats()
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	if _, err := db.AppendMessages(context.Background(), s, "t", []memento.Message{{Role: memento.RoleUser, Text: "through the intake"}}, nil); err != nil {
		t.Fatal(err)
	}
	if n := db.WriterStats().Sub(before).IntakeLogPages; n < 1 {
		t.Errorf("the intake's append counted %d pages of its log", n)
	}
}
