package eval

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/fulltext"
)

// BM25 is the keyword baseline of the recall evaluations: Okapi BM25 over
// each user's raw turns as they were said (speaker-prefixed in LoCoMo),
// with no memory, no embeddings and no neighbours. Its Recall is a
// RecallFunc, so it is scored by the same code as Memento.
//
// NewBM25 reads text exactly as Memento's keyword search does: a turn's
// terms are fulltext.Tokens (diacritics folded, Porter-stemmed, every word
// kept, as the store's FTS5 tables keep them) and a query's are its topic
// words (fulltext.QueryWords, which drops the stop words recall drops),
// each made a term by fulltext.Term. So a gap between Memento and this
// baseline is what Memento's ranking adds, not a difference in what a word
// is. NewRawBM25 is the weaker baseline of earlier figures: every word of
// the query kept, stop words included.
type BM25 struct {
	users map[string]*bm25Index
	// raw keeps the query's stop words (NewRawBM25).
	raw bool
}

type bm25Index struct {
	docs   []memento.Message
	terms  []map[string]int // term frequencies per doc
	length []int
	df     map[string]int
	avgLen float64
}

// NewBM25 indexes the turns of every user with Memento's tokenizer, stop
// words and stemmer.
func NewBM25(turns map[string][]memento.Message) *BM25 {
	return newBM25(turns, false)
}

// NewRawBM25 is NewBM25 whose queries keep their stop words.
func NewRawBM25(turns map[string][]memento.Message) *BM25 {
	return newBM25(turns, true)
}

func newBM25(turns map[string][]memento.Message, raw bool) *BM25 {
	b := &BM25{users: make(map[string]*bm25Index, len(turns)), raw: raw}
	for user, msgs := range turns {
		idx := &bm25Index{docs: msgs, df: map[string]int{}}
		total := 0
		for _, m := range msgs {
			tf := map[string]int{}
			n := 0
			for _, t := range fulltext.Tokens(m.Text) {
				tf[t]++
				n++
			}
			for t := range tf {
				idx.df[t]++
			}
			idx.terms = append(idx.terms, tf)
			idx.length = append(idx.length, n)
			total += n
		}
		if len(msgs) > 0 {
			idx.avgLen = float64(total) / float64(len(msgs))
		}
		b.users[user] = idx
	}
	return b
}

// queryTerms returns the distinct terms of a query.
func (b *BM25) queryTerms(query string) []string {
	words := fulltext.QueryWords(query)
	if b.raw {
		words = fulltext.Words(query)
	}
	seen := map[string]bool{}
	var q []string
	for _, w := range words {
		t := fulltext.Term(w)
		if t != "" && !seen[t] {
			seen[t] = true
			q = append(q, t)
		}
	}
	return q
}

// Recall returns the user's k turns that score highest for the query,
// best first (ties: earlier turn first); turns sharing no term with the
// query are not returned.
func (b *BM25) Recall(_ context.Context, user, query string, k int) ([]memento.RecallItem, error) {
	idx := b.users[user]
	if idx == nil || k <= 0 {
		return []memento.RecallItem{}, nil
	}
	q := b.queryTerms(query)
	n := float64(len(idx.docs))
	type hit struct {
		i     int
		score float64
	}
	var hits []hit
	for i, tf := range idx.terms {
		s := 0.0
		for _, t := range q {
			f := float64(tf[t])
			if f == 0 {
				continue
			}
			df := float64(idx.df[t])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			norm := 1 - fulltext.BM25B + fulltext.BM25B*float64(idx.length[i])/idx.avgLen
			s += idf * f * (fulltext.BM25K1 + 1) / (f + fulltext.BM25K1*norm)
		}
		if s > 0 {
			hits = append(hits, hit{i, s})
		}
	}
	sort.SliceStable(hits, func(a, c int) bool { return hits[a].score > hits[c].score })
	if len(hits) > k {
		hits = hits[:k]
	}
	out := make([]memento.RecallItem, len(hits))
	for j, h := range hits {
		out[j] = turnItem(idx.docs[h.i], h.score, "bm25")
	}
	return out, nil
}

