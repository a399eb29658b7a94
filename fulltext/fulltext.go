// Package fulltext splits text into the terms that keyword search matches:
// words of letters and digits, lower case, with diacritics removed and
// Porter-stemmed, the way the store's SQLite FTS5 tables are configured
// (tokenize = 'porter unicode61 remove_diacritics 2'). Recall's in-process
// index, the evaluation baselines and the answer score use it, so every
// keyword path of Memento agrees on what a word is.
//
// It also holds the list of English function words that recall leaves out
// of a query: they carry no topic, and a question shares them with almost
// every turn.
package fulltext

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// BM25K1 and BM25B are the k1 and b of Okapi BM25 that every keyword
// ranking here uses: Robertson and Zaragoza's usual values, the ones
// SQLite FTS5's bm25() has.
const (
	BM25K1 = 1.2
	BM25B  = 0.75
)

// Words splits text into lower-case words of letters and digits. It does
// not stem or fold diacritics.
func Words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// Tokens returns the terms of text in order, repeats kept: each run of
// letters and digits (any other character separates, as in FTS5's
// unicode61 tokenizer), lower-cased, with diacritics removed ("café" is
// "cafe") and stemmed (Stem).
func Tokens(text string) []string {
	if !isASCII(text) {
		text = fold(text)
	}
	out := make([]string, 0, len(text)/5+1)
	start := -1
	flush := func(end int) {
		if start >= 0 {
			out = append(out, Stem(strings.ToLower(text[start:end])))
			start = -1
		}
	}
	for i, r := range text {
		if unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.In(r, unicode.Co) {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
	}
	flush(len(text))
	return out
}

// Term returns the single term of a query word (the first of Tokens), or
// "" when the word has no letter or digit.
func Term(word string) string {
	t := Tokens(word)
	if len(t) == 0 {
		return ""
	}
	return t[0]
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// fold removes diacritics: the text is decomposed (NFD) and its combining
// marks dropped, so "Amélie" and "Amelie" are one word.
func fold(s string) string {
	d := norm.NFD.String(s)
	var b strings.Builder
	b.Grow(len(d))
	for _, r := range d {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Stopword reports whether w (lower case, unstemmed) is an English function
// word that carries no topic.
func Stopword(w string) bool { return stopwords[w] }

var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are aren't as at be because been
		before being below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down
		during each few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers
		herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most
		mustn't my myself no nor not of off on once only or other ought our ours ourselves out over own same shan't she
		she'd she'll she's should shouldn't so some such than that that's the their theirs them themselves then there
		there's these they they'd they'll they're they've this those through to too under until up very was wasn't we
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
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '’'
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
