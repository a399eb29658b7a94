package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
)

// reembedReport is what `memento reembed --json` prints.
type reembedReport struct {
	Embedder    string `json:"embedder"`
	Users       int    `json:"users"`
	Preferences int    `json:"preferences"`
}

func (m *Main) reembedCommand() *cobra.Command {
	var user string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "reembed",
		Short: "Embed stored memories, messages and preferences again with the configured embedder",
		Long: `Vectors of different embedders are never compared. After a change of embedder
(or of its dimension), reembed gives every memory, message and preference of one
user (--user) or of every user a vector from the configured embedder. Weights,
ages and sources are kept.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			app, err := m.App(ctx)
			if err != nil {
				return err
			}
			emb, err := app.Embedder(ctx)
			if err != nil {
				return err
			}
			svc, err := app.Prefs(ctx)
			if err != nil {
				return err
			}
			users := []string{user}
			if user == "" {
				if users, err = app.Store.Users(ctx, m.Config.Tenant); err != nil {
					return err
				}
			}
			rep := reembedReport{Embedder: emb.ID()}
			for _, u := range users {
				s := app.Scope(u)
				if err := app.Reindex(ctx, s); err != nil {
					return fmt.Errorf("reembed %s: %w", u, err)
				}
				prefs, err := svc.Preferences(ctx, s)
				if err != nil {
					return fmt.Errorf("reembed %s: %w", u, err)
				}
				for _, p := range prefs {
					if p.Embedder == emb.ID() {
						continue
					}
					concept := p.Concept
					if _, err := svc.Patch(ctx, s, p.ID, &concept, nil); err != nil {
						return fmt.Errorf("reembed %s preference %s: %w", u, p.ID, err)
					}
					rep.Preferences++
				}
				rep.Users++
			}
			if asJSON {
				return json.NewEncoder(m.Stdout).Encode(rep)
			}
			fmt.Fprintf(m.Stdout, "re-embedded %d users (%d preferences) with %s\n", rep.Users, rep.Preferences, rep.Embedder)
			return nil
		},
	}
	cmd.Flags().StringVar(&user, "user", "", "only this user (default: every user of the tenant)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
