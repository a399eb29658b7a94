package main

import (
	"context"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/spf13/cobra"

	"github.com/memento-ai/memento"
	mhttp "github.com/memento-ai/memento/http"
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
	return cmd
}

// serve opens every component, starts the job queue and the HTTP server,
// and returns; Close stops them.
func (m *Main) serve(ctx context.Context) error {
	app, err := m.App(ctx)
	if err != nil {
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
	prefsSvc, err := app.Prefs(ctx)
	if err != nil {
		return err
	}
	snapshots, err := m.startSnapshots(ctx, app)
	if err != nil {
		return err
	}
	srv := &mhttp.Server{
		Addr:     m.Config.Addr,
		Version:  Version,
		Logger:   app.Logger,
		Catalog:  cat,
		Health:   map[string]memento.Pinger{"store": app.DB},
		Registry: app.Registry,
		Routes: []func(huma.API, *mhttp.Server){
			snapshots, // first: it wraps the routes after it
			mhttp.RegisterChat(ag, app.DB, app.DB),
			mhttp.RegisterProfile(app.profileRoutes()),
			mhttp.RegisterPreferences(prefsSvc),
			mhttp.RegisterUI(mhttp.UI{Threads: app.DB, Messages: app.DB, Events: app.DB, Jobs: app.DB}),
			mhttp.RegisterMemory(app.memoryRoutes(ctx)),
		},
	}
	if err := srv.Open(); err != nil {
		return err
	}
	app.onClose(srv.Close)
	// The preference scorer embeds the catalog once; do it now, in the
	// background, rather than in the first user's turn.
	for _, sc := range ag.Scorers {
		if ps, ok := sc.(*prefs.Scorer); ok && ps.Titles != nil {
			go func() {
				start := time.Now()
				if err := ps.Titles.Warm(context.WithoutCancel(ctx)); err != nil {
					app.Logger.Warn("warming the title vectors failed; the first ranking will do it", "err", err)
					return
				}
				app.Logger.Info("title vectors ready", "took", time.Since(start).Round(time.Millisecond))
			}()
		}
	}
	m.serving = true
	app.Logger.Info("memento serving", "url", srv.URL(), "version", Version, "config", m.Config.String())
	m.serverURL = srv.URL()
	return nil
}
