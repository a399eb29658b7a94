package catalog

import (
	"context"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/memento-ai/memento"
)

// MaxTextBytes bounds the free text of a query.
const MaxTextBytes = 2000

// notabilityBlend is how much notability lifts a free-text match in the
// default order: a title's BM25 score is multiplied by 1 + notabilityBlend
// × its notability, so the best-known title gains up to double. Relevance
// still leads (a film named after the query beats a famous one that
// mentions it once in its plot), and among about equally relevant matches
// the one people know comes first.
const notabilityBlend = 1

// Tiers of a free-text match in the default order: exact and near-exact
// title matches come before everything BM25 ranks.
const (
	tierText    int8 = iota // ranked by BM25 blended with notability
	tierArticle             // the title is the text with a leading article added or removed
	tierExact               // the title is the text
	tierYear                // the title and year are the text ("Heat 1995")
)

// plan is a validated query resolved against the index: names turned into
// numbers, years into a doc range.
type plan struct {
	lo, hi    int32    // docs with a year in the query's range
	typ       int32    // type number, or -1 for any type
	genreMask []uint64 // the query's genres as a bit set, nil for any genre
	allGenres bool
	exclMask  []uint64 // genres no result may have, nil for none
	people    []int32  // person numbers that must all be in the cast
	adultOnly bool     // only adult titles (otherwise only non-adult ones)
	terms     []int32  // free-text term numbers, nil without text
	text      bool     // the query has free text
	byYear    bool     // memento.SortYear: the order of earlier versions
	exact     []hit    // docs whose title matches the text, with their tier
	none      bool     // some constraint can never match
	offset    int
	size      int
}

// scratch is the per-search working memory, pooled so a search allocates
// almost nothing.
type scratch struct {
	scores   []float32 // by doc
	tiers    []int8    // by doc: the tier of an exact title match, 0 for none
	touched  []int32   // docs with a non-zero score
	excluded []uint64  // bit set of excluded docs
	exclList []int32   // the docs set in excluded, to clear them
	heap     []hit
	docs     []int32
}

// hit is a candidate result. A better tier wins, then a higher score, then
// the smaller doc (the later year, then the smaller id).
type hit struct {
	doc   int32
	tier  int8
	score float32
}

func newScratch(n int) *scratch {
	return &scratch{scores: make([]float32, n), tiers: make([]int8, n), excluded: make([]uint64, n/64+1)}
}

// Search returns one page of the titles matching q, in a deterministic
// order that q.Sort chooses:
//
//   - memento.SortDefault without free text: notability descending, then
//     year descending, then id;
//   - memento.SortDefault with free text: first the titles that are the
//     text (ignoring case, accents and punctuation, as ResolveTitle
//     matches), those with its year first when the text ends in one ("Heat
//     1995"), then those that are the text with a leading article added or
//     removed ("Avengers", "The Avengers"), each group by notability; then
//     every other match by BM25 relevance multiplied by 1 + its
//     notability; then year descending, then id;
//   - memento.SortYear: BM25 relevance when q.Text is set, then year
//     descending, then id (the order of earlier versions).
//
// Semantics: Genres match any of the named genres, or all of them with
// AllGenres, case-insensitively and through CanonicalGenre's aliases
// ("sci-fi" is "Science Fiction"); a genre the catalog does not have matches
// nothing. Type matches exactly, ignoring case. MinYear and MaxYear are
// inclusive, and a title of unknown year matches no year bound. Every one of
// People must be in the cast (matched as Person matches). IsAdult nil or
// false leaves adult titles out, true returns only them. Exclude ids are
// never returned, and Total counts matches after exclusions. Text is ranked
// by BM25 (k1 1.2, b 0.75) over title (counted twice) and overview; a title
// matches if it has any of the text's terms. Terms found in more than half
// of all titles are ignored when the text has a rarer one ("film about
// boxing" matches the boxing films, not every film). Text made only of
// stopwords ("the") constrains nothing, except in the default order when
// it is a title ("It", "Up"): then it matches the titles of that name.
//
// Paging: Page counts from 1, Size defaults to memento.DefaultPageSize.
// A page past the end has no titles (an empty, non-nil slice) and Last set.
//
// Errors: EINVALID when Page is below 1, Size is negative or over
// memento.MaxPageSize, a year is outside memento.MinYear-MaxYear, MinYear is
// after MaxYear, Text is over MaxTextBytes, or Sort is not an order above.
func (x *Index) Search(ctx context.Context, q memento.TitleQuery) (*memento.TitlePage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := x.plan(q)
	if err != nil {
		return nil, err
	}
	page := &memento.TitlePage{Titles: []memento.Title{}, Page: q.Page, Size: p.size}
	if p.none {
		page.Last = true
		return page, nil
	}
	s, _ := x.scratch.Get().(*scratch)
	if s == nil { // an Index not made by New
		s = newScratch(len(x.titles))
	}
	defer x.scratch.Put(s)
	x.setExcluded(s, q.Exclude)
	defer s.clearExcluded()

	var docs []int32
	if p.text {
		docs, page.Total = x.searchText(&p, s)
	} else {
		docs, page.Total = x.searchFilter(&p, s)
	}
	page.Titles = x.cloneTitles(docs)
	page.Last = p.offset+len(docs) >= page.Total
	return page, nil
}

