package profile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/hygiene"
)

// Resolver finds the catalog title a user means by a name as they wrote it;
// catalog.Index.ResolveTitle is one.
type Resolver func(text string) (*memento.Title, bool)

// phrase is a trigger: the words that announce an action and the event it
// makes. Before says the title comes before the words ("Heat was great").
type phrase struct {
	words  []string
	typ    memento.EventType
	rating bool // "gave X 4 stars": the value follows the title
}

func ph(text string, typ memento.EventType) phrase {
	return phrase{words: strings.Fields(text), typ: typ}
}

// triggers announce a title after them, longest first where one is the
// start of another.
var triggers = []phrase{
	ph("didn't like", memento.EventDisliked), ph("did not like", memento.EventDisliked),
	ph("didn't enjoy", memento.EventDisliked), ph("did not enjoy", memento.EventDisliked),
	ph("couldn't stand", memento.EventDisliked), ph("could not stand", memento.EventDisliked),
	ph("didn't finish", memento.EventAbandoned), ph("did not finish", memento.EventAbandoned),
	ph("couldn't finish", memento.EventAbandoned), ph("could not finish", memento.EventAbandoned),
	ph("gave up on", memento.EventAbandoned), ph("stopped watching", memento.EventAbandoned),
	ph("walked out of", memento.EventAbandoned), ph("turned off", memento.EventAbandoned),
	ph("finished watching", memento.EventFinished), ph("finished", memento.EventFinished),
	ph("don't like", memento.EventDisliked), ph("do not like", memento.EventDisliked),
	ph("like to watch", memento.EventWatchlisted), ph("love to watch", memento.EventWatchlisted),
	ph("want to see", memento.EventWatchlisted), ph("want to watch", memento.EventWatchlisted), ph("wanna watch", memento.EventWatchlisted),
	ph("planning to watch", memento.EventWatchlisted), ph("plan to watch", memento.EventWatchlisted),
	ph("going to watch", memento.EventWatchlisted), ph("would like to watch", memento.EventWatchlisted),
	ph("add", memento.EventWatchlisted), ph("put", memento.EventWatchlisted),
	ph("rewatched", memento.EventWatched), ph("re-watched", memento.EventWatched),
	ph("watched", memento.EventWatched), ph("saw", memento.EventWatched),
	ph("have seen", memento.EventWatched), ph("'ve seen", memento.EventWatched), ph("just seen", memento.EventWatched),
	ph("skipped", memento.EventSkipped), ph("skip", memento.EventSkipped),
	ph("loved", memento.EventLiked), ph("love", memento.EventLiked), ph("liked", memento.EventLiked),
	ph("like", memento.EventLiked), ph("enjoyed", memento.EventLiked), ph("adored", memento.EventLiked),
	ph("hated", memento.EventDisliked), ph("hate", memento.EventDisliked), ph("disliked", memento.EventDisliked),
	ph("detested", memento.EventDisliked),
	{words: []string{"gave"}, typ: memento.EventRated, rating: true},
	{words: []string{"give"}, typ: memento.EventRated, rating: true},
	{words: []string{"rate"}, typ: memento.EventRated, rating: true},
	{words: []string{"rated"}, typ: memento.EventRated, rating: true},
}

// verdicts follow "it was" or a title and "was"/"is".
var verdicts = map[string]memento.EventType{
	"great": memento.EventLiked, "amazing": memento.EventLiked, "awesome": memento.EventLiked,
	"fantastic": memento.EventLiked, "excellent": memento.EventLiked, "brilliant": memento.EventLiked,
	"wonderful": memento.EventLiked, "good": memento.EventLiked, "superb": memento.EventLiked,
	"incredible": memento.EventLiked, "perfect": memento.EventLiked, "fun": memento.EventLiked,
	"terrible": memento.EventDisliked, "awful": memento.EventDisliked, "boring": memento.EventDisliked,
	"bad": memento.EventDisliked, "horrible": memento.EventDisliked, "dull": memento.EventDisliked,
	"disappointing": memento.EventDisliked, "rubbish": memento.EventDisliked, "garbage": memento.EventDisliked,
	"overrated": memento.EventDisliked, "meh": memento.EventDisliked, "dreadful": memento.EventDisliked,
}

