package postgres

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestReadMigrationsOrder reads migration files in the order of their
// numbers, gaps allowed (numbers taken ahead by someone else), and refuses
// two files of one number and a name without one.
func TestReadMigrationsOrder(t *testing.T) {
	ms, err := readMigrations(fstest.MapFS{
		"0007_later.sql": {Data: []byte("SELECT 7")},
		"0001_init.sql":  {Data: []byte("SELECT 1")},
		"0004_keys.sql":  {Data: []byte("SELECT 4")},
		"README.md":      {Data: []byte("not a migration")},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, fmt.Sprintf("%d:%s", m.version, m.name))
	}
	if strings.Join(got, " ") != "1:0001_init.sql 4:0004_keys.sql 7:0007_later.sql" {
		t.Errorf("migrations = %v, want 1, 4, 7 in order", got)
	}
	if _, err := readMigrations(fstest.MapFS{"0004_a.sql": {}, "0004_b.sql": {}}); err == nil || !strings.Contains(err.Error(), "same number") {
		t.Errorf("two migrations numbered 0004: %v, want refused", err)
	}
	if _, err := readMigrations(fstest.MapFS{"init.sql": {}}); err == nil {
		t.Error("a migration without a number was accepted")
	}
	embedded, err := migrations()
	if err != nil {
		t.Fatalf("the embedded migrations: %v", err)
	}
	for i, m := range embedded {
		if m.version != i+1 {
			t.Errorf("embedded migration %d is %s", i, m.name)
		}
	}
}

// migrationConn connects to a fresh schema of its own, dropped when the
// test ends.
func migrationConn(t *testing.T) *pgx.Conn {
	t.Helper()
	url := os.Getenv("MEMENTO_TEST_POSTGRES")
	if url == "" {
		t.Skip("MEMENTO_TEST_POSTGRES is not set; skipping the PostgreSQL tests")
	}
	ctx := context.Background()
	schema := fmt.Sprintf("mi_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema+`; SET search_path = `+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Exec(context.Background(), `DROP SCHEMA `+schema+` CASCADE`) //nolint:errcheck
		conn.Close(context.Background())
	})
	return conn
}

// TestApplyMigrationsWithGaps applies migrations numbered with gaps, then
// one numbered inside a gap, which is applied too, each once.
func TestApplyMigrationsWithGaps(t *testing.T) {
	conn := migrationConn(t)
	ctx := t.Context()
	ms := []migration{
		{version: 1, name: "0001_a.sql", sql: `CREATE TABLE a (x INT)`},
		{version: 7, name: "0007_b.sql", sql: `CREATE TABLE b (x INT)`},
	}
	if err := applyMigrations(ctx, conn, ms); err != nil {
		t.Fatal(err)
	}
	if err := applyMigrations(ctx, conn, ms); err != nil {
		t.Fatalf("applying again: %v", err)
	}
	filled := []migration{ms[0], {version: 5, name: "0005_c.sql", sql: `CREATE TABLE c (x INT)`}, ms[1]}
	if err := applyMigrations(ctx, conn, filled); err != nil {
		t.Fatalf("applying a migration inside the gap: %v", err)
	}
	var got string
	if err := conn.QueryRow(ctx, `SELECT string_agg(version::text, ',' ORDER BY version) FROM schema_migrations`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != "1,5,7" {
		t.Errorf("applied migrations = %s, want 1,5,7", got)
	}
	if err := conn.QueryRow(ctx, `SELECT 'ok' FROM c, b, a LIMIT 1`).Scan(new(string)); err != nil && err != pgx.ErrNoRows {
		t.Errorf("the tables of the migrations: %v", err)
	}
}

// TestEventsMarkMigration applies the store's migrations up to 0004,
// stores events, and applies 0005: the events keep their row numbers as
// marks (so models saved before compare alike), and events added after
// take marks above them.
func TestEventsMarkMigration(t *testing.T) {
	conn := migrationConn(t)
	ctx := t.Context()
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	var upTo4, fifth []migration
	for _, m := range ms {
		switch {
		case m.version <= 4:
			upTo4 = append(upTo4, m)
		case m.version == 5:
			fifth = append(fifth, m)
		}
	}
	if err := applyMigrations(ctx, conn, upTo4); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO users (tenant_id, id, created_at) VALUES ('default', 'ann', 0), ('default', 'bob', 0);
		INSERT INTO events (tenant_id, user_id, id, type, title_id, at, created_at)
		SELECT 'default', CASE WHEN i % 2 = 0 THEN 'ann' ELSE 'bob' END, 'e' || i, 'watched', 'wiki:T', i, 0 FROM generate_series(1, 5) AS i;
		DELETE FROM events WHERE id = 'e5'`); err != nil {
		t.Fatal(err)
	}
	if err := applyMigrations(ctx, conn, fifth); err != nil {
		t.Fatal(err)
	}
	var differ, maxPK int64
	if err := conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE mark <> pk), max(pk) FROM events`).Scan(&differ, &maxPK); err != nil {
		t.Fatal(err)
	}
	if differ != 0 {
		t.Errorf("%d events have a mark other than their row number", differ)
	}
	var mark int64
	if err := conn.QueryRow(ctx, `INSERT INTO events (tenant_id, user_id, id, type, title_id, at, created_at)
		VALUES ('default', 'ann', 'new', 'liked', 'wiki:U', 9, 0) RETURNING mark`).Scan(&mark); err != nil {
		t.Fatal(err)
	}
	if mark <= maxPK {
		t.Errorf("a new event's mark %d is not above the old marks (up to %d)", mark, maxPK)
	}
}
