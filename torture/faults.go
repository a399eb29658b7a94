package torture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// FaultsConfig configures RunFaults. Zero fields take the defaults named.
type FaultsConfig struct {
	// Launcher starts the server; required. RunFaults adds the arguments
	// that point it at the fault server.
	Launcher Launcher
	// Dir holds the store; required. The caller removes it.
	Dir string
	// Duration is how long clients send requests; default 30s.
	Duration time.Duration
	// Clients is how many clients send at once; default 8.
	Clients int
	// Users is how many users they share; default 4.
	Users int
	// Rates are the fault rates; the zero value means DefaultFaultRates.
	Rates FaultRates
	// SlowDelay is how long a slow answer waits; default 2s.
	SlowDelay time.Duration
	// Settle bounds the wait, after the model server heals, for every job
	// to end; default 60s.
	Settle time.Duration
	// RequestTimeout bounds each request; default 30s.
	RequestTimeout time.Duration
	// Seed makes the faults and the request mix repeatable; 0 draws one.
	Seed uint64
	// Progress, if set, gets a line per phase.
	Progress io.Writer
}

func (c *FaultsConfig) defaults() error {
	if c.Launcher == nil || c.Dir == "" {
		return errors.New("faults torture needs a launcher and a directory")
	}
	if c.Duration == 0 {
		c.Duration = 30 * time.Second
	}
	if c.Clients == 0 {
		c.Clients = 8
	}
	if c.Users == 0 {
		c.Users = 4
	}
	if c.Rates == (FaultRates{}) {
		c.Rates = DefaultFaultRates
	}
	if c.SlowDelay == 0 {
		c.SlowDelay = 2 * time.Second
	}
	if c.Settle == 0 {
		c.Settle = 60 * time.Second
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = 30 * time.Second
	}
	if c.Seed == 0 {
		c.Seed = rand.Uint64()
	}
	switch {
	case c.Duration < 0 || c.Duration > time.Hour:
		return fmt.Errorf("duration must be between 0 and 1h, got %s", c.Duration)
	case c.Clients < 1 || c.Clients > 1024:
		return fmt.Errorf("clients must be between 1 and 1024, got %d", c.Clients)
	case c.Users < 1:
		return fmt.Errorf("users must be at least 1, got %d", c.Users)
	case c.Settle < 0 || c.RequestTimeout < 0 || c.SlowDelay < 0:
		return errors.New("durations must not be negative")
	}
	return c.Rates.Validate()
}

// FaultsReport is the result of RunFaults.
type FaultsReport struct {
	DurationMs Ms         `json:"durationMs"`
	Clients    int        `json:"clients"`
	Seed       uint64     `json:"seed"`
	Rates      FaultRates `json:"rates"`
	// Requests and Statuses are the requests the clients sent and how
	// they ended; Ops breaks them down by operation.
	Requests int                `json:"requests"`
	Statuses map[string]int     `json:"statuses"`
	Ops      map[string]OpStats `json:"ops"`
	// Status500 counts 500 answers: a model's fault must never be one.
	Status500 int `json:"status500"`
	// Model counts what the fault server answered, per endpoint and fault.
	Model map[string]map[string]int `json:"model"`
	// Crashes is 1 if the server died during the run.
	Crashes  int    `json:"crashes"`
	CrashLog string `json:"crashLog,omitempty"`
	// JobsEnded says whether every job ended (completed or dead-lettered)
	// within the settle bound after the model healed; JobStates counts
	// the jobs by state at that moment, and StuckRunning those still
	// running, which a model fault must never leave.
	JobsEnded    bool           `json:"jobsEnded"`
	JobsEndedMs  Ms             `json:"jobsEndedMs"`
	JobStates    map[string]int `json:"jobStates"`
	StuckRunning int            `json:"stuckRunning"`
	DeadLetters  int            `json:"deadLetters"`
	// Samples are the first bodies of answers other than 2xx, by
	// status, to see why.
	Samples map[string][]string `json:"samples,omitempty"`
	Error   string              `json:"error,omitempty"`
	OK      bool                `json:"ok"`
}

