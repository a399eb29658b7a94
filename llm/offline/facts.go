package offline

import (
	"context"
	"fmt"
	"strings"

	"github.com/memento-ai/memento"
)

// WorthRemembering is the sentinel: a message is worth remembering when it
// holds at least one durable personal statement, a preference, habit,
// platform or fact of the user's life. Requests, questions and small talk
// are not.
func (m *Model) WorthRemembering(ctx context.Context, message string, schema []memento.AttributeSpec) (*memento.Verdict, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("worth remembering: %w", err)
	}
	facts := extractFacts(message)
	if len(facts) == 0 {
		return &memento.Verdict{OK: false, Reason: "no durable personal statement"}, nil
	}
	return &memento.Verdict{OK: true, Reason: fmt.Sprintf("states %s", quoteFacts(facts))}, nil
}

// ExtractFacts lists every distinct fact in the message as a short
// third-person phrase. With a repair note, the facts the note calls
// unsupported are dropped, the previous attempt's supported facts are
// kept and the facts it missed are added.
func (m *Model) ExtractFacts(ctx context.Context, in memento.ExtractInput) ([]memento.Fact, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("extract facts: %w", err)
	}
	q := lastQuestion(in.Asked)
	own := factsIn(q, in.Message)
	if strings.TrimSpace(in.RepairNote) == "" {
		return own, nil
	}
	drop := map[string]bool{}
	for _, q := range noteQuotes(in.RepairNote, true) {
		drop[normText(q)] = true
	}
	sup := newSupport(strings.TrimSpace(q + " " + frameWords(q) + " " + in.Message))
	out := []memento.Fact{}
	for _, f := range in.Previous {
		if !drop[normText(f.Text)] && len(sup.unsupported(f.Text)) == 0 {
			out = appendFact(out, f)
		}
	}
	for _, f := range own {
		if !drop[normText(f.Text)] && !covered(out, f) {
			out = appendFact(out, f)
		}
	}
	return out, nil
}

// ReviewExtraction checks facts against their message. A fact with a
// content word the message does not hold (allowing for inflection, the
// third person and genre synonyms) is named as unsupported; a fact the
// rules find in the message that no given fact covers is named as missing.
// The reason is written so ExtractFacts can act on it.
func (m *Model) ReviewExtraction(ctx context.Context, message string, facts []memento.Fact) (*memento.Verdict, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("review extraction: %w", err)
	}
	// A message that answers a question comes with it (see splitAsRead):
	// the question's words back a fact, and its facts are expected.
	q, msg := splitAsRead(message)
	sup := newSupport(strings.TrimSpace(q + " " + frameWords(q) + " " + msg))
	prefs := extractPreferences(msg)
	var bad, missing []string
	for _, f := range facts {
		if words := sup.unsupported(f.Text); len(words) > 0 || contradicts(f, prefs) {
			bad = append(bad, f.Text)
		}
	}
	for _, f := range factsIn(q, msg) {
		if !covered(facts, f) {
			missing = append(missing, f.Text)
		}
	}
	if len(bad) == 0 && len(missing) == 0 {
		return &memento.Verdict{OK: true}, nil
	}
	var parts []string
	if len(bad) > 0 {
		parts = append(parts, "Unsupported facts, not stated in the message (drop them): "+quoteList(bad)+".")
	}
	if len(missing) > 0 {
		parts = append(parts, "Missing facts (add them): "+quoteList(missing)+".")
	}
	return &memento.Verdict{OK: false, Reason: strings.Join(parts, " ")}, nil
}

// factsIn returns the facts of a message that answers the question q (""
// when it answers none): what it says alone, then what it says as the
// answer.
func factsIn(q, msg string) []memento.Fact {
	own := extractFacts(msg)
	if q == "" {
		return own
	}
	return append(own, answerFacts(q, msg, own)...)
}

