// Package fulltext is Memento's one text toolkit: it splits text into words,
// folds them, stems them and knows which of them are English function words,
// the same way everywhere, so a word is one term in the catalog's index, in
// recall, in the preferences' lexical match, in the pipeline's topic check and
// in the offline model's rules.
//
// The words and terms are those of the store's SQLite FTS5 tables, which are
// all configured with FTS5Tokenize: a word is a run of letters, digits and
// private-use characters (any other character separates, as in FTS5's
// unicode61 tokenizer; an apostrophe too, so "don't" is "don" and "t"),
// case-folded, with combining marks dropped and the diacritics of Latin
// letters removed ("Amélie" is "amelie"), and a term is a word stemmed with
// Porter's algorithm as FTS5's porter tokenizer does. sqlite's
// TestFulltextMatchesFTS5 tokenizes the same texts both ways and checks that
// the terms agree.
//
// The stop-word list (Stopword) holds the English function words that carry
// no topic: recall leaves them out of a query, the catalog out of its index,
// and topic matching out of both sides.
//
// When reads the time expressions of a text ("yesterday", "two weeks ago",
// "in May") with the same words and resolves them against the time the
// text was said: the stores keep them with every message and memory, and
// recall matches a question's times against them.
package fulltext

import (
	"slices"
	"strings"
	"unicode"
)

// FTS5Tokenize is the tokenize option of every FTS5 table of the store.
// Tokens reproduces it.
const FTS5Tokenize = "porter unicode61 remove_diacritics 2"

// BM25K1 and BM25B are the k1 and b of Okapi BM25 that every keyword
// ranking here uses: Robertson and Zaragoza's usual values, the ones
// SQLite FTS5's bm25() has.
const (
	BM25K1 = 1.2
	BM25B  = 0.75
)

// Words splits text into its words, in order, repeats kept: lower case
// (case-folded), diacritics removed, not stemmed.
func Words(text string) []string {
	out := make([]string, 0, len(text)/5+1)
	EachWord(text, func(w []byte) { out = append(out, string(w)) })
	return out
}

// Tokens returns the terms of text in order, repeats kept: its Words, each
// stemmed (Stem), as the store's FTS5 tables index it.
func Tokens(text string) []string {
	out := make([]string, 0, len(text)/5+1)
	EachTerm(text, func(t []byte) { out = append(out, string(t)) })
	return out
}

// TopicTerms returns the terms of text in order, repeats kept, without the
// stop words: the terms that say what a text is about.
func TopicTerms(text string) []string {
	var out []string
	EachTopicTerm(text, func(t []byte) { out = append(out, string(t)) })
	return out
}

// Term returns the single term of a query word (the first of Tokens), or
// "" when the word has no letter or digit.
func Term(word string) string {
	var out string
	done := false
	EachTerm(word, func(t []byte) {
		if !done {
			out, done = string(t), true
		}
	})
	return out
}

// EachTerm calls fn with every term of text in order (see Tokens). The term
// is in a buffer that is only valid during the call.
func EachTerm(text string, fn func(term []byte)) {
	EachWord(text, func(w []byte) { fn(StemBytes(w)) })
}

// EachTopicTerm calls fn with every term of text that is not a stop word
// (see TopicTerms); whether a word is one is decided before stemming. The
// term is in a buffer that is only valid during the call.
func EachTopicTerm(text string, fn func(term []byte)) {
	EachWord(text, func(w []byte) {
		if !StopwordBytes(w) {
			fn(StemBytes(w))
		}
	})
}

// Stopword reports whether w (a word as Words spells it, or any lower-case
// spelling with an apostrophe such as "don't") is an English function word
// that carries no topic.
func Stopword(w string) bool { return isStopword(w) }

// StopwordBytes is Stopword for a word in a buffer; it does not allocate.
func StopwordBytes(w []byte) bool { return isStopword(string(w)) }

// stopwords are the English function words, with the contractions written
// with an apostrophe (for QueryWords and callers that keep apostrophes) and
// the fragments an apostrophe leaves ("s", "t", "ll").
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are aren't as at be because been
		before being below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down
		during each few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers
		herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most
		mustn't my myself no nor not of off on once only or other ought our ours ourselves out over own same shan't she
		she'd she'll she's should shouldn't so some such than that that's the their theirs them themselves then there
		there's these they they'd they'll they're they've this those through to too under until up upon very was wasn't we
		we'd we'll we're we've were weren't what what's when when's where where's which while who who's whom why why's
		with won't would wouldn't you you'd you'll you're you've your yours yourself yourselves also just get got go
		going gone really would will shall may might much many thing things something anything like s t d ll m re ve`) {
		m[w] = true
	}
	return m
}()

// QueryWords returns the distinct topic words of a query, lower case and
// unstemmed, in order: its words that are not Stopwords, or all its words
// when every one is a stop word. An apostrophe inside a word ends it
// ("melanie's" is "melanie") unless the whole word is a stop word ("don't").
func QueryWords(text string) []string {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !IsWordRune(r) && r != '\'' && r != '’'
	})
	seen := map[string]bool{}
	var topic, all []string
	for _, w := range words {
		w = strings.Trim(strings.ReplaceAll(w, "’", "'"), "'")
		if i := strings.IndexByte(w, '\''); i > 0 && !stopwords[w] {
			w = w[:i]
		}
		stop := stopwords[w]
		w = strings.ReplaceAll(w, "'", "")
		if w == "" || seen[w] {
			continue
		}
		seen[w] = true
		all = append(all, w)
		if !stop {
			topic = append(topic, w)
		}
	}
	if len(topic) == 0 {
		return all
	}
	return topic
}

// IsWordRune reports whether r belongs to a word: a letter, a digit or
// other number, a private-use character, or a combining mark (which Fold
// then drops).
func IsWordRune(r rune) bool {
	if r < 0x80 {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r) || unicode.Is(unicode.Mn, r)
}

// Stopwords returns the stop words (see Stopword), sorted: for a rule
// lexicon that extends the list with words of its own.
func Stopwords() []string {
	out := make([]string, 0, len(stopwords))
	for w := range stopwords {
		out = append(out, w)
	}
	slices.Sort(out)
	return out
}
