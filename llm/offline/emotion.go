package offline

import (
	"context"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memento-ai/memento"
)

// Emotion tagging: every word, phrase, emoji and emoticon of a general
// English lexicon that expresses one of the six basic emotions adds
// evidence for it. A negator shortly before a cue in the same clause turns
// it ("not happy" is sadness, "not scared" is no fear at all), an
// intensifier raises it and a hedge lowers it; exclamation marks and words
// in capitals raise the whole message. Neutral is the label of a message
// without enough evidence, and the confidence is the winning label's share
// of the evidence with neutral's standing mass counted in.

// emotionCue is what one lexicon entry says.
type emotionCue struct {
	label  string
	weight float64
}

// The lexicon, by label and strength. Inflected forms are listed rather
// than stemmed: a stemmer merges words of different feelings ("sick" and
// "sickening" are not the same complaint), and the table stays readable.
var emotionLexicon = map[string]map[float64][]string{
	memento.EmotionJoy: {
		1.0: {"love", "loved", "loving", "adore", "adored", "happy", "happier", "happiest", "delighted", "thrilled",
			"wonderful", "fantastic", "amazing", "awesome", "excellent", "brilliant", "perfect", "great", "superb",
			"glad", "joy", "joyful", "overjoyed", "ecstatic", "excited", "exciting", "yay", "hooray", "woohoo",
			"cheerful", "elated", "grateful", "thankful", "blessed", "fabulous", "terrific", "marvellous", "marvelous",
			"lovely", "enjoyed", "enjoying", "beautiful", "gorgeous", "stoked", "pumped",
			"spot on", "nailed it", "made my day", "love it", "can't wait", "cannot wait", "looking forward",
			"over the moon", "on cloud nine", "thank you so much", "exactly what i wanted", "well done"},
		0.6: {"good", "nice", "like", "liked", "enjoy", "pleased", "cool", "neat", "fine", "thanks", "thank",
			"cheers", "sweet", "yes", "smile", "smiling", "laugh", "laughing", "relaxed", "cozy", "cosy",
			"fond", "favourite", "favorite", "pleasant", "satisfied", "content", "charming", "interesting", "fun", "hilarious", "funny"},
	},
	memento.EmotionSadness: {
		1.0: {"sad", "sadder", "saddest", "unhappy", "depressed", "depressing", "miserable", "heartbroken",
			"devastated", "grief", "grieving", "mourning", "sorrow", "lonely", "alone", "cry", "crying", "cried",
			"tears", "weep", "weeping", "gloomy", "hopeless", "despair", "heartbreaking", "tragic", "hurt",
			"hurts", "disappointed", "disappointing", "disappointment", "let down", "letdown", "down in the dumps",
			"broke my heart", "miss her", "miss him", "miss them", "passed away", "died", "funeral", "breakup",
			"broke up", "dumped", "gutted", "bummed", "blue", "sorrowful", "melancholy", "homesick", "lost my",
			"unfortunately", "too bad", "not good", "not great", "not impressed", "no good"},
		0.6: {"sorry", "sadly", "alas", "tired", "exhausted", "drained", "low", "down",
			"upset", "empty", "meh", "bored", "boring", "dull", "shame", "pity", "rough", "hard day", "bad day",
			"long day", "give up", "giving up", "no luck", "never mind", "nevermind", "oh well",
			"wish", "missing", "regret"},
	},
	memento.EmotionAnger: {
		1.0: {"angry", "angrier", "furious", "mad", "livid", "enraged", "rage", "outraged", "outrageous",
			"infuriating", "infuriated", "annoyed", "annoying", "annoys", "annoy", "are you kidding me", "irritated", "irritating", "frustrated",
			"frustrating", "frustration", "fed up", "sick of", "sick and tired", "tired of", "hate", "hated",
			"hates", "pissed", "ridiculous", "useless", "pathetic", "stupid", "idiotic", "damn", "dammit",
			"wtf", "ffs", "hell", "screw", "shut up", "seriously", "unacceptable", "fuming",
			"had it", "come on", "for god's sake", "for crying out loud", "not again", "yet again", "ugh", "argh", "grr", "worst", "terrible", "awful", "rubbish", "garbage", "crap", "sucks",
			"keep getting", "keeps giving", "keep showing", "keeps showing", "i said",
			"i told you", "told you", "pointless", "waste of time", "nonsense", "bloody"},
		0.6: {"bothered", "grumpy", "cranky", "bad", "no", "nope", "worse", "why", "irritable",
			"hostile", "bitter", "resent", "stop", "lame", "enough", "again", "still", "wrong", "listen"},
	},
	memento.EmotionFear: {
		1.0: {"scared", "afraid", "frightened", "terrified", "terrifying", "fear", "fears", "panic",
			"panicking", "anxious", "anxiety", "nervous", "worried", "worry", "worrying", "dread", "dreading",
			"horrified", "petrified", "spooked", "creeped out", "freaked out", "freaking out", "nightmare",
			"nightmares", "phobia", "uneasy", "alarmed", "scary", "frightening", "shaking", "trembling",
			"jumpy", "paranoid", "tense", "stressed", "stress", "stressful", "can't sleep", "couldn't sleep",
			"keep me up", "kept me up", "give me nightmares", "gave me nightmares"},
		0.6: {"concerned", "unsure", "uncertain", "creepy", "spooky", "eerie", "danger", "dangerous", "risky",
			"afraid of", "what if", "hope not", "careful", "apprehensive", "insecure", "hesitant"},
	},
	memento.EmotionSurprise: {
		1.0: {"wow", "whoa", "woah", "omg", "surprised", "surprising", "surprise", "shocked", "shocking",
			"astonished", "astonishing", "amazed", "stunned", "speechless", "unbelievable", "unexpected",
			"no way", "oh my god", "oh my gosh", "can't believe", "cannot believe", "didn't expect",
			"did not expect", "never expected", "who knew", "out of nowhere", "plot twist", "mind blown",
			"blew my mind", "jaw dropped", "what a twist", "wait what", "holy cow", "holy moly", "gosh"},
		0.6: {"suddenly", "oh", "huh", "strange", "weird", "odd", "curious", "unusual", "incredible",
			"didn't know", "did not know", "had no idea", "first time", "really"},
	},
	memento.EmotionDisgust: {
		1.0: {"disgusting", "disgusted", "gross", "grossed out", "revolting", "repulsive", "nauseating",
			"sickening", "vile", "yuck", "ew", "eww", "ewww", "yuk", "nasty", "filthy", "repugnant",
			"makes me sick", "made me sick", "turns my stomach", "stomach turning", "can't stand", "cannot stand",
			"can't bear", "despise", "loathe", "detest", "abhor", "appalling", "appalled", "distasteful",
			"tasteless", "offensive", "cringe", "cringey", "cringy", "creepy guy", "sleazy", "trashy",
			"makes my skin crawl", "nauseous", "puke", "vomit", "off-putting", "unwatchable"},
		0.6: {"dislike", "disliked", "sick", "icky", "distaste", "tacky", "cheesy", "ugly",
			"repellent", "not my thing", "no thanks", "bleh"},
	},
}

