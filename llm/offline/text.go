package offline

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memento-ai/memento/fulltext"
)

// token is one word of a message as the rules see it. Punctuation is not a
// token: it is remembered on the word that follows it, so phrase matching
// can refuse to cross a clause boundary.
type token struct {
	w     string // folded as fulltext folds words, with apostrophes straightened
	raw   string // as written
	start int    // byte offset of the word in the message
	end   int
	brk   byte // clause punctuation before this word ('.', ',', '?', ...), 0 if none
	hyph  bool // joined to the previous word by a hyphen, dash or slash
	paren bool // inside parentheses
}

// abbreviations end with a full stop that does not end a sentence.
var abbreviations = set("mr", "mrs", "ms", "dr", "st", "jr", "sr", "vs", "etc", "mt")

// tokenize splits s into words. The characters of fulltext's words make
// words (letters, digits, combining marks), folded as fulltext folds them
// ("Amélie" is "amelie"), with one difference the rules need: an
// apostrophe between a letter or digit and a letter stays inside the word
// ("don't", "90's"), where fulltext splits. '&' becomes the word "and".
// Everything else separates words, and clause punctuation is recorded on
// the next word.
func tokenize(s string) []token {
	var toks []token
	var pending byte
	hyph := false
	depth := 0
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		raw := s[start:end]
		toks = append(toks, token{
			w:     foldWord(raw),
			raw:   raw,
			start: start,
			end:   end,
			brk:   pending,
			hyph:  hyph,
			paren: depth > 0,
		})
		pending, hyph, start = 0, false, -1
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case fulltext.IsWordRune(r):
			if start < 0 {
				start = i
			}
		case isApostrophe(r) && start >= 0 && i+size < len(s):
			next, _ := utf8.DecodeRuneInString(s[i+size:])
			if !unicode.IsLetter(next) {
				flush(i)
			}
		default:
			wasWord := start >= 0
			flush(i)
			switch r {
			case '-', '/', '–', '‐', '~':
				if wasWord || len(toks) > 0 {
					hyph = true
				}
			case '—':
				pending = '.'
			case '&':
				toks = append(toks, token{w: "and", raw: "&", start: i, end: i + size, brk: pending, paren: depth > 0})
				pending, hyph = 0, false
			case '(', '[':
				depth++
				pending = ','
			case ')', ']':
				if depth > 0 {
					depth--
				}
				pending = ','
			case '.':
				if n := len(toks); wasWord && n > 0 && (utf8.RuneCountInString(toks[n-1].w) == 1 || abbreviations[toks[n-1].w]) &&
					!(n > 0 && isDigits(toks[n-1].w)) {
					break
				}
				pending = strongerBreak(pending, '.')
			case ',', ';', ':', '!', '?', '"', '“', '”', '\n', '…':
				b := byte(',')
				switch r {
				case ';', '!', '?', '\n', '…':
					b = byte(r)
					if r > 127 {
						b = '.'
					}
				case ':':
					b = ':'
				}
				pending = strongerBreak(pending, b)
			}
			if r != '-' && r != '/' && r != '–' && r != '‐' && r != '~' && !unicode.IsSpace(r) {
				hyph = false
			}
		}
		i += size
	}
	flush(len(s))
	return toks
}

// strongerBreak keeps the break that ends more: a question mark or full stop
// wins over a comma.
func strongerBreak(old, b byte) byte {
	rank := func(c byte) int {
		switch c {
		case '?':
			return 4
		case '.', '!', ';', '\n':
			return 3
		case ':':
			return 2
		case ',', '"':
			return 1
		}
		return 0
	}
	if rank(b) > rank(old) {
		return b
	}
	return old
}

func isApostrophe(r rune) bool { return r == '\'' || r == '’' || r == '‘' || r == '`' }

// foldWord folds a word as fulltext does (fulltext.Fold) and straightens
// its apostrophes. ASCII words are only lower-cased.
func foldWord(s string) string {
	if isASCII(s) {
		return strings.ToLower(s)
	}
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if isApostrophe(r) {
			b = append(b, '\'')
			continue
		}
		if f, ok := fulltext.Fold(r); ok && f >= 0 {
			b = utf8.AppendRune(b, f)
		}
	}
	return string(b)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// lowerWord lower-cases a word and straightens its apostrophes: the words
