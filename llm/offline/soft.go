package offline

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/memento-ai/memento"
)

// Soft constraints: wishes the catalog cannot filter on, read so the agent
// can keep them in the context, rank by them where its data allows and say
// so where it does not. Each kind is read at most once per turn; the
// first phrase of a kind wins.

// platformPhrases name streaming services, mapped to one spelling.
var platformTable = func() *phraseTable[string] {
	t := newPhraseTable[string]()
	for _, p := range []struct{ phrase, value string }{
		{"netflix", "Netflix"}, {"hulu", "Hulu"}, {"disney plus", "Disney+"},
		{"disneyplus", "Disney+"}, {"prime video", "Prime Video"}, {"amazon prime", "Prime Video"},
		{"amazon prime video", "Prime Video"}, {"amazon video", "Prime Video"}, {"hbo", "HBO"},
		{"hbo max", "HBO"}, {"apple tv", "Apple TV+"}, {"apple tv plus", "Apple TV+"},
		{"peacock", "Peacock"}, {"paramount plus", "Paramount+"}, {"tubi", "Tubi"},
		{"crunchyroll", "Crunchyroll"}, {"showtime", "Showtime"}, {"starz", "Starz"},
		{"mubi", "MUBI"}, {"youtube", "YouTube"}, {"criterion channel", "Criterion Channel"},
	} {
		t.add(p.phrase, p.value)
	}
	return t
}()

// platformsAfterOn are names that are a platform only after "on": "on
// Prime", "on Disney", "on Paramount", "on Max".
var platformsAfterOn = map[string]string{
	"prime": "Prime Video", "disney": "Disney+", "paramount": "Paramount+", "max": "HBO", "amazon": "Prime Video",
}

// platformAt returns the length in words of the platform named at toks[i].
func platformAt(msg string, toks []token, i int) int {
	_, n := platformValue(msg, toks, i)
	return n
}

// platformValue returns the platform named at toks[i] and its length in
// words. "Disney+", "Paramount+" and "Apple TV+" lose their plus sign to
// the tokenizer, so it is read from the message.
func platformValue(msg string, toks []token, i int) (string, int) {
	if v, n, ok := platformTable.match(toks, i); ok {
		return v, n
	}
	plus := toks[i].end < len(msg) && msg[toks[i].end] == '+'
	if v, ok := platformsAfterOn[toks[i].w]; ok && (plus && toks[i].w != "max" && toks[i].w != "amazon" || i > 0 && toks[i].brk == 0 && toks[i-1].w == "on") {
		n := 1
		if i+1 < len(toks) && toks[i+1].brk == 0 && (toks[i+1].w == "plus" || toks[i+1].w == "video") {
			n = 2
		}
		return v, n
	}
	return "", 0
}

