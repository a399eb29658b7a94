package offline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/memento-ai/memento"
)

// UnderstandRequest reads a user's turn as a change of the thread's active
// context. It never guesses: a phrase the rules do not understand sets
// nothing, and a turn in which nothing was understood comes back with
// Recognised false so the agent asks instead of searching.
func (m *Model) UnderstandRequest(ctx context.Context, in memento.UnderstandInput) (*memento.Understanding, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("understand request: %w", err)
	}
	return m.understand(in), nil
}

// request is everything the rules read from one turn, before it is turned
// into an Understanding.
type request struct {
	genres    []string // positive genres, in order, without repeats
	negGenres []string // genres the turn turns down
	excluded  []string // the genres it turns down outright (not "not only X")
	anyGenre  bool     // "any genre": drop the genre constraint
	people    []string
	negPeople []string
	years     yearSpec
	titleType string
	count     int
	freeText  string
	adult     *bool
	reject    bool
	followUp  bool
	additive  bool
	asks      bool // asks for titles without saying which ("recommend something")
}

func (m *Model) understand(in memento.UnderstandInput) *memento.Understanding {
	msg := strings.TrimSpace(in.Message)
	all := tokenize(msg)
	u := &memento.Understanding{}
	if len(all) == 0 {
		return u
	}
	// References to titles come first: the words they take up are not read
	// again as counts, topics, genres or a rejection of everything shown.
	misspelt := m.misspeltPeople(all)
	refs := m.findRefs(msg, all, in.LastShown, misspelt)
	toks := maskTokens(all, refs.mask)
	if len(refs.about) == 0 && len(refs.named) > 0 && len(refs.like)+len(refs.seen)+len(refs.reject) == 0 && isQuestion(msg, all) {
		refs.about = refs.named // "is the second one a comedy?"
	}
	if len(refs.about) > 0 && len(refs.like)+len(refs.seen)+len(refs.reject) == 0 {
		// "Tell me more about the first one": an answer about that title
		// from the catalog, with no search.
		u.Recognised = true
		u.About = refs.about
		if strings.HasSuffix(msg, "?") {
			u.Question = msg
		}
		return u
	}
	soft, softMask, moodFixes := m.findSoft(msg, toks)
	// "Is it a comedy?" asks about a title just shown: the genre in it is
	// not a constraint. A turn that also says what was seen or liked, or
	// goes on after its question with a wish ("Is that the one with the
	// stalker? It was a little confusing for me"), is read in full.
	if len(toks) > 0 && isTitleQuestion(toks) && !hasAny(toks, requestList) &&
		len(refs.like)+len(refs.seen)+len(refs.reject) == 0 && (len(soft) == 0 || strings.HasSuffix(msg, "?")) &&
		!(len(in.LastShown) > 0 && seenShown(toks)) {
		u.Recognised = true
		u.Question = msg
		return u
	}
	toks = maskTokens(toks, softMask)
	corrections := append(moodFixes, m.correctTypos(toks)...)
	r := m.read(msg, toks)
	corrections = append(corrections, applyMisspelt(msg, all, misspelt, &r)...)
	if !r.reject && len(in.LastShown) > 0 && len(refs.seen)+len(refs.like)+len(refs.reject) == 0 && seenShown(toks) {
		// "I have both on dvd", "lol, I have": the titles just shown are
		// known, so others are wanted under the same request. After a
		// title named ("I've seen Inception, it was great") the pointer
		// means that title.
		r.reject = true
	}
	if len(r.people) > 0 && len(in.LastShown) > 0 && !r.asks && !hasWish(toks) &&
		(seenShown(toks) || len(refs.seen)+len(refs.like) > 0) {
		// "With Bruce Willis, that one is pretty good": a person named in
		// a remark about what was shown, with no wish for more, says which
		// title is meant (or what the user thinks of it). It asks for
		// nothing new, and the people asked for before stay in force.
		r.people = nil
	}
	cur := in.Context

	if len(r.genres) > 0 {
		u.Genres = r.genres
		if r.additive {
			u.Genres = unionFold(cur.Genres, r.genres)
		}
	} else if r.anyGenre {
		u.Genres = []string{}
	} else if len(r.negGenres) > 0 && len(cur.Genres) > 0 {
		// "not only comedies", "no horror": take what the user turned down
		// out of the genres in force.
		rest := slices.DeleteFunc(slices.Clone(cur.Genres), func(g string) bool {
			return slices.ContainsFunc(r.negGenres, func(n string) bool { return strings.EqualFold(n, g) })
		})
		if len(rest) < len(cur.Genres) {
			u.Genres = rest
		}
	}
	if len(r.people) > 0 {
		u.People = r.people
		if r.additive {
			u.People = unionFold(cur.People, r.people)
		}
	} else if len(r.negPeople) > 0 && len(cur.People) > 0 {
		// "not Tom Hanks": take them out of the people in force.
		rest := slices.DeleteFunc(slices.Clone(cur.People), func(p string) bool {
			return slices.ContainsFunc(r.negPeople, func(n string) bool { return strings.EqualFold(n, p) })
		})
		if len(rest) < len(cur.People) {
			u.People = rest
		}
	}
	if len(r.excluded) > 0 {
		u.ExcludeGenres = r.excluded
	}
	u.TitleType = r.titleType
	if r.years.min != 0 {
		u.MinYear = intPtr(r.years.min)
	}
	if r.years.max != 0 {
		u.MaxYear = intPtr(r.years.max)
	}
	u.YearShift = r.years.shift
	u.FreeText = r.freeText
	u.IsAdult = r.adult
	u.Count = r.count
	u.Reject = r.reject
	u.Like, u.Seen, u.RejectTitles = refs.like, refs.seen, refs.reject
	u.Soft, u.Corrections = soft, corrections
	reset := hasAny(toks, resetList)
	if reset {
		u.Reject = false // "forget that, something else" starts afresh
	}

	constrained := u.Genres != nil || u.ExcludeGenres != nil || u.People != nil || u.TitleType != "" || u.MinYear != nil ||
		u.MaxYear != nil || u.YearShift != "" || u.FreeText != "" || u.IsAdult != nil || u.Count > 0 ||
		len(u.Like) > 0 || len(u.Seen) > 0 || len(u.RejectTitles) > 0 || len(u.Soft) > 0
	switch {
	case u.Reject || constrained:
		u.Search, u.Recognised = true, true
	case reset:
		// "Start over" alone empties the context; a search with nothing in
		// force answers it, as Replace always comes with a search.
		u.Search, u.Recognised = true, true
	case refs.likeAll:
		// "More like those" with nothing shown to point at.
		u.Search, u.Recognised = true, true
	case isHelpQuestion(toks):
		u.Recognised = true
		u.Question = msg
	case r.asks:
		u.Search, u.Recognised = true, true
	case len(r.negGenres) > 0 || len(r.negPeople) > 0:
		// A turn that only turns something down is understood; with
		// nothing in force there is nothing to search again.
		u.Recognised = true
		u.Search = cur.HasConstraints()
	case isSmallTalk(toks):
		u.Recognised = true
		if strings.HasSuffix(msg, "?") {
			u.Question = msg
		}
	}
	hadContext := cur.HasConstraints() || len(cur.ExcludedTitleIDs) > 0
	switch {
	case refs.likeNew || reset:
		// A title not shown is a new anchor, and "start over" says so.
		u.Replace = true
	case r.reject || !u.Search || !hadContext:
	case !r.additive && topicChange(toks, r, cur):
		u.Replace = true
	default:
		u.Replace = !r.followUp && (len(r.genres) > 0 || len(r.people) > 0 || r.freeText != "")
	}
	return u
}

