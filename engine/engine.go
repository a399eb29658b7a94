package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/pipeline"
	"github.com/memento-ai/memento/postgres"
	"github.com/memento-ai/memento/prefs"
	"github.com/memento-ai/memento/profile"
	"github.com/memento-ai/memento/recall"
)

// Engine holds the components of one Memento process. Each is opened on
// first use, so a caller pays only for what it needs, and closed by
// Close. Its methods may be called from several goroutines once the
// engine is open, apart from StartWorkers, which is called once.
type Engine struct {
	Config   Config
	Logger   *slog.Logger
	Store    Store
	Registry *prometheus.Registry

	catalogOnce sync.Once
	catalog     *catalog.Index
	catalogErr  error

	// Each lazily built component has a lock of its own, since building
	// one builds others (the agent needs the model and the assembler).
	assemblerMu    sync.Mutex
	assembler      *recall.Assembler
	modelMu        sync.Mutex
	model          memento.LanguageModel
	embedderMu     sync.Mutex
	embedder       memento.Embedder
	agentMu        sync.Mutex
	agent          *agent.Agent
	workersMu      sync.Mutex
	workersStarted bool
	// remember is the remember jobs' worker, whose per-user lock the
	// backlog's batches share; remembered are OnRemembered's observers.
	remember   *pipeline.Worker
	remembered []func(memento.Scope, memento.Message)
	// handlers are the job handlers StartWorkers registered, by kind.
	handlers map[string]memento.JobHandler
	// profileJobs is the worker of the profile jobs StartWorkers
	// registered (WarmModels); prefsJobs the preference service of the
	// preference jobs (ModelReads).
	profileJobs *profile.Worker
	prefsJobs   *prefs.Service

	closeMu sync.Mutex
	closers []func(context.Context) error
}

// Open checks cfg, opens (and migrates) the store it names and returns
// the engine over it. log may be nil to discard the diagnostics.
func Open(ctx context.Context, cfg Config, log *slog.Logger) (*Engine, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	st, err := OpenStore(ctx, cfg.DB, StoreOptions{Workers: cfg.Workers, Logger: log, Intake: cfg.Intake, IntakePath: cfg.IntakePath})
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", RedactURL(cfg.DB), err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(schedLatencies)), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	e := &Engine{Config: cfg, Logger: log, Store: st, Registry: reg}
	e.OnClose(func(context.Context) error { return st.Close() })
	if pg, ok := st.(*postgres.DB); ok {
		e.registerPoolMetrics(pg.Pool())
	}
	return e, nil
}

// registerPoolMetrics exports the PostgreSQL connection pool's figures: a
// request that finds every connection taken waits for one, and that wait
// is part of its latency that the database's own statistics never show.
func (e *Engine) registerPoolMetrics(p *pgxpool.Pool) {
	gauge, counter := statMetrics(p.Stat)
	e.registerMetrics("connection pool metrics",
		gauge("memento_postgres_pool_max_conns", "Connections the pool may open (pool_max_conns).", func(s *pgxpool.Stat) float64 { return float64(s.MaxConns()) }),
		gauge("memento_postgres_pool_acquired_conns", "Connections in use now.", func(s *pgxpool.Stat) float64 { return float64(s.AcquiredConns()) }),
		gauge("memento_postgres_pool_idle_conns", "Connections open and idle now.", func(s *pgxpool.Stat) float64 { return float64(s.IdleConns()) }),
		counter("memento_postgres_pool_acquires_total", "Connections taken from the pool.", func(s *pgxpool.Stat) float64 { return float64(s.AcquireCount()) }),
		counter("memento_postgres_pool_empty_acquires_total", "Connections taken after waiting, because every connection was in use (or still opening).", func(s *pgxpool.Stat) float64 { return float64(s.EmptyAcquireCount()) }),
		counter("memento_postgres_pool_empty_acquire_wait_seconds_total", "Time spent waiting for a connection when every one was in use.", func(s *pgxpool.Stat) float64 { return s.EmptyAcquireWaitTime().Seconds() }),
	)
}

