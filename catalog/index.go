package catalog

import (
	"cmp"
	"context"
	"maps"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/fulltext"
)

// Weights of the free-text ranking (BM25 with fulltext.BM25K1 and
// fulltext.BM25B).
const (
	// titleWeight is how many times a title's words count against a plot's:
	// a film named after the query beats one that mentions it in passing.
	titleWeight = 2
)

// Index is an immutable, in-memory search index over a catalog's titles. It
// implements memento.Catalog and is safe for concurrent use.
//
// Titles are numbered ("docs") in the index's canonical order: year
// descending (unknown years last), then id ascending. Every posting list is
// sorted by doc number, so walking one yields results already in the order
// of memento.SortYear, ties of notability are broken by it for free, and a
// year range is a contiguous run of docs.
type Index struct {
	titles []memento.Title // by doc number
	years  []int32         // titles[d].Year, dense for the scan
	notab  []float32       // titles[d].Notability, the default order's key
	// byNotab holds every doc in the default order without text
	// (notability descending, then doc number), so Candidates can stop at
	// the first n matches of a broad query instead of walking them all.
	byNotab []int32
	adult   []bool // titles[d].IsAdult
	byID    map[string]int32

	typeNames []string         // by type number
	typeIDs   map[string]int32 // lowercased type name -> type number
	typeOf    []int32          // by doc
	byType    [][]int32        // type number -> docs

	genreNames []string         // by genre number, sorted
	genreIDs   map[string]int32 // normKey(genre) -> genre number
	genreWords int              // uint64 words of one doc's genre set
	genreBits  []uint64         // doc*genreWords ... : the genres of each doc as a bit set
	byGenre    [][]int32        // genre number -> docs

	adultDocs []int32

	personNames []string         // canonical spelling by person number
	personIDs   map[string]int32 // normKey(name) -> person number
	castStart   []int32          // doc -> start of its cast in castIDs; len docs+1
	castIDs     []int32          // person numbers of each doc's cast
	byPerson    [][]int32        // person number -> docs

	termIDs   map[string]int32 // index term -> term number
	termStart []int32          // term number -> start of its postings; len terms+1
	postDoc   []int32          // postings: doc ...
	postW     []float32        // ... and the doc's BM25 term-frequency factor
	idf       []float32        // term number -> BM25 idf

	titleKeys map[string][]int32 // normKey(title) -> docs, most popular first
	bareKeys  map[string][]int32 // the same without a leading article
	// pageKeys maps the name of a title's Wikipedia article, where it
	// differs from the title ("Dr. Seuss' How the Grinch Stole
	// Christmas"), without its "(2000 film)" part.
	pageKeys map[string][]int32

	stats   memento.CatalogStats
	scratch sync.Pool // *scratch
}

var _ memento.Catalog = (*Index)(nil)

// New builds the index of titles. Titles with a blank id are left out, and
// of several titles with the same id only the first is kept. New does not
// modify titles; the index keeps its own copy of them (nil genre and cast
// lists become empty ones, and a title without a type is a movie).
func New(titles []memento.Title) *Index {
	x := &Index{byID: make(map[string]int32, len(titles))}
	x.titles = x.copyTitles(titles)
	slices.SortFunc(x.titles, func(a, b memento.Title) int {
		return cmp.Or(cmp.Compare(b.Year, a.Year), strings.Compare(a.ID, b.ID))
	})
	n := len(x.titles)
	x.years = make([]int32, n)
	x.notab = make([]float32, n)
	x.adult = make([]bool, n)
	for d := range x.titles {
		t := &x.titles[d]
		x.byID[t.ID] = int32(d)
		x.years[d] = int32(t.Year)
		x.notab[d] = float32(t.Notability)
		x.adult[d] = t.IsAdult
		if t.IsAdult {
			x.adultDocs = append(x.adultDocs, int32(d))
		}
	}
	x.byNotab = make([]int32, n)
	for d := range x.byNotab {
		x.byNotab[d] = int32(d)
	}
	slices.SortStableFunc(x.byNotab, func(a, b int32) int { return cmp.Compare(x.notab[b], x.notab[a]) })
	// The text index is the biggest part; build it on a second core. The
	// other parts write different fields of x.
	var wg sync.WaitGroup
	wg.Go(x.indexTerms)
	x.indexTypes()
	x.indexGenres()
	x.indexPeople()
	x.indexTitleKeys()
	wg.Wait()
	x.scratch.New = func() any { return newScratch(n) }
	return x
}

