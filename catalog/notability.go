package catalog

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/memento-ai/memento"
)

// A title's notability (memento.Title.Notability) is a prior of how well
// known it is, from 0 to 1, that search and the agent fall back on when
// nothing else decides. It is computed when a catalog is built or imported,
// from what the source has:
//
//   - counts of ratings or votes (IMDb's numVotes, MovieLens ratings), by
//     NotabilityFromCounts: the more people rated a title, the better known
//     it is;
//   - otherwise the title's own fields, by ComputeNotability: the Wikipedia
//     lists give a well-known film a longer article lead, a longer cast
//     list, a poster, and a cast of actors who are in other notable films
//     of the catalog.
//
// Either way the value is a rank: the share of the catalog's titles that
// are less notable (ties share their mean rank), so it is spread evenly
// over 0..1 whatever the source, and blends with other scores on one scale.

// NotabilityWeights weighs the signals of the field prior (ComputeNotability).
// Every signal is rank-normalised over the catalog before it is weighed, so a
// weight says how much a signal counts, whatever its unit. A signal that is
// the same for every title (no source has images, say) changes nothing.
type NotabilityWeights struct {
	Text     SignalWeights // length of the plot text or article lead
	Cast     SignalWeights // number of cast members listed
	CastFame SignalWeights // how many other catalog titles the billed cast are in (mean)
	CastStar SignalWeights // the same for the cast member in most other titles
	Image    SignalWeights // the source has an image (a poster) of the title
	Page     SignalWeights // the title has a page of its own at the source (Href)
	Genres   SignalWeights // number of genres
	Recency  SignalWeights // release year: later films are known to more of today's users
	// Sequels counts the later titles of the catalog that continue this one:
	// their title starts with this title and they share a cast member
	// ("Toy Story 2" of "Toy Story"). A film gets sequels when many saw it.
	Sequels SignalWeights
	// CastKnown is how well documented the other films of the billed cast
	// are (their text length and images): stars of well-known films are
	// in other well-known films.
	CastKnown SignalWeights
	// Mentions counts the other titles whose text names this one with its
	// year ("a remake of the 1960 film Psycho", "Jaws (1975)"): films that
	// later films are measured against are known.
	Mentions SignalWeights
	// CastRank is cast fame passed along the film-actor graph: a lead's
	// fame is the sum of how notable their other films are, and a film's
	// notability for it is in turn its own documentation mixed with its
	// leads' fame, a few rounds over (as PageRank passes rank along
	// links). A star is someone in several notable films, not in many
	// films that nobody saw.
	CastRank SignalWeights
}

// SignalWeights weighs one signal's rank r (in (0, 1]) in three shapes, so
// that a signal can count differently at the top of the catalog than at the
// bottom. What matters most to a user is the top, where ranks bunch up: the
// 99.9th percentile of article length is only 0.009 of a rank above the
// 99th, and a straight weighted sum of ranks then lets coarse signals (the
// number of genres) decide among the best-documented films.
type SignalWeights struct {
	Rank float64 // r itself
	// Top weighs -log(1.001 - r), which stretches the top: it tells the
	// film far ahead on a signal from the films merely ahead.
	Top float64
	// Bottom weighs log(0.01 + r), which stretches the bottom: it marks a
	// film that is last on a signal (no mention at all, a one-line cast),
	// however strong it is on others.
	Bottom float64
}

// The offsets of SignalWeights' Top and Bottom shapes: they bound the
// shapes (a rank of 1 or near 0 stays finite) and set how far each
// stretches its end.
const (
	topOffset    = 0.001
	bottomOffset = 0.01
)

// shapes returns the three shapes of a rank that SignalWeights weighs, in
// a catalog of n titles. A catalog of n titles tells ranks apart by 1/n at
// best, so neither offset is below that: in a catalog of four, the first
// on a signal is a quarter ahead of the second, not a thousandth from the
// end of a long tail.
func shapes(r float64, n int) [3]float64 {
	step := 1 / float64(max(n, 1))
	return [3]float64{r, -math.Log(max(topOffset, step) + 1 - r), math.Log(max(bottomOffset, step) + r)}
}

func (s SignalWeights) apply(x [3]float64) float64 {
	return s.Rank*x[0] + s.Top*x[1] + s.Bottom*x[2]
}

