package offline

import (
	"strings"
)

// A message is cut into sentences and sentences into clauses; a clause in
// the first person ("I love sci-fi", "but can't stand horror") is then
// rewritten in the third person ("loves science fiction", "can't stand
// horror"). Facts, the sentinel and preference extraction all read messages
// through this file.

// clause is a run of tokens that states one thing.
type clause struct {
	toks     []token
	question bool // the clause asks rather than states
	first    bool // the clause starts its sentence
}

// contrastWords always start a new clause.
var contrastWords = set("but", "although", "though", "however", "whereas", "yet", "except")

// connectors open a clause and are dropped from it.
var connectors = set("and", "or", "but", "so", "plus", "then", "although", "though", "however",
	"whereas", "yet", "well", "oh", "ok", "okay", "honestly", "actually", "basically", "anyway",
	"lol", "haha", "also", "and also", "btw", "besides", "except", "um", "uh", "hmm")

// subjectWords open a first-person clause.
var subjectWords = set("i", "i'm", "im", "i've", "ive", "i'd", "i'll", "we", "we're", "we've",
	"we'd", "we'll", "my", "me")

// clauseVerbs open a clause whose subject is the previous clause's ("but
// can't stand horror"), and mark where "and" or a comma starts a new clause.
var clauseVerbs = set(
	"love", "like", "enjoy", "adore", "hate", "dislike", "prefer", "watch", "rewatch", "binge",
	"stream", "use", "have", "own", "live", "work", "moved", "move", "am", "can't", "cannot",
	"cant", "don't", "dont", "didn't", "won't", "never", "always", "usually", "often",
	"sometimes", "really", "mostly", "generally", "absolutely", "totally", "definitely",
	"rarely", "hardly", "typically", "normally", "tend", "want", "wanna", "need", "fall",
	"pay", "subscribe", "grew", "play", "study", "teach", "speak", "avoid", "skip", "loathe",
	"detest", "despise", "still", "no", "not", "also", "find", "get", "got", "go", "went",
	"only", "mainly", "do", "would", "could", "will", "was", "am", "can", "especially",
	"fell", "gotta", "must", "cook", "read", "travel", "run", "just", "kinda", "sorta",
	"quite", "hated", "loved", "liked", "enjoyed", "watched", "rewatched",
)

// adverbs sit between a subject and its verb and are kept as they are.
var adverbs = set(
	"really", "absolutely", "totally", "just", "also", "usually", "generally", "always",
	"never", "often", "sometimes", "mostly", "rarely", "seldom", "still", "actually", "kinda",
	"sorta", "definitely", "truly", "especially", "particularly", "honestly", "only", "even",
	"almost", "occasionally", "typically", "normally", "basically", "literally", "genuinely",
	"mainly", "so", "quite", "somewhat", "slightly", "hardly", "barely", "personally",
	"constantly", "regularly", "frequently", "already", "recently", "secretly", "probably",
	"certainly", "completely", "seriously", "deeply", "mildly", "strongly", "no", "longer",
	"now", "lately", "simply", "pretty", "much", "kinda", "sorta", "finally", "once", "twice",
)

// negations deny the verb they go with.
var negations = set("not", "never", "no", "don't", "dont", "doesn't", "didn't", "can't", "cant",
	"cannot", "won't", "wont", "isn't", "aren't", "wasn't", "weren't", "haven't", "hasn't",
	"hadn't", "wouldn't", "couldn't", "shouldn't", "ain't", "nor")

// splitClauses cuts a message into clauses.
func splitClauses(msg string, toks []token) []clause {
	var out []clause
	start := 0
	for i := 1; i <= len(toks); i++ {
		if i < len(toks) && !sentenceBreak(toks[i].brk) {
			continue
		}
		q := (i < len(toks) && toks[i].brk == '?') || (i == len(toks) && strings.HasSuffix(strings.TrimSpace(msg), "?"))
		cs := splitSentence(toks[start:i], q)
		if len(cs) > 0 {
			cs[0].first = true
		}
		out = append(out, cs...)
		start = i
	}
	return out
}

func sentenceBreak(b byte) bool {
	return b == '.' || b == '!' || b == '?' || b == ';' || b == '\n'
}

