package catalog

import (
	"unicode/utf8"

	"github.com/memento-ai/memento/fulltext"
)

// isApostrophe reports whether r joins the letters around it into one word
// ("O'Brien", "Auliʻi", "Franny's") rather than separating words.
func isApostrophe(r rune) bool {
	switch r {
	case '\'', '’', 'ʼ', 'ʻ', '`', '‘':
		return true
	}
	return false
}

// foldRune lowercases r and strips its accent, as fulltext does for keys.
func foldRune(r rune) rune {
	f, _ := fulltext.FoldKey(r)
	return f
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
		case r >= utf8.RuneSelf && fulltext.IsWordRune(r):
			if r = foldRune(r); r < 0 {
				continue // a combining mark: "e\u0301" is "e"
			}
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

// tokenize appends the index terms of s to dst and returns it: the topic
// terms of fulltext (words of letters and digits, folded as the store's FTS5
// tables fold them, stop words left out, Porter-stemmed). The same function
// reads documents and queries, so both sides agree on every term, and recall
// and preferences spell a word as the catalog does.
func tokenize(dst []string, s string) []string {
	eachToken(s, func(tok []byte) { dst = append(dst, string(tok)) })
	return dst
}

// eachToken calls fn with every index term of s (see tokenize), in a buffer
// that is only valid during the call.
func eachToken(s string, fn func(tok []byte)) { fulltext.EachTopicTerm(s, fn) }
