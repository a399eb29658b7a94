package http_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/engine/enginetest"
	mhttp "github.com/memento-ai/memento/http"
)

// fakeLag reports a lag the test sets, and counts the readings.
type fakeLag struct {
	mu     sync.Mutex
	oldest float64
	reads  int
	idle   bool // no job waits: no kind is read
}

func (f *fakeLag) set(oldest float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.oldest = oldest
}

func (f *fakeLag) QueueLag(context.Context) (*memento.QueueLags, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	if f.idle {
		return &memento.QueueLags{At: time.Now()}, nil
	}
	return &memento.QueueLags{At: time.Now(), Waiting: 7, OldestSeconds: f.oldest,
		Kinds: []memento.QueueLag{{Kind: memento.JobRemember, Waiting: 7, Running: 2, OldestSeconds: f.oldest}}}, nil
}

func TestBackpressureRefusesAppendsWhileLagging(t *testing.T) {
	db := enginetest.Open(t)
	lag := &fakeLag{oldest: 400} // past the 5-minute bound
	ts := testServer(t, func(s *mhttp.Server) {
		s.Lag, s.MaxLag = lag, 5*time.Minute
		s.Routes = append(s.Routes, mhttp.RegisterMemory(mhttp.MemoryRoutes{Store: db}))
	})
	base := ts.URL + "/v1/users/ann"
	post := func() (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", base+"/threads/t1/messages", strings.NewReader(`{"id":"m1","role":"user","text":"hello"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := post()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, `"EUNAVAILABLE"`) || !strings.Contains(body, "behind") {
		t.Fatalf("append while lagging = %d %s; want 503 EUNAVAILABLE saying how far behind", resp.StatusCode, body)
	}
	// (400 s - 300 s) / 4 = 25 s.
	if ra := resp.Header.Get("Retry-After"); ra != "25" {
		t.Errorf("Retry-After = %q, want 25", ra)
	}
	// Nothing was stored, so a retry later stores the message once.
	if msgs, err := db.Messages(context.Background(), memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}, "t1", 0, 0); err == nil && len(msgs) > 0 {
		t.Errorf("a refused append stored %d messages", len(msgs))
	}
	// Reads go on.
	if code, _ := get(t, base+"/memories"); code != 200 {
		t.Errorf("GET memories while lagging = %d, want 200", code)
	}
	// /healthz says so, without failing (a restart would not drain it).
	code, health := get(t, ts.URL+"/healthz")
	checks, _ := health["checks"].(map[string]any)
	if code != 200 || health["status"] != "lagging" || !strings.HasPrefix(checks["queue"].(string), "lagging") {
		t.Errorf("healthz while lagging = %d %v", code, health)
	}
	// /metrics carries the lag by kind.
	mresp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(mresp.Body)
	mresp.Body.Close()
	for _, want := range []string{`memento_queue_oldest_waiting_seconds{kind="remember"} 400`, `memento_queue_waiting_jobs{kind="remember"} 7`, `memento_queue_running_jobs{kind="remember"} 2`} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	// Once it drains (and the cached reading has expired), appends go in.
	lag.set(3)
	time.Sleep(1100 * time.Millisecond)
	if resp, body := post(); resp.StatusCode != http.StatusAccepted {
		t.Errorf("append after the queue drained = %d %s, want 202", resp.StatusCode, body)
	}
	if code, health := get(t, ts.URL+"/healthz"); code != 200 || health["status"] != "ok" {
		t.Errorf("healthz after draining = %d %v", code, health)
	}
}

