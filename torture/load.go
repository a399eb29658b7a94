package torture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// LoadConfig configures RunLoad. Zero fields take the defaults named.
type LoadConfig struct {
	// Launcher starts the server on a new store in Dir; with URL set
	// instead, the load goes to a running server (on loopback) and
	// nothing is seeded or restarted.
	Launcher Launcher
	Dir      string
	URL      string
	// Clients is how many clients send at once; default 16.
	Clients int
	// Duration is how long the mixed load runs; default 20s.
	Duration time.Duration
	// Users is how many users are seeded, and the load spreads over;
	// default 20. SeedMessages is how many messages each gets before the
	// load; default 10.
	Users        int
	SeedMessages int
	// Restart stops the server after seeding and starts it again on the
	// same store before the load, so the load meets cold caches and a
	// freshly opened store.
	Restart bool
	// SameThread replaces the mixed load with one chat per client, all
	// sent at the same moment on one new thread, and checks afterwards
	// that the thread holds every message and every answer, in turn.
	SameThread bool
	// Mix weighs the operations of the mixed load: chat, append, context
	// and search; the zero value means 40/30/20/10.
	Mix LoadMix
	// RequestTimeout bounds each request; default 30s.
	RequestTimeout time.Duration
	// SeedBound bounds the wait for the seeded messages' jobs; default
	// 120s.
	SeedBound time.Duration
	// Seed makes the mix repeatable; 0 draws one.
	Seed     uint64
	Progress io.Writer
}

// LoadMix weighs the operations of the mixed load.
type LoadMix struct {
	Chat    int `json:"chat"`
	Append  int `json:"append"`
	Context int `json:"context"`
	Search  int `json:"search"`
}

func (c *LoadConfig) defaults() error {
	if c.URL == "" && (c.Launcher == nil || c.Dir == "") {
		return errors.New("load torture needs a server URL, or a launcher and a directory")
	}
	if c.URL != "" {
		if err := checkLoopback(c.URL); err != nil {
			return err
		}
		if c.Restart {
			return errors.New("--restart needs a server the test starts itself, not --url")
		}
	}
	if c.Clients == 0 {
		c.Clients = 16
	}
	if c.Duration == 0 {
		c.Duration = 20 * time.Second
	}
	if c.Users == 0 {
		c.Users = 20
	}
	if c.SeedMessages == 0 {
		c.SeedMessages = 10
	}
	if c.Mix == (LoadMix{}) {
		c.Mix = LoadMix{Chat: 40, Append: 30, Context: 20, Search: 10}
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = 30 * time.Second
	}
	if c.SeedBound == 0 {
		c.SeedBound = 120 * time.Second
	}
	if c.Seed == 0 {
		c.Seed = rand.Uint64()
	}
	switch {
	case c.Clients < 1 || c.Clients > 4096:
		return fmt.Errorf("clients must be between 1 and 4096, got %d", c.Clients)
	case c.Duration < 0 || c.Duration > time.Hour:
		return fmt.Errorf("duration must be between 0 and 1h, got %s", c.Duration)
	case c.Users < 1 || c.SeedMessages < 0:
		return fmt.Errorf("users must be at least 1 and seed messages not negative, got %d and %d", c.Users, c.SeedMessages)
	case c.Mix.Chat < 0 || c.Mix.Append < 0 || c.Mix.Context < 0 || c.Mix.Search < 0:
		return fmt.Errorf("the mix's weights must not be negative, got %+v", c.Mix)
	}
	return nil
}

// ThreadCheck is what the same-thread check found.
type ThreadCheck struct {
	User   string `json:"user"`
	Thread string `json:"thread"`
	// Sent is how many chats were sent, Answered how many got 2xx.
	Sent     int `json:"sent"`
	Answered int `json:"answered"`
	// UserMessages and Answers are what the thread holds.
	UserMessages int `json:"userMessages"`
	Answers      int `json:"answers"`
	// InTurn is true when the thread alternates message, answer, and
	// each sent message is there exactly once.
	InTurn   bool     `json:"inTurn"`
	Problems []string `json:"problems,omitempty"`
	OK       bool     `json:"ok"`
}

