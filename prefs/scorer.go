package prefs

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
)

// Defaults of Scorer.
const (
	// DefaultWhySimilarity is the whitened similarity from which a concept
	// is named as a reason for a title's rank. On the embedded catalog with
	// the offline embedder, 99% of the titles unrelated to "horror" are
	// below 0.08 and 99.9% below 0.16, while horror films have a median of
	// 0.31; heist films have a median of 0.2 from "heist" (crime films
	// without a heist come close, since the embedder files heists under
	// crime).
	DefaultWhySimilarity = 0.15
	// DefaultExplainTop is how many of the best-scored candidates get
	// reasons when there are too many candidates to explain them all (or
	// four times the titles the user asked for, if more).
	DefaultExplainTop = 32
	// DefaultLexicalWeight is the bonus, in units of whitened similarity,
	// of a title whose text contains a concept's words. Titles related to
	// a concept are typically 0.2 to 0.4 similar to it, so a title that
	// names it outranks one that is merely related.
	DefaultLexicalWeight = 0.25
	// explainAllPairs is the number of candidate × preference pairs up to
	// which every candidate is explained.
	explainAllPairs = 250_000
	// maxWhy is how many concepts a title's reasons name.
	maxWhy = 3
)

// Scorer is the ranking signal of the preference memory, an agent.Scorer:
// a title scores the sum, over the user's live preferences, of effective
// weight × similarity between concept and title, so similarity to liked
// concepts adds and similarity to disliked ones subtracts. Similarities
// are cosines in the whitened TitleSpace. The sum is divided by the
// Euclidean norm of the weights when that is above 1, so that a user with
// hundreds of preferences does not drown the other signals.
//
// Similarities can be negative: a title unlike a disliked concept gains a
// little (on the embedded catalog, at most about 0.1 per unit of weight).
//
// Because the score is linear in the preferences, they fold into one taste
// vector, and ranking costs one dot product per title however many
// preferences the user has; the reasons ("you like heist") need a dot
// product per preference and are computed for all candidates when there
// are few, and otherwise for the ExplainTop best-scored ones, the only
// ones a user can see.
type Scorer struct {
	// Prefs gives the user's live preferences; its embedder must be the
	// one of Titles.
	Prefs  *Service
	Titles *TitleSpace
	// Weight scales every score (default 1).
	Weight float64
	// WhySimilarity and ExplainTop tune the reasons (defaults
	// DefaultWhySimilarity and DefaultExplainTop).
	WhySimilarity float64
	ExplainTop    int
	// LexicalWeight is what a title whose text contains a concept's words
	// gains, times the concept's weight (default DefaultLexicalWeight).
	LexicalWeight float64

	mu    sync.Mutex
	cache map[memento.Scope]*taste
}

var _ agent.Scorer = (*Scorer)(nil)

// Score returns one signal per candidate. A user without live preferences
// of the space's embedder gets zero scores. Errors: those of the store and
// the embedder.
//
// Apart from the signals it returns (40 bytes a candidate, which the
// agent.Scorer interface makes the caller's), a ranking of the whole
// catalog allocates a few kilobytes: the title vectors, the taste and the
// word matches are the space's and the cached taste's, and the reasons of
// all explained titles share one slice.
func (sc *Scorer) Score(ctx context.Context, s memento.Scope, ac memento.ActiveContext, candidates []memento.Title) ([]agent.Signal, error) {
	sigs := make([]agent.Signal, len(candidates))
	if len(candidates) == 0 {
		return sigs, nil
	}
	u, err := sc.tasteOf(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("preference scores: %w", err)
	}
	if u == nil {
		return sigs, nil
	}
	whole := sc.Titles.isWhole(candidates)
	rows, err := sc.Titles.rows(ctx, candidates, whole)
	if err != nil {
		return nil, fmt.Errorf("preference scores: %w", err)
	}
	lexical := cmp.Or(sc.LexicalWeight, DefaultLexicalWeight)
	matched := sc.lexicalHits(u, candidates, whole)
	factor := cmp.Or(sc.Weight, 1) * u.factor
	parallel(len(candidates), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			score := float64(rankDot(u.taste, rows.at(i)))
			for _, p := range matched.at(i) {
				score += lexical * u.live[p].EffectiveWeight
			}
			sigs[i].Score = factor * score
		}
	})
	explain := sc.toExplain(sigs, len(u.live), max(cmp.Or(sc.ExplainTop, DefaultExplainTop), 4*ac.Count))
	minSim := float32(cmp.Or(sc.WhySimilarity, DefaultWhySimilarity))
	reasons := make([]string, len(explain)*maxWhy)
	parallelWork(len(explain), len(explain)*len(u.live), func(lo, hi int) {
		for k := lo; k < hi; k++ {
			i := explain[k]
			out := reasons[k*maxWhy : k*maxWhy : (k+1)*maxWhy]
			if out = why(u, rows.at(i), matched.at(i), minSim, lexical, out); len(out) > 0 {
				sigs[i].Why = out
			}
		}
	})
	return sigs, nil
}

