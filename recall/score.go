package recall

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/memento-ai/memento"
)

// Weights combine the parts of an item's score. Each part is in [0, 1]:
//
//   - bm25: the item's BM25 relevance to the query divided by the best
//     BM25 among the recaller's candidates;
//   - vector: the cosine similarity of the query's and the item's
//     embeddings (0 when either has none, or they come from different
//     embedders);
//   - recency: 0.5^(age / HalfLife), age measured from the query's time;
//   - neighbor (messages only): the best relevance of the messages next to
//     it in its thread, so the answer to a matching question comes back
//     with it;
//   - date: 1 when the query names a time ("in June", "on 13 October
//     2023", "last week") and the item is from then or tells of then (its
//     own time expressions, "two weeks ago", resolved against its time;
//     see timeSpans), else 0;
//   - when: 1 when the query asks for a time ("when did ...", "how long
//     ago") and the item's text says when something happened, else 0:
//     of the turns about an event, the one that dates it answers;
//   - expand: the item's BM25 relevance to the second hop, a query of the
//     entities (names, titles, places) of the best first hits, divided by
//     the best BM25 of the first query, so that what the first hits are
//     about brings back the other turns about it;
//   - recollect: the item's BM25 relevance to a query of the words the
//     user's memories that match the query add to it (the entities of
//     their matching clauses: "Rex" for "my dog"; see recollection),
//     divided by the best BM25 of the first query and weighed by how
//     much of the query the clause that gave the word holds: what the
//     user's memories call the thing the question names.
//
// The bm25 part is scaled by (1 - Coverage + Coverage*coverage), where
// coverage is the share of the query's terms the item holds: BM25 is
// normalised by each recaller's best match, so without it a memory that
// holds one common word of the question ("feel") ranks with a turn that
// holds its rare ones.
//
// score = BM25*bm25 + Vector*vector + Recency*recency + Neighbor*neighbor
// + Date*date + When*when + Expand*expand + Recollect*recollect.
type Weights struct {
	BM25      float64
	Vector    float64
	Recency   float64
	Neighbor  float64
	Date      float64
	When      float64
	Expand    float64
	Recollect float64
	Coverage  float64
	HalfLife  time.Duration
	// MinVector is the similarity below which an item that matches no
	// query word is not relevant at all.
	MinVector float64
}

// DefaultWeights favour keyword matches, let embeddings find what is said
// in other words, and break ties towards what is recent.
// The expansion from the user's memories weighs half the second hop's: it
// is a guess at what the question means, one step further from its words.
var DefaultWeights = Weights{BM25: 1, Vector: 0.1, Recency: 0.05, Neighbor: 0.8, Date: 0.3, When: 0.2, Expand: 0.3, Recollect: 0.15,
	Coverage: 0.5, HalfLife: 90 * 24 * time.Hour, MinVector: 0.4}

// Candidate bounds of the recallers, per store query: the best keyword
// matches, the most recent items, and the messages up to DefaultNeighbors
// positions around each of the DefaultNeighborHits best matches. Every
// candidate is read with its embedding, so these bound the read path's
// cost whatever the size of a user's history.
const (
	DefaultKeyword      = 40
	DefaultRecent       = 40
	DefaultNeighbors    = 2
	DefaultNeighborHits = 10
	// DefaultHops is how many of the best first hits the second hop
	// takes its entities from, DefaultHopTerms how many entities it asks
	// with at most, and DefaultHopKeyword how many matches it takes.
	DefaultHops       = 3
	DefaultHopTerms   = 8
	DefaultHopKeyword = 20
)

// scored is a candidate with its score parts.
type scored struct {
	c        *memento.RecallCandidate // the store's answer, not copied
	bm25     float64
	vector   float64
	recency  float64
	neighbor float64
	date     float64
	dated    bool // the query names a date
	when     float64
	asked    bool // the query asks when
	expand   float64
	// recollect is the relevance to the words the user's memories add.
	recollect float64
	score     float64
	relevant  bool // matched the query by keyword or by meaning
}