// extractFacts runs the clause rules over a message.
func extractFacts(msg string) []memento.Fact {
	toks := tokenize(msg)
	out := []memento.Fact{}
	prev, prevCompanion := subjNone, ""
	var object []token
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
		if c.first {
			object = nil
		}
		if st.subj == subjFirst {
			// "I watched Parasite and loved it": "it" is Parasite.
			st.rest = resolvePronoun(st.rest, object)
			if obj := objectOf(st.rest); obj != nil {
				object = obj
			}
		}
		if f, ok := factOf(msg, st); ok {
			out = appendFact(out, f)
		}
	}
	return out
}

// objectOf returns what a first-person clause is about: the words after
// its verb, when they are a name (capitalised) rather than a pronoun.
func objectOf(rest []token) []token {
	i := skipAdverbs(rest, 0)
	// The verb past its auxiliaries: "used to hate horror", "started to
	// love westerns", "have been watching Severance".
	for {
		if i+2 < len(rest) && rest[i+1].w == "to" && (rest[i].w == "used" || rest[i].w == "started" || rest[i].w == "began" || rest[i].w == "begun") {
			i = skipAdverbs(rest, i+2)
			continue
		}
		if i+2 < len(rest) && rest[i+1].w == "been" && (rest[i].w == "have" || rest[i].w == "has" || rest[i].w == "had") {
			i = skipAdverbs(rest, i+2)
			continue
		}
		break
	}
	if i+1 >= len(rest) {
		return nil
	}
	obj := rest[i+1:]
	for j, t := range obj {
		if j > 0 && (t.brk != 0 || t.w == "and" || t.w == "but") {
			obj = obj[:j]
			break
		}
	}
	if shownPointerWords[obj[0].w] {
		return nil
	}
	// A title or a name, or a genre: "hated horror but now I love it".
	if _, _, genre := fullGenreTable.match(obj, 0); !startsUpper(obj[0].raw) && !genre {
		return nil
	}
	return obj
}

// resolvePronoun replaces the pronoun object of a clause ("loved it") with
// the object of the clause before in the same sentence.
func resolvePronoun(rest, object []token) []token {
	if len(object) == 0 {
		return rest
	}
	i := skipAdverbs(rest, 0)
	j := i + 1
	if j >= len(rest) || (rest[j].w != "it" && rest[j].w != "them") || (j+1 < len(rest) && rest[j+1].brk == 0 && !stopwords[rest[j+1].w]) {
		return rest
	}
	out := make([]token, 0, len(rest)+len(object))
	out = append(out, rest[:j]...)
	for k, t := range object {
		if k == 0 {
			t.brk = rest[j].brk
		}
		out = append(out, t)
	}
	return append(out, rest[j+1:]...)
}

// imperatives open a request, not a statement: "show me comedies".
var imperatives = set("show", "give", "recommend", "suggest", "find", "tell", "list", "play",
	"pick", "help", "let", "let's", "send", "get", "please", "thank", "thanks", "can", "could",
	"would", "will", "do", "does", "did", "is", "are", "what", "which", "how", "why", "where",
	"when", "who", "any", "search", "discover", "check", "try", "excuse", "sorry", "remind", "hi",
	"hello", "hey", "see")

// pointerSubjects open a clause about a title just shown: "that's my
// favourite", "it made me cry".
var pointerSubjects = set("that", "that's", "thats", "it", "it's", "its", "this", "they", "they're",
	"those", "these", "he", "she", "he's", "she's", "there", "there's", "you", "you're", "which")

// familyNouns name people and pets of the user's: "my daughter is 7".
var familyNouns = set("daughter", "son", "wife", "husband", "partner", "kid", "kids", "child",
	"children", "boy", "boys", "girl", "girls", "mom", "mum", "mother", "dad", "father",
	"brother", "sister", "brothers", "sisters", "boyfriend", "girlfriend", "fiance", "fiancee",
	"fiancé", "fiancée", "grandson", "granddaughter", "grandkids", "grandchildren", "baby",
	"twins", "dog", "cat", "puppy", "kitten", "dogs", "cats", "roommate", "parents", "spouse",
	"toddler", "teenager", "stepson", "stepdaughter", "niece", "nephew")