// emojiCues are emoji and emoticons, matched in the raw text.
var emojiCues = map[string]emotionCue{
	"😀": {memento.EmotionJoy, 1}, "😃": {memento.EmotionJoy, 1}, "😄": {memento.EmotionJoy, 1},
	"😁": {memento.EmotionJoy, 1}, "😆": {memento.EmotionJoy, 1}, "😊": {memento.EmotionJoy, 1},
	"🙂": {memento.EmotionJoy, 0.6}, "😍": {memento.EmotionJoy, 1.2}, "🥰": {memento.EmotionJoy, 1.2},
	"😂": {memento.EmotionJoy, 1}, "🤣": {memento.EmotionJoy, 1}, "❤": {memento.EmotionJoy, 1},
	"💕": {memento.EmotionJoy, 1}, "👍": {memento.EmotionJoy, 0.6}, "🎉": {memento.EmotionJoy, 1},
	"🥳": {memento.EmotionJoy, 1}, "😎": {memento.EmotionJoy, 0.6}, "🤩": {memento.EmotionJoy, 1.2},
	"😢": {memento.EmotionSadness, 1.2}, "😭": {memento.EmotionSadness, 1.2}, "😞": {memento.EmotionSadness, 1},
	"😔": {memento.EmotionSadness, 1}, "☹": {memento.EmotionSadness, 1}, "🙁": {memento.EmotionSadness, 1},
	"💔": {memento.EmotionSadness, 1.2}, "😿": {memento.EmotionSadness, 1}, "😥": {memento.EmotionSadness, 1},
	"😠": {memento.EmotionAnger, 1.2}, "😡": {memento.EmotionAnger, 1.2}, "🤬": {memento.EmotionAnger, 1.5},
	"😤": {memento.EmotionAnger, 1}, "👎": {memento.EmotionAnger, 0.6}, "🙄": {memento.EmotionAnger, 0.8},
	"😱": {memento.EmotionFear, 1.2}, "😨": {memento.EmotionFear, 1.2}, "😰": {memento.EmotionFear, 1.2},
	"😧": {memento.EmotionFear, 1}, "😬": {memento.EmotionFear, 0.6}, "👻": {memento.EmotionFear, 0.6},
	"😮": {memento.EmotionSurprise, 1}, "😲": {memento.EmotionSurprise, 1.2}, "🤯": {memento.EmotionSurprise, 1.2},
	"😯": {memento.EmotionSurprise, 1}, "😳": {memento.EmotionSurprise, 0.8}, "‼": {memento.EmotionSurprise, 0.4},
	"🤢": {memento.EmotionDisgust, 1.5}, "🤮": {memento.EmotionDisgust, 1.5}, "😖": {memento.EmotionDisgust, 0.8},
	":)": {memento.EmotionJoy, 0.8}, ":-)": {memento.EmotionJoy, 0.8}, ":D": {memento.EmotionJoy, 1},
	":-D": {memento.EmotionJoy, 1}, "<3": {memento.EmotionJoy, 1}, ";)": {memento.EmotionJoy, 0.6},
	":(": {memento.EmotionSadness, 1}, ":-(": {memento.EmotionSadness, 1}, ":'(": {memento.EmotionSadness, 1.2},
	">:(": {memento.EmotionAnger, 1.2}, ":@": {memento.EmotionAnger, 1}, ":O": {memento.EmotionSurprise, 1},
	":o": {memento.EmotionSurprise, 1}, ":-O": {memento.EmotionSurprise, 1}, "D:": {memento.EmotionFear, 0.8},
}

