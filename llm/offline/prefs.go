package offline

import (
	"context"
	"fmt"
	"strings"

	"github.com/memento-ai/memento"
)

// Preferences are likes and dislikes normalised to the thing itself: "I
// don't like very sweet desserts" gives {very sweet desserts, -1}. A
// first-person clause is matched against the stance frames below ("can't
// stand", "am not a fan of", "don't dislike"), adverbs around the verb
// adjust the strength ("really love" is stronger than "quite like"), and
// the rest of the clause is cut into concepts: articles, first-person
// framing and "movies with" are stripped, lists are split and genre
// synonyms are spelled one way.

// stanceFrames are the verbs of liking and disliking, as they follow "I"
// with adverbs removed.
var stanceFrames = []struct {
	phrase   string
	sign     int
	strength float64
}{
	{"love", 1, 1}, {"adore", 1, 1}, {"am obsessed with", 1, 1}, {"am crazy about", 1, 0.9},
	{"am passionate about", 1, 0.9}, {"can't get enough of", 1, 1}, {"cannot get enough of", 1, 1},
	{"am a huge fan of", 1, 1}, {"am a big fan of", 1, 0.9}, {"am addicted to", 1, 0.9},
	{"am a sucker for", 1, 0.8}, {"live for", 1, 0.9},
	{"like", 1, 0.7}, {"enjoy", 1, 0.7}, {"prefer", 1, 0.7}, {"am into", 1, 0.7},
	{"am a fan of", 1, 0.7}, {"am fond of", 1, 0.6}, {"dig", 1, 0.6}, {"am keen on", 1, 0.6},
	{"have a soft spot for", 1, 0.7}, {"appreciate", 1, 0.5}, {"gravitate towards", 1, 0.6},
	{"gravitate toward", 1, 0.6}, {"favor", 1, 0.7}, {"favour", 1, 0.7}, {"am big on", 1, 0.8},
	{"have come around on", 1, 0.5}, {"have come around to", 1, 0.5}, {"am warming up to", 1, 0.4},
	{"am okay with", 1, 0.3}, {"am ok with", 1, 0.3}, {"am fine with", 1, 0.3}, {"tolerate", 1, 0.2},
	{"can tolerate", 1, 0.2},
	{"don't mind", 1, 0.3}, {"do not mind", 1, 0.3}, {"wouldn't mind", 1, 0.3},
	{"don't dislike", 1, 0.3}, {"do not dislike", 1, 0.3}, {"don't hate", 1, 0.3},
	{"do not hate", 1, 0.3}, {"am not against", 1, 0.3}, {"am not opposed to", 1, 0.3},
	{"am not averse to", 1, 0.3},
	{"hate", -1, 1}, {"loathe", -1, 1}, {"despise", -1, 1}, {"detest", -1, 1},
	{"can't stand", -1, 1}, {"cannot stand", -1, 1}, {"can not stand", -1, 1}, {"can't bear", -1, 1},
	{"can't stomach", -1, 0.9}, {"can't handle", -1, 0.8}, {"won't watch", -1, 0.8},
	{"dislike", -1, 0.7}, {"don't like", -1, 0.7}, {"do not like", -1, 0.7}, {"don't enjoy", -1, 0.7},
	{"do not enjoy", -1, 0.7}, {"don't care for", -1, 0.6}, {"do not care for", -1, 0.6},
	{"am not into", -1, 0.6}, {"am not a fan of", -1, 0.7}, {"am no fan of", -1, 0.7},
	{"am not a big fan of", -1, 0.5}, {"am not a huge fan of", -1, 0.5}, {"am not crazy about", -1, 0.4},
	{"am not keen on", -1, 0.5}, {"am not big on", -1, 0.5}, {"am tired of", -1, 0.6},
	{"am sick of", -1, 0.7}, {"am bored of", -1, 0.6}, {"am bored by", -1, 0.6}, {"avoid", -1, 0.7},
	{"never watch", -1, 0.6}, {"don't love", -1, 0.4}, {"don't want", -1, 0.6}, {"do not want", -1, 0.6},
	{"could do without", -1, 0.5}, {"am over", -1, 0.5}, {"am scared of", -1, 0.6},
	{"am afraid of", -1, 0.6}, {"don't get", -1, 0.4}, {"am not fond of", -1, 0.6},
}

// stanceTable finds the frames; frame words are matched with adverbs taken
// out.
var stanceTable = func() *phraseTable[int] {
	t := newPhraseTable[int]()
	for i, f := range stanceFrames {
		t.add(f.phrase, i)
	}
	return t
}()

