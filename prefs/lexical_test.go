package prefs

import (
	"slices"
	"testing"

	"github.com/memento-ai/memento/fulltext"
)

func TestConceptWordsMatchTitles(t *testing.T) {
	tests := []struct {
		concept, text string
		want          bool
	}{
		{"heist films", "A crew of thieves plans one last heist.", true},
		{"heists", "A crew of thieves plans one last heist.", true},
		{"lord of the rings", "The Lord of the Rings: The Two Towers", true},
		{"tom hanks movies", "Starring Tom Hanks as a lawyer.", true},
		{"tom hanks", "Tom meets Hanks.", false}, // "meets" sits between them
		{"Amélie", "Amelie (2001) follows a shy waitress.", true},
		{"time travel", "He travels back in time.", false}, // out of order
		{"good movies", "A good movie.", false},            // only noise words: nothing to match
	}
	for _, tt := range tests {
		got := containsRun(words(tt.text), conceptWords(tt.concept))
		if got != tt.want {
			t.Errorf("concept %q in %q = %v, want %v (concept %q, text %q)", tt.concept, tt.text, got, tt.want,
				conceptWords(tt.concept), words(tt.text))
		}
	}
}

// TestWordsAreFulltextTerms checks that the lexical match spells words as
// the catalog and recall do: fulltext's topic terms.
func TestWordsAreFulltextTerms(t *testing.T) {
	text := "Witches, heroes and the 1990s' heists, in Málaga"
	if got, want := words(text), fulltext.TopicTerms(text); !slices.Equal(got, want) {
		t.Errorf("words(%q) = %q, want fulltext.TopicTerms %q", text, got, want)
	}
}
