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