// LoadReport is the result of RunLoad.
type LoadReport struct {
	URL        string  `json:"url"`
	Clients    int     `json:"clients"`
	DurationMs Ms      `json:"durationMs"`
	Users      int     `json:"users"`
	Restarted  bool    `json:"restarted"`
	SameThread bool    `json:"sameThread"`
	Seed       uint64  `json:"seed"`
	Mix        LoadMix `json:"mix"`
	// ReadyMs is how long the load waited for the server to be ready for
	// traffic (/readyz) before it began: after the start or the restart
	// of a server it runs, or before loading one at URL.
	ReadyMs Ms `json:"readyMs"`
	// SeedMs is how long seeding took, jobs included.
	SeedMs Ms `json:"seedMs,omitempty"`
	// Requests, PerSecond (2xx answers per second) and Errors over every
	// operation; Statuses counts how requests ended.
	Requests  int                `json:"requests"`
	PerSecond float64            `json:"perSecond"`
	Errors    int                `json:"errors"`
	Statuses  map[string]int     `json:"statuses"`
	Ops       map[string]OpStats `json:"ops"`
	// RSSBytes is the server's resident memory at the end and PeakRSSBytes
	// its peak (from /proc for a child, else RSSBytes from /metrics).
	RSSBytes     int64  `json:"rssBytes"`
	PeakRSSBytes int64  `json:"peakRssBytes,omitempty"`
	RSSSource    string `json:"rssSource"`
	// Background is what memory formation did while the load ran, when
	// the server's /metrics says (a Memento server that forms memories).
	Background *LoadBackground `json:"background,omitempty"`
	// TurnSlots is how the chat turns waited for a slot while the load
	// ran, when the server bounds the turns computing at once.
	TurnSlots *LoadTurnSlots `json:"turnSlots,omitempty"`
	// Server is how long the server's goroutines waited for a processor
	// and its requests for a database connection while the load ran,
	// when its /metrics says.
	Server *LoadServer `json:"server,omitempty"`
	// Healthy is whether /healthz answered 200 after the load.
	Healthy bool         `json:"healthy"`
	Thread  *ThreadCheck `json:"thread,omitempty"`
	Crashed bool         `json:"crashed"`
	Error   string       `json:"error,omitempty"`
	// OK: every request answered 2xx, the server is healthy and alive,
	// and the same-thread check (if run) passed.
	OK bool `json:"ok"`
}