// plan validates q and resolves it against the index.
func (x *Index) plan(q memento.TitleQuery) (plan, error) {
	p := plan{typ: -1, size: q.Size, adultOnly: q.IsAdult != nil && *q.IsAdult}
	switch {
	case q.Page < 1:
		return p, memento.Errorf(memento.EINVALID, "page must be at least 1, got %d", q.Page)
	case q.Size == 0:
		p.size = memento.DefaultPageSize
	case q.Size < 1 || q.Size > memento.MaxPageSize:
		return p, memento.Errorf(memento.EINVALID, "size must be between 1 and %d, got %d", memento.MaxPageSize, q.Size)
	}
	for _, y := range []struct {
		name string
		year int
	}{{"minYear", q.MinYear}, {"maxYear", q.MaxYear}} {
		if y.year != 0 && (y.year < memento.MinYear || y.year > memento.MaxYear) {
			return p, memento.Errorf(memento.EINVALID, "%s %d is outside %d-%d", y.name, y.year, memento.MinYear, memento.MaxYear)
		}
	}
	if q.MinYear != 0 && q.MaxYear != 0 && q.MinYear > q.MaxYear {
		return p, memento.Errorf(memento.EINVALID, "minYear %d is after maxYear %d", q.MinYear, q.MaxYear)
	}
	if len(q.Text) > MaxTextBytes {
		return p, memento.Errorf(memento.EINVALID, "text is %d bytes long, over the limit of %d", len(q.Text), MaxTextBytes)
	}
	switch q.Sort {
	case memento.SortDefault:
	case memento.SortYear:
		p.byYear = true
	default:
		return p, memento.Errorf(memento.EINVALID, "sort must be %q or empty, got %q", memento.SortYear, q.Sort)
	}
	if q.Page-1 > math.MaxInt/p.size {
		p.offset = math.MaxInt
	} else {
		p.offset = (q.Page - 1) * p.size
	}

	// Years: docs are sorted by year descending with unknown (0) last, so
	// the range is a run of docs.
	n := len(x.titles)
	p.lo, p.hi = 0, int32(n)
	if q.MaxYear != 0 {
		p.lo = int32(sort.Search(n, func(i int) bool { return x.years[i] <= int32(q.MaxYear) }))
	}
	if q.MinYear != 0 || q.MaxYear != 0 {
		p.hi = int32(sort.Search(n, func(i int) bool { return x.years[i] < int32(max(q.MinYear, 1)) }))
	}
	if p.lo >= p.hi {
		p.none = true
	}

	if q.Type != "" {
		id, ok := x.typeIDs[strings.ToLower(strings.TrimSpace(q.Type))]
		if !ok {
			p.none = true
		}
		p.typ = id
	}

	known := 0
	named := 0
	for _, g := range q.Genres {
		k := normKey(CanonicalGenre(g))
		if k == "" {
			continue
		}
		named++
		id, ok := x.genreIDs[k]
		if !ok {
			continue
		}
		if p.genreMask == nil {
			p.genreMask = make([]uint64, x.genreWords)
		}
		p.genreMask[id/64] |= 1 << (id % 64)
		known++
	}
	p.allGenres = q.AllGenres
	if named > 0 && (known == 0 || (q.AllGenres && known < named)) {
		p.none = true // no genre the catalog has, or all of them asked with one it lacks
	}

	for _, g := range q.ExcludeGenres {
		if id, ok := x.genreIDs[normKey(CanonicalGenre(g))]; ok {
			if p.exclMask == nil {
				p.exclMask = make([]uint64, x.genreWords)
			}
			p.exclMask[id/64] |= 1 << (id % 64)
		}
	}

	for _, name := range q.People {
		k := normKey(name)
		if k == "" {
			continue
		}
		id, ok := x.personIDs[k]
		if !ok {
			p.none = true
			continue
		}
		if !slices.Contains(p.people, id) {
			p.people = append(p.people, id)
		}
	}

	if tokens := tokenize(nil, q.Text); len(tokens) > 0 {
		p.text = true
		for _, tok := range tokens {
			if id, ok := x.termIDs[tok]; ok && !slices.Contains(p.terms, id) {
				p.terms = append(p.terms, id)
			}
		}
		if len(p.terms) == 0 {
			p.none = true
		}
		p.terms = x.dropCommonTerms(p.terms)
		if !p.byYear {
			p.exact = x.exactMatches(q.Text)
		}
	} else if !p.byYear && strings.TrimSpace(q.Text) != "" {
		// Text of stopwords only constrains nothing, unless it is a title:
		// "It", "Up" and "Her" are films, and the user means them.
		if p.exact = x.exactMatches(q.Text); len(p.exact) > 0 {
			p.text = true
		}
	}
	return p, nil
}