// schedLatencies adds the Go runtime's scheduling latencies to /metrics
// (go_sched_latencies_seconds): how long goroutines were ready to run
// before a processor ran them. Its tail is how a saturated processor
// shows in every request's latency.
var schedLatencies = collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/sched/latencies:seconds$`)}

// OnClose registers a function Close calls, in reverse order of
// registration: what was opened last is closed first.
func (e *Engine) OnClose(fn func(context.Context) error) {
	e.closeMu.Lock()
	defer e.closeMu.Unlock()
	e.closers = append(e.closers, fn)
}

// Close stops the workers and closes everything the engine opened.
func (e *Engine) Close(ctx context.Context) error {
	e.closeMu.Lock()
	closers := e.closers
	e.closers = nil
	e.closeMu.Unlock()
	var errs []error
	for i := len(closers) - 1; i >= 0; i-- {
		if err := closers[i](ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Scope is the scope of a user in the configured tenant.
func (e *Engine) Scope(user string) memento.Scope {
	return memento.Scope{Tenant: e.Config.Tenant, User: user}
}

// Catalog returns the catalog in use: the Config.Catalog file when given,
// else the titles imported into the store, else the catalog embedded in
// the binary.
func (e *Engine) Catalog(ctx context.Context) (*catalog.Index, error) {
	e.catalogOnce.Do(func() {
		start := time.Now()
		source := ""
		e.catalog, source, e.catalogErr = e.loadCatalog(ctx)
		if e.catalogErr == nil {
			e.Logger.Info("catalog loaded", "source", source, "titles", e.catalog.Len(), "took", time.Since(start).Round(time.Millisecond))
		}
	})
	return e.catalog, e.catalogErr
}

func (e *Engine) loadCatalog(ctx context.Context) (*catalog.Index, string, error) {
	if e.Config.Catalog != "" {
		titles, report, err := catalog.ReadFile(e.Config.Catalog, "jsonl")
		if err != nil {
			return nil, "", fmt.Errorf("read catalog %s: %w", e.Config.Catalog, err)
		}
		if report.Skipped > 0 {
			e.Logger.Warn("catalog file has malformed rows", "file", e.Config.Catalog, "skipped", report.Skipped)
		}
		return catalog.New(titles), e.Config.Catalog, nil
	}
	n, err := e.Store.CountTitles(ctx)
	if err != nil {
		return nil, "", err
	}
	if n > 0 {
		titles, err := e.Store.Titles(ctx)
		if err != nil {
			return nil, "", err
		}
		return catalog.New(titles), "store", nil
	}
	idx, err := catalog.Embedded()
	if err != nil {
		return nil, "", err
	}
	return idx, "embedded", nil
}

// WaitForJobs blocks until the queue has no unfinished job, or the
// timeout passes (an error saying how many are left).
func (e *Engine) WaitForJobs(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		n, err := e.Store.Unfinished(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("background jobs still running after %s (%d left)", timeout, n)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// registerIndexMetrics exports the recall index's counters: how many
// users it holds and their estimated memory, and how often it read a user
// in full, applied changes or evicted a user.
func (e *Engine) registerIndexMetrics(x *recall.Index) {
	gauge, counter := statMetrics(x.Stats)
	e.registerMetrics("recall index metrics",
		gauge("memento_recall_index_users", "Users held in recall's warm index.", func(s recall.IndexStats) float64 { return float64(s.Users) }),
		gauge("memento_recall_index_bytes", "Estimated memory held by recall's warm index.", func(s recall.IndexStats) float64 { return float64(s.Bytes) }),
		counter("memento_recall_index_loads_total", "Users read in full into recall's warm index.", func(s recall.IndexStats) float64 { return float64(s.Loads) }),
		counter("memento_recall_index_refreshes_total", "Change reads of recall's warm index that found changes.", func(s recall.IndexStats) float64 { return float64(s.Refreshes) }),
		counter("memento_recall_index_evictions_total", "Users evicted from recall's warm index to stay within its budget.", func(s recall.IndexStats) float64 { return float64(s.Evictions) }),
	)
}

// statMetrics returns makers of gauges and counters that read one figure
// of stats() each time /metrics is scraped.
func statMetrics[S any](stats func() S) (gauge, counter func(name, help string, v func(S) float64) prometheus.Collector) {
	gauge = func(name, help string, v func(S) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return v(stats()) })
	}
	counter = func(name, help string, v func(S) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return v(stats()) })
	}
	return gauge, counter
}

// registerMetrics registers cs with the engine's registry; a collector
// that cannot be registered is logged as what, and the others still are.
func (e *Engine) registerMetrics(what string, cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := e.Registry.Register(c); err != nil {
			e.Logger.Warn(what, "err", err)
		}
	}
}

// recallPruneEvery is how often a process running the workers prunes the
// recall change log.
const recallPruneEvery = time.Minute

// startRecallPruner prunes the recall change log every recallPruneEvery
// until the engine closes, keeping memento.DefaultRecallChangesKept of it.
func (e *Engine) startRecallPruner(ctx context.Context) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(recallPruneEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				n, err := e.Store.PruneRecallChanges(ctx, memento.DefaultRecallChangesKept)
				if err != nil && ctx.Err() == nil {
					e.Logger.Warn("prune recall changes", "err", err)
				} else if n > 0 {
					e.Logger.Debug("pruned recall changes", "rows", n)
				}
			}
		}
	}()
	e.OnClose(func(context.Context) error {
		cancel()
		<-done
		return nil
	})
}
