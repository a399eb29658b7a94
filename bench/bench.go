package bench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/eval"
	"github.com/memento-ai/memento/pipeline"
	"github.com/memento-ai/memento/prefs"
	"github.com/memento-ai/memento/profile"
	"github.com/memento-ai/memento/recall"
)

// Defaults of Config: about 1.1 million memories.
const (
	DefaultUsers            = 10000
	DefaultMemories         = 100
	DefaultMeasuredUsers    = 100
	DefaultMeasuredMemories = 1000
	DefaultSamples          = 1000
	DefaultPipelineMessages = 2000
	DefaultDBSCANVectors    = 10000
	// DefaultQueueRate and DefaultQueueSeconds are the steady stream the
	// queue is measured under: 500 messages a second for 10 seconds.
	DefaultQueueRate    = 500
	DefaultQueueSeconds = 10
	// DefaultPipelineRunsPerCPU is how many pipeline runs the direct
	// measurement keeps in flight per CPU by default. A run waits for its
	// commit most of its time; group commit writes the runs waiting
	// together in one transaction, so the batches fill only when many
	// more runs than CPUs are in flight.
	DefaultPipelineRunsPerCPU = 16
)

// Config sizes a run. Zero values take the defaults.
type Config struct {
	// Users background users hold Memories memories each; they make the
	// store big. Measured users (MeasuredUsers of MeasuredMemories each)
	// are the ones every measurement reads and writes.
	Users, Memories                 int
	MeasuredUsers, MeasuredMemories int
	// Samples is how many operations each latency measurement times
	// (chat turns take a third of it, at least 30).
	Samples int
	// PipelineMessages is how many fresh messages the throughput
	// measurements push through the pipeline.
	PipelineMessages int
	// PipelineRuns is how many messages (of as many users) the direct
	// pipeline measurement processes at once; default
	// DefaultPipelineRunsPerCPU per CPU.
	PipelineRuns int
	// DBSCANVectors is how many preference vectors are clustered.
	DBSCANVectors int
	// QueueRate is how many messages a second the steady-stream queue
	// measurement appends, one message at a time, for QueueSeconds
	// seconds; a negative rate skips it.
	QueueRate, QueueSeconds int
	// Seed makes the data and the order of operations reproducible.
	Seed uint64
	// Progress receives a progress bar while the store is built; nil
	// shows none.
	Progress io.Writer
	// End is the time the synthetic histories end at; default now.
	End time.Time
	// Built, when set, says the store was built by an earlier run of this
	// scale (memento bench --reuse): the build is skipped.
	Built *Scale
	// BuildOnly stops after building the store, measuring nothing.
	BuildOnly bool
	// QueueProfile, when set, receives a CPU profile (pprof) of the
	// queue's measurements alone, from the workers' start to the end of
	// the steady stream's drain.
	QueueProfile io.Writer
}

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Users, DefaultUsers)
	def(&c.Memories, DefaultMemories)
	def(&c.MeasuredUsers, DefaultMeasuredUsers)
	def(&c.MeasuredMemories, DefaultMeasuredMemories)
	def(&c.Samples, DefaultSamples)
	def(&c.PipelineMessages, DefaultPipelineMessages)
	def(&c.DBSCANVectors, DefaultDBSCANVectors)
	def(&c.QueueRate, DefaultQueueRate)
	def(&c.QueueSeconds, DefaultQueueSeconds)
	def(&c.PipelineRuns, DefaultPipelineRunsPerCPU*runtime.GOMAXPROCS(0))
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.End.IsZero() {
		c.End = time.Now().UTC()
	}
	return c
}

// Validate rejects sizes that cannot make a run. Errors: EINVALID.
func (c Config) Validate() error {
	switch {
	case c.Users < 0 || c.Memories < 0 || c.MeasuredUsers < 0 || c.MeasuredMemories < 0:
		return memento.Errorf(memento.EINVALID, "users and memories must not be negative")
	case c.Samples < 0 || c.PipelineMessages < 0 || c.PipelineRuns < 0 || c.DBSCANVectors < 0:
		return memento.Errorf(memento.EINVALID, "samples, pipeline messages, pipeline runs and DBSCAN vectors must not be negative")
	case c.QueueSeconds < 0:
		return memento.Errorf(memento.EINVALID, "queue seconds must not be negative")
	}
	return nil
}

// Turner answers a chat turn; *agent.Agent is one.
type Turner interface {
	Turn(ctx context.Context, tenant string, req agent.Request) (*agent.Response, error)
}

// Store is the store a run builds and measures; *sqlite.DB and
// *postgres.DB are both one (with BulkOf for Deps.Bulk).
type Store interface {
	pipeline.Store
	AppendMessages(ctx context.Context, s memento.Scope, thread string, msgs []memento.Message, jobsFor func(memento.Message) []memento.JobRequest) (*memento.AppendResult, error)
	Unfinished(ctx context.Context) (int, error)
	// Size is how many bytes the store takes on disk.
	Size(ctx context.Context) (int64, error)
}

// analyzer is a store that keeps statistics of its tables for its query
// planner, brought up to date after a bulk load (*postgres.DB).
type analyzer interface {
	Analyze(ctx context.Context) error
}

// BulkWriter writes a store's rows directly, in one transaction, for
// building a large store fast: sqlite.Bulk and postgres.Bulk are both one.
type BulkWriter interface {
	User(s memento.Scope) error
	Thread(s memento.Scope, thread string, lastSeq int64, updated time.Time) error
	Message(s memento.Scope, m memento.Message, vector []float32, embedder string) error
	Memory(s memento.Scope, m memento.Memory) error
	Run(s memento.Scope, r memento.MemoryRun) error
	Event(s memento.Scope, e memento.Event) error
	Preference(s memento.Scope, p memento.Preference) error
	Flush() error
	Rows() int
}

// BulkOf adapts a store's bulk loader (the Bulk method of *sqlite.DB or
// *postgres.DB) to Deps.Bulk.
func BulkOf[B BulkWriter](load func(ctx context.Context, fn func(b B) error) error) func(ctx context.Context, fn func(BulkWriter) error) error {
	return func(ctx context.Context, fn func(BulkWriter) error) error {
		return load(ctx, func(b B) error { return fn(b) })
	}
}

