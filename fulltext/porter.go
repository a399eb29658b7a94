package fulltext

import "slices"

// Stem reduces a word (as Words spells it) to its stem with Porter's
// algorithm (M.F. Porter, "An algorithm for suffix stripping", 1980) in the
// variant SQLite's FTS5 "porter" tokenizer runs, so that recall, the
// catalog, the baselines and the answer score match words the way the store
// does ("likes" and "liked" are both "like"). Like FTS5 it works on bytes:
// words shorter than 3 or longer than 64 bytes are returned unchanged, and
// a byte other than a, e, i, o, u (or a y after a consonant) counts as a
// consonant, so "1990s" is "1990".
func Stem(word string) string {
	if len(word) < 3 || len(word) > maxStemmed {
		return word
	}
	var buf [maxStemmed]byte
	return string(StemBytes(append(buf[:0], word...)))
}

// maxStemmed is the longest word, in bytes, that is stemmed
// (FTS5_PORTER_MAX_TOKEN).
const maxStemmed = 64

// StemBytes is Stem in place: it stems the word in w, which must be lower
// case, and returns it, shortened or with its last bytes changed. It
// allocates nothing.
func StemBytes(w []byte) []byte {
	if len(w) < 3 || len(w) > maxStemmed {
		return w
	}
	w = step1a(w)
	w = step1b(w)
	w = step1c(w)
	w = step2(w)
	w = step3(w)
	w = step4(w)
	w = step5(w)
	return w
}

// consonant reports whether w[i] is a consonant: a letter other than a, e,
// i, o, u, and other than a y that follows a consonant.
func consonant(w []byte, i int) bool {
	switch w[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !consonant(w, i-1)
	}
	return true
}

// measure is m in [C](VC)^m[V]: how many vowel-consonant sequences w has.
func measure(w []byte) int {
	m, i, n := 0, 0, len(w)
	for i < n && consonant(w, i) {
		i++
	}
	for i < n {
		for i < n && !consonant(w, i) {
			i++
		}
		if i == n {
			break
		}
		for i < n && consonant(w, i) {
			i++
		}
		m++
	}
	return m
}

// hasVowel reports whether w contains a vowel (*v*).
func hasVowel(w []byte) bool {
	for i := range w {
		if !consonant(w, i) {
			return true
		}
	}
	return false
}

// doubleConsonant reports whether w ends with two equal consonants (*d).
func doubleConsonant(w []byte) bool {
	n := len(w)
	return n >= 2 && w[n-1] == w[n-2] && consonant(w, n-1)
}

// cvc reports whether w ends consonant-vowel-consonant where the last
// consonant is not w, x or y (*o): "hop" but not "snow".
func cvc(w []byte) bool {
	n := len(w)
	if n < 3 || !consonant(w, n-3) || consonant(w, n-2) || !consonant(w, n-1) {
		return false
	}
	switch w[n-1] {
	case 'w', 'x', 'y':
		return false
	}
	return true
}

func hasSuffix(w []byte, s string) bool {
	return len(w) >= len(s) && string(w[len(w)-len(s):]) == s
}

// replace swaps the suffix s of w for r.
func replace(w []byte, s, r string) []byte {
	return append(w[:len(w)-len(s)], r...)
}

func step1a(w []byte) []byte {
	switch {
	case hasSuffix(w, "sses"):
		return replace(w, "sses", "ss")
	case hasSuffix(w, "ies"):
		return replace(w, "ies", "i")
	case hasSuffix(w, "ss"):
		return w
	case hasSuffix(w, "s"):
		return replace(w, "s", "")
	}
	return w
}

func step1b(w []byte) []byte {
	if hasSuffix(w, "eed") {
		if measure(w[:len(w)-3]) > 0 {
			return replace(w, "eed", "ee")
		}
		return w
	}
	var stemmed []byte
	switch {
	case hasSuffix(w, "ed") && hasVowel(w[:len(w)-2]):
		stemmed = w[:len(w)-2]
	case hasSuffix(w, "ing") && hasVowel(w[:len(w)-3]):
		stemmed = w[:len(w)-3]
	default:
		return w
	}
	switch {
	case hasSuffix(stemmed, "at"), hasSuffix(stemmed, "bl"), hasSuffix(stemmed, "iz"):
		return append(stemmed, 'e')
	case doubleConsonant(stemmed):
		switch stemmed[len(stemmed)-1] {
		case 'l', 's', 'z':
			return stemmed
		}
		return stemmed[:len(stemmed)-1]
	case measure(stemmed) == 1 && cvc(stemmed):
		return append(stemmed, 'e')
	}
	return stemmed
}

