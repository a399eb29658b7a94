package offline

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/memento-ai/memento"
)

// ReadActions reads the actions a user reports in a message and returns
// them on catalog titles (Options.Titles resolves them; without it the
// model reads none): "I watched Heat and loved it" gives watched and
// liked Heat. A short answer is read with the question it answers, as
// facts are: "Yes" to "Have you seen Heat?" reports Heat as watched. The
// rules are deterministic:
//
//   - a trigger phrase ("watched", "saw", "have seen", "finished", "loved",
//     "liked", "enjoyed", "hated", "didn't like", "gave up on", "stopped
//     watching", "want to watch", "add ... to my watchlist", "skip",
//     "gave X 4 stars", ...) is followed by a title; the longest run of up
//     to nine words after it that resolve names a catalog title, skipping
//     "the movie" and the like, and stopping at a comma or the end of the
//     sentence ("I watched Pride and Prejudice and loved it" finds Pride
//     and Prejudice);
//   - "it", "that" or "this" after a trigger, and verdicts such as "it was
//     great" or "it was boring", refer to the title named last; a verdict
//     after a title ("Heat was great") refers to that title;
//   - several titles joined by "and" or commas share the trigger ("I
//     watched Heat and Casino");
//   - a negation just before a trigger ("haven't watched", "never saw",
//     "don't want to watch") cancels it, and a question reports nothing;
//   - a single common word ("it", "up", "her") is never a title, nor is a
//     genre word ("I like horror" is about a kind of film, however many
//     films are called Horror);
//   - when the user writes capitals at all, a title starts with one ("I
//     enjoyed the trip" names no film), and in an all-lower-case message a
//     like or dislike needs a title of two words or more ("i loved heat" is
//     left alone, "i watched heat" is read); a quoted title is always read.
func (m *Model) ReadActions(ctx context.Context, in memento.ActionInput) ([]memento.ReportedAction, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("read actions: %w", err)
	}
	if m.titles == nil {
		return []memento.ReportedAction{}, nil
	}
	out := readActions(in.Message, m.titles)
	if q := lastQuestion(in.Asked); q != "" && len(out) == 0 {
		for _, s := range answerStatements(q, in.Message, false) {
			out = append(out, readActions(s, m.titles)...)
		}
	}
	if out == nil {
		out = []memento.ReportedAction{}
	}
	return out, nil
}

// readActions runs the rules over one text.
func readActions(text string, resolve func(string) (*memento.Title, bool)) []memento.ReportedAction {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	text = strings.NewReplacer("’", "'", "‘", "'", "“", `"`, "”", `"`).Replace(text)
	r := &actReader{resolve: resolve, seen: map[string]bool{}, caps: strings.IndexFunc(text, unicode.IsUpper) >= 0}
	start := 0
	for _, loc := range append(actSentenceEnd.FindAllStringIndex(text, -1), []int{len(text), len(text)}) {
		sentence, end := text[start:loc[0]], text[loc[0]:loc[1]]
		start = loc[1]
		if strings.Contains(end, "?") {
			continue
		}
		r.sentence(actTokenize(sentence))
	}
	return r.actions
}

// actPhrase is a trigger: the words that announce an action and the event it
// makes. Before says the title comes before the words ("Heat was great").
type actPhrase struct {
	words  []string
	typ    memento.EventType
	rating bool // "gave X 4 stars": the value follows the title
}

func actPh(text string, typ memento.EventType) actPhrase {
	return actPhrase{words: strings.Fields(text), typ: typ}
}

