package offline

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/memento-ai/memento"
)

// u builds the Understanding of a turn that searches.
func u(opts ...func(*memento.Understanding)) memento.Understanding {
	x := memento.Understanding{Search: true, Recognised: true}
	for _, o := range opts {
		o(&x)
	}
	return x
}

func genres(g ...string) func(*memento.Understanding) {
	if g == nil {
		g = []string{} // genres() clears them
	}
	return func(x *memento.Understanding) { x.Genres = g }
}
func excl(g ...string) func(*memento.Understanding) {
	return func(x *memento.Understanding) { x.ExcludeGenres = g }
}
func people(p ...string) func(*memento.Understanding) {
	return func(x *memento.Understanding) { x.People = p }
}
func minY(y int) func(*memento.Understanding) {
	return func(x *memento.Understanding) { x.MinYear = &y }
}
func maxY(y int) func(*memento.Understanding) {
	return func(x *memento.Understanding) { x.MaxYear = &y }
}
func years(lo, hi int) func(*memento.Understanding) {
	return func(x *memento.Understanding) { x.MinYear, x.MaxYear = &lo, &hi }
}
func shift(s string) func(*memento.Understanding) {
	return func(x *memento.Understanding) { x.YearShift = s }
}
func free(s string) func(*memento.Understanding) {
	return func(x *memento.Understanding) { x.FreeText = s }
}
func count(n int) func(*memento.Understanding) { return func(x *memento.Understanding) { x.Count = n } }

// pos and name build title references.
func pos(p int) memento.TitleRef     { return memento.TitleRef{Position: p} }
func name(n string) memento.TitleRef { return memento.TitleRef{Name: n} }

func likeT(r ...memento.TitleRef) func(*memento.Understanding) {
	return func(x *memento.Understanding) { x.Like = r }
}
func seenT(r ...memento.TitleRef) func(*memento.Understanding) {
	return func(x *memento.Understanding) { x.Seen = r }
}
func rejectT(r ...memento.TitleRef) func(*memento.Understanding) {
	return func(x *memento.Understanding) { x.RejectTitles = r }
}
func softC(kind, value, said string) func(*memento.Understanding) {
	return func(x *memento.Understanding) {
		x.Soft = append(x.Soft, memento.SoftConstraint{Kind: kind, Value: value, Said: said})
	}
}
func corr(from, to string) func(*memento.Understanding) {
	return func(x *memento.Understanding) {
		x.Corrections = append(x.Corrections, memento.Correction{From: from, To: to})
	}
}
func adult(v bool) func(*memento.Understanding) {
	return func(x *memento.Understanding) { x.IsAdult = &v }
}

var (
	movie   = func(x *memento.Understanding) { x.TitleType = memento.TypeMovie }
	series  = func(x *memento.Understanding) { x.TitleType = memento.TypeTVSeries }
	replace = func(x *memento.Understanding) { x.Replace = true }
	reject  = func(x *memento.Understanding) { x.Reject = true }
	// anyGenre clears the genres: a non-nil, empty list.
	anyGenre = func(x *memento.Understanding) { x.Genres = []string{} }
)

// noSearch is a turn that was understood and needs no search.
func noSearch(question string) memento.Understanding {
	return memento.Understanding{Recognised: true, Question: question}
}

// unknown is a turn nothing was understood in.
var unknown = memento.Understanding{}

