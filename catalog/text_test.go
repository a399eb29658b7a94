package catalog

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTokenize(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"The Avengers", []string{"avenger"}},
		{"A heist on the moon!", []string{"heist", "moon"}},
		{"Heists, HEIST and heisted", []string{"heist", "heist", "heisted"}},
		{"Stories of movies and a story about a movie", []string{"stori", "movi", "stori", "movi"}},
		{"Witches, boxes, heroes, classes", []string{"witch", "box", "hero", "class"}},
		{"boss virus crisis", []string{"boss", "virus", "crisis"}},
		{"Penélope Cruz in Málaga", []string{"penelope", "cruz", "malaga"}},
		{"Don't stop: Franny's feet", []string{"dont", "stop", "franni", "feet"}},
		{"Blade Runner 2049", []string{"blade", "runner", "2049"}},
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