// Deps are the components a run measures, composed by the caller (the
// memento binary composes them as `memento serve` does).
type Deps struct {
	DB Store
	// Bulk loads the built store's rows (BulkOf(db.Bulk)).
	Bulk     func(ctx context.Context, fn func(BulkWriter) error) error
	Catalog  *catalog.Index
	Embedder memento.Embedder
	// Model runs the pipeline (the offline model for reproducible
	// figures).
	Model pipeline.Model
	// Pipeline is the attribute-memory pipeline measured directly; nil
	// builds one over Model, DB and Embedder with the default schema.
	Pipeline *pipeline.Pipeline
	// Assembler builds the context of a prompt.
	Assembler *recall.Assembler
	// Agent answers chat turns; nil skips the measurement.
	Agent Turner
	// MessageJobs are the jobs every stored message gets (ingest
	// acknowledgement stores them with the message, as the API does).
	MessageJobs func(s memento.Scope, thread string, m memento.Message) []memento.JobRequest
	// StartWorkers, when set, starts the background workers for the
	// end-to-end queue throughput measurement; nil skips it.
	StartWorkers func(ctx context.Context) error
	// OnRemembered, when set, registers (before StartWorkers) a function
	// the workers call with each message whose memories they wrote, at
	// that moment: the queue measurements time the lag from a message's
	// acknowledgement to its memories being recallable with it
	// (engine.Engine.OnRemembered). Nil measures no lag.
	OnRemembered func(fn func(memento.Scope, memento.Message))
	// ModelReads, when set, says how the incremental models' jobs have
	// read their users so far (engine.Engine.ModelReads): the queue
	// measurements report it as QueueModels.
	ModelReads func() (profile.FoldStats, prefs.ClusterStats)
	// CooccurrenceModel, when set, gives the co-occurrence model's
	// updates, rebuilds and checks so far (engine.Engine.CooccurrenceModel):
	// the queue measurements report them in QueueModels.
	CooccurrenceModel func() profile.ModelStats
	Tenant            string
}

// Latency summarises the timings of one operation, in milliseconds.
type Latency struct {
	Samples int     `json:"samples"`
	P50Ms   float64 `json:"p50Ms"`
	P99Ms   float64 `json:"p99Ms"`
	MeanMs  float64 `json:"meanMs"`
	MaxMs   float64 `json:"maxMs"`
	// Ms are the timings, for histograms.
	Ms []float64 `json:"-"`
}

// Throughput is how fast messages went through.
type Throughput struct {
	Messages int `json:"messages"`
	// Concurrency is how many messages were processed at once, where the
	// measurement chooses it.
	Concurrency int     `json:"concurrency,omitempty"`
	Seconds     float64 `json:"seconds"`
	MsgsPerSec  float64 `json:"msgsPerSec"`
}

// RateResult is the queue under a steady stream of messages: one message
// appended at a time, each when its turn comes at the target rate (by
// several clients, so a slow append delays no other), while the workers
// drain the queue.
type RateResult struct {
	// TargetPerSec is the rate asked for; AchievedPerSec the messages
	// over the time from the first append to the last acknowledgement.
	TargetPerSec   float64 `json:"targetPerSec"`
	AchievedPerSec float64 `json:"achievedPerSec"`
	Messages       int     `json:"messages"`
	// Seconds is from the first append until every job ended, and
	// DrainSeconds the part of it after the last acknowledgement.
	Seconds      float64 `json:"seconds"`
	DrainSeconds float64 `json:"drainSeconds"`
	// IngestAck times each append's acknowledgement while the queue
	// drains; Lag the time from each acknowledgement to the message's
	// memories being recallable.
	IngestAck Latency `json:"ingestAck"`
	Lag       Latency `json:"lag"`
	// Unseen counts messages whose memories no worker reported written
	// (a run that failed and was retried on its own): they are not in
	// Lag.
	Unseen int `json:"unseen,omitempty"`
	// Writer is what the store's one writer did from the first append
	// until every job ended (SQLite).
	Writer *WriterUse `json:"writer,omitempty"`
	// AckPhases is where the acknowledgements' time went, as the store
	// measures it (AckPhases); Scheduling the Go scheduler's latency
	// from the first append until every job ended.
	AckPhases  *AckPhases  `json:"ackPhases,omitempty"`
	Scheduling *Scheduling `json:"scheduling,omitempty"`
}

// Scale says what the store held.
type Scale struct {
	Users              int     `json:"users"`
	BackgroundUsers    int     `json:"backgroundUsers"`
	BackgroundMemories int     `json:"backgroundMemories"`
	MeasuredUsers      int     `json:"measuredUsers"`
	MeasuredMemories   int     `json:"measuredMemories"`
	Memories           int64   `json:"memories"`
	Messages           int64   `json:"messages"`
	Events             int64   `json:"events"`
	Preferences        int64   `json:"preferences"`
	Rows               int64   `json:"rows"`
	BuildSeconds       float64 `json:"buildSeconds"`
}

// DBSCANResult is the clustering measurement.
type DBSCANResult struct {
	Vectors  int     `json:"vectors"`
	Ms       float64 `json:"ms"`
	Clusters int     `json:"clusters"`
	Noise    int     `json:"noise"`
}

// Machine says where the figures were taken.
type Machine struct {
	CPUs          int     `json:"cpus"`
	GoVersion     string  `json:"goVersion"`
	OS            string  `json:"os"`
	Arch          string  `json:"arch"`
	MemTotalBytes int64   `json:"memTotalBytes,omitempty"`
	Load1         float64 `json:"load1"`
	// GoMaxProcs is how many processors Go ran on at the end: more than
	// CPUs when the background computed at a lower priority
	// (--background-nice, engine.Config.BackgroundNice).
	GoMaxProcs int `json:"gomaxprocs"`
}

// QueueModels is what the incremental models' jobs read during the queue
// measurements.
type QueueModels struct {
	Profile  profile.FoldStats  `json:"profile"`
	Clusters prefs.ClusterStats `json:"clusters"`
	// Cooccurrence is the tenant's co-occurrence model: its incremental
	// updates, its rebuilds from every event (one when the workers start,
	// then one every 500 updates or 10 minutes), the rebuilds that
	// checked the incremental model, the users set again for them, and
	// the mismatches found.
	Cooccurrence *profile.ModelStats `json:"cooccurrence,omitempty"`
}

