package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/bench"
	"github.com/memento-ai/memento/engine"
	mpostgres "github.com/memento-ai/memento/postgres"
	"github.com/memento-ai/memento/sqlite"
)

func (m *Main) benchCommand() *cobra.Command {
	var cfg bench.Config
	var asJSON, quiet, reuse bool
	var plotDir, queueProfile string
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure latency and throughput on a synthetic store of a million memories",
		Long: `Build a synthetic but realistic store (users, threads, messages, memories with their
history, run records, events and preference vectors, drawn from the catalog) and
measure context assembly, chat turns with the configured model, message-log
acknowledgements, the attribute-memory pipeline (directly, and end to end through
the queue), DBSCAN over 10,000 preference vectors, catalog search, the store's size
on disk and the process's peak memory.

By default 10,000 background users hold 100 memories each and 100 measured users
hold 1,000 each (about 1.1 million memories); --users and --memories scale the
background. Without --db the store is a temporary file removed afterwards; with
--db it must be a new file, and is kept. --db postgres://…?search_path=S builds
and measures PostgreSQL in the schema S, which must hold no users yet.`,
		Example: "  memento bench --json\n  memento bench --users 100000 --plot docs/img",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			keep := m.dbGiven(cmd)
			postgres := engine.StoreKind(m.Config.DB) == engine.KindPostgres
			if postgres && (reuse || cfg.BuildOnly) {
				return memento.Errorf(memento.EINVALID, "--reuse and --build-only keep an SQLite bench store; on PostgreSQL every run builds its store in the schema --db names (add ?search_path=bench_1 to the URL)")
			}
			if postgres {
				// The schema must be empty, checked once it is open.
			} else if reuse {
				if !keep {
					return memento.Errorf(memento.EINVALID, "--reuse needs --db: the store an earlier `memento bench --db` built")
				}
				built, err := readBenchScale(m.Config.DB, cfg)
				if err != nil {
					return err
				}
				cfg.Built = built
			} else if keep {
				if _, err := os.Stat(m.Config.DB); err == nil {
					return memento.Errorf(memento.EINVALID, "bench builds a new store: --db %s exists; name a new file, leave --db out, or measure it again with --reuse", m.Config.DB)
				}
			} else if err := m.scratchDB(cmd, "bench.db"); err != nil {
				return err
			}
			if !quiet {
				cfg.Progress = m.Stderr
			}
			if queueProfile != "" {
				f, err := os.Create(queueProfile)
				if err != nil {
					return memento.Errorf(memento.EINVALID, "--queue-profile: %v", err)
				}
				defer f.Close()
				cfg.QueueProfile = f
			}
			app, err := m.App(ctx)
			if err != nil {
				return err
			}
			cat, err := app.Catalog(ctx)
			if err != nil {
				return err
			}
			emb, err := app.Embedder(ctx)
			if err != nil {
				return err
			}
			model, err := app.Model(ctx)
			if err != nil {
				return err
			}
			asm, err := app.Assembler(ctx)
			if err != nil {
				return err
			}
			ag, err := app.Agent(ctx)
			if err != nil {
				return err
			}
			pl, err := app.Pipeline(ctx)
			if err != nil {
				return err
			}
			deps := bench.Deps{
				Catalog: cat, Embedder: emb, Model: model, Pipeline: pl, Assembler: asm, Agent: ag,
				MessageJobs: app.MessageJobs, OnRemembered: app.OnRemembered, ModelReads: app.ModelReads, CooccurrenceModel: app.CooccurrenceModel, Tenant: m.Config.Tenant,
				// The workers as serve starts them, the co-occurrence
				// counts learned before the queue is measured (serve
				// learns them in the background at start).
				StartWorkers: func(ctx context.Context) error {
					if err := app.StartWorkers(ctx); err != nil {
						return err
					}
					return app.WarmModels(ctx)
				},
			}
			switch db := app.Store.(type) {
			case *sqlite.DB:
				deps.DB, deps.Bulk = db, bench.BulkOf(db.Bulk)
			case *mpostgres.DB:
				tenants, err := db.Tenants(ctx)
				if err != nil {
					return err
				}
				if len(tenants) > 0 {
					return memento.Errorf(memento.EINVALID, "bench builds a new store: the schema of --db %s holds users already; name an empty schema with ?search_path=…", engine.RedactURL(m.Config.DB))
				}
				deps.DB, deps.Bulk = db, bench.BulkOf(db.Bulk)
			default:
				return memento.Errorf(memento.EINVALID, "memento bench cannot build a %T store", db)
			}
			res, err := bench.Run(ctx, deps, cfg)
			if err != nil {
				return err
			}
			if keep && !reuse && !postgres {
				if err := writeBenchScale(m.Config.DB, res.Scale); err != nil {
					return err
				}
			}
			if cfg.BuildOnly {
				fmt.Fprintf(m.Stderr, "built %s: %d memories, %d messages in %.0f s; measure it with --db %s --reuse\n",
					m.Config.DB, res.Scale.Memories, res.Scale.Messages, res.Scale.BuildSeconds, m.Config.DB)
				return nil
			}
			if plotDir != "" {
				files, err := bench.Plot(plotDir, res)
				if err != nil {
					return err
				}
				for _, f := range files {
					fmt.Fprintln(m.Stderr, "wrote", f)
				}
			}
			if asJSON {
				return json.NewEncoder(m.Stdout).Encode(res)
			}
			return printBench(m, res)
		},
	}
	cmd.AddCommand(m.benchCompareCommand())
	f := cmd.Flags()
	f.IntVar(&cfg.Users, "users", bench.DefaultUsers, "background users")
	f.IntVar(&cfg.Memories, "memories", bench.DefaultMemories, "memories per background user")
	f.IntVar(&cfg.MeasuredUsers, "measured-users", bench.DefaultMeasuredUsers, "measured users")
	f.IntVar(&cfg.MeasuredMemories, "measured-memories", bench.DefaultMeasuredMemories, "memories per measured user")
	f.IntVar(&cfg.Samples, "samples", bench.DefaultSamples, "operations timed per latency measurement")
	f.IntVar(&cfg.PipelineMessages, "pipeline-messages", bench.DefaultPipelineMessages, "messages pushed through the pipeline for throughput")
	f.IntVar(&cfg.PipelineRuns, "pipeline-runs", 0, "pipeline runs in flight while measuring its throughput (0: 16 per CPU)")
	f.IntVar(&cfg.QueueRate, "queue-rate", bench.DefaultQueueRate, "messages a second appended one at a time while the queue is measured under a steady stream (negative: skip it)")
	f.IntVar(&cfg.QueueSeconds, "queue-seconds", bench.DefaultQueueSeconds, "how long the steady stream lasts")
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed of the synthetic data")
	f.BoolVar(&reuse, "reuse", false, "measure the store --db names, built by an earlier run of the same scale, without building it")
	f.BoolVar(&cfg.BuildOnly, "build-only", false, "build the store (keep it with --db) and measure nothing")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	f.BoolVar(&quiet, "quiet", false, "no progress bar")
	f.StringVar(&queueProfile, "queue-profile", "", "write a CPU profile (go tool pprof) of the queue's measurements into this file")
	f.StringVar(&plotDir, "plot", "", "write PNG charts (latency histograms, throughput) into this folder")
	return cmd
}