// DefaultNotabilityWeights returns the weights the catalog uses. They were
// fitted by catalog/notability_eval_test.go, by least squares of
// log(1 + MovieLens rating count) on the shapes of the signals over one half
// of the embedded titles (a title MovieLens lacks counts 0), and are checked
// there on the other half (MovieLens judges the prior, it never feeds it).
// Every weight is non-negative, the release year's too: fitted freely, the
// year's weight rises to the 1990s and falls after, which mirrors when this
// MovieLens file was collected (2018), not what today's users know; kept
// non-decreasing, the fit gives the year no weight at all.
func DefaultNotabilityWeights() NotabilityWeights {
	return NotabilityWeights{
		Text:      SignalWeights{Rank: 0.00, Top: 0.10, Bottom: 0.00},
		Cast:      SignalWeights{Rank: 0.00, Top: 0.14, Bottom: 0.00},
		CastFame:  SignalWeights{Rank: 0.00, Top: 0.00, Bottom: 0.00},
		CastStar:  SignalWeights{Rank: 0.00, Top: 0.00, Bottom: 0.00},
		Image:     SignalWeights{Rank: 0.00, Top: 0.00, Bottom: 0.00},
		Page:      SignalWeights{Rank: 0.00, Top: 0.00, Bottom: 0.00},
		Genres:    SignalWeights{Rank: 0.06, Top: 0.05, Bottom: 0.00},
		Recency:   SignalWeights{Rank: 0.00, Top: 0.00, Bottom: 0.00},
		Sequels:   SignalWeights{Rank: 0.00, Top: 0.15, Bottom: 0.39},
		CastKnown: SignalWeights{Rank: 0.00, Top: 0.01, Bottom: 0.00},
		Mentions:  SignalWeights{Rank: 0.00, Top: 0.18, Bottom: 0.00},
		CastRank:  SignalWeights{Rank: 0.00, Top: 0.33, Bottom: 0.00},
	}
}

// TitleSignals are what the field prior reads of a title beyond its
// memento.Title fields, when the source has them.
type TitleSignals struct {
	// TextChars is the length in bytes of the title's full plot text or
	// article lead, which the stored Overview may cut; 0 means use
	// len(Overview).
	TextChars int
	// Text is the title's full plot text or article lead, read for the
	// titles it names (NotabilityWeights.Mentions); "" means use Overview.
	Text string
	// Image says the source has an image of the title, such as a poster.
	Image bool
}

// billedCast is how many of the first-billed cast members the fame signals
// look at: the leads, not the extras a long list adds.
const billedCast = 5

// numFeatures is the number of signals in NotabilityWeights.
const numFeatures = 12

// features is the rank-normalised signals of one title, in the order of
// NotabilityWeights' fields.
type features [numFeatures]float64

func (w NotabilityWeights) vector() [numFeatures]SignalWeights {
	return [numFeatures]SignalWeights{w.Text, w.Cast, w.CastFame, w.CastStar, w.Image, w.Page, w.Genres, w.Recency, w.Sequels, w.CastKnown, w.Mentions, w.CastRank}
}

// ComputeNotability sets the Notability of every title from its fields and
// signals, with DefaultNotabilityWeights. signals is nil, or holds one entry
// per title. The result depends only on the titles and signals given, not on
// their order (ties are broken by nothing: equal titles get equal values).
func ComputeNotability(titles []memento.Title, signals []TitleSignals) {
	ComputeNotabilityWeighted(titles, signals, DefaultNotabilityWeights())
}

// ComputeNotabilityWeighted is ComputeNotability with the given weights.
func ComputeNotabilityWeighted(titles []memento.Title, signals []TitleSignals, w NotabilityWeights) {
	scores := combineFeatures(notabilityFeatures(titles, signals), w)
	for i, v := range rankNormalise(scores) {
		titles[i].Notability = roundNotability(v)
	}
}

// NotabilityFromCounts sets the Notability of every title from counts, by
// title id: how many people rated or voted for it. Titles without a count
// (or a count of 0) rank below every counted title and are ordered among
// themselves by the field prior, so a catalog only partly covered by its
// ratings file is still ordered throughout.
func NotabilityFromCounts(titles []memento.Title, counts map[string]int) {
	prior := rankNormalise(combineFeatures(notabilityFeatures(titles, nil), DefaultNotabilityWeights()))
	scores := make([]float64, len(titles))
	for i := range titles {
		// The prior is below 1, so it orders titles of equal count without
		// ever lifting one over a title with a higher count.
		scores[i] = float64(max(counts[titles[i].ID], 0)) + prior[i]*0.5
	}
	for i, v := range rankNormalise(scores) {
		titles[i].Notability = roundNotability(v)
	}
}