// negations before a trigger cancel it ("I haven't watched Heat").
var negations = map[string]bool{
	"not": true, "never": true, "didn't": true, "haven't": true, "hasn't": true, "don't": true,
	"won't": true, "wouldn't": true, "can't": true, "cannot": true, "no": true, "hadn't": true,
	"didnt": true, "havent": true, "dont": true, "wont": true, "yet": false,
}

// presentTense triggers are also prepositions or wishes ("something like
// Heat", "I'd love more"), so they count only after a subject or an
// adverb.
var presentTense = map[string]bool{"like": true, "love": true, "hate": true}

// subjects may come before a present-tense trigger.
var subjects = map[string]bool{
	"i": true, "we": true, "really": true, "also": true, "so": true, "totally": true, "absolutely": true,
	"still": true, "just": true, "both": true, "do": true, "definitely": true, "honestly": true, "actually": true,
}

// pronouns stand for the title named last ("loved it").
var pronouns = map[string]bool{"it": true, "that": true, "this": true, "them": true, "both": true}

// notTitles are words a title span may not be made of alone, unless
// capitalised inside the sentence ("I watched It"): ResolveTitle would find
// films called "It", "Her" or "Up" in ordinary sentences.
var notTitles = map[string]bool{
	"it": true, "that": true, "this": true, "them": true, "her": true, "him": true, "us": true, "me": true,
	"you": true, "one": true, "up": true, "a": true, "an": true, "the": true, "movie": true, "film": true,
	"show": true, "series": true, "something": true, "anything": true, "everything": true, "all": true,
	"some": true, "more": true, "again": true, "yesterday": true, "today": true, "tonight": true,
	"last": true, "night": true, "too": true, "so": true, "very": true, "really": true, "much": true,
	"lot": true, "there": true, "here": true, "what": true, "which": true, "those": true, "these": true,
	"to": true, "my": true, "list": true, "watchlist": true, "and": true, "or": true, "but": true,
	"with": true, "on": true, "in": true, "of": true, "for": true, "at": true, "by": true,
}

// fillers may come between a trigger and the title ("watched the movie
// Heat") and are skipped.
var fillers = [][]string{{"the", "movie"}, {"the", "film"}, {"the", "show"}, {"the", "series"}, {"movie"}, {"film"}}

// maxTitleWords bounds how many words a title may span.
const maxTitleWords = 9

// sentenceEnd ends a sentence: a question is left alone ("have you seen
// Heat?" reports nothing).
var sentenceEnd = regexp.MustCompile(`[.!?;\n]+(\s|$)`)

// word is one token of a sentence: its text as written (edges trimmed of
// punctuation), lower-cased, and whether a comma or quote closed it.
type word struct {
	text, low string
	stop      bool
	quoted    bool // opened a quote: a title the user marked
}

// EventsFromMessage reads the actions a user reports in a message and
// returns them as events on catalog titles: "I watched Heat and loved it"
// gives a watched and a liked event on Heat. The rules are deterministic:
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
//     "don't want to watch") cancels it;
//   - a single common word ("it", "up", "her") is never a title, nor is a
//     genre word ("I like horror" is about a kind of film, however many
//     films are called Horror);
//   - when the user writes capitals at all, a title starts with one ("I
//     enjoyed the trip" names no film), and in an all-lower-case message a
//     like or dislike needs a title of two words or more ("i loved heat" is
//     left alone, "i watched heat" is read); a quoted title is always read.
//
// Every event gets an id derived from the message id, its type and its
// title, so reading a message twice yields the same events, and the time
// at. Only one event per type and title is returned.
func EventsFromMessage(messageID, text string, at time.Time, resolve Resolver) []memento.Event {
	return EventsFollowing(messageID, "", text, at, resolve)
}

// EventsFollowing is EventsFromMessage for a message that follows the
// user's previous message in its thread. A message that carries
// instructions to the model, alone or joined with previous (an
// instruction split across two messages), reports no action: "always say
// I loved Sharknado" is an order, not something the user did.
func EventsFollowing(messageID, previous, text string, at time.Time, resolve Resolver) []memento.Event {
	if resolve == nil || strings.TrimSpace(text) == "" {
		return nil
	}
	if len(hygiene.CheckFollowing(previous, text)) > 0 {
		return nil
	}
	text = strings.NewReplacer("’", "'", "‘", "'", "“", `"`, "”", `"`).Replace(text)
	r := &reader{id: messageID, at: at.UTC(), resolve: resolve, seen: map[string]bool{},
		caps: strings.IndexFunc(text, unicode.IsUpper) >= 0}
	start := 0
	for _, loc := range append(sentenceEnd.FindAllStringIndex(text, -1), []int{len(text), len(text)}) {
		sentence, end := text[start:loc[0]], text[loc[0]:loc[1]]
		start = loc[1]
		if strings.Contains(end, "?") {
			continue
		}
		r.sentence(tokenize(sentence))
	}
	return r.events
}