// actTriggers announce a title after them, longest first where one is the
// start of another.
var actTriggers = []actPhrase{
	actPh("didn't like", memento.EventDisliked), actPh("did not like", memento.EventDisliked),
	actPh("didn't enjoy", memento.EventDisliked), actPh("did not enjoy", memento.EventDisliked),
	actPh("couldn't stand", memento.EventDisliked), actPh("could not stand", memento.EventDisliked),
	actPh("didn't finish", memento.EventAbandoned), actPh("did not finish", memento.EventAbandoned),
	actPh("couldn't finish", memento.EventAbandoned), actPh("could not finish", memento.EventAbandoned),
	actPh("gave up on", memento.EventAbandoned), actPh("stopped watching", memento.EventAbandoned),
	actPh("walked out of", memento.EventAbandoned), actPh("turned off", memento.EventAbandoned),
	actPh("finished watching", memento.EventFinished), actPh("finished", memento.EventFinished),
	actPh("don't like", memento.EventDisliked), actPh("do not like", memento.EventDisliked),
	actPh("like to watch", memento.EventWatchlisted), actPh("love to watch", memento.EventWatchlisted),
	actPh("want to see", memento.EventWatchlisted), actPh("want to watch", memento.EventWatchlisted), actPh("wanna watch", memento.EventWatchlisted),
	actPh("planning to watch", memento.EventWatchlisted), actPh("plan to watch", memento.EventWatchlisted),
	actPh("going to watch", memento.EventWatchlisted), actPh("would like to watch", memento.EventWatchlisted),
	actPh("add", memento.EventWatchlisted), actPh("put", memento.EventWatchlisted),
	actPh("rewatched", memento.EventWatched), actPh("re-watched", memento.EventWatched),
	actPh("watched", memento.EventWatched), actPh("saw", memento.EventWatched),
	actPh("have seen", memento.EventWatched), actPh("'ve seen", memento.EventWatched), actPh("just seen", memento.EventWatched),
	actPh("skipped", memento.EventSkipped), actPh("skip", memento.EventSkipped),
	actPh("loved", memento.EventLiked), actPh("love", memento.EventLiked), actPh("liked", memento.EventLiked),
	actPh("like", memento.EventLiked), actPh("enjoyed", memento.EventLiked), actPh("adored", memento.EventLiked),
	actPh("hated", memento.EventDisliked), actPh("hate", memento.EventDisliked), actPh("disliked", memento.EventDisliked),
	actPh("detested", memento.EventDisliked),
	{words: []string{"gave"}, typ: memento.EventRated, rating: true},
	{words: []string{"give"}, typ: memento.EventRated, rating: true},
	{words: []string{"rate"}, typ: memento.EventRated, rating: true},
	{words: []string{"rated"}, typ: memento.EventRated, rating: true},
}

// actVerdicts follow "it was" or a title and "was"/"is".
var actVerdicts = map[string]memento.EventType{
	"great": memento.EventLiked, "amazing": memento.EventLiked, "awesome": memento.EventLiked,
	"fantastic": memento.EventLiked, "excellent": memento.EventLiked, "brilliant": memento.EventLiked,
	"wonderful": memento.EventLiked, "good": memento.EventLiked, "superb": memento.EventLiked,
	"incredible": memento.EventLiked, "perfect": memento.EventLiked, "fun": memento.EventLiked,
	"terrible": memento.EventDisliked, "awful": memento.EventDisliked, "boring": memento.EventDisliked,
	"bad": memento.EventDisliked, "horrible": memento.EventDisliked, "dull": memento.EventDisliked,
	"disappointing": memento.EventDisliked, "rubbish": memento.EventDisliked, "garbage": memento.EventDisliked,
	"overrated": memento.EventDisliked, "meh": memento.EventDisliked, "dreadful": memento.EventDisliked,
}

// actNegations before a trigger cancel it ("I haven't watched Heat").
var actNegations = map[string]bool{
	"not": true, "never": true, "didn't": true, "haven't": true, "hasn't": true, "don't": true,
	"won't": true, "wouldn't": true, "can't": true, "cannot": true, "no": true, "hadn't": true,
	"didnt": true, "havent": true, "dont": true, "wont": true, "yet": false,
}

// actPresentTense actTriggers are also prepositions or wishes ("something like
// Heat", "I'd love more"), so they count only after a subject or an
// adverb.
var actPresentTense = map[string]bool{"like": true, "love": true, "hate": true}

// actSubjects may come before a present-tense trigger.
var actSubjects = map[string]bool{
	"i": true, "we": true, "really": true, "also": true, "so": true, "totally": true, "absolutely": true,
	"still": true, "just": true, "both": true, "do": true, "definitely": true, "honestly": true, "actually": true,
}

// actPronouns stand for the title named last ("loved it").
var actPronouns = map[string]bool{"it": true, "that": true, "this": true, "them": true, "both": true}

