package main

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/engine"
	"github.com/memento-ai/memento/experiment"
	"github.com/memento-ai/memento/prefs"
	"github.com/memento-ai/memento/recall"
)

// simulateJobsTimeout bounds the wait for one session's background jobs.
const simulateJobsTimeout = 10 * time.Minute

func (m *Main) experimentSimulateCommand() *cobra.Command {
	var cfg experiment.SimConfig
	var arms, baselines, plotDir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Run the long-horizon study: simulated users whose tastes change, over many sessions, per memory setting",
		Long: `Simulate scripts users whose tastes change over time (genres and people liked, hated,
taken up and dropped; platforms changed; weights drifting unsaid) and lets them talk to
the agent session after session, a simulated week apart, through the real message log
and memory pipeline, once per arm with the same histories. Each session they ask for ten
titles (a request drawn from their current taste: anything, a genre, a genre and decade,
a favourite person, a decade); given a poor list, they name the titles they have seen
or turn it down.

After each session it measures, per arm: the share of stored beliefs contradicting the
user's current taste (stale beliefs), the tokens of their memory and of the context
document of each request, and each list's hit rate, NDCG@10, good@10, disliked@10 and
seen@10 against how the user would rate its titles now. --baselines adds arms the
measures must tell apart (none: no long-term memory). An arm is [name=]mode{+option}:
mode semantic, episodic or none; options decay=off or decay=DURATION (the preference
weights' taste half-life, such as 30d) and frozen (memory told only the first session).
--plot DIR draws each measure against the sessions. Without --db it uses a fresh
temporary store; everything runs offline.`,
		Example: "  memento experiment simulate --users 200 --sessions 20 --arms semantic,episodic --seed 1 --json --plot plots/\n" +
			"  memento experiment simulate --arms episodic,episodic+decay=30d,episodic+decay=off --baselines none,semantic+frozen",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			as, err := experiment.ParseArms(strings.Trim(arms+","+baselines, ","))
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
			// The calendar starts now and runs ahead of the wall clock, so
			// what reads the wall clock sees no time pass, as before.
			cfg.Start = time.Now().UTC().Truncate(time.Second)
			clock := experiment.NewSimClock(cfg.Start)
			deps, err := simDeps(ctx, app, cfg.Arms, clock)
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
	cmd.Flags().StringVar(&arms, "arms", "semantic,episodic", "comma-separated arms, each [name=]mode{+option}: semantic, episodic or none; +decay=off, +decay=30d, +frozen")
	cmd.Flags().StringVar(&baselines, "baselines", experiment.ModeNone, "arms added to --arms to show the measures can fail (none, MODE+frozen); \"\" adds no baseline")
	cmd.Flags().Uint64Var(&cfg.Seed, "seed", 1, "seed of the users' tastes and histories")
	cmd.Flags().Float64Var(&cfg.ChangeRate, "change-rate", 0.35, "chance that a session brings a change of taste")
	cmd.Flags().IntVar(&cfg.Parallel, "parallel", 4, "users talking at once")
	cmd.Flags().DurationVar(&cfg.SessionGap, "session-gap", 7*24*time.Hour, "simulated time between sessions")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	cmd.Flags().StringVar(&plotDir, "plot", "", "draw the plots (PNG) into this folder")
	return cmd
}

// simDeps wires the simulation to an agent per arm, the store and the
// workers. Every arm's agent is the engine's on the simulation's clock,
// with its own preference signal reading the arm's decay on that clock.
func simDeps(ctx context.Context, a *engine.Engine, arms []experiment.Arm, clock *experiment.SimClock) (experiment.SimDeps, error) {
	base, err := a.Agent(ctx)
	if err != nil {
		return experiment.SimDeps{}, err
	}
	agents := map[string]*agent.Agent{}
	for _, arm := range arms {
		if agents[arm.Name], err = armAgent(base, arm, clock); err != nil {
			return experiment.SimDeps{}, err
		}
	}
	cat, err := a.Catalog(ctx)
	if err != nil {
		return experiment.SimDeps{}, err
	}
	all := cat.All()
	titles := make([]experiment.SimTitle, len(all))
	for i, t := range all {
		titles[i] = experiment.SimTitle{ID: t.ID, Genres: t.Genres, Year: t.Year, Cast: t.Cast}
	}
	asm, err := a.Assembler(ctx)
	if err != nil {
		return experiment.SimDeps{}, err
	}
	if err := a.StartWorkers(ctx); err != nil {
		return experiment.SimDeps{}, err
	}
	return experiment.SimDeps{
		Titles: titles,
		Clock:  clock,
		SetMode: func(ctx context.Context, user, mode string) error {
			return a.Store.SetMemoryMode(ctx, a.Scope(user), "*", mode)
		},
		Turn: func(ctx context.Context, arm experiment.Arm, user, thread, text string) ([]experiment.SimTitle, error) {
			resp, err := agents[arm.Name].Turn(ctx, a.Config.Tenant, agent.Request{User: user, Thread: thread, Message: text})
			if err != nil {
				return nil, err
			}
			out := make([]experiment.SimTitle, len(resp.Titles))
			for i, t := range resp.Titles {
				out[i] = experiment.SimTitle{ID: t.ID, Genres: t.Genres, Year: t.Year}
			}
			return out, nil
		},
		Wait: func(ctx context.Context) error { return waitForJobs(ctx, a.Store, simulateJobsTimeout) },
		Beliefs: func(ctx context.Context, user string) ([]string, error) {
			ms, err := a.Store.Memories(ctx, a.Scope(user), memento.MemoryFilter{})
			if err != nil {
				return nil, err
			}
			out := make([]string, len(ms))
			for i, m := range ms {
				out[i] = m.Value
			}
			return out, nil
		},
		Context: func(ctx context.Context, user, thread, query string, now time.Time) (experiment.SimContext, error) {
			c, err := asm.Assemble(ctx, memento.RecallQuery{Scope: a.Scope(user), Thread: thread, Query: query, Now: now})
			if err != nil {
				return experiment.SimContext{}, err
			}
			return experiment.SimContext{Tokens: c.Tokens, Holds: contextHolds(c)}, nil
		},
	}, nil
}

