package offline

import (
	"strings"

	"github.com/memento-ai/memento"
)

// A short answer states a fact only together with the question it answers:
// "Mostly Netflix, sometimes Hulu." after "Which service do you watch on?"
// says the user watches on Netflix and on Hulu. The rules here turn the
// question's clause about "you" into a first-person frame ("I watch on")
// and put each part of the answer into it ("I mostly watch on Netflix",
// "I sometimes watch on Hulu"); the sentences so written go through the
// same clause rules as anything the user writes, so negation, requests for
// now ("What are you in the mood for?") and small talk are read as
// everywhere else. Words come only from the question and the answer.

// asReadPrefix and asReadUser mark the message a reviewer reads when it
// answers a question (pipeline.asRead): "Agent: <question>\nUser: <message>".
const (
	asReadPrefix = "Agent: "
	asReadUser   = "\nUser: "
)

// splitAsRead returns the question and the message of a reviewer's text
// written as pipeline.asRead writes it, or ("", text).
func splitAsRead(text string) (question, message string) {
	if !strings.HasPrefix(text, asReadPrefix) {
		return "", text
	}
	q, msg, ok := strings.Cut(text[len(asReadPrefix):], asReadUser)
	if !ok {
		return "", text
	}
	return strings.TrimSpace(q), msg
}

// lastQuestion returns the last question of an agent's turn, or "".
func lastQuestion(turn string) string {
	turn = strings.TrimSpace(turn)
	end := strings.LastIndexByte(turn, '?')
	if end < 0 {
		return ""
	}
	start := strings.LastIndexAny(turn[:end], ".!?\n")
	return strings.TrimSpace(turn[start+1 : end+1])
}

// frame is a question's clause about the user, turned around: the words a
// first-person statement starts with (head, "I watch on"), how to deny it
// (neg, "I don't watch on"), whether the question asks yes or no, and the
// object a pronoun in the answer stands for ("horror" in "Do you like
// horror?" → "Love it").
type frame struct {
	head, neg string
	yesNo     bool
	object    string
	// choice is a yes-or-no question that offers alternatives ("Do you
	// prefer short episodes or long films?"), answered by naming one:
	// choiceHead is the statement without them ("I prefer").
	choice                bool
	choiceHead, choiceNeg string
}

// auxFrames say how "<aux> you" is written in the first person, asserted
// and denied.
var auxFrames = map[string][2]string{
	"do": {"I", "I don't"}, "does": {"I", "I don't"}, "did": {"I", "I didn't"},
	"are": {"I am", "I am not"}, "were": {"I was", "I was not"}, "have": {"I have", "I haven't"},
	"would": {"I would", "I wouldn't"}, "will": {"I will", "I won't"}, "can": {"I can", "I can't"},
	"could": {"I could", "I couldn't"}, "should": {"I should", "I shouldn't"},
}

// youForms are "you" and its contractions, with their first-person
// subjects.
var youForms = map[string][2]string{
	"you": {"I", "I don't"}, "you'd": {"I'd", "I wouldn't"}, "you're": {"I'm", "I'm not"},
	"you've": {"I've", "I haven't"}, "you'll": {"I'll", "I won't"},
}

// secondPerson turns the question's words about the user into the first
// person.
var secondPerson = map[string]string{"your": "my", "yours": "mine", "yourself": "myself", "you": "me"}

// questionLeads open a question without changing what it asks.
var questionLeads = set("and", "so", "also", "ok", "okay", "great", "cool", "nice", "oh", "well", "then", "now", "btw", "quick", "question")

// pastOf is the past of the verbs "did you ...?" asks about most.
var pastOf = map[string]string{"like": "liked", "love": "loved", "enjoy": "enjoyed", "hate": "hated",
	"watch": "watched", "see": "saw", "finish": "finished", "rewatch": "rewatched", "dislike": "disliked"}

