package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/pipeline"
	"github.com/memento-ai/memento/recall"
	"github.com/memento-ai/memento/sqlite"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// tinyCatalog is a catalog of a few dozen titles, enough for searches and
// synthetic talk.
func tinyCatalog() *catalog.Index {
	genres := []string{"Drama", "Comedy", "Thriller", "Science Fiction", "Horror", "Romance"}
	var titles []memento.Title
	for i := 0; i < 60; i++ {
		titles = append(titles, memento.Title{
			ID: fmt.Sprintf("t%02d", i), Title: fmt.Sprintf("Film Number %d", i), Type: memento.TypeMovie, Year: 1960 + i,
			Genres: []string{genres[i%len(genres)], genres[(i/2)%len(genres)]}, Cast: []string{fmt.Sprintf("Actor %d", i%7)},
			Overview: "A story about love, war and a heist in space.",
		})
	}
	return catalog.New(titles)
}

// deps composes the components as the memento binary does, over a fresh
// store.
func deps(tb testing.TB) (Deps, *sqlite.DB) {
	tb.Helper()
	opts := sqlitetest.Options()
	opts.PollInterval = 5 * time.Millisecond
	db := sqlitetest.OpenWith(tb, opts)
	cat := tinyCatalog()
	emb := offline.NewEmbedder(64)
	model := offline.New(offline.Options{People: cat, Genres: cat.Genres()})
	p, err := pipeline.New(model, db, pipeline.Options{Embedder: emb})
	if err != nil {
		tb.Fatal(err)
	}
	worker := &pipeline.Worker{Pipeline: p, Ordered: db}
	var observers []func(memento.Scope, memento.Message)
	// The users' backlogs run the remember jobs in batches, as the
	// engine's do, and tell the observers of each message remembered.
	batch := func(ctx context.Context, s memento.Scope, jobs []memento.BacklogJob) []error {
		out := make([]error, len(jobs))
		for i, j := range jobs {
			var job memento.MessageJob
			if err := json.Unmarshal(j.Payload, &job); err != nil {
				out[i] = err
				continue
			}
			m, err := db.MessageByID(ctx, s, job.Message)
			if err == nil {
				_, err = p.ProcessMessage(ctx, s, *m)
			}
			if out[i] = err; err == nil {
				for _, fn := range observers {
					fn(s, *m)
				}
			}
		}
		return out
	}
	d := Deps{
		DB: db, Bulk: BulkOf(db.Bulk), Catalog: cat, Embedder: emb, Model: model,
		Assembler: recall.New(db, emb),
		Agent:     &agent.Agent{Catalog: cat, Threads: db, Model: model},
		MessageJobs: func(s memento.Scope, thread string, m memento.Message) []memento.JobRequest {
			if m.Role != memento.RoleUser {
				return nil
			}
			return []memento.JobRequest{{Kind: memento.JobRemember, ByUser: true,
				Payload: memento.MessageJob{Tenant: s.Tenant, User: s.User, Thread: thread, Message: m.ID}}}
		},
		StartWorkers: func(ctx context.Context) error {
			db.Handle(memento.JobRemember, worker.Handle, memento.JobOptions{})
			db.Handle(memento.JobSummarise, (&agent.SummaryWorker{Threads: db, Messages: db, Model: model}).Handle, memento.JobOptions{})
			db.HandleBacklog(batch, memento.BacklogOptions{})
			return db.Start(ctx)
		},
		OnRemembered: func(fn func(memento.Scope, memento.Message)) { observers = append(observers, fn) },
	}
	return d, db
}