// RunLoad runs the load torture. It returns an error only when it could
// not start; what it found is in the report.
func RunLoad(ctx context.Context, cfg LoadConfig) (*LoadReport, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	rep := &LoadReport{Clients: cfg.Clients, Users: cfg.Users, Restarted: cfg.Restart, SameThread: cfg.SameThread, Seed: cfg.Seed, Mix: cfg.Mix}
	progress := func(format string, args ...any) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, format+"\n", args...)
		}
	}
	var srv Server
	base := cfg.URL
	if base == "" {
		if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
			return nil, err
		}
		db := filepath.Join(cfg.Dir, "memento.db")
		var err error
		if srv, err = cfg.Launcher.Start(ctx, db); err != nil {
			return nil, err
		}
		stopSrv := func(s Server) {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			_ = s.Stop(sctx)
		}
		// The load, and the seeding before it, begin once the server is
		// ready: a request sent while its start-up work runs shares the
		// processors with it, and a deployment's readiness probe would
		// hold it back too.
		if err := waitReady(ctx, srv.URL(), cfg, rep); err != nil {
			stopSrv(srv)
			return nil, err
		}
		seedStart := time.Now()
		if err := seed(ctx, NewClient(srv.URL(), cfg.RequestTimeout), cfg); err != nil {
			stopSrv(srv)
			return nil, err
		}
		rep.SeedMs = ms(time.Since(seedStart))
		progress("load: seeded %d users with %d messages each in %s", cfg.Users, cfg.SeedMessages, time.Since(seedStart).Round(time.Millisecond))
		if cfg.Restart {
			stopSrv(srv)
			if srv, err = cfg.Launcher.Start(ctx, db); err != nil {
				return nil, fmt.Errorf("restart after seeding: %w", err)
			}
			progress("load: restarted at %s", srv.URL())
			if err := waitReady(ctx, srv.URL(), cfg, rep); err != nil {
				stopSrv(srv)
				return nil, err
			}
		}
		defer stopSrv(srv)
		base = srv.URL()
	} else if err := waitReady(ctx, base, cfg, rep); err != nil {
		return nil, err
	}
	rep.URL = base
	cl := NewClient(base, cfg.RequestTimeout)
	defer cl.Close()
	rec := newRecorder()
	before, beforeErr := cl.Metrics(ctx)
	start := time.Now()
	if cfg.SameThread {
		rep.Thread = sameThread(ctx, cl, rec, cfg)
	} else {
		mixedLoad(ctx, cl, rec, cfg)
	}
	elapsed := time.Since(start)
	rep.DurationMs = ms(elapsed)
	rep.Ops = rec.stats(elapsed)
	rep.Statuses = rec.statuses()
	ok := 0
	for _, o := range rep.Ops {
		rep.Requests += o.Requests
		rep.Errors += o.Errors
		ok += o.Requests - o.Errors
	}
	if elapsed > 0 {
		rep.PerSecond = float64(ok) / elapsed.Seconds()
	}
	if after, err := cl.Metrics(ctx); err == nil && beforeErr == nil {
		rep.Background = background(before, after, elapsed)
		rep.TurnSlots = turnSlots(before, after)
		rep.Server = serverQueues(before, after)
	}
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	rep.Healthy = cl.Healthy(hctx)
	cancel()
	if srv != nil && srv.PID() > 0 {
		if rss, peak, err := ProcMemory(srv.PID()); err == nil {
			rep.RSSBytes, rep.PeakRSSBytes, rep.RSSSource = rss, peak, "/proc/status"
		}
		rep.Crashed, _ = srv.Exited()
	}
	if rep.RSSSource == "" {
		if rss, err := cl.RSS(ctx); err == nil {
			rep.RSSBytes, rep.RSSSource = rss, "/metrics"
		} else {
			rep.RSSSource = "unknown: " + err.Error()
		}
	}
	rep.OK = rep.Errors == 0 && rep.Requests > 0 && rep.Healthy && !rep.Crashed && (rep.Thread == nil || rep.Thread.OK)
	return rep, nil
}

// LoadBackground is what memory formation did while a load ran, read from
// the server's /metrics before and after it. The requests' figures alone
// would not show a server that answers quickly by leaving its memories
// unformed: on two processors, 64 clients send messages faster than the
// background forms their memories, and these say how far it fell behind.
type LoadBackground struct {
	// Formed counts the messages whose memories were written during the
	// load (memento_memory_lag_seconds), and LagMeanMs is their mean time
	// from being stored to their memories.
	Formed    int64 `json:"formed"`
	LagMeanMs Ms    `json:"lagMeanMs,omitempty"`
	// FormedPerSecond is Formed over the load's duration.
	FormedPerSecond float64 `json:"formedPerSecond"`
	// Waiting counts the background jobs not ended when the load ended,
	// and OldestMs is the age of the oldest (memento_queue_waiting_jobs
	// and memento_queue_oldest_waiting_seconds, read at most a second
	// before).
	Waiting  int64 `json:"waiting"`
	OldestMs Ms    `json:"oldestMs"`
}

// readyTimeout bounds the wait for a server to be ready for traffic.
const readyTimeout = 2 * time.Minute

