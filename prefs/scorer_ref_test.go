package prefs

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// The scorer's fast path (a taste folded into one vector, the catalog's
// vectors in one matrix, word matches from the catalog's index, vector
// instructions, only the best-scored titles explained, the largest reasons
// kept as they come) is checked against the definition, computed here the
// plain way on random titles and preferences.

// refVocabulary and refNames are what random titles and concepts are made
// of; plot words repeat often enough that concepts match titles' text.
var (
	refVocabulary = strings.Fields(`heist vault crew casino robbery detective murder ghost haunted house
		family farm sisters war soldier pilot ship ocean pirate treasure island space alien robot planet
		love wedding comedy singer band music town sheriff outlaw horse desert train boxing champion
		school teacher student vampire zombie doctor hospital lawyer trial court spy agent secret
		dinosaur jungle king queen castle dragon wizard journey road trip night city dream`)
	refGenres = []string{"Crime", "Horror", "Drama", "Comedy", "Western", "Science Fiction", "Romance", "War", "Musical", "Thriller"}
	refNames  = []string{"Ann Lee", "Bo Diaz", "Cy Park", "Di Moss", "Ed Kane", "Flo Reyes", "Gus Hart",
		"Hal Ford", "Ida West", "Jo Nash", "Kit Vance", "Lou Grant"}
)

// refFiller are words no concept names, most of a title's text, so that
// some titles match no concept and have no reasons.
var refFiller = func() []string {
	var out []string
	for _, a := range "bdgkmprtz" {
		for _, b := range "aeiou" {
			for _, c := range "lnx" {
				out = append(out, string([]rune{a, b, c, 'o'}))
			}
		}
	}
	return out
}()

// randomTitles returns n titles of random genres, words and cast.
func randomTitles(r *rand.Rand, prefix string, n int) []memento.Title {
	pick := func(list []string, k int) []string {
		out := make([]string, k)
		for i := range out {
			out[i] = list[r.IntN(len(list))]
		}
		return out
	}
	text := func(k int) string {
		w := pick(refFiller, k)
		for i := range w {
			if r.IntN(8) == 0 {
				w[i] = refVocabulary[r.IntN(len(refVocabulary))]
			}
		}
		return strings.Join(w, " ")
	}
	out := make([]memento.Title, n)
	for i := range out {
		out[i] = memento.Title{
			ID:       fmt.Sprintf("%s%d", prefix, i),
			Title:    text(1 + r.IntN(2)),
			Genres:   pick(refGenres, r.IntN(2)),
			Overview: text(8+r.IntN(20)) + ".",
			Cast:     pick(refNames, r.IntN(3)),
		}
	}
	return out
}

// randomConcepts returns about n concepts of random signs and strengths:
// words, genres, names, and word pairs taken from titles' overviews (so
// that some two-word concepts are found in titles' text).
func randomConcepts(r *rand.Rand, n int, titles []memento.Title) []memento.Concept {
	seen := map[string]bool{}
	var out []memento.Concept
	for tries := 0; len(out) < n && tries < 20*n; tries++ {
		var c string
		switch r.IntN(4) {
		case 0:
			c = refVocabulary[r.IntN(len(refVocabulary))]
		case 1:
			c = strings.ToLower(refGenres[r.IntN(len(refGenres))])
		case 2:
			c = strings.ToLower(refNames[r.IntN(len(refNames))])
		default:
			w := strings.Fields(strings.TrimSuffix(titles[r.IntN(len(titles))].Overview, "."))
			k := r.IntN(len(w) - 1)
			c = w[k] + " " + w[k+1]
		}
		if seen[c] {
			continue
		}
		seen[c] = true
		sign := 1
		if r.IntN(3) == 0 {
			sign = -1
		}
		out = append(out, memento.Concept{Concept: c, Sign: sign, Strength: 0.2 + 0.8*r.Float64(), Kind: memento.KindTaste})
	}
	return out
}

// refSignal is the reference's score and reasons of one title; ambiguous
// marks reasons that rounding could change (a similarity within a hair of
// the threshold, or two contributions within a hair of each other at the
// cut), which the comparison leaves out.
type refSignal struct {
	score     float64
	why       []string
	ambiguous bool
}

