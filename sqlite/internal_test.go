package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
)

// quiet discards the store's logs.
var quiet = slog.New(slog.DiscardHandler)

func TestLoadMigrations(t *testing.T) {
	fsys := fstest.MapFS{
		"migrations/0010_later.sql": {Data: []byte("SELECT 10;")},
		"migrations/0002_next.sql":  {Data: []byte("SELECT 2;")},
		"migrations/0001_init.sql":  {Data: []byte("SELECT 1;")},
	}
	ms, err := loadMigrations(fsys)
	if err != nil {
		t.Fatalf("loadMigrations: %v", err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, m.name)
	}
	want := []string{"0001_init.sql", "0002_next.sql", "0010_later.sql"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}

	bad := map[string]fstest.MapFS{
		"no number":  {"migrations/init.sql": {}},
		"zero":       {"migrations/0000_init.sql": {}},
		"duplicated": {"migrations/0001_a.sql": {}, "migrations/1_b.sql": {}},
	}
	for name, fsys := range bad {
		t.Run(name, func(t *testing.T) {
			if _, err := loadMigrations(fsys); err == nil {
				t.Error("loadMigrations succeeded, want an error")
			}
		})
	}
}

func TestEmbeddedMigrationsLoad(t *testing.T) {
	ms, err := loadMigrations(migrationFS)
	if err != nil {
		t.Fatalf("loadMigrations: %v", err)
	}
	if len(ms) == 0 || ms[0].version != 1 {
		t.Fatalf("embedded migrations = %v, want 0001 first", ms)
	}
}

func TestNewMigrationIsAppliedOnce(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "m.db"), Options{Logger: quiet})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer db.Close()
	extra := migration{version: 9999, name: "9999_extra.sql", sql: "CREATE TABLE extra (x INTEGER) STRICT;"}
	for range 2 { // the second run must skip it, or CREATE TABLE fails
		if err := db.applyMigrations(ctx, []migration{extra}); err != nil {
			t.Fatalf("applyMigrations: %v", err)
		}
	}
	v, err := db.SchemaVersion(ctx)
	if err != nil {
		t.Fatalf("SchemaVersion: %v", err)
	}
	if v != 9999 {
		t.Errorf("schema version = %d, want 9999", v)
	}

	bad := migration{version: 10000, name: "10000_bad.sql", sql: "CREATE TABLE good (x INTEGER); CREATE TABLE nonsense (;"}
	if err := db.applyMigrations(ctx, []migration{bad}); err == nil {
		t.Fatal("a broken migration applied without error")
	}
	var n int
	if err := db.write.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'good'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Error("the first statement of a failed migration was kept; want the whole migration rolled back")
	}
}

func TestPragmas(t *testing.T) {
	ctx := context.Background()
	// The writer rests at NORMAL, where River's own transactions run,
	// and a transaction somebody waits on runs at the setting
	// (durability_test.go checks each kind of write).
	for _, sync := range []struct {
		opt          string
		rest, waited int
	}{{"", 1, 2}, {"NORMAL", 1, 1}, {"EXTRA", 1, 3}} {
		t.Run(sync.opt, func(t *testing.T) {
			db, err := Open(ctx, filepath.Join(t.TempDir(), "p.db"), Options{Synchronous: sync.opt, Logger: quiet})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer db.Close()
			var mode string
			var fk, synchronous, busy int
			if err := db.write.QueryRowContext(ctx, `SELECT * FROM pragma_journal_mode, pragma_foreign_keys, pragma_synchronous, pragma_busy_timeout`).
				Scan(&mode, &fk, &synchronous, &busy); err != nil {
				t.Fatal(err)
			}
			if mode != "wal" || fk != 1 || synchronous != sync.rest || busy != 10000 {
				t.Errorf("writer: journal_mode=%s foreign_keys=%d synchronous=%d busy_timeout=%d, want wal 1 %d 10000", mode, fk, synchronous, sync.rest, busy)
			}
			if err := db.writeTx(ctx, func(tx *sql.Tx) error {
				return tx.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&synchronous)
			}); err != nil {
				t.Fatal(err)
			}
			if synchronous != sync.waited {
				t.Errorf("a transaction of its own ran at synchronous %d, want %d", synchronous, sync.waited)
			}
			if _, err := db.read.ExecContext(ctx, `INSERT INTO tenants (id, created_at) VALUES ('x', 0)`); err == nil {
				t.Error("the read pool accepted a write")
			}
		})
	}
}

func TestFTSQuery(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"  ?! ", ""},
		{"Thrillers", `"thrillers"`},
		{`NEAR(a b) OR "x" text:y`, `"near" OR "a" OR "b" OR "or" OR "x" OR "text" OR "y"`},
		{"spy spy films", `"spy" OR "films"`},
		{"Amélie 2001", `"amélie" OR "2001"`},
	}
	for _, tt := range tests {
		if got := ftsQuery(tt.in); got != tt.want {
			t.Errorf("ftsQuery(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestSaveLearnedOverAStaleRead: a user's key set between SaveLearned's
// read and its write stands, and the save's other keys are written; the
// profile returned is the stored one.
func TestSaveLearnedOverAStaleRead(t *testing.T) {
	ctx := context.Background()
	db := openInternal(t, Options{})
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	if _, err := db.EnsureUser(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SaveLearned(ctx, s, map[string]memento.ProfileEntry{"era": {Value: json.RawMessage(`"1980s"`)}}); err != nil {
		t.Fatal(err)
	}
	pre, err := db.Profile(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateProfile(ctx, s, memento.ProfileUpdate{Set: map[string]json.RawMessage{"mood": json.RawMessage(`"calm"`)}}); err != nil {
		t.Fatal(err)
	}
	got, err := db.saveLearned(ctx, s, map[string]memento.ProfileEntry{
		"mood": {Value: json.RawMessage(`"restless"`)},
		"era":  {Value: json.RawMessage(`"1990s"`)},
	}, pre)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := db.Profile(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if e := stored.Keys["mood"]; e.Source != memento.ProfileUser || string(e.Value) != `"calm"` {
		t.Errorf("mood = %s by %s, want the user's \"calm\"", e.Value, e.Source)
	}
	if e := stored.Keys["era"]; string(e.Value) != `"1990s"` {
		t.Errorf("era = %s, want the learned \"1990s\"", e.Value)
	}
	if diff := cmp.Diff(stored, got); diff != "" {
		t.Errorf("returned another profile than the stored one (-stored +returned):\n%s", diff)
	}
}