// waitReady waits until the server at url is ready for traffic and
// records the wait in rep.
func waitReady(ctx context.Context, url string, cfg LoadConfig, rep *LoadReport) error {
	cl := NewClient(url, cfg.RequestTimeout)
	defer cl.Close()
	took, err := cl.WaitReady(ctx, readyTimeout)
	if err != nil {
		return err
	}
	rep.ReadyMs = ms(took)
	if cfg.Progress != nil {
		fmt.Fprintf(cfg.Progress, "load: the server at %s was ready after %s\n", url, took.Round(time.Millisecond))
	}
	return nil
}

// background compares two readings of /metrics taken elapsed apart; nil
// when the server reports no memory formation.
func background(before, after map[string]float64, elapsed time.Duration) *LoadBackground {
	count, ok := after["memento_memory_lag_seconds_count"]
	if !ok {
		return nil
	}
	b := &LoadBackground{Formed: int64(count - before["memento_memory_lag_seconds_count"])}
	if b.Formed > 0 {
		sum := after["memento_memory_lag_seconds_sum"] - before["memento_memory_lag_seconds_sum"]
		b.LagMeanMs = Ms(math.Round(sum*1e6/float64(b.Formed)) / 1000)
	}
	if elapsed > 0 {
		b.FormedPerSecond = math.Round(float64(b.Formed)/elapsed.Seconds()*10) / 10
	}
	for name, v := range after {
		switch {
		case strings.HasPrefix(name, "memento_queue_waiting_jobs{"):
			b.Waiting += int64(v)
		case strings.HasPrefix(name, "memento_queue_oldest_waiting_seconds{"):
			b.OldestMs = max(b.OldestMs, Ms(math.Round(v*1e6)/1000))
		}
	}
	return b
}

// LoadTurnSlots is how chat turns waited for the server's turn slots
// (--turn-slots) while a load ran, read from /metrics before and after
// it: under more clients than slots, a turn's time is mostly this wait.
type LoadTurnSlots struct {
	// Slots is how many turns compute at once (memento_turn_slots).
	Slots int `json:"slots"`
	// Taken counts the slots taken during the load, and WaitedMeanMs is
	// the mean time a turn waited for one
	// (memento_turn_slot_wait_seconds_total over
	// memento_turn_slots_taken_total).
	Taken        int64 `json:"taken"`
	WaitedMeanMs Ms    `json:"waitedMeanMs"`
}

// turnSlots compares two readings of /metrics; nil when the server bounds
// no turns.
func turnSlots(before, after map[string]float64) *LoadTurnSlots {
	n, ok := after["memento_turn_slots"]
	if !ok {
		return nil
	}
	t := &LoadTurnSlots{Slots: int(n), Taken: int64(after["memento_turn_slots_taken_total"] - before["memento_turn_slots_taken_total"])}
	if t.Taken > 0 {
		waited := after["memento_turn_slot_wait_seconds_total"] - before["memento_turn_slot_wait_seconds_total"]
		t.WaitedMeanMs = Ms(math.Round(waited*1e6/float64(t.Taken)) / 1000)
	}
	return t
}

// LoadServer is what a request waited for in the server beyond its own
// work while a load ran, read from /metrics before and after it: a
// processor, which goroutines made ready to run wait for when the
// processors are busy (every step of a request that hands over to
// another goroutine, or waits for the disk or the network, is a wake-up),
// and on PostgreSQL a connection of the pool.
type LoadServer struct {
	// Wakeups counts the goroutines made ready to run during the load
	// (go_sched_latencies_seconds), and WaitedOverShare is the share of
	// them that waited longer than WaitedOverMs for a processor: the
	// bound of the runtime's histogram nearest below 1 ms.
	Wakeups         int64   `json:"wakeups"`
	WaitedOverMs    float64 `json:"waitedOverMs"`
	WaitedOverShare float64 `json:"waitedOverShare"`
	// PoolWaits counts the connections taken from the PostgreSQL pool
	// after a wait, because every one was in use, and PoolWaitMs is
	// those waits in all (memento_postgres_pool_empty_acquires_total,
	// _empty_acquire_wait_seconds_total).
	PoolWaits  int64 `json:"poolWaits,omitempty"`
	PoolWaitMs Ms    `json:"poolWaitMs,omitempty"`
}

