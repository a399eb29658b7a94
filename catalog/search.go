package catalog

import (
	"context"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/memento-ai/memento"
)

// MaxTextBytes bounds the free text of a query.
const MaxTextBytes = 2000

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
	none      bool     // some constraint can never match
	offset    int
	size      int
}

// scratch is the per-search working memory, pooled so a search allocates
// almost nothing.
type scratch struct {
	scores   []float32 // by doc
	touched  []int32   // docs with a non-zero score
	excluded []uint64  // bit set of excluded docs
	exclList []int32   // the docs set in excluded, to clear them
	heap     []hit
	docs     []int32
}

type hit struct {
	doc   int32
	score float32
}

func newScratch(n int) *scratch {
	return &scratch{scores: make([]float32, n), excluded: make([]uint64, n/64+1)}
}

// Search returns one page of the titles matching q, in a deterministic
// order: BM25 relevance when q.Text is set, then year descending, then id.
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
// stopwords ("the") constrains nothing.
//
// Paging: Page counts from 1, Size defaults to memento.DefaultPageSize.
// A page past the end has no titles (an empty, non-nil slice) and Last set.
//
// Errors: EINVALID when Page is below 1, Size is negative or over
// memento.MaxPageSize, a year is outside memento.MinYear-MaxYear, MinYear is
// after MaxYear, or Text is over MaxTextBytes.
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
	page.Titles = make([]memento.Title, len(docs))
	for i, d := range docs {
		page.Titles[i] = cloneTitle(&x.titles[d])
	}
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
	}
	return p, nil
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
// list is shorter), in doc order, which is already the result order.
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
	keep := func(d int32) {
		if !x.match(p, s, d) {
			return
		}
		if total >= p.offset && total-p.offset < p.size {
			docs = append(docs, d)
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
	s.docs = docs[:0]
	return docs, total
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
		if len(h) < k {
			h = append(h, e)
			siftUp(h, len(h)-1)
		} else if worse(h[0], e) {
			h[0] = e
			siftDown(h, 0)
		}
	}
	for _, d := range touched {
		s.scores[d] = 0
	}
	s.touched = touched[:0]
	slices.SortFunc(h, func(a, b hit) int {
		switch {
		case worse(b, a):
			return -1
		case worse(a, b):
			return 1
		}
		return 0
	})
	docs = s.docs[:0]
	for i := p.offset; i < len(h) && i < p.offset+p.size; i++ {
		docs = append(docs, h[i].doc)
	}
	s.heap = h[:0]
	s.docs = docs[:0]
	return docs, total
}

// worse reports whether a ranks below b: a lower score, or an equal score
// and a later doc.
func worse(a, b hit) bool {
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