// Adverbs that make a stance stronger or weaker.
var (
	intensifiers = set("really", "absolutely", "totally", "truly", "so", "seriously", "genuinely",
		"definitely", "deeply", "utterly", "completely", "passionately", "especially")
	softeners = set("kinda", "sorta", "somewhat", "quite", "slightly", "mildly", "fairly", "pretty")
)

// ExtractPreferences finds the likes and dislikes in a message, and the
// facts about the user's life (Kind fact), which fade more slowly.
func (m *Model) ExtractPreferences(ctx context.Context, message string) ([]memento.Concept, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("extract preferences: %w", err)
	}
	return extractPreferences(message), nil
}

func extractPreferences(msg string) []memento.Concept {
	toks := tokenize(msg)
	out := []memento.Concept{}
	add := func(c memento.Concept) {
		if c.Concept == "" {
			return
		}
		for i, o := range out {
			if o.Concept == c.Concept && o.Kind == c.Kind {
				out[i] = c // the later statement wins
				return
			}
		}
		out = append(out, c)
	}
	prev, prevCompanion := subjNone, ""
	for _, c := range splitClauses(msg, toks) {
		if c.question {
			prev, prevCompanion = subjNone, ""
			continue
		}
		if c.first {
			prev, prevCompanion = subjNone, ""
		}
		st := readStmt(c.toks, prev, prevCompanion)
		prev, prevCompanion = st.subj, st.companion
		switch st.subj {
		case subjFirst:
			rest, ok := spellEllipsis(dropParens(st.rest))
			if !ok {
				continue
			}
			st.rest = rest
			if sign, strength, obj, ok := readStance(rest); ok {
				for _, concept := range concepts(obj) {
					add(memento.Concept{Concept: concept, Sign: sign, Strength: strength, Kind: memento.KindTaste})
				}
				continue
			}
			if isLifeFact(st.rest) {
				if f, ok := factOf(msg, st); ok {
					add(lifeConcept(f))
				}
			}
		case subjOwn:
			if concept, ok := favouriteOf(st.rest); ok {
				add(memento.Concept{Concept: concept, Sign: 1, Strength: 1, Kind: memento.KindTaste})
				continue
			}
			if len(st.rest) > 1 && familyNouns[st.rest[0].w] {
				if f, ok := factOf(msg, st); ok {
					add(lifeConcept(f))
				}
			}
		case subjMention:
			if concept, sign, strength, ok := predicateStance(st.all); ok {
				add(memento.Concept{Concept: concept, Sign: sign, Strength: strength, Kind: memento.KindTaste})
			}
		}
	}
	return out
}

// readStance matches a stance frame at the start of a first-person clause,
// reading past adverbs. It returns the sign, the strength and the tokens
// the stance is about.
func readStance(rest []token) (sign int, strength float64, obj []token, ok bool) {
	var kept []token
	var at []int // index in rest of each kept token
	for i := 0; i < len(rest); i++ {
		w := rest[i].w
		switch {
		case (w == "kind" || w == "sort") && matchSeq(rest, i+1, "of"):
			i++
		case w == "a" && (matchSeq(rest, i+1, "bit") || matchSeq(rest, i+1, "little")) && len(kept) == 0:
			i++
		case (adverbs[w] || intensifiers[w] || softeners[w]) && !negations[w]:
		default:
			kept = append(kept, rest[i])
			at = append(at, i)
		}
	}
	idx, n, found := stanceTable.match(kept, 0)
	if !found {
		return 0, 0, nil, false
	}
	f := stanceFrames[idx]
	end := at[n-1] + 1
	boost, soften, softNeg, negSeen := false, false, false, false
	for i := 0; i < end; i++ {
		w := rest[i].w
		switch {
		case negations[w] || strings.HasSuffix(w, "n't"):
			negSeen = true
		case intensifiers[w]:
			if negSeen {
				softNeg = true // "don't really like" is a mild dislike
			} else {
				boost = true
			}
		case softeners[w] || (w == "kind" || w == "sort") && matchSeq(rest, i+1, "of") ||
			w == "a" && (matchSeq(rest, i+1, "bit") || matchSeq(rest, i+1, "little")):
			soften = true
		}
	}
	strength = f.strength
	switch {
	case softNeg && f.sign < 0:
		strength = 0.5
	case boost:
		strength = min(1, strength+0.2)
	}
	if soften {
		strength *= 0.6
	}
	obj = rest[end:]
	// "like to watch horror", "love watching documentaries".
	for _, p := range []string{"to watch", "to see", "watching", "seeing", "to binge", "bingeing", "binging"} {
		if matchSeq(obj, 0, p) {
			obj = obj[len(strings.Fields(p)):]
			break
		}
	}
	return f.sign, roundStrength(strength), obj, len(obj) > 0
}

