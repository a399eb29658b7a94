package prefs

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/memento-ai/memento"
)

// Settings of a TitleSpace.
const (
	// StatsSample is how many catalog titles, evenly spaced in the
	// catalog's order, the whitening statistics are computed from.
	StatsSample = 2000
	// embedBatch is how many texts one Embed call gets.
	embedBatch = 256
	// blockVectors is how many vectors share one allocation.
	blockVectors = 1024
	// MaxTitleCast is how many top-billed cast members a title's text
	// names, so that preferences for people can match their films.
	MaxTitleCast = 4
)

// TitleText is the text a title is embedded from: its genres, title,
// overview and top-billed cast.
func TitleText(t memento.Title) string {
	var b strings.Builder
	if len(t.Genres) > 0 {
		b.WriteString(strings.Join(t.Genres, ", "))
		b.WriteString(". ")
	}
	b.WriteString(t.Title)
	b.WriteString(". ")
	b.WriteString(t.Overview)
	if len(t.Cast) > 0 {
		b.WriteString(" Starring ")
		b.WriteString(strings.Join(t.Cast[:min(len(t.Cast), MaxTitleCast)], ", "))
		b.WriteString(".")
	}
	return b.String()
}

// TitleSpace holds catalog titles embedded for ranking by one embedder,
// computed once per title and cached for the life of the process.
//
// Vectors are whitened before they are compared: every dimension is
// centred on the catalog's mean and divided by its standard deviation
// (both estimated from StatsSample titles and shrunk towards plain cosine
// for small catalogs), and the result normalised.
// Hashed and neural embeddings alike have directions that most titles
// share: words every plot uses ("American", "film", "directed"), and broad
// genres such as Crime, onto which the offline embedder also maps
// narrower words ("heist"). Without whitening these dominate the cosine,
// and a liking for heist films ranks every short crime plot first; with
// it, the rarer, more specific features count, and heist films come
// first. Concept vectors get the same scaling (not the centring: a
// concept is not a title), so a score stays a dot product of two unit
// vectors and a user's whole taste folds into one vector.
type TitleSpace struct {
	// Cache, when set before the space is first used, keeps the vectors
	// the embedder made for titles, by the embedder's id and the title's
	// text, so that a restarted server reads them rather than embedding
	// the catalog again (embedCached). A cache that fails is logged and
	// the titles are embedded.
	Cache memento.VectorCache
	// Logger reports a failing cache; nil discards.
	Logger *slog.Logger

	embedder memento.Embedder
	catalog  []memento.Title

	// fromCache and embedded count the texts read from the cache and
	// those given to the embedder; cacheFailed is set by the first
	// failure of the cache, which alone is logged.
	fromCache, embedded atomic.Int64
	cacheFailed         atomic.Bool

	statsMu sync.Mutex
	ready   bool
	mean    []float32
	scale   []float32

	mu    sync.RWMutex
	index map[string][]float32
	block []float32 // the unused rest of the current allocation
	// warm holds the vectors of the whole catalog, in its order, in one
	// allocation once Warm has run (index then points into it): ranking
	// the whole catalog (as evaluations and benchmarks do) skips 36,000
	// map lookups and reads the vectors as one stream.
	warm matrix

	termsOnce sync.Once
	termIdx   *termIndex
}

// terms returns the word index of the catalog, building it on first use.
func (ts *TitleSpace) terms() *termIndex {
	ts.termsOnce.Do(func() { ts.termIdx = buildTermIndex(ts.catalog) })
	return ts.termIdx
}

// Positions returns the position of each title in the catalog (by id), -1
// for titles outside it.
func (ts *TitleSpace) Positions(titles []memento.Title) []int32 {
	if ts.isWhole(titles) {
		pos := make([]int32, len(titles))
		for i := range pos {
			pos[i] = int32(i)
		}
		return pos
	}
	return ts.positions(titles)
}

// positions is Positions for titles that are not the whole catalog in its
// order (for which each title's position is its index, and the caller
// needs no slice).
func (ts *TitleSpace) positions(titles []memento.Title) []int32 {
	x := ts.terms()
	out := make([]int32, len(titles))
	for i, t := range titles {
		if p, ok := x.pos[t.ID]; ok {
			out[i] = p
		} else {
			out[i] = -1
		}
	}
	return out
}

