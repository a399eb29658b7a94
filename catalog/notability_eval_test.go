package catalog

import (
	"bufio"
	"cmp"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/memento-ai/memento"
)

// sharedData is the project's folder of external data sets, beside the
// repository. Tests that need it skip when it is absent.
const sharedData = "../../shared/data"

// mlMatch is one Wikipedia title matched to a MovieLens movie.
type mlMatch struct {
	doc     int     // index into the Wikipedia titles
	gain    float64 // log(1 + the movie's MovieLens rating count)
	holdOut bool    // in the half the weights are checked on, not tuned on
}

// TestNotabilityAgainstMovieLens judges the notability prior of the
// Wikipedia catalog by MovieLens: it matches the catalog's films to
// MovieLens movies by normalised title and year, and reports the Spearman
// correlation between notability and log(1 + rating count), and the top-k
// measure (topMeasure) that matters more to a user. It refits the weights
// on one half of the catalog (split by a hash of the title id) and prints
// them for DefaultNotabilityWeights, reports every figure on the other
// half, and fails when the default weights do not beat the old order (year
// descending) on that half by a clear margin, or show too few known films
// at the top. MovieLens only judges here; nothing of it reaches the
// catalog. Run with -v to see the figures.
func TestNotabilityAgainstMovieLens(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the Wikipedia catalog")
	}
	wikiDir := filepath.Join(sharedData, "wikimovies")
	mlDir := filepath.Join(sharedData, "movielens")
	for _, p := range []string{wikiDir, filepath.Join(mlDir, "movies.csv"), filepath.Join(mlDir, "ratings.csv")} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("no shared data: %v", err)
		}
	}
	titles, signals, _, err := readWikiMovies(wikiDir)
	if err != nil {
		t.Fatal(err)
	}
	matches := matchMovieLens(t, titles, mlDir)
	holdOut := 0
	for _, m := range matches {
		if m.holdOut {
			holdOut++
		}
	}
	t.Logf("matched %d of %d catalog titles to MovieLens (%d held out)", len(matches), len(titles), holdOut)
	if len(matches) < 1000 {
		t.Fatalf("only %d matches: the title matching is broken", len(matches))
	}

	fs := notabilityFeatures(titles, signals)
	spearmanOf := func(score func(doc int) float64, held bool) float64 {
		var xs, ys []float64
		for _, m := range matches {
			if m.holdOut == held {
				xs = append(xs, score(m.doc))
				ys = append(ys, m.gain)
			}
		}
		return spearman(xs, ys)
	}
	weighted := func(w NotabilityWeights) func(int) float64 {
		scores := combineFeatures(fs, w)
		return func(d int) float64 { return scores[d] }
	}
	year := func(d int) float64 { return float64(titles[d].Year) }
	castLen := func(d int) float64 { return float64(len(titles[d].Cast)) }

	top := newTopMeasure(titles, matches)
	def := DefaultNotabilityWeights()
	gain := func(d int) float64 { return top.gains[d] }
	tuning := func(d int) bool { return !holdOutID(titles[d].ID) }
	tuned := fitWeights(fs, gain, tuning, true)
	monotone := fitWeights(fs, gain, tuning, false)
	ComputeNotability(titles, signals)
	stored := func(d int) float64 { return titles[d].Notability }
	// The prior as it was before mentions and the shapes (a weighted sum
	// of ranks), to compare with.
	r := func(x float64) SignalWeights { return SignalWeights{Rank: x} }
	previous := weighted(NotabilityWeights{Text: r(2), Cast: r(1), CastFame: r(1), CastStar: r(0.25), Image: r(2), Page: r(0.25),
		Genres: r(0.5), Recency: r(1), Sequels: r(2), CastKnown: r(1)})

	// known@1000 is closer to what a user sees: of the 1,000 titles of a
	// half of the whole catalog that a score ranks first, the share that
	// MovieLens users know (a matched movie with at least 20 ratings).
	gains := map[int]float64{}
	for _, m := range matches {
		gains[m.doc] = m.gain
	}
	knownAt := func(score func(int) float64, held bool, k int) float64 {
		var docs []int
		for d := range titles {
			if holdOutID(titles[d].ID) == held {
				docs = append(docs, d)
			}
		}
		slices.SortStableFunc(docs, func(a, b int) int {
			return cmp.Or(cmp.Compare(score(b), score(a)), cmp.Compare(titles[b].Year, titles[a].Year))
		})
		known := 0
		for _, d := range docs[:k] {
			if gains[d] >= math.Log1p(20) {
				known++
			}
		}
		return float64(known) / float64(k)
	}

	oracle := func(d int) float64 { return gains[d] }
	t.Logf("known@1000 of a perfect ranking: %.3f / %.3f; known@200: prior %.3f, perfect %.3f",
		knownAt(oracle, false, 1000), knownAt(oracle, true, 1000), knownAt(stored, true, 200), knownAt(oracle, true, 200))
	t.Logf("Spearman(score, log(1+ratings)) and known@1000:  tuning half  held-out half | known@1000 tuning  held-out")
	for _, row := range []struct {
		name  string
		score func(int) float64
	}{
		{"year descending (old order)", year},
		{"cast length (old ResolveTitle)", castLen},
		{"default weights (stored)", stored},
		{"refitted on the tuning half", weighted(tuned)},
	} {
		t.Logf("  %-32s %8.3f %12.3f   | %8.3f %8.3f", row.name, spearmanOf(row.score, false), spearmanOf(row.score, true),
			knownAt(row.score, false, 1000), knownAt(row.score, true, 1000))
	}
	t.Logf("top-k over the best possible (mean log(1+ratings) of the top k / of the best k), %d genre and decade groups:", len(top.groups))
	t.Logf("  %-32s  tuning: all@10 all@50 grp@10 grp@50 | held-out: all@10 all@50 grp@10 grp@50  Spearman", "")
	for _, row := range []struct {
		name  string
		score func(int) float64
	}{
		{"year descending (old order)", year},
		{"previous prior (no mentions)", previous},
		{"default weights (stored)", stored},
		{"refitted on the tuning half", weighted(tuned)},
		{"refitted, monotone recency", weighted(monotone)},
	} {
		a10, a50 := top.allRatios(row.score, false)
		g10, g50 := top.ratios(row.score, false)
		h10, h50 := top.allRatios(row.score, true)
		hg10, hg50 := top.ratios(row.score, true)
		t.Logf("  %-32s  %13.3f %6.3f %6.3f %6.3f | %16.3f %6.3f %6.3f %6.3f  %8.3f", row.name, a10, a50, g10, g50,
			h10, h50, hg10, hg50, spearmanOf(row.score, true))
	}
	// Per group, to see where the prior falls short (voice casts of
	// animated films, say, are long lists of actors famous for other work).
	t.Logf("  %-32s  held-out top-10 top-50 of the stored prior, and of the previous prior", "group")
	for g, name := range top.names {
		t.Logf("  %-32s  %8.3f %6.3f | %6.3f %6.3f", name, top.ratio(stored, top.groups[g][1], 10), top.ratio(stored, top.groups[g][1], 50),
			top.ratio(previous, top.groups[g][1], 10), top.ratio(previous, top.groups[g][1], 50))
	}
	for f := 0; f < numFeatures; f++ {
		var w NotabilityWeights
		weightField(&w, f).Rank = 1
		t.Logf("  signal %d alone                   %8.3f %12.3f", f, spearmanOf(weighted(w), false), spearmanOf(weighted(w), true))
	}
	t.Logf("default weights: %+v", def)
	t.Logf("refitted weights, to paste into DefaultNotabilityWeights:\n%s", goWeights(tuned))
	t.Logf("refitted weights with a monotone (non-decreasing) recency:\n%s", goWeights(monotone))

	got, base := spearmanOf(stored, true), spearmanOf(year, true)
	if got < base+0.2 {
		t.Errorf("held-out Spearman of the prior = %.3f, want at least 0.2 over year descending (%.3f)", got, base)
	}
	if got, base := top.allRatios(stored, true); got < 0.5 || base < 0.5 {
		t.Errorf("held-out top-10 / top-50 ratio of the prior = %.3f / %.3f, want at least 0.5", got, base)
	}
}

