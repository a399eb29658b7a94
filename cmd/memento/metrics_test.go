package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memento-ai/memento/postgres/pgtest"
)

// Every metric a running server serves is explained in docs/METRICS.md,
// once the server has done the work that makes its labelled metrics
// appear: appends, a chat turn, events, the jobs they queue and the
// snapshots they write. The root package's TestMetricsDocumented reads the
// code; this reads what a scrape returns, so a metric defined in a way
// that test does not recognise is still caught.
func TestServeMetricsDocumented(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		served := serveMetricsDocumented(t, filepath.Join(t.TempDir(), "a.db"))
		for _, name := range []string{"memento_log_sync_seconds", "memento_log_pages_total", "memento_writer_writes_total"} {
			if !served[name] {
				t.Errorf("/metrics on SQLite lacks %s", name)
			}
		}
	})
	t.Run("postgres", func(t *testing.T) {
		served := serveMetricsDocumented(t, pgtest.SchemaURL(t))
		if !served["memento_postgres_pool_max_conns"] {
			t.Errorf("/metrics on PostgreSQL lacks memento_postgres_pool_max_conns")
		}
	})
}

// serveMetricsDocumented serves db, works it and checks its /metrics
// against the documentation; it returns the metrics served.
func serveMetricsDocumented(t *testing.T, db string) map[string]bool {
	t.Helper()
	env := map[string]string{"MEMENTO_SNAPSHOT_DEBOUNCE": "50ms"}
	a, err := serveWith(t, env, "--db", db, "--catalog", profileCatalog(t), "--snapshot", "file://"+t.TempDir(), "--log-level", "warn")
	if err != nil {
		t.Fatal(err)
	}
	if code, body := a.do(t, "POST", "/v1/users/ann/threads/t1/messages", `[{"role":"user","text":"I love westerns and my favourite actor is Clint Eastwood"}]`); code != 202 {
		t.Fatalf("append = %d %v", code, body)
	}
	if code, body := a.do(t, "POST", "/v1/chat", `{"user":"ann","thread":"t1","message":"a western from the sixties"}`); code != 200 {
		t.Fatalf("chat = %d %v", code, body)
	}
	a.postEvents(t)
	if err := a.m.app.WaitForJobs(context.Background(), time.Minute); err != nil {
		t.Fatal(err)
	}

	body := scrape(t, a.m.URL())
	served := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^# HELP (memento_[a-z0-9_]+) `).FindAllSubmatch(body, -1) {
		served[string(m[1])] = true
	}
	doc, err := os.ReadFile("../../docs/METRICS.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(memento_[a-z0-9_]+)` \\|").FindAllSubmatch(doc, -1) {
		documented[string(m[1])] = true
	}
	var missing []string
	for name := range served {
		if !documented[name] {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("/metrics serves metrics docs/METRICS.md does not explain:\n%s", strings.Join(missing, "\n"))
	}
	// What every server serves once it has worked: the queue's and the
	// memories' lag, the appends' phases, the requests, recall's index and
	// the snapshots. The queue's gauges carry the workers' kinds from the
	// start, though no scrape saw a job of them waiting.
	if !regexp.MustCompile(`(?m)^memento_queue_oldest_waiting_seconds\{kind="remember"\} 0$`).Match(body) {
		t.Errorf("/metrics lacks the remember jobs' lag at 0 once drained:\n%s", regexp.MustCompile(`(?m)^memento_queue_.*$`).FindAll(body, -1))
	}
	for _, name := range []string{"memento_queue_oldest_waiting_seconds", "memento_memory_lag_seconds", "memento_append_write_seconds",
		"memento_http_requests_total", "memento_recall_index_users", "memento_snapshot_writes_total", "memento_turn_slots"} {
		if !served[name] {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	t.Logf("%d metrics served", len(served))
	return served
}