// isWhole reports whether titles are the whole catalog in its order: at
// once when they are the catalog's own slice, otherwise by comparing ids
// (36,000 of them take a quarter of a millisecond, even when the strings
// are the catalog's own).
func (ts *TitleSpace) isWhole(titles []memento.Title) bool {
	if len(titles) != len(ts.catalog) || len(titles) == 0 {
		return false
	}
	if &titles[0] == &ts.catalog[0] {
		return true
	}
	for i := range titles {
		if titles[i].ID != ts.catalog[i].ID {
			return false
		}
	}
	return true
}

// NewTitleSpace returns the space of catalog's titles under embedder. The
// catalog (in a fixed order, such as catalog.Index.All) gives the
// whitening statistics and the titles Warm embeds; titles outside it are
// embedded when first ranked. With an empty catalog vectors are only
// normalised.
func NewTitleSpace(embedder memento.Embedder, catalog []memento.Title) *TitleSpace {
	return &TitleSpace{embedder: embedder, catalog: catalog, index: map[string][]float32{}}
}

// EmbedderID is the id of the embedder whose vectors the space holds.
func (ts *TitleSpace) EmbedderID() string { return ts.embedder.ID() }

// stats computes the whitening statistics on first use; a failure (the
// embedder is unavailable) is tried again by the next caller.
func (ts *TitleSpace) stats(ctx context.Context) error {
	ts.statsMu.Lock()
	defer ts.statsMu.Unlock()
	if ts.ready {
		return nil
	}
	dim := ts.embedder.Dim()
	mean, scale := make([]float32, dim), make([]float32, dim)
	for d := range scale {
		scale[d] = 1
	}
	if n := len(ts.catalog); n > 0 {
		step := max(1, n/StatsSample)
		var texts []string
		for i := 0; i < n; i += step {
			texts = append(texts, TitleText(ts.catalog[i]))
		}
		vs, err := ts.embedAll(ctx, texts)
		if err != nil {
			return fmt.Errorf("title statistics: %w", err)
		}
		mean, scale = whitening(vs, dim)
	}
	ts.mean, ts.scale, ts.ready = mean, scale, true
	return nil
}

// shrinkTitles is the weight, in titles, of the prior the whitening
// statistics shrink towards: a mean of zero and the same variance in
// every dimension (plain cosine). With the full sample of StatsSample
// titles the data dominates; a catalog of a dozen titles, whose
// per-dimension variances mean little, is compared by nearly plain cosine.
const shrinkTitles = 50

// whitening estimates each dimension's mean and the scale (one over the
// standard deviation) from sample vectors, shrunk towards the prior.
func whitening(vs [][]float32, dim int) (mean, scale []float32) {
	n := float64(len(vs))
	sum, sq := make([]float64, dim), make([]float64, dim)
	for _, v := range vs {
		for d := 0; d < dim && d < len(v); d++ {
			sum[d] += float64(v[d])
		}
	}
	for d := range sum {
		sum[d] /= n
	}
	var avg float64
	for _, v := range vs {
		for d := 0; d < dim && d < len(v); d++ {
			x := float64(v[d]) - sum[d]
			sq[d] += x * x
			avg += x * x
		}
	}
	avg /= n * float64(dim)
	// The floor keeps dimensions that hardly vary (unused hash buckets)
	// from being blown up into noise.
	const floor = 1e-4
	mean, scale = make([]float32, dim), make([]float32, dim)
	for d := range sum {
		mean[d] = float32(sum[d] * n / (n + shrinkTitles))
		variance := (sq[d] + shrinkTitles*avg) / (n + shrinkTitles)
		scale[d] = float32(1 / math.Sqrt(variance+floor))
	}
	return mean, scale
}

