package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/prefs"
	"github.com/memento-ai/memento/profile"
)

// Prefs returns the preference memory over the engine's store, language
// model, embedder and catalog. It holds no state of its own, so every call
// may make a new one.
func (e *Engine) Prefs(ctx context.Context) (*prefs.Service, error) {
	model, err := e.Model(ctx)
	if err != nil {
		return nil, err
	}
	embedder, err := e.Embedder(ctx)
	if err != nil {
		return nil, err
	}
	return &prefs.Service{
		Store: e.Store, Messages: e.Store, Model: model, Embedder: embedder,
		Catalog: lazyCatalog{e}, Logger: e.Logger,
	}, nil
}

// PrefsReader is the preference memory for listing only: it needs neither
// the model nor the catalog, so `prefs list` starts at once.
func (e *Engine) PrefsReader() *prefs.Service {
	return &prefs.Service{Store: e.Store, Logger: e.Logger}
}

// PrefsScorer returns the ranking signal of the preference memory, over
// the catalog's titles as the embedder sees them. Its title vectors are
// computed as titles are ranked and kept, so the engine builds it once
// (for the agent).
func (e *Engine) PrefsScorer(ctx context.Context) (*prefs.Scorer, error) {
	svc, err := e.Prefs(ctx)
	if err != nil {
		return nil, err
	}
	cat, err := e.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	ts := prefs.NewTitleSpace(svc.Embedder, cat.All())
	if c, ok := e.Store.(memento.VectorCache); ok && e.Config.Embed.CacheTitleVectors() {
		ts.Cache, ts.Logger = c, e.Logger
	}
	return &prefs.Scorer{Prefs: svc, Titles: ts}, nil
}

// PrefsRecaller returns the memento.Recaller of the preference memory, for
// the context assembler.
func (e *Engine) PrefsRecaller(ctx context.Context) (*prefs.Recaller, error) {
	svc, err := e.Prefs(ctx)
	if err != nil {
		return nil, err
	}
	return &prefs.Recaller{Prefs: svc}, nil
}

// handlePrefsJobs registers the preference jobs: extraction from messages
// and events, and the debounced clustering.
func (e *Engine) handlePrefsJobs(ctx context.Context, q memento.Queue) error {
	svc, err := e.Prefs(ctx)
	if err != nil {
		return err
	}
	svc.Register(q, memento.JobOptions{})
	e.prefsJobs = svc
	gauge, counter := statMetrics(svc.ClusterStats)
	e.registerMetrics("preference clustering metrics",
		gauge("memento_prefs_cluster_users", "Users whose preferences the clustering job holds between clusterings.", func(s prefs.ClusterStats) float64 { return float64(s.Users) }),
		gauge("memento_prefs_cluster_preferences", "Preferences the clustering job holds, with their vectors and neighbours.", func(s prefs.ClusterStats) float64 { return float64(s.Preferences) }),
		counter("memento_prefs_cluster_full_reads_total", "Clusterings that read every preference of their user.", func(s prefs.ClusterStats) float64 { return float64(s.FullReads) }),
		counter("memento_prefs_cluster_incremental_reads_total", "Clusterings that read only the preferences changed since the user's last.", func(s prefs.ClusterStats) float64 { return float64(s.IncrementalReads) }),
		counter("memento_prefs_cluster_evictions_total", "Users the clustering job dropped to stay within its cache of preferences.", func(s prefs.ClusterStats) float64 { return float64(s.Evictions) }),
		counter("memento_prefs_cluster_mismatches_total", "Full reads that found a user's held preferences or their groups other than read (a bug if ever above 0).", func(s prefs.ClusterStats) float64 { return float64(s.Mismatches) }),
	)
	return nil
}

// lazyCatalog opens the engine's catalog on first use, so a worker that
// never sees an event never loads it.
type lazyCatalog struct{ e *Engine }

func (c lazyCatalog) Search(ctx context.Context, q memento.TitleQuery) (*memento.TitlePage, error) {
	cat, err := c.e.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	return cat.Search(ctx, q)
}

func (c lazyCatalog) Title(ctx context.Context, id string) (*memento.Title, error) {
	cat, err := c.e.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	return cat.Title(ctx, id)
}

func (c lazyCatalog) Stats(ctx context.Context) (*memento.CatalogStats, error) {
	cat, err := c.e.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	return cat.Stats(ctx)
}

// profileWorker returns the worker of the profile's jobs over the
// engine's store and catalog.
func (e *Engine) profileWorker(ctx context.Context) (*profile.Worker, error) {
	cat, err := e.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	model, err := e.Model(ctx)
	if err != nil {
		return nil, err
	}
	// The actions a message reports are read by the configured model
	// (the offline rules unless a model server is set).
	actions, _ := model.(memento.ActionReader)
	return &profile.Worker{Events: e.Store, Profiles: e.Store, Models: e.Store, Messages: e.Store, Actions: actions,
		Resolve: cat.ResolveTitle, Catalog: cat, Logger: e.Logger}, nil
}