// actNotTitles are words a title span may not be made of alone, unless
// actCapitalised inside the sentence ("I watched It"): ResolveTitle would find
// films called "It", "Her" or "Up" in ordinary sentences.
var actNotTitles = map[string]bool{
	"it": true, "that": true, "this": true, "them": true, "her": true, "him": true, "us": true, "me": true,
	"you": true, "one": true, "up": true, "a": true, "an": true, "the": true, "movie": true, "film": true,
	"show": true, "series": true, "something": true, "anything": true, "everything": true, "all": true,
	"some": true, "more": true, "again": true, "yesterday": true, "today": true, "tonight": true,
	"last": true, "night": true, "too": true, "so": true, "very": true, "really": true, "much": true,
	"lot": true, "there": true, "here": true, "what": true, "which": true, "those": true, "these": true,
	"to": true, "my": true, "list": true, "watchlist": true, "and": true, "or": true, "but": true,
	"with": true, "on": true, "in": true, "of": true, "for": true, "at": true, "by": true,
}

// actFillers may come between a trigger and the title ("watched the movie
// Heat") and are skipped.
var actFillers = [][]string{{"the", "movie"}, {"the", "film"}, {"the", "show"}, {"the", "series"}, {"movie"}, {"film"}}

// actMaxTitleWords bounds how many words a title may span.
const actMaxTitleWords = 9

// actSentenceEnd ends a sentence: a question is left alone ("have you seen
// Heat?" reports nothing).
var actSentenceEnd = regexp.MustCompile(`[.!?;\n]+(\s|$)`)

// actWord is one token of a sentence: its text as written (edges trimmed of
// punctuation), lower-cased, and whether a comma or quote closed it.
type actWord struct {
	text, low string
	stop      bool
	quoted    bool // opened a quote: a title the user marked
}

type actReader struct {
	// caps is true when the user writes capitals at all: then a title
	// must start with one ("I enjoyed the trip" names no film).
	caps    bool
	resolve func(string) (*memento.Title, bool)
	last    *memento.Title
	actions []memento.ReportedAction
	seen    map[string]bool
}

func (r *actReader) add(typ memento.EventType, t *memento.Title, value *float64) {
	key := string(typ) + "\x00" + t.ID
	if r.seen[key] {
		return
	}
	r.seen[key] = true
	r.actions = append(r.actions, memento.ReportedAction{Type: typ, Title: t.Title, TitleID: t.ID, Value: value})
}

func actTokenize(s string) []actWord {
	var out []actWord
	for _, f := range strings.Fields(s) {
		stop := strings.ContainsAny(f[len(f)-1:], `,:"`)
		quoted := strings.HasPrefix(f, `"`)
		t := strings.TrimFunc(f, func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '&' && r != '/'
		})
		t = strings.Trim(t, "'")
		if t == "" {
			if len(out) > 0 && stop {
				out[len(out)-1].stop = true
			}
			continue
		}
		out = append(out, actWord{text: t, low: strings.ToLower(t), stop: stop, quoted: quoted})
	}
	return out
}

// sentence reads one sentence's words.
func (r *actReader) sentence(ws []actWord) {
	for i := 0; i < len(ws); {
		p, n := actMatchTrigger(ws, i)
		if n == 0 {
			if adv := r.verdictAfterTitle(ws, i); adv > 0 {
				i += adv
				continue
			}
			i++
			continue
		}
		negated := actNegatedAt(ws, i)
		j := i + n
		// "it"/"that" after the trigger: the title named last.
		if j < len(ws) && actPronouns[ws[j].low] && !actCapitalised(ws[j].text) {
			if !negated && r.last != nil && !p.rating {
				r.add(p.typ, r.last, nil)
			}
			i = j + 1
			continue
		}
		start := actSkipFillers(ws, j)
		t, end := r.title(ws, start, p)
		if t == nil {
			i++
			continue
		}
		// "I watched Heat and Casino", "I loved Heat, Collateral and
		// The Insider": a list of titles shares the trigger.
		found := []*memento.Title{t}
		for len(found) < 5 && end < len(ws) && !p.rating {
			sep := ws[end].low == "and" || ws[end].low == "or"
			if !sep && !ws[end-1].stop {
				break
			}
			next := end
			if sep {
				next++
			}
			t2, end2 := r.title(ws, actSkipFillers(ws, next), p)
			if t2 == nil {
				break
			}
			found, end = append(found, t2), end2
		}
		r.last = found[len(found)-1]
		if !negated {
			for _, t := range found {
				switch {
				case p.rating:
					if v, ok := actRatingAt(ws, end); ok {
						r.add(memento.EventRated, t, &v)
					}
				case p.typ == memento.EventWatchlisted && (p.words[0] == "add" || p.words[0] == "put"):
					if actMentionsList(ws, end) {
						r.add(p.typ, t, nil)
					}
				default:
					r.add(p.typ, t, nil)
				}
			}
		}
		i = end
	}
}

