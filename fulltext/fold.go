package fulltext

import (
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// EachWord calls fn with every word of text in order: each run of word
// characters (IsWordRune), folded (Fold). The word is in a buffer that is
// only valid during the call, and fn may change it in place (StemBytes
// does). ASCII text is split and lower-cased without a table lookup, so the
// catalog's index, built from every plot at startup, pays little for it.
func EachWord(text string, fn func(word []byte)) {
	var scratch [64]byte
	buf := scratch[:0]
	inWord := false // a word may so far hold only dropped marks
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
				buf = append(buf, c)
				inWord = true
				continue
			case 'A' <= c && c <= 'Z':
				buf = append(buf, c+('a'-'A'))
				inWord = true
				continue
			}
		} else {
			r, size := utf8.DecodeRuneInString(text[i:])
			i += size
			if f, ok := Fold(r); ok {
				if f >= 0 {
					buf = utf8.AppendRune(buf, f)
				}
				inWord = true
				continue
			}
		}
		if inWord {
			if len(buf) > 0 {
				fn(buf)
			}
			buf, inWord = buf[:0], false
		}
	}
	if len(buf) > 0 {
		fn(buf)
	}
}

// Fold returns how the character r is written inside a word: case-folded
// ("Σ" and "ς" are "σ"), and for a Latin letter without its diacritics
// ("É" is "e", "ǖ" is "u"; letters that are not a base letter with marks,
// such as "ł" or "ø", stay). It returns -1 for a combining mark, which
// belongs to the word but is dropped, and ok false when r is no word
// character (IsWordRune).
func Fold(r rune) (f rune, ok bool) {
	if r < utf8.RuneSelf {
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
			return r, true
		case 'A' <= r && r <= 'Z':
			return r + ('a' - 'A'), true
		}
		return 0, false
	}
	if r < foldTableEnd {
		foldOnce.Do(buildFoldTable)
		f := foldTable[r-utf8.RuneSelf]
		return f, f != 0
	}
	return foldRune(r)
}

// foldTableEnd bounds the characters whose folding is precomputed: Latin,
// Greek, Cyrillic and the other alphabets below U+2000 that user text and
// titles mostly use.
const foldTableEnd = 0x2000

var (
	foldOnce  sync.Once
	foldTable []rune // r-0x80 -> Fold(r), 0 when r is no word character
)

func buildFoldTable() {
	foldTable = make([]rune, foldTableEnd-utf8.RuneSelf)
	for r := rune(utf8.RuneSelf); r < foldTableEnd; r++ {
		if f, ok := foldRune(r); ok {
			foldTable[r-utf8.RuneSelf] = f
		}
	}
}

// foldRune computes Fold for a character outside ASCII.
func foldRune(r rune) (rune, bool) {
	switch {
	case unicode.Is(unicode.Mn, r):
		return -1, true
	case !IsWordRune(r):
		return 0, false
	}
	f := caseFold(r)
	if unicode.Is(unicode.Latin, f) {
		f = baseLetter(f)
	}
	return f, true
}

// caseFold maps r to its case-folded form: its lower case, and for the
// lower-case variants that Unicode folds onto another letter ("ς", "ſ",
// "µ", "ϐ") that letter. The dotless "ı" stays itself, as FTS5 keeps it.
func caseFold(r rune) rune {
	l := unicode.ToLower(r)
	if l != r || r == 'ı' {
		return l
	}
	if u := unicode.ToUpper(r); u != r {
		if f := unicode.ToLower(u); f != r {
			return f
		}
	}
	return r
}

// baseLetter returns the letter a Latin letter with diacritics decomposes
// to ("é" → "e"), or r itself when its canonical decomposition is not a
// letter followed by combining marks only.
func baseLetter(r rune) rune {
	var in [utf8.UTFMax]byte
	d := norm.NFD.Bytes(utf8.AppendRune(in[:0], r))
	base, size := utf8.DecodeRune(d)
	if size == len(d) || !unicode.IsLetter(base) {
		return r
	}
	for rest := d[size:]; len(rest) > 0; {
		m, n := utf8.DecodeRune(rest)
		if !unicode.Is(unicode.Mn, m) {
			return r
		}
		rest = rest[n:]
	}
	return caseFold(base)
}

// FoldKey is Fold for lookup keys (names and titles, matched whole): it
// also reduces the Latin letters that carry a stroke or bar rather than a
// combining diacritic to their base letter ("ł" and "Ł" are "l", "ø" is
// "o"), so "Lodz" finds "Łódź". The terms of the store's index (Fold)
// keep them, as FTS5 does.
func FoldKey(r rune) (rune, bool) {
	f, ok := Fold(r)
	if b, barred := barredLetters[f]; barred {
		return b, true
	}
	return f, ok
}

// barredLetters are the lower-case Latin letters without a canonical
// decomposition that FoldKey reduces to a base letter.
var barredLetters = map[rune]rune{
	'ł': 'l', 'ŀ': 'l', 'ø': 'o', 'đ': 'd', 'ð': 'd', 'ħ': 'h', 'ı': 'i', 'ŧ': 't',
}