// printBench writes the result for a person.
func printBench(m *Main, res *bench.Result) error {
	s := res.Scale
	fmt.Fprintf(m.Stdout, "store: %d users (%d × %d memories + %d × %d), %d memories, %d messages, %d events, %d preferences; built in %.1f s; %.2f GB on disk\n",
		s.Users, s.BackgroundUsers, s.BackgroundMemories, s.MeasuredUsers, s.MeasuredMemories, s.Memories, s.Messages, s.Events, s.Preferences,
		s.BuildSeconds, float64(res.StoreBytes)/1e9)
	w := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "MEASUREMENT\tSAMPLES\tP50 MS\tP99 MS\tMEAN MS")
	row := func(name string, l *bench.Latency) {
		if l != nil {
			fmt.Fprintf(w, "%s\t%d\t%.3f\t%.3f\t%.3f\n", name, l.Samples, l.P50Ms, l.P99Ms, l.MeanMs)
		}
	}
	row("context assembly", &res.ContextAssembly)
	row("context assembly, first of a user", res.ContextAssemblyCold)
	row("chat turn", res.ChatTurn)
	row("ingest acknowledgement", &res.IngestAck)
	row("catalog search", &res.CatalogSearch)
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "pipeline: %d messages in %.2f s, %.0f msgs/s\n", res.Pipeline.Messages, res.Pipeline.Seconds, res.Pipeline.MsgsPerSec)
	if res.Queue != nil {
		fmt.Fprintf(m.Stdout, "message log + queue: %d messages in %.2f s, %.0f msgs/s until every job ended\n", res.Queue.Messages, res.Queue.Seconds, res.Queue.MsgsPerSec)
	}
	if r, l := res.QueueRecallable, res.QueueLag; r != nil && l != nil {
		fmt.Fprintf(m.Stdout, "  memories recallable: all in %.2f s, %.0f msgs/s; lag from acknowledgement p50 %.0f ms, p99 %.0f ms\n",
			r.Seconds, r.MsgsPerSec, l.P50Ms, l.P99Ms)
	}
	if q := res.QueueAtRate; q != nil {
		fmt.Fprintf(m.Stdout, "queue at %.0f msgs/s (achieved %.0f) for %d messages: acknowledgement p50 %.2f ms, p99 %.2f ms; recallable p50 %.0f ms, p99 %.0f ms; every job ended %.2f s after the last message\n",
			q.TargetPerSec, q.AchievedPerSec, q.Messages, q.IngestAck.P50Ms, q.IngestAck.P99Ms, q.Lag.P50Ms, q.Lag.P99Ms, q.DrainSeconds)
	}
	fmt.Fprintf(m.Stdout, "DBSCAN: %d vectors in %.1f ms (%d clusters, %d noise)\n", res.DBSCAN.Vectors, res.DBSCAN.Ms, res.DBSCAN.Clusters, res.DBSCAN.Noise)
	fmt.Fprintf(m.Stdout, "peak RSS %.0f MB; %d CPUs, load %.2f\n", float64(res.PeakRSSBytes)/1e6, res.Machine.CPUs, res.Machine.Load1)
	names := make([]string, 0, len(res.Targets))
	for n := range res.Targets {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		mark := "met"
		if !res.Targets[n] {
			mark = "MISSED"
			if note := res.TargetNotes[n]; note != "" {
				mark += " (" + note + ")"
			}
		}
		fmt.Fprintf(m.Stdout, "target %s: %s\n", n, mark)
	}
	return nil
}

