package snapshot_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/internal/logtest"
	"github.com/memento-ai/memento/profile"
	"github.com/memento-ai/memento/snapshot"
	"github.com/memento-ai/memento/sqlite"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

func TestParseURL(t *testing.T) {
	tests := []struct {
		raw  string
		want snapshot.Location
		bad  string
	}{
		{raw: "file:///var/lib/memento", want: snapshot.Location{Scheme: "file", Dir: "/var/lib/memento"}},
		{raw: "s3://bucket/some/prefix/", want: snapshot.Location{Scheme: "s3", Bucket: "bucket", Prefix: "some/prefix"}},
		{raw: "s3://bucket", want: snapshot.Location{Scheme: "s3", Bucket: "bucket"}},
		{raw: "file://relative/dir", bad: "a file URL has no host"},
		{raw: "file:relative", bad: "must name an absolute directory"},
		{raw: "s3:///prefix", bad: "must name a bucket"},
		{raw: "s3://key:secret@bucket/p", bad: "must not hold credentials"},
		{raw: "gs://bucket", bad: "must start with file:// or s3://"},
		{raw: "", bad: "must look like file:///dir or s3://bucket/prefix"},
	}
	for _, tt := range tests {
		got, err := snapshot.ParseURL(tt.raw)
		if tt.bad != "" {
			if memento.ErrorCode(err) != memento.EINVALID || !strings.Contains(memento.ErrorMessage(err), tt.bad) {
				t.Errorf("ParseURL(%q) = %v, want EINVALID with %q", tt.raw, err, tt.bad)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseURL(%q): %v", tt.raw, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b snapshot.Location) bool {
			return a.Scheme == b.Scheme && a.Dir == b.Dir && a.Bucket == b.Bucket && a.Prefix == b.Prefix
		})); diff != "" {
			t.Errorf("ParseURL(%q) (-want +got):\n%s", tt.raw, diff)
		}
	}
}

func TestKeys(t *testing.T) {
	tests := []struct {
		s    memento.Scope
		want string
	}{
		{memento.Scope{User: "ann"}, "users/default/ann.json"},
		{memento.Scope{Tenant: "acme", User: "../../etc/passwd"}, "users/acme/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd.json"},
		{memento.Scope{User: "ann.smith@example.com"}, "users/default/ann%2Esmith%40example%2Ecom.json"},
	}
	for _, tt := range tests {
		got := snapshot.UserKey(tt.s)
		if got != tt.want {
			t.Errorf("UserKey(%v) = %q, want %q", tt.s, got, tt.want)
		}
		if back, ok := snapshot.UserFromKey(got); !ok || back != tt.s.User {
			t.Errorf("UserFromKey(%q) = %q, %v; want %q", got, back, ok, tt.s.User)
		}
	}
	if got := snapshot.ModelKey("", "cooccurrence"); got != "models/default/cooccurrence.bin" {
		t.Errorf("ModelKey = %q", got)
	}
}

func TestFileStore(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "snaps")
	st, err := snapshot.OpenFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if _, err := st.Get(ctx, "users/default/x.json"); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("Get of a missing key: %v, want ENOTFOUND", err)
	}
	for i := range 3 {
		if err := st.Put(ctx, "users/default/x.json", []byte{byte('a' + i)}); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := st.Get(ctx, "users/default/x.json"); err != nil || string(got) != "c" {
		t.Errorf("Get = %q, %v; want the last write", got, err)
	}
	// No temporary file is left behind.
	entries, _ := os.ReadDir(filepath.Join(dir, "users", "default"))
	if len(entries) != 1 {
		t.Errorf("directory holds %d files, want 1: %v", len(entries), entries)
	}
	keys, err := st.List(ctx, "users/")
	if err != nil || !cmp.Equal(keys, []string{"users/default/x.json"}) {
		t.Errorf("List = %v, %v", keys, err)
	}
	for _, bad := range []string{"../x", "/abs", "a/../../b", ""} {
		if err := st.Put(ctx, bad, nil); memento.ErrorCode(err) != memento.EINVALID {
			t.Errorf("Put(%q): %v, want EINVALID", bad, err)
		}
	}
	for range 2 {
		if err := st.Delete(ctx, "users/default/x.json"); err != nil {
			t.Errorf("Delete: %v", err)
		}
	}
	if _, err := st.Get(ctx, "users/default/x.json"); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("Get after Delete: %v, want ENOTFOUND", err)
	}
	if st.String() != "file://"+dir {
		t.Errorf("String = %q", st.String())
	}
}

// fixture is a local store with one user who has a thread, events and a
// profile, and the snapshots of it.
type fixture struct {
	db   *sqlite.DB
	snap *snapshot.Snapshots
}