// resetList start a new request: the constraints in force are dropped even
// when the turn names nothing else.
var resetList = compile([]string{
	"start over", "start again", "start fresh", "start afresh", "from scratch", "forget that",
	"forget it", "forget all that", "forget everything", "forget about that", "forget those",
	"scratch that", "never mind", "nevermind", "new search", "new request", "reset",
	"clear everything", "change of plan", "change of plans", "something completely different",
	"different topic", "change the subject", "change topic", "on second thought", "on second thoughts",
})

// changeList mark a change of mind that replaces the request when it
// names something new: "actually I'm in the mood for a scary movie",
// "westerns instead".
var changeList = compile([]string{"actually", "instead", "rather", "now i want", "now i'd like", "how about something", "what about something"})

// topicChange reports a turn that replaces the request in force although
// it reads like a follow-up: a change cue with a new genre, person or
// topic, or a new genre together with a new era ("horror from the 80s"
// after comedies from 2010 on).
func topicChange(toks []token, r request, cur memento.ActiveContext) bool {
	newGenre := len(r.genres) > 0 && !subsetFold(r.genres, cur.Genres)
	newPeople := len(r.people) > 0 && !subsetFold(r.people, cur.People)
	newTopic := r.freeText != "" && !strings.EqualFold(r.freeText, cur.FreeText)
	if (newGenre || newPeople || newTopic) && hasAny(toks, changeList) {
		return true
	}
	newEra := r.years.min != 0 && (cur.MinYear == nil || *cur.MinYear != r.years.min) ||
		r.years.max != 0 && (cur.MaxYear == nil || *cur.MaxYear != r.years.max)
	return newGenre && newEra && len(cur.Genres) > 0
}