func (m *Main) benchCompareCommand() *cobra.Command {
	var plotDir string
	cmd := &cobra.Command{
		Use:   "compare RESULT.json...",
		Short: "Compare the JSON results of bench runs at different scales",
		Long: `Read the JSON results of earlier runs (memento bench --json > result.json), print
their main figures side by side, smallest store first, and with --plot draw how the
latencies grow with the store (bench-scaling.png).`,
		Example: "  memento bench compare small.json default.json large.json --plot docs/img",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var runs []*bench.Result
			for _, a := range args {
				data, err := os.ReadFile(a)
				if err != nil {
					return memento.Errorf(memento.EINVALID, "read %s: %v", a, err)
				}
				var r bench.Result
				if err := json.Unmarshal(data, &r); err != nil {
					return memento.Errorf(memento.EINVALID, "%s is not a bench result: %v", a, err)
				}
				runs = append(runs, &r)
			}
			sort.SliceStable(runs, func(i, j int) bool { return runs[i].Scale.Memories < runs[j].Scale.Memories })
			w := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "MEMORIES\tSTORE GB\tCONTEXT P50/P99 MS\tTURN P50/P99 MS\tINGEST P50/P99 MS\tPIPELINE MSG/S\tSEARCH P99 MS\tPEAK RSS MB\tLOAD")
			for _, r := range runs {
				turn := "-"
				if r.ChatTurn != nil {
					turn = fmt.Sprintf("%.1f / %.1f", r.ChatTurn.P50Ms, r.ChatTurn.P99Ms)
				}
				fmt.Fprintf(w, "%d\t%.2f\t%.1f / %.1f\t%s\t%.2f / %.2f\t%.0f\t%.3f\t%.0f\t%.2f\n", r.Scale.Memories, float64(r.StoreBytes)/1e9,
					r.ContextAssembly.P50Ms, r.ContextAssembly.P99Ms, turn, r.IngestAck.P50Ms, r.IngestAck.P99Ms,
					r.Pipeline.MsgsPerSec, r.CatalogSearch.P99Ms, float64(r.PeakRSSBytes)/1e6, r.Machine.Load1)
			}
			if err := w.Flush(); err != nil {
				return err
			}
			if plotDir != "" {
				file, err := bench.PlotScaling(plotDir, runs)
				if err != nil {
					return err
				}
				fmt.Fprintln(m.Stderr, "wrote", file)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&plotDir, "plot", "", "write the scaling chart (PNG) into this folder")
	return cmd
}

// benchScaleFile is where a kept bench store records the scale it was
// built at, beside the store.
func benchScaleFile(db string) string { return db + ".bench.json" }

// writeBenchScale records the scale of a store just built.
func writeBenchScale(db string, s bench.Scale) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(benchScaleFile(db), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("record the bench store's scale: %w", err)
	}
	return nil
}

// readBenchScale reads the scale a kept bench store was built at and
// checks that the flags ask for the same one.
func readBenchScale(db string, cfg bench.Config) (*bench.Scale, error) {
	data, err := os.ReadFile(benchScaleFile(db))
	if err != nil {
		return nil, memento.Errorf(memento.EINVALID, "--reuse: %s was not built by memento bench --db (no %s)", db, benchScaleFile(db))
	}
	var s bench.Scale
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, memento.Errorf(memento.EINVALID, "--reuse: %s: %v", benchScaleFile(db), err)
	}
	if s.BackgroundUsers != cfg.Users || s.BackgroundMemories != cfg.Memories || s.MeasuredUsers != cfg.MeasuredUsers || s.MeasuredMemories != cfg.MeasuredMemories {
		return nil, memento.Errorf(memento.EINVALID, "--reuse: %s holds %d × %d + %d × %d memories; the flags ask for %d × %d + %d × %d",
			db, s.BackgroundUsers, s.BackgroundMemories, s.MeasuredUsers, s.MeasuredMemories, cfg.Users, cfg.Memories, cfg.MeasuredUsers, cfg.MeasuredMemories)
	}
	return &s, nil
}
