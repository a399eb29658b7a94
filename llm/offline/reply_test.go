package offline

import (
	"context"
	"strings"
	"testing"

	"github.com/memento-ai/memento"
)

func TestWriteReply(t *testing.T) {
	m := newTestModel(t)
	comedy := memento.NewActiveContext()
	comedy.Genres = []string{"Comedy"}
	comedy.TitleType = memento.TypeMovie
	comedy.MinYear = intPtr(2010)
	titles := []memento.Title{
		{ID: "wiki:a", Title: "Game Night", Type: "movie", Year: 2018, Genres: []string{"Comedy", "Crime"}},
		{ID: "wiki:b", Title: "Booksmart", Type: "movie", Year: 2019, Genres: []string{"Comedy", "Teen"}},
		{ID: "wiki:c", Title: "Palm Springs", Type: "movie", Year: 2020, Genres: []string{"Comedy", "Romance"}},
	}
	nineties := memento.NewActiveContext()
	nineties.Genres = []string{"Science Fiction"}
	nineties.TitleType = memento.TypeTVSeries
	nineties.MinYear, nineties.MaxYear = intPtr(1990), intPtr(1999)
	nineties.People = []string{"Tom Hanks"}
	nineties.ExcludedTitleIDs = []string{"x", "y"}

	tests := []struct {
		name    string
		in      memento.ReplyInput
		want    []string // phrases the reply must hold
		notWant []string // phrases it must not hold
	}{
		{
			"titles found",
			memento.ReplyInput{Message: "Discover exactly 3 comedy movies from 2010 onward.", Context: comedy, Searched: true, Titles: titles},
			[]string{"Here are 3 comedy movies from 2010 on:", "Game Night (2018)", "Booksmart (2019)", "Palm Springs (2020)"},
			[]string{"Heat", "couldn't"},
		},
		{
			"one title",
			memento.ReplyInput{Context: comedy, Searched: true, Titles: titles[:1]},
			[]string{"Here is 1 comedy movie from 2010 on:", "Game Night (2018)"},
			nil,
		},
		{
			"fewer than asked",
			memento.ReplyInput{Context: comedy, Searched: true, Titles: titles[:2], Notes: []string{"Only 2 titles matched, fewer than the 3 you asked for"}},
			[]string{"Here are 2 comedy movies", "Only 2 titles matched, fewer than the 3 you asked for."},
			[]string{"Palm Springs"},
		},
		{
			"nothing found",
			memento.ReplyInput{Message: "sci-fi series with Tom Hanks from the 90s", Context: nineties, Searched: true, Notes: []string{"The search found nothing."}},
			[]string{"couldn't find any science fiction series with Tom Hanks from the 1990s", "2 titles you've already seen", "The search found nothing."},
			[]string{"Here are", "Game Night"},
		},
		{
			"how does this work",
			memento.ReplyInput{Message: "how does this work?", Context: comedy, Question: "how does this work?"},
			[]string{"remember", "not those", "make it older"},
			[]string{"couldn't find", "Here are"},
		},
		{
			"question about a title",
			memento.ReplyInput{Message: "Is it a comedy?", Question: "Is it a comedy?", Titles: titles[:1]},
			[]string{"Game Night (2018) is a comedy and crime movie."},
			[]string{"Booksmart"},
		},
		{"thanks", memento.ReplyInput{Message: "thanks!"}, []string{"welcome"}, []string{"couldn't"}},
		{"hello", memento.ReplyInput{Message: "hello"}, []string{"Hi!"}, nil},
		{"bye", memento.ReplyInput{Message: "bye"}, []string{"Bye!"}, nil},
		{"unrecognised", memento.ReplyInput{Message: "the weather is nice"}, []string{"didn't catch"}, nil},
		{"turned down", memento.ReplyInput{Message: "I don't want horror"}, []string{"no horror", "instead"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := m.WriteReply(context.Background(), tt.in)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("reply %q lacks %q", got, w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("reply %q holds %q", got, w)
				}
			}
		})
	}
}

