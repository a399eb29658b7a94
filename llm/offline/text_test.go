package offline

import (
	"testing"

	"github.com/memento-ai/memento/fulltext"
)

// TestRulesSpellWordsAsFulltext checks that the rules' words and stems are
// fulltext's: folded alike, stemmed alike, with the apostrophe the rules
// keep inside a word as the only difference.
func TestRulesSpellWordsAsFulltext(t *testing.T) {
	text := "I loved Amélie and the CAFÉ scenes; heists, comedies, watching Łódź stories"
	var got []string
	for _, tok := range tokenize(text) {
		got = append(got, stem(tok.w))
	}
	want := fulltext.Tokens(text)
	if len(got) != len(want) {
		t.Fatalf("stems %q, want fulltext.Tokens %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("stem %d = %q, want %q (all: %q)", i, got[i], want[i], got)
		}
	}

	toks := tokenize("Don't skip Franny's 90’s picks")
	for i, want := range []string{"don't", "skip", "franny's", "90's", "picks"} {
		if toks[i].w != want {
			t.Errorf("word %d = %q, want %q", i, toks[i].w, want)
		}
	}
	if got := stem("franny's"); got != fulltext.Stem("franny") {
		t.Errorf("stem(franny's) = %q, want %q", got, fulltext.Stem("franny"))
	}
	for _, w := range fulltext.Stopwords() {
		if !stopwords[w] {
			t.Errorf("fulltext stop word %q is not a stop word of the rules", w)
		}
	}
}

// TestEmbedderV1Unchanged pins version 1 of the offline embedding to its own
// stems and stop words: they are features of stored vectors.
func TestEmbedderV1Unchanged(t *testing.T) {
	for w, want := range map[string]string{"loved": "lov", "comedies": "comedi", "stopped": "stop", "movies": "movi"} {
		if got := embedStem(w); got != want {
			t.Errorf("embedStem(%q) = %q, want %q", w, got, want)
		}
	}
	if embedStopwords["going"] || !embedStopwords["please"] {
		t.Error("embedStopwords changed: version 1 leaves out please but not going")
	}
}