// emotionIntensifiers raise the cue that follows them; hedges lower it.
var emotionIntensifiers = map[string]float64{
	"very": 1.5, "so": 1.4, "really": 1.4, "extremely": 1.8, "incredibly": 1.7, "totally": 1.5,
	"absolutely": 1.7, "completely": 1.5, "utterly": 1.7, "super": 1.5, "truly": 1.4, "deeply": 1.5,
	"too": 1.3, "most": 1.3, "such": 1.3, "particularly": 1.3, "terribly": 1.6, "insanely": 1.7,
	"bloody": 1.5, "damn": 1.4, "freaking": 1.5, "fucking": 1.7, "seriously": 1.3, "quite": 1.1,
	"somewhat": 0.6, "slightly": 0.5, "little": 0.6, "bit": 0.6, "kinda": 0.6, "sorta": 0.6,
	"fairly": 0.8, "mildly": 0.5, "barely": 0.4, "almost": 0.8,
}

// emotionNegators turn the cue that follows them within emotionNegationReach
// words of the same clause.
var emotionNegators = set(
	"not", "no", "never", "nor", "neither", "without", "hardly", "barely", "nothing", "none",
	"don't", "dont", "doesn't", "doesnt", "didn't", "didnt", "won't", "wont", "wouldn't", "wouldnt",
	"isn't", "isnt", "aren't", "arent", "wasn't", "wasnt", "weren't", "werent", "can't", "cant",
	"cannot", "couldn't", "couldnt", "shouldn't", "ain't", "haven't", "hasn't", "nobody",
)

// emotionNegationReach is how many words back a negator reaches.
const emotionNegationReach = 3

