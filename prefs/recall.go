package prefs

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/internal/memo"
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
//
// A context read recalls, so a Recaller keeps what it last read of each
// user (the preferences, vectors included, and the clusters, as stored)
// while the user's preference version is the store's (PreferenceVersion,
// the user's creation included): a recall then reads the version alone,
// where it read every preference (3-4% of a loaded server's time under 64
// clients). Decay is applied to the kept rows at each query's time, so a
// kept read answers as a new one would.
type Recaller struct {
	Prefs *Service
	// MinSimilarity is the relevance threshold (default
	// DefaultRecallSimilarity).
	MinSimilarity float64

	// kept holds the users' last reads (recallRead), by user. Its
	// generations are bounded by users and by the bytes of their
	// preferences' vectors.
	kept memo.Memo[*recallRead]
	// keptOnce sets kept's bounds before its first use.
	keptOnce sync.Once
	// reads counts the reads of a user's preferences from the store.
	reads atomic.Int64
}

// Bounds of a Recaller's kept reads, per generation (two are kept).
const (
	recallUsers = 1024
	recallBytes = 32 << 20
)

// recallRead is a user's preferences and clusters as the store held them
// at a version; shared among recalls, never modified.
type recallRead struct {
	ver      memento.PreferenceVersion
	prefs    []memento.Preference
	clusters []memento.PreferenceCluster
}

// read returns the user's preferences and clusters: the kept read while
// the version is the store's, else a new read.
func (r *Recaller) read(ctx context.Context, s memento.Scope) (*recallRead, error) {
	r.keptOnce.Do(func() {
		r.kept.Keys, r.kept.Weight = recallUsers, recallBytes
		r.kept.Weigh = func(rd *recallRead) int {
			n := 0
			for _, p := range rd.prefs {
				n += 4*len(p.Vector) + 256
			}
			return n + 256*len(rd.clusters)
		}
	})
	// The version is read first: a change committed before the rows
	// are read leaves a newer read under an older version, read again
	// next time, never the reverse.
	ver, err := r.Prefs.Store.PreferenceVersion(ctx, s)
	if err != nil {
		return nil, err
	}
	key := s.Tenant + "\x1f" + s.User
	if rd, ok := r.kept.Get(key); ok && rd.ver == ver {
		return rd, nil
	}
	r.reads.Add(1)
	all, err := r.Prefs.Store.Preferences(ctx, s)
	if err != nil {
		return nil, err
	}
	clusters, err := r.Prefs.Store.PreferenceClusters(ctx, s)
	if err != nil {
		return nil, err
	}
	rd := &recallRead{ver: ver, prefs: all, clusters: clusters}
	r.kept.Put(key, rd)
	return rd, nil
}

// Reads returns how many times the Recaller read a user's preferences
// from the store rather than reusing its last read.
func (r *Recaller) Reads() int64 { return r.reads.Load() }

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
	rd, err := r.read(ctx, q.Scope)
	if err != nil {
		return nil, fmt.Errorf("recall preferences: %w", err)
	}
	// The live preferences, as indices into the kept read (which is
	// shared, so never written), with their effective weights at now.
	var live []int
	weights := make([]float64, len(rd.prefs))
	id := r.Prefs.Embedder.ID()
	for i := range rd.prefs {
		if w, ok := r.Prefs.effective(&rd.prefs[i], id, now); ok {
			live = append(live, i)
			weights[i] = w
		}
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
	// Everything relevant is scored first, and only the k best become
	// items (a text, a map of scores, the sources each).
	type hit struct {
		score, sim float64
		id         string
		pref       int      // into the read's preferences, or -1 for a cluster
		cluster    int      // into clusters
		ids        []string // a cluster's live members
	}
	var hits []hit
	byID := make(map[string]int, len(live))
	for _, i := range live {
		p := &rd.prefs[i]
		byID[p.ID] = i
		sim := similarity(p.Vector)
		if sim < minSim {
			continue
		}
		hits = append(hits, hit{score: round4(sim * math.Min(1, math.Abs(weights[i]))), sim: sim, id: p.ID, pref: i})
	}
	clusters := r.Prefs.clustersOf(slices.Clone(rd.clusters), rd.prefs, now)
	for ci, c := range clusters {
		var members []memento.Preference
		var ids []string
		for _, m := range c.Members {
			if i, ok := byID[m.Preference]; ok {
				members = append(members, rd.prefs[i])
				ids = append(ids, rd.prefs[i].ID)
			}
		}
		if len(members) == 0 {
			continue
		}
		sim := similarity(Centroid(members))
		if sim < minSim {
			continue
		}
		hits = append(hits, hit{score: round4(sim * c.Confidence), sim: sim, id: c.ID, pref: -1, cluster: ci, ids: ids})
	}
	slices.SortStableFunc(hits, func(a, b hit) int {
		return cmp.Or(cmp.Compare(b.score, a.score), strings.Compare(a.id, b.id))
	})
	items = make([]memento.RecallItem, 0, min(len(hits), k))
	for _, h := range hits[:min(len(hits), k)] {
		if h.pref < 0 {
			c := clusters[h.cluster]
			items = append(items, memento.RecallItem{
				ID: c.ID, Kind: memento.RecallCluster, Text: ClusterText(c), Score: h.score,
				Scores:  map[string]float64{"similarity": round4(h.sim), "confidence": c.Confidence},
				Sources: h.ids,
			})
			continue
		}
		p := rd.prefs[h.pref] // a copy, given its weight now
		p.EffectiveWeight = weights[h.pref]
		at := p.LastSeen
		items = append(items, memento.RecallItem{
			ID: p.ID, Kind: memento.RecallPreference, Text: PreferenceText(p), Score: h.score,
			Scores:  map[string]float64{"similarity": round4(h.sim), "weight": round4(p.EffectiveWeight)},
			Sources: slices.Clone(p.Sources), At: &at,
		})
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