func roundStrength(s float64) float64 {
	s = float64(int(s*100+0.5)) / 100
	return max(0.05, min(1, s))
}

// conceptStops end a concept: "horror at night", "comedies because they
// relax me".
var conceptStops = set("because", "since", "when", "whenever", "while", "if", "especially",
	"lately", "nowadays", "anymore", "too", "either", "though", "although", "at", "during",
	"before", "after", "every", "sometimes", "usually", "always", "mostly", "but", "unless",
	"so", "than", "really", "instead", "i", "which", "who", "lol", "haha", "tbh", "honestly",
	"now", "these", "ever", "much", "anyway", "personally")

// conceptStopPhrases end a concept too: "foreign movies as well".
var conceptStopPhrases = compile([]string{"as well", "a lot", "so much", "very much", "at all",
	"these days", "of late", "more and more", "right now", "for now", "in general", "in particular"})

// conceptLeads are stripped from the start of a concept.
var conceptLeads = [][]string{
	{"movies", "with"}, {"films", "with"}, {"shows", "with"}, {"anything", "with"}, {"stuff", "with"},
	{"movies", "starring"}, {"films", "starring"}, {"anything", "starring"}, {"movies", "about"},
	{"films", "about"}, {"shows", "about"}, {"stories", "about"}, {"movies", "by"}, {"films", "by"},
	{"anything", "by"}, {"kinds", "of"}, {"kind", "of"}, {"types", "of"}, {"type", "of"},
	{"sorts", "of"}, {"lots", "of"}, {"a", "lot", "of"}, {"all", "kinds", "of"}, {"most"},
	{"the"}, {"a"}, {"an"}, {"some"}, {"any"}, {"all"}, {"those"}, {"these"}, {"that"}, {"this"},
	{"my"}, {"your"}, {"their"}, {"his"}, {"her"}, {"our"}, {"good"}, {"watching"}, {"more"},
}

// genericNouns after a genre or a name are dropped: "horror movies" is
// "horror", "Tom Hanks movies" is "tom hanks".
var genericNouns = set("movies", "movie", "films", "film", "flicks", "flick", "shows", "show",
	"stuff", "ones", "series", "stories", "things", "tv", "programs", "programmes", "content")

// placeNouns after "on" end a concept: "comedies on Netflix".
var placeNouns = set("netflix", "hulu", "prime", "amazon", "disney", "hbo", "tv", "weekends",
	"weekend", "sundays", "saturdays", "fridays", "the", "my", "a", "their", "dvd", "youtube")