// RunFaults runs the fault torture: a fault server, a server pointed at
// it, clients sending chats and appends for the duration, then the model
// heals and every job must end. It returns an error only when it could not
// start; what it found is in the report.
func RunFaults(ctx context.Context, cfg FaultsConfig) (*FaultsReport, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	fs, err := NewFaultServer(cfg.Rates, cfg.Seed)
	if err != nil {
		return nil, err
	}
	fs.SlowDelay = cfg.SlowDelay
	defer fs.Close()
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	db := filepath.Join(cfg.Dir, "memento.db")
	srv, err := cfg.Launcher.Start(ctx, db,
		"--llm-provider", "openai", "--llm-base-url", fs.URL, "--llm-model", "torture",
		"--embed-provider", "openai", "--embed-model", "torture-embed")
	if err != nil {
		return nil, err
	}
	rep := &FaultsReport{Clients: cfg.Clients, Seed: cfg.Seed, Rates: cfg.Rates, JobsEndedMs: -1}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = srv.Stop(sctx)
	}()
	progress := func(format string, args ...any) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, format+"\n", args...)
		}
	}
	progress("faults: server at %s, model server at %s, rates %+v", srv.URL(), fs.URL, cfg.Rates)

	rec := newRecorder()
	cl := NewClient(srv.URL(), cfg.RequestTimeout)
	defer cl.Close()
	var samples sync.Mutex
	rng := rand.New(rand.NewPCG(cfg.Seed, 1))
	seeds := make([]uint64, cfg.Clients)
	for i := range seeds {
		seeds[i] = rng.Uint64()
	}
	runCtx, stop := context.WithTimeout(ctx, cfg.Duration)
	defer stop()
	start := time.Now()
	var wg sync.WaitGroup
	for i := range cfg.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			crng := rand.New(rand.NewPCG(seeds[i], uint64(i)))
			user := fmt.Sprintf("faults-u%d", i%cfg.Users)
			thread := fmt.Sprintf("faults-t%d", i)
			for k := 0; runCtx.Err() == nil; k++ {
				text := fmt.Sprintf("%s (note %d-%d)", crashTexts[crng.IntN(len(crashTexts))], i, k)
				// Requests are not cut by the end of the run: one in
				// flight gets its answer, or its timeout.
				var op string
				var res Result
				if crng.IntN(2) == 0 {
					op, res = "chat", cl.Chat(context.WithoutCancel(ctx), user, thread, text)
				} else {
					op, res = "append", cl.Append(context.WithoutCancel(ctx), user, thread, fmt.Sprintf("f-%d-%d", i, k), text)
				}
				rec.add(op, res)
				if !res.OK() {
					samples.Lock()
					if rep.Samples == nil {
						rep.Samples = map[string][]string{}
					}
					if len(rep.Samples[res.Class]) < 3 {
						body := string(res.Body)
						if res.Err != nil {
							body = res.Err.Error()
						}
						rep.Samples[res.Class] = append(rep.Samples[res.Class], op+": "+truncate(body, 400))
					}
					samples.Unlock()
				}
				if crashed, _ := srv.Exited(); crashed {
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	rep.DurationMs = ms(elapsed)
	rep.Ops = rec.stats(elapsed)
	rep.Statuses = rec.statuses()
	rep.Status500 = rep.Statuses["500"]
	for _, o := range rep.Ops {
		rep.Requests += o.Requests
	}
	if crashed, how := srv.Exited(); crashed {
		rep.Crashes = 1
		rep.CrashLog = how + "\n" + srv.Log()
		rep.Model = fs.Counts()
		return rep, nil
	}
	progress("faults: %d requests in %s, statuses %v; the model server heals", rep.Requests, elapsed.Round(time.Millisecond), rep.Statuses)

	// The model comes back: every job must now end, by completing or by
	// running out of attempts, within the settle bound.
	fs.Heal()
	healed := time.Now()
	ended, _, err := waitJobs(ctx, cl, healed, cfg.Settle)
	if err != nil {
		rep.Error = err.Error()
	}
	rep.JobsEnded = ended >= 0
	if rep.JobsEnded {
		rep.JobsEndedMs = ms(ended)
	}
	states, err := cfg.Launcher.JobStates(ctx, db)
	if err != nil && rep.Error == "" {
		rep.Error = err.Error()
	}
	if states["running"] > 0 && err == nil {
		// A retry may be running at this very moment; a stuck job is
		// still running a few seconds later.
		time.Sleep(5 * time.Second)
		if again, err := cfg.Launcher.JobStates(ctx, db); err == nil {
			states = again
		}
	}
	rep.JobStates = states
	rep.StuckRunning = states["running"]
	rep.DeadLetters = states["failed"]
	rep.Model = fs.Counts()
	if crashed, how := srv.Exited(); crashed {
		rep.Crashes = 1
		rep.CrashLog = how + "\n" + srv.Log()
	}
	progress("faults: jobs ended %v (%v), states %v", rep.JobsEnded, time.Duration(rep.JobsEndedMs*Ms(time.Millisecond)), states)
	rep.OK = rep.Status500 == 0 && rep.Crashes == 0 && rep.StuckRunning == 0 && rep.Error == ""
	return rep, nil
}