// Result is the outcome of `memento bench`.
type Result struct {
	Scale           Scale   `json:"scale"`
	ContextAssembly Latency `json:"contextAssembly"`
	// ContextAssemblyCold times the first assembly of each measured user,
	// which reads the user's documents into the recall index.
	ContextAssemblyCold *Latency   `json:"contextAssemblyCold,omitempty"`
	ChatTurn            *Latency   `json:"chatTurn,omitempty"`
	IngestAck           Latency    `json:"ingestAck"`
	Pipeline            Throughput `json:"pipeline"`
	// Queue is the message log and queue end to end: messages appended
	// in batches of one user as fast as the store takes them, until
	// every job they caused has ended, those derived from them included
	// (a user's profile, the tenant's co-occurrence model, preference
	// clusters).
	Queue *Throughput `json:"queue,omitempty"`
	// QueueRecallable is the same run until the memories of every one of
	// its messages were written (recallable), and QueueLag the time from
	// each message's acknowledgement to that moment.
	QueueRecallable *Throughput `json:"queueRecallable,omitempty"`
	QueueLag        *Latency    `json:"queueLag,omitempty"`
	// QueueAtRate is the message log and queue under a steady stream of
	// single messages (Config.QueueRate a second).
	QueueAtRate *RateResult `json:"queueAtRate,omitempty"`
	// QueueWriter is what the store's one writer did during the burst of
	// Queue, on a store that has one (SQLite).
	QueueWriter *WriterUse `json:"queueWriter,omitempty"`
	// QueueModels is how the incremental models' jobs read their users
	// over both queue measurements: profile recomputes that folded the
	// new events or read all of a user's, clusterings that read the
	// changed preferences or all of them, and mismatches their checks
	// found (engine.Engine.ModelReads; the workers start with them).
	QueueModels   *QueueModels `json:"queueModels,omitempty"`
	DBSCAN        DBSCANResult `json:"dbscan"`
	CatalogSearch Latency      `json:"catalogSearch"`
	StoreBytes    int64        `json:"storeBytes"`
	// FullTextMerge is the merge of the store's full-text indexes that
	// settled what the load left before measuring (SQLite).
	FullTextMerge *FullTextMerge `json:"fullTextMerge,omitempty"`
	// PeakRSSBytes is the process's peak resident memory while measuring
	// (VmHWM, reset after the build); BuildPeakRSSBytes the peak while
	// building the store.
	PeakRSSBytes      int64   `json:"peakRssBytes"`
	BuildPeakRSSBytes int64   `json:"buildPeakRssBytes"`
	Machine           Machine `json:"machine"`
	// Targets says which of the documented targets the run met, and
	// TargetNotes, for a missed one, what on the machine measured comes
	// before it where the run's figures show it (targetNotes).
	Targets     map[string]bool   `json:"targets"`
	TargetNotes map[string]string `json:"targetNotes,omitempty"`
}

