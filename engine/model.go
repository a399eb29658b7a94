package engine

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/llm/budget"
	"github.com/memento-ai/memento/llm/fallback"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/llm/openai"
	"github.com/memento-ai/memento/prefs"
	"github.com/memento-ai/memento/profile"
)

// Model returns the configured language model, opening it on first use.
// The offline model reads people's names and genres from the catalog. An
// OpenAI-compatible model has the offline model as its stand-in for
// answers that stay unusable after repair (llm/fallback): the turn or the
// run trace notes each one, and the person still gets an answer. With
// Config.Budget set, the per-tenant token budgets go around it.
func (e *Engine) Model(ctx context.Context) (memento.LanguageModel, error) {
	e.modelMu.Lock()
	defer e.modelMu.Unlock()
	if e.model != nil {
		return e.model, nil
	}
	switch e.Config.LLM.Provider {
	case "openai":
		opts := []openai.Option{openai.WithRegisterer(e.Registry), openai.WithLogger(e.Logger)}
		standIn := offline.New(offline.Options{})
		if cat, err := e.Catalog(ctx); err == nil {
			opts = append(opts, openai.WithGenres(cat.Genres()))
			standIn = offline.New(offline.Options{People: cat, Genres: cat.Genres(), Titles: cat.ResolveTitle})
		}
		m, err := openai.New(e.Config.OpenAI(), opts...)
		if err != nil {
			return nil, err
		}
		fb, err := fallback.New(m, standIn, fallback.Options{Logger: e.Logger, Registerer: e.Registry})
		if err != nil {
			return nil, err
		}
		var model memento.LanguageModel = fb
		if b := e.Config.Budget; b != nil {
			bm, err := budget.New(fb, standIn, budget.Options{
				DailyTokens: b.DailyTokens, Tenants: b.Tenants, DefaultTenant: e.Config.Tenant,
				Logger: e.Logger, Registerer: e.Registry,
			})
			if err != nil {
				return nil, err
			}
			model = bm
		}
		e.model = model
	default:
		cat, err := e.Catalog(ctx)
		if err != nil {
			return nil, err
		}
		e.model = offline.New(offline.Options{People: cat, Genres: cat.Genres(), Titles: cat.ResolveTitle})
	}
	e.Logger.Info("language model", "provider", e.Config.LLM.Provider, "name", e.model.Name())
	return e.model, nil
}

// Embedder returns the configured embedder, opening it on first use.
func (e *Engine) Embedder(ctx context.Context) (memento.Embedder, error) {
	e.embedderMu.Lock()
	defer e.embedderMu.Unlock()
	if e.embedder != nil {
		return e.embedder, nil
	}
	switch e.Config.Embed.Provider {
	case "openai":
		e.modelMu.Lock()
		model := e.model
		e.modelMu.Unlock()
		if m := OpenAIModel(model); m != nil && m.Embedder() != nil {
			e.embedder = m.Embedder()
			break
		}
		em, err := openai.NewEmbedder(e.Config.OpenAI(), openai.WithRegisterer(e.Registry), openai.WithLogger(e.Logger))
		if err != nil {
			return nil, err
		}
		e.embedder = em
	default:
		e.embedder = offline.NewEmbedder(e.Config.Embed.Dim)
	}
	e.Logger.Info("embedder", "provider", e.Config.Embed.Provider, "id", e.embedder.ID())
	return e.embedder, nil
}

// OpenAIModel returns the OpenAI-compatible provider behind m, past its
// wrappers (llm/budget, llm/fallback), or nil when m is another provider.
func OpenAIModel(m memento.LanguageModel) *openai.Model {
	for {
		w, ok := m.(interface{ Primary() memento.LanguageModel })
		if !ok {
			break
		}
		m = w.Primary()
	}
	om, _ := m.(*openai.Model)
	return om
}

// Agent returns the recommendation agent over the engine's store, catalog
// and model, with the preference and profile memories as ranking signals
// and recall as its long-term memory.
func (e *Engine) Agent(ctx context.Context) (*agent.Agent, error) {
	e.agentMu.Lock()
	defer e.agentMu.Unlock()
	if e.agent != nil {
		return e.agent, nil
	}
	cat, err := e.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	model, err := e.Model(ctx)
	if err != nil {
		return nil, err
	}
	prefScorer, err := e.PrefsScorer(ctx)
	if err != nil {
		return nil, err
	}
	profileScorer, err := e.ProfileScorer(ctx)
	if err != nil {
		return nil, err
	}
	emotion, err := e.EmotionClassifier(ctx)
	if err != nil {
		return nil, err
	}
	e.agent = &agent.Agent{
		Emotion: emotion,
		Catalog: cat,
		Threads: e.Store,
		Model:   model,
		Logger:  e.Logger,
		Jobs:    e.TurnJobs,
		Scorers: []agent.Scorer{prefScorer, profileScorer},
		// The offline writer steps in when a model's reply names a title
		// the answer does not show.
		Fallback: offline.New(offline.Options{}),
		Memory:   e.agentMemory(ctx),
		Resolve:  cat.ResolveTitle,
		Similar:  &prefs.Likeness{Titles: prefScorer.Titles},
		// Attribute memories are read with the offline rules, whatever
		// model the agent talks to: the turn's path makes no model call
		// of its own.
		Attributes: e.agentAttributes(ctx),
		Rules:      offline.New(offline.Options{People: cat, Genres: cat.Genres()}),
		EventJobs:  profile.EventJobs,
	}
	if n := e.Config.turnSlots(); n > 0 {
		e.agent.Slots = agent.NewSlots(n)
		e.registerSlotMetrics(e.agent.Slots)
		e.Logger.Info("chat turns compute in slots; the others wait their turn", "slots", n)
	}
	return e.agent, nil
}