// negatedEmotion is what a negated cue becomes: a denied joy ("not happy",
// "didn't like it") is a disappointment, and a denied bad feeling ("not
// scared", "not angry") expresses nothing in particular, which adds to
// neutral.
func negatedEmotion(label string) string {
	if label == memento.EmotionJoy {
		return memento.EmotionSadness
	}
	return memento.EmotionNeutral
}

// Scoring constants. neutralMass is the evidence neutral holds before any
// cue: a message needs a clear cue to be tagged with an emotion, and its
// confidence grows with the amount of evidence.
const (
	neutralMass    = 0.7
	negatedWeight  = 0.8 // a negated cue counts for less than a stated one
	exclaimBoost   = 0.15
	maxExclaims    = 3
	capsBoost      = 1.3
	elongatedBoost = 1.3
)

// emotionTable holds every word and phrase cue, built once.
var emotionTable = func() *phraseTable[emotionCue] {
	t := newPhraseTable[emotionCue]()
	// Stronger entries first, so a word listed twice keeps its strongest
	// reading (phraseTable keeps the first value).
	for _, w := range []float64{1.0, 0.6} {
		for _, label := range memento.EmotionLabels {
			for _, p := range emotionLexicon[label][w] {
				t.add(p, emotionCue{label, w})
			}
		}
	}
	return t
}()

// ClassifyEmotion tags text with one of memento.EmotionLabels and a
// confidence, by the rules above. It never fails.
func (m *Model) ClassifyEmotion(_ context.Context, text string) (*memento.Emotion, error) {
	return ClassifyEmotion(text), nil
}

// ClassifyEmotion is the offline emotion rules as a function.
func ClassifyEmotion(text string) *memento.Emotion {
	scores := emotionScores(text)
	best, total := memento.EmotionNeutral, 0.0
	for _, l := range memento.EmotionLabels {
		total += scores[l]
		if scores[l] > scores[best] {
			best = l
		}
	}
	conf := scores[best] / total
	// Two cues of different feelings leave the reading uncertain; the
	// share above says so, and rounding keeps stored values short.
	return &memento.Emotion{Label: best, Confidence: math.Round(conf*100) / 100}
}

// emotionScores adds up the evidence for each label in text.
func emotionScores(text string) map[string]float64 {
	scores := map[string]float64{memento.EmotionNeutral: neutralMass}
	toks := tokenize(text)
	for i := 0; i < len(toks); {
		cue, n, ok := emotionTable.match(toks, i)
		if !ok {
			i++
			continue
		}
		// "like" is mostly a comparison ("something like Heat") and
		// "still", "again" only complain after a few words of request;
		// both count only where they read as a feeling.
		if !cueApplies(toks, i, n) {
			i += n
			continue
		}
		if w := toks[i].w; (w == "really" || w == "seriously") && n == 1 && strings.HasPrefix(strings.TrimLeft(text[toks[i].end:], " "), "?") {
			// "Really?", "Seriously?!": disbelief.
			cue = emotionCue{memento.EmotionSurprise, 1}
		}
		w := cue.weight
		label := cue.label
		if describesTitle(toks, i, n) {
			// "a scary film", "something sad": the feeling of the
			// title asked for, not of the person asking.
			w *= describedWeight
		}
		if f, ok := intensifierBefore(toks, i); ok {
			w *= f
		}
		if shouted(toks[i:i+n]) && len(toks) > 1 {
			w *= capsBoost
		}
		if elongated(toks[i].raw) {
			w *= elongatedBoost
		}
		if emotionNegated(toks, i) {
			label = negatedEmotion(label)
			w *= negatedWeight
		}
		scores[label] += w
		i += n
	}
	for cue, c := range emojiCues {
		if k := strings.Count(text, cue); k > 0 && emoticonStands(text, cue) {
			scores[c.label] += c.weight * float64(min(k, 3))
		}
	}
	// Exclamation marks strengthen whatever the message already
	// expresses; on their own they say nothing about which feeling.
	if ex := min(strings.Count(text, "!"), maxExclaims); ex > 0 {
		for _, l := range memento.EmotionLabels {
			if l != memento.EmotionNeutral && scores[l] > 0 {
				scores[l] *= 1 + exclaimBoost*float64(ex)
			}
		}
	}
	if strings.Contains(text, "?!") || strings.Contains(text, "!?") {
		scores[memento.EmotionSurprise] += 0.4
	}
	return scores
}

