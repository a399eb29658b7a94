package torture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// CrashConfig configures RunCrash. Zero fields take the defaults named.
type CrashConfig struct {
	// Launcher starts the servers; required.
	Launcher Launcher
	// Dir holds each trial's store; required. The caller removes it.
	Dir string
	// Trials is how many kill-and-restart trials run; default 10.
	Trials int
	// Clients is how many clients write at once; default 8.
	Clients int
	// Users is how many users the clients share; default 4.
	Users int
	// ChatPercent is the share of requests that are chats rather than
	// message appends; default 25. A negative value sends no chats.
	ChatPercent int
	// KillAfter is the earliest and latest moment, after the clients
	// start, at which the server is killed; the moment is drawn uniformly
	// between them. Default 1s to 5s.
	KillAfter [2]time.Duration
	// JobsBound is how long after a restart every job must have ended;
	// default 60s.
	JobsBound time.Duration
	// RequestTimeout bounds each request; default 30s.
	RequestTimeout time.Duration
	// Seed makes the kill moments and the request mix repeatable; 0 draws
	// one.
	Seed uint64
	// Progress, if set, gets a line per trial.
	Progress io.Writer
}

func (c *CrashConfig) defaults() error {
	if c.Launcher == nil || c.Dir == "" {
		return errors.New("crash torture needs a launcher and a directory")
	}
	if c.Trials == 0 {
		c.Trials = 10
	}
	if c.Clients == 0 {
		c.Clients = 8
	}
	if c.Users == 0 {
		c.Users = 4
	}
	if c.ChatPercent == 0 {
		c.ChatPercent = 25
	}
	if c.ChatPercent < 0 {
		c.ChatPercent = 0
	}
	if c.KillAfter == [2]time.Duration{} {
		c.KillAfter = [2]time.Duration{time.Second, 5 * time.Second}
	}
	if c.JobsBound == 0 {
		c.JobsBound = 60 * time.Second
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = 30 * time.Second
	}
	if c.Seed == 0 {
		c.Seed = rand.Uint64()
	}
	switch {
	case c.Trials < 1 || c.Trials > 1000:
		return fmt.Errorf("trials must be between 1 and 1000, got %d", c.Trials)
	case c.Clients < 1 || c.Clients > 1024:
		return fmt.Errorf("clients must be between 1 and 1024, got %d", c.Clients)
	case c.Users < 1:
		return fmt.Errorf("users must be at least 1, got %d", c.Users)
	case c.ChatPercent > 100:
		return fmt.Errorf("chat share must be at most 100%%, got %d", c.ChatPercent)
	case c.KillAfter[0] < 0 || c.KillAfter[1] < c.KillAfter[0]:
		return fmt.Errorf("kill window %s..%s is not a range", c.KillAfter[0], c.KillAfter[1])
	case c.JobsBound < 0 || c.RequestTimeout < 0:
		return errors.New("bounds must not be negative")
	}
	return nil
}

// CrashTrial is what one kill-and-restart trial found.
type CrashTrial struct {
	Trial int `json:"trial"`
	// KilledAfter is when, after the clients started, SIGKILL was sent.
	KilledAfter Ms `json:"killedAfterMs"`
	// Acknowledged counts the writes the server answered 2xx before it
	// died: appended messages and chat turns.
	Acknowledged int `json:"acknowledged"`
	AckMessages  int `json:"ackMessages"`
	AckChats     int `json:"ackChats"`
	// Unanswered are requests the kill cut off: they may or may not be
	// stored, but never twice.
	Unanswered int `json:"unanswered"`
	// Lost counts acknowledged writes missing after the restart (a chat
	// counts once for its message and once more if its answer is gone).
	Lost int `json:"lost"`
	// Duplicates counts extra copies of messages (by id or by text).
	Duplicates int `json:"duplicates"`
	// Memories is how many memory versions the users hold after the
	// restart's jobs ended; DuplicateMemories how many of them repeat
	// another's kind, attribute, value and sources.
	Memories          int `json:"memories"`
	DuplicateMemories int `json:"duplicateMemories"`
	// RestartMs is the time from starting the server again until it
	// listened; JobsEndedMs until no job was left unfinished (-1: not
	// within the bound).
	RestartMs   Ms   `json:"restartMs"`
	JobsEndedMs Ms   `json:"jobsEndedMs"`
	JobsEnded   bool `json:"jobsEnded"`
	// Unfinished is how many jobs had not ended at the bound.
	Unfinished int `json:"unfinished"`
	// DeadLetters is how many jobs failed for good.
	DeadLetters int `json:"deadLetters"`
	// Problems describes the first lost or duplicated writes.
	Problems []string `json:"problems,omitempty"`
	// Error is why the trial could not be judged, if it could not.
	Error string `json:"error,omitempty"`
}