// simulateJobsPoll is how often the simulation looks whether a session's
// jobs have ended. A session's thousands of jobs take seconds, and a
// tighter poll (engine.WaitForJobs asks every 5 ms) cost a twentieth of
// the simulation's processor time.
const simulateJobsPoll = 50 * time.Millisecond

// waitForJobs returns once no background job is left unfinished.
func waitForJobs(ctx context.Context, q interface {
	Unfinished(ctx context.Context) (int, error)
}, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		n, err := q.Unfinished(ctx)
		if err != nil || n == 0 {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("background jobs still running after %s (%d left)", timeout, n)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(simulateJobsPoll):
		}
	}
}

// contextHolds counts what a context document renders: its attributes
// section's lines, its summary and its recalled items by kind (a recalled
// semantic value is left out when the attributes section lists the values,
// as recall.Render does).
func contextHolds(c *recall.Context) map[string]int {
	holds := map[string]int{}
	if n := len(c.Attributes); n > 0 {
		holds["attributes"] = n
	}
	if c.Summary != nil {
		holds[memento.RecallSummary] = 1
	}
	for _, it := range c.Items {
		if it.Kind == memento.RecallAttribute && len(c.Attributes) > 0 {
			continue
		}
		holds[it.Kind]++
	}
	return holds
}

// armAgent returns the engine's agent as one arm runs it: stamping turns
// with the simulation's clock, and with the arm's decay in its preference
// signal (read on the same clock); for mode none, without any of its
// long-term memory. Errors: EINVALID when the arm sets
// decay and the agent has no preference signal to set it on.
func armAgent(base *agent.Agent, arm experiment.Arm, clock memento.Clock) (*agent.Agent, error) {
	ag := cloneExported(base)
	ag.Clock = clock
	if arm.Mode == experiment.ModeNone {
		// The agent without long-term memory: no recall, no attribute
		// memories, no preference or profile signal, and no background
		// jobs to build any. What is left is the catalog, the ranking's
		// prior and the thread's short-term memory.
		ag.Memory, ag.Attributes, ag.Scorers, ag.EventJobs = nil, nil, nil, nil
		ag.Jobs = func(memento.Scope, string, []memento.Message) []memento.JobRequest { return nil }
		return ag, nil
	}
	ag.Scorers = slices.Clone(base.Scorers)
	decayed := false
	for i, sc := range ag.Scorers {
		ps, ok := sc.(*prefs.Scorer)
		if !ok {
			continue
		}
		svc := cloneExported(ps.Prefs)
		svc.Clock = clock
		halfLife, off := arm.HalfLife()
		svc.Config.Decay.Off = off
		if halfLife > 0 {
			svc.Config.Decay.TasteHalfLife = halfLife
		}
		scorer := cloneExported(ps)
		scorer.Prefs = svc
		ag.Scorers[i] = scorer
		decayed = true
	}
	if arm.Decay != "" && !decayed {
		return nil, memento.Errorf(memento.EINVALID, "arm %q sets decay, but the agent has no preference signal to decay", arm.Name)
	}
	return ag, nil
}

// cloneExported returns a new T holding p's exported fields and fresh
// unexported ones (locks, caches): a component configured as p is, whatever
// fields its type gains later, without copying a lock.
func cloneExported[T any](p *T) *T {
	c := new(T)
	src, dst := reflect.ValueOf(p).Elem(), reflect.ValueOf(c).Elem()
	for i := range src.NumField() {
		if src.Type().Field(i).IsExported() {
			dst.Field(i).Set(src.Field(i))
		}
	}
	return c
}