// topMeasure judges the top of a ranking, which is what a user sees: for a
// group of titles of one half of the catalog (all of them, or those of one
// genre or decade), the mean log(1 + MovieLens rating count) of the k
// titles a score ranks first over that of the best k titles of the group.
// Titles without a MovieLens match count 0, as for a user who never heard
// of them.
type topMeasure struct {
	titles []memento.Title
	gains  map[int]float64
	all    [2][]int   // per half (0 tuning, 1 held out), the titles
	groups [][2][]int // per genre or decade, per half, its titles
	names  []string   // the name of each group ("genre:Animated")
}

// minGroup is the fewest matched titles a group needs in each half to be
// measured: smaller groups have too few known titles for a top 50.
const minGroup = 100

func newTopMeasure(titles []memento.Title, matches []mlMatch) *topMeasure {
	m := &topMeasure{titles: titles, gains: map[int]float64{}}
	for _, x := range matches {
		m.gains[x.doc] = x.gain
	}
	byGroup := map[string]*[2][]int{}
	add := func(g string, half, d int) {
		if byGroup[g] == nil {
			byGroup[g] = &[2][]int{}
		}
		byGroup[g][half] = append(byGroup[g][half], d)
	}
	for d := range titles {
		half := 0
		if holdOutID(titles[d].ID) {
			half = 1
		}
		m.all[half] = append(m.all[half], d)
		for _, g := range titles[d].Genres {
			add("genre:"+g, half, d)
		}
		add("decade:"+strconv.Itoa(titles[d].Year/10*10), half, d)
	}
	names := make([]string, 0, len(byGroup))
	for g := range byGroup {
		names = append(names, g)
	}
	slices.Sort(names)
	for _, g := range names {
		grp := byGroup[g]
		ok := true
		for _, docs := range grp {
			matched := 0
			for _, d := range docs {
				if m.gains[d] > 0 {
					matched++
				}
			}
			ok = ok && matched >= minGroup
		}
		if ok {
			m.groups = append(m.groups, *grp)
			m.names = append(m.names, g)
		}
	}
	return m
}

