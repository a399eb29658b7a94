package catalog

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memento-ai/memento"
)

// WikipediaURL is the prefix of the Href of titles built from the Wikipedia
// film lists; the rest is the page name as the lists link it.
const WikipediaURL = "https://en.wikipedia.org/wiki/"

// OverviewChars is the length, in bytes, around which BuildWikiMovies cuts a
// plot extract, at a sentence end where there is one. It keeps the embedded
// catalog small while leaving the sentence that says what a film is.
const OverviewChars = 300

// BuildReport counts what BuildWikiMovies read, repaired and left out.
type BuildReport struct {
	Files            int `json:"files"`            // decade files read
	Raw              int `json:"raw"`              // film entries in them
	Titles           int `json:"titles"`           // titles built
	Malformed        int `json:"malformed"`        // entries that are not film objects, skipped
	NoTitle          int `json:"noTitle"`          // entries without a title, skipped
	NoYear           int `json:"noYear"`           // entries with a null, zero or out-of-range year, skipped
	Duplicates       int `json:"duplicates"`       // exact duplicates merged into an earlier entry
	NoHref           int `json:"noHref"`           // titles without a Wikipedia page (id made from title and year)
	SharedHrefs      int `json:"sharedHrefs"`      // titles whose id was disambiguated because films share a page
	CastRepaired     int `json:"castRepaired"`     // cast names joined or stripped of annotations
	CastDropped      int `json:"castDropped"`      // stray cast tokens dropped (")", "and", "(narrator)", ...)
	OverviewsTrimmed int `json:"overviewsTrimmed"` // plot extracts cut to about OverviewChars
}

// wikiFilm is one entry of a prust/wikipedia-movie-data decade file.
type wikiFilm struct {
	Title   string   `json:"title"`
	Year    *int     `json:"year"`
	Cast    []string `json:"cast"`
	Genres  []string `json:"genres"`
	Href    string   `json:"href"`
	Extract string   `json:"extract"`
	// Thumbnail is the article's image, usually the poster; the notability
	// prior counts only whether there is one.
	Thumbnail string `json:"thumbnail"`
}

// BuildWikiMovies reads the decade files (movies-*.json.gz, or plain .json)
// of the prust/wikipedia-movie-data project in dir and returns the cleaned
// catalog, sorted like an Index (year descending, then id):
//
//   - entries without a title or with a null or zero year are skipped;
//   - exact duplicates (same title, year and Wikipedia page) are merged,
//     their cast and genres united; films that merely share a title and year
//     but have different pages are different films and both kept;
//   - cast lists are repaired: name suffixes split off at a comma are joined
//     back ("Robert Downey" + "Jr." and "Robert Downey, Jr." both become
//     "Robert Downey Jr."), role annotations ("(narrator)"), award notes in
//     parentheses, footnote marks, labels ("voices of", "and") and stray
//     punctuation are dropped, and names are deduplicated;
//   - genres are mapped to the catalog vocabulary and deduplicated;
//   - the plot extract becomes the overview, cut near OverviewChars at a
//     sentence end;
//   - every title gets its Notability from ComputeNotability, which reads
//     the whole extract's length and whether the article has an image
//     besides the title's fields.
//
// Ids are "wiki:" + the URL-unescaped page name ("wiki:The_Avengers_(2012_film)").
// When several films link the same page, the earliest (by year, then title)
// keeps that id and the others get "#" + their year appended, and a counter
// after that if needed ("wiki:X#1925", "wiki:X#1925-2"). A film without a
// page gets "wiki:" + its title with underscores + "#" + its year. Every
// title has type movie.
func BuildWikiMovies(dir string) ([]memento.Title, BuildReport, error) {
	titles, signals, report, err := readWikiMovies(dir)
	if err != nil {
		return nil, report, err
	}
	// The notability prior reads the whole article lead and the image,
	// which the stored title no longer has.
	ComputeNotability(titles, signals)
	// The order of an Index (year descending, then id), so that New finds
	// the embedded titles already sorted.
	slices.SortFunc(titles, func(a, b memento.Title) int {
		return cmp.Or(cmp.Compare(b.Year, a.Year), strings.Compare(a.ID, b.ID))
	})
	return titles, report, nil
}

