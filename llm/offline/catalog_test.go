package offline_test

import (
	"context"
	"sync"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/llm/offline"
)

var (
	embeddedOnce sync.Once
	embedded     *catalog.Index
	embeddedErr  error
)

// catalogModel is the offline model as cmd/memento builds it, over the
// embedded catalog: people, genres and titles from it.
func catalogModel(tb testing.TB) *offline.Model {
	tb.Helper()
	embeddedOnce.Do(func() { embedded, embeddedErr = catalog.Embedded() })
	if embeddedErr != nil {
		tb.Fatalf("load the embedded catalog: %v", embeddedErr)
	}
	return offline.New(offline.Options{People: embedded, Genres: embedded.Genres(), Titles: embedded.ResolveTitle})
}

// followUpMessages are follow-ups of every kind, for the benchmark.
var followUpMessages = []string{
	"the second one sounds good, more like that",
	"tell me more about the first one",
	"I've already seen Heat",
	"not the second one",
	"something like Inception but funnier",
	"actually I'm in the mood for a scary movie from the 80s",
	"ten please",
	"horor movies with Tom Hnaks",
	"something light on Netflix, not too long",
	"start over",
}

// TestUnderstandWithCatalog checks the follow-ups against the real
// catalog: its titles decide what a name after "like" is.
func TestUnderstandWithCatalog(t *testing.T) {
	m := catalogModel(t)
	ctx := context.Background()
	shown := []memento.Title{{ID: "a", Title: "Heat"}, {ID: "b", Title: "Alien"}}
	got, err := m.UnderstandRequest(ctx, memento.UnderstandInput{Message: "something like The Matrix but funnier", Context: memento.NewActiveContext(), LastShown: shown})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Like) != 1 || got.Like[0].Name != "The Matrix" || !got.Replace || len(got.Genres) != 1 || got.Genres[0] != "Comedy" {
		t.Errorf("like The Matrix but funnier: got %+v", got)
	}
	got, err = m.UnderstandRequest(ctx, memento.UnderstandInput{Message: "I've already seen Heat", Context: memento.NewActiveContext(), LastShown: shown})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Seen) != 1 || got.Seen[0].Position != 1 || got.Reject || !got.Search {
		t.Errorf("seen Heat: got %+v", got)
	}
	got, err = m.UnderstandRequest(ctx, memento.UnderstandInput{Message: "something like Qwzx Blorp", Context: memento.NewActiveContext()})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Like) != 0 {
		t.Errorf("a name the catalog lacks is no title: got Like %v", got.Like)
	}
}

// BenchmarkUnderstandFollowUps measures follow-ups with the embedded
// catalog's people, genres and titles, as the agent's turn runs them.
func BenchmarkUnderstandFollowUps(b *testing.B) {
	m := catalogModel(b)
	ctx := context.Background()
	c := memento.NewActiveContext()
	c.People = []string{"Tom Hanks"}
	shown := []memento.Title{{ID: "a", Title: "Heat"}, {ID: "b", Title: "Alien"}, {ID: "c", Title: "The Dark Knight"}}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		in := memento.UnderstandInput{Message: followUpMessages[i%len(followUpMessages)], Context: c, LastShown: shown}
		if _, err := m.UnderstandRequest(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// TestUnderstandNoFalseCorrections checks ordinary sentences: none of
// their words is read as a misspelt genre.
func TestUnderstandNoFalseCorrections(t *testing.T) {
	models := map[string]*offline.Model{"default": offline.New(offline.Options{}), "catalog": catalogModel(t)}
	sentences := []string{
		"I want to watch something with my friends tonight",
		"all sorts of movies",
		"I'd be thrilled with anything",
		"a movie about dancers",
		"something sunny and bright",
		"the weather is nice",
		"I just finished work",
		"let me think about it",
		"horse movies",
		"eastern films",
		"comic movies",
		"my dream movie",
		"anything on prime",
		"acting movies",
		"a mastery of suspense",
		"I was scared last night",
		"what's the latest news",
		"my mother loves these",
		"a movie with great music",
		"please suggest something classy",
		"something cheap and cheerful",
		"we are bored",
		"show me trains",
		"drama queens",
		"tell me a story",
		"a crimson tide",
		"hello there",
		"movies about horses",
		"I watched it with my brother",
		"my husband likes westerns",
		"something for date night",
		"what do you recommend for a rainy sunday",
		"give me classics from the golden age",
		"Tonight I want Mexican food and a movie",
		"anything with a twist ending",
		"Good evening Memento",
		"the popcorn is ready",
		"we loved the soundtrack",
		"big budget blockbusters",
		"hidden gems please",
		"nothing with subtitles",
		"family friendly but not boring",
		"something my grandma would enjoy",
	}
	for name, m := range models {
		for _, s := range sentences {
			got, err := m.UnderstandRequest(context.Background(), memento.UnderstandInput{Message: s, Context: memento.NewActiveContext()})
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Corrections) > 0 {
				t.Errorf("%s model: UnderstandRequest(%q).Corrections = %v, want none", name, s, got.Corrections)
			}
		}
	}
}