// A kind whose jobs have all ended reads 0 in /metrics, rather than
// vanishing from it (a graph would show no data, not a drained queue),
// and so does a worker's kind before any of its jobs has waited.
func TestDrainedQueueReadsZero(t *testing.T) {
	lag := &fakeLag{oldest: 12}
	ts := testServer(t, func(s *mhttp.Server) {
		s.Lag, s.MaxLag = lag, time.Minute
		s.LagKinds = []string{memento.JobSummarise} // a worker's kind, never read waiting here
	})
	_, metrics := fetch(t, ts.URL+"/metrics")
	for _, want := range []string{`memento_queue_oldest_waiting_seconds{kind="remember"} 12`, `memento_queue_oldest_waiting_seconds{kind="summarise"} 0`, `memento_queue_waiting_jobs{kind="summarise"} 0`} {
		if !strings.Contains(metrics, want) {
			t.Fatalf("/metrics lacks %s:\n%s", want, grepLines(metrics, "memento_queue_"))
		}
	}
	lag.mu.Lock()
	lag.idle = true
	lag.mu.Unlock()
	time.Sleep(1100 * time.Millisecond) // past the cached reading
	// Two scrapes at once share the collector's kinds.
	scrapes := make([]string, 2)
	var wg sync.WaitGroup
	for i := range scrapes {
		wg.Go(func() { _, scrapes[i] = fetch(t, ts.URL+"/metrics") })
	}
	wg.Wait()
	metrics = scrapes[0] + scrapes[1]
	for _, want := range []string{`memento_queue_oldest_waiting_seconds{kind="remember"} 0`, `memento_queue_waiting_jobs{kind="remember"} 0`, `memento_queue_running_jobs{kind="remember"} 0`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s once the queue drained:\n%s", want, grepLines(metrics, "memento_queue_"))
		}
	}
}

// The lag is read once a second however many requests come.
func TestBackpressureReadsTheLagOnceASecond(t *testing.T) {
	lag := &fakeLag{oldest: 1}
	db := enginetest.Open(t)
	ts := testServer(t, func(s *mhttp.Server) {
		s.Lag, s.MaxLag = lag, time.Minute
		s.Routes = append(s.Routes, mhttp.RegisterMemory(mhttp.MemoryRoutes{Store: db}))
	})
	appendAtOnce(t, ts.URL, 20)
	lag.mu.Lock()
	defer lag.mu.Unlock()
	if lag.reads > 2 {
		t.Errorf("20 appends within a second read the lag %d times, want at most 2", lag.reads)
	}
}

// Appends made at once each record their write's phases in /metrics, on
// either store (PostgreSQL's synced phase is 0: its commit waits for its
// log).
func TestAppendWritePhasesInMetrics(t *testing.T) {
	db := enginetest.Open(t)
	ts := testServer(t, func(s *mhttp.Server) {
		s.Routes = append(s.Routes, mhttp.RegisterMemory(mhttp.MemoryRoutes{Store: db}))
	})
	appendAtOnce(t, ts.URL, 20)
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, phase := range []string{"waited", "wrote", "synced"} {
		if want := `memento_append_write_seconds_count{phase="` + phase + `"} 20`; !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// appendAtOnce posts n different messages to one thread at once, each
// expected to be accepted.
func appendAtOnce(t *testing.T, base string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", base+"/v1/users/ann/threads/t1/messages", strings.NewReader(`{"role":"user","text":"hi `+string(rune('a'+i))+`"}`))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusAccepted {
				t.Errorf("append %d = %d", i, resp.StatusCode)
			}
		})
	}
	wg.Wait()
}

// fakeWriter reports fixed writer statistics.
type fakeWriter struct{ st memento.WriterStats }

func (f fakeWriter) WriterStats() memento.WriterStats { return f.st }

