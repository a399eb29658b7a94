package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/engine"
)

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
		RunE: m.forUser(&user, func(cmd *cobra.Command, app *engine.Engine, s memento.Scope, _ []string) error {
			ps, err := app.PrefsReader().Preferences(cmd.Context(), s)
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
		RunE: m.forUser(&user, func(cmd *cobra.Command, app *engine.Engine, s memento.Scope, _ []string) error {
			ctx := cmd.Context()
			svc := app.PrefsReader()
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