var pets = set("dog", "cat", "puppy", "kitten", "dogs", "cats")

// trivialWords carry no durable content: "I'm good", "I'm open to
// suggestions", "I've seen all of those movies".
var trivialWords = set("good", "fine", "ok", "okay", "well", "great", "sure", "glad", "happy",
	"sorry", "back", "here", "done", "ready", "thankful", "grateful", "excited", "open",
	"suggestions", "suggestion", "recommendations", "recommendation", "ideas", "idea", "anything",
	"something", "thanks", "thank", "lol", "haha", "yes", "yeah", "it", "one", "ones", "both",
	"either", "all", "them", "those", "these", "that", "this", "movie", "movies", "film", "films",
	"show", "shows", "series", "title", "titles", "before", "already", "yet", "too", "now",
	"again", "either", "interested", "curious", "fan", "bit", "lot", "kind", "sort", "way",
	"seen", "watched", "heard", "tried", "check", "out", "bad", "wrong", "right", "little")

// trailingFillers are dropped from the end of a fact.
var trailingFillers = set("lol", "haha", "though", "anyway", "anyways", "tbh", "lmao", "xd", "honestly", "really", "either")

// factOf turns one clause into a fact, if it holds one.
func factOf(msg string, st stmt) (memento.Fact, bool) {
	st.rest, st.all = dropParens(st.rest), dropParens(st.all)
	switch st.subj {
	case subjFirst:
		rest, ok := spellEllipsis(st.rest)
		if !ok || len(rest) == 0 || isRequestFrame(rest) || isEphemeral(rest) || aboutShownTitle(rest) {
			return memento.Fact{}, false
		}
		st.rest = rest
		text, neg, verb := firstPersonFact(msg, st.rest)
		if verb < 0 || !hasContent(canonicalTokens(st.rest)[min(verb+1, len(canonicalTokens(st.rest))):]) {
			return memento.Fact{}, false
		}
		if st.companion != "" {
			text += " with their " + st.companion
		}
		return cleanFact(text, neg)
	case subjOwn:
		return ownFact(msg, st.rest)
	case subjMention:
		if len(st.all) < 3 || imperatives[st.all[0].w] || pointerSubjects[st.all[0].w] || !hasContent(st.all) {
			return memento.Fact{}, false
		}
		ts := canonicalTokens(st.all)
		text := render(msg, ts, true)
		if w := ts[0]; w.start >= 0 && (stopwords[w.w] || isGenreWord(w.w)) {
			text = strings.ToLower(text[:len(w.raw)]) + text[len(w.raw):]
		}
		return cleanFact(text, hasNegation(ts))
	}
	return memento.Fact{}, false
}

// ownFact reads "my ..." clauses: "my favourite is Alien" gives
// "favourite is Alien", "my daughter is 7" gives "has a daughter who is 7"
// and anything else keeps its words in the third person ("their job is
// stressful").
func ownFact(msg string, rest []token) (memento.Fact, bool) {
	if len(rest) < 2 || !hasContent(rest) {
		return memento.Fact{}, false
	}
	rest = canonicalTokens(rest)
	switch w := rest[0].w; {
	case w == "favourite" || w == "favorite" || w == "fave" || w == "fav":
		return cleanFact(render(msg, rest, true), hasNegation(rest))
	case familyNouns[w]:
		k := 1
		// "my youngest daughter" is rare; "my daughter Ana is 7" has a name.
		if k < len(rest) && startsUpper(rest[k].raw) && !familyNouns[rest[k].w] && rest[k].w != "is" {
			k++
		}
		if k+1 < len(rest) {
			switch rest[k].w {
			case "is", "are", "was", "were", "turned", "just", "turns":
				who := "who"
				if pets[w] {
					who = "that"
				}
				plural := rest[k].w == "are" || rest[k].w == "were"
				art := "a "
				if plural {
					art = ""
				} else if strings.ContainsRune("aeiou", rune(w[0])) {
					art = "an "
				}
				text := "has " + art + render(msg, rest[:k], true) + " " + who + " " + render(msg, rest[k:], true)
				return cleanFact(text, hasNegation(rest[k:]))
			}
		}
	}
	if len(rest) < 3 {
		return memento.Fact{}, false
	}
	return cleanFact("their "+render(msg, rest, true), hasNegation(rest))
}