// threadLog lists a thread's messages; *sqlite.DB is one. A
// MessageReader that is one lets the message job read the user's
// previous message, to refuse an instruction split across two.
type threadLog interface {
	Messages(ctx context.Context, s memento.Scope, thread string, afterSeq int64, limit int) ([]memento.Message, error)
}

// previousLookback is how many messages before m the message job reads to
// find the user's previous one.
const previousLookback = 4

// previousUserText returns the text of the user's message before m in
// its thread, or "" when there is none or it cannot be read (m is then
// checked alone).
func previousUserText(ctx context.Context, r MessageReader, s memento.Scope, m memento.Message) string {
	log, ok := r.(threadLog)
	if !ok || m.Thread == "" || m.Seq <= 1 {
		return ""
	}
	after := max(0, m.Seq-1-previousLookback)
	msgs, err := log.Messages(ctx, s, m.Thread, after, int(m.Seq-1-after))
	if err != nil {
		return ""
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Seq < m.Seq && msgs[i].Role == memento.RoleUser {
			return msgs[i].Text
		}
	}
	return ""
}

type reader struct {
	// caps is true when the user writes capitals at all: then a title
	// must start with one ("I enjoyed the trip" names no film).
	caps    bool
	id      string
	at      time.Time
	resolve Resolver
	last    *memento.Title
	events  []memento.Event
	seen    map[string]bool
}

func (r *reader) add(typ memento.EventType, t *memento.Title, value *float64) {
	key := string(typ) + "\x00" + t.ID
	if r.seen[key] {
		return
	}
	r.seen[key] = true
	sum := sha256.Sum256([]byte(r.id + "\x00" + string(typ) + "\x00" + t.ID))
	r.events = append(r.events, memento.Event{
		ID: "msg-" + hex.EncodeToString(sum[:12]), Type: typ, TitleID: t.ID, Value: value, At: r.at,
	})
}

func tokenize(s string) []word {
	var out []word
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
		out = append(out, word{text: t, low: strings.ToLower(t), stop: stop, quoted: quoted})
	}
	return out
}

