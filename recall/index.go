package recall

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/fulltext"
)

// Index keeps the recall documents (current memories and messages) of
// recently active users in memory and answers candidate queries from
// there, as a memento.RecallStore: keyword matches ranked by BM25 over the
// user's own documents, the most recent documents, and the neighbours of
// matching messages, with the same bounds and rules as the store's own
// queries. It exists because the store's full-text indexes are shared by
// every user: a query word common across users costs the same however
// little of it one user has, so assembly time grew with the whole store.
// The index's cost grows with the user's history alone.
//
// Before every query the index asks the store's change log what changed
// for the user since it last looked (one indexed read), so a query always
// sees every write committed before it, by this process or another. A user
// is read in full on first use, when the log was pruned past the index's
// position, and after eviction.
//
// Embeddings are held as int8 with a scale per vector (a quarter of the
// memory of float32): each stays within a cosine of 0.999 of the stored
// vector, so a similarity moves by about a thousandth; keyword scores are
// exact. A query that carries its embedding (CandidateQuery.Vector) gets
// each candidate's cosine to it, taken on the integers, and no vector is
// decoded.
type Index struct {
	corpus memento.RecallCorpus
	budget int64

	mu    sync.Mutex
	users map[memento.Scope]*userIndex
	bytes int64
	tick  int64
	stats IndexStats
}

// IndexStats counts what an Index did, for metrics and tests.
type IndexStats struct {
	Users     int   // users held now
	Bytes     int64 // estimated memory held
	Loads     int64 // users read in full
	Refreshes int64 // change reads that found changes
	Evictions int64 // users dropped to stay within the budget
}

// DefaultIndexBudget is the memory an Index holds by default: about 140
// users with 4,000 documents (1,000 memories and their messages) each.
const DefaultIndexBudget = 512 << 20

// NewIndex returns an index over a store's recall documents that holds
// about budget bytes (DefaultIndexBudget when budget <= 0), evicting the
// least recently used users past it.
func NewIndex(c memento.RecallCorpus, budget int64) *Index {
	if budget <= 0 {
		budget = DefaultIndexBudget
	}
	return &Index{corpus: c, budget: budget, users: map[memento.Scope]*userIndex{}}
}

// Stats returns the index's counters.
func (x *Index) Stats() IndexStats {
	x.mu.Lock()
	defer x.mu.Unlock()
	st := x.stats
	st.Users, st.Bytes = len(x.users), x.bytes
	return st
}

var _ memento.RecallStore = (*Index)(nil)

// MemoryCandidates returns the user's current memories for recall, as
// the store's MemoryCandidates does. Errors: EINVALID.
func (x *Index) MemoryCandidates(ctx context.Context, s memento.Scope, q memento.CandidateQuery) ([]memento.RecallCandidate, error) {
	u, err := x.acquire(ctx, s, q)
	if err != nil {
		return nil, fmt.Errorf("memory candidates: %w", err)
	}
	defer u.mu.Unlock()
	return u.mems.candidates(q, ""), nil
}

// MessageCandidates returns the user's messages for recall, as the
// store's MessageCandidates does. Errors: EINVALID.
func (x *Index) MessageCandidates(ctx context.Context, s memento.Scope, q memento.CandidateQuery) ([]memento.RecallCandidate, error) {
	u, err := x.acquire(ctx, s, q)
	if err != nil {
		return nil, fmt.Errorf("message candidates: %w", err)
	}
	defer u.mu.Unlock()
	return u.msgs.candidates(q, q.ExcludeThread), nil
}

