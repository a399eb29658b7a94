package eval

import (
	"context"
	"math"
	"sort"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/fulltext"
)

// BM25 is the keyword baseline of the recall evaluations: Okapi BM25 over
// each user's raw turns as they were said (speaker-prefixed in LoCoMo),
// Porter-stemmed, with no memory, no embeddings and no neighbours. Its
// Recall is a RecallFunc, so it is scored by the same code as Memento.
type BM25 struct {
	users map[string]*bm25Index
}

type bm25Index struct {
	docs   []memento.Message
	terms  []map[string]int // term frequencies per doc
	length []int
	df     map[string]int
	avgLen float64
}

// NewBM25 indexes the turns of every user.
func NewBM25(turns map[string][]memento.Message) *BM25 {
	b := &BM25{users: make(map[string]*bm25Index, len(turns))}
	for user, msgs := range turns {
		idx := &bm25Index{docs: msgs, df: map[string]int{}}
		total := 0
		for _, m := range msgs {
			tf := map[string]int{}
			n := 0
			for _, w := range fulltext.Words(m.Text) {
				tf[fulltext.Stem(w)]++
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

// Recall returns the user's k turns that score highest for the query,
// best first (ties: earlier turn first); turns sharing no word with the
// query are not returned.
func (b *BM25) Recall(_ context.Context, user, query string, k int) ([]memento.RecallItem, error) {
	idx := b.users[user]
	if idx == nil || k <= 0 {
		return []memento.RecallItem{}, nil
	}
	seen := map[string]bool{}
	var q []string
	for _, w := range fulltext.Words(query) {
		t := fulltext.Stem(w)
		if !seen[t] {
			seen[t] = true
			q = append(q, t)
		}
	}
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