// subsetFold reports whether every item of a is in b, ignoring case.
func subsetFold(a, b []string) bool {
	for _, v := range a {
		if !slices.ContainsFunc(b, func(x string) bool { return strings.EqualFold(x, v) }) {
			return false
		}
	}
	return true
}

// maskTokens returns toks without the masked ones. The word after a gap
// gets a clause break, so no phrase is matched across it.
func maskTokens(toks []token, mask []bool) []token {
	any := false
	for _, v := range mask {
		any = any || v
	}
	if !any {
		return toks
	}
	out := make([]token, 0, len(toks))
	gap := false
	for i, t := range toks {
		if mask[i] {
			gap = true
			continue
		}
		if gap && t.brk == 0 {
			t.brk = ','
		}
		gap = false
		out = append(out, t)
	}
	return out
}

// isQuestion reports a turn that asks something: a question mark, or a
// question word first.
func isQuestion(msg string, toks []token) bool {
	if strings.HasSuffix(msg, "?") {
		return true
	}
	switch toks[0].w {
	case "is", "was", "does", "did", "who", "what", "what's", "whats", "how", "when", "where", "which", "are":
		return true
	}
	return false
}

// read applies every rule to the turn.
func (m *Model) read(msg string, toks []token) request {
	var r request
	for _, h := range m.findGenres(toks) {
		for _, g := range h.genres {
			if h.negated {
				r.negGenres = appendNew(r.negGenres, g)
				if !h.soft {
					r.excluded = appendNew(r.excluded, g)
				}
			} else {
				r.genres = appendNew(r.genres, g)
			}
		}
	}
	// A genre both asked for and turned down ("horror but not too
	// scary") stays asked for; one only turned down is dropped.
	r.negGenres = slices.DeleteFunc(r.negGenres, func(g string) bool { return slices.Contains(r.genres, g) })
	r.excluded = slices.DeleteFunc(r.excluded, func(g string) bool { return slices.Contains(r.genres, g) })
	r.anyGenre = hasAny(toks, anyGenreList)
	people := m.findPeople(toks)
	for _, p := range people {
		if p.negated {
			r.negPeople = appendNew(r.negPeople, p.name)
		} else {
			r.people = appendNew(r.people, p.name)
		}
	}
	r.years = m.findYears(msg, toks)
	r.titleType = titleType(toks)
	r.count = findCount(toks)
	r.freeText = freeText(toks, people)
	r.adult = adultFlag(toks)
	r.reject = isReject(toks)
	r.followUp = isFollowUp(toks)
	r.additive = hasAny(toks, additiveList)
	r.asks = hasAny(toks, requestList)
	return r
}

