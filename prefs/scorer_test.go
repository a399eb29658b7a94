package prefs

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// The embedded catalog and its title space are built once per test binary:
// embedding 36,000 titles takes a few seconds.
var (
	spaceOnce   sync.Once
	spaceTitles []memento.Title
	space       *TitleSpace
	spaceErr    error
)

// embeddedSpace returns the embedded catalog's titles and their warmed
// title space under the default offline embedder. Under the race detector
// or -short (embedding the catalog takes seconds, many times more under the
// race detector) it keeps every heist film, every horror film and an even
// sample of the rest.
func embeddedSpace(tb testing.TB) ([]memento.Title, *TitleSpace) {
	tb.Helper()
	spaceOnce.Do(func() {
		idx, err := catalog.Embedded()
		if err != nil {
			spaceErr = err
			return
		}
		all := idx.All()
		// The whitening statistics always come from the whole catalog.
		space = NewTitleSpace(offline.NewEmbedder(0), all)
		if !raceEnabled && !testing.Short() {
			spaceTitles = all
			spaceErr = space.Warm(context.Background())
			return
		}
		for i, t := range all {
			if i%40 == 0 || isHeist(t) || isHorror(t) {
				spaceTitles = append(spaceTitles, t)
			}
		}
		_, spaceErr = space.Vectors(context.Background(), spaceTitles)
	})
	if spaceErr != nil {
		tb.Fatalf("embedded catalog: %v", spaceErr)
	}
	return spaceTitles, space
}

func isHeist(t memento.Title) bool {
	return strings.Contains(strings.ToLower(t.Title+" "+t.Overview), "heist")
}

func isHorror(t memento.Title) bool {
	return slices.Contains(t.Genres, "Horror")
}

// fixedClock always tells the same time.
type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }

// scorerFor returns a scorer over a fresh store where user "ann" said
// messages, in order.
func scorerFor(tb testing.TB, ts *TitleSpace, messages ...string) *Scorer {
	tb.Helper()
	db := sqlitetest.Open(tb)
	now := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	svc := &Service{Store: db, Messages: db, Model: offline.New(offline.Options{}), Embedder: ts.embedder, Clock: fixedClock(now)}
	for i, m := range messages {
		if _, err := svc.LearnMessage(context.Background(), memento.Scope{User: "ann"},
			memento.Message{ID: fmt.Sprint("m", i), Role: memento.RoleUser, Text: m, At: now}); err != nil {
			tb.Fatalf("LearnMessage: %v", err)
		}
	}
	return &Scorer{Prefs: svc, Titles: ts}
}

// TestRankingLikesHeistDislikesHorror ranks the whole embedded catalog for
// a user who likes heist films and dislikes horror, as an unfiltered
// request would: heist films come first, no horror reaches the top ten,
// and the reasons name the concepts.
func TestRankingLikesHeistDislikesHorror(t *testing.T) {
	titles, ts := embeddedSpace(t)
	sc := scorerFor(t, ts, "I love heist films.", "I can't stand horror movies.")
	ctx := context.Background()
	ranked, err := agent.Rank(ctx, memento.Scope{User: "ann"}, memento.NewActiveContext(), titles, []agent.Scorer{sc})
	if err != nil {
		t.Fatalf("Rank: %v", err)
	}
	top := ranked[:10]
	heists := 0
	for i, r := range top {
		t.Logf("%2d. %s %v %.3f %v", i+1, r.Title.Title, r.Title.Genres, r.Score, r.Why)
		if isHeist(r.Title) {
			heists++
		}
		if isHorror(r.Title) {
			t.Errorf("horror title %s (%v) is number %d", r.Title.Title, r.Title.Genres, i+1)
		}
		if !slices.Contains(r.Why, "you like heist") {
			t.Errorf("number %d, %s, has reasons %v; want \"you like heist\"", i+1, r.Title.Title, r.Why)
		}
	}
	for i, r := range top[:5] {
		if !isHeist(r.Title) {
			t.Errorf("number %d, %s, is not a heist film", i+1, r.Title.Title)
		}
	}
	if heists < 8 {
		t.Errorf("%d heist films in the top ten, want at least 8", heists)
	}
	// Horror sinks, and says why.
	var horror []agent.Ranked
	for _, r := range ranked {
		if isHorror(r.Title) {
			horror = append(horror, r)
		}
	}
	down := 0
	for _, r := range horror {
		if r.Score < 0 && slices.Contains(r.Why, "you dislike horror") {
			down++
		}
	}
	if down < len(horror)*3/4 {
		t.Errorf("only %d of %d horror titles scored below zero with \"you dislike horror\"", down, len(horror))
	}
}