// Moods: how a film feels. Each phrase maps to one normalised tone (its
// synonyms share it: "gritty" is "dark"). The flags say how a phrase may be
// read: 'a' marks an ordinary adjective that must qualify a title to count
// ("something dark", "a dark comedy", not "in the dark"); 'f' a phrase that
// holds its own negation ("not too heavy" is a wish for light); 'c' a tone
// that is usually a complaint ("confusing", "cheesy"), so said of a title
// ("sounds melodramatic") it steers away; 't' a subject rather than a tone
// (holidays), read only when turned down or before a title noun.
var moodTable = func() *phraseTable[moodEntry] {
	t := newPhraseTable[moodEntry]()
	for _, m := range []struct{ phrase, value, flags string }{
		{"light hearted", "light", ""}, {"lighthearted", "light", ""}, {"light", "light", "a"},
		{"easy watch", "light", ""}, {"easy watching", "light", ""}, {"easy to watch", "light", ""},
		{"mindless", "light", "a"}, {"not too heavy", "light", "f"}, {"nothing heavy", "light", "f"},
		{"nothing too heavy", "light", "f"}, {"not heavy", "light", "f"}, {"not too serious", "light", "f"},
		{"nothing too serious", "light", "f"}, {"nothing serious", "light", "f"},
		{"feel good", "feel-good", ""}, {"feelgood", "feel-good", ""},
		{"heartwarming", "feel-good", ""}, {"heart warming", "feel-good", ""},
		{"wholesome", "feel-good", ""}, {"happy ending", "feel-good", ""}, {"happy endings", "feel-good", ""},
		{"dark", "dark", "a"}, {"darker", "dark", "a"}, {"gritty", "dark", ""}, {"bleak", "dark", "a"},
		{"grim", "dark", "a"}, {"disturbing", "dark", "a"},
		{"cozy", "cozy", ""}, {"cosy", "cozy", ""}, {"comfort watch", "cozy", ""},
		{"comforting", "cozy", ""}, {"relaxing", "cozy", "a"}, {"chill", "cozy", "a"},
		{"uplifting", "uplifting", ""}, {"inspiring", "uplifting", "a"}, {"inspirational", "uplifting", ""},
		{"hopeful", "uplifting", "a"}, {"motivational", "uplifting", ""}, {"cheery", "uplifting", "a"},
		{"cheerful", "uplifting", "a"},
		{"tearjerker", "sad", ""}, {"tear jerker", "sad", ""}, {"tearjerkers", "sad", ""},
		{"make me cry", "sad", ""}, {"sad", "sad", "a"}, {"sadder", "sad", "a"}, {"depressing", "depressing", "ac"},
		{"tragic", "sad", "a"}, {"heartbreaking", "sad", "a"}, {"melancholy", "sad", "a"}, {"weepy", "sad", "a"},
		{"emotional", "emotional", "a"}, {"touching", "emotional", "a"}, {"moving", "emotional", "a"},
		{"intense", "intense", "a"}, {"gripping", "intense", ""}, {"tense", "intense", "a"},
		{"edge of your seat", "intense", ""}, {"edge of my seat", "intense", ""}, {"nail biting", "intense", ""},
		{"exciting", "exciting", "a"}, {"fast paced", "fast-paced", ""},
		{"mind bending", "thought-provoking", ""}, {"mindbending", "thought-provoking", ""},
		{"mind blowing", "thought-provoking", ""}, {"thought provoking", "thought-provoking", ""},
		{"cerebral", "thought-provoking", "a"}, {"deep", "thought-provoking", "a"},
		{"fun", "fun", "a"}, {"entertaining", "fun", "a"}, {"enjoyable", "fun", "a"},
		{"funny", "funny", "a"}, {"hilarious", "funny", "a"}, {"humorous", "funny", "a"},
		{"silly", "silly", "a"}, {"goofy", "silly", "a"}, {"zany", "silly", "a"}, {"wacky", "silly", "a"},
		{"quirky", "quirky", "a"}, {"offbeat", "quirky", "a"}, {"eccentric", "quirky", "a"},
		{"whimsical", "whimsical", "a"}, {"charming", "charming", "a"}, {"cute", "cute", "a"},
		{"clever", "clever", "a"}, {"witty", "clever", "a"}, {"smart", "clever", "a"},
		{"romantic", "romantic", "a"}, {"sappy", "sappy", "ac"}, {"mushy", "sappy", "ac"},
		{"sentimental", "sentimental", "ac"}, {"melodramatic", "melodramatic", "ac"},
		{"cheesy", "cheesy", "ac"}, {"corny", "cheesy", "ac"}, {"campy", "campy", "a"},
		{"over the top", "over-the-top", "c"},
		{"scary", "scary", "a"}, {"creepy", "creepy", "a"}, {"spooky", "spooky", "a"}, {"eerie", "creepy", "a"},
		{"gory", "gory", "ac"}, {"gore", "gory", "c"}, {"bloody", "gory", "ac"}, {"gruesome", "gory", "ac"},
		{"violent", "violent", "ac"}, {"violence", "violent", "c"}, {"brutal", "violent", "ac"},
		{"graphic", "graphic", "ac"},
		{"confusing", "confusing", "ac"}, {"convoluted", "confusing", "ac"}, {"complicated", "confusing", "ac"},
		{"hard to follow", "confusing", "c"}, {"weird", "weird", "ac"}, {"bizarre", "weird", "ac"},
		{"strange", "weird", "ac"}, {"trippy", "trippy", "a"}, {"surreal", "surreal", "a"},
		{"slow", "slow", "ac"}, {"slow paced", "slow", "c"}, {"slow burn", "slow-burn", ""},
		{"predictable", "predictable", "ac"}, {"cliche", "cliched", "ac"}, {"cliched", "cliched", "ac"},
		{"pretentious", "pretentious", "ac"}, {"artsy", "artsy", "a"}, {"raunchy", "raunchy", "ac"},
		{"crude", "crude", "ac"}, {"vulgar", "crude", "ac"}, {"edgy", "edgy", "a"}, {"serious", "serious", "a"},
		{"heavy", "heavy", "ac"}, {"nostalgic", "nostalgic", "a"}, {"atmospheric", "atmospheric", "a"},
		{"moody", "moody", "a"}, {"epic", "epic", "a"}, {"suspenseful", "suspenseful", "a"},
		{"holiday", "holiday", "t"}, {"holidays", "holiday", "t"}, {"holiday's", "holiday", "t"},
		{"christmas", "christmas", "t"}, {"christmassy", "christmas", "t"}, {"xmas", "christmas", "t"},
	} {
		t.add(m.phrase, moodEntry{
			value:     m.value,
			adj:       strings.Contains(m.flags, "a"),
			fixed:     strings.Contains(m.flags, "f"),
			complaint: strings.Contains(m.flags, "c"),
			topic:     strings.Contains(m.flags, "t"),
		})
	}
	return t
}()

