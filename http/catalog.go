package http

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/memento-ai/memento"
)

// searchInput holds the catalog search parameters. Numbers arrive as text
// so that a bad one gets a message naming the parameter and its range.
type searchInput struct {
	Genres    string `query:"genres" doc:"Comma-separated genres; any of them matches" example:"Comedy,Romance"`
	AllGenres bool   `query:"allGenres" doc:"Require every listed genre instead of any"`
	Type      string `query:"type" doc:"Title type, such as movie or tvSeries"`
	MinYear   string `query:"minYear" doc:"Earliest year, inclusive (1870-2100)"`
	MaxYear   string `query:"maxYear" doc:"Latest year, inclusive (1870-2100)"`
	Person    string `query:"person" doc:"A cast member's name, case-insensitive"`
	Q         string `query:"q" doc:"Free text, ranked by BM25 over title and plot"`
	Adult     string `query:"adult" doc:"true for adult titles only, false for none (the default leaves them out)"`
	Exclude   string `query:"exclude" doc:"Comma-separated title ids never to return"`
	Sort      string `query:"sort" doc:"Order: empty for exact title matches and the best known titles first, year for newest first"`
	Page      string `query:"page" doc:"Page number, from 1" example:"1"`
	Size      string `query:"size" doc:"Titles per page (1-100, default 12)" example:"12"`
}

// TitleRef is a title as search results show it.
type TitleRef struct {
	ID     string   `json:"id"`
	Title  string   `json:"title"`
	Type   string   `json:"type"`
	Year   int      `json:"year"`
	Genres []string `json:"genres"`
	Cast   []string `json:"cast"`
}

// SearchResult is one page of catalog search results. The CLI's --json
// output has the same shape.
type SearchResult struct {
	Titles []TitleRef `json:"titles"`
	Page   int        `json:"page"`
	Size   int        `json:"size"`
	Total  int        `json:"total"`
	Last   bool       `json:"last"`
}

// NewSearchResult converts a page of titles into the search JSON shape.
func NewSearchResult(p *memento.TitlePage) SearchResult {
	out := SearchResult{Titles: make([]TitleRef, 0, len(p.Titles)), Page: p.Page, Size: p.Size, Total: p.Total, Last: p.Last}
	for _, t := range p.Titles {
		out.Titles = append(out.Titles, TitleRef{ID: t.ID, Title: t.Title, Type: t.Type, Year: t.Year, Genres: nonNil(t.Genres), Cast: nonNil(t.Cast)})
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

type searchOutput struct {
	Body SearchResult
}

type titleInput struct {
	ID string `path:"id" doc:"Title id, such as wiki:Heat_(1995_film)"`
}

type titleOutput struct {
	Body memento.Title
}

func (s *Server) registerCatalog() {
	huma.Register(s.api, huma.Operation{
		OperationID: "searchCatalog", Method: http.MethodGet, Path: "/v1/catalog/search",
		Summary: "Search the catalog", Tags: []string{"catalog"},
		Errors: []int{http.StatusBadRequest},
	}, func(ctx context.Context, in *searchInput) (*searchOutput, error) {
		q, err := in.query()
		if err != nil {
			return nil, Error(ctx, s.Logger, err)
		}
		page, err := s.Catalog.Search(ctx, q)
		if err != nil {
			return nil, Error(ctx, s.Logger, err)
		}
		return &searchOutput{Body: NewSearchResult(page)}, nil
	})
	huma.Register(s.api, huma.Operation{
		OperationID: "getTitle", Method: http.MethodGet, Path: "/v1/catalog/titles/{id}",
		Summary: "Get one title", Tags: []string{"catalog"},
		Errors: []int{http.StatusNotFound},
	}, func(ctx context.Context, in *titleInput) (*titleOutput, error) {
		t, err := s.Catalog.Title(ctx, in.ID)
		if err != nil {
			return nil, Error(ctx, s.Logger, err)
		}
		return &titleOutput{Body: *t}, nil
	})
}

func (in *searchInput) query() (memento.TitleQuery, error) {
	q := memento.TitleQuery{
		Genres: splitList(in.Genres), AllGenres: in.AllGenres, Type: strings.TrimSpace(in.Type),
		Text: strings.TrimSpace(in.Q), Exclude: splitList(in.Exclude), Page: 1, Size: memento.DefaultPageSize,
		Sort: strings.ToLower(strings.TrimSpace(in.Sort)),
	}
	if p := strings.TrimSpace(in.Person); p != "" {
		q.People = []string{p}
	}
	var err error
	if q.MinYear, err = parseYear("minYear", in.MinYear); err != nil {
		return q, err
	}
	if q.MaxYear, err = parseYear("maxYear", in.MaxYear); err != nil {
		return q, err
	}
	if in.Page != "" {
		if q.Page, err = strconv.Atoi(in.Page); err != nil || q.Page < 1 {
			return q, memento.Errorf(memento.EINVALID, "page must be a whole number from 1, got %q", in.Page)
		}
	}
	if in.Size != "" {
		if q.Size, err = strconv.Atoi(in.Size); err != nil || q.Size < 1 || q.Size > memento.MaxPageSize {
			return q, memento.Errorf(memento.EINVALID, "size must be a whole number between 1 and %d, got %q", memento.MaxPageSize, in.Size)
		}
	}
	switch strings.ToLower(strings.TrimSpace(in.Adult)) {
	case "":
	case "true", "1", "yes":
		v := true
		q.IsAdult = &v
	case "false", "0", "no":
		v := false
		q.IsAdult = &v
	default:
		return q, memento.Errorf(memento.EINVALID, "adult must be true or false, got %q", in.Adult)
	}
	return q, nil
}

// parseYear reads an optional year parameter; 0 means unset.
func parseYear(name, v string) (int, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, nil
	}
	y, err := strconv.Atoi(v)
	if err != nil || y < memento.MinYear || y > memento.MaxYear {
		return 0, memento.Errorf(memento.EINVALID, "%s must be a year between %d and %d, got %q", name, memento.MinYear, memento.MaxYear, v)
	}
	return y, nil
}

func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
