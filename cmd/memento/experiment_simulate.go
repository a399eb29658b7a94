package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/experiment"
)

// simulateJobsTimeout bounds the wait for one session's background jobs.
const simulateJobsTimeout = 10 * time.Minute

func (m *Main) experimentSimulateCommand() *cobra.Command {
	var cfg experiment.SimConfig
	var arms, plotDir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Run the long-horizon study: simulated users whose tastes change, over many sessions, per memory mode",
		Long: `Simulate scripts users whose tastes change over time (a liked genre becomes disliked,
a hated one liked, the platform changes, genres are added) and lets them talk to the
agent session after session through the real message log and memory pipeline, once
per arm with the same histories. After each session it measures, per arm: the share
of stored beliefs contradicting the user's current taste (stale beliefs), the context
tokens a turn assembles, and a 10-title recommendation's hit rate and NDCG@10 against
the current taste. --plot DIR draws each measure against the sessions. Without --db
it uses a fresh temporary store; everything runs offline.`,
		Example: "  memento experiment simulate --users 200 --sessions 20 --arms semantic,episodic --seed 1 --json --plot plots/",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			as, err := experiment.ParseArms(arms)
			if err != nil {
				return err
			}
			cfg.Arms = as
			if err := cfg.Validate(); err != nil {
				return err
			}
			if err := m.scratchDB(cmd, "simulate.db"); err != nil {
				return err
			}
			app, err := m.App(ctx)
			if err != nil {
				return err
			}
			deps, err := app.simDeps(ctx)
			if err != nil {
				return err
			}
			cfg.Progress = func(session, sessions int, elapsed time.Duration) {
				app.Logger.Info("simulated session", "session", session, "of", sessions, "elapsed", elapsed.Round(time.Second))
			}
			res, err := experiment.Simulate(ctx, cfg, deps)
			if err != nil {
				return err
			}
			var files []string
			if plotDir != "" {
				if files, err = experiment.PlotSimulation(res, plotDir); err != nil {
					return err
				}
			}
			return writeReport(m.Stdout, asJSON, res, files)
		},
	}
	cmd.Flags().IntVar(&cfg.Users, "users", 50, "simulated users per arm")
	cmd.Flags().IntVar(&cfg.Sessions, "sessions", 10, "sessions per user")
	cmd.Flags().StringVar(&arms, "arms", "semantic,episodic", "comma-separated arms: a memory mode, or name=mode")
	cmd.Flags().Uint64Var(&cfg.Seed, "seed", 1, "seed of the users' tastes and histories")
	cmd.Flags().Float64Var(&cfg.ChangeRate, "change-rate", 0.35, "chance that a session brings a change of taste")
	cmd.Flags().IntVar(&cfg.Parallel, "parallel", 4, "users talking at once")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	cmd.Flags().StringVar(&plotDir, "plot", "", "draw the plots (PNG) into this folder")
	return cmd
}

// simDeps wires the simulation to the agent, the store and the workers.
func (a *App) simDeps(ctx context.Context) (experiment.SimDeps, error) {
	ag, err := a.Agent(ctx)
	if err != nil {
		return experiment.SimDeps{}, err
	}
	asm, err := a.Assembler(ctx)
	if err != nil {
		return experiment.SimDeps{}, err
	}
	if err := a.StartWorkers(ctx); err != nil {
		return experiment.SimDeps{}, err
	}
	return experiment.SimDeps{
		SetMode: func(ctx context.Context, user, mode string) error {
			return a.DB.SetMemoryMode(ctx, a.Scope(user), "*", mode)
		},
		Turn: func(ctx context.Context, user, thread, text string) ([]experiment.SimTitle, error) {
			resp, err := ag.Turn(ctx, a.Config.Tenant, agent.Request{User: user, Thread: thread, Message: text})
			if err != nil {
				return nil, err
			}
			out := make([]experiment.SimTitle, len(resp.Titles))
			for i, t := range resp.Titles {
				out[i] = experiment.SimTitle{ID: t.ID, Genres: t.Genres}
			}
			return out, nil
		},
		Wait: func(ctx context.Context) error { return a.WaitForJobs(ctx, simulateJobsTimeout) },
		Beliefs: func(ctx context.Context, user string) ([]string, error) {
			ms, err := a.DB.Memories(ctx, a.Scope(user), memento.MemoryFilter{})
			if err != nil {
				return nil, err
			}
			out := make([]string, len(ms))
			for i, m := range ms {
				out[i] = m.Value
			}
			return out, nil
		},
		ContextTokens: func(ctx context.Context, user, thread, query string) (int, error) {
			c, err := asm.Assemble(ctx, memento.RecallQuery{Scope: a.Scope(user), Thread: thread, Query: query})
			if err != nil {
				return 0, err
			}
			return c.Tokens, nil
		},
	}, nil
}