// TestRankingLikesAnActor ranks the whole catalog for a fan of Tom Hanks:
// a name is matched in the cast, which embeddings alone do poorly.
func TestRankingLikesAnActor(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("needs the whole catalog")
	}
	titles, ts := embeddedSpace(t)
	sc := scorerFor(t, ts, "I love Tom Hanks.")
	ranked, err := agent.Rank(context.Background(), memento.Scope{User: "ann"}, memento.NewActiveContext(), titles, []agent.Scorer{sc})
	if err != nil {
		t.Fatalf("Rank: %v", err)
	}
	for i, r := range ranked[:10] {
		if !slices.Contains(r.Title.Cast[:min(len(r.Title.Cast), MaxTitleCast)], "Tom Hanks") || !slices.Equal(r.Why, []string{"you like tom hanks"}) {
			t.Errorf("number %d is %s with %v, reasons %q; want a Tom Hanks film and \"you like tom hanks\"", i+1, r.Title.Title, r.Title.Cast, r.Why)
		}
	}
}

func TestScorerWithoutPreferences(t *testing.T) {
	ts := NewTitleSpace(offline.NewEmbedder(64), nil)
	sc := scorerFor(t, ts, "Sounds good, thanks!")
	cands := []memento.Title{{ID: "a", Title: "A"}, {ID: "b", Title: "B"}}
	sigs, err := sc.Score(context.Background(), memento.Scope{User: "ann"}, memento.NewActiveContext(), cands)
	if err != nil {
		t.Fatalf("Score: %v", err)
	}
	if len(sigs) != 2 || sigs[0].Score != 0 || sigs[1].Score != 0 || sigs[0].Why != nil || ts.Len() != 0 {
		t.Errorf("signals %+v, %d titles embedded; want zero scores and no embedding", sigs, ts.Len())
	}
	if sigs, err := sc.Score(context.Background(), memento.Scope{User: "ann"}, memento.NewActiveContext(), nil); err != nil || len(sigs) != 0 {
		t.Errorf("no candidates: %v, %v", sigs, err)
	}
}

// TestScorerSmallCatalog checks scores and reasons on a few titles, without
// whitening statistics (an empty catalog) and with a title outside the
// catalog embedded on first sight.
func TestScorerSmallCatalog(t *testing.T) {
	cands := []memento.Title{
		{ID: "heist", Title: "The Job", Genres: []string{"Crime"}, Overview: "A crew plans a heist of a casino vault."},
		{ID: "scary", Title: "Night House", Genres: []string{"Horror"}, Overview: "A haunted house terrifies a family."},
		{ID: "other", Title: "Meadow", Genres: []string{"Drama"}, Overview: "Two sisters run a farm."},
	}
	ts := NewTitleSpace(offline.NewEmbedder(0), nil)
	sc := scorerFor(t, ts, "I love heist films and I hate horror.")
	sigs, err := sc.Score(context.Background(), memento.Scope{User: "ann"}, memento.NewActiveContext(), cands)
	if err != nil {
		t.Fatalf("Score: %v", err)
	}
	if !(sigs[0].Score > 0.2 && sigs[2].Score < sigs[0].Score && sigs[1].Score < -0.2) {
		t.Errorf("scores heist %.3f, horror %.3f, other %.3f; want heist high, horror below zero", sigs[0].Score, sigs[1].Score, sigs[2].Score)
	}
	if !slices.Equal(sigs[0].Why, []string{"you like heist"}) || !slices.Equal(sigs[1].Why, []string{"you dislike horror"}) || sigs[2].Why != nil {
		t.Errorf("reasons %q, %q, %q", sigs[0].Why, sigs[1].Why, sigs[2].Why)
	}
	if ts.Len() != 3 {
		t.Errorf("%d titles cached, want 3", ts.Len())
	}
	sc.Weight = 2
	again, _ := sc.Score(context.Background(), memento.Scope{User: "ann"}, memento.NewActiveContext(), cands)
	if d := again[0].Score - 2*sigs[0].Score; d > 1e-9 || d < -1e-9 {
		t.Errorf("Weight 2 gives %v, want twice %v", again[0].Score, sigs[0].Score)
	}
	// The cached taste follows changes to the preferences.
	if _, err := sc.Prefs.LearnMessage(context.Background(), memento.Scope{User: "ann"},
		memento.Message{ID: "later", Role: memento.RoleUser, Text: "Actually I love horror now.", At: time.Time(sc.Prefs.Clock.(fixedClock))}); err != nil {
		t.Fatalf("LearnMessage: %v", err)
	}
	again, _ = sc.Score(context.Background(), memento.Scope{User: "ann"}, memento.NewActiveContext(), cands)
	if again[1].Score <= 0 || !slices.Equal(again[1].Why, []string{"you like horror"}) {
		t.Errorf("after \"I love horror now\": horror scores %v %q", again[1].Score, again[1].Why)
	}
}