// Phrase lists split into words once.
var (
	requestList       = compile(requestPhrases)
	rejectList        = compile(rejectPhrases)
	rejectVerbList    = compile(rejectVerbs)
	shownPointerList  = compile(shownPointers)
	followUpStartList = compile(followUpStarts)
	followUpList      = compile(followUpAnywhere)
	additiveList      = compile(additiveCues)
	helpList          = compile(helpQuestions)
	titleQuestionList = compile(titleQuestionStarts)
	adultList         = compile(adultWords)
	anyGenreList      = compile([]string{"any genre", "all genres", "whatever genre", "any kind", "doesn't matter what genre", "no particular genre", "genre doesn't matter"})
	topicTable        = func() *phraseTable[string] {
		t := newPhraseTable[string]()
		for _, w := range topicWords {
			t.add(w, strings.Join(words(w), " "))
		}
		return t
	}()
)

func compile(phrases []string) [][]string {
	out := make([][]string, 0, len(phrases))
	for _, p := range phrases {
		if ws := words(p); len(ws) > 0 {
			out = append(out, ws)
		}
	}
	return out
}

// hasAny reports whether any phrase occurs in toks.
func hasAny(toks []token, list [][]string) bool {
	for i := range toks {
		if matchAny(toks, i, list) > 0 {
			return true
		}
	}
	return false
}

// matchAny returns the length of the first phrase of list at toks[i], or 0.
func matchAny(toks []token, i int, list [][]string) int {
	for _, ws := range list {
		if matchAt(toks, i, ws) {
			return len(ws)
		}
	}
	return 0
}

// isReject reports whether the turn turns down or has already seen the
// titles just shown.
func isReject(toks []token) bool {
	if len(toks) == 0 {
		return false
	}
	if toks[0].w == "no" && (len(toks) == 1 || toks[1].brk != 0) && !saysUnseen(toks) {
		return true // a bare "No." (but "No, never seen it" answers a question)
	}
	for i := range toks {
		if n := matchAny(toks, i, rejectList); n > 0 {
			w := toks[i].w
			seen := w == "seen" || w == "watched" || w == "saw" || w == "already"
			if seen && unseenBefore(toks, i) {
				continue
			}
			if w == "others" && i > 0 && toks[i].brk == 0 && toks[i-1].w == "the" {
				continue // "like the others"
			}
			if w == "pass" && i+1 < len(toks) && toks[i+1].brk == 0 {
				continue // "pass the popcorn"; "I'll pass" ends its clause
			}
			return true
		}
		if n := matchAny(toks, i, rejectVerbList); n > 0 {
			j := i + n
			for j < len(toks) && toks[j].brk == 0 && (toks[j].w == "really" || toks[j].w == "much") {
				j++
			}
			if j >= len(toks) || toks[j].brk != 0 {
				continue
			}
			if k := matchAny(toks, j, shownPointerList); k > 0 {
				end := j + k
				if end >= len(toks) || toks[end].brk != 0 || pointerTail[toks[end].w] {
					return true
				}
			}
		}
	}
	return false
}

// saysUnseen reports "never seen", "haven't seen", "I have not" and the
// like: the user has not seen a title.
func saysUnseen(toks []token) bool {
	for i, t := range toks {
		if !unseenMarkers[t.w] {
			continue
		}
		if i+1 == len(toks) || toks[i+1].brk != 0 {
			return true // "I have not."
		}
		for j := i + 1; j < len(toks) && j <= i+3 && toks[j].brk == 0; j++ {
			switch toks[j].w {
			case "seen", "watched", "heard", "saw", "see", "watch":
				return true
			}
		}
	}
	return false
}