// readWikiMovies does the work of BuildWikiMovies but for the notability
// and the final order: it returns the titles with what the prior reads of
// their articles (TitleSignals), one entry per title.
func readWikiMovies(dir string) ([]memento.Title, []TitleSignals, BuildReport, error) {
	var report BuildReport
	files, err := filepath.Glob(filepath.Join(dir, "movies-*.json*"))
	if err != nil {
		return nil, nil, report, fmt.Errorf("list %s: %w", dir, err)
	}
	slices.Sort(files)
	if len(files) == 0 {
		return nil, nil, report, memento.Errorf(memento.ENOTFOUND, "no movies-*.json.gz decade files in %s", dir)
	}
	type key struct {
		title, href string
		year        int
	}
	var films []*wikiEntry
	byKey := map[key]*wikiEntry{}
	for _, path := range files {
		raw, err := readWikiFile(path)
		if err != nil {
			return nil, nil, report, err
		}
		report.Files++
		for _, msg := range raw {
			report.Raw++
			var f wikiFilm
			if err := json.Unmarshal(msg, &f); err != nil {
				report.Malformed++
				continue
			}
			title := collapseSpace(f.Title)
			if title == "" {
				report.NoTitle++
				continue
			}
			if f.Year == nil || *f.Year == 0 || !validYear(*f.Year) {
				report.NoYear++
				continue
			}
			cast, repaired, dropped := cleanCast(f.Cast)
			report.CastRepaired += repaired
			report.CastDropped += dropped
			overview, trimmed := trimOverview(f.Extract, OverviewChars)
			extract := collapseSpace(f.Extract)
			if trimmed {
				report.OverviewsTrimmed++
			}
			e := &wikiEntry{
				title: title, year: *f.Year, href: strings.TrimSpace(f.Href),
				cast: cast, genres: cleanList(f.Genres, CanonicalGenre), overview: overview,
				signals: TitleSignals{TextChars: len(extract), Text: extract, Image: strings.TrimSpace(f.Thumbnail) != ""},
			}
			k := key{title: title, href: e.href, year: e.year}
			if prev, ok := byKey[k]; ok {
				report.Duplicates++
				prev.merge(e)
				continue
			}
			byKey[k] = e
			films = append(films, e)
		}
	}
	titles, signals := assignWikiIDs(films, &report)
	report.Titles = len(titles)
	return titles, signals, report, nil
}

// readWikiFile returns the entries of one decade file, each still raw, so
// one malformed entry does not spoil the file.
func readWikiFile(path string) ([]json.RawMessage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open decade file: %w", err)
	}
	defer f.Close()
	in, closeIn, err := maybeGunzip(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer closeIn()
	var raw []json.RawMessage
	if err := json.NewDecoder(in).Decode(&raw); err != nil {
		return nil, memento.WrapError(memento.EINVALID, err, "%s is not a JSON array of films", filepath.Base(path))
	}
	return raw, nil
}

// wikiEntry is a cleaned film before it gets its id.
type wikiEntry struct {
	title, href, overview string
	year                  int
	cast, genres          []string
	signals               TitleSignals // for the notability prior, before the plot is cut
}

// merge folds a duplicate of e into e.
func (e *wikiEntry) merge(d *wikiEntry) {
	e.cast = cleanList(append(e.cast, d.cast...), nil)
	e.genres = cleanList(append(e.genres, d.genres...), nil)
	if len(d.overview) > len(e.overview) {
		e.overview = d.overview
	}
	if d.signals.TextChars > e.signals.TextChars {
		e.signals.TextChars, e.signals.Text = d.signals.TextChars, d.signals.Text
	}
	e.signals.Image = e.signals.Image || d.signals.Image
}

