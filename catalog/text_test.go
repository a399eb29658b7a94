package catalog

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memento-ai/memento"
)

func TestTokenize(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"The Avengers", []string{"aveng"}},
		{"A heist on the moon!", []string{"heist", "moon"}},
		{"Heists, HEIST and heisted", []string{"heist", "heist", "heist"}},
		{"Stories of movies and a story about a movie", []string{"stori", "movi", "stori", "movi"}},
		{"Witches, boxes, heroes, classes", []string{"witch", "box", "hero", "class"}},
		{"boss virus crisis", []string{"boss", "viru", "crisi"}},
		{"Penélope Cruz in Málaga", []string{"penelop", "cruz", "malaga"}},
		{"Pene\u0301lope", []string{"penelop"}},
		{"Don't stop: Franny's feet", []string{"don", "stop", "franni", "feet"}},
		{"Blade Runner 2049, the 1990s", []string{"blade", "runner", "2049", "1990"}},
		{"the of and", nil},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tokenize(nil, tt.in)); diff != "" {
				t.Errorf("tokenize(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestNormKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Robert Downey, Jr.", "robert downey jr"},
		{"  robert   downey jr ", "robert downey jr"},
		{"Penélope Cruz", "penelope cruz"},
		{"Dave (Tex) O'Brien", "dave tex obrien"},
		{"Fast & Furious", "fast and furious"},
		{"Fast and Furious", "fast and furious"},
		{"Auliʻi Cravalho", "aulii cravalho"},
		{"Łódź, Søren", "lodz soren"},
		{"Pene\u0301lope", "penelope"},
		{"!!!", ""},
	}
	for _, tt := range tests {
		if got := normKey(tt.in); got != tt.want {
			t.Errorf("normKey(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCanonicalGenre(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Sci-Fi", "Science Fiction"},
		{"sci fi", "Science Fiction"},
		{"Science Fiction", "Science Fiction"},
		{"Animation", "Animated"},
		{"Film-Noir", "Noir"},
		{"Children", "Family"},
		{"Sport", "Sports"},
		{"History", "Historical"},
		{"comedy", "Comedy"},
		{"  Drama ", "Drama"},
		{"IMAX", "IMAX"},
		{" ", ""},
	}
	for _, tt := range tests {
		if got := CanonicalGenre(tt.in); got != tt.want {
			t.Errorf("CanonicalGenre(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCollapseSpace(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"clean text", "clean text"},
		{" lead", "lead"},
		{"trail ", "trail"},
		{"two  spaces", "two spaces"},
		{"tab\there", "tab here"},
		{"Pokémon  Movie", "Pokémon Movie"},
		{"no\u00a0break", "no break"},
	}
	for _, tt := range tests {
		if got := collapseSpace(tt.in); got != tt.want {
			t.Errorf("collapseSpace(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestIndexTermsAreTokenize checks that the index, which stems each
// distinct word of the plots once, holds exactly the terms tokenize (the
// query side) gives for the same texts.
func TestIndexTermsAreTokenize(t *testing.T) {
	titles := []memento.Title{
		{ID: "t1", Title: "The Heists", Overview: "A crew of thieves plans heists; the heist goes wrong in Málaga."},
		{ID: "t2", Title: "Stories", Overview: "Don't stop: stories of witches, boxes and heroes in the 1990s."},
		{ID: "t3", Title: "Amélie", Overview: "Ame\u0301lie helps the people around her, running a café."},
	}
	x := New(titles)
	want := map[string]bool{}
	for _, tt := range titles {
		for _, tok := range tokenize(tokenize(nil, tt.Title), tt.Overview) {
			want[tok] = true
		}
	}
	got := map[string]bool{}
	for term := range x.termIDs {
		got[term] = true
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("index terms (-tokenize +index):\n%s", diff)
	}
}