// queryVector returns the query's embedding by embedder e, from q when it
// carries one by the same embedder, else computed; nil without an
// embedder, an empty query or a failing embedder (keyword and recency
// still rank then).
func queryVector(ctx context.Context, e memento.Embedder, q memento.RecallQuery) []float32 {
	if e == nil || q.Query == "" {
		return nil
	}
	if q.Vector != nil && q.Embedder == e.ID() {
		return q.Vector
	}
	vs, err := e.Embed(ctx, []string{q.Query})
	if err != nil || len(vs) != 1 {
		return nil
	}
	return vs[0]
}

// score computes the parts and the total of every candidate.
func score(cands []memento.RecallCandidate, qv []float32, embedder string, now time.Time, w Weights, hasQuery bool, tq timeQuery) []scored {
	best := 0.0
	for _, c := range cands {
		best = math.Max(best, c.BM25)
	}
	out := make([]scored, len(cands))
	for i := range cands {
		c := &cands[i]
		s := scored{c: c}
		if best > 0 && c.BM25 > 0 {
			s.bm25 = c.BM25 / best * (1 - w.Coverage + w.Coverage*tq.coverage(*c))
		}
		if qv != nil && c.Embedder == embedder {
			switch {
			case c.HasCosine:
				s.vector = math.Max(0, c.Cosine)
			case c.Vector != nil:
				s.vector = math.Max(0, cosine(qv, c.Vector))
			}
		}
		if w.HalfLife > 0 && !c.At.IsZero() {
			age := now.Sub(c.At)
			if age < 0 {
				age = 0
			}
			s.recency = math.Exp2(-float64(age) / float64(w.HalfLife))
		}
		s.relevant = !hasQuery || s.bm25 > 0 || s.vector >= w.MinVector
		s.score = w.BM25*s.bm25 + w.Vector*s.vector + w.Recency*s.recency
		tq.score(&s, w)
		out[i] = s
	}
	return out
}

// cosine is the cosine similarity of a and b; 0 when their lengths differ
// or either is zero.
func cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// item turns a scored candidate into a recall item.
func (s scored) item() memento.RecallItem {
	at := s.c.At
	it := memento.RecallItem{
		ID: s.c.ID, Kind: s.c.Kind, Text: s.c.Text, Score: round(s.score),
		Scores:  map[string]float64{"bm25": round(s.bm25), "vector": round(s.vector), "recency": round(s.recency)},
		Sources: s.c.Sources, At: &at,
	}
	if s.c.Kind == memento.RecallMessage {
		it.Scores["neighbor"] = round(s.neighbor)
	}
	if s.dated {
		it.Scores["date"] = s.date
	}
	if s.asked {
		it.Scores["when"] = s.when
	}
	if s.expand > 0 {
		it.Scores["expand"] = round(s.expand)
	}
	if s.recollect > 0 {
		it.Scores["recollect"] = round(s.recollect)
	}
	if it.Sources == nil {
		it.Sources = []string{}
	}
	if s.c.Attribute != "" {
		it.Text = s.c.Attribute + ": " + s.c.Text
	}
	return it
}