// cleanFact trims a fact and drops trailing fillers.
func cleanFact(text string, neg bool) (memento.Fact, bool) {
	fields := strings.Fields(text)
	for len(fields) > 0 && trailingFillers[strings.ToLower(strings.Trim(fields[len(fields)-1], ",.!"))] {
		fields = fields[:len(fields)-1]
	}
	text = strings.TrimRight(strings.Join(fields, " "), " ,;:-")
	if text == "" {
		return memento.Fact{}, false
	}
	return memento.Fact{Text: text, Negated: neg}, true
}

// hasContent reports whether tokens hold a word that says something.
func hasContent(ts []token) bool {
	for _, t := range ts {
		if !stopwords[t.w] && !trivialWords[t.w] && !negations[t.w] && !adverbs[t.w] && t.w != "" {
			return true
		}
	}
	return false
}

func hasNegation(ts []token) bool {
	for _, t := range ts {
		if negations[t.w] || strings.HasSuffix(t.w, "n't") {
			return true
		}
	}
	return false
}

func isGenreWord(w string) bool {
	_, _, ok := fullGenreTable.match([]token{{w: w}}, 0)
	return ok
}

// wantVerbs ask for something; what follows decides whether it is a wish
// to remember ("I want to watch Dune someday") or a request for now ("I
// want a comedy").
var wantVerbs = [][]string{
	{"want"}, {"wanna"}, {"need"}, {"would", "like"}, {"would", "love"}, {"would", "prefer"},
	{"feel", "like"}, {"am", "craving"}, {"could", "use"}, {"am", "up", "for"},
}

// requestFrames are first-person ways to ask for titles now.
var requestFrames = [][]string{
	{"am", "looking"}, {"am", "searching"}, {"am", "in", "the", "mood"}, {"am", "after"},
	{"am", "hoping"}, {"was", "wondering"}, {"am", "wondering"}, {"was", "hoping"},
	{"am", "thinking", "about", "watching"}, {"am", "thinking", "of", "watching"}, {"am", "open"},
	{"was", "looking"}, {"am", "trying", "to", "find"}, {"can't", "decide"}, {"am", "bored"},
}

// lastingMarkers make a wish durable: "someday", "on my list".
var lastingMarkers = set("someday", "eventually", "finally", "watchlist", "list", "sometime", "day", "point", "more", "every", "all")

// isRequestFrame reports a first-person clause that asks for titles now.
func isRequestFrame(rest []token) bool {
	i := skipAdverbs(rest, 0)
	if matchAny(rest, i, requestFrames) > 0 {
		return true
	}
	n := matchAny(rest, i, wantVerbs)
	if n == 0 {
		return false
	}
	j := i + n
	for _, p := range []string{"to avoid", "to stay away", "to steer clear", "nothing with", "no more"} {
		if matchSeq(rest, j, p) {
			return false // "I want to avoid gore" is lasting, not for now
		}
	}
	for _, p := range []string{"to watch", "to see", "to check out", "to try", "to find", "watching", "seeing"} {
		if matchSeq(rest, j, p) {
			j += len(strings.Fields(p))
			break
		}
	}
	if j >= len(rest) {
		return true
	}
	for _, t := range rest[j:] {
		if lastingMarkers[t.w] {
			return false
		}
		switch t.w {
		case "tonight", "today", "now", "tomorrow":
			return true
		}
	}
	return !startsUpper(rest[j].raw) || rest[j].w == "i"
}