// handleProfileJobs registers the profile's job kinds: learning a user's
// profile, learning the co-occurrence model and reading events from
// messages.
func (e *Engine) handleProfileJobs(ctx context.Context, q memento.Queue) error {
	w, err := e.profileWorker(ctx)
	if err != nil {
		return err
	}
	w.Register(q)
	e.profileJobs = w
	gauge, counter := statMetrics(w.FoldStats)
	e.registerMetrics("profile recompute metrics",
		gauge("memento_profile_folded_users", "Users whose events the profile worker holds folded between recomputes.", func(s profile.FoldStats) float64 { return float64(s.Users) }),
		gauge("memento_profile_folded_events", "Events the profile worker holds folded between recomputes.", func(s profile.FoldStats) float64 { return float64(s.Events) }),
		counter("memento_profile_full_reads_total", "Profile recomputes that read every event of their user.", func(s profile.FoldStats) float64 { return float64(s.FullReads) }),
		counter("memento_profile_folded_reads_total", "Profile recomputes that read only the events added since the user's last.", func(s profile.FoldStats) float64 { return float64(s.FoldedReads) }),
		counter("memento_profile_fold_evictions_total", "Users the profile worker dropped to stay within its cache of folded events.", func(s profile.FoldStats) float64 { return float64(s.Evictions) }),
		counter("memento_profile_fold_mismatches_total", "Full reads that found a user's folded events learning other keys (a bug if ever above 0).", func(s profile.FoldStats) float64 { return float64(s.Mismatches) }),
	)
	_, modelCounter := statMetrics(w.ModelStats)
	e.registerMetrics("co-occurrence model metrics",
		modelCounter("memento_profile_model_updates_total", "Incremental updates of the co-occurrence model, from the users whose events changed.", func(s profile.ModelStats) float64 { return float64(s.Updates) }),
		modelCounter("memento_profile_model_rebuilds_total", "Rebuilds of the co-occurrence model from every event: the first after a start, then after 500 incremental updates or 10 minutes.", func(s profile.ModelStats) float64 { return float64(s.Rebuilds) }),
		modelCounter("memento_profile_model_checks_total", "Rebuilds that compared the incrementally updated model with their own.", func(s profile.ModelStats) float64 { return float64(s.Checks) }),
		modelCounter("memento_profile_model_changed_users_total", "Users set again in the incremental counts for a check, because their events changed between its two reads or they were forgotten.", func(s profile.ModelStats) float64 { return float64(s.Changed) }),
		modelCounter("memento_profile_model_mismatches_total", "Checks that found the incrementally updated model other than the rebuild's (a bug if ever above 0; the rebuild's is kept).", func(s profile.ModelStats) float64 { return float64(s.Mismatches) }),
	)
	return nil
}

// ModelReads returns how the incremental models' jobs of the workers
// StartWorkers started have read their users so far: the profile
// recomputes (folded or full) and the preference clusterings
// (incremental or full), as /metrics counts them. Both are zero before
// StartWorkers.
func (e *Engine) ModelReads() (profile.FoldStats, prefs.ClusterStats) {
	e.workersMu.Lock()
	w, svc := e.profileJobs, e.prefsJobs
	e.workersMu.Unlock()
	var folds profile.FoldStats
	var clusters prefs.ClusterStats
	if w != nil {
		folds = w.FoldStats()
	}
	if svc != nil {
		clusters = svc.ClusterStats()
	}
	return folds, clusters
}

// CooccurrenceModel returns the figures of the co-occurrence model kept
// by the workers StartWorkers started: its incremental updates, its
// rebuilds and the checks they made of the incremental model
// (profile.Worker.ModelStats), as /metrics counts them. Zero before
// StartWorkers.
func (e *Engine) CooccurrenceModel() profile.ModelStats {
	e.workersMu.Lock()
	w := e.profileJobs
	e.workersMu.Unlock()
	if w == nil {
		return profile.ModelStats{}
	}
	return w.ModelStats()
}

// WarmModels learns the co-occurrence counts of every tenant of the store
// from its events, for the model jobs of the workers StartWorkers
// started: without it, the first model job after a start reads every
// event of its tenant while messages arrive. `memento serve` runs it in
// the background at start; it does nothing before StartWorkers.
func (e *Engine) WarmModels(ctx context.Context) error {
	e.workersMu.Lock()
	w := e.profileJobs
	e.workersMu.Unlock()
	if w == nil {
		return nil
	}
	tenants, err := listTenants(ctx, e.Store)
	if err != nil {
		return fmt.Errorf("warm the models: %w", err)
	}
	for _, tenant := range tenants {
		start := time.Now()
		if err := w.Warm(ctx, tenant); err != nil {
			return err
		}
		e.Logger.InfoContext(ctx, "co-occurrence counts learned at start", "tenant", tenant, "took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// ProfileScorer returns the profile's ranking signal for the agent: the
// user's profile and the tenant's co-occurrence model, decoded once per
// version.
func (e *Engine) ProfileScorer(ctx context.Context) (*profile.Scorer, error) {
	cat, err := e.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	return &profile.Scorer{Profiles: e.Store, Models: &profile.StoreModels{Store: e.Store}, Catalog: cat,
		Weights: profile.DefaultWeights(), Logger: e.Logger}, nil
}

// UserSections are the per-user sections a snapshot (and the user export)
// holds beyond messages and memories: the profile and the preferences.
// Components with more per-user data add theirs here.
func (e *Engine) UserSections() []memento.UserSection {
	return []memento.UserSection{profile.Section{Store: e.Store}, prefs.Section{Store: e.Store}}
}