// roundNotability keeps four decimals, enough to order 10,000 titles apart
// while keeping the catalog file small, and never rounds a value to 0 (which
// JSON would leave out as "unknown").
func roundNotability(v float64) float64 {
	return max(math.Round(v*1e4)/1e4, 1e-4)
}

// notabilityFeatures returns the rank-normalised signals of every title.
func notabilityFeatures(titles []memento.Title, signals []TitleSignals) []features {
	n := len(titles)
	// How many titles each person is in, to tell a lead who is in many
	// films of the catalog from one who is in this film only.
	filmsOf := map[string]int{}
	keys := make([][]string, n)
	var key []byte
	for i := range titles {
		for j, name := range titles[i].Cast {
			key = appendNormKey(key[:0], name)
			if len(key) == 0 {
				continue
			}
			k := string(key)
			if slices.Contains(keys[i], k) {
				continue
			}
			filmsOf[k]++
			if j < billedCast {
				keys[i] = append(keys[i], k)
			}
		}
	}
	raw := make([][]float64, numFeatures)
	for f := range raw {
		raw[f] = make([]float64, n)
	}
	for i := range titles {
		t := &titles[i]
		var sig TitleSignals
		if signals != nil {
			sig = signals[i]
		}
		text := sig.TextChars
		if text == 0 {
			text = len(t.Overview)
		}
		fame, star := 0.0, 0.0
		for _, k := range keys[i] {
			other := math.Log1p(float64(filmsOf[k] - 1))
			fame += other
			star = max(star, other)
		}
		if len(keys[i]) > 0 {
			fame /= float64(len(keys[i]))
		}
		raw[0][i] = float64(text)
		raw[1][i] = float64(len(t.Cast))
		raw[2][i] = fame
		raw[3][i] = star
		raw[4][i] = b2f(sig.Image)
		raw[5][i] = b2f(t.Href != "")
		raw[6][i] = float64(len(t.Genres))
		raw[7][i] = float64(t.Year)
	}
	raw[8] = sequelCounts(titles, keys)
	texts := make([]string, n)
	for i := range titles {
		texts[i] = titles[i].Overview
		if signals != nil && signals[i].Text != "" {
			texts[i] = signals[i].Text
		}
	}
	raw[10] = mentionCounts(titles, texts)
	out := make([]features, n)
	for f := range raw[:8] {
		for i, v := range rankNormalise(raw[f]) {
			out[i][f] = v
		}
	}
	// How well documented a film is on its own, for the cast signal: the
	// mean of its text and image ranks.
	base := make([]float64, n)
	for i := range out {
		base[i] = (out[i][0] + out[i][4]) / 2
	}
	raw[9] = castKnown(keys, base)
	for _, f := range []int{8, 9, 10} {
		for i, v := range rankNormalise(raw[f]) {
			out[i][f] = v
		}
	}
	// What a film's own fields say of it, for the propagation: its text,
	// cast length, sequels and mentions.
	for i := range out {
		base[i] = (out[i][0] + out[i][1] + out[i][8] + out[i][10]) / 4
	}
	for i, v := range rankNormalise(castRank(keys, base, castRankRounds)) {
		out[i][11] = v
	}
	return out
}

// castRankRounds is how many times castRank passes notability from films
// to their leads and back: after three rounds the order barely moves.
const castRankRounds = 3

// castRankPower is the power of a film's score (a rank in (0, 1]) that
// counts towards its leads' fame. A high power makes fame a soft count of
// the lead's films near the top (a film at the 97th percentile counts
// about half, one at the 80th about 0.01): a star is in several notable
// films, while a steady supporting actor in sixty films nobody saw is not.
// With a power of 1 fame is little more than the number of films, which
// CastFame already measures.
const castRankPower = 20

