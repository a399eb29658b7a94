package offline

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/memento-ai/memento"
)

// followUp is one turn after an answer that showed lastShown.
type followUp struct {
	msg  string
	ctx  memento.ActiveContext
	want memento.Understanding
}

// lastShown is what the previous answer of every follow-up showed.
var lastShown = []memento.Title{
	{ID: "t1", Title: "Heat", Year: 1995, Type: memento.TypeMovie, Genres: []string{"Crime", "Thriller"}},
	{ID: "t2", Title: "Alien", Year: 1979, Type: memento.TypeMovie, Genres: []string{"Horror", "Science Fiction"}},
	{ID: "t3", Title: "The Dark Knight", Year: 2008, Type: memento.TypeMovie, Genres: []string{"Superhero", "Action"}},
}

// shownContext is the context in force when lastShown was shown: 90s
// crime movies.
func shownContext() memento.ActiveContext {
	c := memento.NewActiveContext()
	c.Genres = []string{"Crime"}
	c.TitleType = memento.TypeMovie
	c.MinYear, c.MaxYear = intPtr(1990), intPtr(1999)
	return c
}

// actorContext is the context of a request with an actor.
func actorContext() memento.ActiveContext {
	c := memento.NewActiveContext()
	c.People = []string{"Tom Hanks"}
	c.TitleType = memento.TypeMovie
	return c
}

func runFollowUps(t *testing.T, m *Model, tests []followUp) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			in := memento.UnderstandInput{Message: tt.msg, Context: tt.ctx.Clone(), LastShown: lastShown}
			got, err := m.UnderstandRequest(context.Background(), in)
			if err != nil {
				t.Fatalf("UnderstandRequest: %v", err)
			}
			if diff := cmp.Diff(tt.want, *got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("UnderstandRequest(%q) mismatch (-want +got):\n%s", tt.msg, diff)
			}
		})
	}
}

func about(r ...memento.TitleRef) memento.Understanding {
	return memento.Understanding{Recognised: true, About: r}
}

func TestUnderstandTitleReferences(t *testing.T) {
	m := newTestModel(t)
	shown := shownContext()
	tests := []followUp{
		// More like a title shown: the count in force stays.
		{"the second one sounds good, more like that", shown, u(likeT(pos(2)))},
		{"more like the first one", shown, u(likeT(pos(1)))},
		{"more like the last one but older", shown, u(likeT(pos(-1)), shift("older"))},
		{"something similar to number 3", shown, u(likeT(pos(3)))},
		{"more like #2 please", shown, u(likeT(pos(2)))},
		{"more like Heat", shown, u(likeT(pos(1)))},
		// A title judged has been seen: it is an anchor, not a suggestion.
		{"Alien was great, more like that", shown, u(likeT(pos(2)), seenT(pos(2)))},
		{"more like the dark knight", shown, u(likeT(pos(3)))},
		// "More like those" with nothing named means every title shown.
		{"more like those", shown, u(likeT(pos(1), pos(2), pos(3)))},
		{"more like that", shown, u(likeT(pos(1), pos(2), pos(3)))},
		{"something similar", shown, u(likeT(pos(1), pos(2), pos(3)))},

		// About a title: no search.
		{"tell me more about the first one", shown, about(pos(1))},
		{"tell me about Alien", shown, about(pos(2))},
		{"Tell me more about Inception", shown, about(name("Inception"))},
		{"what's the second one about?", shown, func() memento.Understanding {
			x := about(pos(2))
			x.Question = "what's the second one about?"
			return x
		}()},
		{"is the last one scary?", shown, func() memento.Understanding {
			x := about(pos(-1))
			x.Question = "is the last one scary?"
			return x
		}()},

		// Seen: exactly these are excluded, the constraints kept.
		{"I've already seen Heat", shown, u(seenT(pos(1)))},
		{"seen Heat", shown, u(seenT(pos(1)))},
		{"watched the second one", shown, u(seenT(pos(2)))},
		{"I've seen Heat and Alien", shown, u(seenT(pos(1), pos(2)))},
		{"I already saw Casablanca", shown, u(seenT(name("Casablanca")))},
		{"I've already seen The Godfather, something else like it?", shown, u(seenT(name("The Godfather")), likeT(name("The Godfather")), reject)},
		{"I haven't seen Heat", shown, noSearch("")},

		// Reject named titles.
		{"not Heat", shown, u(rejectT(pos(1)))},
		{"not the second one", shown, u(rejectT(pos(2)))},
		{"anything but Heat", shown, u(rejectT(pos(1)))},
		{"not the first or the third one", shown, u(rejectT(pos(1), pos(3)))},
		{"I didn't like Alien, any other crime movies?", shown, u(rejectT(pos(2)), reject, genres("Crime"), movie)},
		{"not Casablanca", shown, u(rejectT(name("Casablanca")))},

		{"Not a fan of Alien", shown, u(rejectT(pos(2)))},
		{"I didn't like Heat, Alien was ok though", shown, u(rejectT(pos(1)), seenT(pos(2)))},
		{"I've seen Heat, Alien and The Dark Knight", shown, u(seenT(pos(1), pos(2), pos(3)))},
		{"the first two look good, more like those", shown, u(likeT(pos(1), pos(2)))},
		{"Just like Heat", shown, u(likeT(pos(1)))},
		{"No Country for Old Men is great", shown, noSearch("")},
		{"Not now", shown, unknown},

		// Everything shown, as before.
		{"I've seen them all", shown, u(reject)},
		{"seen those", shown, u(reject)},
		{"not those", shown, u(reject)},

		// Positions that are not references.
		{"movies from the last 10 years", memento.NewActiveContext(), u(movie, minY(2015))},
		{"the first time I saw it I loved it", shown, u(reject)},
		{"not Tom Hanks", shown, u()},
	}
	runFollowUps(t, m, tests)
}

