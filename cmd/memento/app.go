package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/recall"
	"github.com/memento-ai/memento/sqlite"
)

// App holds the components one command opened. Each is opened on first
// use, so a command pays only for what it needs, and closed by Close.
type App struct {
	Config   Config
	Logger   *slog.Logger
	DB       *sqlite.DB
	Registry *prometheus.Registry

	catalogOnce sync.Once
	catalog     *catalog.Index
	catalogErr  error

	assemblerMu sync.Mutex
	assembler   *recall.Assembler

	model          memento.LanguageModel
	embedder       memento.Embedder
	agent          *agent.Agent
	workersStarted bool

	closers []func(context.Context) error
}

// OpenApp opens the store named by cfg.
func OpenApp(ctx context.Context, cfg Config, log *slog.Logger) (*App, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	db, err := sqlite.Open(ctx, cfg.DB, sqlite.Options{Logger: log, Workers: cfg.Workers})
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", cfg.DB, err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	app := &App{Config: cfg, Logger: log, DB: db, Registry: reg}
	app.onClose(func(context.Context) error { return db.Close() })
	return app, nil
}

// onClose registers a function Close calls, in reverse order of
// registration.
func (a *App) onClose(fn func(context.Context) error) {
	a.closers = append(a.closers, fn)
}

// Close closes everything the app opened.
func (a *App) Close(ctx context.Context) error {
	var errs []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		if err := a.closers[i](ctx); err != nil {
			errs = append(errs, err)
		}
	}
	a.closers = nil
	return errors.Join(errs...)
}

// Catalog returns the catalog in use: the --catalog file when given, else
// the titles imported into the store, else the catalog embedded in the
// binary.
func (a *App) Catalog(ctx context.Context) (*catalog.Index, error) {
	a.catalogOnce.Do(func() {
		start := time.Now()
		source := ""
		a.catalog, source, a.catalogErr = a.loadCatalog(ctx)
		if a.catalogErr == nil {
			a.Logger.Info("catalog loaded", "source", source, "titles", a.catalog.Len(), "took", time.Since(start).Round(time.Millisecond))
		}
	})
	return a.catalog, a.catalogErr
}

func (a *App) loadCatalog(ctx context.Context) (*catalog.Index, string, error) {
	if a.Config.Catalog != "" {
		titles, report, err := catalog.ReadFile(a.Config.Catalog, "jsonl")
		if err != nil {
			return nil, "", fmt.Errorf("read catalog %s: %w", a.Config.Catalog, err)
		}
		if report.Skipped > 0 {
			a.Logger.Warn("catalog file has malformed rows", "file", a.Config.Catalog, "skipped", report.Skipped)
		}
		return catalog.New(titles), a.Config.Catalog, nil
	}
	n, err := a.DB.CountTitles(ctx)
	if err != nil {
		return nil, "", err
	}
	if n > 0 {
		titles, err := a.DB.Titles(ctx)
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

// Scope is the scope of a user in the configured tenant.
func (a *App) Scope(user string) memento.Scope {
	return memento.Scope{Tenant: a.Config.Tenant, User: user}
}

// registerIndexMetrics exports the recall index's counters: how many
// users it holds and their estimated memory, and how often it read a user
// in full, applied changes or evicted a user.
func (a *App) registerIndexMetrics(x *recall.Index) {
	gauge := func(name, help string, v func(recall.IndexStats) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return v(x.Stats()) })
	}
	counter := func(name, help string, v func(recall.IndexStats) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return v(x.Stats()) })
	}
	for _, c := range []prometheus.Collector{
		gauge("memento_recall_index_users", "Users held in recall's warm index.", func(s recall.IndexStats) float64 { return float64(s.Users) }),
		gauge("memento_recall_index_bytes", "Estimated memory held by recall's warm index.", func(s recall.IndexStats) float64 { return float64(s.Bytes) }),
		counter("memento_recall_index_loads_total", "Users read in full into recall's warm index.", func(s recall.IndexStats) float64 { return float64(s.Loads) }),
		counter("memento_recall_index_refreshes_total", "Change reads of recall's warm index that found changes.", func(s recall.IndexStats) float64 { return float64(s.Refreshes) }),
		counter("memento_recall_index_evictions_total", "Users evicted from recall's warm index to stay within its budget.", func(s recall.IndexStats) float64 { return float64(s.Evictions) }),
	} {
		if err := a.Registry.Register(c); err != nil {
			a.Logger.Warn("recall index metrics", "err", err)
		}
	}
}

// recallPruneEvery is how often a process running the workers prunes the
// recall change log.
const recallPruneEvery = time.Minute

// startRecallPruner prunes the recall change log (sqlite.PruneRecallChanges)
// every recallPruneEvery until the app closes, keeping
// sqlite.DefaultRecallChangesKept of it.
func (a *App) startRecallPruner(ctx context.Context) {
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
				n, err := a.DB.PruneRecallChanges(ctx, sqlite.DefaultRecallChangesKept)
				if err != nil && ctx.Err() == nil {
					a.Logger.Warn("prune recall changes", "err", err)
				} else if n > 0 {
					a.Logger.Debug("pruned recall changes", "rows", n)
				}
			}
		}
	}()
	a.onClose(func(context.Context) error {
		cancel()
		<-done
		return nil
	})
}