// TestScorerExplainsTheBest checks that with many candidates and
// preferences only the best-scored get reasons.
func TestScorerExplainsTheBest(t *testing.T) {
	sigs := make([]agent.Signal, 1000)
	for i := range sigs {
		sigs[i].Score = float64((i * 7919) % 1000)
	}
	sc := &Scorer{}
	got := sc.toExplain(sigs, 500, 10)
	slices.Sort(got)
	var want []int
	for i := range sigs {
		if sigs[i].Score >= 990 {
			want = append(want, i)
		}
	}
	slices.Sort(want)
	if !slices.Equal(want, got) {
		t.Errorf("explained %v, want %v", got, want)
	}
	if got := sc.toExplain(sigs[:10], 5, 3); len(got) != 10 {
		t.Errorf("few candidates: explained %d of 10", len(got))
	}
}

// BenchmarkRankCatalog ranks the whole embedded catalog (36,000 titles) for
// a user with 500 preferences through agent.Rank, reading the preferences
// from the store each time as a turn does, and reports the 99th percentile.
func BenchmarkRankCatalog(b *testing.B) {
	titles, ts := embeddedSpace(b)
	db := sqlitetest.Open(b)
	now := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	svc := &Service{Store: db, Messages: db, Model: offline.New(offline.Options{}), Embedder: ts.embedder, Clock: fixedClock(now)}
	s := memento.Scope{User: "ann"}
	if _, err := svc.Learn(context.Background(), s, "bench", now, benchConcepts(500, titles)); err != nil {
		b.Fatalf("Learn: %v", err)
	}
	live, _ := svc.Live(context.Background(), s)
	sc := &Scorer{Prefs: svc, Titles: ts}
	ctx := context.Background()
	// The first ranking folds the user's taste and indexes the catalog's
	// words; later ones reuse both until the preferences change.
	if _, err := sc.Score(ctx, s, memento.NewActiveContext(), titles); err != nil {
		b.Fatalf("Score: %v", err)
	}
	var took []time.Duration
	cpu0 := cpuTime()
	for b.Loop() {
		start := time.Now()
		if _, err := agent.Rank(ctx, s, memento.NewActiveContext(), titles, []agent.Scorer{sc}); err != nil {
			b.Fatalf("Rank: %v", err)
		}
		took = append(took, time.Since(start))
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(len(took)), "cpu-ms/op")
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(len(live)), "prefs")
	b.ReportMetric(float64(len(titles)), "titles")
}

// BenchmarkScore is the scorer alone over the whole catalog with 500
// preferences, without agent.Rank's sorting, and reports the median and
// the 99th percentile.
func BenchmarkScore(b *testing.B) {
	titles, ts := embeddedSpace(b)
	db := sqlitetest.Open(b)
	now := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	svc := &Service{Store: db, Messages: db, Model: offline.New(offline.Options{}), Embedder: ts.embedder, Clock: fixedClock(now)}
	s := memento.Scope{User: "ann"}
	if _, err := svc.Learn(context.Background(), s, "bench", now, benchConcepts(500, titles)); err != nil {
		b.Fatalf("Learn: %v", err)
	}
	sc := &Scorer{Prefs: svc, Titles: ts}
	ctx := context.Background()
	if _, err := sc.Score(ctx, s, memento.NewActiveContext(), titles); err != nil {
		b.Fatalf("Score: %v", err)
	}
	var took []time.Duration
	cpu0 := cpuTime()
	for b.Loop() {
		start := time.Now()
		if _, err := sc.Score(ctx, s, memento.NewActiveContext(), titles); err != nil {
			b.Fatalf("Score: %v", err)
		}
		took = append(took, time.Since(start))
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(len(took)), "cpu-ms/op")
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
}