// TestWriteReplyNamesOnlyGivenTitles checks that a reply names no title it
// was not given, even when the message, summary and memories name others.
func TestWriteReplyNamesOnlyGivenTitles(t *testing.T) {
	m := newTestModel(t)
	given := []memento.Title{{ID: "a", Title: "Arrival", Year: 2016, Genres: []string{"Science Fiction"}}}
	in := memento.ReplyInput{
		Message:  "something like Interstellar please",
		Context:  memento.NewActiveContext(),
		Searched: true,
		Titles:   given,
		Summary:  "User liked Blade Runner.",
		Memories: []string{"favourite movie is Alien"},
	}
	got, err := m.WriteReply(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for _, other := range []string{"Interstellar", "Blade Runner", "Alien"} {
		if strings.Contains(got, other) {
			t.Errorf("reply %q names %q, which it was not given", got, other)
		}
	}
	if !strings.Contains(got, "Arrival (2016)") {
		t.Errorf("reply %q lacks the given title", got)
	}
}

func TestDescribeYears(t *testing.T) {
	tests := []struct {
		lo, hi *int
		want   string
	}{
		{intPtr(2010), nil, " from 2010 on"},
		{nil, intPtr(1979), " up to 1979"},
		{intPtr(1990), intPtr(1999), " from the 1990s"},
		{intPtr(1994), intPtr(1994), " from 1994"},
		{intPtr(1990), intPtr(2000), " from 1990 to 2000"},
		{nil, nil, ""},
	}
	for _, tt := range tests {
		if got := describeYears(tt.lo, tt.hi); got != tt.want {
			t.Errorf("describeYears = %q, want %q", got, tt.want)
		}
	}
}

// memoryWords are phrases by which a reply would claim to have used what
// the user said before.
var memoryWords = []string{"kept in mind", "told me", "remember", "you've said", "from before"}

func TestWriteReplyMemory(t *testing.T) {
	m := newTestModel(t)
	ac := memento.NewActiveContext()
	ac.Genres = []string{"Crime"}
	titles := []memento.Title{
		{ID: "a", Title: "Ronin", Type: "movie", Year: 1998, Genres: []string{"Crime"}},
		{ID: "b", Title: "Thief", Type: "movie", Year: 1981, Genres: []string{"Crime"}},
	}
	tests := []struct {
		name       string
		in         memento.ReplyInput
		wantEffect string // the sentence memory's effect must appear as, once; empty: no memory sentence at all
	}{
		{"no memories", memento.ReplyInput{Context: ac, Searched: true, Titles: titles}, ""},
		{"memories that changed nothing", memento.ReplyInput{Context: ac, Searched: true, Titles: titles,
			Memories: []string{"likes heist movies"}, Summary: "User: I like heists."}, ""},
		{"nothing found, no memories", memento.ReplyInput{Context: ac, Searched: true}, ""},
		{"small talk, no memories", memento.ReplyInput{Message: "bye"}, ""},
		{"effect", memento.ReplyInput{Context: ac, Searched: true, Titles: titles,
			Memories: []string{"has seen Heat"}, MemoryEffect: "leaving out Heat, which you have seen"},
			"Leaving out Heat, which you have seen."},
		{"effect also noted", memento.ReplyInput{Context: ac, Searched: true, Titles: titles,
			MemoryEffect: "you told me you can't stand musicals; here are the best-liked ones anyway",
			Notes:        []string{"You told me you can't stand musicals; here are the best-liked ones anyway."}},
			"You told me you can't stand musicals; here are the best-liked ones anyway."},
		{"effect, nothing found", memento.ReplyInput{Context: ac, Searched: true, MemoryEffect: "leaving out the 4 crime films you have seen"},
			"Leaving out the 4 crime films you have seen."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := m.WriteReply(context.Background(), tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantEffect == "" {
				for _, w := range memoryWords {
					if strings.Contains(strings.ToLower(got), w) {
						t.Errorf("reply %q claims memory (%q) although memory changed nothing", got, w)
					}
				}
				return
			}
			if n := strings.Count(got, tt.wantEffect); n != 1 {
				t.Errorf("reply %q holds %q %d times, want once", got, tt.wantEffect, n)
			}
		})
	}
}

func TestWriteReplyAbout(t *testing.T) {
	m := newTestModel(t)
	heat := &memento.Title{
		ID: "wiki:Heat_(1995_film)", Title: "Heat", Type: memento.TypeMovie, Year: 1995,
		Genres: []string{"Crime", "Thriller"}, Cast: []string{"Al Pacino", "Robert De Niro", "Val Kilmer", "Jon Voight"},
		RuntimeMinutes: 170,
		Overview: "Heat is a 1995 American crime film written and directed by Michael Mann. " +
			"A group of professional bank robbers starts to feel the heat from the police. " +
			strings.Repeat("The rest of the plot goes on for a long time. ", 30),
	}
	tests := []struct {
		name    string
		in      memento.ReplyInput
		want    []string
		notWant []string
	}{
		{
			"about a shown title",
			memento.ReplyInput{Message: "tell me more about the first one", About: heat},
			[]string{"Heat (1995)", "crime and thriller movie", "Al Pacino, Robert De Niro and Val Kilmer", "170 minutes",
				"written and directed by Michael Mann.", "feel the heat from the police."},
			[]string{"Jon Voight", "Here are", "couldn't find", "search", "didn't catch", "goes on for a long time. The rest"},
		},
		{
			"about a title without a plot",
			memento.ReplyInput{Message: "what is Heat?", About: &memento.Title{Title: "Heat", Year: 1986, Type: memento.TypeMovie}},
			[]string{"Heat (1986) is a movie.", "no plot summary"},
			[]string{"Here are"},
		},
		{
			"about a series",
			memento.ReplyInput{About: &memento.Title{Title: "The Wire", Type: memento.TypeTVSeries, Year: 2002, EndYear: 2008, Genres: []string{"Crime"}}},
			[]string{"The Wire (2002–2008) is a crime series."},
			nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := m.WriteReply(context.Background(), tt.in)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("reply %q lacks %q", got, w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("reply %q holds %q", got, w)
				}
			}
			if len(got) > 700 {
				t.Errorf("reply is %d bytes; an answer about a title quotes the plot's first sentences only", len(got))
			}
		})
	}
}