// pointerTail may follow a pointer to the titles shown ("them either",
// "that one at all").
var pointerTail = set("one", "ones", "at", "all", "much", "either", "very", "too", "really", "so",
	"though", "anyway", "lol", "please", "movie", "movies", "film", "films", "show", "shows",
	"suggestion", "suggestions", "and", "but", "i", "you", "can", "could", "any", "to")

// unseenBefore reports a "haven't", "never" or "not" just before a "seen"
// phrase, which makes it mean the opposite.
func unseenBefore(toks []token, i int) bool {
	for j := i - 1; j >= 0 && j >= i-3; j-- {
		if toks[j+1].brk != 0 {
			return false
		}
		if unseenMarkers[toks[j].w] {
			return true
		}
	}
	return false
}

// interjections may open a follow-up ("OK, now westerns").
var interjections = set("ok", "okay", "great", "cool", "thanks", "thank", "you", "nice", "hmm",
	"alright", "well", "oh", "so", "right", "perfect", "awesome", "yes", "yeah", "sure", "hey",
	"hi", "fine", "good", "um", "uh", "please")

// isFollowUp reports whether the turn modifies the last request rather
// than starting a new one.
func isFollowUp(toks []token) bool {
	start := 0
	for start < len(toks) && interjections[toks[start].w] {
		start++
	}
	if start > 0 && start < len(toks) && toks[start].brk == 0 {
		start = 0 // "thanks you" was not an interjection clause after all
	}
	if start < len(toks) && matchAny(toks, start, followUpStartList) > 0 {
		return true
	}
	for i := range toks {
		if matchAny(toks, i, followUpList) > 0 {
			return true
		}
		if toks[i].w == "too" && (i+1 == len(toks) || toks[i+1].brk != 0) {
			return true
		}
	}
	return false
}

// isHelpQuestion reports a question about the agent itself, or a bare
// call for help ("help", "I need help").
func isHelpQuestion(toks []token) bool {
	if hasAny(toks, helpList) {
		return true
	}
	bare := false
	for _, t := range toks {
		switch t.w {
		case "help":
			bare = true
		case "please", "me", "i", "need", "some", "can", "you", "hi", "hello", "hey":
		default:
			return false
		}
	}
	return bare
}

// isTitleQuestion reports a question about a title just shown.
func isTitleQuestion(toks []token) bool {
	for i := range toks {
		if i > 0 && toks[i].brk == 0 {
			continue // only at the start of a clause
		}
		if matchAny(toks, i, titleQuestionList) > 0 {
			return true
		}
	}
	return false
}

// isSmallTalk reports a turn made only of greetings, thanks and
// acknowledgements ("ok, sounds good", "I'll check out Heat, thanks").
// Capitalised words inside a sentence are taken as a title's name.
func isSmallTalk(toks []token) bool {
	signal := false
	for i, t := range toks {
		switch {
		case t.paren:
		case smallTalkWords[t.w]:
			signal = signal || signalWords[t.w]
		case i > 0 && t.brk == 0 && startsUpper(t.raw):
		default:
			return false
		}
	}
	return signal
}

func startsUpper(s string) bool {
	for _, r := range s {
		return unicode.IsUpper(r) || unicode.IsDigit(r)
	}
	return false
}

// Title types by the nouns that name them.
var (
	movieNouns  = set("movie", "movies", "film", "films", "flick", "flicks")
	seriesNouns = set("series", "miniseries", "sitcom", "sitcoms", "docuseries", "television", "episodes", "episode")
	// showObjects after "show" make it a verb: "show me", "show some
	// comedies".
	showObjects = set("me", "us", "them", "him", "her", "you", "some", "a", "an", "the", "what",
		"something", "anything", "more", "other", "others", "different", "only", "just", "all",
		"every", "my", "your", "any", "those", "these", "another", "exactly", "top", "movies",
		"films", "me", "how", "which", "everything")
)

