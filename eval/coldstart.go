package eval

import (
	"bufio"
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
)

// KnownRatings is how many MovieLens ratings make a title "known": a
// film that few people rated is one a new user is unlikely to recognise.
const KnownRatings = 20

// Popularity is how many MovieLens ratings each film has, keyed by its
// normalised title and year, so catalog titles from another source
// (Wikipedia) can be looked up by name. It judges rankings only: MovieLens
// is research data and never feeds the catalog.
type Popularity struct {
	counts map[titleKey]int
}

type titleKey struct {
	name string
	year int
}

// ReadPopularity counts the ratings of every film of a MovieLens directory
// (movies.csv and ratings.csv).
func ReadPopularity(dir string) (*Popularity, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, memento.WrapError(memento.EINVALID, err, "MovieLens directory: %v", err)
	}
	if !st.IsDir() {
		return nil, memento.Errorf(memento.EINVALID, "MovieLens directory: %s is not a directory", dir)
	}
	perMovie, err := countRatings(filepath.Join(dir, "ratings.csv"))
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "movies.csv")
	f, err := os.Open(path)
	if err != nil {
		return nil, memento.WrapError(memento.EINVALID, err, "read %s: %v", path, err)
	}
	defer f.Close()
	return readMovies(f, path, perMovie)
}

// readMovies reads movies.csv (movieId,title,genres) into a Popularity
// with the given rating count per movieId.
func readMovies(r io.Reader, path string, perMovie map[string]int) (*Popularity, error) {
	p := &Popularity{counts: map[titleKey]int{}}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	var fallback []titleKey
	var fallbackCounts []int
	for row := 0; ; row++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, memento.WrapError(memento.EINVALID, err, "read %s: %v", path, err)
		}
		if row == 0 && rec[0] == "movieId" {
			continue
		}
		if len(rec) < 2 {
			return nil, memento.Errorf(memento.EINVALID, "%s row %d: want movieId,title,genres", path, row+1)
		}
		names, short, year := movieLensNames(rec[1])
		if year == 0 || len(names) == 0 {
			continue
		}
		n := perMovie[rec[0]]
		for _, name := range names {
			k := titleKey{name, year}
			p.counts[k] = max(p.counts[k], n)
		}
		for _, name := range short {
			fallback = append(fallback, titleKey{name, year})
			fallbackCounts = append(fallbackCounts, n)
		}
	}
	// A short form ("Star Wars" of "Star Wars: Episode IV - A New Hope")
	// only fills a key that no film's full title holds.
	for i, k := range fallback {
		if _, ok := p.counts[k]; !ok {
			p.counts[k] = fallbackCounts[i]
		}
	}
	if len(p.counts) == 0 {
		return nil, memento.Errorf(memento.EINVALID, "%s has no movies with a title and year", path)
	}
	return p, nil
}

// countRatings counts the rows of ratings.csv per movieId.
func countRatings(path string) (map[string]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, memento.WrapError(memento.EINVALID, err, "read %s: %v", path, err)
	}
	defer f.Close()
	cr := csv.NewReader(bufio.NewReaderSize(f, 1<<16))
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1
	out := map[string]int{}
	for row := 0; ; row++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, memento.WrapError(memento.EINVALID, err, "read %s: %v", path, err)
		}
		if row == 0 && rec[0] == "userId" {
			continue
		}
		if len(rec) < 3 {
			return nil, memento.Errorf(memento.EINVALID, "%s row %d: want userId,movieId,rating,timestamp", path, row+1)
		}
		out[rec[1]]++
	}
	return out, nil
}

// Ratings returns the rating count of the film with this title and year:
// the same year first, then a year either side, because a film's year
// differs between sources that date it by festival, first or US release.
// Titles it cannot match have none.
func (p *Popularity) Ratings(title string, year int) int {
	name := NormalizeTitle(title)
	if name == "" || year == 0 {
		return 0
	}
	if n, ok := p.counts[titleKey{name, year}]; ok {
		return n
	}
	return max(p.counts[titleKey{name, year - 1}], p.counts[titleKey{name, year + 1}])
}