// actMatchTrigger returns the trigger that starts at actWord i, and its length.
func actMatchTrigger(ws []actWord, i int) (actPhrase, int) {
	for _, p := range actTriggers {
		if i+len(p.words) > len(ws) {
			continue
		}
		ok := true
		for k, w := range p.words {
			if ws[i+k].low != w && !(strings.HasPrefix(w, "'") && strings.HasSuffix(ws[i+k].low, w)) {
				ok = false
				break
			}
		}
		if ok && actPresentTense[p.words[0]] && len(p.words) == 1 && (i == 0 || !actSubjects[ws[i-1].low]) {
			continue
		}
		if ok {
			return p, len(p.words)
		}
	}
	return actPhrase{}, 0
}

// actNegatedAt reports whether one of the two words before i negates.
func actNegatedAt(ws []actWord, i int) bool {
	for k := max(0, i-2); k < i; k++ {
		if actNegations[ws[k].low] || strings.HasSuffix(ws[k].low, "n't") {
			return true
		}
	}
	return false
}

func actSkipFillers(ws []actWord, j int) int {
	for _, f := range actFillers {
		if j+len(f) > len(ws) {
			continue
		}
		ok := true
		for k, w := range f {
			if ws[j+k].low != w {
				ok = false
				break
			}
		}
		if ok && j+len(f) < len(ws) {
			return j + len(f)
		}
	}
	return j
}

// title resolves the longest run of words from start that names a title,
// and returns it with the index after it.
func (r *actReader) title(ws []actWord, start int, p actPhrase) (*memento.Title, int) {
	if start >= len(ws) {
		return nil, start
	}
	limit := start
	for limit < len(ws) && limit-start < actMaxTitleWords {
		limit++
		if ws[limit-1].stop {
			break
		}
	}
	if !r.plausible(ws, start, p) {
		return nil, start
	}
	for end := limit; end > start; end-- {
		if p.rating && end < len(ws) {
			// "gave Heat 4 stars": the title ends before the number.
			if _, ok := actRatingAt(ws, end); !ok {
				continue
			}
		}
		if end-start == 1 && actNotTitles[ws[start].low] && !ws[start].quoted && (!actCapitalised(ws[start].text) || start == 0) {
			continue
		}
		if actNotTitles[ws[end-1].low] && !actCapitalised(ws[end-1].text) && !ws[start].quoted {
			continue
		}
		parts := make([]string, 0, end-start)
		for _, w := range ws[start:end] {
			parts = append(parts, w.text)
		}
		if t, ok := r.resolve(strings.Join(parts, " ")); ok {
			return t, end
		}
	}
	return nil, start
}

// actGenreWords are talk about kinds of film, not titles ("I like horror"),
// however many films are called "Horror" or "Romance".
var actGenreWords = map[string]bool{
	"horror": true, "comedy": true, "comedies": true, "romance": true, "romances": true, "action": true,
	"adventure": true, "adventures": true, "drama": true, "dramas": true, "thriller": true, "thrillers": true,
	"documentary": true, "documentaries": true, "animation": true, "anime": true, "western": true, "westerns": true,
	"musical": true, "musicals": true, "crime": true, "mystery": true, "mysteries": true, "fantasy": true,
	"sci-fi": true, "scifi": true, "war": true, "history": true, "biography": true, "sports": true, "family": true,
	"noir": true, "romcoms": true, "romcom": true, "cartoons": true, "movies": true, "films": true, "shows": true,
}

// actSentiments are actTriggers that also take kinds of things ("I like
// horror"), unlike actions on one title ("I watched Heat").
var actSentiments = map[memento.EventType]bool{memento.EventLiked: true, memento.EventDisliked: true}