// CrashReport is the result of RunCrash.
type CrashReport struct {
	Trials       int          `json:"trials"`
	Clients      int          `json:"clients"`
	Seed         uint64       `json:"seed"`
	JobsBoundMs  Ms           `json:"jobsBoundMs"`
	Results      []CrashTrial `json:"results"`
	Acknowledged int          `json:"acknowledged"`
	Lost         int          `json:"lost"`
	Duplicates   int          `json:"duplicates"`
	// DuplicateMemories and DeadLetters add up the trials'.
	DuplicateMemories int `json:"duplicateMemories"`
	DeadLetters       int `json:"deadLetters"`
	// MaxJobsEndedMs is the slowest trial's time until its jobs ended.
	MaxJobsEndedMs Ms `json:"maxJobsEndedMs"`
	// Failed counts trials that lost or duplicated something, whose jobs
	// did not end within the bound, or that could not be judged.
	Failed int  `json:"failed"`
	OK     bool `json:"ok"`
}

// RunCrash runs the crash torture: per trial a new store, concurrent
// clients, SIGKILL at a random moment, a restart on the same file and the
// checks. It returns an error only when it could not run at all; what it
// found is in the report.
func RunCrash(ctx context.Context, cfg CrashConfig) (*CrashReport, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x746f7274757265))
	rep := &CrashReport{Trials: cfg.Trials, Clients: cfg.Clients, Seed: cfg.Seed, JobsBoundMs: ms(cfg.JobsBound), Results: []CrashTrial{}}
	for i := 1; i <= cfg.Trials; i++ {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		t := crashTrial(ctx, cfg, i, rng)
		rep.Results = append(rep.Results, t)
		rep.Acknowledged += t.Acknowledged
		rep.Lost += t.Lost
		rep.Duplicates += t.Duplicates
		rep.DuplicateMemories += t.DuplicateMemories
		rep.DeadLetters += t.DeadLetters
		rep.MaxJobsEndedMs = max(rep.MaxJobsEndedMs, t.JobsEndedMs)
		if t.Lost > 0 || t.Duplicates > 0 || t.DuplicateMemories > 0 || !t.JobsEnded || t.Error != "" {
			rep.Failed++
		}
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "trial %d: killed after %.0f ms, %d acknowledged, %d lost, %d duplicates, %d duplicate memories, jobs ended %s%s\n",
				i, t.KilledAfter, t.Acknowledged, t.Lost, t.Duplicates, t.DuplicateMemories, jobsEndedText(t), errText(t.Error))
		}
	}
	rep.OK = rep.Failed == 0
	return rep, nil
}

func jobsEndedText(t CrashTrial) string {
	if !t.JobsEnded {
		return fmt.Sprintf("NOT within the bound (%d unfinished)", t.Unfinished)
	}
	return fmt.Sprintf("%.0f ms after the restart", t.JobsEndedMs)
}

func errText(s string) string {
	if s == "" {
		return ""
	}
	return "; error: " + s
}

// sent is one write a client made and the server acknowledged.
type sent struct {
	user, thread string
	id           string // client id of an append; "" for a chat
	text         string
	chat         bool
}

// crashTexts are the statements clients write: ones the memory pipeline
// forms memories of, so that a job run twice would show.
var crashTexts = []string{
	"I love heist thrillers with a clever crew",
	"My favourite actor is Al Pacino",
	"I can't stand horror movies",
	"I watched Heat last week and loved it",
	"I prefer films from the nineties",
	"Romantic comedies are my guilty pleasure",
	"I don't like musicals at all",
	"Recommend me something like Collateral",
}