// The syncs of the store's logs are served as one histogram per log, the
// intake's only when it has synced.
func TestLogSyncsInMetrics(t *testing.T) {
	var store, intake memento.Durations
	for _, d := range []time.Duration{300 * time.Microsecond, 2 * time.Millisecond, 2 * time.Millisecond, 40 * time.Millisecond} {
		store.Add(d)
	}
	st := memento.WriterStats{LogSyncs: 4, LogSyncSeconds: 0.0443, LogSyncTimes: store.Read(), LogPages: 1234,
		ByWrite:         map[string]memento.WriteUse{"AppendMessages": {Writes: 7, Seconds: 0.021}, "ftsMerger.mergeOnce": {Writes: 2, Seconds: 0.5}},
		FavouredBatches: 9, Checkpoints: 3, CheckpointSeconds: 0.012, DatabaseWritebacks: 11, DatabaseWritebackSeconds: 0.25}
	_, metrics := fetch(t, testServer(t, func(s *mhttp.Server) { s.Writer = fakeWriter{st} }).URL+"/metrics")
	for _, want := range []string{
		`memento_log_sync_seconds_bucket{log="store",le="0.0005"} 1`,
		`memento_log_sync_seconds_bucket{log="store",le="0.0025"} 3`,
		`memento_log_sync_seconds_bucket{log="store",le="0.025"} 3`,
		`memento_log_sync_seconds_bucket{log="store",le="0.05"} 4`,
		`memento_log_sync_seconds_bucket{log="store",le="+Inf"} 4`,
		`memento_log_sync_seconds_sum{log="store"} 0.0443`,
		`memento_log_sync_seconds_count{log="store"} 4`,
		`memento_log_pages_total{log="store"} 1234`,
		`memento_writer_write_seconds_total{write="AppendMessages"} 0.021`,
		`memento_writer_writes_total{write="AppendMessages"} 7`,
		`memento_writer_write_seconds_total{write="ftsMerger.mergeOnce"} 0.5`,
		`memento_writer_writes_total{write="ftsMerger.mergeOnce"} 2`,
		`memento_writer_favoured_batches_total 9`,
		`memento_writer_checkpoints_total 3`,
		`memento_writer_checkpoint_seconds_total 0.012`,
		`memento_checkpointer_writebacks_total 11`,
		`memento_checkpointer_writeback_seconds_total 0.25`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(metrics, `{log="intake"`) {
		t.Errorf("/metrics has intake syncs for a store without an intake")
	}

	intake.Add(7 * time.Millisecond)
	st.IntakeLogSyncs, st.IntakeLogSyncSeconds, st.IntakeLogSyncTimes, st.IntakeLogPages = 1, 0.007, intake.Read(), 56
	_, metrics = fetch(t, testServer(t, func(s *mhttp.Server) { s.Writer = fakeWriter{st} }).URL+"/metrics")
	for _, want := range []string{`memento_log_sync_seconds_bucket{log="intake",le="0.005"} 0`, `memento_log_sync_seconds_bucket{log="intake",le="0.01"} 1`, `memento_log_sync_seconds_count{log="intake"} 1`,
		`memento_log_pages_total{log="intake"} 56`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	// A server without a writer to read has no such histogram.
	if _, bare := fetch(t, testServer(t).URL+"/metrics"); strings.Contains(bare, "memento_log_sync_seconds") || strings.Contains(bare, "memento_log_pages_total") || strings.Contains(bare, "memento_writer_") || strings.Contains(bare, "memento_checkpointer_") {
		t.Errorf("/metrics has log syncs or pages without a writer")
	}
}

// On a real store that measures its writer, the appends' syncs show.
func TestAppendSyncsInMetrics(t *testing.T) {
	db := enginetest.Open(t)
	w, measured := db.(memento.WriterReporter)
	if !measured {
		t.Skip("the store has no one writer to measure (PostgreSQL)")
	}
	ts := testServer(t, func(s *mhttp.Server) {
		s.Routes = append(s.Routes, mhttp.RegisterMemory(mhttp.MemoryRoutes{Store: db}))
		s.Writer = w
	})
	appendAtOnce(t, ts.URL, 20)
	_, metrics := fetch(t, ts.URL+"/metrics")
	if !strings.Contains(metrics, `memento_log_sync_seconds_count{log="store"}`) || strings.Contains(metrics, `memento_log_sync_seconds_count{log="store"} 0`) {
		t.Errorf("/metrics lacks the appends' syncs:\n%s", grepLines(metrics, "memento_log_sync"))
	}
	// However the twenty appends group into commits, each commit
	// writes a page of the messages table, of each of its indexes and of
	// its full-text index.
	var pages float64
	if _, err := fmt.Sscanf(grepLines(metrics, `memento_log_pages_total{log="store"}`), `memento_log_pages_total{log="store"} %g`, &pages); err != nil || pages < 5 {
		t.Errorf("/metrics counts %g pages for 20 appends (%v):\n%s", pages, err, grepLines(metrics, "memento_log_pages"))
	}
	t.Logf("20 appends appended %g pages to the log", pages)
	// And each of the twenty appends ran as a write of its own.
	var appends float64
	if _, err := fmt.Sscanf(grepLines(metrics, `memento_writer_writes_total{write="AppendMessages"}`), `memento_writer_writes_total{write="AppendMessages"} %g`, &appends); err != nil || appends < 20 {
		t.Errorf("/metrics counts %g appends of 20 (%v):\n%s", appends, err, grepLines(metrics, "memento_writer_"))
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