// readFrame reads the question's clause about the user.
func readFrame(q string) (frame, bool) {
	toks := tokenize(q)
	k := 0
	for k < len(toks) && questionLeads[toks[k].w] {
		k++
	}
	toks = toks[k:]
	if len(toks) == 0 {
		return frame{}, false
	}
	raw := func(ts []token) string {
		parts := make([]string, 0, len(ts))
		for _, t := range ts {
			w := t.raw
			if v, ok := secondPerson[t.w]; ok {
				w = v
			}
			parts = append(parts, w)
		}
		return strings.Join(parts, " ")
	}
	// "What's your favourite film?", "Who is your favourite actor?",
	// "Which service is your go-to?": "My favourite film is ...".
	for i, t := range toks {
		if t.w != "your" || i == 0 || i+1 >= len(toks) {
			continue
		}
		before := toks[i-1].w
		if before == "is" || before == "are" || before == "what's" || before == "whats" || before == "who's" {
			rest := raw(toks[i:])
			verb := "is"
			if before == "are" {
				verb = "are"
			}
			return frame{head: rest + " " + verb, neg: rest + " " + verb + " not"}, true
		}
	}
	yi := -1
	for i, t := range toks {
		if _, ok := youForms[t.w]; ok && !(i > 0 && toks[i-1].w == "thank") {
			yi = i
			break
		}
	}
	if yi < 0 {
		// "Popular hits or hidden gems?": a choice, answered by naming one.
		for _, t := range toks {
			if t.w == "or" {
				return frame{head: "I prefer", neg: "I don't prefer"}, true
			}
		}
		return frame{}, false
	}
	vp := toks[yi+1:]
	// "Do you have a favourite genre?" asks for the favourite.
	if len(vp) >= 3 && vp[0].w == "have" && (vp[1].w == "a" || vp[1].w == "any") && isFavouriteWord(vp[2].w) {
		rest := "my " + raw(vp[2:])
		return frame{head: rest + " is", neg: rest + " is not"}, true
	}
	if len(vp) == 0 {
		return frame{}, false
	}
	forms := youForms[toks[yi].w]
	f := frame{}
	if yi > 0 {
		if a, ok := auxFrames[toks[yi-1].w]; ok {
			forms = a
			f.yesNo = yi == 1
		}
	}
	verb := vp[0].w
	words := raw(vp)
	if yi > 0 && toks[yi-1].w == "did" {
		if p, ok := pastOf[verb]; ok {
			words = p + strings.TrimPrefix(words, vp[0].raw)
			forms[0] = "I"
		}
	}
	f.head = forms[0] + " " + words
	f.neg = forms[1] + " " + raw(vp)
	for _, t := range vp {
		if t.w == "or" && f.yesNo {
			f.choice = true
			f.choiceHead, f.choiceNeg = forms[0]+" "+vp[0].raw, forms[1]+" "+vp[0].raw
		}
	}
	// The object a pronoun of the answer stands for: what follows "of"
	// or "about", else what follows the verb.
	obj := vp[1:]
	for i, t := range vp {
		if t.w == "of" || t.w == "about" {
			obj = vp[i+1:]
			break
		}
	}
	if len(obj) > 0 && !clauseVerbs[obj[0].w] {
		f.object = raw(obj)
	}
	return f, true
}

// frameWords are the words the frame of question q writes into a
// statement ("I prefer" for a choice), which back the facts of an answer
// as the question's own words do.
func frameWords(q string) string {
	f, ok := readFrame(q)
	if !ok {
		return ""
	}
	return f.head + " " + f.neg + " " + f.choiceHead
}

func isFavouriteWord(w string) bool {
	return w == "favourite" || w == "favorite" || w == "fave" || w == "fav"
}

