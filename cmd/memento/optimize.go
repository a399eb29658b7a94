package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/memento-ai/memento"
)

// optimizeReport is what `memento optimize --json` prints.
type optimizeReport struct {
	// Merges are the bounded merges that found work; Rewrites the
	// rewrites of a whole index that raised it to the level its size
	// warrants (sqlite.DB.LevelFullText).
	Merges   int     `json:"merges"`
	Rewrites int     `json:"rewrites"`
	Seconds  float64 `json:"seconds"`
}

// fullTextStore is a store whose full-text indexes keep segments on
// levels (SQLite's).
type fullTextStore interface {
	MergeFullText(ctx context.Context) (int, error)
	LevelFullText(ctx context.Context) (int, error)
}

func (m *Main) optimizeCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "optimize",
		Short: "Merge the store's full-text indexes and raise an index written in bulk to the level its size warrants (SQLite)",
		Long: `The running store merges its full-text indexes a little at a time. An index
written in a few large transactions (a bulk load, or a migration that indexed
every message at once) sits on a level that the service's writes soon fill
again, and the merger then rewrites the whole index while the store serves,
holding the writer for up to 100 ms a request at a million memories.
optimize merges what is pending and rewrites such an index onto its level,
once: a few seconds at a million memories, during which the store's writer is
held. Run it while nothing else writes the store.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			app, err := m.App(ctx)
			if err != nil {
				return err
			}
			st, ok := app.Store.(fullTextStore)
			if !ok {
				return memento.Errorf(memento.EINVALID, "optimize: only the SQLite store keeps its full-text indexes in segments; PostgreSQL needs nothing of it")
			}
			start := time.Now()
			var rep optimizeReport
			if rep.Merges, err = st.MergeFullText(ctx); err != nil {
				return err
			}
			if rep.Rewrites, err = st.LevelFullText(ctx); err != nil {
				return err
			}
			rep.Seconds = time.Since(start).Seconds()
			if asJSON {
				return json.NewEncoder(m.Stdout).Encode(rep)
			}
			fmt.Fprintf(m.Stdout, "%d merges and %d rewrites of an index in %.1f s\n", rep.Merges, rep.Rewrites, rep.Seconds)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