func TestUnderstandRequest(t *testing.T) {
	m := newTestModel(t)
	empty := memento.NewActiveContext()
	// shown is the context of a thread that has just shown comedy movies
	// from 2010 on.
	shown := memento.NewActiveContext()
	shown.Genres = []string{"Comedy"}
	shown.TitleType = memento.TypeMovie
	shown.MinYear = intPtr(2010)

	tests := []struct {
		msg  string
		ctx  memento.ActiveContext
		want memento.Understanding
	}{
		// The example of the design document.
		{"Discover exactly 3 comedy movies from 2010 onward.", empty, u(genres("Comedy"), movie, minY(2010), count(3))},

		// Genres, their synonyms and plurals.
		{"sci-fi", empty, u(genres("Science Fiction"))},
		{"scifi please", empty, u(genres("Science Fiction"))},
		{"science fiction", empty, u(genres("Science Fiction"))},
		{"some sf", empty, u(genres("Science Fiction"))},
		{"something scary", empty, u(genres("Horror"))},
		{"horror films", empty, u(genres("Horror"), movie)},
		{"funny stuff", empty, u(genres("Comedy"))},
		{"comedies", empty, u(genres("Comedy"))},
		{"something comedic", empty, u(genres("Comedy"))},
		{"a cartoon", empty, u(genres("Animated"))},
		{"animated movies", empty, u(genres("Animated"), movie)},
		{"animation for tonight", empty, u(genres("Animated"))},
		{"a rom-com", empty, u(genres("Romance", "Comedy"))},
		{"romcoms", empty, u(genres("Romance", "Comedy"))},
		{"thrillers", empty, u(genres("Thriller"))},
		{"an action flick", empty, u(genres("Action"), movie)},
		{"documentaries", empty, u(genres("Documentary"))},
		{"docs about space travel", empty, u(genres("Documentary"), free("space travel"))},
		{"war films", empty, u(genres("War"), movie)},
		{"westerns", empty, u(genres("Western"))},
		{"a musical", empty, u(genres("Musical"))},
		{"superhero movies", empty, u(genres("Superhero"), movie)},
		{"a heist movie", empty, u(genres("Crime"), movie)},
		{"a whodunit", empty, u(genres("Mystery"))},
		{"mysteries", empty, u(genres("Mystery"))},
		{"fantasy", empty, u(genres("Fantasy"))},
		{"dramas", empty, u(genres("Drama"))},
		{"something for the kids", empty, u(genres("Family"))},
		{"a family movie", empty, u(genres("Family"), movie)},
		{"a biopic", empty, u(genres("Biography"))},
		{"something romantic", empty, u(genres("Romance"))},
		{"spy movies", empty, u(genres("Spy"), movie)},
		{"sports films", empty, u(genres("Sports"), movie)},
		{"teen comedies", empty, u(genres("Teen", "Comedy"))},
		{"kung fu", empty, u(genres("Martial Arts"))},
		{"martial arts movies", empty, u(genres("Martial Arts"), movie)},
		{"film noir", empty, u(genres("Noir"), movie)},
		{"disaster movies", empty, u(genres("Disaster"), movie)},
		{"slashers", empty, u(genres("Slasher"))},
		{"spooky cartoons", empty, u(genres("Horror", "Animated"))},
		{"superheroes", empty, u(genres("Superhero"))},

		// Years and eras.
		{"comedies from 2010 onward", empty, u(genres("Comedy"), minY(2010))},
		{"thrillers since 2015", empty, u(genres("Thriller"), minY(2015))},
		{"dramas after 2015", empty, u(genres("Drama"), minY(2016))},
		{"westerns 2015 or later", empty, u(genres("Western"), minY(2015))},
		{"horror before 1980", empty, u(genres("Horror"), maxY(1979))},
		{"comedies in the 90s", empty, u(genres("Comedy"), years(1990, 1999))},
		{"90s action", empty, u(genres("Action"), years(1990, 1999))},
		{"1990s dramas", empty, u(genres("Drama"), years(1990, 1999))},
		{"nineties thrillers", empty, u(genres("Thriller"), years(1990, 1999))},
		{"80s movies", empty, u(movie, years(1980, 1989))},
		{"a movie from 1994", empty, u(movie, years(1994, 1994))},
		{"in 1994", empty, u(years(1994, 1994))},
		{"between 1990 and 2000", empty, u(years(1990, 2000))},
		{"from 1990 to 2000", empty, u(years(1990, 2000))},
		{"recent comedies", empty, u(genres("Comedy"), minY(2020))},
		{"new releases", empty, u(minY(2020))},
		{"the latest thrillers", empty, u(genres("Thriller"), minY(2020))},
		{"classic westerns", empty, u(genres("Western"), maxY(1979))},
		{"old movies", empty, u(movie, maxY(1979))},
		{"movies older than 2000", empty, u(movie, maxY(1999))},
		{"early 90s comedies", empty, u(genres("Comedy"), years(1990, 1993))},
		{"late 80s horror", empty, u(genres("Horror"), years(1986, 1989))},
		{"films from the last 10 years", empty, u(movie, minY(2015))},
		{"movies from 2010-2015", empty, u(movie, years(2010, 2015))},
		{"something from the 2000s", empty, u(years(2000, 2009))},
		{"1990–2000 crime", empty, u(genres("Crime"), years(1990, 2000))},
		{"westerns from the nineties", empty, u(genres("Western"), years(1990, 1999))},
		{"the 60's, 70's, and 80's Science-Fiction movies", empty, u(genres("Science Fiction"), movie, years(1960, 1989))},

		// Relative moves on the context in force.
		{"Make it older.", shown, u(shift("older"))},
		{"older ones", shown, u(shift("older"))},
		{"something older", shown, u(shift("older"))},
		{"something newer", shown, u(shift("newer"))},
		{"more recent", shown, u(shift("newer"))},
		{"newer ones please", shown, u(shift("newer"))},

		// Title types.
		{"Movie only.", shown, u(movie)},
		{"only movies", shown, u(movie)},
		{"films", empty, u(movie)},
		{"a series", empty, u(series)},
		{"TV shows", empty, u(series)},
		{"tv series", empty, u(series)},
		{"shows", empty, u(series)},
		{"a sitcom", empty, u(genres("Comedy"), series)},
		{"no series, please", shown, u(movie)},
		{"make it a series", shown, u(series)},
		{"comedies, movies or shows", empty, u(genres("Comedy"))},

		// Counts.
		{"exactly 3 comedies", empty, u(genres("Comedy"), count(3))},
		{"3 movies", empty, u(movie, count(3))},
		{"a couple of westerns", empty, u(genres("Western"), count(2))},
		{"a few thrillers", empty, u(genres("Thriller"), count(3))},
		{"five horror films", empty, u(genres("Horror"), movie, count(5))},
		{"top 10 action movies", empty, u(genres("Action"), movie, count(10))},
		{"just one movie", empty, u(movie, count(1))},
		{"give me two", shown, u(count(2))},
		{"a movie for my 5 and 10 year olds", empty, u(movie)},

		// People from the catalog.
		{"with Tom Hanks", empty, u(people("Tom Hanks"))},
		{"starring Meryl Streep", empty, u(people("Meryl Streep"))},
		{"Tom Hanks movies", empty, u(people("Tom Hanks"), movie)},
		{"something with tom hanks", empty, u(people("Tom Hanks"))},
		{"movies featuring Samuel L. Jackson", empty, u(people("Samuel L. Jackson"), movie)},
		{"Keanu Reeves action movies from the 90s", empty, u(genres("Action"), people("Keanu Reeves"), movie, years(1990, 1999))},
		{"comedies with Jim Carrey and Julia Roberts", empty, u(genres("Comedy"), people("Jim Carrey", "Julia Roberts"))},
		{"something by Robert De Niro", empty, u(people("Robert De Niro"))},
		{"not Tom Hanks", empty, noSearch("")},

		// Rejections and titles already seen carry every constraint.
		{"I didn't like them, please discover different ones", shown, u(reject)},
		{"Not those.", shown, u(reject)},
		{"different ones", shown, u(reject)},
		{"something else", shown, u(reject)},
		{"I've seen it", shown, u(reject)},
		{"seen them all", shown, u(reject)},
		{"already watched those", shown, u(reject)},
		{"none of these", shown, u(reject)},
		{"other options?", shown, u(reject)},
		{"Not those, something from the 90s", shown, u(reject, years(1990, 1999))},
		{"I've seen them, any other comedies?", shown, u(reject, genres("Comedy"))},
		{"No.", shown, u(reject)},
		{"nah, something else", shown, u(reject)},
		{"I've already seen that one", shown, u(reject)},
		{"I have seen it and enjoyed it", shown, u(reject)},
		{"I haven't seen it", shown, noSearch("")},
		{"never seen that one", shown, noSearch("")},

		// A new request replaces the context; a modifier follows up.
		{"Show me horror from the 80s", shown, u(replace, genres("Horror"), years(1980, 1989))},
		{"westerns", shown, u(replace, genres("Western"))},
		{"Tom Hanks movies", shown, u(replace, people("Tom Hanks"), movie)},
		{"documentaries about space", shown, u(replace, genres("Documentary"), free("space"))},
		{"what about thrillers?", shown, u(genres("Thriller"))},
		{"also with Tom Hanks", shown, u(people("Tom Hanks"))},
		{"only with Tom Hanks", shown, u(people("Tom Hanks"))},
		{"and from the 90s", shown, u(years(1990, 1999))},
		{"but only recent ones", shown, u(minY(2020))},
		{"from the 90s instead", shown, u(years(1990, 1999))},
		{"now dramas", shown, u(genres("Drama"))},
		{"also dramas", shown, u(genres("Comedy", "Drama"))},
		{"Discover exactly 3 comedy movies from 2010 onward.", shown, u(replace, genres("Comedy"), movie, minY(2010), count(3))},

		// Turns that need no search.
		{"how does this work?", shown, noSearch("how does this work?")},
		{"What can you do?", empty, noSearch("What can you do?")},
		{"help", empty, noSearch("help")},
		{"thanks", shown, noSearch("")},
		{"thank you so much!", shown, noSearch("")},
		{"hello", empty, noSearch("")},
		{"hi there", empty, noSearch("")},
		{"ok", shown, noSearch("")},
		{"sounds good", shown, noSearch("")},
		{"bye", shown, noSearch("")},
		{"I think I will check out The Conjuring (2013) thanks for the help", shown, noSearch("")},
		{"Is it a comedy?", shown, noSearch("Is it a comedy?")},
		{"who is in it?", shown, noSearch("who is in it?")},

		// What the rules do not understand sets nothing.
		{"the weather is nice", empty, unknown},
		{"asdf qwer", empty, unknown},
		{"my cat is asleep", empty, unknown},
		{"what is the capital of France?", empty, unknown},
		{"blue", empty, unknown},
		{"", empty, unknown},
		{"I'm not a Brad fan", empty, unknown},

		// Negated genres never become constraints.
		{"not only comedies", empty, noSearch("")},
		{"not only comedies", shown, u(genres())},
		{"I don't want horror", empty, u(excl("Horror"))},
		{"no horror please", empty, u(excl("Horror"))},
		{"anything but horror", empty, u(excl("Horror"))},
		{"I don't dislike horror", empty, noSearch("")},
		{"comedies, not horror", empty, u(genres("Comedy"), excl("Horror"))},
		{"I don't really like horror movies what about thrillers", empty, u(genres("Thriller"), excl("Horror"))},
		{"horror but not too scary", empty, u(genres("Horror"), softC(memento.SoftMood, "not scary", "not too scary"))},
		{"nothing animated", empty, u(excl("Animated"))},
		{"maybe something not animated", empty, u(excl("Animated"))},
		{"enough comedies, give me a drama", shown, u(replace, genres("Drama"), excl("Comedy"))},
		{"comedies are boring", shown, u(genres(), excl("Comedy"))},
		{"no Tom Hanks", empty, noSearch("")},

		// Negated and title years never become constraints either.
		{"nothing from the 80s", empty, unknown},
		{"not from the 90s", empty, unknown},
		{"not before 2000", empty, u(minY(2000))},
		{"no older than 2015", empty, u(minY(2015))},
		{"no later than 1999", empty, u(maxY(1999))},
		{"2001: A Space Odyssey", empty, unknown},
		{"Something like Blade Runner 2049", empty, u(replace, likeT(name("Blade Runner 2049")))},
		{"I was overweight in my early 20s", empty, unknown},
		{"cult classics", empty, unknown},
		{"I've seen the first two", shown, u(seenT(pos(1), pos(2)))},
		{"I didn't like the last one", shown, u(rejectT(pos(-1)))},
		{"3-4 movies please", empty, u(movie, count(4))},
		{"2 or 3 comedies", empty, u(genres("Comedy"), count(3))},

		// Requests in real users' words.
		{"Hi can you help me find a movie to watch", empty, u(movie)},
		{"recommend something", empty, u()},
		{"surprise me", empty, u()},
		{"Can you recommend some good new science fiction films?", empty, u(genres("Science Fiction"), movie, minY(2020))},
		{"I'm looking for a film of any genre", empty, u(anyGenre, movie)},
		{"Hello I'm looking for a good Christmas movie, any genre.", empty, u(anyGenre, movie, free("christmas"))},
		{"movies about space travel", empty, u(movie, free("space travel"))},
		{"a show about time travel", empty, u(series, free("time travel"))},
		{"I haven't seen that one, but I love Tom Hanks", shown, u(people("Tom Hanks"))},
		{"Hi! I'm looking for some funny comedy movies. Something similar to She's Out of My League (2010)", empty,
			u(replace, genres("Comedy"), movie, likeT(name("She's Out of My League (2010)")))},
		{"I do love 80s movies though", shown, u(movie, years(1980, 1989))},
		{"adult movies", empty, u(adult(true), movie)},
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			got, err := m.UnderstandRequest(context.Background(), memento.UnderstandInput{Message: tt.msg, Context: tt.ctx.Clone()})
			if err != nil {
				t.Fatalf("UnderstandRequest: %v", err)
			}
			if diff := cmp.Diff(tt.want, *got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("UnderstandRequest(%q) mismatch (-want +got):\n%s", tt.msg, diff)
			}
			// A list the turn sets to empty must be non-nil, or it would
			// not replace the context's.
			if tt.want.Genres != nil && got.Genres == nil {
				t.Errorf("UnderstandRequest(%q).Genres = nil, want a list", tt.msg)
			}
		})
	}
}