// of version 1 of the offline embedding, which are not folded.
func lowerWord(s string) string {
	s = strings.ToLower(s)
	if strings.ContainsAny(s, "’‘`") {
		s = strings.NewReplacer("’", "'", "‘", "'", "`", "'").Replace(s)
	}
	return s
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// set builds a lookup set from words.
func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// words returns the lower-cased words of a phrase written in a lexicon.
func words(phrase string) []string {
	toks := tokenize(phrase)
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = t.w
	}
	return out
}

// wordsOf returns the lower-cased words of tokens.
func wordsOf(toks []token) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = t.w
	}
	return out
}

// phraseTable finds lexicon phrases in a token list, longest first. It is
// built once and only read afterwards, so one table serves many goroutines.
type phraseTable[T any] struct {
	byFirst map[string][]phraseEntry[T]
}

type phraseEntry[T any] struct {
	words []string
	val   T
}

func newPhraseTable[T any]() *phraseTable[T] {
	return &phraseTable[T]{byFirst: map[string][]phraseEntry[T]{}}
}

// add registers a phrase; a phrase already present keeps its first value.
func (p *phraseTable[T]) add(phrase string, v T) {
	ws := words(phrase)
	if len(ws) == 0 {
		return
	}
	list := p.byFirst[ws[0]]
	for _, e := range list {
		if equalWords(e.words, ws) {
			return
		}
	}
	list = append(list, phraseEntry[T]{words: ws, val: v})
	// Longest first, so "romantic comedy" wins over "romantic".
	for i := len(list) - 1; i > 0 && len(list[i].words) > len(list[i-1].words); i-- {
		list[i], list[i-1] = list[i-1], list[i]
	}
	p.byFirst[ws[0]] = list
}

// match returns the value and length of the longest phrase starting at
// toks[i] that does not cross a clause boundary.
func (p *phraseTable[T]) match(toks []token, i int) (T, int, bool) {
	var zero T
	if i < 0 || i >= len(toks) {
		return zero, 0, false
	}
	for _, e := range p.byFirst[toks[i].w] {
		if matchAt(toks, i, e.words) {
			return e.val, len(e.words), true
		}
	}
	return zero, 0, false
}

// matchAt reports whether ws occur at toks[i:] without crossing a clause
// boundary.
func matchAt(toks []token, i int, ws []string) bool {
	if i < 0 || i+len(ws) > len(toks) {
		return false
	}
	for k, w := range ws {
		if toks[i+k].w != w || (k > 0 && toks[i+k].brk != 0) {
			return false
		}
	}
	return true
}

// matchSeq is matchAt for lower-case words written as a phrase with single
// spaces. It splits the phrase as it goes, without allocating.
func matchSeq(toks []token, i int, phrase string) bool {
	if i < 0 {
		return false
	}
	k := 0
	for phrase != "" {
		var w string
		w, phrase, _ = strings.Cut(phrase, " ")
		if w == "" {
			continue
		}
		if i+k >= len(toks) || toks[i+k].w != w || (k > 0 && toks[i+k].brk != 0) {
			return false
		}
		k++
	}
	return k > 0
}

// containsSeq reports whether the phrase occurs anywhere in toks.
func containsSeq(toks []token, phrase string) bool {
	first, _, _ := strings.Cut(strings.TrimLeft(phrase, " "), " ")
	for i := range toks {
		if toks[i].w == first && matchSeq(toks, i, phrase) {
			return true
		}
	}
	return false
}