// exactMatches returns the docs whose title is the text, in the tiers of
// the default order (tierYear, tierExact, tierArticle), by looking the
// text up as ResolveTitle does: a handful of map lookups, whatever the
// catalog's size.
func (x *Index) exactMatches(text string) []hit {
	var out []hit
	add := func(docs []int32, tier int8) {
		for _, d := range docs {
			out = append(out, hit{doc: d, tier: tier})
		}
	}
	text = strings.TrimSpace(text)
	k := normKey(text)
	if k == "" {
		return nil
	}
	add(x.titleKeys[k], tierExact)
	if b := stripArticle(k); b != k {
		add(x.titleKeys[b], tierArticle)
	}
	add(x.bareKeys[k], tierArticle)
	// Only a text that ends in a digit or a parenthesis can end in a year;
	// the test spares most searches the regular expression.
	if last := text[len(text)-1]; last >= '0' && last <= '9' || last == ')' {
		if m := trailingYear.FindStringSubmatch(text); m != nil {
			year, _ := strconv.Atoi(m[2])
			for _, docs := range x.titleMatches(normKey(m[1])) {
				for _, d := range docs {
					if x.titles[d].Year == year {
						out = append(out, hit{doc: d, tier: tierYear})
					}
				}
			}
		}
	}
	return out
}

// dropCommonTerms leaves out of a query the terms that occur in more than
// half of all titles ("film", "american" in Wikipedia's plots), as long as
// some rarer term remains. Such a term says nearly nothing about relevance
// (its idf is close to zero), but would make almost every title a match.
func (x *Index) dropCommonTerms(terms []int32) []int32 {
	half := int32(len(x.titles) / 2)
	rare := terms[:0:0]
	for _, t := range terms {
		if x.termStart[t+1]-x.termStart[t] <= half {
			rare = append(rare, t)
		}
	}
	if len(rare) == 0 {
		return terms
	}
	return rare
}

// setExcluded marks the docs of the excluded ids in s.
func (x *Index) setExcluded(s *scratch, ids []string) {
	for _, id := range ids {
		if d, ok := x.byID[id]; ok {
			s.excluded[d/64] |= 1 << (d % 64)
			s.exclList = append(s.exclList, d)
		}
	}
}

func (s *scratch) clearExcluded() {
	for _, d := range s.exclList {
		s.excluded[d/64] = 0
	}
	s.exclList = s.exclList[:0]
}

// match reports whether doc d passes every constraint of p except the free
// text.
func (x *Index) match(p *plan, s *scratch, d int32) bool {
	if d < p.lo || d >= p.hi || x.adult[d] != p.adultOnly {
		return false
	}
	if p.typ >= 0 && x.typeOf[d] != p.typ {
		return false
	}
	if s.excluded[d/64]&(1<<(d%64)) != 0 {
		return false
	}
	if p.genreMask != nil {
		bits := x.genreBits[int(d)*x.genreWords : (int(d)+1)*x.genreWords]
		any := false
		for i, m := range p.genreMask {
			if p.allGenres && bits[i]&m != m {
				return false
			}
			any = any || bits[i]&m != 0
		}
		if !any {
			return false
		}
	}
	if p.exclMask != nil {
		bits := x.genreBits[int(d)*x.genreWords : (int(d)+1)*x.genreWords]
		for i, m := range p.exclMask {
			if bits[i]&m != 0 {
				return false
			}
		}
	}
	if len(p.people) > 0 {
		cast := x.castIDs[x.castStart[d]:x.castStart[d+1]]
		for _, id := range p.people {
			if !slices.Contains(cast, id) {
				return false
			}
		}
	}
	return true
}

