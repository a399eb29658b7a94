package offline

import (
	"strings"
)

// genreLexicon maps what people say to the catalog genres they mean. Phrases
// are matched on whole words, longest first, so "romantic comedy" wins over
// "romantic". A genre missing from the catalog's vocabulary is dropped when
// the model is built; the vocabulary's own names (and their plurals) are
// always recognised, so an unknown catalog still works.
var genreLexicon = []struct {
	phrase string
	genres []string
}{
	{"science fiction", []string{"Science Fiction"}},
	{"science fictions", []string{"Science Fiction"}},
	{"sci fi", []string{"Science Fiction"}},
	{"scifi", []string{"Science Fiction"}},
	{"sf", []string{"Science Fiction"}},
	{"space opera", []string{"Science Fiction"}},
	{"cyberpunk", []string{"Science Fiction"}},

	{"horror", []string{"Horror"}},
	{"horrors", []string{"Horror"}},
	{"scary", []string{"Horror"}},
	{"scarier", []string{"Horror"}},
	{"scariest", []string{"Horror"}},
	{"spooky", []string{"Horror"}},
	{"creepy", []string{"Horror"}},
	{"frightening", []string{"Horror"}},
	{"terrifying", []string{"Horror"}},
	{"zombie", []string{"Horror"}},
	{"zombies", []string{"Horror"}},

	{"comedy", []string{"Comedy"}},
	{"comedies", []string{"Comedy"}},
	{"comedic", []string{"Comedy"}},
	{"funny", []string{"Comedy"}},
	{"funnier", []string{"Comedy"}},
	{"funniest", []string{"Comedy"}},
	{"hilarious", []string{"Comedy"}},
	{"humorous", []string{"Comedy"}},
	{"humour", []string{"Comedy"}},
	{"humor", []string{"Comedy"}},
	{"sitcom", []string{"Comedy"}},
	{"sitcoms", []string{"Comedy"}},
	{"dark comedy", []string{"Comedy"}},
	{"stand up", []string{"Comedy", "Performance"}},
	{"stand up comedy", []string{"Comedy", "Performance"}},

	{"rom com", []string{"Romance", "Comedy"}},
	{"rom coms", []string{"Romance", "Comedy"}},
	{"romcom", []string{"Romance", "Comedy"}},
	{"romcoms", []string{"Romance", "Comedy"}},
	{"romantic comedy", []string{"Romance", "Comedy"}},
	{"romantic comedies", []string{"Romance", "Comedy"}},
	{"romance", []string{"Romance"}},
	{"romances", []string{"Romance"}},
	{"romantic", []string{"Romance"}},
	{"love story", []string{"Romance"}},
	{"love stories", []string{"Romance"}},

	{"animated", []string{"Animated"}},
	{"animation", []string{"Animated"}},
	{"animations", []string{"Animated"}},
	{"cartoon", []string{"Animated"}},
	{"cartoons", []string{"Animated"}},
	{"anime", []string{"Animated"}},
	{"pixar", []string{"Animated"}},

	{"thriller", []string{"Thriller"}},
	{"thrillers", []string{"Thriller"}},
	{"thrilling", []string{"Thriller"}},
	{"psychological thriller", []string{"Thriller"}},
	{"psychological thrillers", []string{"Thriller"}},
	{"suspense", []string{"Suspense"}},
	{"suspenseful", []string{"Suspense"}},

	{"action", []string{"Action"}},
	{"action packed", []string{"Action"}},
	{"adventure", []string{"Adventure"}},
	{"adventures", []string{"Adventure"}},
	{"adventurous", []string{"Adventure"}},

	{"documentary", []string{"Documentary"}},
	{"documentaries", []string{"Documentary"}},
	{"docs", []string{"Documentary"}},
	{"docuseries", []string{"Documentary"}},
	{"docu series", []string{"Documentary"}},

	{"war", []string{"War"}},
	{"wartime", []string{"War"}},
	{"world war", []string{"War"}},
	{"western", []string{"Western"}},
	{"westerns", []string{"Western"}},
	{"cowboy", []string{"Western"}},
	{"cowboys", []string{"Western"}},
	{"musical", []string{"Musical"}},
	{"musicals", []string{"Musical"}},
	{"superhero", []string{"Superhero"}},
	{"superheroes", []string{"Superhero"}},
	{"super hero", []string{"Superhero"}},
	{"super heroes", []string{"Superhero"}},
	{"comic book", []string{"Superhero"}},
	{"marvel", []string{"Superhero"}},

	{"crime", []string{"Crime"}},
	{"crimes", []string{"Crime"}},
	{"heist", []string{"Crime"}},
	{"heists", []string{"Crime"}},
	{"gangster", []string{"Crime"}},
	{"gangsters", []string{"Crime"}},
	{"mafia", []string{"Crime"}},
	{"mob", []string{"Crime"}},
	{"mystery", []string{"Mystery"}},
	{"mysteries", []string{"Mystery"}},
	{"whodunit", []string{"Mystery"}},
	{"whodunits", []string{"Mystery"}},
	{"whodunnit", []string{"Mystery"}},
	{"whodunnits", []string{"Mystery"}},
	{"detective", []string{"Mystery"}},
	{"murder mystery", []string{"Mystery"}},
	{"murder mysteries", []string{"Mystery"}},

	{"fantasy", []string{"Fantasy"}},
	{"fantasies", []string{"Fantasy"}},
	{"drama", []string{"Drama"}},
	{"dramas", []string{"Drama"}},
	{"dramatic", []string{"Drama"}},
	{"melodrama", []string{"Drama"}},
	{"period drama", []string{"Historical", "Drama"}},
	{"period dramas", []string{"Historical", "Drama"}},
	{"period piece", []string{"Historical"}},
	{"period pieces", []string{"Historical"}},
	{"historical", []string{"Historical"}},
	{"history", []string{"Historical"}},

	{"family", []string{"Family"}},
	{"family friendly", []string{"Family"}},
	{"kids", []string{"Family"}},
	{"kid", []string{"Family"}},
	{"kid friendly", []string{"Family"}},
	{"children", []string{"Family"}},
	{"children's", []string{"Family"}},
	{"all ages", []string{"Family"}},

	{"biopic", []string{"Biography"}},
	{"biopics", []string{"Biography"}},
	{"biography", []string{"Biography"}},
	{"biographies", []string{"Biography"}},
	{"biographical", []string{"Biography"}},

	{"spy", []string{"Spy"}},
	{"spies", []string{"Spy"}},
	{"espionage", []string{"Spy"}},
	{"secret agent", []string{"Spy"}},
	{"sports", []string{"Sports"}},
	{"sport", []string{"Sports"}},
	{"teen", []string{"Teen"}},
	{"teens", []string{"Teen"}},
	{"teenage", []string{"Teen"}},
	{"teenager", []string{"Teen"}},
	{"teenagers", []string{"Teen"}},
	{"high school", []string{"Teen"}},
	{"coming of age", []string{"Teen"}},
	{"martial arts", []string{"Martial Arts"}},
	{"martial art", []string{"Martial Arts"}},
	{"kung fu", []string{"Martial Arts"}},
	{"kungfu", []string{"Martial Arts"}},
	{"karate", []string{"Martial Arts"}},
	{"noir", []string{"Noir"}},
	{"noirs", []string{"Noir"}},
	{"film noir", []string{"Noir"}},
	{"neo noir", []string{"Noir"}},
	{"disaster", []string{"Disaster"}},
	{"disasters", []string{"Disaster"}},
	{"slasher", []string{"Slasher"}},
	{"slashers", []string{"Slasher"}},
	{"dance", []string{"Dance"}},
	{"dancing", []string{"Dance"}},
	{"erotic", []string{"Erotic"}},
	{"found footage", []string{"Found Footage"}},
	{"indie", []string{"Independent"}},
	{"indies", []string{"Independent"}},
	{"independent", []string{"Independent"}},
	{"courtroom", []string{"Legal"}},
	{"legal", []string{"Legal"}},
	{"live action", []string{"Live Action"}},
	{"political", []string{"Political"}},
	{"politics", []string{"Political"}},
	{"satire", []string{"Satire"}},
	{"satires", []string{"Satire"}},
	{"satirical", []string{"Satire"}},
	{"parody", []string{"Satire"}},
	{"parodies", []string{"Satire"}},
	{"spoof", []string{"Satire"}},
	{"spoofs", []string{"Satire"}},
	{"short film", []string{"Short"}},
	{"short films", []string{"Short"}},
	{"short movies", []string{"Short"}},
	{"shorts", []string{"Short"}},
	{"silent film", []string{"Silent"}},
	{"silent films", []string{"Silent"}},
	{"silent movie", []string{"Silent"}},
	{"silent movies", []string{"Silent"}},
	{"silent era", []string{"Silent"}},
	{"silents", []string{"Silent"}},
	{"supernatural", []string{"Supernatural"}},
	{"paranormal", []string{"Supernatural"}},
	{"ghost", []string{"Supernatural"}},
	{"ghosts", []string{"Supernatural"}},
	{"haunted", []string{"Supernatural"}},
	{"concert film", []string{"Performance"}},
	{"concert films", []string{"Performance"}},
}