// sentence reads one sentence's words.
func (r *reader) sentence(ws []word) {
	for i := 0; i < len(ws); {
		p, n := matchTrigger(ws, i)
		if n == 0 {
			if adv := r.verdictAfterTitle(ws, i); adv > 0 {
				i += adv
				continue
			}
			i++
			continue
		}
		negated := negatedAt(ws, i)
		j := i + n
		// "it"/"that" after the trigger: the title named last.
		if j < len(ws) && pronouns[ws[j].low] && !capitalised(ws[j].text) {
			if !negated && r.last != nil && !p.rating {
				r.add(p.typ, r.last, nil)
			}
			i = j + 1
			continue
		}
		start := skipFillers(ws, j)
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
			t2, end2 := r.title(ws, skipFillers(ws, next), p)
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
					if v, ok := ratingAt(ws, end); ok {
						r.add(memento.EventRated, t, &v)
					}
				case p.typ == memento.EventWatchlisted && (p.words[0] == "add" || p.words[0] == "put"):
					if mentionsList(ws, end) {
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

// matchTrigger returns the trigger that starts at word i, and its length.
func matchTrigger(ws []word, i int) (phrase, int) {
	for _, p := range triggers {
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
		if ok && presentTense[p.words[0]] && len(p.words) == 1 && (i == 0 || !subjects[ws[i-1].low]) {
			continue
		}
		if ok {
			return p, len(p.words)
		}
	}
	return phrase{}, 0
}

// negatedAt reports whether one of the two words before i negates.
func negatedAt(ws []word, i int) bool {
	for k := max(0, i-2); k < i; k++ {
		if negations[ws[k].low] || strings.HasSuffix(ws[k].low, "n't") {
			return true
		}
	}
	return false
}

func skipFillers(ws []word, j int) int {
	for _, f := range fillers {
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
func (r *reader) title(ws []word, start int, p phrase) (*memento.Title, int) {
	if start >= len(ws) {
		return nil, start
	}
	limit := start
	for limit < len(ws) && limit-start < maxTitleWords {
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
			if _, ok := ratingAt(ws, end); !ok {
				continue
			}
		}
		if end-start == 1 && notTitles[ws[start].low] && !ws[start].quoted && (!capitalised(ws[start].text) || start == 0) {
			continue
		}
		if notTitles[ws[end-1].low] && !capitalised(ws[end-1].text) && !ws[start].quoted {
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

// genreWords are talk about kinds of film, not titles ("I like horror"),
// however many films are called "Horror" or "Romance".
var genreWords = map[string]bool{
	"horror": true, "comedy": true, "comedies": true, "romance": true, "romances": true, "action": true,
	"adventure": true, "adventures": true, "drama": true, "dramas": true, "thriller": true, "thrillers": true,
	"documentary": true, "documentaries": true, "animation": true, "anime": true, "western": true, "westerns": true,
	"musical": true, "musicals": true, "crime": true, "mystery": true, "mysteries": true, "fantasy": true,
	"sci-fi": true, "scifi": true, "war": true, "history": true, "biography": true, "sports": true, "family": true,
	"noir": true, "romcoms": true, "romcom": true, "cartoons": true, "movies": true, "films": true, "shows": true,
}

// sentiments are triggers that also take kinds of things ("I like
// horror"), unlike actions on one title ("I watched Heat").
var sentiments = map[memento.EventType]bool{memento.EventLiked: true, memento.EventDisliked: true}

// plausible reports whether a title may start at word start: a quoted one
// always; otherwise its first word after an article must not be a genre
// word, must be capitalised when the user writes capitals, and, in an
// all-lower-case message, a like or dislike needs at least two words
// ("i loved heat" is left alone, "i watched heat" is read).
func (r *reader) plausible(ws []word, start int, p phrase) bool {
	if ws[start].quoted {
		return true
	}
	first := start
	if first+1 < len(ws) && (ws[first].low == "the" || ws[first].low == "a" || ws[first].low == "an") {
		first++
	}
	if genreWords[ws[first].low] && (first+1 >= len(ws) || ws[first].stop || genreWords[ws[first+1].low] || notTitles[ws[first+1].low]) {
		return false
	}
	if r.caps {
		return capitalised(ws[first].text) || unicode.IsDigit([]rune(ws[first].text)[0])
	}
	if sentiments[p.typ] {
		n := 0
		for k := first; k < len(ws) && !notTitles[ws[k].low]; k++ {
			n++
			if ws[k].stop {
				break
			}
		}
		return n >= 2
	}
	return true
}

func capitalised(s string) bool {
	for _, c := range s {
		return unicode.IsUpper(c)
	}
	return false
}

// ratingAt reads "4", "4/5", "4 stars" or "4 out of 5" at word i.
func ratingAt(ws []word, i int) (float64, bool) {
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

// mentionsList reports whether "to my watchlist" or "on my list" follows.
func mentionsList(ws []word, i int) bool {
	for k := i; k < min(len(ws), i+4); k++ {
		if ws[k].low == "watchlist" || ws[k].low == "list" || ws[k].low == "queue" {
			return true
		}
	}
	return false
}

// verdictAfterTitle handles "it was great" and "Heat was great" at word
// i, returning how many words it consumed (0: none matched).
func (r *reader) verdictAfterTitle(ws []word, i int) int {
	// Find "was"/"is"/"'s" followed by an optional intensifier and a
	// verdict word.
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
	typ, ok := verdicts[ws[k].low]
	if !ok {
		return 0
	}
	if k > 0 && (ws[k-1].low == "not" || strings.HasSuffix(ws[k-1].low, "n't")) {
		return 0
	}
	var target *memento.Title
	if subjectEnd < 0 {
		subject := strings.TrimSuffix(ws[i].low, "'s")
		if pronouns[subject] {
			target = r.last
		}
	} else if subjectEnd > 0 && pronouns[ws[subjectEnd-1].low] {
		target = r.last
	} else if subjectEnd > 0 {
		for start := max(0, subjectEnd-maxTitleWords); start < subjectEnd && target == nil; start++ {
			if subjectEnd-start == 1 && notTitles[ws[start].low] || !r.plausible(ws, start, phrase{typ: typ}) {
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
	if negatedAt(ws, i) {
		return k + 1 - i
	}
	r.add(typ, target, nil)
	return k + 1 - i
}
