package main

import (
	"context"
	"fmt"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
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
// run trace notes each one, and the person still gets an answer.
func (a *App) Model(ctx context.Context) (memento.LanguageModel, error) {
	if a.model != nil {
		return a.model, nil
	}
	switch a.Config.LLM.Provider {
	case "openai":
		opts := []openai.Option{openai.WithRegisterer(a.Registry), openai.WithLogger(a.Logger)}
		standIn := offline.New(offline.Options{})
		if cat, err := a.Catalog(ctx); err == nil {
			opts = append(opts, openai.WithGenres(cat.Genres()))
			standIn = offline.New(offline.Options{People: cat, Genres: cat.Genres(), Titles: cat.ResolveTitle})
		}
		m, err := openai.New(a.openaiConfig(), opts...)
		if err != nil {
			return nil, err
		}
		fb, err := fallback.New(m, standIn, fallback.Options{Logger: a.Logger, Registerer: a.Registry})
		if err != nil {
			return nil, err
		}
		a.model = fb
	default:
		cat, err := a.Catalog(ctx)
		if err != nil {
			return nil, err
		}
		a.model = offline.New(offline.Options{People: cat, Genres: cat.Genres(), Titles: cat.ResolveTitle})
	}
	a.Logger.Info("language model", "provider", a.Config.LLM.Provider, "name", a.model.Name())
	return a.model, nil
}

// Embedder returns the configured embedder.
func (a *App) Embedder(ctx context.Context) (memento.Embedder, error) {
	if a.embedder != nil {
		return a.embedder, nil
	}
	switch a.Config.Embed.Provider {
	case "openai":
		if m := openaiModel(a.model); m != nil && m.Embedder() != nil {
			a.embedder = m.Embedder()
			break
		}
		e, err := openai.NewEmbedder(a.openaiConfig(), openai.WithRegisterer(a.Registry), openai.WithLogger(a.Logger))
		if err != nil {
			return nil, err
		}
		a.embedder = e
	default:
		a.embedder = offline.NewEmbedder(a.Config.Embed.Dim)
	}
	a.Logger.Info("embedder", "provider", a.Config.Embed.Provider, "id", a.embedder.ID())
	return a.embedder, nil
}

// openaiModel returns the OpenAI-compatible provider behind m, past its
// fallback wrapper, or nil when m is another provider.
func openaiModel(m memento.LanguageModel) *openai.Model {
	// Wrappers (llm/budget, llm/fallback) name the model they wrap.
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

func (a *App) openaiConfig() openai.Config {
	return openai.Config{
		BaseURL:        a.Config.LLM.BaseURL,
		APIKey:         a.Config.LLM.APIKey,
		Model:          a.Config.LLM.Model,
		EmbedModel:     a.Config.Embed.Model,
		Concurrency:    a.Config.LLM.Concurrency,
		JobConcurrency: a.Config.LLM.JobConcurrency,
	}
}

// Agent returns the recommendation agent over the app's store, catalog and
// model.
func (a *App) Agent(ctx context.Context) (*agent.Agent, error) {
	if a.agent != nil {
		return a.agent, nil
	}
	cat, err := a.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	model, err := a.Model(ctx)
	if err != nil {
		return nil, err
	}
	prefScorer, err := a.PrefsScorer(ctx)
	if err != nil {
		return nil, err
	}
	profileScorer, err := a.profileScorer(ctx)
	if err != nil {
		return nil, err
	}
	emotion, err := a.EmotionClassifier(ctx)
	if err != nil {
		return nil, err
	}
	a.agent = &agent.Agent{
		Emotion: emotion,
		Catalog: cat,
		Threads: a.DB,
		Model:   model,
		Logger:  a.Logger,
		Jobs:    a.turnJobs,
		Scorers: []agent.Scorer{prefScorer, profileScorer},
		// The offline writer steps in when a model's reply names a title
		// the answer does not show.
		Fallback: offline.New(offline.Options{}),
		Memory:   a.agentMemory(ctx),
		Resolve:  cat.ResolveTitle,
		Similar:  &prefs.Likeness{Titles: prefScorer.Titles},
		// Attribute memories are read with the offline rules, whatever
		// model the agent talks to: the turn's path makes no model call
		// of its own.
		Attributes: a.DB,
		Rules:      offline.New(offline.Options{People: cat, Genres: cat.Genres()}),
		EventJobs:  profile.EventJobs,
	}
	return a.agent, nil
}

// turnJobs are the background jobs of an agent turn: the thread summary,
// and the jobs of the user's message as if it came through the message log.
func (a *App) turnJobs(s memento.Scope, thread string, stored []memento.Message) []memento.JobRequest {
	jobs := agent.DefaultJobs(s, thread, stored)
	for _, m := range stored {
		jobs = append(jobs, a.messageJobs(s, thread, m)...)
	}
	return jobs
}

// messageJobs are the background jobs every newly stored message gets,
// whether it came from an agent turn or from the message log. Each
// long-term memory adds its job kinds here.
func (a *App) messageJobs(s memento.Scope, thread string, m memento.Message) []memento.JobRequest {
	var jobs []memento.JobRequest
	jobs = append(jobs, prefs.MessageJobs(s, thread, m)...)
	jobs = append(jobs, a.profileMessageJobs(s, thread, m)...)
	jobs = append(jobs, rememberJobs(s, thread, m)...)
	_ = s
	_ = thread
	_ = m
	return jobs
}

// StartWorkers registers the background job handlers and starts the queue.
func (a *App) StartWorkers(ctx context.Context) error {
	if a.workersStarted {
		return nil
	}
	model, err := a.Model(ctx)
	if err != nil {
		return err
	}
	// Each background job kind is registered here, one line per kind.
	sum := &agent.SummaryWorker{Threads: a.DB, Messages: a.DB, Model: model}
	a.DB.Handle(memento.JobSummarise, sum.Handle, memento.JobOptions{})
	if err := a.handlePrefsJobs(ctx); err != nil {
		return err
	}
	if err := a.handleProfileJobs(ctx); err != nil {
		return err
	}
	if err := a.handleRememberJobs(ctx); err != nil {
		return err
	}
	// Every job's context derives from the queue's, so marking it here
	// puts all background work on the model's job budget, apart from the
	// turns' (TestJobsRunInBackground holds the queue to that).
	if err := a.DB.Start(memento.InBackground(context.WithoutCancel(ctx))); err != nil {
		return fmt.Errorf("start jobs: %w", err)
	}
	a.workersStarted = true
	a.onClose(a.DB.Stop)
	a.startRecallPruner(ctx)
	return nil
}

// GenreNormalizer maps a genre as people write it ("thrillers", "sci-fi")
// to the catalog's genres with the offline rules, whatever model the agent
// uses, so evaluations read their gold labels the same way every run.
func (a *App) GenreNormalizer(ctx context.Context) (func(string) []string, error) {
	cat, err := a.Catalog(ctx)
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