// schedBucket is the name of a bucket of the runtime's scheduling
// latencies as /metrics gives it, before its bound.
const schedBucket = `go_sched_latencies_seconds_bucket{le="`

// serverQueues compares two readings of /metrics; nil when the server
// reports no scheduling latencies.
func serverQueues(before, after map[string]float64) *LoadServer {
	total, ok := after["go_sched_latencies_seconds_count"]
	if !ok {
		return nil
	}
	srv := &LoadServer{Wakeups: int64(total - before["go_sched_latencies_seconds_count"])}
	// The bucket of the largest bound up to 1 ms counts the wake-ups
	// that waited at most that long.
	bound, within := 0.0, 0.0
	for name, v := range after {
		le, found := strings.CutPrefix(name, schedBucket)
		if !found {
			continue
		}
		b, err := strconv.ParseFloat(strings.TrimSuffix(le, `"}`), 64)
		if err != nil || b > 0.001 || b <= bound {
			continue
		}
		bound, within = b, v-before[name]
	}
	if bound > 0 && srv.Wakeups > 0 {
		srv.WaitedOverMs = math.Round(bound*1e5) / 100
		srv.WaitedOverShare = math.Round((float64(srv.Wakeups)-within)/float64(srv.Wakeups)*1e4) / 1e4
	}
	if _, ok := after["memento_postgres_pool_empty_acquires_total"]; ok {
		srv.PoolWaits = int64(after["memento_postgres_pool_empty_acquires_total"] - before["memento_postgres_pool_empty_acquires_total"])
		waited := after["memento_postgres_pool_empty_acquire_wait_seconds_total"] - before["memento_postgres_pool_empty_acquire_wait_seconds_total"]
		srv.PoolWaitMs = Ms(math.Round(waited * 1e3))
	}
	return srv
}

// seedTexts are what seeded users said: facts the memory pipeline keeps.
var seedTexts = []string{
	"I love crime thrillers like Heat",
	"My favourite director is Michael Mann",
	"I hate horror films",
	"I enjoy slow science fiction",
	"Comedies from the eighties make me happy",
	"I watched The Godfather again yesterday",
	"Please no musicals",
	"My partner loves romantic dramas",
	"I like movies with Robert De Niro",
	"Animated films are great for family nights",
}