// ephemeralFrames are first-person clauses about this conversation, not
// the person: "I'll check it out", "I think so", "I don't know".
var ephemeralFrames = [][]string{
	{"will", "check"}, {"will", "try"}, {"will", "give"}, {"will", "look"}, {"will", "add"},
	{"will", "rent"}, {"will", "go"}, {"will", "definitely"}, {"will", "have"}, {"will", "watch"},
	{"might", "try"}, {"might", "check"}, {"might", "watch"}, {"would", "try"}, {"would", "check"},
	{"think"}, {"guess"}, {"know"}, {"see"}, {"agree"}, {"mean"}, {"suppose"}, {"hope"},
	{"wonder"}, {"am", "not", "sure"}, {"am", "sure"}, {"don't", "know"}, {"dont", "know"},
	{"do", "not", "know"}, {"don't", "remember"}, {"can't", "remember"}, {"forgot"},
	{"remember"}, {"have", "to", "go"}, {"gotta", "go"}, {"am", "leaving"}, {"appreciate"},
	{"thank"}, {"am", "done"}, {"would", "say"}, {"have", "no", "idea"}, {"can't", "wait"},
	{"will", "be"}, {"am", "going", "to", "check"}, {"am", "gonna", "check"}, {"am", "going", "to", "watch"},
	{"am", "gonna", "watch"}, {"will", "probably"}, {"am", "not", "familiar"}, {"have", "not", "heard"},
	{"haven't", "heard"}, {"never", "heard"}, {"have", "never", "heard"}, {"have", "heard"},
	{"am", "glad"}, {"am", "happy"}, {"am", "good"}, {"am", "fine"}, {"am", "okay"}, {"am", "ok"},
	{"am", "well"}, {"am", "great"}, {"am", "doing"}, {"have", "a", "question"}, {"was", "just"},
	{"thought"}, {"heard"}, {"imagine"}, {"am", "surprised"}, {"am", "going", "to", "see"},
	{"am", "going", "to", "try"}, {"have", "to", "check"}, {"will", "have", "to"}, {"was", "thinking"},
}

// isEphemeral reports a first-person clause about the conversation.
func isEphemeral(rest []token) bool {
	i := skipAdverbs(rest, 0)
	if i < len(rest) && (rest[i].w == "do" || rest[i].w == "did" || rest[i].w == "can" || rest[i].w == "could") {
		i = skipAdverbs(rest, i+1) // "I do know", "I can only imagine"
	}
	return matchAny(rest, i, ephemeralFrames) > 0
}

// shownPointerWords point at a title just shown: "I've seen that", "I
// never got around to watching it".
var shownPointerWords = set("it", "that", "this", "them", "those", "these", "em")

// aboutShownTitle reports a first-person clause whose object is a title
// just shown rather than something of the user's: what the thread's context
// remembers, not the user's long-term memory.
func aboutShownTitle(rest []token) bool {
	i := skipAdverbs(rest, 0)
	for j := i + 1; j < len(rest) && j <= i+5; j++ {
		if rest[j].brk != 0 {
			return false
		}
		if !shownPointerWords[rest[j].w] {
			continue
		}
		if j+1 == len(rest) || rest[j+1].brk != 0 || stopwords[rest[j+1].w] || rest[j+1].w == "one" ||
			conceptStops[rest[j+1].w] || rest[j+1].w == "along" {
			return true
		}
		return false
	}
	return false
}

// normText is a fact's text for comparison.
func normText(s string) string {
	return strings.Join(wordsOf(tokenize(s)), " ")
}

func appendFact(list []memento.Fact, f memento.Fact) []memento.Fact {
	n := normText(f.Text)
	for _, g := range list {
		if normText(g.Text) == n {
			return list
		}
	}
	return append(list, f)
}

