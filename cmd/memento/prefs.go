package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/prefs"
)

// Prefs returns the preference memory over the app's store, language
// model, embedder and catalog. It holds no state of its own, so every call
// may make a new one.
func (a *App) Prefs(ctx context.Context) (*prefs.Service, error) {
	model, err := a.Model(ctx)
	if err != nil {
		return nil, err
	}
	embedder, err := a.Embedder(ctx)
	if err != nil {
		return nil, err
	}
	return &prefs.Service{
		Store: a.DB, Messages: a.DB, Model: model, Embedder: embedder,
		Catalog: appCatalog{a}, Logger: a.Logger,
	}, nil
}

// prefsReader is the preference memory for listing only: it needs neither
// the model nor the catalog, so `prefs list` starts at once.
func (a *App) prefsReader() *prefs.Service {
	return &prefs.Service{Store: a.DB, Logger: a.Logger}
}

// PrefsScorer returns the ranking signal of the preference memory, over
// the catalog's titles as the embedder sees them. Its title vectors are
// computed as titles are ranked and kept, so the app builds it once (for
// the agent).
func (a *App) PrefsScorer(ctx context.Context) (*prefs.Scorer, error) {
	svc, err := a.Prefs(ctx)
	if err != nil {
		return nil, err
	}
	cat, err := a.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	return &prefs.Scorer{Prefs: svc, Titles: prefs.NewTitleSpace(svc.Embedder, cat.All())}, nil
}

// PrefsRecaller returns the memento.Recaller of the preference memory, for
// the context assembler.
func (a *App) PrefsRecaller(ctx context.Context) (*prefs.Recaller, error) {
	svc, err := a.Prefs(ctx)
	if err != nil {
		return nil, err
	}
	return &prefs.Recaller{Prefs: svc}, nil
}

// handlePrefsJobs registers the preference jobs: extraction from messages
// and events, and the debounced clustering.
func (a *App) handlePrefsJobs(ctx context.Context) error {
	svc, err := a.Prefs(ctx)
	if err != nil {
		return err
	}
	svc.Register(a.DB, memento.JobOptions{})
	return nil
}

// appCatalog opens the app's catalog on first use, so a worker that never
// sees an event never loads it.
type appCatalog struct{ a *App }

func (c appCatalog) Search(ctx context.Context, q memento.TitleQuery) (*memento.TitlePage, error) {
	cat, err := c.a.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	return cat.Search(ctx, q)
}

func (c appCatalog) Title(ctx context.Context, id string) (*memento.Title, error) {
	cat, err := c.a.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	return cat.Title(ctx, id)
}

func (c appCatalog) Stats(ctx context.Context) (*memento.CatalogStats, error) {
	cat, err := c.a.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	return cat.Stats(ctx)
}

func (m *Main) prefsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "prefs",
		Short: "Show a user's preference memory",
		Long: "Show the likes and dislikes Memento learned from a user's messages and events: signed concepts whose\n" +
			"weights decay unless reinforced, and their clusters with directional descriptions.",
	}
	var user string
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List a user's preferences, strongest first",
		Long: "List a user's preferences with their stored and effective (decayed) weights. Faded preferences are\n" +
			"listed and flagged, not hidden. --json prints\n" +
			`[{"id","concept","weight","effectiveWeight","kind","faded","evidence","cluster","sources",...}].`,
		Args: cobra.NoArgs,
		RunE: m.forUser(&user, func(cmd *cobra.Command, app *App, s memento.Scope, _ []string) error {
			ps, err := app.prefsReader().Preferences(cmd.Context(), s)
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(m.Stdout).Encode(ps)
			}
			w := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "CONCEPT\tWEIGHT\tEFFECTIVE\tKIND\tEVIDENCE\tCLUSTER\tID")
			for _, p := range ps {
				eff := fmt.Sprintf("%+.2f", p.EffectiveWeight)
				if p.Faded {
					eff += " (faded)"
				}
				cluster := "-"
				if p.Cluster != nil {
					cluster = *p.Cluster
				}
				fmt.Fprintf(w, "%s\t%+.2f\t%s\t%s\t%d\t%s\t%s\n", p.Concept, p.Weight, eff, p.Kind, p.Evidence, cluster, p.ID)
			}
			return w.Flush()
		}),
	}
	var refresh bool
	clusters := &cobra.Command{
		Use:   "clusters",
		Short: "List a user's preference clusters, most confident first",
		Long: "List the clusters of a user's preferences with their directional descriptions, confidence, strength\n" +
			"(strong, mild, mixed) and each member's stance. Clusters are kept up to date by a background job;\n" +
			`--refresh recomputes them now. --json prints [{"id","description","confidence","members":[{"concept","stance"}],...}].`,
		Args: cobra.NoArgs,
		RunE: m.forUser(&user, func(cmd *cobra.Command, app *App, s memento.Scope, _ []string) error {
			ctx := cmd.Context()
			svc := app.prefsReader()
			if refresh {
				var err error
				if svc, err = app.Prefs(ctx); err != nil {
					return err
				}
				if err := svc.Recluster(ctx, s); err != nil {
					return err
				}
			}
			cs, err := svc.Clusters(ctx, s)
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(m.Stdout).Encode(cs)
			}
			for _, c := range cs {
				fmt.Fprintf(m.Stdout, "%s  [%s, confidence %.2f] %s\n", c.ID, c.Strength, c.Confidence, c.Description)
				var parts []string
				for _, mem := range c.Members {
					parts = append(parts, mem.Concept+" ("+mem.Stance+")")
				}
				fmt.Fprintf(m.Stdout, "    %s\n", strings.Join(parts, ", "))
			}
			return nil
		}),
	}
	for _, c := range []*cobra.Command{list, clusters} {
		c.Flags().StringVar(&user, "user", "", "user id (required)")
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
		_ = c.MarkFlagRequired("user")
	}
	clusters.Flags().BoolVar(&refresh, "refresh", false, "recompute the clusters now instead of reading the last ones")
	cmd.AddCommand(list, clusters)
	return cmd
}
