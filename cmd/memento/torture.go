package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/torture"
)

func (m *Main) tortureCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "torture",
		Short: "Try to make a server lose, duplicate or hang: crash, model faults and load",
		Long: `Torture tests anyone can rerun, bounded in time and on loopback only. Each starts
` + "`memento serve`" + ` (this same binary) as a child process on a temporary store, drives it
through the HTTP API and judges it by what the API reads back:

  crash   kill -9 during concurrent appends and chats, restart on the same file:
          acknowledged, lost, duplicates, time until every job ended
  faults  a model server that fails (5xx, hangs, malformed JSON, missing fields,
          slow answers): status codes, 500s (must be 0), crashes, stuck jobs
  load    C clients for T seconds of chats, appends, context reads and searches:
          throughput, p50/p99, errors, resident memory

Each exits non-zero when its invariants fail. --json prints the report as JSON.
The child gets --catalog and --schema when given; it uses the offline model
unless the test says otherwise.`,
	}
	cmd.AddCommand(m.tortureCrashCommand(), m.tortureFaultsCommand(), m.tortureLoadCommand())
	return cmd
}

// tortureEnv is what the torture commands share: the child launcher and a
// temporary folder for the stores.
type tortureEnv struct {
	launcher *torture.Exec
	dir      string
}

func (m *Main) tortureSetup(keep bool) (*tortureEnv, error) {
	bin, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("torture: find this binary to run as the server: %w", err)
	}
	args := []string{"--llm-provider", "offline", "--embed-provider", "offline", "--log-level", "info"}
	if m.Config.Catalog != "" {
		args = append(args, "--catalog", m.Config.Catalog)
	}
	if m.Config.Schema != "" {
		args = append(args, "--schema", m.Config.Schema)
	}
	if m.Config.Intake {
		args = append(args, "--intake")
	}
	if m.Config.IntakePath != "" {
		args = append(args, "--intake-path", m.Config.IntakePath)
	}
	dir, err := os.MkdirTemp("", "memento-torture-")
	if err != nil {
		return nil, err
	}
	if !keep {
		m.tempDirs = append(m.tempDirs, dir)
	} else {
		fmt.Fprintln(m.Stderr, "torture: stores kept in", dir)
	}
	return &tortureEnv{launcher: &torture.Exec{Binary: bin, Args: args}, dir: dir}, nil
}

// tortureProgress is where a command's progress lines go: standard error, unless
// --quiet.
func (m *Main) tortureProgress(quiet bool) io.Writer {
	if quiet {
		return nil
	}
	return m.Stderr
}