// copyTitles copies titles without blank or repeated ids, sharing one
// backing array for all genre and cast lists to keep allocations few. It
// marks the ids it keeps in x.byID; New numbers them after sorting.
func (x *Index) copyTitles(in []memento.Title) []memento.Title {
	out := make([]memento.Title, 0, len(in))
	strs := 0
	for i := range in {
		strs += len(in[i].Genres) + len(in[i].Cast)
	}
	backing := make([]string, 0, strs)
	share := func(list []string) []string {
		start := len(backing)
		backing = append(backing, list...)
		return backing[start:len(backing):len(backing)]
	}
	for i := range in {
		t := in[i]
		if _, seen := x.byID[t.ID]; seen || strings.TrimSpace(t.ID) == "" {
			continue
		}
		x.byID[t.ID] = -1
		if t.Type == "" {
			t.Type = memento.TypeMovie
		}
		t.Genres = share(t.Genres)
		t.Cast = share(t.Cast)
		out = append(out, t)
	}
	return out
}

func (x *Index) indexTypes() {
	x.typeIDs = map[string]int32{}
	x.typeOf = make([]int32, len(x.titles))
	x.stats = memento.CatalogStats{Titles: len(x.titles), Types: map[string]int{}, Genres: map[string]int{}}
	for d := range x.titles {
		name := x.titles[d].Type
		k := strings.ToLower(name)
		id, ok := x.typeIDs[k]
		if !ok {
			id = int32(len(x.typeNames))
			x.typeIDs[k] = id
			x.typeNames = append(x.typeNames, name)
			x.byType = append(x.byType, nil)
		}
		x.typeOf[d] = id
		x.byType[id] = append(x.byType[id], int32(d))
		x.stats.Types[x.typeNames[id]]++
	}
}

func (x *Index) indexGenres() {
	// The vocabulary first, sorted, so genre numbers follow names.
	canonical := map[string]string{} // normKey -> the catalog's name
	keyOf := map[string]string{}     // genre as a title spells it -> normKey
	for d := range x.titles {
		for _, g := range x.titles[d].Genres {
			if _, ok := keyOf[g]; ok {
				continue
			}
			c := CanonicalGenre(g)
			k := normKey(c)
			keyOf[g] = k
			if _, ok := canonical[k]; !ok && k != "" {
				canonical[k] = c
			}
		}
	}
	keys := slices.Sorted(maps.Keys(canonical))
	slices.SortFunc(keys, func(a, b string) int { return strings.Compare(canonical[a], canonical[b]) })
	x.genreIDs = make(map[string]int32, len(keys))
	for i, k := range keys {
		x.genreIDs[k] = int32(i)
		x.genreNames = append(x.genreNames, canonical[k])
	}
	x.genreWords = max(1, (len(keys)+63)/64)
	x.genreBits = make([]uint64, len(x.titles)*x.genreWords)
	x.byGenre = make([][]int32, len(keys))
	for d := range x.titles {
		bits := x.genreBits[d*x.genreWords : (d+1)*x.genreWords]
		for _, g := range x.titles[d].Genres {
			id, ok := x.genreIDs[keyOf[g]]
			if !ok || bits[id/64]&(1<<(id%64)) != 0 {
				continue
			}
			bits[id/64] |= 1 << (id % 64)
			x.byGenre[id] = append(x.byGenre[id], int32(d))
			x.stats.Genres[x.genreNames[id]]++
		}
	}
}