// refScores scores titles by the definition: for each title, the sum over
// the live preferences of weight × cosine (in float64), plus the lexical
// bonus of each concept whose words the title's text contains (found by
// reading the text), times Weight over the norm of the weights when above
// 1; the reasons are the concepts at least WhySimilarity similar or named
// in the text, sorted in full by the size of their contribution.
func refScores(tb testing.TB, sc *Scorer, ref *TitleSpace, s memento.Scope, titles []memento.Title) []refSignal {
	tb.Helper()
	ctx := context.Background()
	live, err := sc.Prefs.Live(ctx, s)
	if err != nil {
		tb.Fatalf("Live: %v", err)
	}
	live = slices.DeleteFunc(live, func(p memento.Preference) bool { return p.Embedder != ref.EmbedderID() || p.EffectiveWeight == 0 })
	concepts := make([][]float32, len(live))
	var norm float64
	for i, p := range live {
		if concepts[i], err = ref.Concept(ctx, p.Vector); err != nil {
			tb.Fatalf("Concept: %v", err)
		}
		norm += p.EffectiveWeight * p.EffectiveWeight
	}
	factor := cmp.Or(sc.Weight, 1) / math.Max(1, math.Sqrt(norm))
	lexical := cmp.Or(sc.LexicalWeight, DefaultLexicalWeight)
	minSim := float64(float32(cmp.Or(sc.WhySimilarity, DefaultWhySimilarity)))
	vectors, err := ref.Vectors(ctx, titles)
	if err != nil {
		tb.Fatalf("Vectors: %v", err)
	}
	const hair = 1e-5
	out := make([]refSignal, len(titles))
	for i, title := range titles {
		text := words(TitleText(title))
		type reason struct {
			concept, text string
			contrib       float64
		}
		var rs []reason
		var sum float64
		for p, pref := range live {
			var sim float64
			if len(concepts[p]) == len(vectors[i]) {
				for d := range concepts[p] {
					sim += float64(concepts[p][d]) * float64(vectors[i][d])
				}
			}
			w := pref.EffectiveWeight
			sum += w * sim
			hit := containsRun(text, conceptWords(pref.Concept))
			if hit {
				sum += lexical * w
			}
			if !hit && math.Abs(sim-minSim) < hair {
				out[i].ambiguous = true
			}
			// A concept of several words is a reason only where the
			// title's text names it.
			if !hit && (sim < minSim || len(strings.Fields(pref.Concept)) > 1) {
				continue
			}
			c := sim
			if hit {
				c += lexical
			}
			verb := "you like "
			if w < 0 {
				verb = "you dislike "
			}
			rs = append(rs, reason{pref.Concept, verb + pref.Concept, w * c})
		}
		slices.SortFunc(rs, func(a, b reason) int {
			return cmp.Or(cmp.Compare(math.Abs(b.contrib), math.Abs(a.contrib)), cmp.Compare(a.concept, b.concept))
		})
		for k := 1; k < len(rs) && k <= maxWhy; k++ {
			if math.Abs(math.Abs(rs[k-1].contrib)-math.Abs(rs[k].contrib)) < hair {
				out[i].ambiguous = true
			}
		}
		for _, r := range rs[:min(len(rs), maxWhy)] {
			out[i].why = append(out[i].why, r.text)
		}
		out[i].score = factor * sum
	}
	return out
}

// checkAgainstReference compares the scorer's signals with the
// reference's: the same scores within a tolerance, the same order (a title
// ranked above another never scores below it in the reference by more
// than the tolerance), and the same reasons for the titles that must be
// explained (all of them with explainAll, otherwise the top best-scored in
// the reference) and none for the others. It returns how many titles'
// reasons were compared.
func checkAgainstReference(t *testing.T, got []agent.Signal, want []refSignal, explainAll bool, top int) int {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d signals, want %d", len(got), len(want))
	}
	tol := func(x float64) float64 { return 1e-4 * math.Max(1, math.Abs(x)) }
	for i := range got {
		if d := math.Abs(got[i].Score - want[i].score); d > tol(want[i].score) {
			t.Errorf("title %d scores %.7f, reference %.7f", i, got[i].Score, want[i].score)
		}
	}
	order := make([]int, len(got))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(got[b].Score, got[a].Score) })
	for k := 1; k < len(order); k++ {
		a, b := order[k-1], order[k]
		if want[a].score < want[b].score-2*tol(want[b].score) {
			t.Errorf("title %d ranks above %d, but the reference scores them %.7f and %.7f", a, b, want[a].score, want[b].score)
		}
	}
	// Which titles the reference explains; a title that scores within the
	// tolerance of the last explained one or the first left out could go
	// either way.
	explain := make([]bool, len(want))
	uncertain := func(int) bool { return false }
	if explainAll || len(want) <= top {
		for i := range explain {
			explain[i] = true
		}
	} else {
		byRef := slices.Clone(order)
		slices.SortStableFunc(byRef, func(a, b int) int { return cmp.Compare(want[b].score, want[a].score) })
		for _, i := range byRef[:top] {
			explain[i] = true
		}
		last, next := want[byRef[top-1]].score, want[byRef[top]].score
		uncertain = func(i int) bool {
			x := want[i].score
			return math.Abs(x-last) < 2*tol(last) || math.Abs(x-next) < 2*tol(next)
		}
	}
	compared := 0
	for i := range got {
		if uncertain(i) || explain[i] && want[i].ambiguous {
			continue
		}
		var wantWhy []string
		if explain[i] {
			wantWhy = want[i].why
			compared++
		}
		if !slices.Equal(got[i].Why, wantWhy) {
			t.Errorf("title %d (score %.5f, explained %v) has reasons %q, reference %q", i, got[i].Score, explain[i], got[i].Why, wantWhy)
		}
	}
	return compared
}