func crashTrial(ctx context.Context, cfg CrashConfig, n int, rng *rand.Rand) (t CrashTrial) {
	t = CrashTrial{Trial: n, JobsEndedMs: -1}
	dir := filepath.Join(cfg.Dir, fmt.Sprintf("trial-%d", n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Error = err.Error()
		return t
	}
	db := filepath.Join(dir, "memento.db")
	srv, err := cfg.Launcher.Start(ctx, db)
	if err != nil {
		t.Error = err.Error()
		return t
	}
	killAt := cfg.KillAfter[0]
	if span := cfg.KillAfter[1] - cfg.KillAfter[0]; span > 0 {
		killAt += time.Duration(rng.Int64N(int64(span)))
	}
	seeds := make([]uint64, cfg.Clients)
	for i := range seeds {
		seeds[i] = rng.Uint64()
	}

	// Clients write until the kill; each keeps what was acknowledged.
	cl := NewClient(srv.URL(), cfg.RequestTimeout)
	wctx, stopWriters := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var acked []sent
	unanswered := 0
	start := time.Now()
	for i := range cfg.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			crng := rand.New(rand.NewPCG(seeds[i], uint64(i)))
			user := fmt.Sprintf("crash-u%d", i%cfg.Users)
			thread := fmt.Sprintf("crash-t%d", i)
			for k := 0; wctx.Err() == nil; k++ {
				s := sent{user: user, thread: thread, text: fmt.Sprintf("%s (note %d-%d-%d)", crashTexts[crng.IntN(len(crashTexts))], n, i, k)}
				var res Result
				if crng.IntN(100) < cfg.ChatPercent {
					s.chat = true
					res = cl.Chat(wctx, user, thread, s.text)
				} else {
					s.id = fmt.Sprintf("c%d-%d-%d", n, i, k)
					res = cl.Append(wctx, user, thread, s.id, s.text)
				}
				mu.Lock()
				if res.OK() {
					acked = append(acked, s)
				} else if res.Code == 0 {
					unanswered++
				}
				mu.Unlock()
				if res.Code == 0 {
					// The server is gone (or hung): stop rather than
					// hammer a closed port.
					return
				}
			}
		}()
	}
	select {
	case <-time.After(killAt):
	case <-ctx.Done():
	}
	t.KilledAfter = ms(time.Since(start))
	if crashed, how := srv.Exited(); crashed {
		t.Error = fmt.Sprintf("the server died by itself before the kill (%s); its log ends:\n%s", how, srv.Log())
	}
	killErr := srv.Kill()
	stopWriters()
	wg.Wait()
	cl.Close()
	if killErr != nil && t.Error == "" {
		t.Error = killErr.Error()
	}
	for _, s := range acked {
		if s.chat {
			t.AckChats++
		} else {
			t.AckMessages++
		}
	}
	t.Acknowledged, t.Unanswered = len(acked), unanswered
	if t.Error != "" || ctx.Err() != nil {
		return t
	}

	// Restart on the same file and wait for the jobs to end.
	restart := time.Now()
	srv, err = cfg.Launcher.Start(ctx, db)
	if err != nil {
		t.Error = "restart: " + err.Error()
		return t
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := srv.Stop(sctx); err != nil && t.Error == "" {
			t.Error = err.Error()
		}
		if t.Error == "" {
			if states, err := cfg.Launcher.JobStates(sctx, db); err != nil {
				t.Error = err.Error()
			} else {
				t.DeadLetters = states["failed"]
			}
		}
	}()
	t.RestartMs = ms(time.Since(restart))
	cl = NewClient(srv.URL(), cfg.RequestTimeout)
	defer cl.Close()
	ended, unfinished, err := waitJobs(ctx, cl, restart, cfg.JobsBound)
	if err != nil {
		t.Error = err.Error()
		return t
	}
	t.JobsEnded, t.Unfinished = ended >= 0, unfinished
	if ended >= 0 {
		t.JobsEndedMs = ms(ended)
	}
	check := checkWrites(ctx, cl, acked, cfg.Users, "crash-u")
	t.Lost, t.Duplicates, t.Memories, t.DuplicateMemories, t.Problems = check.lost, check.duplicates, check.memories, check.dupMemories, check.problems
	if check.err != nil {
		t.Error = check.err.Error()
	}
	if crashed, how := srv.Exited(); crashed && t.Error == "" {
		t.Error = fmt.Sprintf("the restarted server died (%s); its log ends:\n%s", how, srv.Log())
	}
	return t
}