func equalWords(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// numberWords are the counts people spell out.
var numberWords = map[string]int{
	"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
	"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
	"fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
	"nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
	"dozen": 12, "single": 1, "pair": 2,
}

// number reads a small count written in digits or words; years are not
// numbers here.
func number(w string) (int, bool) {
	if n, ok := numberWords[w]; ok {
		return n, true
	}
	if isDigits(w) && len(w) <= 3 {
		n, err := strconv.Atoi(w)
		return n, err == nil
	}
	return 0, false
}

// stopwords carry no topic of their own: fulltext's stop words and the
// words the rules also pass over (answers, fillers, the apostrophe-less
// contractions people type).
var stopwords = set(append(fulltext.Stopwords(),
	"a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "for", "with", "by",
	"from", "as", "is", "are", "was", "were", "be", "been", "being", "am", "it", "its", "it's",
	"this", "that", "these", "those", "there", "their", "they", "them", "i", "me", "my", "we",
	"us", "our", "you", "your", "he", "she", "his", "her", "him", "so", "if", "then", "than",
	"too", "very", "just", "also", "some", "any", "all", "into", "about", "over", "up",
	"do", "does", "did", "have", "has", "had", "not", "no", "yes", "can", "could", "would",
	"should", "will", "shall", "may", "might", "must", "what", "which", "who", "whom", "whose",
	"when", "where", "why", "how", "i'm", "i've", "i'd", "i'll", "im", "ive", "really", "quite",
	"more", "most", "much", "many", "such", "own", "same", "other", "each", "both", "few",
	"only", "again", "once", "here", "out", "off", "down", "under", "while", "because",
	"until", "after", "before", "between", "through", "during", "without", "within", "please",
	"one", "ones", "something", "anything", "everything", "thing", "things", "stuff", "lot",
	"get", "got", "like", "s", "t", "don't", "dont", "doesn't", "didn't", "can't", "isn't",
	"aren't", "wasn't", "they're", "they've", "they'd", "they'll", "who's", "that's", "what's",
)...)

// embedStopwords are the stop words of version 1 of the offline embedding
// (offline-hash/v1), which leaves them out of its word features; like
// embedStem they stay as they were until the embedding's version changes.
var embedStopwords = set(
	"a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "for", "with", "by",
	"from", "as", "is", "are", "was", "were", "be", "been", "being", "am", "it", "its", "it's",
	"this", "that", "these", "those", "there", "their", "they", "them", "i", "me", "my", "we",
	"us", "our", "you", "your", "he", "she", "his", "her", "him", "so", "if", "then", "than",
	"too", "very", "just", "also", "some", "any", "all", "into", "about", "over", "up",
	"do", "does", "did", "have", "has", "had", "not", "no", "yes", "can", "could", "would",
	"should", "will", "shall", "may", "might", "must", "what", "which", "who", "whom", "whose",
	"when", "where", "why", "how", "i'm", "i've", "i'd", "i'll", "im", "ive", "really", "quite",
	"more", "most", "much", "many", "such", "own", "same", "other", "each", "both", "few",
	"only", "again", "once", "here", "out", "off", "down", "under", "while", "because",
	"until", "after", "before", "between", "through", "during", "without", "within", "please",
	"one", "ones", "something", "anything", "everything", "thing", "things", "stuff", "lot",
	"get", "got", "like", "s", "t", "don't", "dont", "doesn't", "didn't", "can't", "isn't",
	"aren't", "wasn't", "they're", "they've", "they'd", "they'll", "who's", "that's", "what's",
)

// stem returns the fulltext stem of a word as tokenize spells it: a
// possessive "'s" or a trailing apostrophe is dropped first ("user's" is
// "user"), then the word is Porter-stemmed as the catalog, recall and the
// store stem it, so "comedies" meets "comedy", "loved" meets "love" and
// "watches" meets "watch".
func stem(w string) string {
	w = strings.TrimSuffix(w, "'s")
	w = strings.TrimSuffix(w, "'")
	return fulltext.Stem(w)
}

// embedStem is the stemmer of version 1 of the offline embedding
// (offline-hash/v1): its stems are features of stored vectors, so it stays
// as it was until the embedding's version changes. Everything else stems
// with stem.
func embedStem(w string) string {
	w = strings.TrimSuffix(w, "'s")
	w = strings.TrimSuffix(w, "'")
	n := len(w)
	switch {
	case n > 4 && (strings.HasSuffix(w, "ies") || strings.HasSuffix(w, "ied")):
		return w[:n-3] + "i"
	case n > 4 && (strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "xes")):
		return w[:n-2]
	case n > 5 && strings.HasSuffix(w, "ing"):
		return trimDouble(w[:n-3])
	case n > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed"):
		return trimDouble(w[:n-2])
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return trimE(w[:n-1])
	}
	return trimE(w)
}

// trimDouble undoes a doubled consonant ("stopped" -> "stop") and then
// trims like trimE (embedStem).
func trimDouble(w string) string {
	n := len(w)
	if n > 2 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiouls", rune(w[n-1])) {
		return w[:n-1]
	}
	return trimE(w)
}

// trimE drops a final e and turns a final y into i (embedStem).
func trimE(w string) string {
	switch {
	case len(w) > 3 && strings.HasSuffix(w, "e") && !strings.HasSuffix(w, "ee"):
		return w[:len(w)-1]
	case len(w) > 2 && strings.HasSuffix(w, "y"):
		return w[:len(w)-1] + "i"
	}
	return w
}

// joinList writes items as "a", "a and b" or "a, b and c".
func joinList(items []string, conj string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	case 2:
		return items[0] + " " + conj + " " + items[1]
	}
	return strings.Join(items[:len(items)-1], ", ") + " " + conj + " " + items[len(items)-1]
}