func TestScorerMatchesReference(t *testing.T) {
	// The user with few preferences gets every title explained, the one
	// with many only the best (explainAllPairs lies between).
	nTitles, fewPrefs, manyPrefs := 3000, 60, 400
	if raceEnabled || testing.Short() {
		nTitles, fewPrefs, manyPrefs = 1200, 40, 250
	}
	ctx := context.Background()
	r := rand.New(rand.NewPCG(7, 11))
	catalog := randomTitles(r, "c", nTitles)
	ts := NewTitleSpace(offline.NewEmbedder(0), catalog)
	if err := ts.Warm(ctx); err != nil {
		t.Fatalf("Warm: %v", err)
	}
	if ts.termIdx == nil {
		t.Fatal("Warm left the catalog's words to the first ranking")
	}
	// The reference reads its title vectors from a space that is never
	// warmed, one vector per title.
	ref := NewTitleSpace(offline.NewEmbedder(0), catalog)

	db := sqlitetest.Open(t)
	now := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	svc := &Service{Store: db, Messages: db, Model: offline.New(offline.Options{}), Embedder: ts.embedder, Clock: fixedClock(now)}
	few, many := memento.Scope{User: "few"}, memento.Scope{User: "many"}
	for _, u := range []struct {
		s memento.Scope
		n int
	}{{few, fewPrefs}, {many, manyPrefs}} {
		// Two rounds, the second reinforcing or contradicting some of the
		// first, give weights of all sizes.
		for round := range 2 {
			if _, err := svc.Learn(ctx, u.s, fmt.Sprint("src", round), now, randomConcepts(r, u.n/(1+round), catalog)); err != nil {
				t.Fatalf("Learn: %v", err)
			}
		}
	}
	sc := &Scorer{Prefs: svc, Titles: ts}
	ac := memento.NewActiveContext()
	top := max(DefaultExplainTop, 4*ac.Count)

	// Candidates that are not the whole catalog: a shuffled sample, a
	// repeated title and titles outside the catalog.
	sample := slices.Clone(catalog[:nTitles/3])
	r.Shuffle(len(sample), func(i, j int) { sample[i], sample[j] = sample[j], sample[i] })
	sample = append(sample, catalog[5])
	sample = append(sample, randomTitles(r, "outside", 50)...)

	cases := []struct {
		name    string
		s       memento.Scope
		titles  []memento.Title
		weight  float64
		lexical float64
		whySim  float64
		// needs is the way of explaining the case is for: "all" titles,
		// only the "best", or "" for whichever the sizes give.
		needs string
	}{
		{"whole catalog, few preferences", few, catalog, 0, 0, 0, "all"},
		{"whole catalog, many preferences", many, catalog, 0, 0, 0, "best"},
		{"sample and outside titles, few preferences", few, sample, 2, 0.4, 0.1, ""},
		{"sample and outside titles, many preferences", many, sample, 0.5, 0, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc.Weight, sc.LexicalWeight, sc.WhySimilarity = c.weight, c.lexical, c.whySim
			live, err := svc.Live(ctx, c.s)
			if err != nil {
				t.Fatalf("Live: %v", err)
			}
			explainAll := len(c.titles)*len(live) <= explainAllPairs
			if c.needs != "" && explainAll != (c.needs == "all") {
				t.Fatalf("%d titles × %d preferences: explaining all is %v, the case is for %q", len(c.titles), len(live), explainAll, c.needs)
			}
			got, err := sc.Score(ctx, c.s, ac, c.titles)
			if err != nil {
				t.Fatalf("Score: %v", err)
			}
			want := refScores(t, sc, ref, c.s, c.titles)
			compared := checkAgainstReference(t, got, want, explainAll, top)
			withWhy, hits := 0, 0
			for i := range want {
				if len(want[i].why) > 0 {
					withWhy++
				}
				if got[i].Why != nil {
					hits++
				}
			}
			t.Logf("%d titles, %d preferences: %d with reasons in the reference, %d explained, %d compared", len(c.titles), len(live), withWhy, hits, compared)
			// The comparison must have had something to compare.
			enough := len(c.titles) * 9 / 10
			if !explainAll {
				enough = min(top, len(c.titles)) * 3 / 4
			}
			if compared < enough {
				t.Errorf("compared the reasons of only %d titles, want at least %d", compared, enough)
			}
			if withWhy == 0 {
				t.Errorf("no title has reasons: the data tests nothing")
			}
		})
	}
}