// splitSentence cuts one sentence into clauses at contrast words, and at
// commas and "and" when what follows starts a clause of its own ("I love
// sci-fi, and I watch on Netflix"), but not in a list ("comedies, dramas
// and thrillers").
func splitSentence(s []token, question bool) []clause {
	var out []clause
	cut := 0
	for j := 1; j < len(s); j++ {
		t := s[j]
		split := false
		switch {
		case (t.w == "what" || t.w == "how") && matchSeq(s, j+1, "about"):
			split = true // "I don't like horror what about thrillers"
		case contrastWords[t.w] && t.w != "except":
			prev := s[j-1].w
			split = !(t.w == "but" && (prev == "anything" || prev == "everything" || prev == "nothing" || prev == "all")) &&
				!((t.w == "though" || t.w == "yet") && (j == len(s)-1 || s[j+1].brk != 0))
		case t.brk == ',' || t.brk == ':' || t.brk == '"':
			split = startsClause(s, j)
		case (t.w == "and" || t.w == "or" || t.w == "so" || t.w == "plus" || t.w == "then") && j+1 < len(s) && s[j+1].brk == 0:
			split = startsClause(s, j+1) && !adverbs[s[j+1].w] && !companionSubject(s[cut:j], s[j+1])
		}
		if split {
			out = append(out, clause{toks: s[cut:j], question: question && isQuestionClause(s[cut:j])})
			cut = j
		}
	}
	last := s[cut:]
	out = append(out, clause{toks: last, question: question && (isQuestionClause(last) || len(out) == 0 && !startsFirstPerson(last))})
	return out
}

// companionSubject reports "my wife" before "and I": one subject, not
// two clauses.
func companionSubject(before []token, next token) bool {
	if next.w != "i" && next.w != "me" {
		return false
	}
	k := skipConnectors(before)
	return k < len(before) && len(before)-k <= 4 && (before[k].w == "my" || before[k].w == "me")
}

// startsClause reports whether s[j:] opens a clause: after connectors, a
// first-person subject or a verb.
func startsClause(s []token, j int) bool {
	for j < len(s) && connectors[s[j].w] && s[j].w != "also" {
		j++
	}
	if j >= len(s) {
		return false
	}
	// A time before the subject: ", now I love it", ", these days I ...".
	for _, f := range framings {
		if matchAt(s, j, f) && j+len(f) < len(s) && subjectWords[s[j+len(f)].w] {
			return true
		}
	}
	return subjectWords[s[j].w] || clauseVerbs[s[j].w]
}

// questionStarts open a clause that asks.
var questionStarts = set("what", "which", "who", "whom", "where", "when", "why", "how", "can",
	"could", "would", "will", "do", "does", "did", "is", "are", "was", "were", "have", "has",
	"should", "shall", "any", "anything", "got", "may", "whats", "what's", "how's", "hows")

// isQuestionClause reports a clause that asks something.
func isQuestionClause(c []token) bool {
	k := skipConnectors(c)
	if k >= len(c) {
		return false
	}
	if questionStarts[c[k].w] {
		return true
	}
	for _, t := range c {
		if t.w == "you" || t.w == "you're" {
			return true
		}
	}
	return false
}

func startsFirstPerson(c []token) bool {
	k := skipConnectors(c)
	return k < len(c) && subjectWords[c[k].w]
}

func skipConnectors(c []token) int {
	k := 0
	for k < len(c) && connectors[c[k].w] {
		k++
	}
	return k
}

// subject says who a clause is about.
type subject int

const (
	subjNone    subject = iota // not about the user
	subjFirst                  // "I", "we", or inherited from the clause before
	subjOwn                    // "my X ...": something of the user's
	subjMention                // another subject, with "me" or "my" in it
)

// stmt is a clause read for its subject: rest is what follows the subject,
// with contractions spelled out ("I'm" gives "am ...").
type stmt struct {
	subj      subject
	rest      []token
	companion string // "my wife" in "my wife and I watch ..."
	all       []token
}

// framings before a subject are dropped: "I think I'd like ...".
var framings = [][]string{
	{"i", "think"}, {"i", "guess"}, {"i", "mean"}, {"i", "suppose"}, {"i", "believe"},
	{"i", "feel", "like"}, {"i'd", "say"}, {"i", "would", "say"}, {"to", "be", "honest"},
	{"tbh"}, {"honestly"}, {"i", "have", "to", "say"}, {"i", "must", "say"}, {"i", "admit"},
	{"i", "have", "to", "admit"}, {"i", "must", "admit"}, {"you", "know"}, {"fyi"},
	// Time before the subject says the statement holds now: "These days
	// I love horror", "Lately I've been into westerns".
	{"now"}, {"nowadays"}, {"lately"}, {"recently"}, {"currently"}, {"these", "days"},
	{"right", "now"}, {"at", "the", "moment"}, {"these", "days", "though"}, {"since", "then"},
	{"over", "the", "years"}, {"as", "of", "late"},
}