// assignWikiIDs gives every film its unique, stable id and returns the
// titles, in order of year, title and page, with their signals.
func assignWikiIDs(films []*wikiEntry, report *BuildReport) ([]memento.Title, []TitleSignals) {
	slices.SortStableFunc(films, func(a, b *wikiEntry) int {
		return cmp.Or(cmp.Compare(a.year, b.year), cmp.Compare(a.title, b.title), cmp.Compare(a.href, b.href))
	})
	used := make(map[string]bool, len(films))
	titles := make([]memento.Title, 0, len(films))
	signals := make([]TitleSignals, 0, len(films))
	for _, e := range films {
		var base string
		if e.href != "" {
			page, err := url.PathUnescape(e.href)
			if err != nil || !utf8.ValidString(page) {
				page = e.href
			}
			base = "wiki:" + page
		} else {
			report.NoHref++
			base = "wiki:" + strings.ReplaceAll(e.title, " ", "_") + "#" + strconv.Itoa(e.year)
		}
		id := base
		if used[id] {
			if e.href != "" {
				report.SharedHrefs++
				id = base + "#" + strconv.Itoa(e.year)
			}
			for n := 2; used[id]; n++ {
				id = base + "#" + strconv.Itoa(e.year) + "-" + strconv.Itoa(n)
			}
		}
		used[id] = true
		t := memento.Title{
			ID: id, Title: e.title, Type: memento.TypeMovie, Year: e.year,
			Genres: e.genres, Cast: e.cast, Overview: e.overview,
		}
		if e.href != "" {
			t.Href = WikipediaURL + e.href
		}
		titles = append(titles, t)
		signals = append(signals, e.signals)
	}
	return titles, signals
}

var (
	// trailingNote matches a role annotation after a name: "Alois Havrilla
	// (narrator)", "John Wood (English actor)".
	trailingNote = regexp.MustCompile(`^(.*\S)\s*\([^()]*\)$`)
	// footnote matches a footnote mark: "[a]", "[2]".
	footnote = regexp.MustCompile(`\s*\[[^\]]*\]$`)
	// commaSuffix matches a name whose suffix was set off by a comma:
	// "Robert Downey, Jr.", "Sammy Davis, Jr", "John Smith, III".
	commaSuffix = regexp.MustCompile(`^(.*\S)\s*,\s*(Jr|Sr|Jr\.|Sr\.|II|III|IV)$`)
	// labelPrefix matches a list label run into a name: "and Ateesh Randev".
	labelPrefix = regexp.MustCompile(`^(?i:and|with|featuring|starring|voices of|narrated by)\s+(\p{Lu}.*)$`)
)

// nameSuffixes maps the spellings of a name suffix to how the catalog writes
// it.
var nameSuffixes = map[string]string{"jr": "Jr.", "jr.": "Jr.", "sr": "Sr.", "sr.": "Sr.",
	"ii": "II", "iii": "III", "iv": "IV"}

// castLabels are list words that the scraper took for cast members.
var castLabels = map[string]bool{"and": true, "with": true, "&": true, "voices of": true, "voice of": true,
	"voices": true, "narrated by": true, "narrator": true, "featuring": true, "starring": true,
	"cast": true, "the": true, "of": true, "others": true, "and others": true, "various": true,
	"uncredited": true, "none": true}

// cleanCast repairs one film's scraped cast list (see BuildWikiMovies) and
// counts the names it repaired and the tokens it dropped.
func cleanCast(raw []string) (cast []string, repaired, dropped int) {
	cast = make([]string, 0, len(raw))
	inParen := 0 // tokens left to drop inside an opened "(" ... ")" note
	for _, s := range raw {
		s = collapseSpace(s)
		if inParen > 0 {
			dropped++
			inParen--
			if strings.Contains(s, ")") {
				inParen = 0
			}
			continue
		}
		if s == "" {
			dropped++
			continue
		}
		if strings.ContainsAny(s, "[]") {
			t := trimBrackets(footnote.ReplaceAllString(s, ""))
			if t == "" {
				dropped++
				continue
			}
			if t != s {
				s = t
				repaired++
			}
		}
		if strings.HasPrefix(s, "(") && !strings.Contains(s, ")") {
			// An award or group note split across tokens: "(", "Best Actor",
			// "nominee)". Drop up to three more tokens until it closes.
			dropped++
			inParen = 3
			continue
		}
		if strings.HasSuffix(s, "(") {
			s = strings.TrimSpace(strings.TrimSuffix(s, "("))
			inParen = 3
			repaired++
		}
		if strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") {
			dropped++ // "(narrator)", "(US)"
			continue
		}
		if strings.HasSuffix(s, ")") && !strings.Contains(s, "(") {
			dropped++ // the end of a split note: "nominee)"
			continue
		}
		if m := matchIf(strings.HasSuffix(s, ")"), trailingNote, s); m != nil {
			s = m[1]
			repaired++
		}
		if t := strings.TrimLeftFunc(s, func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '"' && r != '\''
		}); t != s {
			s = strings.TrimSpace(t)
			repaired++
		}
		if m := matchIf(strings.IndexByte(s, ' ') > 0, labelPrefix, s); m != nil {
			s = m[1]
			repaired++
		}
		if s == "" || !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
			dropped++
			continue
		}
		lower := strings.ToLower(strings.TrimSuffix(s, ":"))
		if castLabels[lower] {
			dropped++
			continue
		}
		if suffix, ok := nameSuffixes[lower]; ok {
			if len(cast) == 0 {
				dropped++
				continue
			}
			cast[len(cast)-1] += " " + suffix
			repaired++
			continue
		}
		if r, _ := utf8.DecodeRuneInString(s); unicode.IsLower(r) && !strings.Contains(s, ".") {
			dropped++ // a description the scraper took for a name: "the life of", "survivors"
			continue
		}
		if m := matchIf(strings.IndexByte(s, ',') > 0, commaSuffix, s); m != nil {
			s = m[1] + " " + nameSuffixes[strings.ToLower(m[2])]
			repaired++
		}
		cast = append(cast, s)
	}
	before := len(cast)
	cast = cleanList(cast, nil)
	dropped += before - len(cast)
	return cast, repaired, dropped
}