// concepts cuts the object of a stance into normalised concepts.
func concepts(obj []token) []string {
	// Cut at the first stop word.
	end := len(obj)
	for i, t := range obj {
		if i > 0 && (t.brk == '.' || t.brk == ';') {
			end = i
			break
		}
		if conceptStops[t.w] || matchAny(obj, i, conceptStopPhrases) > 0 || (t.w == "on" && i+1 < len(obj) && placeNouns[obj[i+1].w]) ||
			(t.w == "with" && i+1 < len(obj) && (obj[i+1].w == "my" || obj[i+1].w == "friends" || obj[i+1].w == "family")) {
			end = i
			break
		}
	}
	obj = obj[:end]
	// Split lists on "and", "or", "nor" and commas.
	var items [][]token
	cur := []token{}
	for _, t := range obj {
		if t.w == "and" || t.w == "or" || t.w == "nor" || (t.brk == ',' && len(cur) > 0) {
			if len(cur) > 0 {
				items = append(items, cur)
			}
			cur = []token{}
			if t.w == "and" || t.w == "or" || t.w == "nor" {
				continue
			}
		}
		cur = append(cur, t)
	}
	if len(cur) > 0 {
		items = append(items, cur)
	}
	var out []string
	for _, it := range items {
		if c := normaliseConcept(it); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// normaliseConcept strips articles and framing from one item, drops a
// generic noun after a genre or a name, lower-cases it and spells genre
// synonyms one way.
func normaliseConcept(it []token) string {
	for changed := true; changed; {
		changed = false
		if n := matchAny(it, 0, conceptLeads); n > 0 && n < len(it) {
			it = it[n:]
			changed = true
		}
	}
	for len(it) > 0 && (stopwords[it[len(it)-1].w] && !genericNouns[it[len(it)-1].w]) {
		it = it[:len(it)-1]
	}
	if len(it) == 0 {
		return ""
	}
	if len(it) > 1 && genericNouns[it[len(it)-1].w] {
		head := it[:len(it)-1]
		if _, n, ok := fullGenreTable.match(head, 0); (ok && n == len(head)) || allUpper(head) {
			it = head
		}
	}
	ws := wordsOf(it)
	concept := strings.Join(ws, " ")
	if v, ok := conceptSynonyms[concept]; ok {
		concept = v
	}
	for _, s := range factSynonyms {
		if concept == s.from || strings.HasPrefix(concept, s.from+" ") {
			concept = s.to + strings.TrimPrefix(concept, s.from)
		}
	}
	content := false
	for _, w := range strings.Fields(concept) {
		if !stopwords[w] && !trivialWords[w] || genericNouns[w] {
			content = true
		}
	}
	if !content || pointerSubjects[concept] || concept == "them" || concept == "it" {
		return ""
	}
	return concept
}

func allUpper(ts []token) bool {
	for _, t := range ts {
		if !startsUpper(t.raw) {
			return false
		}
	}
	return len(ts) > 0
}

// favouriteOf reads "my favourite (genre) is X".
func favouriteOf(rest []token) (string, bool) {
	if len(rest) < 3 {
		return "", false
	}
	switch rest[0].w {
	case "favourite", "favorite", "fave", "fav":
	default:
		return "", false
	}
	for i := 1; i < len(rest) && i <= 3; i++ {
		if rest[i].w == "is" || rest[i].w == "are" {
			cs := concepts(rest[i+1:])
			if len(cs) > 0 {
				return cs[0], true
			}
		}
	}
	return "", false
}

// predicateStances are what a clause says of its subject: "horror is not
// for me", "westerns are my favourite".
var predicateStances = []struct {
	phrase   string
	sign     int
	strength float64
}{
	{"is my favourite", 1, 1}, {"is my favorite", 1, 1}, {"are my favourite", 1, 1}, {"are my favorite", 1, 1},
	{"is my jam", 1, 0.8}, {"is my thing", 1, 0.8}, {"are my thing", 1, 0.8}, {"is my go to", 1, 0.8},
	{"is not for me", -1, 0.7}, {"isn't for me", -1, 0.7}, {"are not for me", -1, 0.7},
	{"aren't for me", -1, 0.7}, {"isn't my thing", -1, 0.7}, {"is not my thing", -1, 0.7},
	{"aren't my thing", -1, 0.7}, {"isn't my cup of tea", -1, 0.7}, {"is not my cup of tea", -1, 0.7},
	{"doesn't do it for me", -1, 0.6}, {"don't do it for me", -1, 0.6}, {"bores me", -1, 0.6},
	{"bore me", -1, 0.6}, {"scares me", -1, 0.6}, {"scare me", -1, 0.6}, {"makes me happy", 1, 0.7},
	{"make me happy", 1, 0.7}, {"gives me nightmares", -1, 0.7}, {"give me nightmares", -1, 0.7},
}

// predicateStance reads a stance stated of a subject.
func predicateStance(c []token) (string, int, float64, bool) {
	for k := 1; k < len(c); k++ {
		for _, p := range predicateStances {
			if matchSeq(c, k, p.phrase) {
				cs := concepts(c[:k])
				if len(cs) > 0 {
					return cs[0], p.sign, p.strength, true
				}
			}
		}
	}
	return "", 0, 0, false
}

// lifeVerbs open first-person facts about the user's life rather than
// tastes.
var lifeVerbs = [][]string{
	{"live"}, {"lived"}, {"moved"}, {"am", "moving"}, {"relocated"}, {"am", "from"}, {"grew", "up"},
	{"work"}, {"worked"}, {"am", "a"}, {"am", "an"}, {"have", "a"}, {"have", "an"}, {"have", "two"},
	{"have", "three"}, {"have", "kids"}, {"have", "children"}, {"have", "twins"}, {"am", "vegetarian"},
	{"am", "vegan"}, {"am", "allergic"}, {"am", "married"}, {"am", "pregnant"}, {"am", "retired"},
	{"am", "single"}, {"am", "divorced"}, {"am", "engaged"}, {"speak"}, {"study"}, {"was", "born"},
	{"teach"}, {"am", "studying"}, {"am", "based"}, {"am", "training"}, {"have", "been", "living"},
}

// isLifeFact reports a first-person clause stating a fact of life.
func isLifeFact(rest []token) bool {
	return matchAny(rest, skipAdverbs(rest, 0), lifeVerbs) > 0
}

// lifeConcept makes a fact of life a concept: its third-person text,
// lower-cased ("lives in lisbon").
func lifeConcept(f memento.Fact) memento.Concept {
	sign := 1
	if f.Negated {
		sign = -1
	}
	return memento.Concept{Concept: strings.ToLower(f.Text), Sign: sign, Strength: 1, Kind: memento.KindFact}
}