func quoteList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

func quoteFacts(facts []memento.Fact) string {
	texts := make([]string, len(facts))
	for i, f := range facts {
		texts[i] = f.Text
	}
	return quoteList(texts)
}

// noteQuotes returns the quoted phrases of a repair note that it asks to
// drop (drop true) or to keep or add (drop false). A quote belongs to the
// request made by the words before it: "unsupported", "not stated",
// "invented", "drop" ask to drop; "missing", "add", "keep", "lost" to add.
func noteQuotes(note string, drop bool) []string {
	var out []string
	mode := 0 // 1: drop, 2: add
	rest := note
	for {
		open := strings.IndexAny(rest, "\"“")
		if open < 0 {
			return out
		}
		mode = noteMode(strings.ToLower(rest[:open]), mode)
		rest = rest[open:]
		_, size := firstRune(rest)
		rest = rest[size:]
		closeAt := strings.IndexAny(rest, "\"”")
		if closeAt < 0 {
			return out
		}
		q := rest[:closeAt]
		_, size = firstRune(rest[closeAt:])
		rest = rest[closeAt+size:]
		if (drop && mode == 1) || (!drop && mode == 2) {
			out = append(out, q)
		}
	}
}

func noteMode(text string, mode int) int {
	best, at := mode, -1
	for _, k := range []string{"unsupported", "not supported", "not stated", "invented", "garbled", "not in the message", "hallucinat", "drop", "remove"} {
		if i := strings.LastIndex(text, k); i > at {
			best, at = 1, i
		}
	}
	for _, k := range []string{"missing", "add", "keep", "lost", "omitted", "left out", "lacks"} {
		if i := strings.LastIndex(text, k); i > at {
			best, at = 2, i
		}
	}
	return best
}

func firstRune(s string) (rune, int) {
	for _, r := range s {
		return r, len(string(r))
	}
	return 0, 0
}

// Sentiment words support each other within a polarity: a fact may say
// "enjoys" where the message said "love".
var (
	positiveWords = stems("love", "like", "enjoy", "adore", "prefer", "fan", "into", "favourite",
		"favorite", "fave", "dig", "fond", "keen", "obsessed", "crazy")
	negativeWords = stems("hate", "dislike", "stand", "loathe", "despise", "detest", "avoid",
		"bear", "stomach", "sick", "tired")
	// factFunctionWords are added by the third-person rewrite and need no
	// support: "has a daughter who is 7".
	factFunctionWords = set("their", "they", "them", "themselves", "theirs", "has", "is", "does",
		"doesn't", "hasn't", "isn't", "who", "are", "they're", "they've", "they'd", "they'll",
		"was", "wasn't", "person", "user", "the", "a", "an", "with", "that", "to")
)

func stems(ws ...string) map[string]bool {
	m := map[string]bool{}
	for _, w := range ws {
		m[stem(w)] = true
	}
	return m
}

// support is what a message can back: the stems of its words, their
// third-person and genre spellings, and its sentiment polarities.
type support struct {
	stems         map[string]bool
	positive, neg bool
}

func newSupport(msg string) support {
	toks := tokenize(msg)
	s := support{stems: map[string]bool{}}
	for _, t := range toks {
		st := stem(t.w)
		s.stems[st] = true
		s.stems[stem(thirdPerson(t.w))] = true
		if v, ok := pronounSwap[t.w]; ok {
			s.stems[stem(v)] = true
		}
		if positiveWords[st] {
			s.positive = true
		}
		if negativeWords[st] {
			s.neg = true
		}
	}
	for i := 0; i < len(toks); {
		gs, n, ok := fullGenreTable.match(toks, i)
		if !ok {
			i++
			continue
		}
		for _, g := range gs {
			for _, w := range words(g) {
				s.stems[stem(w)] = true
			}
		}
		phrase := strings.Join(wordsOf(toks[i:i+n]), " ")
		for _, fs := range factSynonyms {
			if fs.from == phrase {
				for _, w := range words(fs.to) {
					s.stems[stem(w)] = true
				}
			}
		}
		if c, ok := conceptSynonyms[phrase]; ok {
			for _, w := range words(c) {
				s.stems[stem(w)] = true
			}
		}
		i += n
	}
	return s
}