// Run builds the synthetic store and takes every measurement, in an order
// that keeps them apart: reads first (catalog search, DBSCAN, context
// assembly), then writes (chat turns, ingest acknowledgements), then the
// pipeline on the messages just ingested, then the queue end to end.
func Run(ctx context.Context, d Deps, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if d.DB == nil || d.Bulk == nil || d.Catalog == nil || d.Embedder == nil || d.Model == nil || d.Assembler == nil {
		return nil, memento.Errorf(memento.EINVALID, "bench needs a store with its bulk loader, a catalog, an embedder, a model and an assembler")
	}
	if d.Tenant == "" {
		d.Tenant = memento.DefaultTenant
	}
	vocab := NewVocab(d.Catalog.All(), d.Catalog.Genres())
	res := &Result{}
	scale, err := cfg.Built, error(nil)
	if scale == nil {
		if scale, err = build(ctx, d, cfg, vocab); err != nil {
			return nil, err
		}
	}
	res.Scale = *scale
	// A bulk load leaves the planner's statistics as they were before
	// it, and PostgreSQL's autovacuum (off on some servers) analyses the
	// tables only later: until then a user's memory is found through an
	// index of every current memory of the user, hundreds of rows read
	// for one. A store that has served a while is analysed; so is this
	// one, before anything is measured.
	if a, ok := d.DB.(analyzer); ok && cfg.Built == nil {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "updating the planner's statistics\n")
		}
		if err := a.Analyze(ctx); err != nil {
			return nil, err
		}
	}
	// The bulk load leaves the store's full-text indexes in many
	// segments, whose merges the store's merger would otherwise run
	// during the first measurements (about 2.4 s of the writer at 1.1 M
	// memories). A store that has served a while has merged them in its
	// quiet spells; so is this one, before anything is measured (and
	// before --build-only saves it).
	if m, ok := d.DB.(fullTextMerger); ok {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "merging the full-text indexes\n")
		}
		start := time.Now()
		n, err := m.MergeFullText(ctx)
		if err != nil {
			return nil, err
		}
		// The load wrote the indexes in a few huge transactions, whose
		// segments sit far below the levels their size warrants; the
		// service's writes would soon fill those levels and the merger
		// rewrite the whole index (sqlite/ftslevel.go).
		rewrites, err := m.LevelFullText(ctx)
		if err != nil {
			return nil, err
		}
		res.FullTextMerge = &FullTextMerge{Merges: n, Rewrites: rewrites, Seconds: round3(time.Since(start).Seconds())}
	}
	// A store measured again (--reuse) must get fresh messages: the ids
	// and threads of the measured appends carry a tag of the run, so that
	// none is a repeat the store would skip.
	tag := ""
	if cfg.Built != nil {
		tag = "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	if cfg.BuildOnly {
		res.StoreBytes, err = d.DB.Size(ctx)
		return res, err
	}
	// The build's own peak (bulk transactions, generation buffers) is
	// kept apart from the peak while serving the measured operations.
	res.BuildPeakRSSBytes = peakRSS()
	resetPeakRSS()
	logf := func(format string, args ...any) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, format+"\n", args...)
		}
	}
	measured := make([]memento.Scope, cfg.MeasuredUsers)
	for i := range measured {
		measured[i] = memento.Scope{Tenant: d.Tenant, User: measuredUser(i)}
	}
	if len(measured) == 0 {
		measured = []memento.Scope{{Tenant: d.Tenant, User: "bench-solo"}}
	}
	r := rand.New(rand.NewPCG(cfg.Seed, 7))

	logf("measuring catalog search, DBSCAN and context assembly")
	if res.CatalogSearch, err = measureCatalog(ctx, d.Catalog, vocab, r, cfg.Samples*5); err != nil {
		return nil, err
	}
	if res.DBSCAN, err = measureDBSCAN(ctx, d.Embedder, vocab, r, cfg.DBSCANVectors); err != nil {
		return nil, err
	}
	var cold Latency
	if res.ContextAssembly, cold, err = measureContext(ctx, d.Assembler, vocab, r, measured, cfg.Samples); err != nil {
		return nil, err
	}
	res.ContextAssemblyCold = &cold
	if d.Agent != nil {
		logf("measuring chat turns")
		turns, err := measureTurns(ctx, d, vocab, r, measured, max(30, cfg.Samples/3))
		if err != nil {
			return nil, err
		}
		res.ChatTurn = &turns
	}
	logf("measuring message ingest and the pipeline")
	var fresh []stored
	if res.IngestAck, fresh, err = measureIngest(ctx, d, vocab, r, tag, measured, max(cfg.Samples, cfg.PipelineMessages)); err != nil {
		return nil, err
	}
	if res.Pipeline, err = measurePipeline(ctx, d, fresh[:min(len(fresh), cfg.PipelineMessages)], cfg.PipelineRuns); err != nil {
		return nil, err
	}
	if d.StartWorkers != nil {
		logf("measuring the message log and queue end to end")
		obs := newLagObserver()
		if d.OnRemembered != nil {
			d.OnRemembered(obs.remembered)
		}
		if cfg.QueueProfile != nil {
			if err := pprof.StartCPUProfile(cfg.QueueProfile); err != nil {
				return nil, fmt.Errorf("profile the queue: %w", err)
			}
			defer pprof.StopCPUProfile()
		}
		q, err := measureQueue(ctx, d, vocab, r, tag, measured, cfg.PipelineMessages, obs)
		if err != nil {
			return nil, err
		}
		res.Queue, res.QueueWriter = &q.all, q.writer
		if d.OnRemembered != nil {
			res.QueueRecallable, res.QueueLag = &q.recallable, &q.lag
		}
		if cfg.QueueRate > 0 && cfg.QueueSeconds > 0 {
			logf("measuring the queue under %d messages a second for %d s", cfg.QueueRate, cfg.QueueSeconds)
			rate, err := measureRate(ctx, d, vocab, r, tag, measured, cfg.QueueRate, cfg.QueueSeconds, obs)
			if err != nil {
				return nil, err
			}
			if d.OnRemembered == nil {
				rate.Lag = Latency{}
			}
			res.QueueAtRate = rate
		}
		if cfg.QueueProfile != nil {
			pprof.StopCPUProfile()
		}
		if d.ModelReads != nil {
			folds, clusters := d.ModelReads()
			res.QueueModels = &QueueModels{Profile: folds, Clusters: clusters}
			if d.CooccurrenceModel != nil {
				st := d.CooccurrenceModel()
				res.QueueModels.Cooccurrence = &st
			}
		}
	}
	if res.StoreBytes, err = d.DB.Size(ctx); err != nil {
		return nil, err
	}
	res.PeakRSSBytes = peakRSS()
	res.Machine = machine()
	res.Targets = map[string]bool{
		"contextAssemblyP99Under5ms":  res.ContextAssembly.P99Ms < 5,
		"ingestAckP99Under5ms":        res.IngestAck.P99Ms < 5,
		"pipelineAtLeast1000MsgsPerS": res.Pipeline.MsgsPerSec >= 1000,
		"catalogSearchP99Under2ms":    res.CatalogSearch.P99Ms < 2,
	}
	if res.Queue != nil {
		res.Targets["queueAtLeast1000MsgsPerS"] = res.Queue.MsgsPerSec >= 1000
	}
	if q := res.QueueAtRate; q != nil && q.TargetPerSec >= 500 {
		res.Targets["ingestAckP99Under5msWhileDraining"] = q.IngestAck.P99Ms < 5
		if d.OnRemembered != nil {
			res.Targets["lagP99Under2sAt500MsgsPerS"] = q.Lag.Samples > 0 && q.Lag.P99Ms < 2000 && q.Unseen == 0
		}
	}
	res.TargetNotes = targetNotes(res)
	return res, nil
}

// warmup is how many untimed operations come before n timed ones, so
// first-use costs (caches, lazily built indexes) stay out of the figures.
func warmup(n int) int { return min(20, n/10) }

func measuredUser(i int) string   { return fmt.Sprintf("bench-m-%03d", i) }
func backgroundUser(i int) string { return fmt.Sprintf("bench-b-%06d", i) }

// summarise turns timings into a Latency.
func summarise(ms []float64) Latency {
	l := Latency{Samples: len(ms), Ms: ms}
	if len(ms) == 0 {
		return l
	}
	sum := 0.0
	for _, x := range ms {
		sum += x
		l.MaxMs = max(l.MaxMs, x)
	}
	l.P50Ms = round3(eval.Percentile(ms, 50))
	l.P99Ms = round3(eval.Percentile(ms, 99))
	l.MeanMs = round3(sum / float64(len(ms)))
	l.MaxMs = round3(l.MaxMs)
	return l
}

func round3(x float64) float64 { return float64(int64(x*1000+0.5)) / 1000 }

func millis(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// peakRSS reads the process's peak resident set size (VmHWM) from
// /proc/self/status; 0 where there is no /proc.
func peakRSS() int64 { return procKB("/proc/self/status", "VmHWM:") }

// resetPeakRSS resets the kernel's peak resident set size of the process
// to its current size (Linux 4.0 and later); elsewhere it does nothing.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// procKB reads a "Name:   123 kB" line of a /proc file, in bytes.
func procKB(file, key string) int64 {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n * 1024
			}
		}
	}
	return 0
}