// plausible reports whether a title may start at actWord start: a quoted one
// always; otherwise its first actWord after an article must not be a genre
// actWord, must be actCapitalised when the user writes capitals, and, in an
// all-lower-case message, a like or dislike needs at least two words
// ("i loved heat" is left alone, "i watched heat" is read).
func (r *actReader) plausible(ws []actWord, start int, p actPhrase) bool {
	if ws[start].quoted {
		return true
	}
	first := start
	if first+1 < len(ws) && (ws[first].low == "the" || ws[first].low == "a" || ws[first].low == "an") {
		first++
	}
	if actGenreWords[ws[first].low] && (first+1 >= len(ws) || ws[first].stop || actGenreWords[ws[first+1].low] || actNotTitles[ws[first+1].low]) {
		return false
	}
	if r.caps {
		return actCapitalised(ws[first].text) || unicode.IsDigit([]rune(ws[first].text)[0])
	}
	if actSentiments[p.typ] {
		n := 0
		for k := first; k < len(ws) && !actNotTitles[ws[k].low]; k++ {
			n++
			if ws[k].stop {
				break
			}
		}
		return n >= 2
	}
	return true
}

func actCapitalised(s string) bool {
	for _, c := range s {
		return unicode.IsUpper(c)
	}
	return false
}

// actRatingAt reads "4", "4/5", "4 stars" or "4 out of 5" at actWord i.
func actRatingAt(ws []actWord, i int) (float64, bool) {
	if i >= len(ws) {
		return 0, false
	}
	s := ws[i].low
	s = strings.TrimSuffix(s, "/5")
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0.5 || v > 5 {
		return 0, false
	}
	return v, true
}

// actMentionsList reports whether "to my watchlist" or "on my list" follows.
func actMentionsList(ws []actWord, i int) bool {
	for k := i; k < min(len(ws), i+4); k++ {
		if ws[k].low == "watchlist" || ws[k].low == "list" || ws[k].low == "queue" {
			return true
		}
	}
	return false
}

// verdictAfterTitle handles "it was great" and "Heat was great" at actWord
// i, returning how many words it consumed (0: none matched).
func (r *actReader) verdictAfterTitle(ws []actWord, i int) int {
	// Find "was"/"is"/"'s" followed by an optional intensifier and a
	// verdict actWord.
	if i >= len(ws) {
		return 0
	}
	k := i
	low := ws[k].low
	var subjectEnd int
	switch {
	case low == "was" || low == "is":
		subjectEnd = k
		k++
	case strings.HasSuffix(low, "'s") && len(low) > 2:
		subjectEnd = -1 // "it's", "heat's": handled below
		k++
	default:
		return 0
	}
	for k < len(ws) && (ws[k].low == "really" || ws[k].low == "so" || ws[k].low == "very" || ws[k].low == "just" || ws[k].low == "pretty" || ws[k].low == "absolutely" || ws[k].low == "quite") {
		k++
	}
	if k >= len(ws) {
		return 0
	}
	typ, ok := actVerdicts[ws[k].low]
	if !ok {
		return 0
	}
	if k > 0 && (ws[k-1].low == "not" || strings.HasSuffix(ws[k-1].low, "n't")) {
		return 0
	}
	var target *memento.Title
	if subjectEnd < 0 {
		subject := strings.TrimSuffix(ws[i].low, "'s")
		if actPronouns[subject] {
			target = r.last
		}
	} else if subjectEnd > 0 && actPronouns[ws[subjectEnd-1].low] {
		target = r.last
	} else if subjectEnd > 0 {
		for start := max(0, subjectEnd-actMaxTitleWords); start < subjectEnd && target == nil; start++ {
			if subjectEnd-start == 1 && actNotTitles[ws[start].low] || !r.plausible(ws, start, actPhrase{typ: typ}) {
				continue
			}
			parts := make([]string, 0, subjectEnd-start)
			for _, w := range ws[start:subjectEnd] {
				parts = append(parts, w.text)
			}
			if t, ok := r.resolve(strings.Join(parts, " ")); ok {
				target = t
			}
		}
		if target != nil {
			r.last = target
		}
	}
	if target == nil {
		return 0
	}
	if actNegatedAt(ws, i) {
		return k + 1 - i
	}
	r.add(typ, target, nil)
	return k + 1 - i
}