func TestUnderstandLike(t *testing.T) {
	m := newTestModel(t)
	empty := memento.NewActiveContext()
	shown := shownContext()
	tests := []followUp{
		{"something like Inception", empty, u(replace, likeT(name("Inception")))},
		{"movies like The Matrix", empty, u(replace, movie, likeT(name("The Matrix")))},
		{"similar to Heat", empty, u(likeT(pos(1)))},
		{"in the vein of Alien", empty, u(likeT(pos(2)))},
		{"in the vein of Jaws", shown, u(replace, likeT(name("Jaws")))},
		{"like The Matrix but funnier", shown, u(replace, likeT(name("The Matrix")), genres("Comedy"))},
		{"like The Matrix but scarier", shown, u(replace, likeT(name("The Matrix")), genres("Horror"))},
		{"like The Matrix but older", shown, u(replace, likeT(name("The Matrix")), shift("older"))},
		{"like The Matrix but from the 90s", shown, u(replace, likeT(name("The Matrix")), years(1990, 1999))},
		{"like The Matrix but animated", shown, u(replace, likeT(name("The Matrix")), genres("Animated"))},
		{"something like inception but funnier", shown, u(replace, likeT(name("inception")), genres("Comedy"))},
		{"Something like The Dark Knight", empty, u(likeT(pos(3)))},
		{"anything like Out of Sight (1998)?", empty, u(replace, likeT(name("Out of Sight (1998)")))},

		// A liking is a preference, not an anchor.
		{"I like comedies", empty, u(genres("Comedy"))},
		{"I like Tom Hanks", empty, u(people("Tom Hanks"))},
		{"I'd like something funny", empty, u(genres("Comedy"))},
		{"I really like horror movies", empty, u(genres("Horror"), movie)},
		{"something like 10 movies", empty, u(movie, count(10))},
		{"something like a comedy", empty, u(genres("Comedy"))},
	}
	runFollowUps(t, m, tests)
}

// TestUnderstandLikeWithTitles checks that a title lookup decides what a
// name after "like" is.
func TestUnderstandLikeWithTitles(t *testing.T) {
	catalog := map[string]memento.Title{
		"inception":  {ID: "c1", Title: "Inception", Year: 2010},
		"the matrix": {ID: "c2", Title: "The Matrix", Year: 1999},
		"heat":       {ID: "t1", Title: "Heat", Year: 1995},
	}
	m := New(Options{
		People: fakePeople{"tom hanks": "Tom Hanks"},
		Now:    func() time.Time { return testNow },
		Titles: func(text string) (*memento.Title, bool) {
			tt, ok := catalog[strings.ToLower(text)]
			return &tt, ok
		},
	})
	empty := memento.NewActiveContext()
	tests := []followUp{
		{"something like the matrix but funnier", empty, u(replace, likeT(name("the matrix")), genres("Comedy"))},
		{"Something like Inception from the 90s", empty, u(replace, likeT(name("Inception")), years(1990, 1999))},
		{"something like Whatever Else", empty, unknown},
		{"movies like Tom Hanks", empty, u(movie, people("Tom Hanks"))},
		{"I hate Mondays", empty, unknown},
	}
	runFollowUps(t, m, tests)
}

