package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

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

// TestSavedClustersKeepTheirRows checks that a clustering that finds the
// clusters stored keeps their rows, moving only their version, and
// writes anew the clusters that changed and removes those that are gone,
// with the same result as writing every cluster anew.
func TestSavedClustersKeepTheirRows(t *testing.T) {
	ctx := context.Background()
	db := openInternal(t, Options{})
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	now := time.Now()
	pref := func(concept string) memento.Preference {
		return memento.Preference{Concept: concept, Weight: 1, Kind: memento.KindTaste, Evidence: 1, Sources: []string{"m1"},
			FirstSeen: now, LastSeen: now, Embedder: "e/v1/3", Vector: []float32{0.6, -0.8, 0}}
	}
	res, err := db.WritePreferences(ctx, s, memento.PreferenceWrite{Source: "m1", Embedder: "e/v1/3",
		Merge: func([]memento.Preference) (memento.PreferenceChanges, error) {
			return memento.PreferenceChanges{Insert: []memento.Preference{pref("heist"), pref("crime"), pref("horror"), pref("westerns")}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	id := func(i int) string { return res.Inserted[i].ID }
	member := func(i int, stance string) memento.PreferenceClusterMember {
		return memento.PreferenceClusterMember{Preference: id(i), Stance: stance}
	}
	a := memento.PreferenceCluster{ID: "pcl_a", Description: "heist and crime", Signature: "a",
		Members: []memento.PreferenceClusterMember{member(0, memento.StanceSupport), member(1, memento.StanceSupport)}}
	b := memento.PreferenceCluster{ID: "pcl_b", Description: "no horror", Signature: "b",
		Members: []memento.PreferenceClusterMember{member(2, memento.StanceOppose), member(3, memento.StanceSupport)}}
	changes := func(version int64, clusters ...memento.PreferenceCluster) int64 {
		t.Helper()
		count := func() int64 {
			var n int64
			if err := db.groupTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
				return tx.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&n)
			}); err != nil {
				t.Fatal(err)
			}
			return n
		}
		before := count()
		if err := db.SavePreferenceClusters(ctx, s, version, clusters); err != nil {
			t.Fatal(err)
		}
		return count() - before
	}
	check := func(step string, version int64, want ...memento.PreferenceCluster) {
		t.Helper()
		got, err := db.PreferenceClusters(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d clusters stored, want %d", step, len(got), len(want))
		}
		for i, c := range got {
			if c.ID != want[i].ID || c.Description != want[i].Description || c.Version != version || len(c.Members) != len(want[i].Members) {
				t.Errorf("%s: cluster %d is %+v, want %+v at version %d", step, i, c, want[i], version)
				continue
			}
			for j, m := range c.Members {
				if m.Preference != want[i].Members[j].Preference || m.Stance != want[i].Members[j].Stance {
					t.Errorf("%s: cluster %s member %d is %+v, want %+v", step, c.ID, j, m, want[i].Members[j])
				}
			}
		}
	}
	first := changes(1, a, b)
	check("first save", 1, a, b)
	// The same clusters: two cluster rows updated and the state's two.
	if n := changes(2, a, b); n != 4 {
		t.Errorf("saving the stored clusters again changed %d rows, want 4 (first save: %d)", n, first)
	}
	check("same clusters", 2, a, b)
	// b's description and a member's stance change, a stays, and a new
	// cluster comes; then b goes.
	b2 := b
	b2.Description = "no horror, some westerns"
	b2.Members = []memento.PreferenceClusterMember{member(2, memento.StanceOppose), member(3, memento.StanceOppose)}
	c := memento.PreferenceCluster{ID: "pcl_c", Description: "westerns", Signature: "c",
		Members: []memento.PreferenceClusterMember{member(3, memento.StanceSupport)}}
	changes(3, a, b2, c)
	check("one changed, one new", 3, a, b2, c)
	changes(4, a, c)
	check("one gone", 4, a, c)

	// Two clusterings saved at once, again and again: the store holds
	// one of them whole, never a mix.
	for round := range 20 {
		var wg sync.WaitGroup
		for _, set := range [][]memento.PreferenceCluster{{a, b}, {b2, c}} {
			wg.Go(func() {
				if err := db.SavePreferenceClusters(ctx, s, int64(5+round), set); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		got, err := db.PreferenceClusters(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]string, len(got))
		for i, g := range got {
			ids[i] = g.ID + ":" + g.Description
		}
		if !slices.Equal(ids, []string{a.ID + ":" + a.Description, b.ID + ":" + b.Description}) &&
			!slices.Equal(ids, []string{b2.ID + ":" + b2.Description, c.ID + ":" + c.Description}) {
			t.Fatalf("round %d: two saves at once left %v, neither clustering whole", round, ids)
		}
	}
}

// TestBackgroundReadsArePrepared checks that the reads the background jobs
// and the prompt's context make for every batch or turn run through
// statements prepared once on the read pool, and read what the
// unprepared queries read.
func TestBackgroundReadsArePrepared(t *testing.T) {
	ctx := context.Background()
	db := openInternal(t, Options{})
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	if _, err := db.AppendMessages(ctx, s, "t1", []memento.Message{{ID: "m1", Role: memento.RoleUser, Text: "I loved Alien"}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddEvents(ctx, s, []memento.Event{{ID: "e1", Type: memento.EventType("liked"), TitleID: "tt0078748", At: time.Unix(100, 0)}}, nil); err != nil {
		t.Fatal(err)
	}
	type reads struct {
		Events   []memento.Event
		Messages []memento.Message
		Message  *memento.Message
		Prefs    []memento.Preference
		Version  memento.PreferenceVersion
		Clusters []memento.PreferenceCluster
		Sources  []string
		Modes    map[string]string
		Profile  *memento.Profile
		Threads  []memento.Thread
		Mark     int64
		Backlog  []memento.BacklogJob
		Open     int
	}
	read := func() reads {
		t.Helper()
		var r reads
		var err error
		check := func(what string, e error) {
			if e != nil {
				t.Fatalf("%s: %v", what, e)
			}
		}
		r.Events, err = db.Events(ctx, s)
		check("Events", err)
		r.Messages, err = db.Messages(ctx, s, "t1", 0, 0)
		check("Messages", err)
		r.Message, err = db.MessageByID(ctx, s, "m1")
		check("MessageByID", err)
		r.Prefs, err = db.Preferences(ctx, s)
		check("Preferences", err)
		r.Version, err = db.PreferenceVersion(ctx, s)
		check("PreferenceVersion", err)
		r.Clusters, err = db.PreferenceClusters(ctx, s)
		check("PreferenceClusters", err)
		r.Sources, err = db.PreferenceSources(ctx, s)
		check("PreferenceSources", err)
		r.Modes, err = db.MemoryModes(ctx, s)
		check("MemoryModes", err)
		r.Profile, err = db.Profile(ctx, s)
		check("Profile", err)
		r.Threads, err = db.Threads(ctx, s)
		check("Threads", err)
		r.Mark, err = db.EventsMark(ctx, s.Tenant)
		check("EventsMark", err)
		r.Backlog, err = db.readBacklog(ctx, s, 10)
		check("readBacklog", err)
		r.Open, err = db.Unfinished(ctx)
		check("Unfinished", err)
		_, _, err = db.Checkpointer(s).Load(ctx, "memory/m1")
		check("checkpoint Load", err)
		return r
	}
	prepared := func() []string {
		var qs []string
		db.readStmts.Range(func(k, _ any) bool {
			qs = append(qs, k.(string))
			return true
		})
		slices.Sort(qs)
		return qs
	}
	first := read()
	if len(first.Events) != 1 || len(first.Messages) != 1 || first.Message == nil || len(first.Threads) != 1 || first.Mark == 0 {
		t.Fatalf("the store read back %+v, want the event, message and thread written", first)
	}
	after := prepared()
	// What identifies each read's statement: every part must be in it.
	for _, parts := range [][]string{
		{"title_id, value, at, created_at FROM events"}, // Events
		{"thread_id = ? AND seq > ?"},                   // Messages
		{"count(*) FROM threads"},                       // Messages: the thread exists
		{"FROM messages", "AND id = ?"},                 // MessageByID
		{"FROM preferences p"},
		{"FROM preference_state"},
		{"FROM preference_clusters"},
		{"FROM preference_cluster_members"},
		{"FROM preference_sources"},
		{"FROM memory_modes"},
		{"FROM profiles"},
		{"id, created_at, updated_at FROM threads"}, // Threads
		{"max(pk) FROM events"},                     // EventsMark
		{"FROM backlog", "LIMIT ?"},                 // readBacklog
		{"FROM river_job"},                          // Unfinished
		{"FROM graph_checkpoints"},
	} {
		if !slices.ContainsFunc(after, func(q string) bool {
			for _, p := range parts {
				if !strings.Contains(q, p) {
					return false
				}
			}
			return true
		}) {
			t.Errorf("no statement prepared on the read pool has %q; prepared:\n%s", parts, strings.Join(after, "\n"))
		}
	}
	second := read()
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("the prepared statements read another result (-first +second):\n%s", diff)
	}
	if again := prepared(); !slices.Equal(after, again) {
		t.Errorf("the same reads prepared %d statements more", len(again)-len(after))
	}
}
