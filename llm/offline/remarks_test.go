package offline_test

import (
	"context"
	"slices"
	"testing"

	"github.com/memento-ai/memento"
)

// A person named in a remark about a title just shown describes that
// title; a wish for more with them is a new constraint.
func TestCastInARemarkIsNoNewWish(t *testing.T) {
	m := catalogModel(t)
	c := memento.NewActiveContext()
	c.Genres = []string{"Action"}
	c.People = []string{"Tom Hardy"}
	shown := []memento.Title{{ID: "dh", Title: "Die Hard", Year: 1988, Type: memento.TypeMovie, Genres: []string{"Action"},
		Cast: []string{"Bruce Willis", "Alan Rickman"}}}
	for msg, want := range map[string][]string{
		"With Bruce Willis, that one is pretty good.": nil,
		"I liked that one with Bruce Willis":          nil,
		"more with Bruce Willis":                      {"Bruce Willis"},
		"Something with Bruce Willis":                 {"Bruce Willis"},
		"that one was great, now Keanu Reeves please": {"Keanu Reeves"},
	} {
		u, err := m.UnderstandRequest(context.Background(), memento.UnderstandInput{Message: msg, Context: c.Clone(), LastShown: shown})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(u.People, want) {
			t.Errorf("UnderstandRequest(%q).People = %v, want %v", msg, u.People, want)
		}
	}
}

// The remark may be about a title the user has in mind rather than one of
// those shown: it is still no wish for that actor.
func TestCastInARemarkAboutAnotherTitle(t *testing.T) {
	m := catalogModel(t)
	c := memento.NewActiveContext()
	c.People = []string{"Tom Hardy"}
	shown := []memento.Title{{ID: "j", Title: "Jumanji", Year: 2017, Type: memento.TypeMovie, Cast: []string{"Dwayne Johnson"}}}
	u, err := m.UnderstandRequest(context.Background(), memento.UnderstandInput{Message: "With Bruce Willis, that one is pretty good.", Context: c, LastShown: shown})
	if err != nil {
		t.Fatal(err)
	}
	if len(u.People) != 0 || u.Replace {
		t.Errorf("a remark replaced the people in force: People %v, Replace %v", u.People, u.Replace)
	}
}