func TestUnderstandTopicChange(t *testing.T) {
	m := newTestModel(t)
	actor := actorContext()
	shown := shownContext()
	tests := []followUp{
		{"actually I'm in the mood for a scary movie from the 80s", actor, u(replace, genres("Horror"), movie, years(1980, 1989))},
		{"westerns instead", shown, u(replace, genres("Western"))},
		{"start over", shown, u(replace)},
		{"forget that, show me comedies", actor, u(replace, genres("Comedy"))},
		{"new search: documentaries about space", shown, u(replace, genres("Documentary"), free("space"))},
		{"and horror from the 80s", shown, u(replace, genres("Horror"), years(1980, 1989))},
		// Refinements keep the rest.
		{"Movie only.", shown, u(movie)},
		{"make it older", shown, u(shift("older"))},
		{"from the 90s instead", shown, u(years(1990, 1999))},
		{"actually make it newer", shown, u(shift("newer"))},
		{"also dramas from the 80s", shown, u(genres("Crime", "Drama"), years(1980, 1989))},
	}
	runFollowUps(t, m, tests)
}

func TestUnderstandCounts(t *testing.T) {
	m := newTestModel(t)
	empty := memento.NewActiveContext()
	shown := shownContext()
	tests := []followUp{
		{"ten", shown, u(count(10))},
		{"ten please", shown, u(count(10))},
		{"ok, ten please", shown, u(count(10))},
		{"10 of them", shown, u(count(10))},
		{"give me 5 of those", shown, u(count(5))},
		{"a dozen comedies", empty, u(genres("Comedy"), count(12))},
		{"just one", shown, u(count(1))},
		{"just one please", shown, u(count(1))},
		{"a couple", shown, u(count(2))},
		{"a few westerns", empty, u(genres("Western"), count(3))},
		{"twenty five", shown, u(count(25))},
		{"twenty-five horror movies", empty, u(genres("Horror"), movie, count(25))},
		{"show me 50 movies", empty, u(movie, count(50))},
	}
	runFollowUps(t, m, tests)
}

func TestUnderstandTypos(t *testing.T) {
	m := newTestModel(t)
	empty := memento.NewActiveContext()
	tests := []followUp{
		{"horor movies", empty, u(genres("Horror"), movie, corr("horor", "Horror"))},
		{"a comdy", empty, u(genres("Comedy"), corr("comdy", "Comedy"))},
		{"some thirller from the 90s", empty, u(genres("Thriller"), years(1990, 1999), corr("thirller", "Thriller"))},
		{"documentry about space", empty, u(genres("Documentary"), free("space"), corr("documentry", "Documentary"))},
		{"westen films", empty, u(genres("Western"), movie, corr("westen", "Western"))},
		{"romace please", empty, u(genres("Romance"), corr("romace", "Romance"))},
	}
	runFollowUps(t, m, tests)
}

func TestUnderstandSoft(t *testing.T) {
	m := newTestModel(t)
	empty := memento.NewActiveContext()
	shown := shownContext()
	const (
		rt = memento.SoftRuntime
		pf = memento.SoftPlatform
		md = memento.SoftMood
	)
	tests := []followUp{
		{"not too long", shown, u(softC(rt, "<=120", "not too long"))},
		{"under 2 hours", shown, u(softC(rt, "<=120", "under 2 hours"))},
		{"less than 90 minutes please", shown, u(softC(rt, "<=90", "less than 90 minutes"))},
		{"something short", shown, u(softC(rt, "<=100", "short"))},
		{"something long", shown, u(softC(rt, ">=150", "long"))},
		{"short films", empty, u(genres("Short"), movie)},
		{"a short comedy", empty, u(genres("Comedy"), softC(rt, "<=100", "short"))},
		{"a long drama", empty, u(genres("Drama"), softC(rt, ">=150", "long"))},
		{"on Netflix", shown, u(softC(pf, "Netflix", "on Netflix"))},
		{"comedies on Hulu", empty, u(genres("Comedy"), softC(pf, "Hulu", "on Hulu"))},
		{"something on Disney+", shown, u(softC(pf, "Disney+", "on Disney"))},
		{"anything on prime video", shown, u(softC(pf, "Prime Video", "on prime video"))},
		{"HBO", shown, u(softC(pf, "HBO", "HBO"))},
		{"not on Netflix", shown, unknown},
		{"something light", shown, u(softC(md, "light", "light"))},
		{"a feel-good movie", empty, u(movie, softC(md, "feel-good", "feel-good"))},
		{"something dark", shown, u(softC(md, "dark", "dark"))},
		{"a cozy movie for tonight", empty, u(movie, softC(md, "cozy", "cozy"))},
		{"something uplifting and not too long", shown, u(softC(md, "uplifting", "uplifting"), softC(rt, "<=120", "not too long"))},
		{"The Dark Knight", empty, unknown},
		{"how long is it?", shown, noSearch("how long is it?")},
	}
	runFollowUps(t, m, tests)
}

