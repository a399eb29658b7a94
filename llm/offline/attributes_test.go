package offline

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/memento-ai/memento"
)

func TestAssignAttributes(t *testing.T) {
	m := newTestModel(t)
	// unknownSchema is a travel schema the rules have never heard of: only
	// names and descriptions guide them.
	unknownSchema := []memento.AttributeSpec{
		{Name: "HOME_BASE", Description: "The city or country where the traveller lives."},
		{Name: "DREAM_DESTINATIONS", Description: "Places the traveller wants to visit one day."},
		{Name: "DIETARY_NEEDS", Description: "Food allergies and diet restrictions."},
	}
	tests := []struct {
		schema []memento.AttributeSpec
		fact   memento.Fact
		want   string
	}{
		{movieSchema, fact("loves science fiction"), "GENRE"},
		{movieSchema, fact("really likes thrillers"), "GENRE"},
		{movieSchema, negFact("can't stand horror"), "DISLIKES"},
		{movieSchema, negFact("doesn't like horror"), "DISLIKES"},
		{movieSchema, negFact("is not a fan of musicals"), "DISLIKES"},
		{movieSchema, fact("watches everything on Netflix"), "PLATFORM"},
		{movieSchema, fact("is on Netflix"), "PLATFORM"},
		{movieSchema, fact("has Disney+ and Hulu"), "PLATFORM"},
		{movieSchema, fact("watches on weekends"), "WATCHING_HABIT"},
		{movieSchema, fact("watches romantic comedies on Fridays with their wife"), "WATCHING_HABIT"},
		{movieSchema, fact("usually falls asleep during long movies"), "SHOW_LENGTH"},
		{movieSchema, fact("prefers short episodes"), "SHOW_LENGTH"},
		{movieSchema, fact("rewatches The Office every year"), "REWATCHER"},
		{movieSchema, fact("watches a movie every night"), "FREQUENCY"},
		{movieSchema, fact("rarely watches TV"), "FREQUENCY"},
		{movieSchema, fact("favourite is Alien"), "FAVORITE"},
		{movieSchema, fact("favorite movie is The Godfather"), "FAVORITE"},
		{movieSchema, fact("wants to watch Dune someday"), "WANTS_TO_WATCH"},
		{movieSchema, negFact("can't stand gore"), "AVOID"},
		{movieSchema, fact("avoids movies with animal deaths"), "AVOID"},
		{movieSchema, fact("likes strong female characters"), "CHARACTER_PREFERENCES"},
		{movieSchema, fact("prefers hidden gems over blockbusters"), "POPULARITY"},
		{movieSchema, fact("is a big softie who cries easily"), "PERSONALITY"},
		{movieSchema, fact("loves Tom Hanks"), "LIKES"},
		{movieSchema, fact("usually enjoys movies with Seth Rogen and Jonah Hill"), "LIKES"},
		{movieSchema, negFact("didn't like the new recall"), "DISLIKES"},
		{movieSchema, fact("moved to Lisbon"), ""},
		// A title seen is an event for the profile, not a wish to watch.
		{movieSchema, fact("has seen Heat and Ronin already"), ""},
		{movieSchema, fact("has already seen Heat"), ""},
		{movieSchema, fact("hasn't seen Dune yet"), "WANTS_TO_WATCH"},
		{movieSchema, fact("has a daughter who is 7"), ""},

		{genericSchema, fact("moved to Lisbon"), "LOCATION"},
		{genericSchema, fact("lives in Porto"), "LOCATION"},
		{genericSchema, fact("works as a nurse"), "OCCUPATION"},
		{genericSchema, fact("is a teacher"), "OCCUPATION"},
		{genericSchema, fact("has a daughter who is 7"), "FAMILY"},
		{genericSchema, fact("has two kids and a dog"), "FAMILY"},
		{genericSchema, fact("is allergic to nuts"), "HEALTH"},
		{genericSchema, fact("is vegetarian"), "HEALTH"},
		{genericSchema, fact("plays the guitar"), "HOBBY"},
		{genericSchema, fact("loves hiking"), "HOBBY"},
		{genericSchema, fact("went to Japan last year"), "EVENT"},
		{genericSchema, fact("loves science fiction"), "PREFERENCE"},
		{genericSchema, negFact("can't stand horror"), "PREFERENCE"},
		{genericSchema, fact("the sky is blue"), ""},

		{unknownSchema, fact("lives in Berlin"), "HOME_BASE"},
		{unknownSchema, fact("wants to visit Japan"), "DREAM_DESTINATIONS"},
		{unknownSchema, fact("is allergic to shellfish"), "DIETARY_NEEDS"},
		{nil, fact("loves science fiction"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.fact.Text, func(t *testing.T) {
			got, err := m.AssignAttributes(context.Background(), []memento.Fact{tt.fact}, tt.schema)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("AssignAttributes returned %d facts, want 1", len(got))
			}
			if got[0].Attribute != tt.want || got[0].Fact != tt.fact {
				t.Errorf("AssignAttributes(%q) = %q, want %q", tt.fact.Text, got[0].Attribute, tt.want)
			}
		})
	}
}

