package catalog

import (
	"context"
	"testing"

	"github.com/memento-ai/memento"
)

func TestSearchExcludeGenres(t *testing.T) {
	x := New([]memento.Title{
		{ID: "a", Title: "A", Type: "movie", Year: 2001, Genres: []string{"Comedy"}},
		{ID: "b", Title: "B", Type: "movie", Year: 2002, Genres: []string{"Comedy", "Animated"}},
		{ID: "c", Title: "C", Type: "movie", Year: 2003, Genres: []string{"Horror"}},
		{ID: "d", Title: "D", Type: "movie", Year: 2004, Genres: []string{"Animated"}},
	})
	tests := []struct {
		name string
		q    memento.TitleQuery
		want []string
	}{
		{"alone", memento.TitleQuery{ExcludeGenres: []string{"animated"}}, []string{"c", "a"}},
		{"with genres", memento.TitleQuery{Genres: []string{"Comedy"}, ExcludeGenres: []string{"Animated"}}, []string{"a"}},
		{"synonym", memento.TitleQuery{ExcludeGenres: []string{"Horror", "cartoon"}}, []string{"a"}},
		{"unknown genre excludes nothing", memento.TitleQuery{ExcludeGenres: []string{"Opera"}}, []string{"d", "c", "b", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.q.Page = 1
			p, err := x.Search(context.Background(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ti := range p.Titles {
				got = append(got, ti.ID)
			}
			if len(got) != len(tt.want) || p.Total != len(tt.want) {
				t.Fatalf("got %v (total %d), want %v", got, p.Total, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}
