package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/s3/s3test"
	"github.com/memento-ai/memento/snapshot"
)

// restartTest is the test the durability ladder rests on: process A learns
// ann from events; process B, started with an empty local store and the
// same snapshot URL, never sees the events but knows ann on first access
// and ranks for her exactly as A did.
func restartTest(t *testing.T, url string, env map[string]string) {
	ctx := context.Background()
	cat := profileCatalog(t)
	a, err := serveWith(t, env, "--db", filepath.Join(t.TempDir(), "a.db"), "--catalog", cat, "--snapshot", url, "--log-level", "error")
	if err != nil {
		t.Fatalf("serve A: %v", err)
	}
	a.postEvents(t)
	if err := a.m.app.WaitForJobs(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	_, wantProfile := a.do(t, "GET", "/v1/users/ann/profile", "")
	want, wantWhy := ranking(t, a.m.app, "ann")
	if len(want) == 0 || want[0] != "collateral" {
		t.Fatalf("A ranks %v for ann; want Collateral first (people who liked Heat)", want)
	}
	if err := a.m.Close(ctx); err != nil { // writes what is pending
		t.Fatalf("close A: %v", err)
	}

	b, err := serveWith(t, env, "--db", filepath.Join(t.TempDir(), "b.db"), "--catalog", cat, "--snapshot", url, "--log-level", "error")
	if err != nil {
		t.Fatalf("serve B: %v", err)
	}
	if ok, _ := b.m.app.Store.UserExists(ctx, b.m.app.Scope("ann")); ok {
		t.Fatal("B's new store knows ann before any request")
	}
	code, gotProfile := b.do(t, "GET", "/v1/users/ann/profile", "")
	if code != 200 {
		t.Fatalf("GET profile from B = %d %v", code, gotProfile)
	}
	if diff := cmp.Diff(wantProfile, gotProfile); diff != "" {
		t.Errorf("B's profile of ann (-A +B):\n%s", diff)
	}
	got, gotWhy := ranking(t, b.m.app, "ann")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("B ranks differently (-A +B):\n%s", diff)
	}
	if diff := cmp.Diff(wantWhy, gotWhy); diff != "" {
		t.Errorf("B gives other reasons (-A +B):\n%s", diff)
	}
	// The agent answers ann from B, never with what she has seen.
	code, chat := b.do(t, "POST", "/v1/chat", `{"user":"ann","thread":"t2","message":"recommend me some crime movies"}`)
	if code != 200 {
		t.Fatalf("chat on B = %d %v", code, chat)
	}
	for _, ti := range chat["titles"].([]any) {
		if id := ti.(map[string]any)["id"]; id == "heat" || id == "godfather" {
			t.Errorf("B recommended %s, which ann has seen", id)
		}
	}

	// Forgetting ann on B forgets her snapshot too.
	if err := b.m.app.WaitForJobs(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if code, body := b.do(t, "DELETE", "/v1/users/ann", ""); code >= 300 {
		t.Fatalf("DELETE ann = %d %v", code, body)
	}
	st, err := b.m.openSnapshotStore(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.m.Close(ctx); err != nil {
		t.Fatalf("close B: %v", err)
	}
	if _, err := st.Get(ctx, snapshot.UserKey(memento.Scope{User: "ann"})); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("ann's snapshot after DELETE: %v, want ENOTFOUND", err)
	}
}

func TestRestartFromFileSnapshot(t *testing.T) {
	restartTest(t, "file://"+filepath.Join(t.TempDir(), "snapshots"), nil)
}

func TestRestartFromFakeS3(t *testing.T) {
	srv := s3test.Fake(t)
	restartTest(t, srv.URL(), srv.Env())
}

func TestRestartFromRealS3(t *testing.T) {
	srv := s3test.Real(t)
	restartTest(t, srv.URL(), srv.Env())
}

func TestServeFailsOnUnreachableS3(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	env := map[string]string{"MEMENTO_S3_ENDPOINT": "http://" + addr, "MEMENTO_S3_ACCESS_KEY": "k", "MEMENTO_S3_SECRET_KEY": "s"}
	_, err = serveWith(t, env, "--db", filepath.Join(t.TempDir(), "a.db"), "--catalog", profileCatalog(t), "--snapshot", "s3://snaps/memento", "--log-level", "error")
	if err == nil {
		t.Fatal("serve started with an unreachable snapshot store")
	}
	msg := message(err)
	if !strings.Contains(msg, "snapshot store cannot be used") || !strings.Contains(msg, addr) || !strings.Contains(msg, "s3://snaps/memento") {
		t.Errorf("error %q does not say which store is unreachable", msg)
	}
	if _, err := serveWith(t, nil, "--snapshot", "ftp://x"); err == nil || !strings.Contains(message(err), "--snapshot") {
		t.Errorf("a bad --snapshot URL: %v", err)
	}
}

// scrape reads the server's /metrics.
func scrape(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// metric reads one sample of /metrics.
func metric(t *testing.T, url, name string) float64 {
	t.Helper()
	b := scrape(t, url)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindSubmatch(b)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

func TestWriteBehindSurvivesS3Outage(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Fake(t)
	env := srv.Env()
	env["MEMENTO_SNAPSHOT_DEBOUNCE"] = "50ms"
	a, err := serveWith(t, env, "--db", filepath.Join(t.TempDir(), "a.db"), "--catalog", profileCatalog(t), "--snapshot", srv.URL(), "--log-level", "warn")
	if err != nil {
		t.Fatal(err)
	}
	a.postEvents(t)
	if err := a.m.app.WaitForJobs(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for metric(t, a.m.URL(), `memento_snapshot_writes_total{result="ok"}`) < 6 {
		if time.Now().After(deadline) {
			t.Fatalf("the snapshots were not written; log:\n%s", a.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	srv.Close() // the object store goes away
	code, body := a.do(t, "POST", "/v1/users/ann/events", `{"id":"late","type":"liked","title":"thief"}`)
	if code != 202 {
		t.Fatalf("POST events during the outage = %d %v", code, body)
	}
	for !strings.Contains(a.stderr.String(), "snapshot write failed; the change is kept locally and retried") {
		if time.Now().After(deadline) {
			t.Fatalf("no failed write in the log:\n%s", a.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if metric(t, a.m.URL(), "memento_snapshot_pending_users") < 1 {
		t.Error("no pending users in /metrics while the store is down")
	}
	if metric(t, a.m.URL(), `memento_snapshot_writes_total{result="error"}`) < 1 {
		t.Error("no failed write in /metrics")
	}
	// Nothing is lost locally: the API still answers from the store.
	if err := a.m.app.WaitForJobs(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	code, body = a.do(t, "GET", "/v1/users/ann/profile", "")
	if code != 200 || len(body["keys"].(map[string]any)) == 0 {
		t.Errorf("profile during the outage = %d %v", code, body)
	}
	var p memento.Profile
	b, _ := json.Marshal(body)
	if err := json.Unmarshal(b, &p); err != nil || !strings.Contains(string(p.Keys["likedTitles"].Value), "thief") {
		t.Errorf("the event of the outage is not in the profile: %+v %v", p.Keys["likedTitles"], err)
	}
}

func TestSnapshotPushPull(t *testing.T) {
	dir := t.TempDir()
	cat := profileCatalog(t)
	dbA, dbB := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	url := "file://" + filepath.Join(dir, "snaps")
	if _, err := run(t, "", "events", "import", writeFile(t, "e.jsonl", crowdLines()), "--db", dbA, "--catalog", cat); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, "", "snapshot", "push", "--all", "--to", url, "--db", dbA, "--catalog", cat, "--json")
	if err != nil || !strings.Contains(out, `"users":6`) || !strings.Contains(out, `"written":6`) || !strings.Contains(out, `"models":1`) {
		t.Fatalf("push --all = %s, %v", out, err)
	}
	out, err = run(t, "", "snapshot", "pull", "--user", "ann", "--from", url, "--db", dbB, "--catalog", cat, "--json")
	if err != nil || !strings.Contains(out, `"restored":1`) {
		t.Fatalf("pull --user = %s, %v", out, err)
	}
	out, err = run(t, "", "snapshot", "pull", "--all", "--to", url, "--db", dbB, "--catalog", cat, "--json")
	if err != nil || !strings.Contains(out, `"restored":5`) || !strings.Contains(out, `"skipped":1`) || !strings.Contains(out, `"models":1`) {
		t.Fatalf("pull --all = %s, %v", out, err)
	}
	a, _ := run(t, "", "profile", "show", "--user", "ann", "--db", dbA, "--catalog", cat, "--json")
	b, _ := run(t, "", "profile", "show", "--user", "ann", "--db", dbB, "--catalog", cat, "--json")
	if a != b || a == "" {
		t.Errorf("pulled profile differs:\nA %s\nB %s", a, b)
	}
	out, err = run(t, "", "snapshot", "pull", "--user", "nobody", "--to", url, "--db", dbB, "--catalog", cat, "--json")
	if err != nil || !strings.Contains(out, `"missing":1`) {
		t.Errorf("pull of an unknown user = %s, %v", out, err)
	}
	if _, err := run(t, "", "snapshot", "push", "--to", url, "--db", dbA); err == nil {
		t.Error("push without --user or --all succeeded")
	}
}

// `memento serve` on SQLite serves the syncs of its log in /metrics, the
// floor under its appends' acknowledgements.
func TestServeReportsLogSyncs(t *testing.T) {
	a, err := serveWith(t, nil, "--db", filepath.Join(t.TempDir(), "a.db"), "--catalog", profileCatalog(t), "--log-level", "warn")
	if err != nil {
		t.Fatal(err)
	}
	if code, body := a.do(t, "POST", "/v1/users/ann/threads/t1/messages", `[{"role":"user","text":"I love westerns"}]`); code != 202 {
		t.Fatalf("append = %d %v", code, body)
	}
	if n := metric(t, a.m.URL(), `memento_log_sync_seconds_count{log="store"}`); n < 1 {
		t.Errorf("memento_log_sync_seconds_count{log=\"store\"} = %v after an append, want 1 or more", n)
	}
}
