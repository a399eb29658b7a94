package offline

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/memento-ai/memento"
)

func like(c string, strength float64) memento.Concept {
	return memento.Concept{Concept: c, Sign: 1, Strength: strength, Kind: memento.KindTaste}
}

func dislike(c string, strength float64) memento.Concept {
	return memento.Concept{Concept: c, Sign: -1, Strength: strength, Kind: memento.KindTaste}
}

func lifeFact(c string) memento.Concept {
	return memento.Concept{Concept: c, Sign: 1, Strength: 1, Kind: memento.KindFact}
}

func TestExtractPreferences(t *testing.T) {
	m := newTestModel(t)
	tests := []struct {
		msg  string
		want []memento.Concept
	}{
		// The examples of the brief.
		{"I like strawberries but I don't like very sweet desserts", []memento.Concept{like("strawberries", 0.7), dislike("very sweet desserts", 0.7)}},
		{"I love sci-fi", []memento.Concept{like("science fiction", 1)}},
		{"not a fan of musicals", []memento.Concept{dislike("musicals", 0.7)}},
		{"I'm not a fan of musicals", []memento.Concept{dislike("musicals", 0.7)}},
		{"I don't dislike horror", []memento.Concept{like("horror", 0.3)}},
		{"I live in Lisbon", []memento.Concept{lifeFact("lives in lisbon")}},

		// Strength follows the verb and its adverbs.
		{"I adore westerns", []memento.Concept{like("westerns", 1)}},
		{"I really like thrillers", []memento.Concept{like("thrillers", 0.9)}},
		{"I quite like documentaries", []memento.Concept{like("documentaries", 0.42)}},
		{"I kind of like anime", []memento.Concept{like("anime", 0.42)}},
		{"I enjoy slow burners", []memento.Concept{like("slow burners", 0.7)}},
		{"I don't mind subtitles", []memento.Concept{like("subtitles", 0.3)}},
		{"I don't hate romance", []memento.Concept{like("romance", 0.3)}},
		{"I hate jump scares", []memento.Concept{dislike("jump scares", 1)}},
		{"I can't stand horror", []memento.Concept{dislike("horror", 1)}},
		{"I absolutely hate gore", []memento.Concept{dislike("gore", 1)}},
		{"I don't really like horror movies", []memento.Concept{dislike("horror", 0.5)}},
		{"I'm not really into superhero films", []memento.Concept{dislike("superhero", 0.5)}},
		{"I'm not crazy about musicals", []memento.Concept{dislike("musicals", 0.4)}},
		{"I dislike laugh tracks", []memento.Concept{dislike("laugh tracks", 0.7)}},
		{"I'm tired of remakes", []memento.Concept{dislike("remakes", 0.6)}},
		{"I avoid anything with gore", []memento.Concept{dislike("gore", 0.7)}},
		{"Can't stand slasher films", []memento.Concept{dislike("slasher", 1)}},

		// Concepts are normalised: articles, framing and generic nouns go,
		// lists split, synonyms spelled one way.
		{"I love sci-fi movies", []memento.Concept{like("science fiction", 1)}},
		{"I'm into rom-coms", []memento.Concept{like("romantic comedies", 0.7)}},
		{"I love scary movies", []memento.Concept{like("horror", 1)}},
		{"I like comedies and dramas", []memento.Concept{like("comedies", 0.7), like("dramas", 0.7)}},
		{"I don't like horror or slashers", []memento.Concept{dislike("horror", 0.7), dislike("slashers", 0.7)}},
		{"I love movies with Tom Hanks", []memento.Concept{like("tom hanks", 1)}},
		{"I like Tom Hanks movies", []memento.Concept{like("tom hanks", 0.7)}},
		{"I love watching documentaries at night", []memento.Concept{like("documentaries", 1)}},
		{"I like to watch thrillers on weekends", []memento.Concept{like("thrillers", 0.7)}},
		{"I really like foreign movies as well", []memento.Concept{like("foreign movies", 0.9)}},
		{"I love the Lord of the Rings", []memento.Concept{like("lord of the rings", 1)}},
		{"I like a good heist", []memento.Concept{like("heist", 0.7)}},
		{"I prefer short episodes", []memento.Concept{like("short episodes", 0.7)}},

		// Several statements in one message.
		{"I love sci-fi but can't stand horror, and I watch everything on Netflix", []memento.Concept{like("science fiction", 1), dislike("horror", 1)}},
		{"I don't like horror but I like comedies", []memento.Concept{dislike("horror", 0.7), like("comedies", 0.7)}},
		{"Love westerns, hate musicals.", []memento.Concept{like("westerns", 1), dislike("musicals", 1)}},
		{"I have come around on horror", []memento.Concept{like("horror", 0.5)}},
		{"I used to hate horror", nil}, // a past taste is not a present one

		// Statements about a thing, not in the first person.
		{"Horror gives me nightmares", []memento.Concept{dislike("horror", 0.7)}},
		{"Westerns are my favourite", []memento.Concept{like("westerns", 1)}},
		{"Musicals are not for me", []memento.Concept{dislike("musicals", 0.7)}},
		{"My favourite genre is film noir", []memento.Concept{like("film noir", 1)}},

		// Facts of life fade slowly.
		{"I moved to Porto last year", []memento.Concept{lifeFact("moved to porto last year")}},
		{"I work as a nurse", []memento.Concept{lifeFact("works as a nurse")}},
		{"my daughter is 7", []memento.Concept{lifeFact("has a daughter who is 7")}},
		{"I'm vegetarian", []memento.Concept{lifeFact("is vegetarian")}},

		// Nothing to keep.
		{"show me comedies", nil},
		{"thanks!", nil},
		{"I love it", nil},
		{"Do you like horror?", nil},
		{"what about thrillers", nil},
		{"I want a comedy tonight", nil},
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			got, err := m.ExtractPreferences(context.Background(), tt.msg)
			if err != nil {
				t.Fatalf("ExtractPreferences: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty(), cmpopts.EquateApprox(0, 0.011)); diff != "" {
				t.Errorf("ExtractPreferences(%q) mismatch (-want +got):\n%s", tt.msg, diff)
			}
		})
	}
}