// listedPeople is a PersonLookup that can list its names, as the catalog
// can, so misspelt names are corrected.
type listedPeople struct{ fakePeople }

func (l listedPeople) People() []string {
	out := make([]string, 0, len(l.fakePeople))
	for _, v := range l.fakePeople {
		out = append(out, v)
	}
	return out
}

func TestUnderstandMisspeltPeople(t *testing.T) {
	m := New(Options{
		People: listedPeople{fakePeople{"tom hanks": "Tom Hanks", "meryl streep": "Meryl Streep", "keanu reeves": "Keanu Reeves",
			"tom hardy": "Tom Hardy", "tom hawks": "Tom Hawks"}},
		Now: func() time.Time { return testNow },
	})
	empty := memento.NewActiveContext()
	tests := []followUp{
		{"movies with Tom Hnaks", empty, u(movie, people("Tom Hanks"), corr("Tom Hnaks", "Tom Hanks"))},
		{"something with meryl strep", empty, u(people("Meryl Streep"), corr("meryl strep", "Meryl Streep"))},
		{"Keanu Reevs action movies", empty, u(genres("Action"), movie, people("Keanu Reeves"), corr("Keanu Reevs", "Keanu Reeves"))},
		{"Tom Hanks movies", empty, u(movie, people("Tom Hanks"))},
		{"not Tom Hnaks", actorContext(), u(people(), corr("Tom Hnaks", "Tom Hanks"))},
		// "Tom Hauks" is one edit from both Tom Hanks and Tom Hawks: only
		// an unambiguous name is taken.
		{"movies with Tom Hauks", empty, u(movie)},
		{"good movies tonight", empty, u(movie)},
	}
	runFollowUps(t, m, tests)
}

// FuzzUnderstandFollowUps fuzzes follow-ups after an answer, with a title
// lookup, and checks what holds for every reference, correction and soft
// constraint as well as for every Understanding.
func FuzzUnderstandFollowUps(f *testing.F) {
	for _, s := range append(fuzzSeeds,
		"the second one sounds good, more like that", "tell me more about the first one", "I've seen Heat, Alien and",
		"not the first or the", "like The Matrix but funnier", "#", "#99 number 0", "the first two three", "twenty-five of them",
		"horor comdy thirller", "not too long on Disney+ something light", "start over", "seen , , and or",
	) {
		f.Add(s)
	}
	m := New(Options{
		People: listedPeople{fakePeople{"tom hanks": "Tom Hanks", "meryl streep": "Meryl Streep"}},
		Now:    func() time.Time { return testNow },
		Titles: func(text string) (*memento.Title, bool) {
			return &memento.Title{Title: text}, len(text) > 3 && strings.ToUpper(text[:1]) == text[:1]
		},
	})
	f.Fuzz(func(t *testing.T, msg string) {
		for _, c := range []memento.ActiveContext{memento.NewActiveContext(), shownContext()} {
			got, err := m.UnderstandRequest(context.Background(), memento.UnderstandInput{Message: msg, Context: c, LastShown: lastShown})
			if err != nil {
				t.Fatalf("UnderstandRequest(%q): %v", msg, err)
			}
			checkUnderstanding(t, msg, got)
			for _, refs := range [][]memento.TitleRef{got.Like, got.About, got.Seen, got.RejectTitles} {
				for _, r := range refs {
					if r.Position == 0 && r.Name == "" || r.Position < -memento.MaxCount || r.Position > memento.MaxCount {
						t.Errorf("%q: bad reference %+v", msg, r)
					}
					if r.Name != "" && !strings.Contains(msg, r.Name) {
						t.Errorf("%q: name %q is not as written", msg, r.Name)
					}
				}
			}
			if len(got.About) > 0 && got.Search {
				t.Errorf("%q: a question about a title searches: %+v", msg, got)
			}
			for _, s := range got.Soft {
				if s.Value == "" || s.Said == "" || !strings.Contains(msg, s.Said) {
					t.Errorf("%q: bad soft constraint %+v", msg, s)
				}
				switch s.Kind {
				case memento.SoftRuntime, memento.SoftPlatform, memento.SoftMood:
				default:
					t.Errorf("%q: soft kind %q", msg, s.Kind)
				}
			}
			for _, c := range got.Corrections {
				if c.From == "" || c.To == "" || !strings.Contains(msg, c.From) {
					t.Errorf("%q: bad correction %+v", msg, c)
				}
			}
		}
	})
}