// round keeps four decimals, so scores read well in JSON.
func round(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// top sorts the relevant items by score (ties: newer first, then id) and
// keeps k.
func top(items []scored, k int) []memento.RecallItem {
	kept := items[:0]
	for _, s := range items {
		if s.relevant {
			kept = append(kept, s)
		}
	}
	sort.SliceStable(kept, func(i, j int) bool {
		a, b := kept[i], kept[j]
		if a.score != b.score {
			return a.score > b.score
		}
		if !a.c.At.Equal(b.c.At) {
			return a.c.At.After(b.c.At)
		}
		return a.c.ID < b.c.ID
	})
	if len(kept) > k {
		kept = kept[:k]
	}
	out := make([]memento.RecallItem, len(kept))
	for i, s := range kept {
		out[i] = s.item()
	}
	return out
}

// checkQuery validates a recall query and applies the default K.
func checkQuery(q *memento.RecallQuery) error {
	if q.Scope.User == "" {
		return memento.Errorf(memento.EINVALID, "user is required")
	}
	if q.K < 0 || q.K > MaxK {
		return memento.Errorf(memento.EINVALID, "k must be 1 to %d, got %d", MaxK, q.K)
	}
	if q.K == 0 {
		q.K = DefaultK
	}
	if len(q.Query) > MaxQueryBytes {
		return memento.Errorf(memento.EINVALID, "query is %d bytes, over the limit of %d", len(q.Query), MaxQueryBytes)
	}
	if q.Now.IsZero() {
		q.Now = time.Now()
	}
	return memento.CheckTime("now", q.Now)
}

// Limits of a recall query.
const (
	DefaultK      = 10
	MaxK          = 100
	MaxQueryBytes = 4000
)

// Memories recalls the user's current memories: semantic attribute values
// and episodes, by the hybrid score.
type Memories struct {
	Store    memento.RecallStore
	Embedder memento.Embedder
	Weights  Weights
	// Keyword and Recent bound the candidates (DefaultKeyword and
	// DefaultRecent when 0).
	Keyword, Recent int
}

// Recall returns at most q.K memories, best first. Errors: EINVALID.
func (r *Memories) Recall(ctx context.Context, q memento.RecallQuery) ([]memento.RecallItem, error) {
	if err := checkQuery(&q); err != nil {
		return nil, err
	}
	tq := newTimeQuery(q.Query, q.Now)
	qv, eid := queryVector(ctx, r.Embedder, q), embedderID(r.Embedder)
	fetch := func(cq memento.CandidateQuery) ([]memento.RecallCandidate, error) {
		return r.Store.MemoryCandidates(ctx, q.Scope, withVector(cq, qv, eid))
	}
	cq := memento.CandidateQuery{Query: q.Query, Keyword: orDefault(r.Keyword, DefaultKeyword), Recent: orDefault(r.Recent, DefaultRecent)}
	cq.From, cq.To = tq.period()
	cands, err := fetch(cq)
	if err != nil {
		return nil, fmt.Errorf("recall memories: %w", err)
	}
	w := weights(r.Weights)
	items := score(cands, qv, eid, q.Now, w, q.Query != "", tq)
	if q.Query != "" && w.Expand > 0 {
		items, err = secondHop(ctx, items, cands, q, w, tq, qv, eid, fetch)
		if err != nil {
			return nil, fmt.Errorf("recall memories: %w", err)
		}
	}
	if q.Query != "" && w.Recollect > 0 {
		words := recollection(cands, q.Query, tq, DefaultRecollectTerms)
		items, err = recollect(items, cands, words, q, w, tq, qv, eid, fetch)
		if err != nil {
			return nil, fmt.Errorf("recall memories: %w", err)
		}
	}
	return top(items, q.K), nil
}

// Messages recalls past messages of the user's threads by the hybrid
// score, with the neighbours of matching messages.
type Messages struct {
	Store    memento.RecallStore
	Embedder memento.Embedder
	Weights  Weights
	// Keyword, Recent, Neighbors and NeighborHits bound the candidates
	// (the Default constants when 0; Neighbors < 0 takes none).
	Keyword, Recent, Neighbors, NeighborHits int
	// ExcludeQueryThread leaves out the messages of the query's thread,
	// for callers whose prompt already holds that thread.
	ExcludeQueryThread bool
}

// Recall returns at most q.K messages, best first. Errors: EINVALID.
func (r *Messages) Recall(ctx context.Context, q memento.RecallQuery) ([]memento.RecallItem, error) {
	if err := checkQuery(&q); err != nil {
		return nil, err
	}
	cq := memento.CandidateQuery{Query: q.Query, Keyword: orDefault(r.Keyword, DefaultKeyword),
		Recent: orDefault(r.Recent, DefaultRecent), Neighbors: orDefault(r.Neighbors, DefaultNeighbors),
		NeighborHits: orDefault(r.NeighborHits, DefaultNeighborHits)}
	if r.Neighbors < 0 {
		cq.Neighbors = 0
	}
	if r.ExcludeQueryThread {
		cq.ExcludeThread = q.Thread
	}
	tq := newTimeQuery(q.Query, q.Now)
	cq.From, cq.To = tq.period()
	qv, eid := queryVector(ctx, r.Embedder, q), embedderID(r.Embedder)
	cands, err := r.Store.MessageCandidates(ctx, q.Scope, withVector(cq, qv, eid))
	if err != nil {
		return nil, fmt.Errorf("recall messages: %w", err)
	}
	// Further queries of the messages leave out the thread the first did.
	fetch := func(hq memento.CandidateQuery) ([]memento.RecallCandidate, error) {
		hq.ExcludeThread = cq.ExcludeThread
		return r.Store.MessageCandidates(ctx, q.Scope, withVector(hq, qv, eid))
	}
	w := weights(r.Weights)
	items := score(cands, qv, eid, q.Now, w, q.Query != "", tq)
	if q.Query != "" && w.Expand > 0 {
		items, err = secondHop(ctx, items, cands, q, w, tq, qv, eid, fetch)
		if err != nil {
			return nil, fmt.Errorf("recall messages: %w", err)
		}
	}
	if q.Query != "" && w.Recollect > 0 {
		// Only these memories' words are read; with the query's vector a
		// store need not decode their embeddings.
		mems, err := r.Store.MemoryCandidates(ctx, q.Scope, withVector(memento.CandidateQuery{Query: q.Query, Keyword: DefaultRecollectMemories}, qv, eid))
		if err != nil {
			return nil, fmt.Errorf("recall messages: %w", err)
		}
		words := recollection(mems, q.Query, tq, DefaultRecollectTerms)
		items, err = recollect(items, cands, words, q, w, tq, qv, eid, fetch)
		if err != nil {
			return nil, fmt.Errorf("recall messages: %w", err)
		}
	}
	if q.Query != "" && w.Neighbor > 0 && cq.Neighbors > 0 {
		addNeighbors(items, cq.Neighbors, w)
	}
	return top(items, q.K), nil
}

// addNeighbors raises each message by the best relevance of the messages
// up to n positions away in its thread, and makes it relevant when a
// neighbour is.
func addNeighbors(items []scored, n int, w Weights) {
	type pos struct {
		thread string
		seq    int64
	}
	rel := make(map[pos]float64, len(items))
	for _, s := range items {
		if s.relevant {
			rel[pos{s.c.Thread, s.c.Seq}] = w.BM25*s.bm25 + w.Vector*s.vector + w.Expand*s.expand + w.Recollect*s.recollect
		}
	}
	for i := range items {
		s := &items[i]
		best := 0.0
		for d := -n; d <= n; d++ {
			if d == 0 {
				continue
			}
			if r, ok := rel[pos{s.c.Thread, s.c.Seq + int64(d)}]; ok && r > best {
				best = r
			}
		}
		if best > 0 {
			s.neighbor = best
			s.score += w.Neighbor * best
			s.relevant = true
		}
	}
}

// withVector gives a candidate query the query's embedding qv by the
// embedder eid, so that a store that can answers each candidate's cosine
// to it rather than the candidate's embedding.
func withVector(cq memento.CandidateQuery, qv []float32, eid string) memento.CandidateQuery {
	if qv != nil && eid != "" {
		cq.Vector, cq.Embedder = qv, eid
	}
	return cq
}

func weights(w Weights) Weights {
	if w == (Weights{}) {
		return DefaultWeights
	}
	return w
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return max(v, 0)
}

func embedderID(e memento.Embedder) string {
	if e == nil {
		return ""
	}
	return e.ID()
}
