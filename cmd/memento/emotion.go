package main

import (
	"context"
	"log/slog"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/llm/offline"
)

// EmotionClassifier returns what tags user messages with an emotion as they
// are written: the offline rules, or with MEMENTO_EMOTION=model the model
// server, whose failures fall back to the rules so that a message is never
// refused for its emotion.
func (a *App) EmotionClassifier(ctx context.Context) (memento.EmotionClassifier, error) {
	rules := offline.New(offline.Options{})
	if a.Config.Emotion != "model" {
		return rules, nil
	}
	server, err := a.ServerEmotionClassifier(ctx)
	if err != nil {
		return nil, err
	}
	return emotionWithRules{server: server, rules: rules, log: a.Logger}, nil
}

// ServerEmotionClassifier returns the model server as an emotion
// classifier, without a stand-in. Errors: EINVALID when no model server is
// configured.
func (a *App) ServerEmotionClassifier(ctx context.Context) (memento.EmotionClassifier, error) {
	if a.Config.LLM.Provider != "openai" {
		return nil, memento.Errorf(memento.EINVALID, "no model server is configured to tag emotions: set MEMENTO_LLM_BASE_URL (and MEMENTO_LLM_MODEL)")
	}
	m, err := a.Model(ctx)
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
