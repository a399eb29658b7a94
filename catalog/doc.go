// Package catalog is Memento's movie and TV catalog: the default data
// embedded in the binary, importers for other sources, and an in-memory
// search index that implements memento.Catalog.
//
// Data flows in one direction:
//
//	Wikipedia film lists --BuildWikiMovies (+ ComputeNotability)--> []memento.Title --WriteJSONL--> data/titles.jsonl.gz (go generate)
//	data/titles.jsonl.gz (embedded) --Embedded--> *Index
//	IMDb TSV, MovieLens CSV, JSON lines --ReadFile (+ ratings beside: NotabilityFromCounts)--> []memento.Title --New--> *Index
//
// The embedded catalog holds about 36,000 American films from Wikipedia's
// lists of American films, cleaned by BuildWikiMovies (duplicates merged,
// cast names repaired, plots cut to a few sentences) and written by the
// internal/gen command, which go generate runs. NOTICE at the repository
// root gives the attribution its licences require.
//
// Every title carries a notability (memento.Title.Notability, 0 to 1), a
// prior of how well known it is, computed once when the catalog is built or
// imported (notability.go). Built from Wikipedia, it weighs rank-normalised
// signals of the catalog's own data: the length of the whole plot extract,
// the size of the cast, how many other catalog films the billed cast are in
// and how well documented those films are, cast fame passed along the
// film-actor graph (a lead in several notable films lifts this one, and a
// film lifted so lifts its cast's other films, over three rounds), a
// poster, the release year (its weight kept non-decreasing),
// sequels (later titles that start with the title and share its cast) and
// mentions (other films' extracts that name the title with its year, as in
// "a remake of the 1960 film Psycho"). Each signal's rank is weighed in
// three shapes (straight, stretched at the top, stretched at the bottom), so
// that the films far ahead on a signal stand out at the top of a ranking,
// where ranks bunch up. ReadFile uses vote
// or rating counts where the source has them (IMDb's title.ratings.tsv,
// MovieLens's ratings.csv, found beside the file), keeps the notability
// field of JSON lines, and otherwise computes the same prior from the fields
// the source has. MovieLens may judge the prior (notability_eval_test.go
// reports its Spearman correlation with rating counts on held-out titles),
// never feed the embedded catalog.
//
// Importers never fail on a malformed row: they skip it and count it, with
// its line number and reason, in an ImportReport. The JSON-lines format is
// described in FORMAT.md and on ReadJSONL.
//
// An Index is immutable once New returns and safe for concurrent use. It
// numbers titles in year order (year descending, then id) and keeps
// posting lists sorted by that number: per genre, type, person and adult
// flag, and per text term with precomputed BM25 weights. A search without
// free text walks the shortest list that every result must be on, checking
// the other constraints with cheap per-title lookups; in the default order
// it keeps the page's most notable matches in a bounded heap, and with
// memento.SortYear the walk yields its results already in order. A search
// with free text looks the text up as a title (exact and near-exact matches
// rank first), adds up BM25 scores over the terms' lists, multiplies them by
// 1 + notability, and keeps the best page in a bounded heap. Besides
// memento.Catalog, an Index resolves the titles and people a user names
// (ResolveTitle, Person, PeopleIn) for the language-understanding code.
package catalog