// waitJobs polls the server until no job is unfinished, and returns the
// time since from when that was first seen, or -1 and the last count when
// the bound passed first.
func waitJobs(ctx context.Context, cl *Client, since time.Time, bound time.Duration) (time.Duration, int, error) {
	last := -1
	var lastErr error
	for {
		n, err := cl.Unfinished(ctx)
		if err == nil && n == 0 {
			return time.Since(since), 0, nil
		}
		if err == nil {
			last, lastErr = n, nil
		} else {
			lastErr = err
		}
		if time.Since(since) > bound {
			if last < 0 && lastErr != nil {
				return -1, 0, fmt.Errorf("jobs: the server never reported them: %w", lastErr)
			}
			return -1, last, nil
		}
		select {
		case <-ctx.Done():
			return -1, last, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// writeCheck is what checkWrites found.
type writeCheck struct {
	lost, duplicates      int
	memories, dupMemories int
	problems              []string
	err                   error
}

// maxProblems bounds the problems a report lists.
const maxProblems = 10

func (w *writeCheck) problem(format string, args ...any) {
	if len(w.problems) < maxProblems {
		w.problems = append(w.problems, fmt.Sprintf(format, args...))
	}
}

// checkWrites reads back every thread the acknowledged writes went to,
// and the memories of the users, and counts what is missing or repeated.
// A chat's message must be stored once and followed by an answer.
func checkWrites(ctx context.Context, cl *Client, acked []sent, users int, userPrefix string) writeCheck {
	var w writeCheck
	type key struct{ user, thread string }
	byThread := map[key][]sent{}
	for _, s := range acked {
		k := key{s.user, s.thread}
		byThread[k] = append(byThread[k], s)
	}
	for k, writes := range byThread {
		msgs, err := cl.Thread(ctx, k.user, k.thread)
		if err != nil {
			w.err = err
			return w
		}
		ids := map[string]int{}
		texts := map[string][]int{} // user messages by text: their positions
		for i, m := range msgs {
			ids[m.ID]++
			if m.Role == "user" {
				texts[m.Text] = append(texts[m.Text], i)
			}
		}
		for id, c := range ids {
			if c > 1 {
				w.duplicates += c - 1
				w.problem("%s/%s: message id %s stored %d times", k.user, k.thread, id, c)
			}
		}
		for text, at := range texts {
			if len(at) > 1 && distinctIDs(msgs, at) {
				w.duplicates += len(at) - 1
				w.problem("%s/%s: message %q stored %d times under different ids", k.user, k.thread, text, len(at))
			}
		}
		for _, s := range writes {
			at := texts[s.text]
			switch {
			case !s.chat && ids[s.id] == 0:
				w.lost++
				w.problem("%s/%s: acknowledged message %s is missing", k.user, k.thread, s.id)
			case s.chat && len(at) == 0:
				w.lost++
				w.problem("%s/%s: acknowledged chat message %q is missing", k.user, k.thread, s.text)
			case s.chat && (at[0]+1 >= len(msgs) || msgs[at[0]+1].Role != "assistant"):
				w.lost++
				w.problem("%s/%s: the answer to acknowledged chat message %q is missing", k.user, k.thread, s.text)
			}
		}
	}
	for u := range users {
		user := fmt.Sprintf("%s%d", userPrefix, u)
		mems, err := cl.Memories(ctx, user)
		if err != nil {
			w.err = err
			return w
		}
		w.memories += len(mems)
		seenID := map[string]bool{}
		seen := map[string]bool{}
		for _, m := range mems {
			k := strings.Join([]string{m.Kind, m.Attribute, m.Value, strings.Join(m.Sources, ",")}, "\x00")
			switch {
			case seenID[m.ID]:
				w.dupMemories++
				w.problem("%s: memory id %s listed twice", user, m.ID)
			case seen[k]:
				w.dupMemories++
				w.problem("%s: memory %s=%q from %v stored twice", user, m.Attribute, m.Value, m.Sources)
			}
			seenID[m.ID], seen[k] = true, true
		}
	}
	return w
}

// distinctIDs reports whether the messages at the positions carry
// different ids (a repeated id is counted once, as an id duplicate).
func distinctIDs(msgs []Message, at []int) bool {
	first := msgs[at[0]].ID
	for _, i := range at[1:] {
		if msgs[i].ID != first {
			return true
		}
	}
	return false
}