// machine describes the host.
func machine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
		MemTotalBytes: procKB("/proc/meminfo", "MemTotal:"), GoMaxProcs: runtime.GOMAXPROCS(0)}
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(data)); len(f) > 0 {
			m.Load1, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	return m
}

// measureDBSCAN clusters embeddings of generated preference concepts,
// about a tenth of them drawn from a few hundred recurring concepts the
// way one heavy user's memories recur, with the default parameters.
func measureDBSCAN(ctx context.Context, e memento.Embedder, v *Vocab, r *rand.Rand, n int) (DBSCANResult, error) {
	if n == 0 {
		return DBSCANResult{}, nil
	}
	texts := make([]string, n)
	for i := range texts {
		c, _ := v.concept(r)
		texts[i] = c
	}
	vecs, err := embedAll(ctx, e, texts)
	if err != nil {
		return DBSCANResult{}, err
	}
	start := time.Now()
	labels := prefs.DBSCAN(vecs, prefs.DefaultEps, prefs.DefaultMinPts)
	took := time.Since(start)
	res := DBSCANResult{Vectors: n, Ms: round3(millis(took))}
	seen := map[int]bool{}
	for _, l := range labels {
		if l < 0 {
			res.Noise++
		} else {
			seen[l] = true
		}
	}
	res.Clusters = len(seen)
	return res, nil
}

// embedAll embeds texts in batches of 256.
func embedAll(ctx context.Context, e memento.Embedder, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for i := 0; i < len(texts); i += 256 {
		vs, err := e.Embed(ctx, texts[i:min(i+256, len(texts))])
		if err != nil {
			return nil, fmt.Errorf("embed: %w", err)
		}
		out = append(out, vs...)
	}
	return out, nil
}

// measureCatalog times searches shaped like the agent's: genres with a
// year window, people, free text, each with exclusions, first page.
func measureCatalog(ctx context.Context, cat *catalog.Index, v *Vocab, r *rand.Rand, n int) (Latency, error) {
	ms := make([]float64, 0, n)
	for i := -warmup(n); i < n; i++ {
		q := memento.TitleQuery{Page: 1, Size: 10, Exclude: []string{pick(r, v.TitleIDs), pick(r, v.TitleIDs)}}
		switch (i + 4) % 4 {
		case 0:
			q.Genres = []string{pick(r, v.Genres)}
			lo := 1950 + r.IntN(60)
			q.MinYear, q.MaxYear = lo, lo+10
		case 1:
			q.People = []string{pick(r, v.People)}
		case 2:
			q.Text = strings.ToLower(pick(r, []string{"heist", "space", "war", "love", "detective", "robot", "small town", "revenge", "haunted house", "road trip"}))
		default:
			q.Genres = []string{pick(r, v.Genres), pick(r, v.Genres)}
			q.Type = memento.TypeMovie
			q.Text = pick(r, v.Moods)
		}
		start := time.Now()
		if _, err := cat.Search(ctx, q); err != nil {
			return Latency{}, fmt.Errorf("catalog search: %w", err)
		}
		if i >= 0 {
			ms = append(ms, millis(time.Since(start)))
		}
	}
	return summarise(ms), nil
}

// measureContext times context assembly for measured users: a query in
// one of the user's threads, k = 10. The first assembly of each user,
// which reads the user into the recall index, is timed apart (cold); the
// timed ones (warm) follow, as in a server whose users come back.
func measureContext(ctx context.Context, a *recall.Assembler, v *Vocab, r *rand.Rand, users []memento.Scope, n int) (warm, cold Latency, err error) {
	coldMs := make([]float64, 0, len(users))
	for _, s := range users {
		start := time.Now()
		if _, err := a.Assemble(ctx, memento.RecallQuery{Scope: s, Thread: "t001", Query: v.Question(r), K: 10}); err != nil {
			return warm, cold, fmt.Errorf("context assembly: %w", err)
		}
		coldMs = append(coldMs, millis(time.Since(start)))
	}
	cold = summarise(coldMs)
	ms := make([]float64, 0, n)
	for i := -warmup(n); i < n; i++ {
		s := users[r.IntN(len(users))]
		q := memento.RecallQuery{Scope: s, Thread: "t001", Query: v.Question(r), K: 10}
		start := time.Now()
		if _, err := a.Assemble(ctx, q); err != nil {
			return warm, cold, fmt.Errorf("context assembly: %w", err)
		}
		if i >= 0 {
			ms = append(ms, millis(time.Since(start)))
		}
	}
	return summarise(ms), cold, nil
}

// measureTurns times agent turns of measured users in new threads, three
// turns per thread (a request and two follow-ups).
func measureTurns(ctx context.Context, d Deps, v *Vocab, r *rand.Rand, users []memento.Scope, n int) (Latency, error) {
	ms := make([]float64, 0, n)
	w := 3 * max(1, warmup(n)/3)
	for i := -w; i < n; i++ {
		s := users[((i+w)/3)%len(users)]
		req := agent.Request{User: s.User, Thread: fmt.Sprintf("bench-chat-%d", (i+w)/3), Message: v.Request(r, (i+w)%3 != 0)}
		start := time.Now()
		if _, err := d.Agent.Turn(ctx, d.Tenant, req); err != nil {
			return Latency{}, fmt.Errorf("chat turn %q: %w", req.Message, err)
		}
		if i >= 0 {
			ms = append(ms, millis(time.Since(start)))
		}
	}
	return summarise(ms), nil
}

// stored is a message acknowledged by the store.
type stored struct {
	scope memento.Scope
	id    string
}