func (m *Main) tortureCrashCommand() *cobra.Command {
	var cfg torture.CrashConfig
	var asJSON, keep, quiet bool
	var killMin, killMax time.Duration
	cmd := &cobra.Command{
		Use:   "crash",
		Short: "Kill the server with SIGKILL during concurrent writes, restart it and check what it acknowledged",
		Long: `Run --trials trials, each on a new store: start the server, let --clients clients
append messages and chat (a quarter of the requests) for a random moment between
--kill-min and --kill-max, kill the server with SIGKILL, start it again on the same
file, wait for every job to end and read everything back. Fails when an
acknowledged message or chat answer is missing, a message or memory is stored
twice, or the jobs have not all ended --jobs-bound after the restart.`,
		Example: "  memento torture crash --trials 10\n  memento torture crash --trials 3 --clients 16 --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			env, err := m.tortureSetup(keep)
			if err != nil {
				return err
			}
			cfg.Launcher, cfg.Dir, cfg.Progress = env.launcher, env.dir, m.tortureProgress(quiet || asJSON)
			cfg.KillAfter = [2]time.Duration{killMin, killMax}
			rep, err := torture.RunCrash(cmd.Context(), cfg)
			if err != nil {
				return memento.Errorf(memento.EINVALID, "torture crash: %v", err)
			}
			if err := m.tortureReport(asJSON, rep, func() { m.printCrash(rep) }); err != nil {
				return err
			}
			if !rep.OK {
				return fmt.Errorf("torture crash failed: %d of %d trials lost (%d), duplicated (%d messages, %d memories) or left jobs unfinished", rep.Failed, rep.Trials, rep.Lost, rep.Duplicates, rep.DuplicateMemories)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Trials, "trials", 10, "kill-and-restart trials, each on a new store")
	f.IntVar(&cfg.Clients, "clients", 8, "clients writing at once")
	f.IntVar(&cfg.Users, "users", 4, "users the clients share")
	f.IntVar(&cfg.ChatPercent, "chat-percent", 25, "share of requests that are chats, in percent (the rest append messages)")
	f.DurationVar(&killMin, "kill-min", time.Second, "earliest kill, after the clients start")
	f.DurationVar(&killMax, "kill-max", 5*time.Second, "latest kill, after the clients start")
	f.DurationVar(&cfg.JobsBound, "jobs-bound", 60*time.Second, "every job must have ended this long after a restart")
	f.DurationVar(&cfg.RequestTimeout, "request-timeout", 30*time.Second, "bound of each request")
	f.Uint64Var(&cfg.Seed, "seed", 0, "seed of the kill moments and the request mix (0: random, printed in the report)")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	f.BoolVar(&keep, "keep", false, "keep the trials' stores (the folder is printed)")
	f.BoolVar(&quiet, "quiet", false, "no progress lines on standard error")
	return cmd
}

func (m *Main) printCrash(rep *torture.CrashReport) {
	w := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "TRIAL\tKILLED AT\tACKED\tMESSAGES\tCHATS\tCUT OFF\tLOST\tDUPLICATES\tMEMORIES\tDUP MEMORIES\tRESTART\tJOBS ENDED\tDEAD LETTERS")
	for _, t := range rep.Results {
		ended := fmt.Sprintf("%.0f ms", t.JobsEndedMs)
		if !t.JobsEnded {
			ended = fmt.Sprintf("no (%d left)", t.Unfinished)
		}
		fmt.Fprintf(w, "%d\t%.0f ms\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.0f ms\t%s\t%d\n", t.Trial, t.KilledAfter, t.Acknowledged, t.AckMessages, t.AckChats, t.Unanswered,
			t.Lost, t.Duplicates, t.Memories, t.DuplicateMemories, t.RestartMs, ended, t.DeadLetters)
	}
	w.Flush()
	fmt.Fprintf(m.Stdout, "total: %d acknowledged, %d lost, %d duplicate messages, %d duplicate memories, %d dead letters; slowest jobs end %.0f ms after a restart (bound %.0f ms); seed %d\n",
		rep.Acknowledged, rep.Lost, rep.Duplicates, rep.DuplicateMemories, rep.DeadLetters, rep.MaxJobsEndedMs, rep.JobsBoundMs, rep.Seed)
	for _, t := range rep.Results {
		for _, p := range t.Problems {
			fmt.Fprintf(m.Stdout, "trial %d: %s\n", t.Trial, p)
		}
		if t.Error != "" {
			fmt.Fprintf(m.Stdout, "trial %d: error: %s\n", t.Trial, t.Error)
		}
	}
	fmt.Fprintln(m.Stdout, verdict(rep.OK))
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

func (m *Main) tortureFaultsCommand() *cobra.Command {
	var cfg torture.FaultsConfig
	var asJSON, keep, quiet bool
	r := torture.DefaultFaultRates
	cmd := &cobra.Command{
		Use:   "faults",
		Short: "Run the server against a model server that fails, and check no fault becomes a 500",
		Long: `Start an OpenAI-compatible model server in this process that answers 5xx, never
answers (a timeout), answers cut-off JSON, answers missing a required field, or
answers slowly, at the given rates, and a server pointed at it (language model and
embedder). --clients clients chat and append messages for --duration; then the
model server heals and every job must end within --settle (completed, or a dead
letter). Fails on any 500 answer, a server crash, or a job left running.`,
		Example: "  memento torture faults --duration 30s\n  memento torture faults --server-error 0.3 --timeout 0 --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			env, err := m.tortureSetup(keep)
			if err != nil {
				return err
			}
			cfg.Launcher, cfg.Dir, cfg.Progress = env.launcher, env.dir, m.tortureProgress(quiet || asJSON)
			cfg.Rates = r
			if cfg.Rates == (torture.FaultRates{}) {
				return memento.Errorf(memento.EINVALID, "torture faults: every fault rate is 0; give at least one")
			}
			rep, err := torture.RunFaults(cmd.Context(), cfg)
			if err != nil {
				return memento.Errorf(memento.EINVALID, "torture faults: %v", err)
			}
			if err := m.tortureReport(asJSON, rep, func() { m.printFaults(rep) }); err != nil {
				return err
			}
			if !rep.OK {
				return fmt.Errorf("torture faults failed: %d answers 500, %d crashes, %d jobs stuck running%s", rep.Status500, rep.Crashes, rep.StuckRunning, errSuffix(rep.Error))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.DurationVar(&cfg.Duration, "duration", 30*time.Second, "how long clients send requests")
	f.IntVar(&cfg.Clients, "clients", 8, "clients sending at once")
	f.IntVar(&cfg.Users, "users", 4, "users the clients share")
	f.Float64Var(&r.ServerError, "server-error", r.ServerError, "share of model calls answered 500, 502 or 503")
	f.Float64Var(&r.Timeout, "timeout", r.Timeout, "share of model calls never answered")
	f.Float64Var(&r.Malformed, "malformed", r.Malformed, "share of model calls answered with cut-off JSON")
	f.Float64Var(&r.MissingField, "missing-field", r.MissingField, "share of model calls answered without a required field")
	f.Float64Var(&r.Slow, "slow", r.Slow, "share of model calls answered after --slow-delay")
	f.DurationVar(&cfg.SlowDelay, "slow-delay", 2*time.Second, "delay of a slow answer")
	f.DurationVar(&cfg.Settle, "settle", 60*time.Second, "after the model heals, every job should end within this")
	f.DurationVar(&cfg.RequestTimeout, "request-timeout", 30*time.Second, "bound of each request")
	f.Uint64Var(&cfg.Seed, "seed", 0, "seed of the faults and the request mix (0: random, printed in the report)")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	f.BoolVar(&keep, "keep", false, "keep the store (the folder is printed)")
	f.BoolVar(&quiet, "quiet", false, "no progress lines on standard error")
	return cmd
}

func errSuffix(s string) string {
	if s == "" {
		return ""
	}
	return "; " + s
}

func (m *Main) printFaults(rep *torture.FaultsReport) {
	fmt.Fprintf(m.Stdout, "%d requests in %.1f s by %d clients (seed %d)\n", rep.Requests, float64(rep.DurationMs)/1000, rep.Clients, rep.Seed)
	m.printOps(rep.Ops)
	fmt.Fprintf(m.Stdout, "statuses: %s\n", countsText(rep.Statuses))
	for _, path := range sortedNames(rep.Model) {
		fmt.Fprintf(m.Stdout, "model %s: %s\n", path, countsText(rep.Model[path]))
	}
	ended := "no"
	if rep.JobsEnded {
		ended = fmt.Sprintf("yes, %.0f ms after the model healed", rep.JobsEndedMs)
	}
	fmt.Fprintf(m.Stdout, "500s: %d  crashes: %d  every job ended: %s  jobs: %s  stuck running: %d\n", rep.Status500, rep.Crashes, ended, countsText(rep.JobStates), rep.StuckRunning)
	for _, class := range sortedNames(rep.Samples) {
		for _, s := range rep.Samples[class] {
			fmt.Fprintf(m.Stdout, "%s: %s\n", class, s)
		}
	}
	if rep.CrashLog != "" {
		fmt.Fprintln(m.Stdout, "crash:", rep.CrashLog)
	}
	if rep.Error != "" {
		fmt.Fprintln(m.Stdout, "error:", rep.Error)
	}
	fmt.Fprintln(m.Stdout, verdict(rep.OK))
}

func (m *Main) printOps(ops map[string]torture.OpStats) {
	w := tabwriter.NewWriter(m.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "OPERATION\tREQUESTS\tERRORS\tPER SECOND\tP50\tP99\tMAX\tAFTER 1 S: P99\tMAX\tSTATUSES")
	for _, op := range sortedNames(ops) {
		o := ops[op]
		settled := "-\t-"
		if a := o.AfterStart; a != nil {
			settled = fmt.Sprintf("%.1f ms\t%.1f ms", a.P99, a.Max)
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%.1f\t%.1f ms\t%.1f ms\t%.1f ms\t%s\t%s\n", op, o.Requests, o.Errors, o.PerSecond, o.P50, o.P99, o.Max, settled, countsText(o.Statuses))
	}
	w.Flush()
}

func countsText(m map[string]int) string {
	var parts []string
	for _, k := range sortedNames(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func (m *Main) tortureLoadCommand() *cobra.Command {
	var cfg torture.LoadConfig
	var asJSON, keep, quiet bool
	cmd := &cobra.Command{
		Use:   "load",
		Short: "Drive concurrent chats, appends, context reads and searches and measure",
		Long: `Start a server on a new store, seed --users users (--seed-messages messages and a
chat each, jobs waited for), optionally restart it (--restart: the load then meets
a freshly opened store), and let --clients clients send a mix of chats, message
appends, context reads and catalog searches for --duration, all starting at the
same moment. Reports throughput, p50/p99 per operation, errors by status and the
server's resident memory. --same-thread sends instead one chat per client at the
same moment on one new thread and checks that the thread holds every message and
every answer, in turn. --url loads a running server on loopback instead (no
seeding). Fails when any request does not answer 2xx.`,
		Example: "  memento torture load --clients 64 --duration 20s --restart\n  memento torture load --clients 16 --same-thread",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.URL == "" {
				env, err := m.tortureSetup(keep)
				if err != nil {
					return err
				}
				cfg.Launcher, cfg.Dir = env.launcher, env.dir
			} else if err := torture.CheckLoopback(cfg.URL); err != nil {
				return memento.Errorf(memento.EINVALID, "--url: %v", err)
			}
			cfg.Progress = m.tortureProgress(quiet || asJSON)
			rep, err := torture.RunLoad(cmd.Context(), cfg)
			if err != nil {
				return memento.Errorf(memento.EINVALID, "torture load: %v", err)
			}
			if err := m.tortureReport(asJSON, rep, func() { m.printLoad(rep) }); err != nil {
				return err
			}
			if !rep.OK {
				msg := fmt.Sprintf("torture load failed: %d of %d requests did not answer 2xx", rep.Errors, rep.Requests)
				if rep.Thread != nil && !rep.Thread.OK {
					msg += fmt.Sprintf("; the thread holds %d of %d messages and %d answers", rep.Thread.UserMessages, rep.Thread.Sent, rep.Thread.Answers)
				}
				if !rep.Healthy {
					msg += "; /healthz fails afterwards"
				}
				return fmt.Errorf("%s", msg)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Clients, "clients", 16, "clients sending at once")
	f.DurationVar(&cfg.Duration, "duration", 20*time.Second, "how long the mixed load runs")
	f.IntVar(&cfg.Users, "users", 20, "users seeded, and spread over")
	f.IntVar(&cfg.SeedMessages, "seed-messages", 10, "messages each seeded user gets")
	f.BoolVar(&cfg.Restart, "restart", false, "restart the server after seeding, before the load")
	f.BoolVar(&cfg.SameThread, "same-thread", false, "one chat per client at once on one thread, then check the thread")
	f.StringVar(&cfg.URL, "url", "", "load this running server (loopback only) instead of starting one")
	f.IntVar(&cfg.Mix.Chat, "chat", 40, "weight of chats in the mix")
	f.IntVar(&cfg.Mix.Append, "append", 30, "weight of message appends in the mix")
	f.IntVar(&cfg.Mix.Context, "context", 20, "weight of context reads in the mix")
	f.IntVar(&cfg.Mix.Search, "search", 10, "weight of catalog searches in the mix")
	f.DurationVar(&cfg.RequestTimeout, "request-timeout", 30*time.Second, "bound of each request: a hang shows as a timeout")
	f.Uint64Var(&cfg.Seed, "seed", 0, "seed of the mix (0: random)")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	f.BoolVar(&keep, "keep", false, "keep the store (the folder is printed)")
	f.BoolVar(&quiet, "quiet", false, "no progress lines on standard error")
	return cmd
}

func (m *Main) printLoad(rep *torture.LoadReport) {
	what := "mixed load"
	if rep.SameThread {
		what = "same-thread chats"
	}
	restarted := ""
	if rep.Restarted {
		restarted = ", server restarted after seeding"
	}
	fmt.Fprintf(m.Stdout, "%s: %d clients, %.1f s, %d users%s (seed %d), begun once the server was ready (after %.1f s)\n", what, rep.Clients, float64(rep.DurationMs)/1000, rep.Users, restarted, rep.Seed, float64(rep.ReadyMs)/1000)
	m.printOps(rep.Ops)
	fmt.Fprintf(m.Stdout, "total: %d requests, %.1f answered per second, %d errors (%s)\n", rep.Requests, rep.PerSecond, rep.Errors, countsText(rep.Statuses))
	fmt.Fprintf(m.Stdout, "server memory: %.0f MiB resident", float64(rep.RSSBytes)/(1<<20))
	if rep.PeakRSSBytes > 0 {
		fmt.Fprintf(m.Stdout, ", %.0f MiB peak", float64(rep.PeakRSSBytes)/(1<<20))
	}
	fmt.Fprintf(m.Stdout, " (%s); healthy afterwards: %v\n", rep.RSSSource, rep.Healthy)
	if b := rep.Background; b != nil {
		fmt.Fprintf(m.Stdout, "memory formation: %d messages' memories written (%.1f per second, %.0f ms after their message on average); %d background jobs waiting at the end, the oldest %.1f s old\n",
			b.Formed, b.FormedPerSecond, float64(b.LagMeanMs), b.Waiting, float64(b.OldestMs)/1000)
	}
	if ts := rep.TurnSlots; ts != nil {
		fmt.Fprintf(m.Stdout, "turn slots: %d; %d chat turns took one, after waiting %.1f ms on average\n", ts.Slots, ts.Taken, float64(ts.WaitedMeanMs))
	}
	if sv := rep.Server; sv != nil {
		fmt.Fprintf(m.Stdout, "server: %.1f%% of %d goroutine wake-ups waited over %.2f ms for a processor", 100*sv.WaitedOverShare, sv.Wakeups, sv.WaitedOverMs)
		if sv.PoolWaits > 0 {
			fmt.Fprintf(m.Stdout, "; %d requests waited for a database connection, %.1f s in all", sv.PoolWaits, float64(sv.PoolWaitMs)/1000)
		}
		fmt.Fprintln(m.Stdout)
	}
	if t := rep.Thread; t != nil {
		fmt.Fprintf(m.Stdout, "thread %s/%s: %d sent, %d answered, holds %d messages and %d answers, in turn: %v\n", t.User, t.Thread, t.Sent, t.Answered, t.UserMessages, t.Answers, t.InTurn)
		for _, p := range t.Problems {
			fmt.Fprintln(m.Stdout, "  ", p)
		}
	}
	fmt.Fprintln(m.Stdout, verdict(rep.OK))
}

// sortedNames returns a map's keys in order.
func sortedNames[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// tortureReport writes a torture run's report: as JSON with --json, else
// as the table print writes.
func (m *Main) tortureReport(asJSON bool, rep any, print func()) error {
	if asJSON {
		return json.NewEncoder(m.Stdout).Encode(rep)
	}
	print()
	return nil
}