func (x *Index) indexPeople() {
	// spellings counts how each person's name is written, to pick the most
	// common spelling as the canonical one.
	type spelling struct {
		name  string
		count int
	}
	var spellings [][]spelling
	x.personIDs = map[string]int32{}
	x.castStart = make([]int32, len(x.titles)+1)
	var key []byte
	for d := range x.titles {
		x.castStart[d] = int32(len(x.castIDs))
		start := len(x.castIDs)
		for _, name := range x.titles[d].Cast {
			key = appendNormKey(key[:0], name)
			if len(key) == 0 {
				continue
			}
			id, ok := x.personIDs[string(key)]
			if !ok {
				id = int32(len(x.personNames))
				x.personIDs[string(key)] = id
				x.personNames = append(x.personNames, name)
				x.byPerson = append(x.byPerson, nil)
				spellings = append(spellings, nil)
			}
			known := false
			for i := range spellings[id] {
				if spellings[id][i].name == name {
					spellings[id][i].count++
					known = true
					break
				}
			}
			if !known {
				spellings[id] = append(spellings[id], spelling{name, 1})
			}
			if slices.Contains(x.castIDs[start:], id) {
				continue
			}
			x.castIDs = append(x.castIDs, id)
			x.byPerson[id] = append(x.byPerson[id], int32(d))
		}
	}
	x.castStart[len(x.titles)] = int32(len(x.castIDs))
	// The canonical spelling of a person is the most common one, the
	// smallest on a tie, so it does not depend on the order of titles.
	for id, list := range spellings {
		best := list[0]
		for _, sp := range list[1:] {
			if sp.count > best.count || (sp.count == best.count && sp.name < best.name) {
				best = sp
			}
		}
		x.personNames[id] = best.name
	}
}

// indexTerms builds the free-text postings: for every term, the docs it
// occurs in with their BM25 term-frequency factor, precomputed so a query
// only multiplies by the term's idf and adds.
func (x *Index) indexTerms() {
	n := len(x.titles)
	x.termIDs = make(map[string]int32, 1<<16)
	var (
		docStart = make([]int32, n+1)
		docTerm  = make([]int32, 0, n*32)
		docTF    = make([]uint16, 0, n*32)
		docLen   = make([]int32, n)
		df       []int32
		tf       []int32 // term number -> frequency in the current doc
		order    []int32 // terms of the current doc, in order of first use
		total    int64
		weight   int32
		doc      int
	)
	// wordIDs caches the term number of every distinct word that is not a
	// stop word, so a word the plots repeat is stemmed once, not at every
	// occurrence: the terms are eachToken's.
	wordIDs := make(map[string]int32, 1<<17)
	add := func(word []byte) {
		if fulltext.StopwordBytes(word) {
			return
		}
		id, ok := wordIDs[string(word)]
		if !ok {
			key := string(word)
			tok := fulltext.StemBytes(word)
			if id, ok = x.termIDs[string(tok)]; !ok {
				id = int32(len(df))
				x.termIDs[string(tok)] = id
				df = append(df, 0)
				tf = append(tf, 0)
			}
			wordIDs[key] = id
		}
		if tf[id] == 0 {
			order = append(order, id)
		}
		tf[id] += weight
		docLen[doc] += weight
	}
	for d := range x.titles {
		doc = d
		docStart[d] = int32(len(docTerm))
		order = order[:0]
		weight = titleWeight
		fulltext.EachWord(x.titles[d].Title, add)
		weight = 1
		fulltext.EachWord(x.titles[d].Overview, add)
		for _, id := range order {
			df[id]++
			docTerm = append(docTerm, id)
			docTF = append(docTF, uint16(min(tf[id], math.MaxUint16)))
			tf[id] = 0
		}
		total += int64(docLen[d])
	}
	docStart[n] = int32(len(docTerm))
	avg := 1.0
	if n > 0 && total > 0 {
		avg = float64(total) / float64(n)
	}
	terms := len(df)
	x.termStart = make([]int32, terms+1)
	for t := 0; t < terms; t++ {
		x.termStart[t+1] = x.termStart[t] + df[t]
	}
	x.idf = make([]float32, terms)
	for t := 0; t < terms; t++ {
		x.idf[t] = float32(math.Log(1 + (float64(n)-float64(df[t])+0.5)/(float64(df[t])+0.5)))
	}
	x.postDoc = make([]int32, len(docTerm))
	x.postW = make([]float32, len(docTerm))
	fill := slices.Clone(x.termStart[:terms])
	for d := 0; d < n; d++ {
		norm := fulltext.BM25K1 * (1 - fulltext.BM25B + fulltext.BM25B*float64(docLen[d])/avg)
		for i := docStart[d]; i < docStart[d+1]; i++ {
			t, f := docTerm[i], float64(docTF[i])
			p := fill[t]
			fill[t]++
			x.postDoc[p] = int32(d)
			x.postW[p] = float32(f * (fulltext.BM25K1 + 1) / (f + norm))
		}
	}
}