// hits gives, for each candidate of a ranking, the preferences whose words
// its text contains: from the cached taste's table for catalog titles, by
// reading the text of any other. It is safe for concurrent use.
type hits struct {
	u       *taste
	pos     []int32         // catalog position of each candidate; nil when they are the whole catalog
	outside map[int][]int32 // candidates outside the catalog
}

// at returns the preferences whose words candidate i contains.
func (h hits) at(i int) []int32 {
	if h.pos == nil {
		return h.u.hitsAt(int32(i))
	}
	if h.pos[i] < 0 {
		return h.outside[i]
	}
	return h.u.hitsAt(h.pos[i])
}

// lexicalHits returns the word matches of candidates, whole when they are
// the whole catalog in its order.
func (sc *Scorer) lexicalHits(u *taste, candidates []memento.Title, whole bool) hits {
	if whole {
		return hits{u: u}
	}
	h := hits{u: u, pos: sc.Titles.positions(candidates)}
	for i, p := range h.pos {
		if p >= 0 {
			continue
		}
		text := words(TitleText(candidates[i]))
		for c, run := range u.runs {
			if containsRun(text, run) {
				if h.outside == nil {
					h.outside = map[int][]int32{}
				}
				h.outside[i] = append(h.outside[i], int32(c))
			}
		}
	}
	return h
}

// A user's taste is cached between rankings: reading and whitening
// hundreds of preferences costs more than ranking a thousand titles. An
// entry is used while the user's preference version (and the user: Since)
// is unchanged and it is
// younger than tasteRefresh (decay moves weights by a millionth of their
// size in a minute); the cache forgets everything when it holds
// maxTasteUsers users (an entry holds a user's whitened concept vectors
// and a word-match table over the catalog: about 0.7 MB for 500
// preferences and 36,000 titles).
const (
	tasteRefresh  = time.Minute
	maxTasteUsers = 256
)

// taste is a user's preferences folded for ranking.
type taste struct {
	version int64
	since   time.Time // the user's creation (memento.PreferenceVersion.Since)
	at      time.Time
	live    []memento.Preference
	// concepts are the whitened concept vectors, as live, in one
	// allocation (so that explaining a title reads them as one stream).
	concepts [][]float32
	taste    []float32  // Σ weight × concept
	factor   float64    // 1 / max(1, |weights|)
	runs     [][]string // each concept's words, as live
	// reasons are the reasons each preference gives, as live ("you like
	// heist"), built once rather than for every explained title.
	reasons []string
	// named marks the concepts of several words ("christopher nolan",
	// "tom hanks"): names and phrases, which a title's vector can come
	// close to by sharing a few letters. They are given as a reason only
	// when the title's text names them, so a romantic comedy is never
	// shown "because you like christopher nolan".
	named []bool
	// The preferences whose words the text of the catalog title at
	// position i contains are hits[hitStart[i]:hitStart[i+1]].
	hitStart []int32
	hits     []int32
}

// hitsAt returns the preferences whose words the catalog title at pos
// contains.
func (u *taste) hitsAt(pos int32) []int32 {
	if int(pos)+1 >= len(u.hitStart) {
		return nil
	}
	return u.hits[u.hitStart[pos]:u.hitStart[pos+1]]
}

// hitTable lays out which preferences each of n titles matches, from the
// titles each preference matches (positions below n, ascending): title
// pos's are hits[start[pos]:start[pos+1]], in the preferences' order. It
// counts first and fills after: no map of titles, whose lookups for every
// title of the catalog cost more than the few that match.
func hitTable(n int, matched [][]int32) (start, hits []int32) {
	start = make([]int32, n+1)
	total := 0
	for _, m := range matched {
		for _, pos := range m {
			start[pos+1]++
		}
		total += len(m)
	}
	for pos := range n {
		start[pos+1] += start[pos]
	}
	hits = make([]int32, total)
	next := slices.Clone(start[:n])
	for p, m := range matched {
		for _, pos := range m {
			hits[next[pos]] = int32(p)
			next[pos]++
		}
	}
	return start, hits
}

