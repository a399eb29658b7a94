// Package catalog is Memento's movie and TV catalog: the default data
// embedded in the binary, importers for other sources, and an in-memory
// search index that implements memento.Catalog.
//
// Data flows in one direction:
//
//	Wikipedia film lists --BuildWikiMovies--> []memento.Title --WriteJSONL--> data/titles.jsonl.gz (go generate)
//	data/titles.jsonl.gz (embedded) --Embedded--> *Index
//	IMDb TSV, MovieLens CSV, JSON lines --ReadFile / ReadIMDb / ReadMovieLens / ReadJSONL--> []memento.Title --New--> *Index
//
// The embedded catalog holds about 36,000 American films from Wikipedia's
// lists of American films, cleaned by BuildWikiMovies (duplicates merged,
// cast names repaired, plots cut to a few sentences) and written by the
// internal/gen command, which go generate runs. NOTICE at the repository
// root gives the attribution its licences require.
//
// Importers never fail on a malformed row: they skip it and count it, with
// its line number and reason, in an ImportReport. The JSON-lines format is
// described in FORMAT.md and on ReadJSONL.
//
// An Index is immutable once New returns and safe for concurrent use. It
// numbers titles in result order (year descending, then id) and keeps
// posting lists sorted by that number: per genre, type, person and adult
// flag, and per text term with precomputed BM25 weights. A search without
// free text walks the shortest list that every result must be on, checking
// the other constraints with cheap per-title lookups, and so produces its
// results already in order; a search with free text adds up BM25 scores
// over the terms' lists and keeps the best page in a bounded heap. Besides
// memento.Catalog, an Index resolves the titles and people a user names
// (ResolveTitle, Person, PeopleIn) for the language-understanding code.
package catalog