// CurrentMemories returns the user's current memories of the given
// attributes (in any case; all of them when none is given), newest first
// by ValidFrom, ties as the store lists them (semantic values first, then
// by attribute and row), at most limit (0: no limit). The index keeps
// what recall reads of a memory: each holds its ID, Kind, Mode,
// Attribute, Value and ValidFrom, and nothing else. It reads the store
// only for the user's changes, where a listing from the store reads every
// row. Errors: EINVALID.
func (x *Index) CurrentMemories(ctx context.Context, s memento.Scope, attributes []string, limit int) ([]memento.Memory, error) {
	if limit < 0 {
		return nil, memento.Errorf(memento.EINVALID, "limit must not be negative, got %d", limit)
	}
	u, err := x.acquire(ctx, s, memento.CandidateQuery{})
	if err != nil {
		return nil, fmt.Errorf("current memories: %w", err)
	}
	defer u.mu.Unlock()
	ds := u.mems
	var slots []int32
	for i := range ds.docs {
		d := &ds.docs[i]
		if d.alive && (len(attributes) == 0 || slices.ContainsFunc(attributes, func(a string) bool { return strings.EqualFold(a, d.c.Attribute) })) {
			slots = append(slots, int32(i))
		}
	}
	slices.SortFunc(slots, func(a, b int32) int {
		da, db := &ds.docs[a], &ds.docs[b]
		if c := db.c.At.Compare(da.c.At); c != 0 {
			return c
		}
		// The store lists semantic values ("attribute") before episodes.
		if c := cmp.Compare(da.c.Kind, db.c.Kind); c != 0 {
			return c
		}
		if c := cmp.Compare(da.c.Attribute, db.c.Attribute); c != 0 {
			return c
		}
		return cmp.Compare(da.key, db.key)
	})
	if limit > 0 && len(slots) > limit {
		slots = slots[:limit]
	}
	out := make([]memento.Memory, len(slots))
	for i, slot := range slots {
		c := &ds.docs[slot].c
		mode := memento.ModeSemantic
		if c.Kind == memento.MemoryEpisode {
			mode = memento.ModeEpisodic
		}
		out[i] = memento.Memory{ID: c.ID, Kind: c.Kind, Mode: mode, Attribute: c.Attribute, Value: c.Text, ValidFrom: c.At}
	}
	return out, nil
}

// acquire returns the user's index, brought up to date with the store and
// locked; the caller unlocks it.
func (x *Index) acquire(ctx context.Context, s memento.Scope, q memento.CandidateQuery) (*userIndex, error) {
	if s.Tenant == "" {
		s.Tenant = memento.DefaultTenant
	}
	if s.User == "" {
		return nil, memento.Errorf(memento.EINVALID, "user is required")
	}
	if err := q.Check(); err != nil {
		return nil, err
	}
	x.mu.Lock()
	u := x.users[s]
	if u == nil {
		u = newUserIndex()
		x.users[s] = u
	}
	x.tick++
	u.used = x.tick
	x.mu.Unlock()

	u.mu.Lock()
	v, _ := ctx.Value(viewKey{}).(*view)
	if u.loaded && v.has(s) {
		return u, nil
	}
	after := int64(-1)
	if u.loaded {
		after = u.through
	}
	docs, err := x.corpus.RecallDocs(ctx, s, after)
	if err != nil {
		u.mu.Unlock()
		return nil, err
	}
	changed := u.apply(docs)
	size := u.bytes
	v.add(s)
	u.mu.Unlock()

	x.mu.Lock()
	if x.users[s] == u {
		x.bytes += size - u.accounted
		u.accounted = size
	}
	if docs.Full {
		x.stats.Loads++
	} else if changed {
		x.stats.Refreshes++
	}
	x.evict(u)
	x.mu.Unlock()
	u.mu.Lock()
	return u, nil
}

// One recall asks the index several times for one user, from the
// recallers it runs at once (memories, messages, and the memories drawn
// from the messages), and each asked the store's change log again: two
// of the three reads found nothing new, or something committed while the
// request ran, which it need not see. A recall therefore reads each
// user's changes once (withView): the first query of the user in the
// request brings the index up to date, and the others answer from there.
// Every write committed before the request is still seen.

type viewKey struct{}

// view is the users one request brought up to date.
type view struct {
	mu    sync.Mutex
	users []memento.Scope
}

// withView returns ctx with a view of its own: queries under it read
// each user's changes once.
func withView(ctx context.Context) context.Context {
	return context.WithValue(ctx, viewKey{}, &view{})
}