// syn makes a token that was not written but spelled out ("am" of "I'm").
func syn(w string) token { return token{w: w, raw: w, start: -1, end: -1} }

// readStmt finds the subject of a clause. prev is the subject of the clause
// before, inherited by a clause that starts with a verb.
func readStmt(c []token, prev subject, prevCompanion string) stmt {
	k := skipConnectors(c)
	for again := true; again; {
		again = false
		for _, f := range framings {
			if matchAt(c, k, f) && k+len(f) < len(c) && (subjectWords[c[k+len(f)].w] || c[k+len(f)].w == "that") {
				k += len(f)
				if c[k].w == "that" {
					k++
				}
				again = true
				break
			}
		}
	}
	if k >= len(c) {
		return stmt{all: c}
	}
	st := stmt{all: c[k:]}
	w := c[k].w
	spelled := map[string]string{"i'm": "am", "im": "am", "i've": "have", "ive": "have", "i'd": "would",
		"i'll": "will", "we're": "are", "we've": "have", "we'd": "would", "we'll": "will"}
	switch {
	case w == "i" || w == "we":
		if k+1 < len(c) && (c[k+1].w == "and" || c[k+1].w == "or") {
			break // "I and my wife": rare; read as a mention
		}
		st.subj, st.rest = subjFirst, c[k+1:]
		return st
	case spelled[w] != "":
		st.subj = subjFirst
		st.rest = append([]token{syn(spelled[w])}, c[k+1:]...)
		return st
	case w == "my" || w == "me":
		// "my wife and I watch", "me and my kids watch".
		for j := k + 1; j < len(c) && j <= k+4; j++ {
			if w == "my" && c[j].w == "and" && j+1 < len(c) && (c[j+1].w == "i" || c[j+1].w == "me") {
				st.subj, st.companion, st.rest = subjFirst, joinRaw(c[k+1:j]), c[j+2:]
				return st
			}
			if w == "me" && c[j].w == "my" && c[j-1].w == "and" {
				end := j + 1
				for end < len(c) && end <= j+3 && !clauseVerbs[c[end].w] {
					end++
				}
				st.subj, st.companion, st.rest = subjFirst, joinRaw(c[j+1:end]), c[end:]
				return st
			}
		}
		if w == "my" {
			st.subj, st.rest = subjOwn, c[k+1:]
			return st
		}
	case clauseVerbs[w] && prev == subjFirst:
		st.subj, st.rest, st.companion = subjFirst, c[k:], prevCompanion
		return st
	case prev == subjNone && ellipticalStart(c, k):
		// "Love sci-fi!", "Not a fan of musicals.": the "I" is left out.
		st.subj, st.rest = subjFirst, c[k:]
		return st
	}
	for j, t := range c[k:] {
		switch t.w {
		case "me", "my", "mine", "myself":
			if j > 0 && startsUpper(t.raw) {
				continue // "She's Out of My League" is a title
			}
			if mentionShape(c[k:]) {
				st.subj, st.rest = subjMention, c[k:]
			}
			return st
		}
	}
	return st
}

func joinRaw(ts []token) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.raw
	}
	return strings.Join(parts, " ")
}

// thirdPerson conjugates the verb of a first-person clause for "she".
func thirdPerson(w string) string {
	if v, ok := irregularThird[w]; ok {
		return v
	}
	if modals[w] || strings.HasSuffix(w, "ed") || irregularPast[w] || strings.HasSuffix(w, "n't") {
		return w
	}
	n := len(w)
	switch {
	case n == 0:
		return w
	case strings.HasSuffix(w, "s") || strings.HasSuffix(w, "x") || strings.HasSuffix(w, "z") ||
		strings.HasSuffix(w, "ch") || strings.HasSuffix(w, "sh") || (strings.HasSuffix(w, "o") && n <= 3):
		return w + "es"
	case n > 1 && w[n-1] == 'y' && !strings.ContainsRune("aeiou", rune(w[n-2])):
		return w[:n-1] + "ies"
	}
	return w + "s"
}

var irregularThird = map[string]string{
	"am": "is", "are": "is", "have": "has", "do": "does", "don't": "doesn't", "dont": "doesn't",
	"haven't": "hasn't", "havent": "hasn't", "aren't": "isn't", "weren't": "wasn't", "ain't": "isn't",
	"were": "was", "go": "goes", "wanna": "wants to", "gotta": "has to", "'m": "is",
}

var modals = set("can", "could", "will", "would", "should", "shall", "may", "might", "must",
	"cannot", "can't", "cant", "won't", "wont", "wouldn't", "couldn't", "shouldn't", "did",
	"didn't", "didnt", "was", "wasn't", "used", "mustn't", "need", "had", "hadn't")