type moodEntry struct {
	value     string
	adj       bool
	fixed     bool
	complaint bool
	topic     bool
}

// moodTypos are the one-word tones a misspelling may stand for ("gorey",
// "cheezy"), read by the rule of typos.go: same first letter, one edit (two
// from eight letters), no inflection the tone lacks.
var moodTypos = func() []typoTarget {
	var out []typoTarget
	for first, entries := range moodTable.byFirst {
		for _, e := range entries {
			if len(e.words) != 1 || len(first) < 4 || !allLetters(first) || e.val.topic {
				continue
			}
			if _, _, ok := fullGenreTable.match([]token{{w: first}}, 0); ok {
				continue // a genre word: the genre rule corrects it
			}
			out = append(out, typoTarget{word: first, runes: []rune(first), to: first, key: []string{e.val.value}})
		}
	}
	slices.SortFunc(out, func(a, b typoTarget) int { return strings.Compare(a.word, b.word) })
	return out
}()

// moodTypoAt returns the tone a misspelt word at toks[i] stands for.
func moodTypoAt(toks []token, i int) (moodEntry, bool) {
	t := toks[i]
	n := utf8.RuneCountInString(t.w)
	if n < 5 || n > 16 || knownWords[t.w] || !allLetters(t.w) || t.paren || i > 0 && t.brk == 0 && startsUpper(t.raw) {
		return moodEntry{}, false
	}
	if _, ok := fullGenreTable.byFirst[t.w]; ok {
		return moodEntry{}, false
	}
	limit := 1
	if n >= 8 {
		limit = 2
	}
	rw := []rune(t.w)
	best, bestD, ambiguous := typoTarget{}, limit+1, false
	for _, c := range moodTypos {
		if c.runes[0] != rw[0] || abs(len(c.runes)-len(rw)) > limit || inflects(t.w, c.word) ||
			t.w == c.word+"s" || t.w == c.word+"es" {
			continue
		}
		d := osaDistance(rw, c.runes, limit)
		switch {
		case d < bestD:
			best, bestD, ambiguous = c, d, false
		case d == bestD && d <= limit && best.key[0] != c.key[0]:
			ambiguous = true
		}
	}
	if bestD > limit || ambiguous {
		return moodEntry{}, false
	}
	e, _, _ := moodTable.match([]token{{w: best.word}}, 0)
	return e, true
}

// moodLeads before a mood adjective make it qualify the wished-for title:
// "something dark", "a bit lighter".
var moodLeads = set("something", "anything", "more", "really", "very", "pretty", "bit", "little",
	"quite", "a", "somewhat", "kinda", "super", "fairly", "nice", "keep", "it", "too", "and", "rather",
	"so", "overly", "less", "not", "nothing", "no", "extremely", "or", "slightly", "mostly")

// aloneMoods may stand alone at the start of a clause ("Dark.", "Something
// light? Light."); other tones alone ("Fun!", "Sweet.") are reactions.
var aloneMoods = set("light", "dark", "cozy", "uplifting", "thought-provoking")

// toneIntensifiers may stand between a comment verb and its tone, or
// before a tone turned down: "it looks a bit too dark", "so sad".
var toneIntensifiers = set("so", "very", "really", "pretty", "quite", "kind", "of", "kinda", "a", "bit",
	"little", "too", "more", "super", "rather", "extremely", "somewhat", "overly", "way", "just",
	"slightly", "sort", "sorta", "fairly", "incredibly")

// commentVerbs say what a title is like: "sounds melodramatic", "that
// one was too slow", "it's a little confusing".
var commentVerbs = set("sounds", "sound", "looks", "look", "seems", "seem", "is", "was", "it's", "its",
	"that's", "thats", "felt", "feels", "seemed", "looked", "sounded", "were", "are", "gets", "got")