// embedAll embeds texts in batches, on all processors, reading those the
// cache holds from it.
func (ts *TitleSpace) embedAll(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	if ts.Cache != nil && ts.embedder.Dim() == 0 && len(texts) > 0 {
		// An embedder that learns its dimension from its first answer
		// (openai without MEMENTO_EMBED_DIM) names it in its id only
		// then, and the cache is read under the id its vectors were
		// written under: one text tells it, rather than the first
		// batches all missing the cache.
		if _, err := ts.embed(ctx, texts[:1]); err != nil {
			return nil, err
		}
	}
	batches := (len(texts) + embedBatch - 1) / embedBatch
	workers := min(runtime.GOMAXPROCS(0), batches)
	errs := make([]error, batches)
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Go(func() {
			for b := range next {
				lo, hi := b*embedBatch, min((b+1)*embedBatch, len(texts))
				vs, err := ts.embedCached(ctx, texts[lo:hi])
				if err != nil {
					errs[b] = err
					continue
				}
				copy(out[lo:hi], vs)
			}
		})
	}
	for b := range batches {
		next <- b
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// embed gives texts to the embedder.
func (ts *TitleSpace) embed(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := ts.embedder.Embed(ctx, texts)
	if err == nil && len(vs) != len(texts) {
		err = fmt.Errorf("embedder returned %d vectors for %d texts", len(vs), len(texts))
	}
	if err != nil {
		return nil, err
	}
	ts.embedded.Add(int64(len(texts)))
	return vs, nil
}

// embedCached returns the raw vector of each text: from the cache where
// it holds one of the embedder's dimension, otherwise from the embedder,
// and then into the cache.
func (ts *TitleSpace) embedCached(ctx context.Context, texts []string) ([][]float32, error) {
	if ts.Cache == nil {
		return ts.embed(ctx, texts)
	}
	keys := make([]memento.TextKey, len(texts))
	for i, t := range texts {
		keys[i] = memento.KeyOf(t)
	}
	dim := ts.embedder.Dim()
	cached, err := ts.Cache.CachedVectors(ctx, ts.embedder.ID(), keys)
	if err != nil {
		ts.cacheFailure("read", err)
		cached = nil
	}
	out := make([][]float32, len(texts))
	var missing []int
	for i := range texts {
		if i < len(cached) && dim > 0 && len(cached[i]) == dim {
			out[i] = cached[i]
		} else {
			missing = append(missing, i)
		}
	}
	ts.fromCache.Add(int64(len(texts) - len(missing)))
	if len(missing) == 0 {
		return out, nil
	}
	mtexts := make([]string, len(missing))
	mkeys := make([]memento.TextKey, len(missing))
	for k, i := range missing {
		mtexts[k], mkeys[k] = texts[i], keys[i]
	}
	vs, err := ts.embed(ctx, mtexts)
	if err != nil {
		return nil, err
	}
	for k, i := range missing {
		out[i] = vs[k]
	}
	// Under the id the vectors were made under, read now: an embedder
	// that has just learnt its dimension names it.
	if err := ts.Cache.CacheVectors(ctx, ts.embedder.ID(), mkeys, vs); err != nil {
		ts.cacheFailure("write", err)
	}
	return out, nil
}

// cacheFailure logs the cache's first failure; the titles are embedded
// meanwhile, so a broken cache costs time, never an answer.
func (ts *TitleSpace) cacheFailure(op string, err error) {
	if ts.cacheFailed.Swap(true) || ts.Logger == nil {
		return
	}
	ts.Logger.Warn("the title vectors' cache failed; titles are embedded instead (later failures are not logged)", "op", op, "err", err)
}

// Counts returns how many title texts were read from the cache and how
// many given to the embedder so far.
func (ts *TitleSpace) Counts() (fromCache, embedded int64) {
	return ts.fromCache.Load(), ts.embedded.Load()
}

// Concept returns a concept vector scaled like the titles and normalised.
// A vector of another length is returned normalised as it is.
func (ts *TitleSpace) Concept(ctx context.Context, v []float32) ([]float32, error) {
	if err := ts.stats(ctx); err != nil {
		return nil, err
	}
	if len(v) != len(ts.scale) {
		return Normalize(v), nil
	}
	out := make([]float32, len(v))
	for d, x := range v {
		out[d] = x * ts.scale[d]
	}
	return Normalize(out), nil
}

// Vectors returns the whitened unit vector of each title, embedding (in
// batches) those seen for the first time. The vectors are the space's own
// and must not be modified.
func (ts *TitleSpace) Vectors(ctx context.Context, titles []memento.Title) ([][]float32, error) {
	if err := ts.stats(ctx); err != nil {
		return nil, err
	}
	if m, ok := ts.wholeMatrix(titles); ok {
		out := make([][]float32, m.rows())
		for i := range out {
			out[i] = m.row(i)
		}
		return out, nil
	}
	return ts.lookup(ctx, titles)
}

// rows returns the vectors of titles for ranking: the catalog's matrix
// when whole (titles are the whole catalog in its order) and Warm has run,
// otherwise one vector per title, embedding those seen for the first
// time.
func (ts *TitleSpace) rows(ctx context.Context, titles []memento.Title, whole bool) (rowSet, error) {
	if err := ts.stats(ctx); err != nil {
		return rowSet{}, err
	}
	if whole {
		ts.mu.RLock()
		m := ts.warm
		ts.mu.RUnlock()
		if m.rows() == len(titles) {
			return rowSet{m: m}, nil
		}
	}
	vs, err := ts.lookup(ctx, titles)
	if err != nil {
		return rowSet{}, err
	}
	return rowSet{each: vs}, nil
}

// wholeMatrix returns the catalog's matrix when titles are the whole
// catalog in its order and Warm has run.
func (ts *TitleSpace) wholeMatrix(titles []memento.Title) (matrix, bool) {
	ts.mu.RLock()
	m := ts.warm
	ts.mu.RUnlock()
	if m.rows() == 0 || !ts.isWhole(titles) {
		return matrix{}, false
	}
	return m, true
}

// lookup returns the vector of each title from the index, embedding (in
// batches) those seen for the first time. The statistics must be ready.
func (ts *TitleSpace) lookup(ctx context.Context, titles []memento.Title) ([][]float32, error) {
	out := make([][]float32, len(titles))
	var missing []int
	ts.mu.RLock()
	for i, t := range titles {
		if v, ok := ts.index[t.ID]; ok {
			out[i] = v
		} else {
			missing = append(missing, i)
		}
	}
	ts.mu.RUnlock()
	if len(missing) == 0 {
		return out, nil
	}
	texts := make([]string, 0, len(missing))
	seen := make(map[string]int, len(missing))
	var first []int // index into titles of the first occurrence of each text
	for _, i := range missing {
		if _, ok := seen[titles[i].ID]; ok {
			continue
		}
		seen[titles[i].ID] = len(texts)
		texts = append(texts, TitleText(titles[i]))
		first = append(first, i)
	}
	raw, err := ts.embedAll(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed titles: %w", err)
	}
	ts.mu.Lock()
	for k, i := range first {
		id := titles[i].ID
		if v, ok := ts.index[id]; ok { // embedded meanwhile by another caller
			raw[k] = v
			continue
		}
		v := ts.alloc(len(raw[k]))
		ts.whiten(v, raw[k])
		ts.index[id] = v
		raw[k] = v
	}
	ts.mu.Unlock()
	for _, i := range missing {
		out[i] = raw[seen[titles[i].ID]]
	}
	return out, nil
}

// alloc carves a vector of n values out of the current block. The caller
// holds mu.
func (ts *TitleSpace) alloc(n int) []float32 {
	if len(ts.block) < n {
		ts.block = make([]float32, n*blockVectors)
	}
	v := ts.block[:n:n]
	ts.block = ts.block[n:]
	return v
}

// whiten writes the whitened, normalised raw vector into dst.
func (ts *TitleSpace) whiten(dst, raw []float32) {
	if len(raw) != len(ts.scale) {
		copy(dst, Normalize(raw))
		return
	}
	var norm float64
	for d, x := range raw {
		y := (x - ts.mean[d]) * ts.scale[d]
		dst[d] = y
		norm += float64(y) * float64(y)
	}
	if norm == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(norm))
	for d := range dst {
		dst[d] *= inv
	}
}