// TestUnderstandVocabulary checks that genres map only onto the catalog's
// vocabulary: a catalog without "Science Fiction" gets no such genre.
func TestUnderstandVocabulary(t *testing.T) {
	m := New(Options{Genres: []string{"Comedy", "Drama", "Sci-Fi"}, Now: func() time.Time { return testNow }})
	tests := []struct {
		msg  string
		want memento.Understanding
	}{
		{"sci-fi comedies", u(genres("Sci-Fi", "Comedy"))},
		{"a rom-com", u(genres("Comedy"))},
		{"science fiction", unknown},
		{"horror", unknown},
		{"dramas", u(genres("Drama"))},
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			got, err := m.UnderstandRequest(context.Background(), memento.UnderstandInput{Message: tt.msg, Context: memento.NewActiveContext()})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, *got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("UnderstandRequest(%q) mismatch (-want +got):\n%s", tt.msg, diff)
			}
		})
	}
}

// TestUnderstandNoPeopleLookup checks that a model without a catalog
// lookup recognises no people and sets none.
func TestUnderstandNoPeopleLookup(t *testing.T) {
	m := New(Options{})
	got, err := m.UnderstandRequest(context.Background(), memento.UnderstandInput{Message: "movies with Tom Hanks", Context: memento.NewActiveContext()})
	if err != nil {
		t.Fatal(err)
	}
	if got.People != nil {
		t.Errorf("People = %v, want none without a lookup", got.People)
	}
	if got.TitleType != memento.TypeMovie || !got.Search {
		t.Errorf("got %+v, want a movie search", got)
	}
}

func TestUnderstandCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := newTestModel(t).UnderstandRequest(ctx, memento.UnderstandInput{Message: "comedies"}); err == nil {
		t.Error("UnderstandRequest with a cancelled context: got no error")
	}
}

// TestModelConcurrentUse runs every task from several goroutines at once;
// with -race it checks that a Model and an Embedder share no mutable state.
func TestModelConcurrentUse(t *testing.T) {
	m := newTestModel(t)
	e := NewEmbedder(64)
	ctx := context.Background()
	done := make(chan struct{})
	for g := 0; g < 4; g++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for i, msg := range benchMessages {
				if _, err := m.UnderstandRequest(ctx, memento.UnderstandInput{Message: msg, Context: memento.NewActiveContext()}); err != nil {
					t.Error(err)
				}
				if _, err := m.ExtractFacts(ctx, memento.ExtractInput{Message: msg}); err != nil {
					t.Error(err)
				}
				if _, err := m.ExtractPreferences(ctx, msg); err != nil {
					t.Error(err)
				}
				if _, err := e.Embed(ctx, []string{msg, benchMessages[(i+1)%len(benchMessages)]}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	for g := 0; g < 4; g++ {
		<-done
	}
}
