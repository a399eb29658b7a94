package memento

import "context"

// Limits of a catalog search.
const (
	DefaultPageSize = 12
	MaxPageSize     = 100
	MinYear         = 1870
	MaxYear         = 2100
)

// TitleQuery is a catalog search. Zero values mean "no constraint"; Page
// counts from 1.
type TitleQuery struct {
	Genres    []string // any of them matches, or all of them with AllGenres
	AllGenres bool
	// ExcludeGenres leaves out every title with any of these genres.
	ExcludeGenres []string
	Type          string   // exact title type, such as "movie" or "tvSeries"
	MinYear       int      // 0: no lower bound
	MaxYear       int      // 0: no upper bound
	People        []string // every one must be in the cast (case-insensitive)
	Text          string   // free text, ranked by BM25 over title and plot
	IsAdult       *bool    // nil: adult titles are left out unless asked for
	Exclude       []string // title ids never returned
	// Sort orders the results: SortDefault (relevance with free text,
	// notability without) or SortYear (year descending, the order of
	// earlier versions).
	Sort string
	Page int
	Size int
}

// The orders of a catalog search.
const (
	// SortDefault ranks exact and near-exact title matches of the free
	// text first, then by BM25 relevance blended with notability; without
	// free text, by notability, then year descending, then id.
	SortDefault = ""
	// SortYear orders by relevance with free text, then by year
	// descending, then id.
	SortYear = "year"
)

// TitlePage is one page of search results in a deterministic order (see
// TitleQuery.Sort).
type TitlePage struct {
	Titles []Title `json:"titles"`
	Page   int     `json:"page"`
	Size   int     `json:"size"`
	Total  int     `json:"total"`
	Last   bool    `json:"last"`
}

// CatalogStats counts a catalog's titles by type and genre.
type CatalogStats struct {
	Titles int            `json:"titles"`
	Types  map[string]int `json:"types"`
	Genres map[string]int `json:"genres"`
}

// Catalog searches titles.
type Catalog interface {
	// Search returns one page of titles matching q. Errors: EINVALID for a
	// query out of range (page < 1, size over MaxPageSize, min year above
	// max year).
	Search(ctx context.Context, q TitleQuery) (*TitlePage, error)
	// Title returns the title with the given id. Errors: ENOTFOUND.
	Title(ctx context.Context, id string) (*Title, error)
	// Stats counts the catalog's titles.
	Stats(ctx context.Context) (*CatalogStats, error)
}