func newSnapshots(t *testing.T, st snapshot.Store) *fixture {
	t.Helper()
	db := sqlitetest.Open(t)
	return &fixture{db: db, snap: &snapshot.Snapshots{Store: st, Local: db, Models: db,
		Sections: []memento.UserSection{profile.Section{Store: db}}}}
}

func seedUser(t *testing.T, db *sqlite.DB, s memento.Scope) {
	t.Helper()
	ctx := context.Background()
	if _, err := db.AppendMessages(ctx, s, "th", []memento.Message{{ID: "m1", Role: memento.RoleUser, Text: "I like heist films"}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddEvents(ctx, s, []memento.Event{{ID: "e1", Type: memento.EventLiked, TitleID: "heat"}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SaveLearned(ctx, s, map[string]memento.ProfileEntry{"seen": {Value: json.RawMessage(`["heat"]`), Evidence: []string{"e1"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateProfile(ctx, s, memento.ProfileUpdate{Set: map[string]json.RawMessage{"platform": json.RawMessage(`"Netflix"`)}}); err != nil {
		t.Fatal(err)
	}
}

func TestPushPull(t *testing.T) {
	ctx := context.Background()
	st, err := snapshot.OpenFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a, b := newSnapshots(t, st), newSnapshots(t, st)
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	seedUser(t, a.db, s)
	if _, err := a.snap.Push(ctx, s); err != nil {
		t.Fatalf("Push: %v", err)
	}
	if _, err := a.snap.Push(ctx, memento.Scope{User: "ghost"}); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("Push of an unknown user: %v, want ENOTFOUND", err)
	}
	restored, err := b.snap.Pull(ctx, s, false)
	if err != nil || !restored {
		t.Fatalf("Pull = %v, %v", restored, err)
	}
	pa, _ := a.db.Profile(ctx, s)
	pb, _ := b.db.Profile(ctx, s)
	if diff := cmp.Diff(pa, pb); diff != "" {
		t.Errorf("restored profile (-want +got):\n%s", diff)
	}
	msgs, err := b.db.Messages(ctx, s, "th", 0, 0)
	if err != nil || len(msgs) != 1 || msgs[0].Text != "I like heist films" {
		t.Errorf("restored messages = %v, %v", msgs, err)
	}
	events, _ := b.db.Events(ctx, s)
	if len(events) != 1 {
		t.Errorf("restored events = %v", events)
	}
	if _, err := b.snap.Pull(ctx, s, false); memento.ErrorCode(err) != memento.ECONFLICT {
		t.Errorf("Pull of a local user: %v, want ECONFLICT", err)
	}
	if ok, err := b.snap.Pull(ctx, s, true); err != nil || !ok {
		t.Errorf("Pull with replace = %v, %v", ok, err)
	}
	if ok, err := b.snap.Pull(ctx, memento.Scope{User: "nobody"}, false); err != nil || ok {
		t.Errorf("Pull of a user without a snapshot = %v, %v; want false, nil", ok, err)
	}
	users, err := a.snap.RemoteUsers(ctx, "")
	if err != nil || !cmp.Equal(users, []string{"ann"}) {
		t.Errorf("RemoteUsers = %v, %v", users, err)
	}
}

func TestPullRollsBackAFailedRestore(t *testing.T) {
	ctx := context.Background()
	st, _ := snapshot.OpenFile(t.TempDir())
	a, b := newSnapshots(t, st), newSnapshots(t, st)
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	seedUser(t, a.db, s)
	if _, err := a.snap.Push(ctx, s); err != nil {
		t.Fatal(err)
	}
	b.snap.Sections = append(b.snap.Sections, failingSection{})
	doc, _ := st.Get(ctx, snapshot.UserKey(s))
	var d map[string]any
	_ = json.Unmarshal(doc, &d)
	d["sections"].(map[string]any)["broken"] = 1
	doc, _ = json.Marshal(d)
	_ = st.Put(ctx, snapshot.UserKey(s), doc)
	if _, err := b.snap.Pull(ctx, s, false); err == nil {
		t.Fatal("Pull with a failing section succeeded")
	}
	if ok, _ := b.db.UserExists(ctx, s); ok {
		t.Error("a failed restore left the user in the local store")
	}
}

type failingSection struct{}

func (failingSection) SectionName() string { return "broken" }
func (failingSection) ExportSection(context.Context, memento.Scope) (json.RawMessage, error) {
	return nil, nil
}
func (failingSection) ImportSection(context.Context, memento.Scope, json.RawMessage) error {
	return errors.New("broken section")
}

// flaky is a store whose writes fail while down is set.
type flaky struct {
	snapshot.Store
	down   atomic.Bool
	puts   atomic.Int64
	failed atomic.Int64
}

func (f *flaky) Put(ctx context.Context, key string, data []byte) error {
	if f.down.Load() {
		f.failed.Add(1)
		return memento.Errorf(memento.EUNAVAILABLE, "the store is down")
	}
	f.puts.Add(1)
	return f.Store.Put(ctx, key, data)
}

func (f *flaky) Get(ctx context.Context, key string) ([]byte, error) {
	if f.down.Load() {
		return nil, memento.Errorf(memento.EUNAVAILABLE, "the store is down")
	}
	return f.Store.Get(ctx, key)
}

func TestWriteBehindRetriesAndLosesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fs, _ := snapshot.OpenFile(dir)
	st := &flaky{Store: fs}
	f := newSnapshots(t, st)
	reg := prometheus.NewRegistry()
	metrics := snapshot.NewMetrics(reg)
	var logs logtest.Buffer
	wb := &snapshot.WriteBehind{Snapshots: f.snap, Changes: f.db, ModelNames: []string{profile.ModelName}, Metrics: metrics,
		Logger:  newLogger(&logs),
		Options: snapshot.Options{Poll: 10 * time.Millisecond, Debounce: 30 * time.Millisecond, MinBackoff: 20 * time.Millisecond, MaxBackoff: 40 * time.Millisecond}}
	if err := wb.Start(ctx); err != nil {
		t.Fatal(err)
	}
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}

	st.down.Store(true)
	seedUser(t, f.db, s)
	waitFor(t, "failed writes", func() bool { return value(metrics.Writes.WithLabelValues("error")) >= 2 })
	if got := wb.Pending(); !cmp.Equal(got, []memento.Scope{s}) {
		t.Errorf("pending = %v, want ann", got)
	}
	if value(metrics.Pending) != 1 {
		t.Errorf("pending gauge = %v, want 1", value(metrics.Pending))
	}
	if !strings.Contains(logs.String(), "snapshot write failed") {
		t.Errorf("no failure in the log:\n%s", logs.String())
	}
	// Nothing is lost locally.
	if p, _ := f.db.Profile(ctx, s); len(p.Keys) != 2 {
		t.Errorf("local profile = %v", p.Keys)
	}

	st.down.Store(false)
	waitFor(t, "the retried write", func() bool { return len(wb.Pending()) == 0 })
	if value(metrics.Writes.WithLabelValues("ok")) < 1 {
		t.Error("no successful write counted")
	}
	b := newSnapshots(t, fs)
	if ok, err := b.snap.Pull(ctx, s, false); err != nil || !ok {
		t.Fatalf("the written snapshot cannot be pulled: %v, %v", ok, err)
	}

	// An unchanged user is not written again; a change is, debounced.
	puts := st.puts.Load()
	time.Sleep(100 * time.Millisecond)
	if st.puts.Load() != puts {
		t.Errorf("an unchanged user was written again (%d puts, then %d)", puts, st.puts.Load())
	}
	if _, err := f.db.UpdateProfile(ctx, s, memento.ProfileUpdate{Set: map[string]json.RawMessage{"platform": json.RawMessage(`"Hulu"`)}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the write of a change", func() bool {
		data, err := fs.Get(ctx, snapshot.UserKey(s))
		return err == nil && strings.Contains(string(data), "Hulu")
	})
	// Forgetting the user locally removes the snapshot too.
	if err := f.db.DeleteUser(ctx, s); err != nil {
		t.Fatal(err)
	}
	wb.Notify(s)
	waitFor(t, "the removal of the snapshot", func() bool {
		_, err := fs.Get(ctx, snapshot.UserKey(s))
		return memento.ErrorCode(err) == memento.ENOTFOUND
	})
	if err := wb.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestWriteBehindCursorSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	fs, _ := snapshot.OpenFile(t.TempDir())
	st := &flaky{Store: fs}
	st.down.Store(true)
	path := filepath.Join(t.TempDir(), "m.db")
	db := sqlitetest.OpenPath(t, path, sqlitetest.Options())
	snap := &snapshot.Snapshots{Store: st, Local: db}
	opts := snapshot.Options{Poll: time.Hour, Debounce: time.Millisecond, Overlap: time.Millisecond}
	wb := &snapshot.WriteBehind{Snapshots: snap, Changes: db, Options: opts}
	if err := wb.Start(ctx); err != nil {
		t.Fatal(err)
	}
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "bob"}
	time.Sleep(5 * time.Millisecond)
	seedUser(t, db, s)
	time.Sleep(5 * time.Millisecond)
	_ = wb.Tick(ctx, false) // notices bob
	time.Sleep(5 * time.Millisecond)
	if err := wb.Tick(ctx, false); err == nil {
		t.Fatal("a tick with the store down succeeded")
	}
	// The process stops with the write undone (Close cannot write either).
	if err := wb.Close(ctx); err == nil {
		t.Fatal("Close with the store down succeeded")
	}
	// A new write-behind over the same store finds bob again.
	st.down.Store(false)
	wb2 := &snapshot.WriteBehind{Snapshots: snap, Changes: db, Options: opts}
	if err := wb2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	_ = wb2.Tick(ctx, false) // notices bob again
	time.Sleep(5 * time.Millisecond)
	if err := wb2.Tick(ctx, false); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Get(ctx, snapshot.UserKey(s)); err != nil {
		t.Errorf("bob's change was lost across the restart: %v", err)
	}
	_ = wb2.Close(ctx)
}

func TestRestorer(t *testing.T) {
	ctx := context.Background()
	fs, _ := snapshot.OpenFile(t.TempDir())
	st := &flaky{Store: fs}
	a, b := newSnapshots(t, st), newSnapshots(t, st)
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	seedUser(t, a.db, s)
	if _, err := a.snap.Push(ctx, s); err != nil {
		t.Fatal(err)
	}
	metrics := snapshot.NewMetrics(nil)
	var restored atomic.Int64
	r := &snapshot.Restorer{Snapshots: b.snap, Metrics: metrics, Restored: func(memento.Scope) { restored.Add(1) }}

	// Many first requests at once restore once.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := r.Ensure(ctx, memento.Scope{User: "ann"}); err != nil {
				t.Errorf("Ensure: %v", err)
			}
		})
	}
	wg.Wait()
	if restored.Load() != 1 || value(metrics.Restores.WithLabelValues("restored")) != 1 {
		t.Errorf("restored %d times", restored.Load())
	}
	if p, _ := b.db.Profile(ctx, s); len(p.Keys) != 2 {
		t.Errorf("restored profile = %v", p.Keys)
	}
	// A new user has no snapshot: nothing to restore, no error.
	if err := r.Ensure(ctx, memento.Scope{User: "newcomer"}); err != nil {
		t.Errorf("Ensure of a new user: %v", err)
	}
	if value(metrics.Restores.WithLabelValues("absent")) != 1 {
		t.Error("a new user was not counted as absent")
	}
	// With the store down, an unknown user fails rather than starts empty.
	st.down.Store(true)
	err := r.Ensure(ctx, memento.Scope{User: "carol"})
	if memento.ErrorCode(err) != memento.EUNAVAILABLE || !strings.Contains(memento.ErrorMessage(err), `user "carol" is not in the local store and cannot be restored`) {
		t.Errorf("Ensure with the store down: %v", err)
	}
	// Known users need no store.
	if err := r.Ensure(ctx, memento.Scope{User: "ann"}); err != nil {
		t.Errorf("Ensure of a restored user with the store down: %v", err)
	}
}