// indexTitleKeys maps every title, as ResolveTitle normalises it, to its
// docs in order of preference.
func (x *Index) indexTitleKeys() {
	x.titleKeys = make(map[string][]int32, len(x.titles))
	x.bareKeys = make(map[string][]int32, len(x.titles))
	x.pageKeys = map[string][]int32{}
	var key []byte
	for d := range x.titles {
		key = appendNormKey(key[:0], x.titles[d].Title)
		if len(key) == 0 {
			continue
		}
		k := string(key)
		x.titleKeys[k] = append(x.titleKeys[k], int32(d))
		if b := stripArticle(k); b != k {
			x.bareKeys[b] = append(x.bareKeys[b], int32(d))
		}
		if page := pageName(x.titles[d].ID); page != "" {
			if pk := string(appendNormKey(nil, page)); pk != "" && pk != k {
				x.pageKeys[pk] = append(x.pageKeys[pk], int32(d))
			}
		}
	}
	prefer := func(a, b int32) int {
		return cmp.Or(
			cmp.Compare(x.notab[b], x.notab[a]),
			cmp.Compare(len(x.titles[b].Cast), len(x.titles[a].Cast)),
			cmp.Compare(x.titles[b].Year, x.titles[a].Year),
			cmp.Compare(a, b))
	}
	for _, keys := range []map[string][]int32{x.titleKeys, x.bareKeys, x.pageKeys} {
		for _, docs := range keys {
			if len(docs) > 1 {
				slices.SortFunc(docs, prefer)
			}
		}
	}
}

// pageName returns the article name in a Wikipedia title id
// ("wiki:Dr._Seuss'_How_the_Grinch_Stole_Christmas_(2000_film)" gives
// "Dr. Seuss' How the Grinch Stole Christmas"), or "" for other ids.
func pageName(id string) string {
	name, ok := strings.CutPrefix(id, "wiki:")
	if !ok {
		return ""
	}
	if u, err := url.PathUnescape(name); err == nil {
		name = u
	}
	name = strings.ReplaceAll(name, "_", " ")
	if i := strings.LastIndex(name, " ("); i > 0 && strings.HasSuffix(name, ")") {
		name = name[:i]
	}
	return strings.TrimSpace(name)
}

// stripArticle drops a leading English article from a normalised title.
func stripArticle(k string) string {
	for _, a := range []string{"the ", "a ", "an "} {
		if strings.HasPrefix(k, a) && len(k) > len(a) {
			return k[len(a):]
		}
	}
	return k
}

// Len returns the number of titles in the index.
func (x *Index) Len() int { return len(x.titles) }

// All returns every title in the index's canonical order (year descending,
// then id). The slice is a fresh copy, but the genre and cast lists inside
// the titles are shared with the index and must not be modified.
func (x *Index) All() []memento.Title { return slices.Clone(x.titles) }

// Genres returns the genre vocabulary of the catalog, sorted: the names a
// query's Genres are matched against (case-insensitively).
func (x *Index) Genres() []string { return slices.Clone(x.genreNames) }

// Types returns the title types in the catalog, sorted.
func (x *Index) Types() []string { return slices.Sorted(slices.Values(x.typeNames)) }

// People returns the canonical names of everyone in a cast, sorted.
func (x *Index) People() []string { return slices.Sorted(slices.Values(x.personNames)) }

// Person looks a cast member up by name, ignoring case, accents and
// punctuation ("robert downey jr" finds "Robert Downey Jr."), and returns
// the catalog's spelling of the name.
func (x *Index) Person(name string) (canonical string, ok bool) {
	id, ok := x.personIDs[normKey(name)]
	if !ok {
		return "", false
	}
	return x.personNames[id], true
}

// PeopleIn returns the cast members named in a piece of text, such as a
// user's sentence ("something with tom hanks and meg ryan"), in the order
// they appear and in the catalog's spelling. It matches runs of two to five
// words, longest first, so one-word stage names ("Cher") are not found:
// too many of them are also ordinary words.
func (x *Index) PeopleIn(text string) []string {
	words := strings.Fields(normKey(text))
	var found []string
	for i := 0; i < len(words); {
		match := 0
		for n := min(5, len(words)-i); n >= 2; n-- {
			if id, ok := x.personIDs[strings.Join(words[i:i+n], " ")]; ok {
				if name := x.personNames[id]; !slices.Contains(found, name) {
					found = append(found, name)
				}
				match = n
				break
			}
		}
		i += max(1, match)
	}
	return found
}