// Gain is what showing a title with n ratings is worth: log(1 + n), so a
// well-known film counts for more than an obscure one without a few
// blockbusters deciding the mean.
func Gain(n int) float64 { return math.Log1p(float64(n)) }

var (
	mlYear      = regexp.MustCompile(`\s*\((\d{4})(?:[-–]\d{0,4})?\)\s*$`)
	mlAlternate = regexp.MustCompile(`\s*\(([^()]*)\)\s*$`)
	// trailingArticle is an article MovieLens moves behind the title
	// ("Matrix, The", "Dolce Vita, La").
	trailingArticle = regexp.MustCompile(`(?i),\s*(the|a|an|la|le|les|l'|il|el|lo|los|las|der|die|das|den|det|i|gli|un|une)$`)
)

// movieLensNames splits a movies.csv title such as "City of Lost Children,
// The (Cité des enfants perdus, La) (1995)" into its normalised names (the
// main title first, then its alternates), its short forms (before the last
// " - ", before the last colon: "Avengers: Infinity War - Part I" is also
// "Avengers: Infinity War"), and its year.
func movieLensNames(s string) (names, short []string, year int) {
	m := mlYear.FindStringSubmatchIndex(s)
	if m == nil {
		return nil, nil, 0
	}
	year, _ = strconv.Atoi(s[m[2]:m[3]])
	rest := s[:m[0]]
	var alts []string
	for {
		a := mlAlternate.FindStringSubmatchIndex(rest)
		if a == nil || a[0] == 0 {
			break
		}
		alt := strings.TrimSpace(rest[a[2]:a[3]])
		for _, prefix := range []string{"a.k.a. ", "aka "} {
			if len(alt) > len(prefix) && strings.EqualFold(alt[:len(prefix)], prefix) {
				alt = alt[len(prefix):]
			}
		}
		alts = append(alts, alt)
		rest = rest[:a[0]]
	}
	for _, r := range append([]string{rest}, alts...) {
		if n := NormalizeTitle(r); n != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, sep := range []string{" - ", ":"} {
		if i := strings.LastIndex(rest, sep); i > 0 {
			if n := NormalizeTitle(rest[:i]); n != "" && !slices.Contains(names, n) && !slices.Contains(short, n) {
				short = append(short, n)
			}
		}
	}
	return names, short, year
}

// NormalizeTitle reduces a title to the form two sources agree on:
// lower case without accents, an article moved behind the title ("Matrix,
// The") or leading it ("The Matrix") dropped, "&" read as "and", dots and
// apostrophes removed ("S.W.A.T." as "swat", "She's" as "shes") and any
// other punctuation read as a space.
func NormalizeTitle(s string) string {
	s = strings.TrimSpace(s)
	if m := trailingArticle.FindStringIndex(s); m != nil {
		s = s[:m[0]]
	}
	var b strings.Builder
	for _, r := range norm.NFKD.String(strings.ToLower(s)) {
		switch {
		case unicode.Is(unicode.Mn, r), r == '.', r == '\'', r == '’':
		case r == '&':
			b.WriteString(" and ")
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		default:
			b.WriteByte(' ')
		}
	}
	words := strings.Fields(b.String())
	if len(words) > 1 && (words[0] == "the" || words[0] == "a" || words[0] == "an") {
		words = words[1:]
	}
	return strings.Join(words, " ")
}

// ColdstartOptions configure the cold-start evaluation.
type ColdstartOptions struct {
	// Requests are the first messages of new users, one per user.
	Requests []string
	// K is the most titles judged per request. Default 10.
	K int
	// Tenant and UserPrefix name the users: UserPrefix + the request's
	// number, each in a thread of the same name.
	Tenant     string
	UserPrefix string
	// Catalog is the catalog the agent searches; the oracle and the
	// baselines search it too.
	Catalog memento.Catalog
	// Popularity gives each title's gain.
	Popularity *Popularity
	// Progress, when set, receives a line per request.
	Progress io.Writer
}

// ColdstartFigures are the three figures of one ranking.
type ColdstartFigures struct {
	// MeanGain is the mean over requests of the mean gain of the titles
	// shown for it (0 for a request answered with none).
	MeanGain float64 `json:"meanGain"`
	// Known is the share of all shown titles with at least KnownRatings
	// ratings.
	Known float64 `json:"known"`
	// OracleRatio is the mean gain over the mean of the best gains any
	// ranking of the same constraints could show.
	OracleRatio float64 `json:"oracleRatio"`
}

// ColdstartResult is the outcome of `memento eval coldstart`. Its JSON
// shape is a contract: {"requests","meanGain","known","oracleRatio",
// "baselines":{"catalogOrder":{...},"prior":{...}}}.
type ColdstartResult struct {
	Requests int `json:"requests"`
	ColdstartFigures
	Baselines map[string]ColdstartFigures `json:"baselines"`
	// PerRequest details each request, for the readable table.
	PerRequest []ColdstartRequest `json:"-"`
}

// ColdstartRequest is how one request fared.
type ColdstartRequest struct {
	Request string
	// Judged is how many titles each ranking was judged on: as many as the
	// agent showed, at most K, or K when it showed none.
	Judged int
	// Matches is how many catalog titles fit the understood constraints.
	Matches int
	// Gain, CatalogOrder and Prior are the mean gains of the agent's
	// titles and the baselines'; Oracle is the best mean gain.
	Gain, CatalogOrder, Prior, Oracle float64
	Shown                             []string
}

// The baselines of the cold-start evaluation.
const (
	BaselineCatalogOrder = "catalogOrder"
	BaselinePrior        = "prior"
)

// Coldstart replays each request as the first message of a new user in a
// new thread through t, and scores the titles shown by how well known they
// are (Gain of their MovieLens rating count).
//
// Each request is judged on n titles: the first K the agent showed, or K
// when it showed none (then it scores 0). The oracle searches the catalog
// for every title matching the active context the agent understood (its
// genres, type, years, people, free text and exclusions; "like" titles
// and soft wishes are not filters) and takes the n best by gain. The
// baselines answer the same constraints with the first n titles in year
// order (memento.SortYear, the catalog order of earlier versions) and in
// the catalog's default order (memento.SortDefault: notability without
// free text, relevance blended with notability with it). OracleRatio is a
// ranking's mean gain over the oracle's, both averaged over requests.
func Coldstart(ctx context.Context, t Turner, o ColdstartOptions) (*ColdstartResult, error) {
	if o.K <= 0 {
		o.K = 10
	}
	if o.K > memento.MaxPageSize {
		return nil, memento.Errorf(memento.EINVALID, "k must be at most %d, got %d", memento.MaxPageSize, o.K)
	}
	if o.Catalog == nil || o.Popularity == nil {
		return nil, memento.Errorf(memento.EINVALID, "cold-start evaluation needs a catalog and MovieLens ratings")
	}
	if len(o.Requests) == 0 {
		return nil, memento.Errorf(memento.EINVALID, "cold-start evaluation needs at least one request")
	}
	if o.UserPrefix == "" {
		o.UserPrefix = "coldstart-"
	}
	res := &ColdstartResult{Requests: len(o.Requests)}
	var agentSum, catSum, priorSum tally
	oracles := map[string][]float64{}
	for i, text := range o.Requests {
		user := o.UserPrefix + strconv.Itoa(i+1)
		resp, err := t.Turn(ctx, o.Tenant, agent.Request{User: user, Thread: user, Message: text})
		if err != nil {
			return nil, fmt.Errorf("cold-start request %d %q: %w", i+1, text, err)
		}
		shown := resp.Titles[:min(o.K, len(resp.Titles))]
		n := len(shown)
		if n == 0 {
			n = o.K
		}
		pool, err := poolGains(ctx, o.Catalog, o.Popularity, resp.ActiveContext, oracles)
		if err != nil {
			return nil, fmt.Errorf("cold-start request %d %q: %w", i+1, text, err)
		}
		oracle := meanOf(pool[:min(n, len(pool))])
		rr := ColdstartRequest{Request: text, Judged: n, Matches: len(pool), Oracle: oracle}
		var gains []float64
		for _, s := range shown {
			gains = append(gains, Gain(o.Popularity.Ratings(s.Title, s.Year)))
			rr.Shown = append(rr.Shown, fmt.Sprintf("%s (%d)", s.Title, s.Year))
		}
		rr.Gain = agentSum.add(gains, oracle)
		for _, b := range []struct {
			sort string
			sum  *tally
			mean *float64
		}{{memento.SortYear, &catSum, &rr.CatalogOrder}, {memento.SortDefault, &priorSum, &rr.Prior}} {
			q := agent.Query(resp.ActiveContext, 1, n)
			q.Sort = b.sort
			page, err := o.Catalog.Search(ctx, q)
			if err != nil {
				return nil, fmt.Errorf("cold-start request %d %q: baseline search: %w", i+1, text, err)
			}
			gains := make([]float64, len(page.Titles))
			for j, t := range page.Titles {
				gains[j] = Gain(o.Popularity.Ratings(t.Title, t.Year))
			}
			*b.mean = b.sum.add(gains, oracle)
		}
		res.PerRequest = append(res.PerRequest, rr)
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "coldstart %d/%d: %d shown, gain %.2f (oracle %.2f, catalog order %.2f, prior %.2f) %q\n",
				i+1, len(o.Requests), len(shown), rr.Gain, oracle, rr.CatalogOrder, rr.Prior, text)
		}
	}
	res.ColdstartFigures = agentSum.figures(len(o.Requests))
	res.Baselines = map[string]ColdstartFigures{
		BaselineCatalogOrder: catSum.figures(len(o.Requests)),
		BaselinePrior:        priorSum.figures(len(o.Requests)),
	}
	return res, nil
}

