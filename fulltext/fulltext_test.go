package fulltext

import (
	"slices"
	"testing"
)

func TestTokens(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"I loved the museums, and Melanie's paintings!", []string{"i", "love", "the", "museum", "and", "melani", "s", "paint"}},
		{"Amélie (2001) — café", []string{"ameli", "2001", "cafe"}},
		{"WANTS_TO_WATCH", []string{"want", "to", "watch"}},
		{"Don't stop: Franny's feet", []string{"don", "t", "stop", "franni", "s", "feet"}},
		{"ΛΌΓΟΣ Łódź cafe\u0301s in the 1990s", []string{"λόγοσ", "łodz", "cafe", "in", "the", "1990"}},
		{"", []string{}},
		{"  ...  ", []string{}},
	}
	for _, tt := range tests {
		if got := Tokens(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Tokens(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestQueryWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"When did Melanie go to the museum?", []string{"melanie", "museum"}},
		{"What is Caroline's identity?", []string{"caroline", "identity"}},
		{"Melanie’s kids and Melanie", []string{"melanie", "kids"}},
		{"don't do it", []string{"dont", "do", "it"}}, // only stop words: all of them, apostrophe dropped
		{"what about it", []string{"what", "about", "it"}},
		{"", nil},
	}
	for _, tt := range tests {
		got := QueryWords(tt.in)
		if !slices.Equal(got, tt.want) {
			t.Errorf("QueryWords(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTerm(t *testing.T) {
	if got := Term("Running"); got != "run" {
		t.Errorf("Term(Running) = %q, want run", got)
	}
	if got := Term("—"); got != "" {
		t.Errorf("Term(—) = %q, want empty", got)
	}
}

func TestTopicTerms(t *testing.T) {
	got := TopicTerms("I don't like the heists of the 1990s, nor Amélie's stories")
	want := []string{"don", "heist", "1990", "ameli", "stori"}
	if !slices.Equal(got, want) {
		t.Errorf("TopicTerms = %q, want %q", got, want)
	}
}

func TestFold(t *testing.T) {
	tests := []struct {
		in   rune
		want rune
		ok   bool
	}{
		{'A', 'a', true}, {'7', '7', true}, {'-', 0, false}, {'\'', 0, false},
		{'É', 'e', true}, {'ǖ', 'u', true}, {'ế', 'e', true}, {'İ', 'i', true},
		{'Ł', 'ł', true}, {'ø', 'ø', true}, {'ı', 'ı', true}, {'ß', 'ß', true}, {'ẞ', 'ß', true},
		{'Σ', 'σ', true}, {'ς', 'σ', true}, {'ſ', 's', true}, {'µ', 'μ', true}, {'ά', 'ά', true},
		{'K', 'k', true}, {'Ж', 'ж', true}, {'\u0301', -1, true}, {'\ue000', '\ue000', true},
		{'²', '²', true}, {'\u200b', 0, false}, {'—', 0, false}, {'’', 0, false},
	}
	for _, tt := range tests {
		got, ok := Fold(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Fold(%q) = %q, %v, want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestEachTopicTermAllocates(t *testing.T) {
	text := "A team of thieves plans the heist of the century in Málaga, 1999."
	n := testing.AllocsPerRun(100, func() {
		EachTopicTerm(text, func(t []byte) {})
	})
	// The word buffer escapes to fn, so it is allocated once per text,
	// never per word.
	if n > 1 {
		t.Errorf("EachTopicTerm allocates %v times per text, want at most 1", n)
	}
}

func TestStopword(t *testing.T) {
	for _, w := range []string{"the", "don't", "t", "s", "upon"} {
		if !Stopword(w) || !StopwordBytes([]byte(w)) {
			t.Errorf("Stopword(%q) = false, want true", w)
		}
	}
	for _, w := range []string{"heist", "horror", "museum"} {
		if Stopword(w) {
			t.Errorf("Stopword(%q) = true, want false", w)
		}
	}
}

func TestStopwordSwitch(t *testing.T) {
	for w := range stopwords {
		if !isStopword(w) {
			t.Errorf("isStopword(%q) = false, but the list holds it", w)
		}
	}
	for _, w := range []string{"", "heist", "th", "thee", "they'", "upon's"} {
		if isStopword(w) {
			t.Errorf("isStopword(%q) = true, but the list does not hold it", w)
		}
	}
}