// conceptSynonyms rewrite genre synonyms in facts and preference concepts to
// one spelling, so "sci-fi" and "science fiction" are one memory.
var conceptSynonyms = map[string]string{
	"sci fi": "science fiction", "scifi": "science fiction", "sf": "science fiction",
	"rom com": "romantic comedy", "romcom": "romantic comedy",
	"rom coms": "romantic comedies", "romcoms": "romantic comedies",
	"docs": "documentaries", "scary movies": "horror", "scary films": "horror",
	"horror movies": "horror", "horror films": "horror", "funny movies": "comedy",
	"funny films": "comedy", "cartoons": "animated films", "kung fu": "martial arts",
	"whodunits": "mysteries", "whodunnits": "mysteries", "biopics": "biographies",
	"superhero movies": "superhero films", "super heroes": "superheroes", "scary": "horror",
	"spooky": "horror", "funny": "comedy", "scifi movies": "science fiction",
}

// buildGenreTable keeps the lexicon entries whose genres the vocabulary has,
// mapped to the vocabulary's spelling, and adds the vocabulary's own names.
func buildGenreTable(vocab map[string]string) *phraseTable[[]string] {
	t := newPhraseTable[[]string]()
	for _, e := range genreLexicon {
		var gs []string
		for _, g := range e.genres {
			if v, ok := vocab[strings.ToLower(g)]; ok {
				gs = append(gs, v)
			}
		}
		if len(gs) > 0 {
			t.add(e.phrase, gs)
		}
	}
	for low, g := range vocab {
		t.add(low, []string{g})
		t.add(plural(low), []string{g})
	}
	return t
}

