package offline

import (
	"context"
	"testing"

	"github.com/memento-ai/memento"
)

// TestUnderstandSeenWithoutName checks turns that say the titles just
// shown were seen, owned or loved without naming them: everything shown
// is turned down and the request searched again with its constraints.
func TestUnderstandSeenWithoutName(t *testing.T) {
	m := newTestModel(t)
	shown := shownContext()
	tests := []followUp{
		{"we did see that one", shown, u(reject)},
		{"I own both of them on blu-ray", shown, u(reject)},
		{"I have them on dvd already", shown, u(reject)},
		{"haha yes I did. who hasn't?", shown, u(reject)},
		{"Yep, we have. Great picks though", shown, u(reject)},
		{"saw all three already", shown, u(reject)},
		{"I've watched every one of them", shown, u(reject)},
		{"I really loved that one", shown, u(reject)},
		{"That movie was great", shown, u(reject, movie)},
		{"that one is pretty good", shown, u(reject)},
		{"it was hilarious", shown, u(reject)},
		{"my all time favorite!", shown, u(reject)},
		{"Honestly it was so-so", shown, u(reject)},
		// After a title named, "it" is that title.
		{"I've seen Casablanca, it was great", shown, u(seenT(name("Casablanca")))},
		{"one of my favourites", shown, u(reject)},

		// Not seen, or no title meant.
		{"I haven't watched that one", shown, noSearch("")},
		{"I didn't see that one, sounds good", shown, unknown},
		{"never saw it, I'll try it", shown, unknown},
		{"I'd love that, thanks", shown, noSearch("")},
		{"That is great, thanks", shown, noSearch("")},
		{"I like that one", shown, noSearch("")},
		{"I have a question", shown, unknown},
		{"I don't have it", shown, unknown},
	}
	runFollowUps(t, m, tests)

	// With nothing shown there is nothing to have seen.
	for _, msg := range []string{"I have both on dvd", "lol, I have", "I did see that one"} {
		got, err := m.UnderstandRequest(context.Background(), memento.UnderstandInput{Message: msg, Context: shown.Clone()})
		if err != nil {
			t.Fatal(err)
		}
		if got.Reject {
			t.Errorf("UnderstandRequest(%q) with nothing shown: Reject = true, want false", msg)
		}
	}
}

// TestUnderstandLovedTitles checks titles the user loved, judged or named
// among favourites: they are seen, and anchors too when the turn asks for
// more of the kind.
func TestUnderstandLovedTitles(t *testing.T) {
	m := newTestModel(t)
	empty := memento.NewActiveContext()
	shown := shownContext()
	both := func(r ...memento.TitleRef) func(*memento.Understanding) {
		return func(x *memento.Understanding) { x.Seen, x.Like = r, r }
	}
	tests := []followUp{
		{"I adore Casablanca (1942)", empty, u(seenT(name("Casablanca (1942)")))},
		{"we absolutely loved Grease", empty, u(seenT(name("Grease")))},
		{"Jaws was fantastic", empty, u(seenT(name("Jaws")))},
		{"I think Rocky (1976) was a great movie", empty, u(seenT(name("Rocky (1976)")))},
		{"I'm a big fan of Jaws", empty, u(seenT(name("Jaws")))},
		{"Alien was ok, I enjoyed Heat more", shown, u(seenT(pos(2), pos(1)))},
		{"My favourite films are Jaws (1975), Rocky (1976) and Grease (1978)", empty,
			u(movie, both(name("Jaws (1975)"), name("Rocky (1976)"), name("Grease (1978)")))},
		{"I prefer Grease (1978) or even Hairspray (1988)", empty, u(both(name("Grease (1978)"), name("Hairspray (1988)")))},
		{"I like stuff like Heat and Alien", empty, u(both(pos(1), pos(2)))},
		{"Rocky (1976) is one of my favorites", empty, u(both(name("Rocky (1976)")))},
		{"Some of my favorite comedies are Airplane (1980) and Up (2009)", empty,
			u(genres("Comedy"), both(name("Airplane (1980)"), name("Up (2009)")))},
		{"more along the lines of Jaws or maybe Rocky", empty, u(replace, likeT(name("Jaws"), name("Rocky")))},

		// Turned down by name.
		{"I could never get into Jaws", empty, u(rejectT(name("Jaws")))},
		{"I never got into the Rocky movies", empty, u(movie, rejectT(name("Rocky")))},
		{"funny, but not like Airplane", empty, u(genres("Comedy"), rejectT(name("Airplane")))},

		// Likings of kinds, people, topics and eras stay what they were.
		{"I like comedies", empty, u(genres("Comedy"))},
		{"I love Tom Hanks", empty, u(people("Tom Hanks"))},
		{"I love Christmas movies", empty, u(movie, free("christmas"))},
		{"I do love 90s movies", empty, u(movie, years(1990, 1999))},
		{"No Country for Old Men is great", shown, noSearch("")},
	}
	runFollowUps(t, m, tests)
}

// TestUnderstandTones checks how a film should feel: tones become soft
// moods, and a tone turned down or found excessive becomes "not <tone>".
func TestUnderstandTones(t *testing.T) {
	m := newTestModel(t)
	empty := memento.NewActiveContext()
	shown := shownContext()
	const md = memento.SoftMood
	tests := []followUp{
		{"something quirky", shown, u(softC(md, "quirky", "quirky"))},
		{"a whimsical fantasy", empty, u(genres("Fantasy"), softC(md, "whimsical", "whimsical"))},
		{"a fun movie for the weekend", empty, u(movie, softC(md, "fun", "fun"))},
		{"something really intense", shown, u(softC(md, "intense", "intense"))},
		{"a mind-bending thriller", empty, u(genres("Thriller"), softC(md, "thought-provoking", "mind-bending"))},
		{"too depressing for me", shown, u(softC(md, "not depressing", "too depressing"))},
		{"It looked kind of cheesy", shown, u(softC(md, "not cheesy", "kind of cheesy"))},
		{"nothing too gory please", shown, u(softC(md, "not gory", "nothing too gory"))},
		{"that one was a bit too slow for my taste", shown, u(softC(md, "not slow", "a bit too slow"))},
		{"it gets more violent than I can stand", shown, u(softC(md, "not violent", "violent"))},
		{"Sounds convoluted.", shown, u(softC(md, "not confusing", "convoluted"))},
		{"a little weird for me", shown, u(softC(md, "not weird", "a little weird"))},
		{"not too scary please", shown, u(softC(md, "not scary", "not too scary"))},

		// Misspelt tones, by edit distance.
		{"something quirkey", shown, u(softC(md, "quirky", "quirkey"), corr("quirkey", "quirky"))},
		{"too violant for me", shown, u(softC(md, "not violent", "too violant"), corr("violant", "violent"))},

		// Holidays as a subject: a mood when the vocabulary has no genre.
		{"I'm not a christmas person", shown, u(softC(md, "not christmas", "not a christmas"))},
		{"nothing holiday themed", shown, u(softC(md, "not holiday", "nothing holiday"))},
		{"a holiday movie", empty, u(movie, softC(md, "holiday", "holiday"))},

		// No wish: comments, reactions and other senses.
		{"that sounds fun, thanks", shown, noSearch("")},
		{"Sweet, thanks!", shown, noSearch("")},
		{"I'm on holiday this week", empty, unknown},
		{"I'm not happy with these", shown, unknown},
		{"The Dark Knight was too dark for me", empty, u(softC(md, "not dark", "too dark"))},
	}
	runFollowUps(t, m, tests)
}