// searchFilter answers a query without free text: it walks the shortest
// posting list that every result must be on (or the year range when no
// list is shorter), in doc order. That is already the result order of
// SortYear; for the default order, it keeps the most notable matches the
// page needs in a bounded heap.
func (x *Index) searchFilter(p *plan, s *scratch) (docs []int32, total int) {
	var driver []int32
	best := int(p.hi - p.lo)
	consider := func(list []int32) {
		lo, _ := slices.BinarySearch(list, p.lo)
		hi, _ := slices.BinarySearch(list, p.hi)
		if hi-lo < best || driver == nil && hi-lo <= best {
			driver, best = list[lo:hi], hi-lo
		}
	}
	if p.typ >= 0 {
		consider(x.byType[p.typ])
	}
	for _, id := range p.people {
		consider(x.byPerson[id])
	}
	if p.adultOnly {
		consider(x.adultDocs)
	}
	if p.genreMask != nil {
		var single int32 = -1
		count := 0
		for i, m := range p.genreMask {
			for b := 0; b < 64; b++ {
				if m&(1<<b) != 0 {
					count++
					single = int32(i*64 + b)
					if p.allGenres {
						consider(x.byGenre[single])
					}
				}
			}
		}
		if count == 1 && !p.allGenres {
			consider(x.byGenre[single])
		}
	}

	docs = s.docs[:0]
	// k is how many of the most notable matches the page needs; past the
	// end of what can match it is 0 and the heap stays empty.
	k, candidates := 0, int(p.hi-p.lo)
	if driver != nil {
		candidates = len(driver)
	}
	if p.offset < candidates {
		k = min(p.offset+p.size, candidates)
	}
	h := s.heap[:0]
	keep := func(d int32) {
		if !x.match(p, s, d) {
			return
		}
		if p.byYear {
			if total >= p.offset && total-p.offset < p.size {
				docs = append(docs, d)
			}
		} else if n := x.notab[d]; k > 0 && (len(h) < k || n > h[0].score) {
			// Docs come in ascending order, so one that only ties the
			// worst kept hit ranks below it and is not pushed.
			h = pushBest(h, k, hit{doc: d, score: n})
		}
		total++
	}
	switch {
	case driver != nil:
		for _, d := range driver {
			keep(d)
		}
	case p.genreMask != nil && x.genreWords == 1:
		// Scanning the year range for genres: test each title's genre word
		// in a tight loop first, which rejects most titles at about a
		// nanosecond each.
		m := p.genreMask[0]
		for d, bits := range x.genreBits[p.lo:p.hi] {
			if (p.allGenres && bits&m == m) || (!p.allGenres && bits&m != 0) {
				keep(p.lo + int32(d))
			}
		}
	default:
		for d := p.lo; d < p.hi; d++ {
			keep(d)
		}
	}
	if !p.byYear {
		docs = pageOf(h, p, docs)
	}
	s.heap = h[:0]
	s.docs = docs[:0]
	return docs, total
}

// MaxCandidates bounds what one Candidates call returns.
const MaxCandidates = 1000

// Candidates returns the n best titles matching q (n at most
// MaxCandidates), in Search's order, without paging and without counting
// every match: the pool a recommendation is drawn from. q.Page and q.Size
// are ignored. For a broad query without free text in the default order
// (most of the catalog matches, as for "movies"), it visits titles from
// the most notable down and stops at the n-th match, which costs a few
// hundred checks instead of one per title; other queries are answered as
// Search answers them. Errors: those of Search.
func (x *Index) Candidates(ctx context.Context, q memento.TitleQuery, n int) ([]memento.Title, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n = min(max(n, 0), MaxCandidates)
	q.Page, q.Size = 1, min(max(n, 1), memento.MaxPageSize)
	p, err := x.plan(q)
	if err != nil {
		return nil, err
	}
	out := []memento.Title{}
	if p.none || n == 0 {
		return out, nil
	}
	s, _ := x.scratch.Get().(*scratch)
	if s == nil {
		s = newScratch(len(x.titles))
	}
	defer x.scratch.Put(s)
	x.setExcluded(s, q.Exclude)
	defer s.clearExcluded()
	if p.text || p.byYear || !x.broad(&p) {
		// One walk as Search's, with a page of n: a narrow list is cheap
		// to walk whole, and free text is scored once.
		p.offset, p.size = 0, n
		var docs []int32
		if p.text {
			docs, _ = x.searchText(&p, s)
		} else {
			docs, _ = x.searchFilter(&p, s)
		}
		return x.cloneTitles(docs), nil
	}
	docs := make([]int32, 0, n)
	for _, d := range x.byNotab {
		if x.match(&p, s, d) {
			docs = append(docs, d)
			if len(docs) == n {
				break
			}
		}
	}
	return x.cloneTitles(docs), nil
}