// seed gives every user messages and one chat, then waits for their jobs,
// so the load reads real memories.
func seed(ctx context.Context, cl *Client, cfg LoadConfig) error {
	defer cl.Close()
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for u := range cfg.Users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			user := fmt.Sprintf("load-u%d", u)
			fail := func(what string, r Result) {
				mu.Lock()
				defer mu.Unlock()
				if firstErr == nil {
					firstErr = fmt.Errorf("seed %s: %s: status %d %v %s", user, what, r.Code, r.Err, truncate(string(r.Body), 200))
				}
			}
			for k := range cfg.SeedMessages {
				text := seedTexts[(u+k)%len(seedTexts)]
				if r := cl.Append(ctx, user, "seed", fmt.Sprintf("seed-%d-%d", u, k), text); !r.OK() {
					fail("append", r)
					return
				}
			}
			if r := cl.Chat(ctx, user, "seed-chat", "Something like Heat please"); !r.OK() {
				fail("chat", r)
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	ended, unfinished, err := waitJobs(ctx, cl, time.Now(), cfg.SeedBound)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	if ended < 0 {
		return fmt.Errorf("seed: %d jobs still unfinished after %s", unfinished, cfg.SeedBound)
	}
	return nil
}

// loadQueries are what the load asks the agent, the context and the
// catalog.
var loadQueries = []string{
	"a tense crime thriller", "something funny for tonight", "a film like Heat",
	"science fiction from the seventies", "a romantic drama", "movies with Al Pacino",
	"an animated film for the family", "something dark and slow",
}

func mixedLoad(ctx context.Context, cl *Client, rec *recorder, cfg LoadConfig) {
	weights := []weighted{{"chat", cfg.Mix.Chat}, {"append", cfg.Mix.Append}, {"context", cfg.Mix.Context}, {"search", cfg.Mix.Search}}
	rng := rand.New(rand.NewPCG(cfg.Seed, 2))
	seeds := make([]uint64, cfg.Clients)
	for i := range seeds {
		seeds[i] = rng.Uint64()
	}
	runCtx, stop := context.WithTimeout(ctx, cfg.Duration)
	defer stop()
	// Every client starts at the same moment, as the 64 chats
	// after a restart do.
	startGun := make(chan struct{})
	var wg sync.WaitGroup
	for i := range cfg.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			crng := rand.New(rand.NewPCG(seeds[i], uint64(i)))
			user := fmt.Sprintf("load-u%d", i%cfg.Users)
			<-startGun
			for k := 0; runCtx.Err() == nil; k++ {
				q := loadQueries[crng.IntN(len(loadQueries))]
				// A request in flight when the time is up still gets its
				// answer, or its timeout: a hang must show.
				rctx := context.WithoutCancel(ctx)
				var res Result
				op := pick(crng, weights)
				switch op {
				case "chat":
					res = cl.Chat(rctx, user, fmt.Sprintf("load-chat-%d", i), q)
				case "append":
					res = cl.Append(rctx, user, fmt.Sprintf("load-log-%d", i), fmt.Sprintf("load-%d-%d-%d", cfg.Seed%1000000, i, k), seedTexts[crng.IntN(len(seedTexts))])
				case "context":
					res = cl.Context(rctx, user, "seed-chat", q)
				case "search":
					res = cl.Search(rctx, q)
				}
				rec.add(op, res)
			}
		}()
	}
	rec.begin(time.Now())
	close(startGun)
	wg.Wait()
}

// sameThread sends one chat per client at the same moment on one new
// thread and checks what the thread then holds.
func sameThread(ctx context.Context, cl *Client, rec *recorder, cfg LoadConfig) *ThreadCheck {
	chk := &ThreadCheck{User: "load-u0", Thread: fmt.Sprintf("same-thread-%d", cfg.Seed%1000000), Sent: cfg.Clients}
	texts := make([]string, cfg.Clients)
	for i := range texts {
		texts[i] = fmt.Sprintf("%s (turn %d)", loadQueries[i%len(loadQueries)], i)
	}
	startGun := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range cfg.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-startGun
			res := cl.Chat(ctx, chk.User, chk.Thread, texts[i])
			rec.add("chat", res)
			if res.OK() {
				mu.Lock()
				chk.Answered++
				mu.Unlock()
			}
		}()
	}
	close(startGun)
	wg.Wait()

	msgs, err := cl.Thread(ctx, chk.User, chk.Thread)
	if err != nil {
		chk.Problems = append(chk.Problems, err.Error())
		return chk
	}
	seen := map[string]int{}
	chk.InTurn = true
	for i, m := range msgs {
		want := "user"
		if i%2 == 1 {
			want = "assistant"
		}
		if m.Role != want && chk.InTurn {
			chk.InTurn = false
			chk.Problems = append(chk.Problems, fmt.Sprintf("message %d is from %s, want %s: the turns interleave", i+1, m.Role, want))
		}
		switch m.Role {
		case "user":
			chk.UserMessages++
			seen[m.Text]++
		case "assistant":
			chk.Answers++
		}
	}
	for _, t := range texts {
		if n := seen[t]; n != 1 {
			chk.InTurn = false
			if len(chk.Problems) < maxProblems {
				chk.Problems = append(chk.Problems, fmt.Sprintf("message %q is stored %d times", t, n))
			}
		}
	}
	chk.OK = chk.Answered == chk.Sent && chk.UserMessages == chk.Sent && chk.Answers == chk.Sent && chk.InTurn
	return chk
}