func step1c(w []byte) []byte {
	if hasSuffix(w, "y") && hasVowel(w[:len(w)-1]) {
		w[len(w)-1] = 'i'
	}
	return w
}

// rule replaces a suffix with another when the stem before it meets a
// condition.
type rule struct{ suffix, with string }

// ruleSet holds rules by the last byte of their suffix, longest suffix
// first, so a step tries only the few rules that can match a word.
type ruleSet [256][]rule

func newRuleSet(rules []rule) *ruleSet {
	var rs ruleSet
	for _, r := range rules {
		last := r.suffix[len(r.suffix)-1]
		rs[last] = append(rs[last], r)
	}
	for i := range rs {
		slices.SortStableFunc(rs[i], func(a, b rule) int { return len(b.suffix) - len(a.suffix) })
	}
	return &rs
}

// applyLongest applies the rule with the longest matching suffix, when the
// stem left before the suffix satisfies ok; no shorter rule is tried.
func (rs *ruleSet) applyLongest(w []byte, ok func(stem []byte, r rule) bool) []byte {
	if len(w) == 0 {
		return w
	}
	for _, r := range rs[w[len(w)-1]] {
		if !hasSuffix(w, r.suffix) {
			continue
		}
		if !ok(w[:len(w)-len(r.suffix)], r) {
			return w
		}
		return replace(w, r.suffix, r.with)
	}
	return w
}

// step2Rules are Porter's, with the two changes of his later versions that
// FTS5 makes too: "bli" (not "abli") becomes "ble", and "logi" "log".
var step2Rules = newRuleSet([]rule{
	{"ational", "ate"}, {"tional", "tion"}, {"enci", "ence"}, {"anci", "ance"}, {"izer", "ize"},
	{"logi", "log"}, {"bli", "ble"}, {"alli", "al"}, {"entli", "ent"}, {"eli", "e"}, {"ousli", "ous"},
	{"ization", "ize"}, {"ation", "ate"}, {"ator", "ate"}, {"alism", "al"}, {"iveness", "ive"},
	{"fulness", "ful"}, {"ousness", "ous"}, {"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"},
})

var step3Rules = newRuleSet([]rule{
	{"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"}, {"ical", "ic"}, {"ful", ""}, {"ness", ""},
})

var step4Rules = newRuleSet([]rule{
	{"al", ""}, {"ance", ""}, {"ence", ""}, {"er", ""}, {"ic", ""}, {"able", ""}, {"ible", ""},
	{"ant", ""}, {"ement", ""}, {"ment", ""}, {"ent", ""}, {"ion", ""}, {"ou", ""}, {"ism", ""},
	{"ate", ""}, {"iti", ""}, {"ous", ""}, {"ive", ""}, {"ize", ""},
})

func mAbove0(stem []byte, _ rule) bool { return measure(stem) > 0 }

func step2(w []byte) []byte { return step2Rules.applyLongest(w, mAbove0) }

func step3(w []byte) []byte { return step3Rules.applyLongest(w, mAbove0) }

func step4(w []byte) []byte {
	return step4Rules.applyLongest(w, func(stem []byte, r rule) bool {
		if measure(stem) <= 1 {
			return false
		}
		return r.suffix != "ion" || hasSuffix(stem, "s") || hasSuffix(stem, "t")
	})
}

func step5(w []byte) []byte {
	if hasSuffix(w, "e") {
		m := measure(w[:len(w)-1])
		if m > 1 || (m == 1 && !cvc(w[:len(w)-1])) {
			w = w[:len(w)-1]
		}
	}
	if measure(w) > 1 && doubleConsonant(w) && hasSuffix(w, "l") {
		w = w[:len(w)-1]
	}
	return w
}