// has reports whether the request brought s up to date; a nil view never
// did.
func (v *view) has(s memento.Scope) bool {
	if v == nil {
		return false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Contains(v.users, s)
}

// add records that the request brought s up to date.
func (v *view) add(s memento.Scope) {
	if v == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if !slices.Contains(v.users, s) {
		v.users = append(v.users, s)
	}
}

// evict drops the least recently used users, never keep, until the index
// is within its budget. x.mu is held.
func (x *Index) evict(keep *userIndex) {
	for x.bytes > x.budget && len(x.users) > 1 {
		var oldest memento.Scope
		var victim *userIndex
		for s, u := range x.users {
			if u != keep && (victim == nil || u.used < victim.used) {
				oldest, victim = s, u
			}
		}
		if victim == nil {
			return
		}
		delete(x.users, oldest)
		x.bytes -= victim.accounted
		x.stats.Evictions++
	}
}

// userIndex is one user's documents. mu guards everything but used and
// accounted (its size as the Index counts it), which the Index's own lock
// guards.
type userIndex struct {
	mu      sync.Mutex
	loaded  bool
	through int64
	bytes   int64
	mems    *docSet
	msgs    *docSet

	used      int64
	accounted int64
}

func newUserIndex() *userIndex {
	return &userIndex{mems: newDocSet(true), msgs: newDocSet(false)}
}

// apply brings the user's documents up to d and reports whether anything
// changed.
func (u *userIndex) apply(d *memento.RecallDocs) bool {
	if d.Full {
		u.mems, u.msgs = newDocSet(true), newDocSet(false)
	}
	for _, k := range d.Removed {
		u.set(k.Memory).remove(k.Key)
	}
	for i := range d.Docs {
		doc := &d.Docs[i]
		set := u.set(doc.Candidate.Kind != memento.RecallMessage)
		set.remove(doc.Key)
		if doc.Current && !doc.Rejected {
			set.add(doc)
		}
	}
	u.mems.compact()
	u.msgs.compact()
	u.loaded, u.through = true, d.Through
	u.bytes = userOverhead + u.mems.bytes + u.msgs.bytes
	return d.Full || len(d.Docs) > 0 || len(d.Removed) > 0
}

func (u *userIndex) set(memory bool) *docSet {
	if memory {
		return u.mems
	}
	return u.msgs
}

// userOverhead is what a user's entry costs with no documents (its sets'
// maps), so that asking for many users who have nothing stored is bounded
// by the budget too.
const userOverhead = 2 << 10

// docSet holds the documents of one kind (memories, or messages) with an
// inverted index of their terms.
type docSet struct {
	memory bool
	docs   []doc            // by slot; removed documents stay until compact
	slots  map[int64]int32  // row key -> slot of the live document
	post   map[string][]hit // term -> the live and removed slots holding it
	df     map[string]int   // term -> live documents holding it
	pos    map[position]int32
	names  map[string]string
	// order holds the slots by time (oldest first, ties by row key), for
	// the most recent documents; sorted is false after an out-of-order add.
	order  []int32
	sorted bool
	live   int
	tokens int64 // summed length of the live documents
	bytes  int64
}

type hit struct {
	slot int32
	tf   float32 // weighted term frequency: value 1, attribute 0.5
}

type position struct {
	thread string
	seq    int64
}

type doc struct {
	c      memento.RecallCandidate // without Vector
	key    int64
	alive  bool
	length int32 // tokens, with FTS5's one scope token
	vec    []int8
	scale  float32
	sq     int32 // the sum of vec's squares, for cosines
}

func newDocSet(memory bool) *docSet {
	return &docSet{memory: memory, slots: map[int64]int32{}, post: map[string][]hit{}, df: map[string]int{}, pos: map[position]int32{}, names: map[string]string{}, sorted: true}
}

// Field weights of BM25, as the store's bm25() calls give them: a
// memory's value counts 1 and its attribute 0.5; a message's text 1.
const attributeWeight = 0.5

// add indexes a document (none with the same key is live).
func (ds *docSet) add(d *memento.RecallDoc) {
	slot := int32(len(ds.docs))
	c := d.Candidate
	vec, scale := quantize(c.Vector)
	c.Vector = nil
	// Kinds, roles, embedders, threads and attributes repeat across a
	// user's documents: one copy of each is kept.
	c.Kind, c.Embedder, c.Thread, c.Attribute = ds.intern(c.Kind), ds.intern(c.Embedder), ds.intern(c.Thread), ds.intern(c.Attribute)
	c.Role = memento.Role(ds.intern(string(c.Role)))
	tf := map[string]float32{}
	n := 0
	for _, t := range fulltext.Tokens(c.Text) {
		tf[t]++
		n++
	}
	if ds.memory {
		for _, t := range fulltext.Tokens(c.Attribute) {
			tf[t] += attributeWeight
			n++
		}
	}
	ds.docs = append(ds.docs, doc{c: c, key: d.Key, alive: true, length: int32(n + 1), vec: vec, scale: scale, sq: squares(vec)})
	ds.slots[d.Key] = slot
	if k := len(ds.order); k > 0 && ds.older(slot, ds.order[k-1]) {
		ds.sorted = false
	}
	ds.order = append(ds.order, slot)
	for t, f := range tf {
		ds.post[t] = append(ds.post[t], hit{slot: slot, tf: f})
		ds.df[t]++
	}
	if !ds.memory {
		ds.pos[position{c.Thread, c.Seq}] = slot
	}
	ds.live++
	ds.tokens += int64(n + 1)
	ds.bytes += docBytes(&c, len(vec), len(tf))
}

// remove drops the live document with the key, if any. Its postings stay
// (a removed slot is skipped) until compact.
func (ds *docSet) remove(key int64) {
	slot, ok := ds.slots[key]
	if !ok {
		return
	}
	d := &ds.docs[slot]
	d.alive = false
	delete(ds.slots, key)
	seen := map[string]bool{}
	for _, t := range ds.terms(d) {
		if !seen[t] {
			seen[t] = true
			if ds.df[t]--; ds.df[t] <= 0 {
				delete(ds.df, t)
			}
		}
	}
	if !ds.memory {
		p := position{d.c.Thread, d.c.Seq}
		if ds.pos[p] == slot {
			delete(ds.pos, p)
		}
	}
	ds.live--
	ds.tokens -= int64(d.length)
	ds.bytes -= docBytes(&d.c, len(d.vec), len(seen))
}

func (ds *docSet) terms(d *doc) []string {
	t := fulltext.Tokens(d.c.Text)
	if ds.memory {
		t = append(t, fulltext.Tokens(d.c.Attribute)...)
	}
	return t
}

// compact rebuilds the set without its removed documents once they are a
// third of it, so postings do not fill with dead slots.
func (ds *docSet) compact() {
	dead := len(ds.docs) - ds.live
	if dead < 64 || dead*3 < len(ds.docs) {
		return
	}
	fresh := newDocSet(ds.memory)
	for i := range ds.docs {
		d := &ds.docs[i]
		if !d.alive {
			continue
		}
		rd := memento.RecallDoc{Key: d.key, Candidate: d.c, Current: true}
		rd.Candidate.Vector = d.vector()
		fresh.add(&rd)
	}
	*ds = *fresh
}

// intern returns the set's copy of s.
func (ds *docSet) intern(s string) string {
	if s == "" {
		return ""
	}
	if v, ok := ds.names[s]; ok {
		return v
	}
	ds.names[s] = s
	return s
}

// docBytes estimates the memory a document holds: its fields, text and
// embedding, its postings and its entries in the set's maps, with Go's
// allocation overheads, so that Stats.Bytes comes close to the heap the
// index holds (measured: within 5% for users of 4,000 documents, 3.5 MB
// each).
func docBytes(c *memento.RecallCandidate, dims, terms int) int64 {
	n := 310 + len(c.ID) + len(c.Text) + dims + 30*terms + 48*len(c.Periods)
	for _, s := range c.Sources {
		n += 16 + len(s)
	}
	return int64(n)
}

// quantize stores v as int8 with one scale: v[i] ≈ q[i] * scale.
func quantize(v []float32) ([]int8, float32) {
	if len(v) == 0 {
		return nil, 0
	}
	var peak float32
	for _, x := range v {
		peak = max(peak, float32(math.Abs(float64(x))))
	}
	q := make([]int8, len(v))
	if peak == 0 {
		return q, 0
	}
	scale := peak / 127
	for i, x := range v {
		q[i] = int8(math.Round(float64(x / scale)))
	}
	return q, scale
}

// vector returns the document's embedding as float32 (nil without one).
func (d *doc) vector() []float32 {
	if d.vec == nil {
		return nil
	}
	v := make([]float32, len(d.vec))
	for i, x := range d.vec {
		v[i] = float32(x) * d.scale
	}
	return v
}

// squares is the sum of v's squares (at most 127² a dimension).
func squares(v []int8) int32 {
	var n int32
	for _, x := range v {
		n += int32(x) * int32(x)
	}
	return n
}

// cosine is the cosine similarity of the query's embedding q (qq the sum
// of its squares) to the document's. The scale cancels out, so it is
// computed on the stored integers: the cosine of q to the decoded vector
// but for the rounding of the decoded floats (a millionth at most in the
// tests). 0 when the lengths differ or either is zero, as recall's own
// cosine.
func (d *doc) cosine(q []float32, qq float64) float64 {
	if len(q) != len(d.vec) || len(q) == 0 || qq == 0 || d.sq == 0 {
		return 0
	}
	var dot float64
	for i, x := range d.vec {
		dot += float64(q[i]) * float64(x)
	}
	return dot / math.Sqrt(qq*float64(d.sq))
}

// vectors gives each candidate the vector of the document in its slot,
// decoded into one allocation for them all (the candidates of a query
// live as long as the query).
func (ds *docSet) vectors(cands []memento.RecallCandidate, slots []int32) {
	n := 0
	for _, slot := range slots {
		n += len(ds.docs[slot].vec)
	}
	block := make([]float32, n)
	for i, slot := range slots {
		d := &ds.docs[slot]
		if d.vec == nil {
			continue
		}
		v := block[:len(d.vec):len(d.vec)]
		block = block[len(d.vec):]
		for j, x := range d.vec {
			v[j] = float32(x) * d.scale
		}
		cands[i].Vector = v
	}
}

// candidates answers q over the set, leaving out the thread exclude.
func (ds *docSet) candidates(q memento.CandidateQuery, exclude string) []memento.RecallCandidate {
	out := make([]memento.RecallCandidate, 0, max(q.Keyword, 0)+max(q.Recent, 0))
	var slots []int32 // each candidate's, for its vector
	seen := map[int32]bool{}
	take := func(slot int32, bm25 float64, neighbor bool) {
		if seen[slot] {
			return
		}
		seen[slot] = true
		c := ds.docs[slot].c
		c.BM25, c.Neighbor = bm25, neighbor
		out = append(out, c)
		slots = append(slots, slot)
	}
	keep := func(d *doc) bool { return exclude == "" || d.c.Thread != exclude }
	var hits []scoredSlot
	if q.Keyword > 0 {
		scores := ds.bm25(q.Query)
		if len(scores) > 0 {
			all := ds.best(scores, q.Keyword, keep, false)
			hits = append(hits, all...)
			if !q.From.IsZero() || !q.To.IsZero() {
				from, to := q.From, q.To
				inPeriod := func(d *doc) bool {
					return keep(d) && (from.IsZero() || !d.c.At.Before(from)) && (to.IsZero() || d.c.At.Before(to))
				}
				hits = append(hits, ds.best(scores, q.Keyword, inPeriod, true)...)
			}
		}
		for _, h := range hits {
			take(h.slot, h.score, false)
		}
	}
	if !ds.memory && q.Neighbors > 0 && len(out) > 0 {
		n := len(out)
		if q.NeighborHits > 0 {
			n = min(n, q.NeighborHits)
		}
		for _, c := range slices.Clone(out[:n]) {
			for d := int64(-q.Neighbors); d <= int64(q.Neighbors); d++ {
				if d == 0 || c.Seq+d <= 0 {
					continue
				}
				if slot, ok := ds.pos[position{c.Thread, c.Seq + d}]; ok && ds.docs[slot].alive {
					take(slot, 0, true)
				}
			}
		}
	}
	if q.Recent > 0 {
		for _, slot := range ds.recent(q.Recent, keep) {
			take(slot, 0, false)
		}
	}
	if q.Vector != nil {
		ds.cosines(out, slots, q.Vector, q.Embedder)
	} else {
		ds.vectors(out, slots)
	}
	return out
}

// cosines gives each candidate of the query's embedder its cosine to the
// query's embedding q, and no candidate a vector.
func (ds *docSet) cosines(cands []memento.RecallCandidate, slots []int32, q []float32, embedder string) {
	var qq float64
	for _, x := range q {
		qq += float64(x) * float64(x)
	}
	for i, slot := range slots {
		d := &ds.docs[slot]
		if d.vec != nil && d.c.Embedder == embedder {
			cands[i].Cosine, cands[i].HasCosine = d.cosine(q, qq), true
		}
	}
}

type scoredSlot struct {
	slot  int32
	score float64
}

// bm25 scores the live documents matching q's topic words: Okapi BM25
// with the user's own document frequencies, skipping words that match
// none or more than memento.MaxTermMatches documents.
func (ds *docSet) bm25(query string) map[int32]float64 {
	if ds.live == 0 {
		return nil
	}
	n := float64(ds.live)
	avg := float64(ds.tokens) / n
	var scores map[int32]float64
	seen := map[string]bool{}
	for _, w := range fulltext.QueryWords(query) {
		t := fulltext.Term(w)
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		df := ds.df[t]
		if df == 0 || df > memento.MaxTermMatches {
			continue
		}
		idf := math.Log((n - float64(df) + 0.5) / (float64(df) + 0.5))
		if idf <= 0 {
			idf = 1e-6
		}
		if scores == nil {
			scores = map[int32]float64{}
		}
		for _, h := range ds.post[t] {
			d := &ds.docs[h.slot]
			if !d.alive {
				continue
			}
			f := float64(h.tf)
			k := fulltext.BM25K1 * (1 - fulltext.BM25B + fulltext.BM25B*float64(d.length)/avg)
			scores[h.slot] += idf * f * (fulltext.BM25K1 + 1) / (f + k)
		}
	}
	return scores
}

// best returns the k best scored documents that ok admits, best first;
// ties go to the lower row key, or with byTime to the newer document.
func (ds *docSet) best(scores map[int32]float64, k int, ok func(*doc) bool, byTime bool) []scoredSlot {
	var out []scoredSlot
	for slot, s := range scores {
		if s > 0 && ok(&ds.docs[slot]) {
			out = append(out, scoredSlot{slot, s})
		}
	}
	slices.SortFunc(out, func(a, b scoredSlot) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		da, db := &ds.docs[a.slot], &ds.docs[b.slot]
		if byTime {
			if c := db.c.At.Compare(da.c.At); c != 0 {
				return c
			}
		}
		return cmp.Compare(da.key, db.key)
	})
	if len(out) > k {
		out = out[:k]
	}
	return out
}

// older reports whether the document in slot a comes before the one in
// slot b in time (ties: by row key).
func (ds *docSet) older(a, b int32) bool {
	da, db := &ds.docs[a], &ds.docs[b]
	if !da.c.At.Equal(db.c.At) {
		return da.c.At.Before(db.c.At)
	}
	return da.key < db.key
}

// recent returns the k most recent live documents that ok admits, newest
// first (ties: the higher row key first). Those already taken as keyword
// matches count among the k, as in the store's query.
func (ds *docSet) recent(k int, ok func(*doc) bool) []int32 {
	if !ds.sorted {
		slices.SortFunc(ds.order, func(a, b int32) int {
			if ds.older(a, b) {
				return -1
			}
			if ds.older(b, a) {
				return 1
			}
			return 0
		})
		ds.sorted = true
	}
	var out []int32
	for i := len(ds.order) - 1; i >= 0 && len(out) < k; i-- {
		slot := ds.order[i]
		if d := &ds.docs[slot]; d.alive && ok(d) {
			out = append(out, slot)
		}
	}
	return out
}