var irregularPast = set("went", "saw", "grew", "got", "had", "was", "became", "began", "bought",
	"came", "did", "felt", "found", "gave", "heard", "knew", "left", "lost", "made", "met",
	"paid", "said", "sold", "sent", "spent", "took", "taught", "thought", "told", "wrote", "won",
	"fell", "ran", "swam", "drove", "flew", "forgot", "brought", "caught", "kept", "slept",
	"stood", "understood", "read", "led", "built", "chose", "broke", "been", "seen", "done",
	"gone", "watched", "quit", "put", "set", "let", "cut", "hit", "hurt", "shut")

// pronounSwap puts first-person words in the third person.
var pronounSwap = map[string]string{
	"my": "their", "me": "them", "myself": "themselves", "mine": "theirs", "i": "they",
	"i'm": "they're", "im": "they're", "i've": "they've", "i'd": "they'd", "i'll": "they'll",
	"we": "they", "our": "their", "us": "them", "ours": "theirs", "we're": "they're",
	"we've": "they've", "ourselves": "themselves",
}

// factSynonyms spell genre abbreviations out in facts.
var factSynonyms = []struct{ from, to string }{
	{"sci fi", "science fiction"}, {"scifi", "science fiction"}, {"rom coms", "romantic comedies"},
	{"rom com", "romantic comedy"}, {"romcoms", "romantic comedies"}, {"romcom", "romantic comedy"},
}

// canonicalTokens rewrites genre abbreviations into single spelled-out
// tokens, so "sci-fi" is written "science fiction".
func canonicalTokens(ts []token) []token {
	out := make([]token, 0, len(ts))
	for i := 0; i < len(ts); {
		done := false
		for _, s := range factSynonyms {
			if matchSeq(ts, i, s.from) {
				ws := strings.Count(s.from, " ") + 1
				t := syn(s.to)
				t.brk = ts[i].brk
				t.paren = ts[i].paren
				out = append(out, t)
				i += ws
				done = true
				break
			}
		}
		if !done {
			out = append(out, ts[i])
			i++
		}
	}
	return out
}

// render writes tokens back as text: words separated by spaces, commas
// where the message had them, and hyphens or slashes that joined words
// kept ("Disney+" keeps its plus).
func render(msg string, ts []token, swap bool) string {
	var b strings.Builder
	for i, t := range ts {
		word := t.raw
		if swap && (!startsUpper(t.raw) || strings.HasPrefix(t.w, "i") || i == 0) {
			if v, ok := pronounSwap[t.w]; ok {
				word = v
			} else if t.w == "am" && i > 0 && ts[i-1].w == "i" {
				word = "are"
			}
		}
		if t.start >= 0 && t.end < len(msg) && msg[t.end] == '+' {
			word += "+"
		}
		if i > 0 {
			prev := ts[i-1]
			switch {
			case t.brk == ',' || t.brk == ':':
				b.WriteString(", ")
			case t.hyph && prev.end >= 0 && t.start > prev.end && t.start-prev.end <= 3 && strings.TrimSpace(msg[prev.end:t.start]) == msg[prev.end:t.start]:
				b.WriteString(msg[prev.end:t.start])
			default:
				b.WriteByte(' ')
			}
		}
		b.WriteString(word)
	}
	return b.String()
}

// firstPersonFact rewrites the rest of a first-person clause ("really love
// sci-fi") in the third person ("really loves science fiction"). verb is
// the index in rest of the verb it conjugated, -1 when there was none.
func firstPersonFact(msg string, rest []token) (text string, negated bool, verb int) {
	rest = canonicalTokens(rest)
	i := skipAdverbs(rest, 0)
	if i >= len(rest) {
		return "", false, -1
	}
	out := make([]token, len(rest))
	copy(out, rest)
	// The verb group is written in lower case: "Not a fan" was only
	// capitalised because it began the message.
	for k := 0; k < len(out) && k <= i+2; k++ {
		if k <= i || adverbs[out[k].w] || negations[out[k].w] {
			out[k].raw = out[k].w
		}
	}
	if i+1 < len(rest) && rest[i+1].hyph && rest[i].end >= 0 && rest[i+1].start == rest[i].end+1 {
		// A compound verb: "binge-watch" gives "binge-watches".
		v := thirdPerson(rest[i+1].w)
		out[i+1].w, out[i+1].raw = v, v
	} else {
		v := thirdPerson(rest[i].w)
		out[i] = token{w: v, raw: v, start: -1, end: -1, brk: rest[i].brk}
	}
	// A second verb joined by "and"/"or" is conjugated too: "watch and
	// rewatch" gives "watches and rewatches".
	for j := i + 1; j+1 < len(rest); j++ {
		if rest[j].brk != 0 {
			break
		}
		if (rest[j].w == "and" || rest[j].w == "or") && clauseVerbs[rest[j+1].w] && !adverbs[rest[j+1].w] && !modals[rest[j+1].w] {
			v2 := thirdPerson(rest[j+1].w)
			out[j+1] = token{w: v2, raw: v2, start: -1, end: -1}
			break
		}
	}
	for _, t := range rest[:min(len(rest), i+3)] {
		if negations[t.w] || strings.HasSuffix(t.w, "n't") {
			negated = true
		}
	}
	// "no longer" negates; "not only" does not.
	return render(msg, out, true), negated, i
}