// ratio returns the top-k ratio of score over docs, ties broken by year
// descending as the catalog's order does.
func (m *topMeasure) ratio(score func(int) float64, docs []int, k int) float64 {
	docs = slices.Clone(docs)
	best := make([]float64, len(docs))
	for i, d := range docs {
		best[i] = m.gains[d]
	}
	slices.SortFunc(best, func(a, b float64) int { return cmp.Compare(b, a) })
	slices.SortStableFunc(docs, func(a, b int) int {
		return cmp.Or(cmp.Compare(score(b), score(a)), cmp.Compare(m.titles[b].Year, m.titles[a].Year))
	})
	k = min(k, len(docs))
	got, want := 0.0, 0.0
	for i := 0; i < k; i++ {
		got += m.gains[docs[i]]
		want += best[i]
	}
	if want == 0 {
		return 0
	}
	return got / want
}

// allRatios returns the top-10 and top-50 ratios over all titles of a half.
func (m *topMeasure) allRatios(score func(int) float64, held bool) (float64, float64) {
	h := b2i(held)
	return m.ratio(score, m.all[h], 10), m.ratio(score, m.all[h], 50)
}

// ratios returns the top-10 and top-50 ratios averaged over the groups.
func (m *topMeasure) ratios(score func(int) float64, held bool) (float64, float64) {
	h := b2i(held)
	var r10, r50 float64
	for _, g := range m.groups {
		r10 += m.ratio(score, g[h], 10)
		r50 += m.ratio(score, g[h], 50)
	}
	n := float64(max(len(m.groups), 1))
	return r10 / n, r50 / n
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// matchMovieLens returns the catalog titles that match exactly one
// MovieLens movie by normalised title and year, and no other catalog title,
// with their MovieLens rating counts.
func matchMovieLens(t *testing.T, titles []memento.Title, mlDir string) []mlMatch {
	t.Helper()
	movies, _, err := ReadFile(filepath.Join(mlDir, "movies.csv"), FormatMovieLens)
	if err != nil {
		t.Fatal(err)
	}
	counts, err := readMovieLensCounts(filepath.Join(mlDir, "ratings.csv"))
	if err != nil {
		t.Fatal(err)
	}
	key := func(title string, year int) string { return normKey(title) + "|" + strconv.Itoa(year) }
	mlByKey := map[string]int{} // key -> rating count, -1 when ambiguous
	for _, m := range movies {
		k := key(m.Title, m.Year)
		if _, dup := mlByKey[k]; dup {
			mlByKey[k] = -1
			continue
		}
		mlByKey[k] = counts[m.ID]
	}
	wikiByKey := map[string]int{}
	for i := range titles {
		wikiByKey[key(titles[i].Title, titles[i].Year)]++
	}
	var out []mlMatch
	for i := range titles {
		k := key(titles[i].Title, titles[i].Year)
		n, ok := mlByKey[k]
		if !ok || n < 0 || wikiByKey[k] > 1 {
			continue
		}
		out = append(out, mlMatch{doc: i, gain: math.Log1p(float64(n)), holdOut: holdOutID(titles[i].ID)})
	}
	return out
}

// holdOutID reports whether the title with this id is in the half of the
// catalog the weights are checked on rather than tuned on.
func holdOutID(id string) bool {
	h := fnv.New32a()
	h.Write([]byte(id))
	return h.Sum32()%2 == 1
}

// readMovieLensCounts counts the ratings of every movie in a MovieLens
// ratings.csv, by "ml:" id, with the catalog's own reader.
func readMovieLensCounts(path string) (map[string]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	counts, _, err := ReadMovieLensRatings(bufio.NewReader(f))
	return counts, err
}

// fitWeights fits the weights of the signals' shapes by least squares of
// gain over the titles use selects: the weights whose sum best predicts
// log(1 + rating count), a title without ratings counting 0. The weights
// are kept non-negative, so that more of any signal never lowers a title:
// unconstrained, shapes that move together (those of a two-valued signal)
// get large weights of opposite signs that fit this catalog and bend the
// prior the wrong way on a small one. With freeRecency the release year
// alone is free to rise and fall: in MovieLens the best-known films are
// neither the newest (few had seen them when it was collected) nor the
// oldest; without it, recency is kept non-decreasing too. A ridge of 1 on every weight keeps
// the problem well posed. The intercept is dropped: only the order matters.
func fitWeights(fs []features, gain func(int) float64, use func(int) bool, freeRecency bool) NotabilityWeights {
	const p = 1 + 3*numFeatures
	row := func(d int) [p]float64 {
		x := [p]float64{1}
		for f := 0; f < numFeatures; f++ {
			s := shapes(fs[d][f], len(fs))
			copy(x[1+3*f:], s[:])
		}
		return x
	}
	a := make([][]float64, p)
	b := make([]float64, p)
	for i := range a {
		a[i] = make([]float64, p)
		a[i][i] = 1
	}
	for d := range fs {
		if !use(d) {
			continue
		}
		x, y := row(d), gain(d)
		for i := range x {
			b[i] += x[i] * y
			for j := range x {
				a[i][j] += x[i] * x[j]
			}
		}
	}
	free := []bool{0: true}
	for f := 0; f < numFeatures; f++ {
		r := freeRecency && f == recencyFeature
		free = append(free, r, r, r)
	}
	beta := nonNegativeQuadratic(a, b, free)
	var w NotabilityWeights
	for f := 0; f < numFeatures; f++ {
		round := func(x float64) float64 { return math.Round(x*100) / 100 }
		*weightField(&w, f) = SignalWeights{Rank: round(beta[1+3*f]), Top: round(beta[2+3*f]), Bottom: round(beta[3+3*f])}
	}
	return w
}

// nonNegativeQuadratic minimises x'ax/2 - b'x over x with x[i] >= 0 for
// every i not free, by cyclic coordinate descent: each
// coordinate in turn goes to its best value given the others, clipped at 0.
// a is symmetric positive definite, so this converges; a fixed number of
// sweeps keeps the test deterministic and quick.
func nonNegativeQuadratic(a [][]float64, b []float64, free []bool) []float64 {
	x := make([]float64, len(b))
	for sweep := 0; sweep < 2000; sweep++ {
		for i := range x {
			s := b[i]
			for j := range x {
				if j != i {
					s -= a[i][j] * x[j]
				}
			}
			x[i] = s / a[i][i]
			if !free[i] {
				x[i] = max(x[i], 0)
			}
		}
	}
	return x
}

// recencyFeature is the index of the release-year signal in features.
const recencyFeature = 7

// goWeights writes w as the Go literal DefaultNotabilityWeights returns.
func goWeights(w NotabilityWeights) string {
	names := []string{"Text", "Cast", "CastFame", "CastStar", "Image", "Page", "Genres", "Recency", "Sequels", "CastKnown", "Mentions", "CastRank"}
	var sb strings.Builder
	for f, name := range names {
		x := *weightField(&w, f)
		fmt.Fprintf(&sb, "\t%-10s SignalWeights{Rank: %.2f, Top: %.2f, Bottom: %.2f},\n", name+":", x.Rank, x.Top, x.Bottom)
	}
	return sb.String()
}

// weightField returns the weights of the f-th signal of w, in the order of
// features.
func weightField(w *NotabilityWeights, f int) *SignalWeights {
	return []*SignalWeights{&w.Text, &w.Cast, &w.CastFame, &w.CastStar, &w.Image, &w.Page, &w.Genres, &w.Recency, &w.Sequels, &w.CastKnown, &w.Mentions, &w.CastRank}[f]
}

// spearman returns the Spearman rank correlation of xs and ys: Pearson's
// correlation of their ranks, ties sharing their mean rank.
func spearman(xs, ys []float64) float64 {
	return pearson(rankNormalise(xs), rankNormalise(ys))
}

func pearson(xs, ys []float64) float64 {
	n := float64(len(xs))
	if n < 2 {
		return 0
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx /= n
	my /= n
	var sxy, sxx, syy float64
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}

func TestSpearman(t *testing.T) {
	tests := []struct {
		name   string
		xs, ys []float64
		want   float64
	}{
		{"same order", []float64{1, 2, 3, 4}, []float64{10, 20, 30, 400}, 1},
		{"reversed", []float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}, -1},
		{"constant", []float64{1, 1, 1}, []float64{1, 2, 3}, 0},
		{"ties", []float64{1, 1, 2}, []float64{1, 2, 3}, math.Sqrt(3) / 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := spearman(tt.xs, tt.ys); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("spearman(%v, %v) = %v, want %v", tt.xs, tt.ys, got, tt.want)
			}
		})
	}
}
