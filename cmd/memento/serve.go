package main

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/spf13/cobra"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/engine"
	mhttp "github.com/memento-ai/memento/http"
	"github.com/memento-ai/memento/mcp"
	"github.com/memento-ai/memento/prefs"
)

func (m *Main) serveCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the REST API, web UI and metrics",
		Long:  "Serve the REST API (OpenAPI at /openapi.json), the web UI and Prometheus metrics, and run the background jobs.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return m.serve(cmd.Context())
		},
	}
	cmd.Flags().StringVar(&m.Config.Addr, "addr", m.Config.Addr, "address to listen on (MEMENTO_ADDR)")
	cmd.Flags().StringVar(&m.Config.Snapshot, "snapshot", m.Config.Snapshot, "keep users' snapshots in file:///dir or s3://bucket/prefix, and restore unknown users from it (MEMENTO_SNAPSHOT)")
	h := &m.Config.HTTP
	cmd.Flags().StringVar(&h.AllowedOrigins, "allowed-origins", h.AllowedOrigins, "comma-separated origins of other web pages that may call the API, such as https://app.example.com; they get CORS headers (MEMENTO_ALLOWED_ORIGINS)")
	cmd.Flags().StringVar(&h.AllowedHosts, "allowed-hosts", h.AllowedHosts, "comma-separated names the server answers to besides localhost and its listen address, name or name:port, or * for any; others are refused against DNS rebinding (MEMENTO_ALLOWED_HOSTS)")
	cmd.Flags().DurationVar(&h.ReadHeaderTimeout, "http-read-header-timeout", h.ReadHeaderTimeout, "time a client has to send a request's headers (MEMENTO_HTTP_READ_HEADER_TIMEOUT)")
	cmd.Flags().DurationVar(&h.ReadTimeout, "http-read-timeout", h.ReadTimeout, "time a client has to send a whole request, body included (MEMENTO_HTTP_READ_TIMEOUT)")
	cmd.Flags().DurationVar(&h.WriteTimeout, "http-write-timeout", h.WriteTimeout, "time from the end of a request's headers to the end of its answer; a chat turn must fit (MEMENTO_HTTP_WRITE_TIMEOUT)")
	cmd.Flags().DurationVar(&h.IdleTimeout, "http-idle-timeout", h.IdleTimeout, "time a keep-alive connection may wait for its next request (MEMENTO_HTTP_IDLE_TIMEOUT)")
	cmd.Flags().Uint64Var(&m.experimentSeed, "experiment-seed", 0, "seed the study's arm assignment, for scripted runs that must repeat; 0 (the default) draws a random seed, as a real study must")
	cmd.Flags().StringVar(&m.experiment, "experiment", "", "run the web UI as this study (memento experiment create): consent, demographics, the conversation, the questionnaire")
	cmd.Flags().IntVar(&h.MaxConns, "http-max-conns", h.MaxConns, "connections open at once; more wait in the kernel's backlog (MEMENTO_HTTP_MAX_CONNS)")
	m.addLimitFlags(cmd.Flags())
	cmd.Flags().DurationVar(&h.MaxQueueLag, "max-queue-lag", h.MaxQueueLag, "refuse appends with 503 and Retry-After while the oldest unfinished background job is older than this; 0 never refuses (MEMENTO_MAX_QUEUE_LAG)")
	return cmd
}