// abbreviations end in a period that does not end a sentence.
var abbreviations = map[string]bool{"mr": true, "mrs": true, "ms": true, "dr": true, "jr": true,
	"sr": true, "st": true, "mt": true, "lt": true, "col": true, "gen": true, "capt": true, "sgt": true,
	"prof": true, "rev": true, "vs": true, "inc": true, "co": true, "ltd": true, "no": true, "vol": true,
	"bros": true, "corp": true, "ft": true, "feat": true, "ave": true, "jan": true, "feb": true,
	"aug": true, "sept": true, "oct": true, "nov": true, "dec": true}

// trimOverview collapses the whitespace of a plot extract and cuts it near
// limit bytes: at the last sentence end within the limit, or else at the end
// of the first sentence if that is not much longer, or else at a word
// boundary with an ellipsis. It reports whether it cut anything.
func trimOverview(s string, limit int) (string, bool) {
	s = collapseSpace(s)
	if len(s) <= limit {
		return s, false
	}
	last, first := -1, -1
	for i := 0; i < len(s); i++ {
		if !sentenceEnd(s, i) {
			continue
		}
		if first < 0 {
			first = i + 1
		}
		if i+1 > limit {
			break
		}
		last = i + 1
	}
	switch {
	case last >= limit/4:
		return s[:last], true
	case first > 0 && first <= 2*limit:
		return s[:first], true
	}
	cut := strings.LastIndexByte(s[:limit], ' ')
	if cut <= 0 {
		cut = limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
	}
	return strings.TrimRight(s[:cut], " ,;:-") + "…", true
}

// sentenceEnd reports whether s[i] ends a sentence: a '.', '!' or '?'
// followed by a space and a capital, digit or quote, and (for '.') not ending
// an abbreviation or an initial.
func sentenceEnd(s string, i int) bool {
	c := s[i]
	if c != '.' && c != '!' && c != '?' {
		return false
	}
	if i+2 >= len(s) || s[i+1] != ' ' {
		return i+1 == len(s)
	}
	next, _ := utf8.DecodeRuneInString(s[i+2:])
	if !unicode.IsUpper(next) && !unicode.IsDigit(next) && next != '"' && next != '“' {
		return false
	}
	if c != '.' {
		return true
	}
	start := strings.LastIndexByte(s[:i], ' ') + 1
	word := s[start:i]
	if utf8.RuneCountInString(word) <= 1 || strings.Contains(word, ".") {
		return false // an initial ("J.") or a dotted abbreviation ("U.S.")
	}
	return !abbreviations[strings.ToLower(strings.TrimLeft(word, "(\"“"))]
}

// matchIf runs re on s only when a cheap test says it may match: most cast
// names need no repair, and the regular expressions would dominate the
// build.
func matchIf(maybe bool, re *regexp.Regexp, s string) []string {
	if !maybe {
		return nil
	}
	return re.FindStringSubmatch(s)
}

// trimBrackets drops unbalanced square brackets left at either end of a name
// by the scraper ("Katherine MacDonald]]").
func trimBrackets(s string) string {
	if !strings.Contains(s, "[") {
		s = strings.TrimRight(s, "]")
	}
	if !strings.Contains(s, "]") {
		s = strings.TrimLeft(s, "[")
	}
	return strings.TrimSpace(s)
}