// commentSubjects before "is" or "was" make the clause about a title
// shown, not the one wished for ("something that is fun" wishes).
var commentSubjects = set("it", "that", "this", "one", "movie", "film", "show", "they", "those", "these",
	"both", "ones", "movies", "films")

// toneDislikes after a tone in its clause turn it down: "more gorey which
// I don't like".
var toneDislikes = compile([]string{"don't like", "dont like", "do not like", "didn't like", "did not like",
	"hate", "dislike", "can't stand", "cannot stand", "can't handle", "not into", "not a fan",
	"not for me", "not my thing", "bothers me", "turns me off", "don't want", "do not want",
	"don't enjoy", "not my style", "isn't my thing", "is not my thing",
	"for my liking", "for my tastes", "not my cup of tea"})

// toneForMe after a tone that is a complaint, or one said with "too" or "a
// little", turns it down: "a little confusing for me".
var toneForMe = compile([]string{"for me", "for my taste", "for my tastes", "for my liking", "for us"})

// Runtime bounds, in minutes.
const (
	shortRuntime = "<=100"
	notTooLong   = "<=120"
	longRuntime  = ">=150"
)

var (
	runtimeUpper = compile([]string{"under", "less than", "shorter than", "no longer than", "at most",
		"max", "within", "below", "not more than", "not over", "up to", "no more than", "not longer than"})
	runtimeLower = compile([]string{"over", "more than", "longer than", "at least", "no less than", "not less than"})
	notLongList  = compile([]string{"not too long", "not very long", "not long", "nothing too long",
		"not too lengthy", "not that long", "not super long", "nothing long"})
	hourUnits   = set("hours", "hour", "hrs", "hr", "h")
	minuteUnits = set("minutes", "minute", "mins", "min", "m")
)

// findSoft reads the soft constraints of a turn and marks the words they
// take up, so that "something short" is not read as the genre Short. A tone
// turned down ("too sad for me", "not a holiday person") comes back as "not
// <tone>", so the agent steers away from it. A tone the genre vocabulary
// reads ("funny", "scary") is left to the genre rules when it is wished
// for, and kept as a mood as well when it is turned down. Misspelt tones
// ("gorey") are read by edit distance and reported as corrections.
func (m *Model) findSoft(msg string, toks []token) ([]memento.SoftConstraint, []bool, []memento.Correction) {
	var out []memento.SoftConstraint
	var fixes []memento.Correction
	var mask []bool
	have := map[string]bool{}
	add := func(kind, value string, from, to int, masked bool) {
		if mask == nil {
			mask = make([]bool, len(toks))
		}
		if masked {
			markRange(mask, from, to)
		}
		if have[kind] {
			return
		}
		have[kind] = true
		out = append(out, memento.SoftConstraint{Kind: kind, Value: value, Said: spanText(msg, toks, from, to)})
	}
	for i := 0; i < len(toks); i++ {
		if v, n := platformValue(msg, toks, i); n > 0 {
			if !negatedAt(toks, i, n) {
				from := i
				if i > 0 && toks[i].brk == 0 && toks[i-1].w == "on" {
					from = i - 1
				}
				add(memento.SoftPlatform, v, from, i+n, true)
			}
			i += n - 1
			continue
		}
		if value, n := runtimeAt(toks, i); n > 0 {
			add(memento.SoftRuntime, value, i, i+n, true)
			i += n - 1
			continue
		}
		e, n, ok := moodTable.match(toks, i)
		typo := false
		if !ok {
			if e, ok = moodTypoAt(toks, i); ok {
				n, typo = 1, true
			}
		}
		if !ok || !moodOK(toks, i, n, e, typo) {
			continue
		}
		_, _, genre := m.genres.match(toks, i)
		neg, from := false, i
		if !e.fixed {
			neg, from = toneNegated(toks, i, n, e)
		}
		switch {
		case genre && !neg:
			// "something funny": the genre rules read it.
		case e.topic && !neg && !topicWish(toks, i+n):
			// "on holiday", "merry Christmas": no wish.
		case !neg && !e.fixed && commentAt(toks, i):
			// "that sounds fun": a comment on a title shown, no wish.
		default:
			v := e.value
			if neg {
				v = "not " + v
			}
			if typo {
				fixes = append(fixes, memento.Correction{From: toks[i].raw, To: e.value})
			}
			add(memento.SoftMood, v, from, i+n, !genre && !e.topic)
		}
		i += n - 1
	}
	return out, mask, fixes
}