// plural makes the plural of a phrase's last word.
func plural(s string) string {
	switch {
	case strings.HasSuffix(s, "y") && len(s) > 2 && !strings.ContainsRune("aeiou", rune(s[len(s)-2])):
		return s[:len(s)-1] + "ies"
	case strings.HasSuffix(s, "s") || strings.HasSuffix(s, "x") || strings.HasSuffix(s, "ch") || strings.HasSuffix(s, "sh"):
		return s + "es"
	}
	return s + "s"
}

// genreHit is a genre phrase found in a message.
type genreHit struct {
	genres  []string
	at, n   int
	negated bool
	soft    bool // negated, but not turned down: "not only", "don't dislike"
}

// findGenres lists the genre phrases of toks in order, each marked negated
// when a negation governs it ("no horror", "not into westerns").
func (m *Model) findGenres(toks []token) []genreHit {
	var hits []genreHit
	for i := 0; i < len(toks); {
		gs, n, ok := m.genres.match(toks, i)
		if !ok || !genreContextOK(toks, i, n) {
			i++
			continue
		}
		neg := negatedAt(toks, i, n)
		hits = append(hits, genreHit{genres: gs, at: i, n: n, negated: neg, soft: neg && softNegation(toks, i)})
		i += n
	}
	return hits
}

// genreContextOK rejects genre words used in another sense: "the kids" in
// "the kids enjoyed it" (but not "for the kids"), "Star Wars", "watch
// history" or "take action".
func genreContextOK(toks []token, i, n int) bool {
	w := toks[i].w
	prev := ""
	if i > 0 && toks[i].brk == 0 {
		prev = toks[i-1].w
	}
	next := ""
	if i+n < len(toks) && toks[i+n].brk == 0 {
		next = toks[i+n].w
	}
	if commentAt(toks, i) {
		// "That is a funny movie", "sounds scary": a comment on a title
		// shown, not a wish.
		return false
	}
	switch w {
	case "kids", "kid", "children", "family":
		// "my kids are 5", "the kids enjoyed it": people, not a genre
		// (but "for the kids" asks for family titles).
		if next == "are" || next == "is" || next == "was" || next == "were" || next == "have" || next == "has" {
			return false
		}
		switch prev {
		case "the", "my", "our", "his", "her", "their", "your":
			if i < 2 || toks[i-1].brk != 0 || (toks[i-2].w != "for" && toks[i-2].w != "with") {
				return false
			}
		}
	case "history":
		if prev == "watch" || prev == "viewing" || prev == "my" {
			return false
		}
	case "action":
		if prev == "take" || prev == "took" {
			return false
		}
	case "wars":
		if prev == "star" || prev == "clone" {
			return false // "Star Wars" is a title
		}
	case "mob":
		if prev != "the" && next != "movies" && next != "films" && next != "boss" {
			return false
		}
	case "sf":
		return toks[i].raw == "SF" || toks[i].raw == "sf"
	}
	return true
}

// fullGenreTable is the whole lexicon regardless of any vocabulary, mapped
// to lower-cased genre names: the embedder and the memory tasks use it.
var fullGenreTable = func() *phraseTable[[]string] {
	t := newPhraseTable[[]string]()
	for _, e := range genreLexicon {
		gs := make([]string, len(e.genres))
		for i, g := range e.genres {
			gs[i] = strings.ToLower(g)
		}
		t.add(e.phrase, gs)
	}
	for _, g := range DefaultGenres {
		low := strings.ToLower(g)
		t.add(low, []string{low})
		t.add(plural(low), []string{low})
	}
	return t
}()