func TestModels(t *testing.T) {
	ctx := context.Background()
	fs, _ := snapshot.OpenFile(t.TempDir())
	a, b := newSnapshots(t, fs), newSnapshots(t, fs)
	if v, err := a.snap.PushModel(ctx, "", profile.ModelName); err != nil || v != 0 {
		t.Errorf("PushModel without a model = %d, %v", v, err)
	}
	if _, err := a.db.SaveProfileModel(ctx, memento.ProfileModel{Name: profile.ModelName, EventsMark: 4, Data: []byte("MCO1...")}, false); err != nil {
		t.Fatal(err)
	}
	if v, err := a.snap.PushModel(ctx, "", profile.ModelName); err != nil || v != 1 {
		t.Errorf("PushModel = %d, %v", v, err)
	}
	b.snap.CheckModel = func(string, []byte) error { return errors.New("bad model") }
	if _, err := b.snap.PullModel(ctx, memento.DefaultTenant, profile.ModelName, profile.RestoredMark, true); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("PullModel of a model that fails its check: %v", err)
	}
	b.snap.CheckModel = nil
	if ok, err := b.snap.PullModel(ctx, memento.DefaultTenant, profile.ModelName, profile.RestoredMark, true); err != nil || !ok {
		t.Errorf("PullModel = %v, %v", ok, err)
	}
	m, _ := b.db.ProfileModel(ctx, memento.DefaultTenant, profile.ModelName)
	if m == nil || m.EventsMark != profile.RestoredMark || string(m.Data) != "MCO1..." {
		t.Errorf("pulled model = %+v", m)
	}
	if ok, _ := b.snap.PullModel(ctx, memento.DefaultTenant, profile.ModelName, profile.RestoredMark, true); ok {
		t.Error("PullModel with onlyIfMissing replaced a local model")
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	start := time.Now()
	defer func() { t.Logf("waited %s for %s", time.Since(start), what) }()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