// titleType reads "movie" or "tvSeries" from the nouns of the turn. Both
// named ("movies or shows") sets nothing unless "only" picks one; a type
// turned down directly ("no series") picks the other.
func titleType(toks []token) string {
	var movie, series, onlyMovie, onlySeries, noMovie, noSeries bool
	for i := range toks {
		kind := typeAt(toks, i)
		if kind == "" {
			continue
		}
		only := matchSeq(toks, i-1, "only") && toks[i].brk == 0 || matchSeq(toks, i+1, "only") && (i+1 < len(toks) && toks[i+1].brk == 0) ||
			matchSeq(toks, i-1, "just") && toks[i].brk == 0
		direct := directlyDenied(toks, i)
		negated := direct || negatedAt(toks, i, 1)
		switch {
		case kind == memento.TypeMovie && direct:
			noMovie = true
		case kind == memento.TypeTVSeries && direct:
			noSeries = true
		case negated:
		case kind == memento.TypeMovie:
			movie, onlyMovie = true, onlyMovie || only
		default:
			series, onlySeries = true, onlySeries || only
		}
	}
	switch {
	case movie && !series, onlyMovie && !onlySeries:
		return memento.TypeMovie
	case series && !movie, onlySeries && !onlyMovie:
		return memento.TypeTVSeries
	case !movie && !series && noSeries && !noMovie:
		return memento.TypeMovie
	case !movie && !series && noMovie && !noSeries:
		return memento.TypeTVSeries
	}
	return ""
}

// directlyDenied reports "no series", "not a movie", "without films".
func directlyDenied(toks []token, i int) bool {
	j := i - 1
	for j >= 0 && toks[j+1].brk == 0 && (toks[j].w == "a" || toks[j].w == "any" || toks[j].w == "the" || toks[j].w == "tv") {
		j--
	}
	if j < 0 || toks[j+1].brk != 0 {
		return false
	}
	switch toks[j].w {
	case "no", "not", "without", "non":
		return true
	}
	return false
}

// typeAt returns the title type the noun at toks[i] names, or "".
func typeAt(toks []token, i int) string {
	w := toks[i].w
	prev, next := "", ""
	if i > 0 && toks[i].brk == 0 {
		prev = toks[i-1].w
	}
	if i+1 < len(toks) && toks[i+1].brk == 0 {
		next = toks[i+1].w
	}
	switch {
	case w == "motion":
		if next == "picture" || next == "pictures" {
			return memento.TypeMovie
		}
		return ""
	case movieNouns[w]:
		if next == "series" || next == "franchise" {
			return "" // "the Halloween movie series" is about films, read at "series"
		}
		return memento.TypeMovie
	case w == "series" && movieNouns[prev]:
		return memento.TypeMovie
	case w == "tv" || w == "television":
		if next == "movie" || next == "movies" || next == "film" || next == "films" || next == "show" ||
			next == "shows" || next == "series" || next == "sitcom" || next == "sitcoms" {
			return "" // read at the noun
		}
		return memento.TypeTVSeries
	case seriesNouns[w]:
		return memento.TypeTVSeries
	case w == "show" || w == "shows":
		if prev == "tv" || prev == "television" {
			return memento.TypeTVSeries
		}
		if showObjects[next] {
			return "" // "show me comedies" is a verb
		}
		if next != "" {
			if _, _, ok := fullGenreTable.match(toks, i+1); ok {
				return "" // "show comedies"
			}
			if _, ok := number(next); ok {
				return "" // "show 3 westerns"
			}
		}
		return memento.TypeTVSeries
	}
	return ""
}

