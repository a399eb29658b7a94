package prefs

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/memento-ai/memento"
)

// Defaults of Recaller.
const (
	// DefaultRecallK is how many items a query without K gets.
	DefaultRecallK = 10
	// DefaultRecallSimilarity is the similarity to the query from which a
	// preference or cluster is relevant. With the offline embedder a
	// query that names a concept's words or genre is 0.3 or more from it,
	// and unrelated short texts stay below 0.15.
	DefaultRecallSimilarity = 0.2
)

// Recaller brings back the preferences relevant to a query, as a
// memento.Recaller: each live preference scores its similarity to the
// query × its effective weight (capped at 1), and each cluster the
// similarity of its centroid × its confidence, with its strength bucket
// in the text ("[strong] prefers heist; dislikes horror"). A query without
// text brings back the strongest memories. Weights are decayed to q.Now
// (the service's clock when zero). No language model is called; the query
// is embedded once, or not at all when q.Vector holds its embedding by the
// same embedder.
type Recaller struct {
	Prefs *Service
	// MinSimilarity is the relevance threshold (default
	// DefaultRecallSimilarity).
	MinSimilarity float64
}

var _ memento.Recaller = (*Recaller)(nil)

// Recall returns at most q.K items (DefaultRecallK when K is 0), best
// first. Errors: EINVALID for a bad scope or a negative K.
func (r *Recaller) Recall(ctx context.Context, q memento.RecallQuery) ([]memento.RecallItem, error) {
	if q.K < 0 {
		return nil, memento.Errorf(memento.EINVALID, "k must not be negative, got %d", q.K)
	}
	k := cmp.Or(q.K, DefaultRecallK)
	now := q.Now
	if now.IsZero() {
		now = r.Prefs.now()
	}
	live, err := r.Prefs.liveAt(ctx, q.Scope, now)
	if err != nil {
		return nil, fmt.Errorf("recall preferences: %w", err)
	}
	items := []memento.RecallItem{}
	if len(live) == 0 {
		return items, nil
	}
	var query []float32
	switch {
	case strings.TrimSpace(q.Query) == "":
	case q.Vector != nil && q.Embedder == r.Prefs.Embedder.ID():
		query = q.Vector // embedded once by the assembler
	default:
		vs, err := r.Prefs.Embedder.Embed(ctx, []string{q.Query})
		if err != nil {
			return nil, fmt.Errorf("recall preferences: embed query: %w", err)
		}
		query = vs[0]
	}
	minSim := cmp.Or(r.MinSimilarity, DefaultRecallSimilarity)
	similarity := func(v []float32) float64 {
		if query == nil {
			return 1
		}
		return float64(Dot(query, v))
	}
	byID := make(map[string]memento.Preference, len(live))
	for _, p := range live {
		byID[p.ID] = p
		sim := similarity(p.Vector)
		if sim < minSim {
			continue
		}
		w := math.Abs(p.EffectiveWeight)
		at := p.LastSeen
		items = append(items, memento.RecallItem{
			ID: p.ID, Kind: memento.RecallPreference, Text: PreferenceText(p),
			Score:   round4(sim * math.Min(1, w)),
			Scores:  map[string]float64{"similarity": round4(sim), "weight": round4(p.EffectiveWeight)},
			Sources: slices.Clone(p.Sources), At: &at,
		})
	}
	clusters, err := r.Prefs.clustersAt(ctx, q.Scope, now)
	if err != nil {
		return nil, fmt.Errorf("recall preference clusters: %w", err)
	}
	for _, c := range clusters {
		var members []memento.Preference
		var ids []string
		for _, m := range c.Members {
			if p, ok := byID[m.Preference]; ok {
				members = append(members, p)
				ids = append(ids, p.ID)
			}
		}
		if len(members) == 0 {
			continue
		}
		sim := similarity(Centroid(members))
		if sim < minSim {
			continue
		}
		items = append(items, memento.RecallItem{
			ID: c.ID, Kind: memento.RecallCluster, Text: ClusterText(c),
			Score:   round4(sim * c.Confidence),
			Scores:  map[string]float64{"similarity": round4(sim), "confidence": c.Confidence},
			Sources: ids,
		})
	}
	slices.SortStableFunc(items, func(a, b memento.RecallItem) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.ID, b.ID))
	})
	if len(items) > k {
		items = items[:k]
	}
	return items, nil
}

// PreferenceText renders a preference for a prompt: "likes heist",
// "strongly dislikes horror", "mildly likes westerns". A fact is its
// concept ("lives in lisbon").
func PreferenceText(p memento.Preference) string {
	if p.Kind == memento.KindFact {
		return p.Concept
	}
	verb := "likes "
	if p.EffectiveWeight < 0 {
		verb = "dislikes "
	}
	switch w := math.Abs(p.EffectiveWeight); {
	case w >= 1:
		verb = "strongly " + verb
	case w < 0.4:
		verb = "mildly " + verb
	}
	return verb + p.Concept
}

// ClusterText renders a cluster for a prompt: its strength bucket and
// confidence, then its description.
func ClusterText(c memento.PreferenceCluster) string {
	return fmt.Sprintf("[%s, confidence %.2f] %s", c.Strength, c.Confidence, c.Description)
}
