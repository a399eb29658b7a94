package prefs

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
)

// Likeness is the agent's measure of how alike titles are, and how close
// a title is to a mood, in the preference memory's whitened title space
// (an agent.Similarity): "more like Heat" ranks by the cosine between
// Heat's vector (genres, plot, top-billed cast) and each candidate's.
type Likeness struct {
	Titles *TitleSpace

	mu       sync.Mutex
	concepts map[string][]float32
}

var _ agent.Similarity = (*Likeness)(nil)

// maxConcepts bounds the cache of embedded moods.
const maxConcepts = 1024

// Like returns, for each candidate, its cosine with the nearest anchor.
// Errors: the embedder's, for titles seen for the first time.
func (l *Likeness) Like(ctx context.Context, anchors, candidates []memento.Title) ([]float64, error) {
	out := make([]float64, len(candidates))
	if len(anchors) == 0 || len(candidates) == 0 {
		return out, nil
	}
	av, err := l.Titles.Vectors(ctx, anchors)
	if err != nil {
		return nil, fmt.Errorf("likeness of anchors: %w", err)
	}
	cv, err := l.Titles.Vectors(ctx, candidates)
	if err != nil {
		return nil, fmt.Errorf("likeness of candidates: %w", err)
	}
	for i, v := range cv {
		best := -1.0
		for _, a := range av {
			best = max(best, float64(rankDot(a, v)))
		}
		out[i] = best
	}
	return out, nil
}

// Near returns, for each candidate, its similarity to a concept ("dark",
// "feel-good"), embedded once and scaled like the titles.
func (l *Likeness) Near(ctx context.Context, concept string, candidates []memento.Title) ([]float64, error) {
	out := make([]float64, len(candidates))
	concept = strings.ToLower(strings.TrimSpace(concept))
	if concept == "" || len(candidates) == 0 {
		return out, nil
	}
	c, err := l.concept(ctx, concept)
	if err != nil {
		return nil, err
	}
	cv, err := l.Titles.Vectors(ctx, candidates)
	if err != nil {
		return nil, fmt.Errorf("likeness of candidates: %w", err)
	}
	for i, v := range cv {
		out[i] = float64(rankDot(c, v))
	}
	return out, nil
}

func (l *Likeness) concept(ctx context.Context, text string) ([]float32, error) {
	l.mu.Lock()
	c, ok := l.concepts[text]
	l.mu.Unlock()
	if ok {
		return c, nil
	}
	vs, err := l.Titles.embedder.Embed(ctx, []string{text})
	if err != nil {
		return nil, fmt.Errorf("embed %q: %w", text, err)
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("embed %q: the embedder returned %d vectors for 1 text", text, len(vs))
	}
	if c, err = l.Titles.Concept(ctx, vs[0]); err != nil {
		return nil, err
	}
	l.mu.Lock()
	if l.concepts == nil || len(l.concepts) >= maxConcepts {
		l.concepts = map[string][]float32{}
	}
	l.concepts[text] = c
	l.mu.Unlock()
	return c, nil
}