// trailingYear matches a title written with its year: "Heat 1995",
// "Heat (1995)".
var trailingYear = regexp.MustCompile(`^(.*\S)[\s(]+(\d{4})\)?$`)

// ResolveTitle returns the catalog title that a user most likely means by a
// title as they write it ("heat", "The Avengers", "the avengers (1998)").
// Matching ignores case, accents and punctuation, and reads "&" as "and".
// It tries, in order:
//
//  1. with a trailing year ("Heat 1995", "Heat (1995)"), the title without
//     it among the films of that year;
//  2. the exact title ("Blade Runner 2049");
//  3. the title with a leading article added or removed ("Avengers" finds
//     "The Avengers", "The Space Heist" finds "Space Heist");
//  4. with a trailing year that no film of that title has, the title
//     without it, ignoring the year.
//
// Several matches are ranked by popularity, then recency: the most notable
// title comes first (memento.Title.Notability), then the one with the
// longest cast list (Wikipedia lists more of the cast of a well-known
// film; this decides between titles of an imported catalog without
// notability), then the most recent, then the smallest id. So "heat" is the
// 1995 film and "the avengers" the 2012 one.
func (x *Index) ResolveTitle(text string) (*memento.Title, bool) {
	found := func(d int32) (*memento.Title, bool) {
		t := cloneTitle(&x.titles[d])
		return &t, true
	}
	var withoutYear [][]int32
	if m := trailingYear.FindStringSubmatch(strings.TrimSpace(text)); m != nil {
		year, _ := strconv.Atoi(m[2])
		k := normKey(m[1])
		withoutYear = x.titleMatches(k)
		for _, docs := range withoutYear {
			for _, d := range docs {
				if x.titles[d].Year == year {
					return found(d)
				}
			}
		}
	}
	k := normKey(text)
	if k == "" {
		return nil, false
	}
	for _, docs := range append(x.titleMatches(k), withoutYear...) {
		if len(docs) > 0 {
			return found(docs[0])
		}
	}
	return nil, false
}

// titleMatches returns the docs whose title has the key k, and then those
// whose title has it with a leading article added or removed, each list
// most popular first.
func (x *Index) titleMatches(k string) [][]int32 {
	return [][]int32{x.titleKeys[k], x.titleKeys[stripArticle(k)], x.bareKeys[k], x.pageKeys[k]}
}

// Title returns the title with the given id. Errors: ENOTFOUND.
func (x *Index) Title(ctx context.Context, id string) (*memento.Title, error) {
	d, ok := x.byID[id]
	if !ok {
		return nil, memento.Errorf(memento.ENOTFOUND, "title %q is not in the catalog", id)
	}
	t := cloneTitle(&x.titles[d])
	return &t, nil
}

// Stats counts the catalog's titles in all, by type and by genre.
func (x *Index) Stats(ctx context.Context) (*memento.CatalogStats, error) {
	return &memento.CatalogStats{
		Titles: x.stats.Titles,
		Types:  maps.Clone(x.stats.Types),
		Genres: maps.Clone(x.stats.Genres),
	}, nil
}

// cloneTitle copies a title with its own genre and cast lists, so a caller
// may change what it gets without touching the index.
func cloneTitle(t *memento.Title) memento.Title {
	c := *t
	c.Genres = append(make([]string, 0, len(t.Genres)), t.Genres...)
	c.Cast = append(make([]string, 0, len(t.Cast)), t.Cast...)
	return c
}

// cloneTitles is cloneTitle for the titles at docs, in two allocations:
// the titles, and one array that every title's genre and cast lists are
// cut from, each capped at its length so that appending to one list
// copies it rather than writing over the next. A turn's candidate pool
// asks for up to a thousand titles at once; cloned one by one, they were
// half of the time spent finding them. A title kept alone keeps the
// array alive: 16 bytes for each genre and person of the call's titles.
func (x *Index) cloneTitles(docs []int32) []memento.Title {
	out := make([]memento.Title, len(docs))
	n := 0
	for _, d := range docs {
		n += len(x.titles[d].Genres) + len(x.titles[d].Cast)
	}
	lists := make([]string, n)
	for i, d := range docs {
		t := &x.titles[d]
		out[i] = *t
		k := copy(lists, t.Genres)
		out[i].Genres, lists = lists[:k:k], lists[k:]
		k = copy(lists, t.Cast)
		out[i].Cast, lists = lists[:k:k], lists[k:]
	}
	return out
}