// cueApplies reports whether the cue toks[i:i+n] expresses a feeling here.
func cueApplies(toks []token, i, n int) bool {
	switch w := toks[i].w; {
	case n > 1:
		return true
	case w == "like":
		// "I like it", "really like": a feeling; "like Heat", "movies
		// like": a comparison.
		if i == 0 {
			return false
		}
		prev := toks[i-1].w
		return toks[i].brk == 0 && (prev == "i" || prev == "really" || prev == "we" || prev == "you'd" || prev == "would" || prev == "do" || prev == "did" || prev == "don't" || prev == "didn't" || prev == "they")
	case w == "still" || w == "again" || w == "why" || w == "no" || w == "never" || w == "stop":
		// "still" as complaint: "still the same", "still nothing";
		// "no" as a cue only when it stands alone ("No. Just no.").
		switch w {
		case "no":
			return (i+1 == len(toks) || toks[i+1].brk != 0) && (i == 0 || toks[i].brk != 0)
		case "never":
			return false // as a cue it is a negator, handled there
		}
		return true
	case w == "really" || w == "oh" || w == "seriously":
		// As a cue only when it stands alone ("Really?", "Seriously,
		// how many times"); otherwise it intensifies the next word.
		return i+1 == len(toks) || toks[i+1].brk != 0
	case w == "fine" || w == "down" || w == "low" || w == "blue" || w == "hell" || w == "alone":
		// Words that are mostly not feelings in a request ("fine by
		// me" is agreement, "turn it down", "low budget").
		return i > 0 && (toks[i-1].w == "feel" || toks[i-1].w == "feeling" || toks[i-1].w == "felt" || toks[i-1].w == "so" || toks[i-1].w == "very" || toks[i-1].w == "i'm" || toks[i-1].w == "am" || toks[i-1].w == "the" ||
			toks[i-1].w == "bit" || toks[i-1].w == "little" || toks[i-1].w == "pretty" || toks[i-1].w == "quite" || toks[i-1].w == "really")
	}
	return true
}

// emotionTitleNouns are the words a request names what it wants with; an
// emotion word next to one describes the title.
var emotionTitleNouns = set("movie", "movies", "film", "films", "show", "shows", "series", "ending", "endings",
	"story", "stories", "comedy", "comedies", "drama", "dramas", "thriller", "thrillers", "one", "ones",
	"book", "books", "documentary", "documentaries", "episode", "episodes", "flick", "flicks", "plot",
	"scenes", "scene", "musical", "romance", "cartoon", "cartoons", "title", "titles", "stuff")

// describedWeight is what an emotion word describing a title still counts:
// asking for a sad film says a little about the mood one is in.
const describedWeight = 0.3

// describesTitle reports an emotion word that describes a title rather
// than the person: one that modifies a title noun ("scary movie", "a sad,
// slow film"; one more word may stand between after an article, as in "a
// scary horror film") or follows "something", "anything" ("something
// scary"). After a first-person subject ("I loathe slasher films") the
// word is the person's own feeling.
func describesTitle(toks []token, i, n int) bool {
	for j := i - 1; j >= 0 && j >= i-2; j-- {
		switch toks[j].w {
		case "i", "i'm", "im", "we", "we're", "me", "i've", "i'd", "am":
			return false
		}
	}
	article := n == 1 && i > 0 && (toks[i-1].w == "a" || toks[i-1].w == "an" || toks[i-1].w == "some")
	skipped := false
	for j := i + n; j < len(toks) && j <= i+n+2; j++ {
		if j > i+n && toks[j].brk != 0 && toks[j].brk != ',' {
			break
		}
		if emotionTitleNouns[toks[j].w] {
			return true
		}
		if _, _, ok := emotionTable.match(toks, j); ok {
			continue
		}
		if !article || skipped {
			break
		}
		skipped = true
	}
	if i > 0 && toks[i].brk == 0 {
		switch toks[i-1].w {
		case "something", "anything", "nothing":
			return true
		case "really", "too", "very", "somewhat":
			return i > 1 && (toks[i-2].w == "something" || toks[i-2].w == "anything")
		}
	}
	return false
}