// castRank returns, for every title, the mean over its billed cast of the
// log of each lead's fame, where a lead's fame is the sum of the scores of
// their other films raised to castRankPower. The scores start as the rank
// of base and, after each round, become the rank of (the rank of base plus
// the rank of the round's result), so that a film
// lifted by its cast lifts its cast's other films in the next round.
func castRank(billed [][]string, base []float64, rounds int) []float64 {
	own := rankNormalise(base)
	score := own
	out := make([]float64, len(billed))
	sum := map[string]float64{}
	for round := 0; round < rounds; round++ {
		clear(sum)
		for i, keys := range billed {
			for _, k := range keys {
				sum[k] += math.Pow(score[i], castRankPower)
			}
		}
		for i, keys := range billed {
			out[i] = 0
			if len(keys) == 0 {
				continue
			}
			s := 0.0
			for _, k := range keys {
				s += math.Log1p(max(sum[k]-math.Pow(score[i], castRankPower), 0))
			}
			// Fame below a hundredth of a notable film is none: ranks
			// would otherwise make a lead whose other film is obscure
			// (a score of 0.5 counts 1e-6) a full step ahead of a lead
			// in no other film.
			out[i] = math.Round(s/float64(len(keys))*100) / 100
		}
		if round+1 < rounds {
			mixed := rankNormalise(out)
			for i := range mixed {
				mixed[i] += own[i]
			}
			score = rankNormalise(mixed)
		}
	}
	return out
}

// sequelCounts returns, for every title, how many later titles start with
// its title (as whole words, ignoring case and punctuation) and share one of
// its billed cast: its sequels and follow-ups.
func sequelCounts(titles []memento.Title, billed [][]string) []float64 {
	byKey := map[string][]int{}
	keys := make([]string, len(titles))
	for i := range titles {
		keys[i] = normKey(titles[i].Title)
		if keys[i] != "" {
			byKey[keys[i]] = append(byKey[keys[i]], i)
		}
	}
	out := make([]float64, len(titles))
	for i, k := range keys {
		for j := 0; j < len(k); j++ {
			if k[j] != ' ' {
				continue
			}
			for _, orig := range byKey[k[:j]] {
				if titles[orig].Year < titles[i].Year && shareAny(billed[orig], billed[i]) {
					out[orig]++
				}
			}
		}
	}
	return out
}

func shareAny(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// castKnown returns, for every title, the mean over its billed cast of how
// documented (base) the other titles of each cast member are; a cast
// member in no other title counts 0.
func castKnown(billed [][]string, base []float64) []float64 {
	sum := map[string]float64{}
	count := map[string]int{}
	for i, keys := range billed {
		for _, k := range keys {
			sum[k] += base[i]
			count[k]++
		}
	}
	out := make([]float64, len(billed))
	for i, keys := range billed {
		if len(keys) == 0 {
			continue
		}
		s := 0.0
		for _, k := range keys {
			if c := count[k]; c > 1 {
				s += (sum[k] - base[i]) / float64(c-1)
			}
		}
		out[i] = s / float64(len(keys))
	}
	return out
}

// combineFeatures returns the weighted sum of the shapes of every title's
// signals.
func combineFeatures(fs []features, w NotabilityWeights) []float64 {
	wv := w.vector()
	out := make([]float64, len(fs))
	for i := range fs {
		s := 0.0
		for f, x := range wv {
			s += x.apply(shapes(fs[i][f], len(fs)))
		}
		out[i] = s
	}
	return out
}

// rankNormalise maps values to their rank in (0, 1]: (mean rank of the
// value, counting from 1) / n, so the largest value gets 1 and equal
// values get equal results.
func rankNormalise(values []float64) []float64 {
	n := len(values)
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return cmp.Compare(values[a], values[b]) })
	out := make([]float64, n)
	for i := 0; i < n; {
		j := i + 1
		for j < n && values[order[j]] == values[order[i]] {
			j++
		}
		// Ranks i+1 .. j share their mean.
		r := float64(i+1+j) / 2 / float64(n)
		for _, o := range order[i:j] {
			out[o] = r
		}
		i = j
	}
	return out
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// maxMentionWords is the longest title, in words, that mentionCounts looks
// for in a text.
const maxMentionWords = 8