// unsupported returns the content words of a fact the message does not
// back.
func (s support) unsupported(fact string) []string {
	var out []string
	for _, t := range tokenize(fact) {
		w := t.w
		if stopwords[w] || factFunctionWords[w] || negations[w] || strings.HasSuffix(w, "n't") {
			continue
		}
		st := stem(w)
		switch {
		case s.stems[st]:
		case positiveWords[st] && s.positive:
		case negativeWords[st] && s.neg:
		case isDigits(w) && s.stems[spelledNumber(w)]:
		default:
			out = append(out, w)
		}
	}
	return out
}

// spelledNumber spells small numbers out, so "7" is backed by "seven".
func spelledNumber(d string) string {
	for w, n := range numberWords {
		if fmt.Sprint(n) == d && w != "single" && w != "pair" && w != "dozen" {
			return stem(w)
		}
	}
	return ""
}

// contradicts reports a fact whose sentiment is the opposite of the one the
// message states about the same thing: "loves horror" from "I can't stand
// horror".
func contradicts(f memento.Fact, prefs []memento.Concept) bool {
	fi := readFact(f)
	if !fi.positive && !fi.negative {
		return false
	}
	topic := topicStems(f.Text)
	for _, c := range prefs {
		if c.Kind != memento.KindTaste {
			continue
		}
		cs := topicStems(c.Concept)
		if len(cs) == 0 || !containsAll(topic, cs) {
			continue
		}
		if (c.Sign > 0 && fi.negative) || (c.Sign < 0 && fi.positive) {
			return true
		}
	}
	return false
}

// topicStems are the stems of a fact's content words, without sentiment
// words and the verbs every fact has.
func topicStems(text string) map[string]bool {
	out := map[string]bool{}
	toks := tokenize(text)
	// Genre synonyms count as their genre: "sci-fi" is "science fiction".
	for i := 0; i < len(toks); {
		gs, n, ok := fullGenreTable.match(toks, i)
		if !ok {
			i++
			continue
		}
		for _, g := range gs {
			for _, w := range words(g) {
				out[stem(w)] = true
			}
		}
		i += n
	}
	for _, t := range toks {
		w := t.w
		if stopwords[w] || factFunctionWords[w] || negations[w] || adverbs[w] || strings.HasSuffix(w, "n't") {
			continue
		}
		st := stem(w)
		if positiveWords[st] || negativeWords[st] || genericTopic[st] {
			continue
		}
		out[st] = true
	}
	return out
}

// genericTopic stems say nothing about what a fact is about.
var genericTopic = stems("watch", "movie", "film", "show", "series", "thing", "stuff", "really",
	"come", "around", "anymore", "lately", "now", "these", "days", "much", "lot", "kind", "sort",
	"type", "genre", "one", "ones", "pretty", "quite", "very", "actual", "actually")

// covered reports whether a fact's topic is already in one of the facts.
func covered(facts []memento.Fact, f memento.Fact) bool {
	want := topicStems(f.Text)
	if len(want) == 0 {
		return true
	}
	for _, g := range facts {
		have := topicStems(g.Text)
		for w := range want {
			if have[w] {
				return true
			}
		}
	}
	return false
}

// dropParens leaves out what was said in parentheses: "(2007)" after a
// title is an annotation, not part of the fact.
func dropParens(ts []token) []token {
	out := ts[:0:0]
	dropped := false
	for _, t := range ts {
		if t.paren {
			dropped = true
			continue
		}
		if dropped && t.brk == ',' {
			t.brk = 0
		}
		dropped = false
		out = append(out, t)
	}
	return out
}
