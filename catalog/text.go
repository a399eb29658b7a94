package catalog

import (
	"unicode"
	"unicode/utf8"
)

// foldTable maps accented Latin letters (already lowercased) to their base
// letter, so "Penélope" and "Penelope" index and match alike. It is built once
// and never written afterwards.
var foldTable = buildFoldTable()

func buildFoldTable() map[rune]rune {
	groups := map[rune]string{
		'a': "àáâãäåāăąǎ",
		'c': "çćĉċč",
		'd': "ďđð",
		'e': "èéêëēĕėęě",
		'g': "ĝğġģ",
		'h': "ĥħ",
		'i': "ìíîïĩīĭįıǐ",
		'j': "ĵ",
		'k': "ķ",
		'l': "ĺļľŀł",
		'n': "ñńņňŉ",
		'o': "òóôõöøōŏőǒ",
		'r': "ŕŗř",
		's': "śŝşšș",
		't': "ţťŧț",
		'u': "ùúûüũūŭůűųǔ",
		'w': "ŵ",
		'y': "ýÿŷ",
		'z': "źżž",
	}
	m := make(map[rune]rune, 128)
	for base, letters := range groups {
		for _, r := range letters {
			m[r] = base
		}
	}
	return m
}

// isApostrophe reports whether r joins the letters around it into one word
// ("O'Brien", "Auliʻi", "Franny's") rather than separating words.
func isApostrophe(r rune) bool {
	switch r {
	case '\'', '’', 'ʼ', 'ʻ', '`', '‘':
		return true
	}
	return false
}

// foldRune lowercases r and strips its accent.
func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			return r + ('a' - 'A')
		}
		return r
	}
	r = unicode.ToLower(r)
	if f, ok := foldTable[r]; ok {
		return f
	}
	return r
}

// normKey reduces a name or title to the key under which it is looked up:
// lowercase, accents folded, apostrophes dropped, "&" read as "and", every
// other run of punctuation or space turned into one space. "Robert Downey,
// Jr." and "robert downey jr" share the key "robert downey jr".
func normKey(s string) string {
	var buf [128]byte
	return string(appendNormKey(buf[:0], s))
}

// appendNormKey appends the normKey of s to dst. Index building looks keys
// up with it in a reused buffer, which allocates nothing for known keys.
func appendNormKey(dst []byte, s string) []byte {
	start := len(dst)
	space := false
	for i := 0; i < len(s); {
		r := rune(s[i])
		size := 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		i += size
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
		case 'A' <= r && r <= 'Z':
			r += 'a' - 'A'
		case isApostrophe(r):
			continue
		case r == '&':
			if len(dst) > start {
				dst = append(dst, ' ')
			}
			dst = append(dst, "and"...)
			space = false
			continue
		case r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			r = foldRune(r)
		default:
			space = true
			continue
		}
		if space && len(dst) > start {
			dst = append(dst, ' ')
		}
		space = false
		dst = utf8.AppendRune(dst, r)
	}
	return dst
}

// isStopword reports whether w is left out of the free-text index: a word
// that occurs in nearly every plot and carries no topic. A switch is about
// three times faster than a map lookup here, and index building does one
// per word of every plot.
func isStopword(w []byte) bool {
	switch string(w) {
	case "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and",
		"any", "are", "as", "at", "be", "because", "been", "before", "being", "below", "between",
		"both", "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during",
		"each", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her",
		"here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into",
		"is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "no", "nor",
		"not", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "out", "over",
		"own", "same", "she", "should", "so", "some", "such", "than", "that", "the", "their",
		"theirs", "them", "themselves", "then", "there", "these", "they", "this", "those",
		"through", "to", "too", "under", "until", "up", "upon", "very", "was", "we", "were",
		"what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would",
		"you", "your", "yours", "yourself":
		return true
	}
	return false
}

// tokenize appends the index terms of s to dst and returns it: words of
// unicode letters and digits, lowercased and accent-folded, stopwords
// removed, plurals reduced by stemBytes. The same function reads documents and
// queries, so both sides agree on every term.
func tokenize(dst []string, s string) []string {
	eachToken(s, func(tok []byte) { dst = append(dst, string(tok)) })
	return dst
}

// eachToken calls fn with every index term of s (see tokenize), in a buffer
// that is only valid during the call.
func eachToken(s string, fn func(tok []byte)) {
	var scratch [64]byte
	buf := scratch[:0]
	flush := func() {
		if len(buf) == 0 {
			return
		}
		if !isStopword(buf) {
			fn(stemBytes(buf))
		}
		buf = buf[:0]
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
				buf = append(buf, c)
			case 'A' <= c && c <= 'Z':
				buf = append(buf, c+('a'-'A'))
			case c == '\'' || c == '`':
				// An apostrophe joins: "don't" is one word.
			default:
				flush()
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case isApostrophe(r):
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			buf = utf8.AppendRune(buf, foldRune(r))
		default:
			flush()
		}
	}
	flush()
}

// stemBytes reduces an English plural (and a few matching singular endings)
// to a shared stem, so "heists" finds "heist" and "stories" finds "story".
// It is a light, rule-based stemmer, deliberately conservative: it only
// touches inflections that change a word's number, never its meaning. It
// works in place on w and returns it, possibly shortened.
func stemBytes(w []byte) []byte {
	n := len(w)
	if n <= 3 || hasDigit(w) {
		return w
	}
	switch {
	case hasSuffix(w, "sses"):
		return w[:n-2] // classes -> class
	case hasSuffix(w, "ies") && n > 4:
		return w[:n-2] // stories -> stori, movies -> movi
	case hasSuffix(w, "ches"), hasSuffix(w, "shes"), hasSuffix(w, "xes"), hasSuffix(w, "zzes"):
		return w[:n-2] // witches -> witch, boxes -> box
	case hasSuffix(w, "oes") && n > 5:
		return w[:n-2] // heroes -> hero
	case hasSuffix(w, "ss"), hasSuffix(w, "us"), hasSuffix(w, "is"):
		return w // boss, virus, crisis
	case w[n-1] == 's':
		return stemSingular(w[:n-1])
	}
	return stemSingular(w)
}

func hasSuffix(w []byte, suffix string) bool {
	return len(w) >= len(suffix) && string(w[len(w)-len(suffix):]) == suffix
}

// stemSingular maps the singular endings "-y" (after a consonant) and "-ie"
// to the stem their plural "-ies" reduces to.
func stemSingular(w []byte) []byte {
	n := len(w)
	if n >= 3 && w[n-1] == 'y' && !isVowel(w[n-2]) {
		w[n-1] = 'i' // story -> stori
		return w
	}
	if n >= 4 && w[n-2] == 'i' && w[n-1] == 'e' {
		return w[:n-1] // movie -> movi
	}
	return w
}

func isVowel(c byte) bool {
	switch c {
	case 'a', 'e', 'i', 'o', 'u':
		return true
	}
	return false
}

func hasDigit(w []byte) bool {
	for _, c := range w {
		if '0' <= c && c <= '9' {
			return true
		}
	}
	return false
}