// mentionCounts returns, for every title, how many of the other titles'
// texts name it. A mention is a run of words that starts with a capital
// letter after a word that does not (so not at the start of a sentence, and
// not inside a longer name) and ends before a word that does not start with
// one, or at punctuation; its normalised words must be a catalog title, and
// a year must say it is a film: "Psycho (1960)" or "the 1960 film Psycho".
// The year also picks the film among those of that title (a year off by one
// still counts, as release dates differ). Without it, month, city and
// country names that are also film titles ("September", "Chicago") would
// be the most mentioned films. The longest run counts, once per text.
func mentionCounts(titles []memento.Title, texts []string) []float64 {
	byKey := map[string][]int{}
	for i := range titles {
		if k := normKey(titles[i].Title); k != "" {
			byKey[k] = append(byKey[k], i)
		}
	}
	out := make([]float64, len(titles))
	var key []byte
	seen := map[string]bool{}
	for i, text := range texts {
		words := strings.Fields(text)
		clear(seen)
		for s := 1; s < len(words); s++ {
			if !capitalised(words[s]) || capitalised(words[s-1]) || endsSentence(words[s-1]) {
				continue
			}
			best, bestLen := "", 0
			key = key[:0]
			for l := 1; l <= maxMentionWords && s+l <= len(words); l++ {
				w := words[s+l-1]
				before := len(key)
				if before > 0 {
					key = append(key, ' ')
				}
				if key = appendNormKey(key, w); len(key) == before+1 {
					key = key[:before] // a word of punctuation only
				}
				brk := endsPhrase(w)
				if s+l == len(words) || brk || !capitalised(words[s+l]) {
					if _, ok := byKey[string(key)]; ok {
						best, bestLen = string(key), l
					}
				}
				if brk {
					break
				}
			}
			if best == "" {
				continue
			}
			year := mentionYear(words, s, bestLen)
			if year == 0 {
				continue
			}
			var named []int
			for _, j := range byKey[best] {
				if j != i && abs(titles[j].Year-year) <= 1 {
					named = append(named, j)
				}
			}
			for _, j := range named {
				if k := best + "|" + strconv.Itoa(j); !seen[k] {
					seen[k] = true
					out[j] += 1 / float64(len(named))
				}
			}
		}
	}
	return out
}

// capitalised reports whether a word starts, after any opening quotes or
// brackets, with an upper-case letter. Digits do not count: a year in a
// text is not a mention of a film called 1941.
func capitalised(w string) bool {
	for _, r := range w {
		switch {
		case unicode.IsUpper(r):
			return true
		case r == '"' || r == '(' || r == '\'' || r == '\u201c' || r == '\u2018':
			continue
		}
		return false
	}
	return false
}

// endsSentence reports whether a word ends a sentence, so that the next one
// is capitalised for grammar's sake.
func endsSentence(w string) bool {
	return strings.HasSuffix(w, ".") || strings.HasSuffix(w, "!") || strings.HasSuffix(w, "?")
}

// endsPhrase reports whether punctuation after a word ends the run of words
// a title can span. A colon does not: titles have them ("Star Wars:
// Episode IV").
func endsPhrase(w string) bool {
	return strings.ContainsAny(w[len(w)-1:], ",.;!?)\"")
}

// mentionYear returns the year a text gives a mention of words[s:s+l], in
// brackets after it ("Psycho (1960)") or up to four words before it ("the
// 1960 film Psycho", "Hitchcock's 1960 horror film Psycho", "1960's
// Psycho"), or 0.
func mentionYear(words []string, s, l int) int {
	if s+l < len(words) && strings.HasPrefix(words[s+l], "(") {
		if y := yearWord(words[s+l]); y != 0 {
			return y
		}
	}
	// Right before the title only a possessive year says it is the
	// film's: "in 1929 Broadway" is a place.
	if s >= 1 && (strings.HasSuffix(words[s-1], "'s") || strings.HasSuffix(words[s-1], "’s")) {
		if y := yearWord(words[s-1]); y != 0 {
			return y
		}
	}
	for _, b := range []int{s - 2, s - 3, s - 4} {
		if b >= 0 {
			if y := yearWord(words[b]); y != 0 {
				return y
			}
		}
	}
	return 0
}

// yearWord returns the year a word is, brackets, a possessive and trailing
// punctuation aside ("(1960)", "1960's"; not "1960s": a decade is no
// year), or 0.
func yearWord(w string) int {
	w = strings.TrimPrefix(w, "(")
	w = strings.TrimRight(w, "),;:.")
	w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
	if len(w) != 4 {
		return 0
	}
	y, err := strconv.Atoi(w)
	if err != nil || !validYear(y) {
		return 0
	}
	return y
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