func TestDescribeCluster(t *testing.T) {
	m := newTestModel(t)
	tests := []struct {
		name    string
		members []memento.ClusterMember
		want    memento.ClusterDescription
	}{
		{
			"mixed",
			[]memento.ClusterMember{{Concept: "heist films", Weight: 0.8}, {Concept: "slasher horror", Weight: -0.6}, {Concept: "crime thrillers", Weight: 0.5}},
			memento.ClusterDescription{Description: "prefers heist films and crime thrillers; dislikes slasher horror", Stances: []string{"support", "oppose", "support"}},
		},
		{
			"only dislikes",
			[]memento.ClusterMember{{Concept: "gore", Weight: -1}, {Concept: "jump scares", Weight: -0.4}},
			memento.ClusterDescription{Description: "dislikes gore and jump scares", Stances: []string{"oppose", "oppose"}},
		},
		{
			"repeats and many",
			[]memento.ClusterMember{{Concept: "a", Weight: 1}, {Concept: "b", Weight: 1}, {Concept: "a", Weight: 0.2}, {Concept: "c", Weight: 1},
				{Concept: "d", Weight: 1}, {Concept: "e", Weight: 1}, {Concept: "f", Weight: 1}, {Concept: "g", Weight: 0}},
			memento.ClusterDescription{Description: "prefers a, b, c, d, e and 2 more", Stances: []string{"support", "support", "support", "support", "support", "support", "support", "support"}},
		},
		{"empty", nil, memento.ClusterDescription{Stances: []string{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := m.DescribeCluster(context.Background(), tt.members)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("DescribeCluster mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
