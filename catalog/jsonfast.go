package catalog

import (
	"encoding/json"
	"math"
	"unicode/utf8"

	"github.com/memento-ai/memento"
)

// decodeTitleFast decodes one JSON line of the catalog format into j, for
// the common case only: an object whose keys are exactly the format's field
// names, holding plain strings, whole numbers, booleans, string arrays and
// nulls. It reports false for anything else (unknown or differently cased
// keys, fractions, nested values, malformed JSON), and the caller then
// decodes the line with encoding/json, which gives the same result or the
// precise error. Loading the embedded catalog spends most of its time here,
// which is why it exists.
func decodeTitleFast(line []byte, j *jsonTitle) bool {
	d := fastDecoder{b: line}
	if !d.consume('{') {
		return false
	}
	if d.consume('}') {
		return d.end()
	}
	for {
		key, ok := d.rawString()
		if !ok || !d.consume(':') {
			return false
		}
		switch string(key) {
		case "id":
			ok = d.stringValue(&j.ID, nil)
		case "title":
			ok = d.stringValue(&j.Title, nil)
		case "type":
			ok = d.stringValue(&j.Type, commonNames)
		case "overview":
			ok = d.stringValue(&j.Overview, nil)
		case "href":
			ok = d.stringValue(&j.Href, nil)
		case "year":
			ok = d.intValue(&j.Year)
		case "endYear":
			ok = d.intValue(&j.EndYear)
		case "runtimeMinutes":
			ok = d.intValue(&j.RuntimeMinutes)
		case "isAdult":
			ok = d.boolValue(&j.IsAdult)
		case "notability":
			ok = d.fractionValue(&j.Notability)
		case "genres":
			ok = d.stringsValue(&j.Genres, commonNames)
		case "cast":
			ok = d.stringsValue(&j.Cast, nil)
		default:
			return false
		}
		if !ok {
			return false
		}
		if d.consume(',') {
			continue
		}
		return d.consume('}') && d.end()
	}
}

type fastDecoder struct {
	b []byte
	i int
}

func (d *fastDecoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\r', '\n':
			d.i++
		default:
			return
		}
	}
}

// consume skips whitespace and then c, reporting whether c was there.
func (d *fastDecoder) consume(c byte) bool {
	d.space()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *fastDecoder) end() bool {
	d.space()
	return d.i == len(d.b)
}

// literal consumes the word w (null, true, false).
func (d *fastDecoder) literal(w string) bool {
	d.space()
	if len(d.b)-d.i >= len(w) && string(d.b[d.i:d.i+len(w)]) == w {
		d.i += len(w)
		return true
	}
	return false
}

// rawString consumes a JSON string without escapes or control characters
// and returns its content; it fails on anything else.
func (d *fastDecoder) rawString() ([]byte, bool) {
	if !d.consume('"') {
		return nil, false
	}
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return d.b[start : d.i-1], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
		d.i++
	}
	return nil, false
}

// commonNames interns the genre and type names that nearly every title
// repeats, so decoding the catalog does not allocate each copy anew.
var commonNames = func() map[string]string {
	m := map[string]string{}
	for g := range canonicalGenres {
		m[g] = g
	}
	for _, t := range []string{memento.TypeMovie, memento.TypeTVSeries, "tvMiniSeries", "short", "tvMovie"} {
		m[t] = t
	}
	return m
}()

// stringToken consumes a JSON string, escapes included, and returns it as
// a Go string, taken from intern when it is there.
func (d *fastDecoder) stringToken(intern map[string]string) (string, bool) {
	d.space()
	start := d.i
	if s, ok := d.rawString(); ok {
		if v, ok := intern[string(s)]; ok {
			return v, true
		}
		if !utf8.Valid(s) {
			return "", false
		}
		return string(s), true
	}
	// A string with escapes: find its end, and let encoding/json decode it.
	d.i = start + 1
	for d.i < len(d.b) {
		switch c := d.b[d.i]; {
		case c == '\\':
			d.i += 2
			continue
		case c == '"':
			d.i++
			var s string
			if json.Unmarshal(d.b[start:d.i], &s) != nil {
				return "", false
			}
			return s, true
		case c < 0x20:
			return "", false
		}
		d.i++
	}
	return "", false
}

func (d *fastDecoder) stringValue(dst *string, intern map[string]string) bool {
	if d.literal("null") {
		return true
	}
	s, ok := d.stringToken(intern)
	*dst = s
	return ok
}

// intValue consumes a whole number of at most nine digits, or null.
func (d *fastDecoder) intValue(dst *int) bool {
	if d.literal("null") {
		return true
	}
	d.space()
	neg := d.i < len(d.b) && d.b[d.i] == '-'
	if neg {
		d.i++
	}
	start, n := d.i, 0
	for d.i < len(d.b) && '0' <= d.b[d.i] && d.b[d.i] <= '9' {
		n = n*10 + int(d.b[d.i]-'0')
		d.i++
	}
	digits := d.i - start
	if digits == 0 || digits > 9 || (digits > 1 && d.b[start] == '0') {
		return false
	}
	if d.i < len(d.b) {
		switch d.b[d.i] {
		case '.', 'e', 'E':
			return false
		}
	}
	if neg {
		n = -n
	}
	*dst = n
	return true
}

// fractionValue consumes a plain decimal number such as 0.8125 (no sign,
// no exponent, at most 15 digits), or null. The digits make an integer
// and the fraction a power of ten, both exact in a float64, so one
// division gives the correctly rounded value, as strconv.ParseFloat would.
func (d *fastDecoder) fractionValue(dst *float64) bool {
	if d.literal("null") {
		return true
	}
	d.space()
	var m int64
	digits, frac := 0, 0
	start := d.i
	for d.i < len(d.b) && '0' <= d.b[d.i] && d.b[d.i] <= '9' {
		m = m*10 + int64(d.b[d.i]-'0')
		d.i++
		digits++
	}
	if digits == 0 || (digits > 1 && d.b[start] == '0') {
		return false
	}
	if d.i < len(d.b) && d.b[d.i] == '.' {
		d.i++
		for d.i < len(d.b) && '0' <= d.b[d.i] && d.b[d.i] <= '9' {
			m = m*10 + int64(d.b[d.i]-'0')
			d.i++
			digits++
			frac++
		}
		if frac == 0 {
			return false
		}
	}
	if digits > 15 {
		return false
	}
	if d.i < len(d.b) && (d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		return false
	}
	*dst = float64(m) / math.Pow10(frac) // math.Pow10 is exact up to 1e22
	return true
}

func (d *fastDecoder) boolValue(dst *bool) bool {
	switch {
	case d.literal("true"):
		*dst = true
	case d.literal("false"):
		*dst = false
	case d.literal("null"):
	default:
		return false
	}
	return true
}

// stringsValue consumes an array of strings, or null.
func (d *fastDecoder) stringsValue(dst *[]string, intern map[string]string) bool {
	if d.literal("null") {
		*dst = nil
		return true
	}
	if !d.consume('[') {
		return false
	}
	list := make([]string, 0, 8)
	if d.consume(']') {
		*dst = list
		return true
	}
	for {
		s, ok := d.stringToken(intern)
		if !ok {
			return false
		}
		list = append(list, s)
		if d.consume(',') {
			continue
		}
		if !d.consume(']') {
			return false
		}
		*dst = list
		return true
	}
}