// moodOK checks that a mood adjective qualifies a title: a lead word
// before it, a title noun, genre or clause end after it, or a comment on a
// title ("sounds melodramatic"). A misspelt tone always needs such a place.
func moodOK(toks []token, i, n int, e moodEntry, typo bool) bool {
	if i > 0 && toks[i].brk == 0 && startsUpper(toks[i].raw) {
		return false // "The Dark Knight"
	}
	if e.topic {
		return true // topicWish and the negation decide
	}
	if !e.adj && !typo {
		return true
	}
	if i > 0 && toks[i].brk == 0 && moodLeads[toks[i-1].w] || commentAt(toks, i) {
		return true
	}
	j := i + n
	if j >= len(toks) || toks[j].brk != 0 {
		return i == 0 && !typo && aloneMoods[e.value] // "Dark." alone, or a clause's first word
	}
	if titleNouns[toks[j].w] || toks[j].w == "one" || toks[j].w == "ones" || toks[j].w == "and" || toks[j].w == "stuff" {
		return true
	}
	_, _, ok := fullGenreTable.match(toks, j)
	return ok
}

// topicWish reports a title noun or "person" after a holiday: "a holiday
// movie", "a Christmas person".
func topicWish(toks []token, j int) bool {
	if j >= len(toks) || toks[j].brk != 0 {
		return false
	}
	w := toks[j].w
	return titleNouns[w] || w == "themed" || w == "person" || w == "fan" || w == "type" || w == "stuff" || w == "season"
}

// toneNegated reports a tone turned down or found excessive, and where the
// words that say so start: "not too dark", "too sad for me", "a little
// confusing for me", "more gorey which I don't like", "not a holiday
// person"; and, for a tone that is usually a complaint, a comment on a
// title ("sounds melodramatic").
func toneNegated(toks []token, i, n int, e moodEntry) (bool, int) {
	from := i
	for k := i - 1; k >= 0 && k >= i-4 && toks[k+1].brk == 0; k-- {
		w := toks[k].w
		if !toneIntensifiers[w] && w != "not" && w != "nothing" && w != "no" && w != "less" {
			break
		}
		from = k
	}
	for from < i && (toks[from].w == "a" && toks[from+1].w != "little" && toks[from+1].w != "bit" || toks[from].w == "so" || toks[from].w == "more") {
		from++ // "a little", not "a": the words that turn it down
	}
	excess := false
	for k := from; k < i; k++ {
		switch toks[k].w {
		case "too", "overly", "bit", "little":
			excess = true
		}
	}
	// "not too dark" is no double negation, as softNegation would read it.
	if negatedAt(toks, i, n) && (excess || !softNegation(toks, i)) {
		return true, from
	}
	// Forward, in the clause: "which I don't like", "for me".
	for j := i + n; j < len(toks) && j <= i+n+5 && toks[j].brk == 0; j++ {
		if negationBreakers[toks[j].w] || toks[j].w == "and" {
			break
		}
		if matchAny(toks, j, toneDislikes) > 0 {
			return true, from
		}
		if (e.complaint || excess) && matchAny(toks, j, toneForMe) > 0 {
			return true, from
		}
	}
	if e.complaint && (excess || commentAt(toks, i)) {
		return true, from
	}
	return false, i
}

// commentAt reports a tone said of a title already shown: a comment verb
// before it (over any intensifiers), whose subject points at a title or is
// left out ("Sounds cheesy.", "that one is too slow", "it's a little
// confusing"), but not a relative clause of a wish ("something that is
// fun").
func commentAt(toks []token, i int) bool {
	k := i - 1
	for k >= 0 && toks[k+1].brk == 0 && toneIntensifiers[toks[k].w] {
		k--
	}
	if k < 0 || toks[k+1].brk != 0 || !commentVerbs[toks[k].w] {
		return false
	}
	v := toks[k].w
	switch v {
	case "it's", "its", "that's", "thats":
		return k == 0 || toks[k].brk != 0 || !likeHeads[toks[k-1].w]
	}
	if k == 0 || toks[k].brk != 0 {
		// No subject: "Sounds melodramatic.", "Looks too dark."
		return v == "sounds" || v == "looks" || v == "seems" || v == "felt" || v == "seemed" || v == "looked" || v == "sounded"
	}
	s := toks[k-1].w
	if !commentSubjects[s] {
		return false
	}
	if k >= 2 && toks[k-1].brk == 0 {
		p := toks[k-2].w
		if (s == "that" || s == "which") && (likeHeads[p] || titleNouns[p]) {
			return false // "a movie that is fun"
		}
		if (s == "one" || s == "movie" || s == "film" || s == "show" || s == "ones" || s == "movies" || s == "films") &&
			p != "that" && p != "this" && p != "the" && p != "those" && p != "these" && p != "last" && p != "first" {
			return false
		}
	}
	return true
}