// intensifierBefore returns the factor of an intensifier or hedge just
// before toks[i] (one or two words back, in the same clause).
func intensifierBefore(toks []token, i int) (float64, bool) {
	for j := i - 1; j >= 0 && j >= i-2; j-- {
		if toks[j+1].brk != 0 {
			break
		}
		w := toks[j].w
		if elongated(w) {
			// "sooo", "veeery": the intensifier, written with feeling.
			w = squeeze(w)
			if f, ok := emotionIntensifiers[w]; ok {
				return f * elongatedBoost, true
			}
		}
		if f, ok := emotionIntensifiers[w]; ok {
			return f, true
		}
	}
	return 0, false
}

// emotionNegated reports a negator within reach before toks[i] in its
// clause, unless a contrast word stands between ("not great, but I love
// it" negates great only).
func emotionNegated(toks []token, i int) bool {
	for j, steps := i-1, 0; j >= 0 && steps < emotionNegationReach; j, steps = j-1, steps+1 {
		if toks[j+1].brk != 0 {
			return false
		}
		w := toks[j].w
		if w == "but" || w == "though" || w == "although" {
			return false
		}
		if emotionNegators[w] {
			// "can't wait", "cannot believe", "can't stand" are cues
			// of their own, matched as phrases before this is asked.
			return true
		}
	}
	return false
}

// shouted reports a cue written in capitals ("HATE", "SO GOOD").
func shouted(toks []token) bool {
	letters := 0
	for _, t := range toks {
		for _, r := range t.raw {
			if unicode.IsLetter(r) {
				if !unicode.IsUpper(r) {
					return false
				}
				letters++
			}
		}
	}
	return letters >= 2
}

// elongated reports a word with a letter repeated three times or more
// ("sooo", "nooo"), which people write when they feel strongly.
func elongated(raw string) bool {
	run, last := 0, rune(0)
	for _, r := range raw {
		if r == last {
			run++
			if run >= 3 {
				return true
			}
		} else {
			run, last = 1, r
		}
	}
	return false
}

// emoticonStands reports whether an ASCII emoticon stands on its own in
// text rather than inside a word or a time ("10:00" holds no ":0" face,
// "D:" needs a space or the start before it). Emoji always stand.
func emoticonStands(text, cue string) bool {
	if r, _ := utf8.DecodeRuneInString(cue); r >= utf8.RuneSelf {
		return true
	}
	for off := 0; ; {
		k := strings.Index(text[off:], cue)
		if k < 0 {
			return false
		}
		start, end := off+k, off+k+len(cue)
		before := start == 0 || text[start-1] == ' ' || text[start-1] == '\n'
		after := end == len(text) || !isWordByte(text[end])
		if before && after {
			return true
		}
		off = end
	}
}

func isWordByte(b byte) bool {
	return b == '_' || (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z')
}

// frustratedOpening is the reply's first sentence to a user who turned the
// titles down again, frustrated: it owns the misses in a few words.
func frustratedOpening(shown int) string {
	if shown == 0 {
		return "Sorry, that keeps missing."
	}
	return "Sorry these keep missing the mark."
}

// widenOffer offers to loosen one of the constraints in force (widen, in
// words), or the search in general when there are none.
func widenOffer(widen []string) string {
	if len(widen) == 0 {
		return "I can widen the search if you like: tell me another genre or decade to try."
	}
	return "I can widen the search if you like: I could drop " + joinList(widen, "or") + ". Just say which."
}

// squeeze collapses each run of three or more of one letter to one
// ("sooo" to "so", "veeery" to "very").
func squeeze(w string) string {
	rs := []rune(w)
	var out []rune
	for i := 0; i < len(rs); {
		j := i
		for j < len(rs) && rs[j] == rs[i] {
			j++
		}
		if j-i >= 3 {
			out = append(out, rs[i])
		} else {
			out = append(out, rs[i:j]...)
		}
		i = j
	}
	return string(out)
}