// freeText reads the topic of the turn: the words after "about", "set in"
// or "based on", or a subject from the topic lexicon ("christmas", "time
// travel").
func freeText(toks []token, people []personHit) string {
	inPerson := func(j int) bool {
		for _, p := range people {
			if j >= p.at && j < p.at+p.n {
				return true
			}
		}
		return false
	}
	for i, t := range toks {
		lead := 0
		switch {
		case t.w == "about":
			if i > 0 && t.brk == 0 {
				switch toks[i-1].w {
				case "what", "how", "what's", "whats", "talking", "think", "care", "forget", "sure", "know",
					"is", "was", "it's", "its", "that's", "thats", "one", "are", "were":
					continue // "it is about a man": describes a title
				}
			}
			lead = 1
		case matchSeq(toks, i, "set in"), matchSeq(toks, i, "based on"), matchSeq(toks, i, "takes place in"),
			matchSeq(toks, i, "involving"), matchSeq(toks, i, "centered on"), matchSeq(toks, i, "centred on"):
			if t.w == "takes" {
				lead = 3
			} else if t.w == "involving" {
				lead = 1
			} else {
				lead = 2
			}
		default:
			continue
		}
		start := i + lead
		if start >= len(toks) || toks[start].brk != 0 {
			continue
		}
		if _, ok := number(toks[start].w); ok {
			continue // "about 5 movies" is a count
		}
		var topic []string
		for j := start; j < len(toks) && j < start+6; j++ {
			if j > start && toks[j].brk != 0 {
				break
			}
			if _, _, _, ok := yearExpr(toks, j); ok || inPerson(j) {
				break
			}
			if j > start && freeTextStops[toks[j].w] && !(toks[j].w == "and" && j+1 < len(toks) && !freeTextStops[toks[j+1].w] && toks[j+1].brk == 0) {
				break
			}
			topic = append(topic, toks[j].w)
		}
		for len(topic) > 0 && (topic[0] == "a" || topic[0] == "an" || topic[0] == "the" || topic[0] == "some" || topic[0] == "any") {
			topic = topic[1:]
		}
		for len(topic) > 0 && stopwords[topic[len(topic)-1]] {
			topic = topic[:len(topic)-1]
		}
		content := false
		for _, w := range topic {
			if !stopwords[w] {
				content = true
			}
		}
		if content {
			return strings.Join(topic, " ")
		}
	}
	var topics []string
	for i := 0; i < len(toks); {
		v, n, ok := topicTable.match(toks, i)
		if !ok {
			i++
			continue
		}
		if negatedAt(toks, i, n) || (v == "christmas" && i > 0 && (toks[i-1].w == "merry" || toks[i-1].w == "happy")) ||
			(i > 0 && toks[i].brk == 0 && startsUpper(toks[i].raw) && !holidays[v]) {
			// A capitalised topic inside a sentence is a title: "I like Aliens".
			i += n
			continue
		}
		if !slices.Contains(topics, v) {
			topics = append(topics, v)
		}
		i += n
	}
	return strings.Join(topics, " ")
}

// holidays are topics written with a capital letter.
var holidays = set("christmas", "halloween", "thanksgiving", "easter")

// adultFlag reads an explicit ask for adult titles, or an explicit refusal.
func adultFlag(toks []token) *bool {
	for i := range toks {
		if n := matchAny(toks, i, adultList); n > 0 {
			v := !negatedAt(toks, i, n)
			return &v
		}
	}
	return nil
}

func intPtr(v int) *int { return &v }

func appendNew(list []string, v string) []string {
	if slices.Contains(list, v) {
		return list
	}
	return append(list, v)
}

// unionFold returns a followed by the items of b it lacks, comparing case
// insensitively.
func unionFold(a, b []string) []string {
	out := slices.Clone(a)
	for _, v := range b {
		if !slices.ContainsFunc(out, func(x string) bool { return strings.EqualFold(x, v) }) {
			out = append(out, v)
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// wishWords ask for titles beyond those being talked about: "more with
// Bruce Willis", "something else with him", "now Keanu Reeves please".
var wishWords = set("more", "another", "something", "anything", "others", "other", "else", "movies", "films", "shows", "series",
	"please", "now", "instead", "next", "try", "maybe")

func hasWish(toks []token) bool {
	for _, t := range toks {
		if wishWords[t.w] {
			return true
		}
	}
	return false
}