// measureIngest times the acknowledgement of single user messages posted
// to the message log: the append and its jobs, durable, in one
// transaction. It returns the stored messages for the pipeline.
func measureIngest(ctx context.Context, d Deps, v *Vocab, r *rand.Rand, tag string, users []memento.Scope, n int) (Latency, []stored, error) {
	ms := make([]float64, 0, n)
	out := make([]stored, 0, n)
	for i := 0; i < n; i++ {
		s := users[i%len(users)]
		thread := fmt.Sprintf("bench-ingest%s-%d", tag, i/len(users)/20)
		msg := memento.Message{ID: fmt.Sprintf("bench-in%s-%d", tag, i), Role: memento.RoleUser, Text: v.Statement(r)}
		var jobs func(memento.Message) []memento.JobRequest
		if d.MessageJobs != nil {
			jobs = func(m memento.Message) []memento.JobRequest { return d.MessageJobs(s, thread, m) }
		}
		start := time.Now()
		if _, err := d.DB.AppendMessages(ctx, s, thread, []memento.Message{msg}, jobs); err != nil {
			return Latency{}, nil, fmt.Errorf("ingest: %w", err)
		}
		ms = append(ms, millis(time.Since(start)))
		out = append(out, stored{s, msg.ID})
	}
	return summarise(ms), out, nil
}