// TurnJobs are the background jobs of an agent turn: the thread summary,
// and the jobs of the user's message as if it came through the message
// log.
func (e *Engine) TurnJobs(s memento.Scope, thread string, stored []memento.Message) []memento.JobRequest {
	jobs := agent.DefaultJobs(s, thread, stored)
	// The turn's summary goes to the user's backlog too, where it runs
	// after the batch's messages: as a job of its own, each turn cost the
	// store's one writer River's insert, its fetch and its completion.
	for i := range jobs {
		jobs[i].ByUser = true
	}
	for _, m := range stored {
		jobs = append(jobs, e.MessageJobs(s, thread, m)...)
	}
	return jobs
}

// MessageJobs are the background jobs every newly stored message gets,
// whether it came from an agent turn or from the message log. Each
// long-term memory adds its job kinds here. They go to the user's backlog
// (memento.JobRequest.ByUser): a batch runs the jobs of a user's messages
// together, message by message (backlog.go), and a job that fails there
// runs again on its own, with its kind's handler.
func (e *Engine) MessageJobs(s memento.Scope, thread string, m memento.Message) []memento.JobRequest {
	var jobs []memento.JobRequest
	jobs = append(jobs, rememberJobs(s, thread, m)...)
	jobs = append(jobs, prefs.MessageJobs(s, thread, m)...)
	jobs = append(jobs, profile.MessageJobs(s, thread, m)...)
	for i := range jobs {
		jobs[i].ByUser = true
	}
	return jobs
}

// EventJobs returns the jobsFor of one AddEvents call for a user: the
// profile's recompute (once per call) and the preference memory's job of
// each event that shows a taste.
func (e *Engine) EventJobs(s memento.Scope) func(memento.Event) []memento.JobRequest {
	learn := profile.EventJobs(s)
	return func(ev memento.Event) []memento.JobRequest {
		return append(learn(ev), prefs.EventJobs(s, ev)...)
	}
}

// JobKinds returns the kinds of job the started workers run, the users'
// backlog batches among them, sorted; none before StartWorkers.
func (e *Engine) JobKinds() []string {
	e.workersMu.Lock()
	defer e.workersMu.Unlock()
	if !e.workersStarted {
		return nil
	}
	kinds := []string{memento.JobBacklog}
	for k := range e.handlers {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	return kinds
}

// StartWorkers registers the background job handlers and starts the
// queue, and the pruning of the recall change log; Close stops them.
// Calling it again does nothing.
func (e *Engine) StartWorkers(ctx context.Context) error {
	e.workersMu.Lock()
	defer e.workersMu.Unlock()
	if e.workersStarted {
		return nil
	}
	model, err := e.Model(ctx)
	if err != nil {
		return err
	}
	// Each background job kind is registered here, one line per kind,
	// through a queue that keeps the handlers for the users' backlogs.
	e.handlers = map[string]memento.JobHandler{}
	q := recordingQueue{Store: e.Store, handlers: e.handlers}
	sum := &agent.SummaryWorker{Threads: e.Store, Messages: e.Store, Model: model}
	q.Handle(memento.JobSummarise, sum.Handle, memento.JobOptions{})
	if err := e.handlePrefsJobs(ctx, q); err != nil {
		return err
	}
	if err := e.handleProfileJobs(ctx, q); err != nil {
		return err
	}
	if err := e.handleRememberJobs(ctx, q); err != nil {
		return err
	}
	if err := e.handleBacklog(ctx); err != nil {
		return err
	}
	// Every job's context derives from the queue's, so marking it here
	// puts all background work on the model's job budget, apart from the
	// turns' (TestJobsRunInBackground holds the queue to that).
	jobs := memento.InBackground(context.WithoutCancel(ctx))
	gate := memento.NewProcessorGate(e.Config.backgroundProcessors())
	e.lowerBackground(gate)
	jobs = memento.WithProcessorGate(jobs, gate)
	if err := e.Registry.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "memento_background_processors_in_use",
		Help: "Background jobs computing now, of at most --background-processors (one fewer while requests are served).",
	}, func() float64 { return float64(gate.InUse()) })); err != nil {
		e.Logger.Warn("background processors metric", "err", err)
	}
	if err := e.Store.Start(jobs); err != nil {
		return fmt.Errorf("start jobs: %w", err)
	}
	e.workersStarted = true
	e.OnClose(e.Store.Stop)
	e.startRecallPruner(ctx)
	return nil
}

