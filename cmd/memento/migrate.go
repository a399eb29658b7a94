package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/engine"
)

func (m *Main) migrateCommand() *cobra.Command {
	var (
		from, to, checkpoint string
		sample, parallel     int
		asJSON               bool
	)
	cmd := &cobra.Command{
		Use:   "migrate --from FILE --to postgres://…",
		Short: "Copy a store into another, such as SQLite into PostgreSQL",
		Long: `Copy everything a store holds into another: the imported catalog, API keys
(so clients' keys go on working), every user of every tenant (threads with
their summaries and answers, messages, events, memories with their history and
provenance, pipeline runs, modes, profiles and preferences), the learned
models, and the recall vectors (computed by the target's embedder).

The source must be at rest: stop the servers that use it and let its queue
drain first (memento jobs stats). A run that stops goes on where it was when
started again: users already copied are recorded in the checkpoint file
(default: the source's path with .migrate.json), and rows already in the target
are skipped by id. At the end each user's rows are counted in both stores and
the recall answers of a sample of users compared; a difference fails the
command.

--json prints {"from","to","tenants","users","resumed","copied":{...},"titles",
"keys","models","source":{...},"target":{...},"verified","mismatches",
"recall":{"queries","identical"},"seconds"}.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return m.migrate(cmd.Context(), from, to, checkpoint, engine.MigrateOptions{RecallSample: sample, Parallel: parallel}, asJSON)
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the store to copy: an SQLite file or a PostgreSQL URL")
	cmd.Flags().StringVar(&to, "to", "", "the store to copy into: a PostgreSQL URL or an SQLite file")
	cmd.Flags().StringVar(&checkpoint, "checkpoint", "", "file recording the users copied, to resume a stopped run (default FROM.migrate.json for an SQLite source, none for PostgreSQL)")
	cmd.Flags().IntVar(&sample, "verify-recall", 20, "users whose recall answers are compared between the stores after the copy; 0 compares none")
	cmd.Flags().IntVar(&parallel, "parallel", 4, "users copied at once")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	_ = cmd.MarkFlagRequired("from")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}

// migrate opens both stores as engines with the command's settings (the
// same embedder on both, so recall answers can be compared), copies and
// reports.
func (m *Main) migrate(ctx context.Context, from, to, checkpoint string, opts engine.MigrateOptions, asJSON bool) error {
	if from == to {
		return memento.Errorf(memento.EINVALID, "--from and --to name the same store %s", engine.RedactURL(from))
	}
	if opts.RecallSample < 0 {
		return memento.Errorf(memento.EINVALID, "--verify-recall must not be negative, got %d", opts.RecallSample)
	}
	if opts.Parallel < 1 || opts.Parallel > 64 {
		return memento.Errorf(memento.EINVALID, "--parallel must be from 1 to 64, got %d", opts.Parallel)
	}
	if engine.StoreKind(from) == engine.KindSQLite {
		if _, err := os.Stat(from); err != nil {
			return memento.Errorf(memento.EINVALID, "--from %s cannot be read: %v", from, err)
		}
		if checkpoint == "" {
			checkpoint = strings.TrimSuffix(from, ".db") + ".migrate.json"
		}
	}
	open := func(dsn string) (*engine.Engine, error) {
		cfg := m.Config.Config
		cfg.DB = dsn
		return engine.Open(ctx, cfg, m.Logger)
	}
	src, err := open(from)
	if err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	defer src.Close(context.WithoutCancel(ctx))
	dst, err := open(to)
	if err != nil {
		return fmt.Errorf("--to: %w", err)
	}
	defer dst.Close(context.WithoutCancel(ctx))

	var bar *progressbar.ProgressBar
	opts.Checkpoint = checkpoint
	opts.Progress = func(done, total int) {
		if bar == nil {
			bar = m.progress(true, total, "copying users")
		}
		_ = bar.Set(done)
	}
	rep, err := engine.Migrate(ctx, src, dst, opts)
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		return err
	}
	if asJSON {
		if err := json.NewEncoder(m.Stdout).Encode(rep); err != nil {
			return err
		}
	} else {
		c := rep.Copied
		fmt.Fprintf(m.Stdout, "copied %d users of %d tenants from %s to %s in %.1f s (%d already copied by an earlier run)\n",
			rep.Users, len(rep.Tenants), rep.From, rep.To, rep.Seconds, rep.Resumed)
		fmt.Fprintf(m.Stdout, "stored: %d threads, %d messages, %d summaries, %d events, %d memories, %d runs, %d answers; %d rows were there already\n",
			c.Threads, c.Messages, c.Summaries, c.Events, c.Memories, c.Runs, c.Answers, c.Skipped)
		fmt.Fprintf(m.Stdout, "also: %d titles, %d keys, %d learned models\n", rep.Titles, rep.Keys, rep.Models)
		fmt.Fprintf(m.Stdout, "target holds: %d users, %d messages, %d memories, %d events (source: %d, %d, %d, %d)\n",
			rep.Target.Users, rep.Target.Messages, rep.Target.Memories, rep.Target.Events,
			rep.Source.Users, rep.Source.Messages, rep.Source.Memories, rep.Source.Events)
		fmt.Fprintf(m.Stdout, "recall: %d of %d sampled queries answer the same\n", rep.Recall.Identical, rep.Recall.Queries)
		for _, name := range rep.ModelsLeft {
			fmt.Fprintf(m.Stdout, "model %s was older than its events and is learned again by the target's workers\n", name)
		}
		for _, mm := range rep.Mismatches {
			fmt.Fprintln(m.Stdout, "mismatch:", mm)
		}
	}
	if !rep.Verified {
		return memento.Errorf(memento.ECONFLICT, "the copy differs from the source in %d ways (listed above); run migrate again to resume, or look at the named users", len(rep.Mismatches))
	}
	return nil
}