// Warm indexes the catalog's words and embeds every catalog title now, so
// that the first ranking does not pay for them (the word index alone took
// 0.4-0.8 s of a first turn under load), and lays the catalog's vectors
// out in one matrix for ranking the whole catalog. It is safe to call
// concurrently with ranking.
func (ts *TitleSpace) Warm(ctx context.Context) error {
	ts.terms()
	if err := ts.stats(ctx); err != nil {
		return err
	}
	vs, err := ts.lookup(ctx, ts.catalog)
	if err != nil {
		return err
	}
	if len(vs) == 0 {
		return nil
	}
	// An embedder returns vectors of one length; should one not, the
	// catalog keeps its vectors one by one.
	dim := len(vs[0])
	if dim == 0 {
		return nil
	}
	for _, v := range vs {
		if len(v) != dim {
			return nil
		}
	}
	m := newMatrix(vs, dim)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.warm.rows() > 0 {
		return nil
	}
	ts.warm = m
	// The index points into the matrix too, so that the blocks the
	// vectors were first written to can be freed: the catalog's vectors
	// are held once. Vectors already handed out stay valid (the blocks
	// live while they are used) and hold the same values.
	for i, t := range ts.catalog {
		ts.index[t.ID] = m.row(i)
	}
	ts.block = nil
	return nil
}

// Len is the number of titles embedded so far.
func (ts *TitleSpace) Len() int {
	ts.mu.RLock()
	defer ts.mu.RUnlock()
	return len(ts.index)
}