// yesWords and noWords open an answer to a yes-or-no question.
var (
	yesPhrases = []string{"yes", "yeah", "yep", "yup", "ya", "sure", "definitely", "absolutely", "of course",
		"totally", "i do", "i am", "i have", "i would", "i will", "for sure", "very much", "very", "really",
		"big time", "100%", "indeed", "certainly", "mostly", "usually", "often", "always", "all the time", "a lot",
		"kind of", "sort of", "a bit", "a little", "somewhat", "i guess so", "i think so", "probably", "mhm", "uh huh", "yes please"}
	noPhrases = []string{"no", "nope", "nah", "not really", "not at all", "not much", "not so much", "never",
		"i don't", "i do not", "i'm not", "i am not", "i haven't", "i have not", "i wouldn't", "i won't",
		"hardly", "rarely", "not a fan", "not particularly", "not especially", "no way", "absolutely not", "definitely not", "not usually"}
	// frequencyAnswers say how often rather than yes or no, and join the
	// statement: "Do you rewatch films?" "All the time."
	frequencyAnswers = []string{"all the time", "every week", "every weekend", "every night", "every day",
		"once a week", "twice a week", "once a month", "a lot", "sometimes", "occasionally", "often",
		"rarely", "always", "constantly", "most nights", "most weekends", "now and then", "every now and then",
		"once in a while", "from time to time", "every year", "many times", "multiple times"}
	// nonAnswers say nothing about the user.
	nonAnswers = []string{"not sure", "no idea", "don't know", "dont know", "do not know", "dunno", "whatever",
		"doesn't matter", "does not matter", "no preference", "don't mind", "don't care", "either", "anything",
		"depends", "it depends", "hard to say", "i'm not sure", "i am not sure", "good question", "let me think",
		"idk", "pass", "skip", "any", "both are fine", "either is fine", "surprise me", "you choose", "you pick"}
	// answerFillers open an answer part and are dropped.
	answerFillers = []string{"well", "hmm", "um", "uh", "oh", "i'd say", "i would say", "i guess", "i think",
		"probably", "maybe", "honestly", "to be honest", "tbh", "haha", "lol", "ah", "ok", "okay", "hm", "like",
		"i suppose", "definitely", "for sure", "mainly", "mostly", "usually", "sometimes", "generally",
		"normally", "typically", "also", "and", "plus", "or", "then", "especially", "often", "occasionally"}
	// answerAdverbs of a part go before the verb of the statement.
	answerAdverbs = set("mostly", "usually", "sometimes", "generally", "normally", "typically", "mainly",
		"often", "occasionally", "also", "especially")
)

// startsWith returns the length in tokens of the first phrase that toks
// start with, or 0.
func startsWith(toks []token, phrases []string) int {
	best := 0
	for _, p := range phrases {
		ws := words(p)
		if len(ws) > best && matchAt(toks, 0, ws) {
			best = len(ws)
		}
	}
	return best
}

// answerFacts returns the facts a message states as the answer to the
// question q, beyond those it states alone (own).
func answerFacts(q, msg string, own []memento.Fact) []memento.Fact {
	var out []memento.Fact
	for _, s := range answerStatements(q, msg, len(own) > 0) {
		for _, fact := range extractFacts(s) {
			if len(appendFact(own, fact)) > len(own) {
				out = appendFact(out, fact)
			}
		}
	}
	return out
}

// answerStatements writes what a message says as the answer to the
// question q as first-person sentences ("I mostly watch on Netflix."),
// for the rules that read statements. hasOwn says the message states
// facts of its own, which only a denial ("No, ...") adds to.
func answerStatements(q, msg string, hasOwn bool) []string {
	f, ok := readFrame(q)
	if !ok || strings.TrimSpace(msg) == "" || strings.HasSuffix(strings.TrimSpace(msg), "?") {
		return nil
	}
	toks := tokenize(msg)
	if len(toks) == 0 || len(toks) > 20 {
		return nil // a long message says what it means on its own
	}
	if n := startsWith(toks, nonAnswers); n > 0 && (n == len(toks) || toks[n].brk != 0) {
		return nil
	}
	if imperatives[toks[0].w] && toks[0].w != "see" {
		return nil // a request, not an answer
	}
	var out []string
	add := func(sentence string) { out = append(out, sentence) }
	// A pronoun stands for what the question asked about: "Do you like
	// horror?" "Love it!"
	if f.object != "" {
		if s, ok := replacePronoun(msg, toks, f.object); ok {
			if len(extractFacts(s)) > 0 {
				return []string{s}
			}
		}
	}
	if hasOwn {
		// "No, I prefer comedies": the answer's own statement, and the
		// denial of what was asked.
		if f.yesNo && startsWith(toks, noPhrases) > 0 {
			add(f.neg + ".")
		}
		return out
	}
	if f.yesNo {
		switch {
		case startsWith(toks, frequencyAnswers) > 0 && !strings.HasPrefix(strings.ToLower(f.head), "i am"):
			n := startsWith(toks, frequencyAnswers)
			add(f.head + " " + joinRaw(toks[:n]) + ".")
		case startsWith(toks, noPhrases) > 0:
			add(f.neg + ".")
		case startsWith(toks, yesPhrases) > 0:
			add(f.head + ".")
		default:
			if f.choice {
				// "Do you prefer short episodes or long films?" "Short
				// episodes": the answer names one.
				f.head, f.neg = f.choiceHead, f.choiceNeg
				break
			}
			return out
		}
		if !f.choice || len(out) > 0 {
			return out
		}
	}
	for _, part := range answerParts(toks) {
		adverb := ""
		for {
			n := startsWith(part, answerFillers)
			if n == 0 || n >= len(part) {
				break
			}
			if n == 1 && answerAdverbs[part[0].w] && adverb == "" {
				adverb = part[0].w
			}
			part = part[n:]
		}
		for len(part) > 1 {
			n := endsWith(part, answerTrailers)
			if n == 0 || n >= len(part) {
				break
			}
			part = part[:len(part)-n]
		}
		if len(part) == 0 || (subjectWords[part[0].w] && part[0].w != "my" && part[0].w != "me") {
			continue
		}
		if part[0].start == toks[0].start && (stopwords[part[0].w] || isGenreWord(part[0].w) || trivialWords[part[0].w]) {
			// Capitalised only because it starts the message.
			part = append([]token{{w: part[0].w, raw: part[0].w, start: -1, end: -1}}, part[1:]...)
		}
		head := f.head
		if part[0].w == "not" || part[0].w == "no" {
			head, part = f.neg, part[1:]
			if len(part) == 0 {
				continue
			}
		}
		if adverb != "" && strings.HasPrefix(head, "I ") {
			head = "I " + adverb + " " + strings.TrimPrefix(head, "I ")
		}
		add(head + " " + joinRaw(part) + ".")
	}
	return out
}