// Dense is the embedding baseline: each user's raw turns ranked by the
// cosine similarity of their embedding to the query's, by one embedder
// (the one Memento is configured with), with no keywords, memory or
// neighbours. Its Recall is a RecallFunc.
type Dense struct {
	embedder memento.Embedder
	users    map[string]*denseIndex
}

type denseIndex struct {
	docs []memento.Message
	vecs [][]float32
}

// denseBatch is how many turns are embedded in one call.
const denseBatch = 256

// NewDense embeds the turns of every user with e. Errors: those of the
// embedder.
func NewDense(ctx context.Context, turns map[string][]memento.Message, e memento.Embedder) (*Dense, error) {
	d := &Dense{embedder: e, users: make(map[string]*denseIndex, len(turns))}
	for user, msgs := range turns {
		idx := &denseIndex{docs: msgs}
		for i := 0; i < len(msgs); i += denseBatch {
			texts := make([]string, 0, denseBatch)
			for _, m := range msgs[i:min(i+denseBatch, len(msgs))] {
				texts = append(texts, m.Text)
			}
			vs, err := e.Embed(ctx, texts)
			if err != nil {
				return nil, fmt.Errorf("dense baseline: embed the turns of %s: %w", user, err)
			}
			if len(vs) != len(texts) {
				return nil, memento.Errorf(memento.EINTERNAL, "dense baseline: embedder %s returned %d vectors for %d texts", e.ID(), len(vs), len(texts))
			}
			idx.vecs = append(idx.vecs, vs...)
		}
		d.users[user] = idx
	}
	return d, nil
}

// Recall returns the user's k turns most similar to the query, best first
// (ties: earlier turn first); turns of no positive similarity are not
// returned.
func (d *Dense) Recall(ctx context.Context, user, query string, k int) ([]memento.RecallItem, error) {
	idx := d.users[user]
	if idx == nil || k <= 0 || query == "" {
		return []memento.RecallItem{}, nil
	}
	vs, err := d.embedder.Embed(ctx, []string{query})
	if err != nil {
		return nil, fmt.Errorf("dense baseline: embed the query: %w", err)
	}
	if len(vs) != 1 {
		return nil, memento.Errorf(memento.EINTERNAL, "dense baseline: embedder %s returned %d vectors for one query", d.embedder.ID(), len(vs))
	}
	type hit struct {
		i     int
		score float64
	}
	var hits []hit
	for i, v := range idx.vecs {
		if s := cosine(vs[0], v); s > 0 {
			hits = append(hits, hit{i, s})
		}
	}
	sort.SliceStable(hits, func(a, c int) bool { return hits[a].score > hits[c].score })
	if len(hits) > k {
		hits = hits[:k]
	}
	out := make([]memento.RecallItem, len(hits))
	for j, h := range hits {
		out[j] = turnItem(idx.docs[h.i], h.score, "vector")
	}
	return out, nil
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

// Recency is the baseline that ignores the query: the user's k most recent
// turns, newest first. Its Recall is a RecallFunc.
type Recency struct {
	users map[string][]memento.Message
}

// NewRecency keeps the turns of every user in time order.
func NewRecency(turns map[string][]memento.Message) *Recency {
	r := &Recency{users: make(map[string][]memento.Message, len(turns))}
	for user, msgs := range turns {
		sorted := append([]memento.Message(nil), msgs...)
		sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].At.Before(sorted[j].At) })
		r.users[user] = sorted
	}
	return r
}

// Recall returns the user's k most recent turns, newest first.
func (r *Recency) Recall(_ context.Context, user, _ string, k int) ([]memento.RecallItem, error) {
	msgs := r.users[user]
	n := max(0, min(k, len(msgs)))
	out := make([]memento.RecallItem, 0, n)
	for i := len(msgs) - 1; len(out) < n; i-- {
		// The score only orders: the newest turn scores n, the oldest 1.
		out = append(out, turnItem(msgs[i], float64(n-len(out)), "recency"))
	}
	return out, nil
}

// turnItem is a turn as a recall item with one named score.
func turnItem(m memento.Message, score float64, name string) memento.RecallItem {
	at := m.At
	return memento.RecallItem{
		ID: m.ID, Kind: memento.RecallMessage, Text: m.Text, Score: score,
		Scores: map[string]float64{name: score}, Sources: []string{m.ID}, At: &at,
	}
}