// lowerBackground runs the computations of the gate's jobs at the
// configured lower priority, and gives Go the processors that needs
// (goProcessors). Where the system cannot, the jobs compute at the
// requests' priority, as with --background-nice 0.
func (e *Engine) lowerBackground(gate *memento.ProcessorGate) {
	if e.Config.BackgroundNice == 0 {
		return
	}
	if err := gate.LowerPriority(e.Config.BackgroundNice); err != nil {
		e.Logger.Info("background jobs compute at the requests' priority", "err", err)
		return
	}
	// Setting GOMAXPROCS turns off the runtime's own updates of it when
	// the container's processor limit changes: the engine's count was
	// taken at start, like the gate's size.
	procs := goProcessors(gate.Size())
	if runtime.GOMAXPROCS(0) < procs {
		runtime.GOMAXPROCS(procs)
	}
	e.Logger.Info("background jobs compute at a lower priority", "nice", e.Config.BackgroundNice,
		"processors", gate.Size(), "gomaxprocs", runtime.GOMAXPROCS(0))
}

// GenreNormalizer maps a genre as people write it ("thrillers", "sci-fi")
// to the catalog's genres with the offline rules, whatever model the agent
// uses, so evaluations read their gold labels the same way every run.
func (e *Engine) GenreNormalizer(ctx context.Context) (func(string) []string, error) {
	cat, err := e.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	rules := offline.New(offline.Options{Genres: cat.Genres()})
	return func(v string) []string {
		u, err := rules.UnderstandRequest(ctx, memento.UnderstandInput{Message: v + " movies", Context: memento.NewActiveContext()})
		if err != nil {
			return nil
		}
		return u.Genres
	}, nil
}

// EmotionClassifier returns what tags user messages with an emotion as
// they are written: the offline rules, or with Config.Emotion "model" the
// model server, whose failures fall back to the rules so that a message is
// never refused for its emotion.
func (e *Engine) EmotionClassifier(ctx context.Context) (memento.EmotionClassifier, error) {
	rules := offline.New(offline.Options{})
	if e.Config.Emotion != "model" {
		return rules, nil
	}
	server, err := e.ServerEmotionClassifier(ctx)
	if err != nil {
		return nil, err
	}
	return emotionWithRules{server: server, rules: rules, log: e.Logger}, nil
}

// ServerEmotionClassifier returns the model server as an emotion
// classifier, without a stand-in. Errors: EINVALID when no model server is
// configured.
func (e *Engine) ServerEmotionClassifier(ctx context.Context) (memento.EmotionClassifier, error) {
	if e.Config.LLM.Provider != "openai" {
		return nil, memento.Errorf(memento.EINVALID, "no model server is configured to tag emotions: set MEMENTO_LLM_BASE_URL (and MEMENTO_LLM_MODEL)")
	}
	m, err := e.Model(ctx)
	if err != nil {
		return nil, err
	}
	// The outermost wrapper that tags emotions itself (a budget that
	// charges the call, say) is asked; otherwise the server's own model.
	for w := m; w != nil; {
		if c, ok := w.(memento.EmotionClassifier); ok {
			return c, nil
		}
		p, ok := w.(interface{ Primary() memento.LanguageModel })
		if !ok {
			break
		}
		w = p.Primary()
	}
	return nil, memento.Errorf(memento.EINVALID, "the language model %s cannot tag emotions", m.Name())
}

// emotionWithRules asks the server and, when it fails, the rules.
type emotionWithRules struct {
	server, rules memento.EmotionClassifier
	log           *slog.Logger
}

func (e emotionWithRules) ClassifyEmotion(ctx context.Context, text string) (*memento.Emotion, error) {
	em, err := e.server.ClassifyEmotion(ctx, text)
	if err == nil {
		return em, nil
	}
	e.log.WarnContext(ctx, "the model server could not tag the message's emotion; using the offline rules", "err", err)
	return e.rules.ClassifyEmotion(ctx, text)
}

// registerSlotMetrics exports the use of the turns' slots: their number,
// the turns computing and waiting now, and the time turns waited.
func (e *Engine) registerSlotMetrics(s *agent.Slots) {
	gauge, counter := statMetrics(s.Stats)
	e.registerMetrics("turn slot metrics",
		gauge("memento_turn_slots", "Chat turns that may compute at once (--turn-slots).", func(st agent.SlotStats) float64 { return float64(st.Size) }),
		gauge("memento_turns_computing", "Chat turns holding a slot now.", func(st agent.SlotStats) float64 { return float64(st.Computing) }),
		gauge("memento_turns_waiting", "Chat turns waiting for a slot now.", func(st agent.SlotStats) float64 { return float64(st.Waiting) }),
		counter("memento_turn_slot_wait_seconds_total", "Time the chat turns that took a slot spent waiting for it (waits given up are not counted).", func(st agent.SlotStats) float64 { return st.Waited.Seconds() }),
		counter("memento_turn_slots_taken_total", "Slots taken by chat turns.", func(st agent.SlotStats) float64 { return float64(st.Taken) }),
	)
}