// tasteOf returns the user's folded taste, nil when the user has no live
// preferences of the space's embedder.
func (sc *Scorer) tasteOf(ctx context.Context, s memento.Scope) (*taste, error) {
	ver, err := sc.Prefs.Store.PreferenceVersion(ctx, s)
	if err != nil {
		return nil, err
	}
	now := sc.Prefs.now()
	sc.mu.Lock()
	u, ok := sc.cache[s]
	sc.mu.Unlock()
	if ok && u.version == ver.Version && u.since.Equal(ver.Since) && now.Sub(u.at).Abs() < tasteRefresh {
		return u, nil
	}
	live, err := sc.Prefs.Live(ctx, s)
	if err != nil {
		return nil, err
	}
	id := sc.Titles.EmbedderID()
	live = slices.DeleteFunc(live, func(p memento.Preference) bool { return p.Embedder != id || p.EffectiveWeight == 0 })
	if len(live) == 0 {
		u = nil
	} else {
		u = &taste{version: ver.Version, since: ver.Since, at: now, live: live, concepts: make([][]float32, len(live)), reasons: make([]string, len(live)), named: make([]bool, len(live))}
		var norm float64
		for i, p := range live {
			v, err := sc.Titles.Concept(ctx, p.Vector)
			if err != nil {
				return nil, err
			}
			u.concepts[i] = v
			u.named[i] = len(strings.Fields(p.Concept)) > 1
			if p.EffectiveWeight < 0 {
				u.reasons[i] = "you dislike " + p.Concept
			} else {
				u.reasons[i] = "you like " + p.Concept
			}
			if u.taste == nil {
				u.taste = make([]float32, len(v))
			}
			if len(v) == len(u.taste) {
				w := float32(p.EffectiveWeight)
				for d, x := range v {
					u.taste[d] += w * x
				}
			}
			norm += p.EffectiveWeight * p.EffectiveWeight
		}
		u.factor = 1 / math.Max(1, math.Sqrt(norm))
		u.concepts = contiguous(u.concepts)
		u.runs = make([][]string, len(live))
		matched := make([][]int32, len(live))
		terms := sc.Titles.terms()
		for p, pref := range live {
			u.runs[p] = conceptWords(pref.Concept)
			matched[p] = terms.matches(u.runs[p], sc.Titles.catalog)
		}
		u.hitStart, u.hits = hitTable(len(sc.Titles.catalog), matched)
	}
	sc.mu.Lock()
	if sc.cache == nil || len(sc.cache) >= maxTasteUsers {
		sc.cache = map[memento.Scope]*taste{}
	}
	if u != nil {
		sc.cache[s] = u
	} else {
		delete(sc.cache, s)
	}
	sc.mu.Unlock()
	return u, nil
}

// toExplain returns the indices of the candidates that get reasons: all
// of them, or the top best-scored when that would take too long.
func (sc *Scorer) toExplain(sigs []agent.Signal, prefs, top int) []int {
	if len(sigs)*prefs <= explainAllPairs {
		out := make([]int, len(sigs))
		for i := range out {
			out[i] = i
		}
		return out
	}
	h := &minScores{sigs: sigs}
	for i := range sigs {
		switch {
		case h.Len() < top:
			heap.Push(h, i)
		case sigs[i].Score > sigs[h.idx[0]].Score:
			h.idx[0] = i
			heap.Fix(h, 0)
		}
	}
	return h.idx
}

// minScores is a min-heap of candidate indices by score.
type minScores struct {
	sigs []agent.Signal
	idx  []int
}

func (h *minScores) Len() int           { return len(h.idx) }
func (h *minScores) Less(a, b int) bool { return h.sigs[h.idx[a]].Score < h.sigs[h.idx[b]].Score }
func (h *minScores) Swap(a, b int)      { h.idx[a], h.idx[b] = h.idx[b], h.idx[a] }
func (h *minScores) Push(x any)         { h.idx = append(h.idx, x.(int)) }
func (h *minScores) Pop() any {
	x := h.idx[len(h.idx)-1]
	h.idx = h.idx[:len(h.idx)-1]
	return x
}

// why names the concepts that moved a title, those at least minSim
// similar to it or whose words it contains, by the size of their
// contribution: "you like heist", "you dislike horror". It appends the
// reasons to out (which has room for maxWhy) and returns it.
func why(u *taste, title []float32, matched []int32, minSim float32, lexical float64, out []string) []string {
	// Only the maxWhy largest contributions are named: they are kept in
	// order as they come, instead of collecting and sorting all of them.
	type reason struct {
		p       int
		contrib float64
	}
	live := u.live
	before := func(a, b reason) bool {
		return cmp.Or(cmp.Compare(math.Abs(b.contrib), math.Abs(a.contrib)), cmp.Compare(live[a.p].Concept, live[b.p].Concept)) < 0
	}
	var best [maxWhy]reason
	n := 0
	for p, v := range u.concepts {
		sim := rankDot(v, title)
		hit := slices.Contains(matched, int32(p))
		if !hit && (sim < minSim || u.named[p]) {
			continue
		}
		c := float64(sim)
		if hit {
			c += lexical
		}
		r := reason{p, live[p].EffectiveWeight * c}
		at := n
		for at > 0 && before(r, best[at-1]) {
			at--
		}
		if at == maxWhy {
			continue
		}
		if n < maxWhy {
			n++
		}
		copy(best[at+1:n], best[at:n-1])
		best[at] = r
	}
	for _, r := range best[:n] {
		out = append(out, u.reasons[r.p])
	}
	return out
}

// contiguous returns vs copied into one allocation.
func contiguous(vs [][]float32) [][]float32 {
	total := 0
	for _, v := range vs {
		total += len(v)
	}
	block := make([]float32, 0, total)
	out := make([][]float32, len(vs))
	for i, v := range vs {
		lo := len(block)
		block = append(block, v...)
		out[i] = block[lo:len(block):len(block)]
	}
	return out
}