func TestRunTiny(t *testing.T) {
	ctx := context.Background()
	d, db := deps(t)
	var progress bytes.Buffer
	cfg := Config{Users: 6, Memories: 20, MeasuredUsers: 2, MeasuredMemories: 60, Samples: 30, PipelineMessages: 40,
		DBSCANVectors: 300, QueueRate: 60, QueueSeconds: 1, Progress: &progress, End: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)}
	res, err := Run(ctx, d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Stop(context.Background()) })

	if res.Scale.Users != 8 || res.Scale.Memories != 6*20+2*60 {
		t.Errorf("scale = %+v, want 8 users and 240 memories", res.Scale)
	}
	// Two messages per memory and a chit-chat exchange for every third.
	if want := int64(2 * (6*(20+20/3) + 2*(60+60/3))); res.Scale.Messages != want {
		t.Errorf("messages = %d, want %d", res.Scale.Messages, want)
	}
	if res.Scale.Events == 0 || res.Scale.Preferences == 0 || res.Scale.Rows < res.Scale.Messages {
		t.Errorf("scale = %+v: want events, preferences and every row counted", res.Scale)
	}
	if res.ContextAssemblyCold == nil || res.ContextAssemblyCold.Samples != cfg.MeasuredUsers {
		t.Fatalf("cold context assembly = %+v, want one per measured user", res.ContextAssemblyCold)
	}
	for name, l := range map[string]Latency{"context": res.ContextAssembly, "context, cold": *res.ContextAssemblyCold, "ingest": res.IngestAck, "catalog": res.CatalogSearch} {
		if l.Samples == 0 || l.P50Ms <= 0 || l.P99Ms < l.P50Ms || l.MaxMs < l.P99Ms || len(l.Ms) != l.Samples {
			t.Errorf("%s latency = %+v", name, l)
		}
	}
	if res.ChatTurn == nil || res.ChatTurn.Samples != 30 {
		t.Errorf("chat turns = %+v, want 30", res.ChatTurn)
	}
	if res.Pipeline.Messages != 40 || res.Pipeline.MsgsPerSec <= 0 {
		t.Errorf("pipeline = %+v", res.Pipeline)
	}
	if res.Queue == nil || res.Queue.Messages != 40 || res.Queue.MsgsPerSec <= 0 {
		t.Errorf("queue = %+v", res.Queue)
	}
	// Every message's memories were seen written, after its append
	// returned (or at once), and before every job had ended.
	if r, l := res.QueueRecallable, res.QueueLag; r == nil || l == nil || l.Samples != 40 || r.Seconds <= 0 || r.Seconds > res.Queue.Seconds || l.P99Ms < l.P50Ms || l.P99Ms > 1000*r.Seconds {
		t.Errorf("queue until recallable = %+v, lag %+v; want all 40 messages seen, within the run", r, l)
	}
	if q := res.QueueAtRate; q == nil || q.Messages != 60 || q.TargetPerSec != 60 || q.Unseen != 0 || q.Lag.Samples != 60 ||
		q.IngestAck.Samples != 60 || q.AchievedPerSec <= 0 || q.AchievedPerSec > 80 || q.Seconds < 0.9 || q.DrainSeconds < 0 || q.DrainSeconds > q.Seconds {
		t.Errorf("queue at a rate = %+v; want 60 messages at about 60 a second, each acknowledged and seen remembered", q)
	}
	// SQLite measures where each acknowledgement's time went; the
	// phases fit inside the acknowledgements.
	if q := res.QueueAtRate; q != nil {
		p := q.AckPhases
		if p == nil || p.Waited.Samples != 60 || p.Wrote.Samples != 60 || p.Synced.Samples != 60 || p.Wrote.MaxMs <= 0 ||
			p.Slowest.Samples != 1 || p.Slowest.TotalMs != q.IngestAck.MaxMs ||
			p.Slowest.WaitedMs+p.Slowest.WroteMs+p.Slowest.SyncedMs > p.Slowest.TotalMs+0.01 {
			t.Errorf("acknowledgement phases = %+v; want all 60, the slowest the longest acknowledgement (%v ms) and its phases within it", p, q.IngestAck.MaxMs)
		}
		// Its wait is split by what the writer ran (the bench asks for
		// the split), within the wait.
		if p != nil {
			split := 0.0
			for _, b := range p.Slowest.Behind {
				split += b.Ms
			}
			if len(p.Slowest.Behind) == 0 || split > p.Slowest.WaitedMs+0.01 {
				t.Errorf("the slowest acknowledgement's wait %v ms split as %+v; want a split within it", p.Slowest.WaitedMs, p.Slowest.Behind)
			}
		}
		if sc := q.Scheduling; sc == nil || sc.Wakeups == 0 || sc.P99Ms < sc.P50Ms || sc.P999Ms < sc.P99Ms {
			t.Errorf("scheduling = %+v; want the scheduler's latency over the stream", sc)
		}
		// And how long the log's syncs took that the acknowledgements
		// waited for.
		if w := q.Writer; w == nil || w.LogSyncs == 0 || w.LogSync == nil || int64(w.LogSync.Samples) != w.LogSyncs ||
			w.LogSync.P50Ms <= 0 || w.LogSync.P99Ms < w.LogSync.P50Ms || w.LogSync.MaxMs < w.LogSync.P99Ms || w.LogSync.MeanMs <= 0 {
			t.Errorf("writer = %+v; want each sync of the log timed", w)
		}
		// And the pages the writes appended to the log: each of the 60
		// messages is a row of a table and of its indexes, and its
		// memories more.
		if w := q.Writer; w == nil || w.LogPages < 60 || w.LogPagesPerWrite <= 0 ||
			w.LogPagesPerMessage != round3(float64(w.LogPages)/60) {
			t.Errorf("writer = %+v; want the log's pages counted, per write and per message", w)
		}
		// And the writer's time by write: the 60 appends among them,
		// the writes most first, their shares within the writer's.
		if w := q.Writer; w != nil {
			var appends *WriteShare
			var share float64
			for i, u := range w.ByWrite {
				share += u.Share
				if u.Write == "AppendMessages" {
					appends = &w.ByWrite[i]
				}
				if i > 0 && u.seconds > w.ByWrite[i-1].seconds {
					t.Errorf("by write: %s after %s, which took less", u.Write, w.ByWrite[i-1].Write)
				}
				if u.Writes <= 0 || u.MeanMs <= 0 || u.MsPerMessage != round3(u.seconds*1000/60) {
					t.Errorf("by write: %+v", u)
				}
			}
			if appends == nil || appends.Writes < 60 {
				t.Errorf("by write = %+v; want the 60 appends", w.ByWrite)
			}
			if share > w.BusyShare+0.01 {
				t.Errorf("the writes' shares add up to %.3f of a writer busy %.3f", share, w.BusyShare)
			}
		}
	}
	if w := res.QueueWriter; w == nil || w.LogPages <= 0 || w.LogPagesPerMessage <= 0 {
		t.Errorf("queue writer = %+v; want the log's pages counted", w)
	}
	if res.DBSCAN.Vectors != 300 || res.DBSCAN.Clusters+res.DBSCAN.Noise == 0 {
		t.Errorf("dbscan = %+v", res.DBSCAN)
	}
	if res.StoreBytes <= 0 || res.Machine.CPUs <= 0 {
		t.Errorf("store %d bytes, machine %+v", res.StoreBytes, res.Machine)
	}
	if _, err := os.Stat("/proc/self/status"); err == nil && res.PeakRSSBytes <= 0 {
		t.Errorf("peak RSS = %d", res.PeakRSSBytes)
	}
	if _, ok := res.Targets["queueAtLeast1000MsgsPerS"]; len(res.Targets) != 5 || !ok {
		t.Errorf("targets = %v, want the four and the queue's (no rate targets below 500 a second)", res.Targets)
	}
	if !strings.Contains(progress.String(), "building the store") {
		t.Errorf("no progress bar: %q", progress.String())
	}

	// The store holds what was built and measured, readable as usual.
	s := memento.Scope{Tenant: memento.DefaultTenant, User: measuredUser(0)}
	mems, err := db.Memories(ctx, s, memento.MemoryFilter{All: true})
	if err != nil {
		t.Fatal(err)
	}
	current := 0
	for _, m := range mems {
		if m.Current() {
			current++
		}
	}
	if len(mems) < 60 || current == 0 || current == len(mems) {
		t.Errorf("measured user has %d memories, %d current; want at least 60 with history", len(mems), current)
	}
	// The messages the pipeline measured were processed.
	run, err := db.MemoryRun(ctx, s, "bench-in-0")
	if err != nil || run == nil {
		t.Errorf("run of the first ingested message: %+v, %v", run, err)
	}

	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"contextAssembly":{"samples":30`, `"pipeline":{"messages":40`, `"peakRssBytes":`, `"dbscan":{"vectors":300`} {
		if !bytes.Contains(b, []byte(key)) {
			t.Errorf("JSON lacks %s: %s", key, b)
		}
	}

	// The full-text indexes were merged before measuring, on SQLite.
	if m := res.FullTextMerge; m == nil || m.Merges < 0 || m.Seconds < 0 {
		t.Errorf("full-text merge = %+v; want the merge before the measurements", m)
	}

	// The writer's use during the burst is reported on SQLite.
	if w := res.QueueWriter; w == nil || w.Commits <= 0 || w.Writes < w.Commits || w.BusyShare <= 0 || w.SyncShare > w.BusyShare {
		t.Errorf("writer during the burst = %+v", w)
	}

	// Measured again (memento bench --reuse), the store gets fresh
	// messages: none is a repeat the store skips, so every one is
	// processed and seen remembered again.
	again := cfg
	again.Built, again.QueueRate = &res.Scale, -1
	if err := db.Stop(ctx); err != nil { // a new process would start its queue anew
		t.Fatal(err)
	}
	res2, err := Run(ctx, d, again)
	if err != nil {
		t.Fatal(err)
	}
	if l := res2.QueueLag; l == nil || l.Samples != 40 || res2.IngestAck.Samples != res.IngestAck.Samples {
		t.Errorf("measured again: ingest %+v, lag %+v; want every message fresh and seen remembered", res2.IngestAck, l)
	}

	files, err := Plot(t.TempDir(), res)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 5 {
		t.Errorf("charts = %v, want 4 histograms and the throughput", files)
	}
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 || filepath.Ext(f) != ".png" {
			t.Errorf("chart %s: %v", f, err)
		}
	}
}

func TestGenerateUser(t *testing.T) {
	v := NewVocab(tinyCatalog().All(), []string{"Drama", "Comedy"})
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "u"}
	end := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	a := v.GenerateUser(s, 100, 42, end)
	b := v.GenerateUser(s, 100, 42, end)
	if fmt.Sprint(a.Memories) != fmt.Sprint(b.Memories) {
		t.Fatal("the same seed should give the same user")
	}
	if len(a.Memories) != 100 || len(a.Threads) != 5 || len(a.Events) != 25 || len(a.Preferences) != 10 {
		t.Fatalf("generated %d memories, %d threads, %d events, %d preferences", len(a.Memories), len(a.Threads), len(a.Events), len(a.Preferences))
	}
	currentByAttr := map[string]int{}
	ids := map[string]bool{}
	var last time.Time
	for _, th := range a.Threads {
		for _, m := range th.Messages {
			if ids[m.ID] {
				t.Fatalf("message id %s twice", m.ID)
			}
			ids[m.ID] = true
			if m.At.Before(last) || !m.At.Before(end) {
				t.Fatalf("message %s at %s is out of order or after the end", m.ID, m.At)
			}
			last = m.At
		}
	}
	episodes := 0
	for _, m := range a.Memories {
		if !ids[m.Sources[0]] {
			t.Fatalf("memory %s comes from an unknown message %s", m.ID, m.Sources[0])
		}
		switch {
		case m.Mode == memento.ModeEpisodic:
			episodes++
		case m.ValidTo == nil:
			currentByAttr[m.Attribute]++
		case m.ValidTo.Before(m.ValidFrom):
			t.Fatalf("memory %s ends before it starts", m.ID)
		}
	}
	for attr, n := range currentByAttr {
		if n != 1 {
			t.Errorf("%s has %d current values, want 1", attr, n)
		}
	}
	if len(currentByAttr) != len(semanticAttrs) || episodes == 0 {
		t.Errorf("%d attributes with a current value, %d episodes", len(currentByAttr), episodes)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20; i++ {
		if v.Question(r) == "" || v.Request(r, i%2 == 0) == "" || v.Statement(r) == "" {
			t.Fatal("empty generated text")
		}
	}
}

func TestConfigValidate(t *testing.T) {
	if err := (Config{Users: -1}).Validate(); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("negative users: err = %v, want EINVALID", err)
	}
	if _, err := Run(context.Background(), Deps{}, Config{}); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("missing deps: err = %v, want EINVALID", err)
	}
	got := Config{}.withDefaults()
	if got.Users != DefaultUsers || got.Memories != DefaultMemories || got.MeasuredUsers != DefaultMeasuredUsers || got.MeasuredMemories != DefaultMeasuredMemories {
		t.Errorf("defaults = %+v", got)
	}
}

// TestPollAfter checks the waits between counts of unfinished jobs: 5 ms
// near the end of a measurement, longer while many jobs are left, never
// more than 50 ms, and never shorter for more jobs.
func TestPollAfter(t *testing.T) {
	for n, want := range map[int]time.Duration{1: 5 * time.Millisecond, 100: 5 * time.Millisecond,
		400: 20 * time.Millisecond, 1000: 50 * time.Millisecond, 1 << 30: 50 * time.Millisecond} {
		if got := pollAfter(n); got != want {
			t.Errorf("pollAfter(%d) = %s, want %s", n, got, want)
		}
	}
	for n := 1; n < 5000; n++ {
		if pollAfter(n) < pollAfter(n-1) {
			t.Fatalf("pollAfter(%d) = %s is shorter than pollAfter(%d) = %s", n, pollAfter(n), n-1, pollAfter(n-1))
		}
	}
}