// answerTrailers end an answer part and are dropped: "Hidden gems, for
// sure".
var answerTrailers = []string{"for sure", "definitely", "probably", "i guess", "i think", "honestly",
	"though", "really", "lol", "haha", "mostly", "usually", "i'd say", "i suppose", "for me", "please", "thanks"}

// endsWith returns the length in tokens of the first phrase that toks
// end with, or 0.
func endsWith(toks []token, phrases []string) int {
	best := 0
	for _, p := range phrases {
		ws := words(p)
		if len(ws) > best && len(ws) <= len(toks) && matchAt(toks, len(toks)-len(ws), ws) {
			best = len(ws)
		}
	}
	return best
}

// answerParts cuts an answer into the parts a list or a contrast makes:
// "Mostly Netflix, sometimes Hulu" gives "Mostly Netflix" and "sometimes
// Hulu"; "and" and "or" stay inside a part ("thrillers and sci-fi").
func answerParts(toks []token) [][]token {
	var out [][]token
	start := 0
	for i := 1; i <= len(toks); i++ {
		if i < len(toks) && toks[i].brk == 0 && !contrastWords[toks[i].w] && !(answerAdverbs[toks[i].w] && toks[i].w != "also") {
			continue
		}
		if p := toks[start:i]; len(p) > 0 {
			out = append(out, p)
		}
		start = i
		if i < len(toks) && contrastWords[toks[i].w] {
			start = i + 1
		}
	}
	return out
}

// answerPronouns stand for what the question asked about.
var answerPronouns = set("it", "them", "those", "that", "these", "this", "em")

// replacePronoun writes the answer with its first pronoun replaced by the
// question's object, and "I" before an answer that starts with a verb:
// "Loved it" after "Did you like Heat?" gives "I Loved Heat".
func replacePronoun(msg string, toks []token, object string) (string, bool) {
	for i, t := range toks {
		if !answerPronouns[t.w] || i == 0 || i > 4 {
			continue
		}
		prev := toks[i-1].w
		if !clauseVerbs[prev] && !positiveWords[stem(prev)] && !negativeWords[stem(prev)] && prev != "of" && prev != "seen" {
			continue
		}
		s := msg[:t.start] + object + msg[t.end:]
		if k := startsWith(toks, yesPhrases); k > 0 && k < len(toks) {
			s = msg[toks[k].start:t.start] + object + msg[t.end:]
		} else if k := startsWith(toks, noPhrases); k > 0 && k < i {
			return "", false // "No, never seen it": the denial frame reads it
		}
		if w := strings.ToLower(strings.Fields(s)[0]); !subjectWords[w] {
			s = "I " + s
		}
		return s, true
	}
	return "", false
}