// runtimeAt reads a runtime wish at toks[i]: "under 2 hours", "not too
// long", "something short".
func runtimeAt(toks []token, i int) (string, int) {
	if !runtimeFirst[toks[i].w] {
		return "", 0
	}
	if n := matchAny(toks, i, notLongList); n > 0 {
		return notTooLong, n
	}
	for _, lists := range []struct {
		list [][]string
		op   string
	}{{runtimeUpper, "<="}, {runtimeLower, ">="}} {
		n := matchAny(toks, i, lists.list)
		if n == 0 {
			continue
		}
		if mins, k := durationAt(toks, i+n); k > 0 {
			return lists.op + strconv.Itoa(mins), n + k
		}
	}
	w := toks[i].w
	prev, next := "", ""
	if i > 0 && toks[i].brk == 0 {
		prev = toks[i-1].w
	}
	if i+1 < len(toks) && toks[i+1].brk == 0 {
		next = toks[i+1].w
	}
	end := next == "" || next == "please" || next == "and" || next == "one" || next == "ones" || next == "tonight"
	if next != "" && next != "film" && next != "films" {
		if _, _, ok := fullGenreTable.match(toks, i+1); ok && (w == "short" || w == "long" || w == "lengthy") {
			if w == "short" {
				return shortRuntime, 1 // "a short comedy"
			}
			return longRuntime, 1 // "a long drama"
		}
	}
	switch w {
	case "short", "shorter", "shortish", "quick", "quicker":
		if next == "film" || next == "films" || next == "movies" || w == "short" && next == "story" {
			return "", 0 // "short films" is the genre; "short story" a topic
		}
		if prev == "something" || prev == "anything" || prev == "it" || prev == "a" && (next == "one" || next == "watch") ||
			w == "shorter" || w == "shortish" || (w == "quick" || w == "quicker") && (next == "watch" || next == "one") ||
			end && (prev == "" || prev == "nice" || prev == "and" || prev == "more" || prev == "bit") {
			return shortRuntime, 1
		}
	case "long", "longer", "lengthy", "epic":
		if w == "epic" && next != "length" {
			return "", 0
		}
		if prev == "how" || prev == "as" || prev == "so" || prev == "too" || prev == "not" || next == "time" || next == "ago" || next == "as" {
			return "", 0
		}
		if prev == "something" || prev == "anything" || titleNouns[next] || next == "one" || next == "ones" ||
			w == "longer" && (end || next == "ones") {
			return longRuntime, 1
		}
	}
	return "", 0
}

// durationAt reads "2 hours", "90 minutes", "an hour and a half", "two
// hours" at toks[i], in minutes.
func durationAt(toks []token, i int) (int, int) {
	if i >= len(toks) || toks[i].brk != 0 {
		return 0, 0
	}
	if matchSeq(toks, i, "an hour and a half") {
		return 90, 5
	}
	if matchSeq(toks, i, "an hour") || matchSeq(toks, i, "one hour") {
		return 60, 2
	}
	if matchSeq(toks, i, "two and a half hours") {
		return 150, 5
	}
	n, ok := number(toks[i].w)
	if !ok || i+1 >= len(toks) || toks[i+1].brk != 0 {
		return 0, 0
	}
	switch u := toks[i+1].w; {
	case hourUnits[u] && n <= 5:
		return n * 60, 2
	case minuteUnits[u] && n >= 20 && n <= 400:
		return n, 2
	}
	return 0, 0
}

// runtimeFirst holds the first word of every runtime phrase.
var runtimeFirst = func() map[string]bool {
	f := set("short", "shorter", "shortish", "quick", "quicker", "long", "longer", "lengthy", "epic")
	for _, l := range [][][]string{runtimeUpper, runtimeLower, notLongList} {
		for _, ws := range l {
			f[ws[0]] = true
		}
	}
	return f
}()