// benchConcepts returns n distinct concepts of mixed signs and strengths,
// as a long-time user accumulates them: plot words and genres, then the
// people of every 37th title.
func benchConcepts(n int, titles []memento.Title) []memento.Concept {
	words := []string{"heist", "horror", "western", "musical", "space opera", "courtroom drama", "slasher",
		"romantic comedy", "war", "spy", "noir", "documentary", "animated", "superhero", "martial arts",
		"time travel", "zombies", "vampires", "road trip", "coming of age", "boxing", "baseball", "submarine",
		"pirates", "dinosaurs", "aliens", "robots", "haunted house", "serial killer", "small town"}
	seen := map[string]bool{}
	for i := 0; len(words) < n && i < len(titles); i += 37 {
		for _, p := range titles[i].Cast {
			if c := strings.ToLower(p); !seen[c] {
				seen[c] = true
				words = append(words, c)
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	var out []memento.Concept
	for _, w := range words[:min(n, len(words))] {
		sign := 1
		if r.IntN(3) == 0 {
			sign = -1
		}
		out = append(out, memento.Concept{Concept: w, Sign: sign, Strength: 0.3 + 0.7*r.Float64(), Kind: memento.KindTaste})
	}
	return out
}

// BenchmarkTasteRefold folds a user's taste again, as a turn does after
// the background changed the user's preferences (under `memento torture
// load` nearly every turn): the preferences read from the store, their
// concept vectors and the table of the catalog titles whose words each
// names. It reports the median and the processor time.
func BenchmarkTasteRefold(b *testing.B) {
	titles, ts := embeddedSpace(b)
	for _, n := range []int{8, 500} {
		b.Run(fmt.Sprintf("prefs=%d", n), func(b *testing.B) {
			db := sqlitetest.Open(b)
			now := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
			svc := &Service{Store: db, Messages: db, Model: offline.New(offline.Options{}), Embedder: ts.embedder, Clock: fixedClock(now)}
			s := memento.Scope{User: "ann"}
			if _, err := svc.Learn(context.Background(), s, "bench", now, benchConcepts(n, titles)); err != nil {
				b.Fatalf("Learn: %v", err)
			}
			sc := &Scorer{Prefs: svc, Titles: ts}
			ctx := context.Background()
			if _, err := sc.tasteOf(ctx, s); err != nil {
				b.Fatalf("tasteOf: %v", err)
			}
			var took []time.Duration
			cpu0 := cpuTime()
			for b.Loop() {
				sc.mu.Lock()
				sc.cache = nil
				sc.mu.Unlock()
				start := time.Now()
				u, err := sc.tasteOf(ctx, s)
				if err != nil || u == nil {
					b.Fatalf("tasteOf: %v, %v", u, err)
				}
				took = append(took, time.Since(start))
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(len(took)), "cpu-ms/op")
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
		})
	}
}

// TestScorerForgetsADeletedUser checks that a user deleted and created
// again, up to the deleted user's preference version, is ranked by the
// new preferences, not by the taste kept for the deleted user.
func TestScorerForgetsADeletedUser(t *testing.T) {
	ctx := context.Background()
	cands := []memento.Title{
		{ID: "heist", Title: "The Job", Genres: []string{"Crime"}, Overview: "A crew plans a heist of a casino vault."},
		{ID: "other", Title: "Meadow", Genres: []string{"Drama"}, Overview: "Two sisters run a farm."},
	}
	sc := scorerFor(t, NewTitleSpace(offline.NewEmbedder(0), nil), "I love heist films.")
	s := memento.Scope{User: "ann"}
	sigs, err := sc.Score(ctx, s, memento.NewActiveContext(), cands)
	if err != nil || sigs[0].Score <= 0 {
		t.Fatalf("heist for a user who loves heists scores %+v, %v; want above 0", sigs, err)
	}
	old, err := sc.Prefs.Store.PreferenceVersion(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Prefs.Store.(memento.UserService).DeleteUser(ctx, s); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Millisecond)
	if _, err := sc.Prefs.LearnMessage(ctx, s, memento.Message{ID: "again", Role: memento.RoleUser, Text: "I can't stand heist films.",
		At: time.Time(sc.Prefs.Clock.(fixedClock))}); err != nil {
		t.Fatal(err)
	}
	live, err := sc.Prefs.Live(ctx, s)
	if err != nil || len(live) != 1 {
		t.Fatalf("Live = %v, %v; want the new dislike", live, err)
	}
	for {
		v, err := sc.Prefs.Store.PreferenceVersion(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if v.Version >= old.Version {
			if v.Version != old.Version {
				t.Fatalf("version %d passed the deleted user's %d", v.Version, old.Version)
			}
			break
		}
		w := -0.5 - float64(v.Version)/100
		if _, err := sc.Prefs.Patch(ctx, s, live[0].ID, nil, &w); err != nil {
			t.Fatal(err)
		}
	}
	sigs, err = sc.Score(ctx, s, memento.NewActiveContext(), cands)
	if err != nil || sigs[0].Score >= 0 {
		t.Errorf("heist for the user created again, who can't stand heists, scores %+v, %v; want below 0", sigs, err)
	}
}