// serve opens every component, starts the job queue and the HTTP server,
// and returns; Close stops them.
func (m *Main) serve(ctx context.Context) error {
	tenantTokens, err := m.limits.validate()
	if err != nil {
		return err
	}
	// An OpenAI-compatible model's calls and tokens are counted per
	// tenant, and a tenant past its daily budget gets the offline model.
	m.Config.Budget = &engine.BudgetConfig{DailyTokens: m.limits.DailyTokens, Tenants: tenantTokens}
	app, err := m.App(ctx)
	if err != nil {
		return err
	}
	if err := m.checkServeKeys(ctx, app); err != nil {
		return err
	}
	cat, err := app.Catalog(ctx)
	if err != nil {
		return err
	}
	ag, err := app.Agent(ctx)
	if err != nil {
		return err
	}
	if err := app.StartWorkers(ctx); err != nil {
		return err
	}
	go func() {
		// The co-occurrence counts, read once from every event, so that
		// the model jobs under load update them from new events only.
		if err := app.WarmModels(ctx); err != nil && ctx.Err() == nil {
			app.Logger.Warn("co-occurrence counts not learned at start; the first model job learns them", "err", err)
		}
	}()
	prefsSvc, err := app.Prefs(ctx)
	if err != nil {
		return err
	}
	snapshots, hooks, err := m.startSnapshots(ctx, app)
	if err != nil {
		return err
	}
	mcpSrv, err := m.mcpServer(ctx, app)
	if err != nil {
		return err
	}
	if hooks != nil {
		// The tools restore, write behind and forget as the REST routes do.
		mcpSrv.Hooks = mcp.Hooks{Ensure: hooks.Ensure, Changed: hooks.Changed, Deleted: hooks.Deleted}
	}
	study, err := m.study(ctx, app)
	if err != nil {
		return err
	}
	speech, err := m.speech(app, ag)
	if err != nil {
		return err
	}
	srv := &mhttp.Server{
		Addr:     m.Config.Addr,
		Version:  Version,
		Logger:   app.Logger,
		Catalog:  cat,
		Health:   map[string]memento.Pinger{"store": app.Store},
		Registry: app.Registry,
		Keys:     app.Store,
		KeyRate:  m.limits.KeyRate,
		KeyBurst: m.limits.KeyBurst,
		Routes: []func(huma.API, *mhttp.Server){
			snapshots, // first: it wraps the routes after it
			mhttp.RegisterChat(ag, app.Store, app.Store),
			mhttp.RegisterProfile(profileRoutes(app)),
			mhttp.RegisterPreferences(prefsSvc),
			mhttp.RegisterUI(mhttp.UI{Threads: app.Store, Messages: app.Store, Events: app.Store, Jobs: app.Store, Study: study, Speech: speech.Transcriber != nil}),
			mhttp.RegisterMemory(memoryRoutes(ctx, app)),
			mhttp.RegisterSpeech(speech),
		},
		AllowedOrigins:    splitList(m.Config.HTTP.AllowedOrigins),
		AllowedHosts:      splitList(m.Config.HTTP.AllowedHosts),
		ReadHeaderTimeout: m.Config.HTTP.ReadHeaderTimeout,
		ReadTimeout:       m.Config.HTTP.ReadTimeout,
		WriteTimeout:      m.Config.HTTP.WriteTimeout,
		IdleTimeout:       m.Config.HTTP.IdleTimeout,
		MaxConns:          m.Config.HTTP.MaxConns,
		Lag:               app.Store,
		MaxLag:            m.Config.HTTP.MaxQueueLag,
		LagKinds:          app.JobKinds(),
		// MCP over streamable HTTP, behind the same guard and keys.
		Mounts: map[string]http.Handler{"/mcp": mcpSrv.Handler()},
	}
	if w, ok := app.Store.(memento.WriterReporter); ok {
		srv.Writer = w // SQLite: its logs' syncs in /metrics
	}
	if study != nil {
		srv.Routes = append(srv.Routes, mhttp.RegisterStudy(study))
	}
	// The preference scorer embeds the catalog and indexes its words
	// once; do it now, in the background, rather than in the first user's
	// turn. The server listens meanwhile, and /readyz answers 503 until it
	// is done (http/ready.go).
	var warm []func()
	for _, sc := range ag.Scorers {
		if ps, ok := sc.(*prefs.Scorer); ok && ps.Titles != nil {
			done := srv.Warm("titles")
			warm = append(warm, func() {
				defer done()
				start := time.Now()
				if err := ps.Titles.Warm(context.WithoutCancel(ctx)); err != nil {
					app.Logger.Warn("warming the title vectors failed; the first ranking will do it", "err", err)
					return
				}
				cached, embedded := ps.Titles.Counts()
				app.Logger.Info("title vectors ready", "took", time.Since(start).Round(time.Millisecond),
					"from_cache", cached, "embedded", embedded)
			})
		}
	}
	if err := srv.Open(); err != nil {
		return err
	}
	app.OnClose(srv.Close)
	for _, w := range warm {
		go w()
	}
	m.serving = true
	app.Logger.Info("memento serving", "url", srv.URL(), "version", Version, "config", m.Config.String())
	m.serverURL = srv.URL()
	return nil
}