// measurePipeline runs the attribute-memory pipeline directly over the
// given stored messages, runs goroutines at once, each taking whole users
// (the pipeline orders a user's messages), and reports messages per
// second.
func measurePipeline(ctx context.Context, d Deps, msgs []stored, runs int) (Throughput, error) {
	if len(msgs) == 0 {
		return Throughput{}, nil
	}
	p := d.Pipeline
	if p == nil {
		var err error
		if p, err = pipeline.New(d.Model, d.DB, pipeline.Options{Embedder: d.Embedder}); err != nil {
			return Throughput{}, err
		}
	}
	byUser := map[memento.Scope][]string{}
	var order []memento.Scope
	for _, m := range msgs {
		if _, ok := byUser[m.scope]; !ok {
			order = append(order, m.scope)
		}
		byUser[m.scope] = append(byUser[m.scope], m.id)
	}
	sort.Slice(order, func(i, j int) bool { return order[i].User < order[j].User })
	workers := max(1, min(runs, len(order)))
	work := make(chan memento.Scope)
	errs := make(chan error, workers)
	start := time.Now()
	for w := 0; w < workers; w++ {
		go func() {
			for s := range work {
				for _, id := range byUser[s] {
					if _, err := p.Process(ctx, s, id); err != nil {
						errs <- fmt.Errorf("pipeline %s: %w", id, err)
						for range work {
						}
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for _, s := range order {
		work <- s
	}
	close(work)
	var first error
	for w := 0; w < workers; w++ {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return Throughput{}, first
	}
	secs := time.Since(start).Seconds()
	return Throughput{Messages: len(msgs), Concurrency: workers, Seconds: round3(secs), MsgsPerSec: round3(float64(len(msgs)) / secs)}, nil
}

// queueRun is what measureQueue measured.
type queueRun struct {
	all, recallable Throughput
	lag             Latency
	writer          *WriterUse
}

// WriterUse is what a store's one writer did during a measurement: its
// share of the wall time spent on batches and, of that, on commits
// waiting for the disk, its commits and the writes they held, and the
// commits of background jobs' writes alone, which do not wait for the disk,
// and the syncs of the log that made the others durable off the writer
// (SQLite), with their share of the wall time.
type WriterUse struct {
	BusyShare       float64 `json:"busyShare"`
	SyncShare       float64 `json:"syncShare"`
	Commits         int64   `json:"commits"`
	Writes          int64   `json:"writes"`
	WritesPerCommit float64 `json:"writesPerCommit"`
	UnsyncedCommits int64   `json:"unsyncedCommits"`
	LogSyncs        int64   `json:"logSyncs"`
	LogSyncShare    float64 `json:"logSyncShare"`
	// Checkpoints are those the writer ran itself, and CheckpointShare
	// the share of the wall time they held it.
	Checkpoints     int64   `json:"checkpoints"`
	CheckpointShare float64 `json:"checkpointShare"`
	// DatabaseWritebacks are the times the background checkpointer
	// started writing the pages it had copied to the disk, off the
	// writer (memento.WriterStats.DatabaseWritebacks), and
	// DatabaseWritebackShare the share of the wall time those calls took.
	DatabaseWritebacks     int64   `json:"databaseWritebacks"`
	DatabaseWritebackShare float64 `json:"databaseWritebackShare"`
	// LogSync is how long each of those syncs took, and IntakeLogSync
	// each sync of the intake's log when the store has one (then the
	// acknowledgements wait for those). A sync flushes the disk's write
	// cache; an acknowledgement that waits for the disk waits for one
	// sync at least, so these are the floor under the acknowledgements'
	// percentiles on the machine measured. The percentiles are bucket
	// bounds, at most an eighth above the true ones (memento.Durations).
	LogSync       *Latency `json:"logSync,omitempty"`
	IntakeLogSync *Latency `json:"intakeLogSync,omitempty"`
	// LogPages are the pages the group commits appended to the log
	// (memento.WriterStats.LogPages), per write and, for a span that
	// stored a known number of messages, per message: everything the
	// writer wrote meanwhile (the messages, their jobs' memories,
	// preferences and events, the full-text merges) over the messages.
	// Unlike the shares above they do not depend on how fast the disk
	// is, only on what was written and how it grouped: the background's
	// batches, and so its pages per message, still vary with the
	// timing, by a few pages a message between rounds of one tree (the
	// pages of one append alone: BenchmarkAppendMessage's pages/op in
	// package sqlite). IntakeLogPages are the intake's log's, when the
	// store has one.
	LogPages           int64   `json:"logPages"`
	LogPagesPerWrite   float64 `json:"logPagesPerWrite"`
	LogPagesPerMessage float64 `json:"logPagesPerMessage,omitempty"`
	IntakeLogPages     int64   `json:"intakeLogPages,omitempty"`
	// ByWrite is the writer's time by the write that held it
	// (memento.WriterStats.ByWrite), most first: which of the writes a
	// saturated writer spends itself on.
	ByWrite []WriteShare `json:"byWrite,omitempty"`
	// FavouredBatches are the group commits that took the background
	// writes first because the requests' writes had left them less than
	// their share of the writer (memento.WriterStats.FavouredBatches).
	FavouredBatches int64 `json:"favouredBatches"`
}

// WriteShare is one kind of write's part of the writer's time over a
// measurement: how many ran, their share of the wall time, how long one
// took on average and, for a span that stored a known number of
// messages, the writer's milliseconds of this write per message.
type WriteShare struct {
	Write        string  `json:"write"`
	Writes       int64   `json:"writes"`
	Share        float64 `json:"share"`
	MeanMs       float64 `json:"meanMs"`
	MsPerMessage float64 `json:"msPerMessage,omitempty"`
	seconds      float64
}

// writeShares lists uses over secs of wall time, most first.
func writeShares(uses map[string]memento.WriteUse, secs float64) []WriteShare {
	out := make([]WriteShare, 0, len(uses))
	for name, u := range uses {
		out = append(out, WriteShare{Write: name, Writes: u.Writes, Share: round3(u.Seconds / secs),
			MeanMs: round3(u.Seconds * 1000 / float64(u.Writes)), seconds: u.Seconds})
	}
	slices.SortFunc(out, func(a, b WriteShare) int {
		return cmp.Or(cmp.Compare(b.seconds, a.seconds), strings.Compare(a.Write, b.Write))
	})
	return out
}

// perMessage sets u's pages per message for a span that stored n
// messages.
func (u *WriterUse) perMessage(n int) *WriterUse {
	if u != nil && n > 0 {
		u.LogPagesPerMessage = round3(float64(u.LogPages+u.IntakeLogPages) / float64(n))
		for i := range u.ByWrite {
			u.ByWrite[i].MsPerMessage = round3(u.ByWrite[i].seconds * 1000 / float64(n))
		}
	}
	return u
}

// syncLatency summarises counted sync durations that took secs in all.
func syncLatency(c memento.DurationCounts, secs float64) *Latency {
	n := c.Total()
	if n == 0 {
		return nil
	}
	return &Latency{Samples: int(n), P50Ms: round3(millis(c.Quantile(0.5))), P99Ms: round3(millis(c.Quantile(0.99))),
		MeanMs: round3(secs * 1000 / float64(n)), MaxMs: round3(millis(c.Quantile(1)))}
}

// fullTextMerger is a store whose full-text indexes merge in the
// background (SQLite's), which can merge them at once.
type fullTextMerger interface {
	MergeFullText(ctx context.Context) (int, error)
	LevelFullText(ctx context.Context) (int, error)
}

// FullTextMerge is the merge of the store's full-text indexes before the
// measurements: the bounded merges that did work, the rewrites of a whole
// index that raised the load's segments to the level their size warrants
// (sqlite.DB.LevelFullText), and how long it all took.
type FullTextMerge struct {
	Merges   int     `json:"merges"`
	Rewrites int     `json:"rewrites"`
	Seconds  float64 `json:"seconds"`
}

// writerStats is a store with one writer.
type writerStats interface {
	WriterStats() memento.WriterStats
}

// writerUse returns what the writer of db did since before, over secs of
// wall time; nil for a store without one writer.
func writerUse(db any, before memento.WriterStats, secs float64) *WriterUse {
	w, ok := db.(writerStats)
	if !ok || secs <= 0 {
		return nil
	}
	d := w.WriterStats().Sub(before)
	u := &WriterUse{BusyShare: round3(d.BusySeconds / secs), SyncShare: round3(d.SyncSeconds / secs), Commits: d.Commits, Writes: d.Writes, UnsyncedCommits: d.UnsyncedCommits,
		LogSyncs: d.LogSyncs, LogSyncShare: round3(d.LogSyncSeconds / secs), Checkpoints: d.Checkpoints, CheckpointShare: round3(d.CheckpointSeconds / secs),
		DatabaseWritebacks: d.DatabaseWritebacks, DatabaseWritebackShare: round3(d.DatabaseWritebackSeconds / secs)}
	u.LogSync = syncLatency(d.LogSyncTimes, d.LogSyncSeconds)
	u.IntakeLogSync = syncLatency(d.IntakeLogSyncTimes, d.IntakeLogSyncSeconds)
	if d.Commits > 0 {
		u.WritesPerCommit = round3(float64(d.Writes) / float64(d.Commits))
	}
	u.LogPages, u.IntakeLogPages = d.LogPages, d.IntakeLogPages
	u.ByWrite = writeShares(d.ByWrite, secs)
	u.FavouredBatches = d.FavouredBatches
	if d.Writes > 0 {
		u.LogPagesPerWrite = round3(float64(d.LogPages) / float64(d.Writes))
	}
	return u
}

// readWriter reads the writer's counters of db, if it has one writer.
func readWriter(db any) memento.WriterStats {
	if w, ok := db.(writerStats); ok {
		return w.WriterStats()
	}
	return memento.WriterStats{}
}

// measureQueue starts the workers, lets them finish every pending job
// (those of the turns and messages before), then appends n fresh messages
// of measured users with their jobs in batches of 50 and measures until
// every job has ended: the message log's end-to-end throughput. With obs
// told of the memories written, it also measures until the memories of
// every message were written, and each message's lag.
func measureQueue(ctx context.Context, d Deps, v *Vocab, r *rand.Rand, tag string, users []memento.Scope, n int, obs *lagObserver) (queueRun, error) {
	if err := d.StartWorkers(ctx); err != nil {
		return queueRun{}, err
	}
	if err := waitForJobs(ctx, d.DB, 30*time.Minute); err != nil {
		return queueRun{}, err
	}
	ids := make([]string, 0, n)
	wstart := readWriter(d.DB)
	start := time.Now()
	for i := 0; i < n; i += 50 {
		s := users[(i/50)%len(users)]
		thread := fmt.Sprintf("bench-queue%s-%d", tag, i/50)
		var batch []memento.Message
		for j := i; j < min(i+50, n); j++ {
			batch = append(batch, memento.Message{ID: fmt.Sprintf("bench-q%s-%d", tag, j), Role: memento.RoleUser, Text: v.Statement(r)})
		}
		var jobs func(memento.Message) []memento.JobRequest
		if d.MessageJobs != nil {
			jobs = func(m memento.Message) []memento.JobRequest { return d.MessageJobs(s, thread, m) }
		}
		if _, err := d.DB.AppendMessages(ctx, s, thread, batch, jobs); err != nil {
			return queueRun{}, fmt.Errorf("queue ingest: %w", err)
		}
		at := time.Now()
		for _, m := range batch {
			obs.acked(m.ID, at)
			ids = append(ids, m.ID)
		}
	}
	if err := waitForJobs(ctx, d.DB, 30*time.Minute); err != nil {
		return queueRun{}, err
	}
	secs := time.Since(start).Seconds()
	out := queueRun{all: Throughput{Messages: n, Seconds: round3(secs), MsgsPerSec: round3(float64(n) / secs)}, writer: writerUse(d.DB, wstart, secs).perMessage(n)}
	lags, last, _ := obs.lags(ids)
	out.lag = summarise(lags)
	if !last.IsZero() {
		rs := last.Sub(start).Seconds()
		out.recallable = Throughput{Messages: n, Seconds: round3(rs), MsgsPerSec: round3(float64(n) / rs)}
	}
	return out, nil
}

// rateClients is how many clients append at once in measureRate, so that
// one slow acknowledgement does not hold back the messages due after it.
const rateClients = 32

// measureRate appends seconds×rate single messages of the measured
// users, each in its user's thread, each when it is due at the rate,
// while the workers run, and measures the acknowledgements, the lag from
// each acknowledgement to the message's memories being recallable, and
// the time until every job ended.
func measureRate(ctx context.Context, d Deps, v *Vocab, r *rand.Rand, tag string, users []memento.Scope, rate, seconds int, obs *lagObserver) (*RateResult, error) {
	n := rate * seconds
	texts := make([]string, n)
	for i := range texts {
		texts[i] = v.Statement(r)
	}
	ids := make([]string, n)
	ackMs := make([]float64, n)
	times := make([]memento.WriteTimes, n)
	var next atomic.Int64
	var lastAck atomic.Int64
	errs := make(chan error, rateClients)
	wstart, sched := readWriter(d.DB), readSched()
	start := time.Now().Add(10 * time.Millisecond)
	var wg sync.WaitGroup
	for range rateClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if wait := time.Until(start.Add(time.Duration(float64(i) / float64(rate) * float64(time.Second)))); wait > 0 {
					time.Sleep(wait)
				}
				s := users[i%len(users)]
				thread := "bench-rate" + tag + "-" + s.User
				m := memento.Message{ID: fmt.Sprintf("bench-r%s-%d", tag, i), Role: memento.RoleUser, Text: texts[i]}
				var jobs func(memento.Message) []memento.JobRequest
				if d.MessageJobs != nil {
					jobs = func(m memento.Message) []memento.JobRequest { return d.MessageJobs(s, thread, m) }
				}
				sent := time.Now()
				if _, err := d.DB.AppendMessages(memento.WithWaitSplit(memento.WithWriteTimes(ctx, &times[i])), s, thread, []memento.Message{m}, jobs); err != nil {
					errs <- fmt.Errorf("queue ingest at a rate: %w", err)
					return
				}
				at := time.Now()
				obs.acked(m.ID, at)
				ids[i], ackMs[i] = m.ID, millis(at.Sub(sent))
				for {
					prev := lastAck.Load()
					if at.UnixNano() <= prev || lastAck.CompareAndSwap(prev, at.UnixNano()) {
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	ingestEnd := time.Unix(0, lastAck.Load())
	if err := waitForJobs(ctx, d.DB, 30*time.Minute); err != nil {
		return nil, err
	}
	end := time.Now()
	lags, _, unseen := obs.lags(ids)
	return &RateResult{
		TargetPerSec:   float64(rate),
		AchievedPerSec: round3(float64(n) / ingestEnd.Sub(start).Seconds()),
		Messages:       n,
		Seconds:        round3(end.Sub(start).Seconds()),
		DrainSeconds:   round3(end.Sub(ingestEnd).Seconds()),
		IngestAck:      summarise(ackMs),
		Lag:            summarise(lags),
		Unseen:         unseen,
		Writer:         writerUse(d.DB, wstart, end.Sub(start).Seconds()).perMessage(n),
		AckPhases:      ackPhases(times, ackMs),
		Scheduling:     sched.since(),
	}, nil
}

// lagObserver pairs the acknowledgement of each measured message with the
// moment the workers wrote its memories. Either may come first: a worker
// can take a message before its append has returned to the client.
type lagObserver struct {
	mu          sync.Mutex
	ack, memory map[string]time.Time
}

func newLagObserver() *lagObserver {
	return &lagObserver{ack: map[string]time.Time{}, memory: map[string]time.Time{}}
}

// acked records that the append of message id returned at at.
func (o *lagObserver) acked(id string, at time.Time) {
	o.mu.Lock()
	o.ack[id] = at
	o.mu.Unlock()
}

// remembered is told by the workers that m's memories were written.
func (o *lagObserver) remembered(_ memento.Scope, m memento.Message) {
	now := time.Now()
	o.mu.Lock()
	if _, ok := o.memory[m.ID]; !ok {
		o.memory[m.ID] = now
	}
	o.mu.Unlock()
}

// lags returns, for the messages of ids whose memories were written, the
// time from acknowledgement to that (0 when the memories came first), in
// milliseconds; when the last of them was written; and how many were
// never reported.
func (o *lagObserver) lags(ids []string) ([]float64, time.Time, int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []float64
	var last time.Time
	unseen := 0
	for _, id := range ids {
		ack, ok := o.ack[id]
		done, seen := o.memory[id]
		if !ok || !seen {
			unseen++
			continue
		}
		out = append(out, max(0, millis(done.Sub(ack))))
		if done.After(last) {
			last = done
		}
	}
	return out, last, unseen
}

// waitForJobs polls until the queue has no unfinished job.
func waitForJobs(ctx context.Context, db Store, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		n, err := db.Unfinished(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d background jobs still unfinished after %s", n, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pollAfter(n)):
		}
	}
}

// pollAfter is how long waitForJobs waits before it counts again, having
// counted n unfinished jobs: 5 ms when a hundred or fewer are left, up to
// 50 ms when a thousand or more are. The end of a measurement is found at
// most that long after it. A count is a query of the store (a few
// milliseconds of a PostgreSQL server's processor), and counting every
// 5 ms while a backlog drained took processors from the work measured.
func pollAfter(n int) time.Duration {
	return min(50*time.Millisecond, max(5*time.Millisecond, time.Duration(n)*50*time.Microsecond))
}