// tally adds up one ranking's figures over the requests.
type tally struct {
	meanGains, oracle float64
	shown, known      int
}

// add counts one request's shown gains against its oracle mean and
// returns their mean.
func (t *tally) add(gains []float64, oracle float64) float64 {
	m := meanOf(gains)
	t.meanGains += m
	t.oracle += oracle
	t.shown += len(gains)
	for _, g := range gains {
		if g >= Gain(KnownRatings) {
			t.known++
		}
	}
	return m
}

func (t *tally) figures(requests int) ColdstartFigures {
	f := ColdstartFigures{Known: ratio(t.known, t.shown)}
	if requests > 0 {
		f.MeanGain = round3(t.meanGains / float64(requests))
	}
	if t.oracle > 0 {
		f.OracleRatio = round3(t.meanGains / t.oracle)
	}
	f.Known = round3(f.Known)
	return f
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

func meanOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// poolGains returns the gains of every catalog title matching the context's
// constraints, best first, paging through the whole result. Pools are
// cached by query, since many requests share their constraints.
func poolGains(ctx context.Context, c memento.Catalog, p *Popularity, ac memento.ActiveContext, cache map[string][]float64) ([]float64, error) {
	q := agent.Query(ac, 1, memento.MaxPageSize)
	q.Sort = memento.SortYear
	key, err := json.Marshal(q)
	if err != nil {
		return nil, fmt.Errorf("oracle query: %w", err)
	}
	if g, ok := cache[string(key)]; ok {
		return g, nil
	}
	var gains []float64
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		page, err := c.Search(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("oracle search page %d: %w", q.Page, err)
		}
		for _, t := range page.Titles {
			gains = append(gains, Gain(p.Ratings(t.Title, t.Year)))
		}
		if page.Last || len(page.Titles) == 0 {
			break
		}
		q.Page++
	}
	slices.SortFunc(gains, func(a, b float64) int { return cmp.Compare(b, a) })
	cache[string(key)] = gains
	return gains, nil
}

// ReadRequests reads one request per line, skipping blank lines and lines
// starting with "#".
func ReadRequests(r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read requests: %w", err)
	}
	if len(out) == 0 {
		return nil, memento.Errorf(memento.EINVALID, "the request file has no requests (one per line)")
	}
	return out, nil
}
