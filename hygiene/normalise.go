package hygiene

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// homoglyphs are letters of other scripts that look like Latin ones; an
// attacker writes "ignоre" with a Cyrillic о so that no Latin pattern
// matches, and the model still reads "ignore".
var homoglyphs = map[rune]rune{
	// Cyrillic.
	'а': 'a', 'в': 'b', 'е': 'e', 'ё': 'e', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p',
	'с': 'c', 'т': 't', 'у': 'y', 'х': 'x', 'ѕ': 's', 'і': 'i', 'ї': 'i', 'ј': 'j', 'ԁ': 'd',
	'ɡ': 'g', 'һ': 'h', 'ӏ': 'l', 'ԛ': 'q', 'ԝ': 'w', 'ү': 'y',
	// Greek.
	'α': 'a', 'β': 'b', 'ε': 'e', 'η': 'n', 'ι': 'i', 'κ': 'k', 'ν': 'v', 'ο': 'o', 'ρ': 'p',
	'τ': 't', 'υ': 'u', 'χ': 'x', 'γ': 'y', 'ω': 'w', 'μ': 'u',
	// Latin look-alikes that survive decomposition.
	'ı': 'i', 'ł': 'l', 'ø': 'o', 'đ': 'd', 'ħ': 'h', 'ŀ': 'l', 'ſ': 's', 'æ': 'a', 'œ': 'o',
	'ⅰ': 'i', 'ℓ': 'l', '∣': 'l', 'ǀ': 'l',
}

// leet maps the digits and signs that stand for letters inside a word
// ("1gn0re", "@dmin").
var leet = map[rune]rune{'0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't', '@': 'a', '$': 's', '!': 'i'}

// Normalise returns text the way the rules read it: compatibility forms
// folded (full-width letters, ligatures), accents dropped (so rules in
// French or German are written without them), letters of other scripts
// that look Latin mapped to Latin, zero-width and control characters
// dropped, letters spelt out one by one joined ("i g n o r e"), digits
// that stand for letters inside a word read as letters ("1gn0re"),
// typographic quotes and dashes made ASCII, emphasis marks dropped, lower
// case, and runs of white space collapsed (line breaks are kept: role
// markers use them).
func Normalise(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	space := false
	for _, r := range norm.NFKD.String(text) {
		switch r {
		case '\u2018', '\u2019', '\u02bc', '\u2032', '`':
			r = '\''
		case '\u201c', '\u201d', '\u00ab', '\u00bb':
			r = '"'
		case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2212':
			r = '-'
		case '*', '~', '\u00ad':
			continue // emphasis and soft hyphens hide words from patterns
		case 'ß', 'ẞ':
			b.WriteString("ss")
			space = false
			continue
		}
		if unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Cf, r) {
			continue // accents, zero-width joiners and other invisible marks
		}
		if g, ok := homoglyphs[unicode.ToLower(r)]; ok {
			r = g
		}
		if r == '\n' || r == '\r' {
			b.WriteByte('\n')
			space = false
			continue
		}
		if unicode.IsSpace(r) {
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		if unicode.IsControl(r) {
			continue
		}
		space = false
		b.WriteRune(unicode.ToLower(r))
	}
	out := strings.TrimSpace(b.String())
	out = joinSpelledOut(out)
	return readLeet(out)
}

// readLeet reads digits and signs as letters in words that hold letters
// too: "1gn0re" is "ignore", while "2001" and "4k" stay as they are (a
// word must be mostly letters).
func readLeet(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { _, ok := leet[r]; return ok }) < 0 {
		return s
	}
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\n' })
	var b strings.Builder
	b.Grow(len(s))
	pos := 0
	for _, f := range fields {
		i := strings.Index(s[pos:], f) + pos
		b.WriteString(s[pos:i])
		pos = i + len(f)
		// Trailing punctuation ("instructions!") is not part of the word.
		core := strings.TrimRight(f, ".,;:!?\"')")
		letters, subs := 0, 0
		for _, r := range core {
			if unicode.IsLetter(r) {
				letters++
			} else if _, ok := leet[r]; ok {
				subs++
			}
		}
		if subs == 0 || letters < 2 || letters < subs {
			b.WriteString(f)
			continue
		}
		for _, r := range core {
			if l, ok := leet[r]; ok {
				r = l
			}
			b.WriteRune(r)
		}
		b.WriteString(f[len(core):])
	}
	b.WriteString(s[pos:])
	return b.String()
}

// joinSpelledOut joins runs of four or more single letters separated by
// one space, dot, dash or underscore ("i g n o r e", "s.y.s.t.e.m") into
// the word they spell, keeping the text around them.
func joinSpelledOut(s string) string {
	rs := []rune(s)
	isSep := func(r rune) bool { return r == ' ' || r == '.' || r == '-' || r == '_' }
	single := func(i int) bool {
		if i < 0 || i >= len(rs) || !unicode.IsLetter(rs[i]) {
			return false
		}
		before := i == 0 || !unicode.IsLetter(rs[i-1]) && !unicode.IsDigit(rs[i-1])
		after := i == len(rs)-1 || !unicode.IsLetter(rs[i+1]) && !unicode.IsDigit(rs[i+1])
		return before && after
	}
	var b strings.Builder
	changed := false
	for i := 0; i < len(rs); {
		if !single(i) {
			b.WriteRune(rs[i])
			i++
			continue
		}
		// Collect letter, separator, letter, ... with the same separator.
		j, n := i, 1
		for j+2 < len(rs) && isSep(rs[j+1]) && rs[j+1] == rs[i+1] && single(j+2) {
			j += 2
			n++
		}
		if n < 4 {
			b.WriteRune(rs[i])
			i++
			continue
		}
		for k := i; k <= j; k += 2 {
			b.WriteRune(rs[k])
		}
		changed = true
		i = j + 1
	}
	if !changed {
		return s
	}
	return b.String()
}