// broad reports whether a query without free text matches so much of the
// catalog that visiting titles in notability order finds its best matches
// sooner than walking its shortest list: when no list it must be on, and
// no year range, holds under a quarter of the titles.
func (x *Index) broad(p *plan) bool {
	limit := len(x.titles) / 4
	if int(p.hi-p.lo) < limit {
		return false
	}
	short := func(list []int32) bool {
		lo, _ := slices.BinarySearch(list, p.lo)
		hi, _ := slices.BinarySearch(list, p.hi)
		return hi-lo < limit
	}
	if p.typ >= 0 && short(x.byType[p.typ]) || p.adultOnly && short(x.adultDocs) {
		return false
	}
	for _, id := range p.people {
		if short(x.byPerson[id]) {
			return false
		}
	}
	if p.genreMask != nil {
		total := 0
		for i, m := range p.genreMask {
			for b := 0; b < 64; b++ {
				if m&(1<<b) != 0 {
					total += len(x.byGenre[i*64+b])
				}
			}
		}
		if total < limit {
			return false
		}
	}
	return true
}

// searchText answers a query with free text: it adds up the BM25 scores of
// the docs on the terms' posting lists, keeps those that pass the filters,
// and selects the page with a bounded heap instead of sorting every match.
func (x *Index) searchText(p *plan, s *scratch) (docs []int32, total int) {
	touched := s.touched[:0]
	for _, t := range p.terms {
		idf := x.idf[t]
		for i := x.termStart[t]; i < x.termStart[t+1]; i++ {
			d := x.postDoc[i]
			if s.scores[d] == 0 {
				touched = append(touched, d)
			}
			s.scores[d] += idf * x.postW[i]
		}
	}
	// An exact title match is a match even if its words were dropped from
	// the query as too common.
	for _, e := range p.exact {
		if s.tiers[e.doc] == 0 && s.scores[e.doc] == 0 {
			touched = append(touched, e.doc)
		}
		s.tiers[e.doc] = max(s.tiers[e.doc], e.tier)
	}
	// k is how many of the best matches the page needs; past the end of
	// what can match it is 0 and the heap stays empty.
	k := 0
	if p.offset < len(touched) {
		k = min(p.offset+p.size, len(touched))
	}
	h := s.heap[:0]
	for _, d := range touched {
		if !x.match(p, s, d) {
			continue
		}
		total++
		if k == 0 {
			continue
		}
		e := hit{doc: d, score: s.scores[d]}
		if !p.byYear {
			if e.tier = s.tiers[d]; e.tier > tierText {
				e.score = x.notab[d] // exact matches are ordered by notability alone
			} else {
				e.score *= 1 + notabilityBlend*x.notab[d]
			}
		}
		h = pushBest(h, k, e)
	}
	for _, d := range touched {
		s.scores[d] = 0
	}
	for _, e := range p.exact {
		s.tiers[e.doc] = 0
	}
	s.touched = touched[:0]
	docs = pageOf(h, p, s.docs[:0])
	s.heap = h[:0]
	s.docs = docs[:0]
	return docs, total
}

// pushBest adds e to h, a heap of at most k hits with the worst at the
// root, when it is among the k best so far.
func pushBest(h []hit, k int, e hit) []hit {
	if len(h) < k {
		h = append(h, e)
		siftUp(h, len(h)-1)
	} else if worse(h[0], e) {
		h[0] = e
		siftDown(h, 0)
	}
	return h
}

// pageOf sorts the heap h best first and appends the docs of p's page to
// docs.
func pageOf(h []hit, p *plan, docs []int32) []int32 {
	slices.SortFunc(h, func(a, b hit) int {
		switch {
		case worse(b, a):
			return -1
		case worse(a, b):
			return 1
		}
		return 0
	})
	for i := p.offset; i < len(h) && i < p.offset+p.size; i++ {
		docs = append(docs, h[i].doc)
	}
	return docs
}

// worse reports whether a ranks below b: a lower tier, or an equal tier and
// a lower score, or an equal score and a later doc.
func worse(a, b hit) bool {
	if a.tier != b.tier {
		return a.tier < b.tier
	}
	if a.score != b.score {
		return a.score < b.score
	}
	return a.doc > b.doc
}

// siftUp and siftDown keep h a heap with its worst hit at the root.
func siftUp(h []hit, i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !worse(h[i], h[parent]) {
			return
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

func siftDown(h []hit, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && worse(h[r], h[l]) {
			m = r
		}
		if !worse(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