// skipAdverbs returns the index of the first word at or after i that is not
// an adverb ("really", "kind of", "no longer").
func skipAdverbs(ts []token, i int) int {
	for i < len(ts) {
		switch {
		case adverbs[ts[i].w] && !(ts[i].w == "no" && !matchSeq(ts, i+1, "longer")):
			i++
		case (ts[i].w == "kind" || ts[i].w == "sort") && matchSeq(ts, i+1, "of"):
			i += 2
		default:
			return i
		}
	}
	return i
}

// ellipticalStarts open a first-person statement whose "I" is left out.
var ellipticalStarts = [][]string{
	{"love"}, {"hate"}, {"enjoy"}, {"adore"}, {"prefer"}, {"dislike"}, {"loathe"}, {"detest"},
	{"despise"}, {"can't", "stand"}, {"cannot", "stand"}, {"can't", "get", "enough"},
	{"not", "a", "fan"}, {"not", "a", "big", "fan"}, {"not", "a", "huge", "fan"}, {"not", "into"},
	{"not", "big", "on"}, {"not", "crazy", "about"}, {"big", "fan"}, {"huge", "fan"}, {"no", "fan"},
	{"never", "watch"}, {"always", "watch"}, {"usually", "watch"}, {"mostly", "watch"}, {"rewatch"},
	{"really", "love"}, {"really", "like"}, {"really", "enjoy"}, {"really", "hate"}, {"absolutely", "love"},
	{"totally", "love"}, {"kinda", "like"}, {"binge"},
}

func ellipticalStart(c []token, k int) bool { return matchAny(c, k, ellipticalStarts) > 0 }

// spellEllipsis restores the verb of "not a fan of musicals" ("am not a
// fan of ...") and "big fan of" ("am a big fan of"). It reports false for a
// clause that starts with a bare "not" it cannot read ("not so much
// horrible bosses").
func spellEllipsis(rest []token) ([]token, bool) {
	i := skipAdverbs(rest, 0)
	if i >= len(rest) {
		return rest, true
	}
	switch {
	case matchSeq(rest, i, "big fan") || matchSeq(rest, i, "huge fan"):
		return append([]token{syn("am"), syn("a")}, rest[i:]...), true
	case rest[i].w == "not" || rest[i].w == "no" && !matchSeq(rest, i+1, "longer"):
		for _, p := range []string{"a", "big", "huge", "into", "crazy", "keen", "fond", "fan", "sure", "interested", "really into"} {
			if matchSeq(rest, i+1, p) {
				return append([]token{syn("am")}, rest[i:]...), true
			}
		}
		return nil, false
	}
	return rest, true
}

// mentionVerbs follow the subject of a clause that says something of the
// user without "I": "horror gives me nightmares", "Netflix is my go-to".
var mentionVerbs = set("is", "are", "was", "were", "gives", "give", "makes", "make", "scares",
	"scare", "bores", "bore", "helps", "help", "keeps", "keep", "reminds", "remind", "puts", "put",
	"drives", "drive", "gets", "get", "got", "relaxes", "relax", "calms", "calm", "annoys", "annoy",
	"puts", "sends", "send", "moves", "move", "makes", "terrifies", "terrify")

// mentionShape reports a clause shaped "<subject> <verb> ... me/my ...",
// whose subject is a noun phrase rather than a pointer or an interjection.
func mentionShape(c []token) bool {
	for j, t := range c {
		if j > 5 {
			return false
		}
		if mentionVerbs[t.w] {
			return j > 0
		}
		if pointerSubjects[t.w] || interjections[t.w] || adverbs[t.w] || t.w == "too" || t.w == "no" ||
			strings.HasSuffix(t.w, "'s") || (subjectWords[t.w] && t.w != "my" && t.w != "me") || questionStarts[t.w] {
			return false
		}
	}
	return false
}
