package offline

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memento-ai/memento"
)

// Compile-time checks that the offline provider implements every task.
var (
	_ memento.LanguageModel = (*Model)(nil)
	_ memento.Embedder      = (*Embedder)(nil)
)

// PersonLookup finds a cast member by name. The catalog provides it, so the
// model recognises exactly the people the catalog can search for.
type PersonLookup interface {
	// Person looks name up case-insensitively and returns the catalog's
	// spelling of it.
	Person(name string) (string, bool)
}

// DefaultGenres is the genre vocabulary of the embedded wikimovies catalog,
// used when Options.Genres is empty.
var DefaultGenres = []string{
	"Action", "Adventure", "Animated", "Biography", "Comedy", "Crime", "Dance", "Disaster",
	"Documentary", "Drama", "Erotic", "Family", "Fantasy", "Found Footage", "Historical", "Horror",
	"Independent", "Legal", "Live Action", "Martial Arts", "Musical", "Mystery", "Noir",
	"Performance", "Political", "Romance", "Satire", "Science Fiction", "Short", "Silent",
	"Slasher", "Sports", "Spy", "Superhero", "Supernatural", "Suspense", "Teen", "Thriller", "War",
	"Western",
}

// Options configure the offline model. The zero value works: no people are
// recognised, the genres are DefaultGenres and "recent" is measured from the
// wall clock.
type Options struct {
	// People recognises cast members' names in requests; nil turns people
	// recognition off. When it is also a PeopleLister, misspelt names are
	// corrected as well.
	People PersonLookup
	// Genres is the catalog's genre vocabulary. Requests are mapped onto it
	// and onto nothing else.
	Genres []string
	// Now tells the time for "recent" and "last year"; nil means time.Now.
	Now func() time.Time
	// Titles, when set, says whether text names a catalog title
	// (catalog.Index.ResolveTitle fits). The rules use it to check that
	// the words after "like", "seen" or "not" are a title before reading
	// them as one; without it a run of capitalised words is taken as a
	// title's name.
	Titles func(text string) (*memento.Title, bool)
}

// Model is the offline language model: deterministic rules for every task
// of memento.LanguageModel. It holds tables built by New and the
// description of the last attribute schema it was given, which calls
// share read-only, so one Model is safe for concurrent use.
type Model struct {
	people PersonLookup
	titles func(text string) (*memento.Title, bool)
	now    func() time.Time
	// vocab maps a lower-cased genre name to the catalog's spelling.
	vocab  map[string]string
	genres *phraseTable[[]string]
	// typos are the genre words a misspelling is compared with.
	typos []typoTarget
	// names buckets the catalog's names for misspellings, built on first
	// use (listing a catalog's names takes tens of milliseconds, which a
	// model that never meets a misspelt name should not pay); nil when
	// People cannot list them.
	names func() *nameIndex
	// schema is the schema AssignAttributes last described (described).
	schema atomic.Pointer[describedSchema]
}

// New builds a Model from opts.
func New(opts Options) *Model {
	m := &Model{people: opts.People, titles: opts.Titles, now: opts.Now}
	if m.now == nil {
		m.now = time.Now
	}
	vocab := opts.Genres
	if len(vocab) == 0 {
		vocab = DefaultGenres
	}
	m.vocab = make(map[string]string, len(vocab))
	for _, g := range vocab {
		if g = strings.TrimSpace(g); g != "" {
			m.vocab[strings.ToLower(g)] = g
		}
	}
	m.genres = buildGenreTable(m.vocab)
	m.typos = buildTypoTargets(m.genres)
	if l, ok := opts.People.(PeopleLister); ok {
		m.names = sync.OnceValue(func() *nameIndex { return buildNameIndex(l.People()) })
	}
	return m
}

// Name names the provider for logs and `memento version`.
func (m *Model) Name() string { return "offline" }