// TestAssignAttributesSchemaChanges: one model asked with two schemas in
// turn, from two goroutines at once, assigns each fact by the schema it
// was asked with, whichever schema it described last.
func TestAssignAttributesSchemaChanges(t *testing.T) {
	m := newTestModel(t)
	movie := slices.Clone(movieSchema)
	cases := []struct {
		schema []memento.AttributeSpec
		fact   memento.Fact
		want   string
	}{
		{movie, fact("moved to Lisbon"), ""},
		{genericSchema, fact("moved to Lisbon"), "LOCATION"},
		{movie, fact("watches everything on Netflix"), "PLATFORM"},
		{genericSchema, fact("works as a nurse"), "OCCUPATION"},
	}
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Go(func() {
			for i := range 200 {
				c := cases[(i+g)%len(cases)]
				got, err := m.AssignAttributes(context.Background(), []memento.Fact{c.fact}, c.schema)
				if err != nil || len(got) != 1 || got[0].Attribute != c.want {
					t.Errorf("AssignAttributes(%q) = %v, %v; want %q", c.fact.Text, got, err, c.want)
					return
				}
			}
		})
	}
	wg.Wait()
	// A schema changed in place is described anew.
	movie[slices.IndexFunc(movie, func(a memento.AttributeSpec) bool { return a.Name == "PLATFORM" })].Name = "SERVICES"
	got, err := m.AssignAttributes(context.Background(), []memento.Fact{fact("is on Netflix")}, movie)
	if err != nil || got[0].Attribute == "PLATFORM" {
		t.Errorf("after the schema's PLATFORM became SERVICES, AssignAttributes = %v, %v: an attribute the schema no longer has", got, err)
	}
}

// TestExtractThenAssign runs the message of the design document through
// extraction and attribution.
func TestExtractThenAssign(t *testing.T) {
	m := newTestModel(t)
	ctx := context.Background()
	facts, err := m.ExtractFacts(ctx, memento.ExtractInput{Message: "I love sci-fi but can't stand horror, and I watch everything on Netflix"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.AssignAttributes(ctx, facts, movieSchema)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"GENRE", "DISLIKES", "PLATFORM"}
	if len(got) != len(want) {
		t.Fatalf("got %d attributed facts, want %d: %+v", len(got), len(want), got)
	}
	for i, a := range got {
		if a.Attribute != want[i] {
			t.Errorf("fact %q: attribute %q, want %q", a.Fact.Text, a.Attribute, want[i])
		}
	}
}

// TestTasteThatChanged reads statements of a taste that changed over time
// through the whole extraction: what holds now is filed as a taste the
// ranking reads, what held once and no longer does as history (EVENT), and
// a time before the subject ("These days I ...") loses nothing.
func TestTasteThatChanged(t *testing.T) {
	m := newTestModel(t)
	ctx := context.Background()
	type pair struct{ attribute, value string }
	tests := []struct {
		msg  string
		want []pair
	}{
		{"Now I love horror.", []pair{{"GENRE", "loves horror"}}},
		{"These days I love horror.", []pair{{"GENRE", "loves horror"}}},
		{"Lately I've been loving westerns.", []pair{{"GENRE", "has been loving westerns"}}},
		{"I have started to love westerns.", []pair{{"GENRE", "has started to love westerns"}}},
		{"I've gotten into documentaries recently.", []pair{{"GENRE", "has gotten into documentaries recently"}}},
		{"I used to hate horror but now I love it.", []pair{{"EVENT", "used to hate horror"}, {"GENRE", "loves horror"}}},
		{"I used to hate horror, now I love it.", []pair{{"EVENT", "used to hate horror"}, {"GENRE", "loves horror"}}},
		{"I don't like comedy anymore.", []pair{{"DISLIKES", "doesn't like comedy anymore"}}},
		// Being used to something is a habit that holds now.
		{"I'm used to subtitles.", []pair{{"WATCHING_HABIT", "is used to subtitles"}}},
		{"I started watching a new show last week.", []pair{{"EVENT", "started watching a new show last week"}}},
	}
	for _, tt := range tests {
		facts, err := m.ExtractFacts(ctx, memento.ExtractInput{Message: tt.msg})
		if err != nil {
			t.Fatal(err)
		}
		got := []pair{}
		if len(facts) > 0 {
			// The default schema: the movie attributes and the generic
			// ones (EVENT among them).
			attributed, err := m.AssignAttributes(ctx, facts, append(slices.Clone(movieSchema), genericSchema...))
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range attributed {
				if a.Attribute != "" {
					got = append(got, pair{a.Attribute, a.Fact.Text})
				}
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%q: got %v, want %v", tt.msg, got, tt.want)
		}
	}
}
