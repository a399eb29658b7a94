package agent

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
)

func yr(v int) *int { return &v }

func ctxWith(f func(c *memento.ActiveContext)) memento.ActiveContext {
	c := memento.NewActiveContext()
	f(&c)
	return c
}

func TestApply(t *testing.T) {
	comedy2010 := ctxWith(func(c *memento.ActiveContext) {
		c.Genres = []string{"Comedy"}
		c.TitleType = "movie"
		c.MinYear = yr(2010)
	})
	shown := []memento.Title{{ID: "a", Year: 2021}, {ID: "b", Year: 2019}, {ID: "c", Year: 2023}}
	tests := []struct {
		name  string
		prev  memento.ActiveContext
		u     memento.Understanding
		shown []memento.Title
		want  memento.ActiveContext
	}{
		{
			name: "new request on empty context",
			prev: memento.NewActiveContext(),
			u:    memento.Understanding{Search: true, Recognised: true, Genres: []string{"Comedy"}, TitleType: "movie", MinYear: yr(2010), Count: 3},
			want: comedy2010,
		},
		{
			name:  "rejection carries constraints and excludes shown",
			prev:  comedy2010,
			u:     memento.Understanding{Search: true, Recognised: true, Reject: true},
			shown: shown,
			want: ctxWith(func(c *memento.ActiveContext) {
				*c = comedy2010.Clone()
				c.ExcludedTitleIDs = []string{"a", "b", "c"}
			}),
		},
		{
			name: "exclusions accumulate without duplicates",
			prev: ctxWith(func(c *memento.ActiveContext) {
				*c = comedy2010.Clone()
				c.ExcludedTitleIDs = []string{"x", "a"}
			}),
			u:     memento.Understanding{Search: true, Recognised: true, Reject: true},
			shown: shown,
			want: ctxWith(func(c *memento.ActiveContext) {
				*c = comedy2010.Clone()
				c.ExcludedTitleIDs = []string{"x", "a", "b", "c"}
			}),
		},
		{
			name: "movie only keeps genres and years",
			prev: ctxWith(func(c *memento.ActiveContext) {
				c.Genres = []string{"Comedy"}
				c.MinYear = yr(2010)
				c.ExcludedTitleIDs = []string{"a"}
			}),
			u: memento.Understanding{Search: true, Recognised: true, TitleType: "movie"},
			want: ctxWith(func(c *memento.ActiveContext) {
				*c = comedy2010.Clone()
				c.ExcludedTitleIDs = []string{"a"}
			}),
		},
		{
			name:  "older ends the window before the oldest title shown",
			prev:  comedy2010,
			u:     memento.Understanding{Search: true, Recognised: true, YearShift: "older"},
			shown: shown,
			want: ctxWith(func(c *memento.ActiveContext) {
				*c = comedy2010.Clone()
				c.MaxYear = yr(2018)
			}),
		},
		{
			name: "older moves a closed window below its start",
			prev: ctxWith(func(c *memento.ActiveContext) {
				c.MinYear = yr(1990)
				c.MaxYear = yr(1999)
			}),
			u:     memento.Understanding{Search: true, Recognised: true, YearShift: "older"},
			shown: []memento.Title{{ID: "z", Year: 1995}},
			want: ctxWith(func(c *memento.ActiveContext) {
				c.MinYear = yr(1985)
				c.MaxYear = yr(1994)
			}),
		},
		{
			name:  "newer starts after the newest title shown",
			prev:  ctxWith(func(c *memento.ActiveContext) { c.MaxYear = yr(2000) }),
			u:     memento.Understanding{Search: true, Recognised: true, YearShift: "newer"},
			shown: []memento.Title{{ID: "z", Year: 1998}, {ID: "y", Year: 1995}},
			want:  ctxWith(func(c *memento.ActiveContext) { c.MinYear = yr(1999); c.MaxYear = yr(2000) }),
		},
		{
			name: "replace drops constraints but keeps the titles turned down",
			prev: ctxWith(func(c *memento.ActiveContext) {
				*c = comedy2010.Clone()
				c.ExcludedTitleIDs = []string{"a"}
				c.Count = 5
			}),
			u:    memento.Understanding{Search: true, Recognised: true, Replace: true, Genres: []string{"Horror"}},
			want: ctxWith(func(c *memento.ActiveContext) { c.Genres = []string{"Horror"}; c.ExcludedTitleIDs = []string{"a"} }),
		},
		{
			name: "no search leaves the context",
			prev: comedy2010,
			u:    memento.Understanding{Recognised: true, Question: "how does this work?"},
			want: comedy2010,
		},
		{
			name: "a lone lower bound past the upper one drops it",
			prev: ctxWith(func(c *memento.ActiveContext) { c.MinYear = yr(1990); c.MaxYear = yr(1999) }),
			u:    memento.Understanding{Search: true, Recognised: true, MinYear: yr(2016)},
			want: ctxWith(func(c *memento.ActiveContext) { c.MinYear = yr(2016) }),
		},
		{
			name: "a turned-down genre leaves the genres and is excluded",
			prev: ctxWith(func(c *memento.ActiveContext) { c.Genres = []string{"Comedy", "Animated"} }),
			u:    memento.Understanding{Search: true, Recognised: true, ExcludeGenres: []string{"Animated"}},
			want: ctxWith(func(c *memento.ActiveContext) { c.Genres = []string{"Comedy"}; c.ExcludedGenres = []string{"Animated"} }),
		},
		{
			name: "asking for an excluded genre again lifts the exclusion",
			prev: ctxWith(func(c *memento.ActiveContext) { c.ExcludedGenres = []string{"Horror"} }),
			u:    memento.Understanding{Search: true, Recognised: true, Genres: []string{"Horror"}},
			want: ctxWith(func(c *memento.ActiveContext) { c.Genres = []string{"Horror"} }),
		},
		{
			name: "count is honoured and kept",
			prev: comedy2010,
			u:    memento.Understanding{Search: true, Recognised: true, Count: 5},
			want: ctxWith(func(c *memento.ActiveContext) { *c = comedy2010.Clone(); c.Count = 5 }),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Apply(tt.prev, tt.u, tt.shown, 2026)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Apply() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyDoesNotAliasPrevious(t *testing.T) {
	prev := ctxWith(func(c *memento.ActiveContext) { c.Genres = []string{"Comedy"}; c.MinYear = yr(2000) })
	got := Apply(prev, memento.Understanding{Search: true, Recognised: true, Reject: true}, []memento.Title{{ID: "a"}}, 2026)
	got.Genres[0] = "Horror"
	*got.MinYear = 1900
	if prev.Genres[0] != "Comedy" || *prev.MinYear != 2000 {
		t.Fatalf("Apply changed its input: %+v", prev)
	}
}

func TestDescribe(t *testing.T) {
	c := ctxWith(func(c *memento.ActiveContext) {
		c.Genres = []string{"Comedy"}
		c.TitleType = "movie"
		c.MinYear = yr(2010)
	})
	if got, want := Describe(c), "comedy movies from 2010 on"; got != want {
		t.Errorf("Describe() = %q, want %q", got, want)
	}
}
