package experiment

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

func genreIndex(t *testing.T, word string) int {
	t.Helper()
	for i, g := range simGenres {
		if g.word == word {
			return i
		}
	}
	t.Fatalf("no genre %q", word)
	return -1
}

// fakeCatalog has forty titles of every genre, a fifth of them with the
// next genre too, spread over 1940-2019, each starring one of eight
// actors.
func fakeCatalog() []SimTitle {
	var out []SimTitle
	for g, sg := range simGenres {
		for k := range 40 {
			genres := []string{sg.catalog}
			if k%5 == 0 {
				genres = append(genres, simGenres[(g+1)%len(simGenres)].catalog)
			}
			out = append(out, SimTitle{ID: fmt.Sprintf("%s-%d", sg.catalog, k), Genres: genres,
				Year: 1940 + (k*7)%80, Cast: []string{fmt.Sprintf("Actor %c", 'A'+k%8)}})
		}
	}
	return out
}

// tasteOf is a taste with the given liked and hated genres (weights at
// the top and bottom of their bands, the rest zero) and era 1980-1999.
func tasteOf(t *testing.T, liked, hated []string) *taste {
	t.Helper()
	tt := &taste{weight: make([]float64, len(simGenres)), eraFrom: 1980, eraTo: 1999}
	for _, w := range liked {
		g := genreIndex(t, w)
		tt.liked, tt.weight[g] = append(tt.liked, g), likedHigh
	}
	for _, w := range hated {
		g := genreIndex(t, w)
		tt.disliked, tt.weight[g] = append(tt.disliked, g), hatedLow
	}
	return tt
}

func TestStaleBeliefs(t *testing.T) {
	people := []string{"Tom Hanks", "Meryl Streep"}
	// The user liked comedy and hated horror, then turned: horror is now
	// liked, comedy disliked; they moved from Netflix to Hulu, and went
	// off Tom Hanks.
	now := tasteOf(t, []string{"horror", "westerns"}, []string{"comedy"})
	now.platform = slices.Index(simPlatforms, "Hulu")
	now.favs, now.hated = []int{1}, []int{0}
	for _, c := range []struct {
		values          []string
		stale, assessed int
	}{
		{[]string{"loves comedy and drama movies"}, 1, 1},           // comedy now disliked; drama untracked
		{[]string{"can't stand horror"}, 1, 1},                      // horror now liked
		{[]string{"doesn't like comedy anymore"}, 0, 1},             // current
		{[]string{"watches on Netflix; watches on Hulu now"}, 1, 2}, // a merged value: two beliefs
		{[]string{"used to hate horror"}, 0, 1},                     // the past, flipped: current
		{[]string{"has come around to horror"}, 0, 1},
		{[]string{"is a big fan of Tom Hanks and Meryl Streep"}, 1, 2}, // Tom Hanks now hated
		{[]string{"has grown tired of Tom Hanks"}, 0, 1},
		{[]string{"prefers short films"}, 0, 0}, // nothing tracked
	} {
		st, as := staleBeliefs(c.values, now, people)
		if st != c.stale || as != c.assessed {
			t.Errorf("%q: %d stale of %d, want %d of %d", c.values, st, as, c.stale, c.assessed)
		}
	}
}

func TestRate(t *testing.T) {
	cat := indexTitles([]SimTitle{
		{ID: "a", Genres: []string{"Comedy"}, Year: 1990},                                                         // liked genre, in era
		{ID: "b", Genres: []string{"Comedy"}, Year: 1940},                                                         // liked genre, long before the era
		{ID: "c", Genres: []string{"Comedy", "Horror"}, Year: 1990},                                               // a hated genre spoils it
		{ID: "d", Genres: []string{"Drama"}, Year: 1990, Cast: []string{"Meryl Streep"}},                          // no concern, but a favourite
		{ID: "e", Genres: []string{"Western"}, Year: 1990, Cast: []string{"Tom Hanks"}},                           // a hated person spoils it
		{ID: "f", Genres: []string{"Silent"}, Year: 1925},                                                         // nothing for them
		{ID: "g", Genres: []string{"Comedy"}, Year: 1990, Cast: []string{"Meryl Streep"}},                         // liked and a favourite
		{ID: "h", Genres: []string{"Drama"}, Year: 1990, Cast: []string{"x", "y", "z", "w", "v", "Meryl Streep"}}, // not billed
	}, []string{"Tom Hanks", "Meryl Streep"})
	tt := tasteOf(t, []string{"comedy"}, []string{"horror"})
	tt.weight[genreIndex(t, "comedy")] = 0.7
	tt.favs, tt.hated = []int{1}, []int{0}
	want := map[string]struct {
		grade int
		bad   bool
	}{"a": {2, false}, "b": {0, false}, "c": {0, true}, "d": {1, false}, "e": {0, true}, "f": {0, false}, "g": {3, false}, "h": {0, false}}
	for i := range cat.titles {
		ti := &cat.titles[i]
		g, bad := tt.rate(ti)
		if w := want[ti.id]; g != w.grade || bad != w.bad {
			t.Errorf("%s: grade %d disliked %v, want %d %v", ti.id, g, bad, w.grade, w.bad)
		}
	}
}

func TestScore(t *testing.T) {
	cat := indexTitles([]SimTitle{
		{ID: "best", Genres: []string{"Comedy"}, Year: 1990, Cast: []string{"Meryl Streep"}},
		{ID: "good", Genres: []string{"Comedy"}, Year: 1990},
		{ID: "meh", Genres: []string{"Comedy"}, Year: 1975},
		{ID: "hated", Genres: []string{"Horror"}, Year: 1990},
		{ID: "old", Genres: []string{"Drama"}, Year: 1925},
	}, []string{"Meryl Streep"})
	tt := tasteOf(t, []string{"comedy"}, []string{"horror"})
	tt.weight[genreIndex(t, "comedy")] = 0.7
	tt.favs = []int{0}
	ideal := cat.ideal(tt, simRequest{genre: -1, person: -1})
	if got := len(ideal); got != 3 || ideal[0].id != "best" || ideal[0].grade != 3 || ideal[2].grade != 1 {
		t.Fatalf("ideal = %+v; want best (3), good (2), meh (1)", ideal)
	}
	// The ideal holds only titles that meet the request.
	comedy := genreIndex(t, "comedy")
	for _, c := range []struct {
		r    simRequest
		want []string
	}{
		{simRequest{genre: comedy, person: -1, from: 1985, to: 1995}, []string{"best", "good"}},
		{simRequest{genre: -1, person: 0}, []string{"best"}},
		{simRequest{genre: genreIndex(t, "drama"), person: -1}, nil},
	} {
		var got []string
		for _, it := range cat.ideal(tt, c.r) {
			got = append(got, it.id)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("ideal for %+v = %v, want %v", c.r, got, c.want)
		}
	}
	titles := func(ids ...string) []SimTitle {
		out := make([]SimTitle, len(ids))
		for i, id := range ids {
			out[i] = SimTitle{ID: id}
		}
		return out
	}
	idcg := gain(3) + gain(2)/math.Log2(3) + gain(1)/2
	for _, c := range []struct {
		name    string
		list    []string
		seen    map[string]bool
		want    listScore
		wantDCG float64
	}{
		{"ideal order", []string{"best", "good", "meh"}, nil, listScore{hit: true, ideal: true, good: 2}, idcg},
		{"reversed", []string{"meh", "good", "best"}, nil, listScore{hit: true, ideal: true, good: 2}, gain(1) + gain(2)/math.Log2(3) + gain(3)/2},
		// Disliked and seen titles gain nothing and are counted.
		{"penalties", []string{"hated", "best", "old"}, map[string]bool{"best": true}, listScore{ideal: true, disliked: 1, seen: 1}, 0},
		{"nothing good", []string{"old", "meh"}, nil, listScore{ideal: true}, gain(1) / math.Log2(3)},
	} {
		got := cat.score(titles(c.list...), tt, c.seen, ideal, c.seen)
		wantIDCG := idcg
		if c.seen["best"] {
			wantIDCG = gain(2) + gain(1)/math.Log2(3)
		}
		c.want.ndcg = c.wantDCG / wantIDCG
		if math.Abs(got.ndcg-c.want.ndcg) > 1e-12 {
			t.Errorf("%s: ndcg %g, want %g", c.name, got.ndcg, c.want.ndcg)
		}
		got.ndcg, c.want.ndcg = 0, 0
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	// A request nothing in the catalog answers has no ideal: NDCG is
	// undefined, not zero.
	if s := cat.score(titles("old"), tt, nil, nil, nil); s.ideal {
		t.Errorf("no ideal: %+v", s)
	}
}

// The scripted users' stated taste always agrees with their latent one,
// every kind of change happens, and their requests follow their current
// taste and differ from session to session.
func TestScriptedUsers(t *testing.T) {
	var ev SimEvents
	people := pickPeople(fakeCatalog())
	if len(people) != 8 {
		t.Fatalf("people pool %v", people)
	}
	kinds := map[string]int{}
	texts := map[string]bool{}
	for i := range 60 {
		u := script(rand.New(rand.NewPCG(5, uint64(i))), 12, 0.6, people, &ev)
		if len(u.sessions) != 12 || len(u.sessions[0].talk) < 3 {
			t.Fatalf("sessions %d, first talk %q", len(u.sessions), u.sessions[0].talk)
		}
		for s, ss := range u.sessions {
			tt := ss.taste
			for g, w := range tt.weight {
				liked, hated := slices.Contains(tt.liked, g), slices.Contains(tt.disliked, g)
				if liked && hated || liked != (w >= likedLow) || hated != (w <= hatedHigh) {
					t.Fatalf("user %d session %d: %s weight %.2f, liked %v hated %v", i, s, simGenres[g].word, w, liked, hated)
				}
			}
			for _, p := range tt.favs {
				if slices.Contains(tt.hated, p) {
					t.Fatalf("%s both favourite and hated", people[p])
				}
			}
			r := ss.ask
			kinds[r.Kind]++
			texts[r.Text] = true
			if r.genre >= 0 && !slices.Contains(tt.liked, r.genre) {
				t.Errorf("user %d session %d asks for %s, not liked now", i, s, simGenres[r.genre].word)
			}
			if r.person >= 0 && !slices.Contains(tt.favs, r.person) {
				t.Errorf("user %d session %d asks for %s, not a favourite now", i, s, people[r.person])
			}
			if r.from != 0 && (r.from < tt.eraFrom || r.to > tt.eraTo) {
				t.Errorf("user %d session %d asks for %d-%d outside their era %d-%d", i, s, r.from, r.to, tt.eraFrom, tt.eraTo)
			}
		}
	}
	if ev.LikedToDisliked == 0 || ev.DislikedToLiked == 0 || ev.Platform == 0 || ev.Added == 0 || ev.PersonAdded == 0 || ev.PersonDropped == 0 {
		t.Errorf("some kinds of change never happened: %+v", ev)
	}
	for _, k := range []string{askOpen, askGenre, askGenreEra, askPerson, askEra} {
		if kinds[k] == 0 {
			t.Errorf("no %s request in %v", k, kinds)
		}
	}
	if len(texts) < 50 {
		t.Errorf("only %d different requests in 720 sessions", len(texts))
	}
}

func TestOrdinals(t *testing.T) {
	for _, c := range []struct {
		pos  []int
		want string
	}{
		{[]int{2}, "the second one"},
		{[]int{2, 5}, "the second and the fifth ones"},
		{[]int{1, 3, 10}, "the first, the third and the tenth ones"},
	} {
		if got := ordinals(c.pos); got != c.want {
			t.Errorf("ordinals(%v) = %q, want %q", c.pos, got, c.want)
		}
	}
}

// fakeAgent stands in for the agent, store and pipeline. It remembers
// what a user says they love and cannot stand (a semantic user keeps the
// latest word on each genre, an episodic one every statement), and answers
// a request with the matching titles of a liked genre first and those of
// a hated one last; a user it knows nothing of gets the catalog's order.
type fakeAgent struct {
	mu      sync.Mutex
	titles  []SimTitle
	modes   map[string]string
	said    map[string][]string          // user -> statements
	threads map[string]*fakeThread       // user/thread -> state
	asked   map[string]map[string]string // user -> thread -> the queries Context saw
	seen    map[string]map[string]bool   // user -> titles they said they had seen
}

type fakeThread struct {
	request string
	shown   map[string]bool
	last    []SimTitle
}

func newFakeAgent() *fakeAgent {
	return &fakeAgent{titles: fakeCatalog(), modes: map[string]string{}, said: map[string][]string{},
		threads: map[string]*fakeThread{}, asked: map[string]map[string]string{}, seen: map[string]map[string]bool{}}
}

// genreOf returns the genre a text names, or -1.
func genreOf(text string) int {
	text = strings.ToLower(text)
	for g, sg := range simGenres {
		if strings.Contains(text, sg.plural) || strings.Contains(text, sg.word) {
			return g
		}
	}
	return -1
}

// taste reads the user's statements, the newest deciding.
func (f *fakeAgent) taste(user string) (liked, hated map[string]bool) {
	liked, hated = map[string]bool{}, map[string]bool{}
	for _, s := range f.said[user] {
		for _, sg := range simGenres {
			if !strings.Contains(s, sg.word) {
				continue
			}
			neg := strings.Contains(s, "can't stand") || strings.Contains(s, "don't like")
			liked[sg.catalog], hated[sg.catalog] = !neg, neg
		}
	}
	return liked, hated
}

func (f *fakeAgent) deps() SimDeps {
	return SimDeps{
		Titles: f.titles,
		SetMode: func(_ context.Context, user, mode string) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.modes[user] = mode
			return nil
		},
		Turn: func(_ context.Context, _ Arm, user, thread, text string) ([]SimTitle, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			if !strings.HasPrefix(text, "Recommend") && !strings.Contains(text, "seen") && !strings.Contains(text, "those") && !strings.HasPrefix(text, "More") {
				s := strings.ToLower(text)
				if f.modes[user] == memento.ModeSemantic {
					// One value per genre: a new word replaces the old.
					g := genreOf(s)
					f.said[user] = slices.DeleteFunc(f.said[user], func(o string) bool { return g >= 0 && genreOf(o) == g })
				}
				f.said[user] = append(f.said[user], s)
				return nil, nil
			}
			key := user + "/" + thread
			th := f.threads[key]
			if th == nil || strings.HasPrefix(text, "Recommend") {
				th = &fakeThread{request: text, shown: map[string]bool{}}
				f.threads[key] = th
			}
			if strings.Contains(text, "seen") {
				// It remembers what the user has seen, in every thread.
				if f.seen[user] == nil {
					f.seen[user] = map[string]bool{}
				}
				for k, w := range ordinalWords[1:] {
					if strings.Contains(text, "the "+w) && k < len(th.last) {
						f.seen[user][th.last[k].ID] = true
					}
				}
			}
			want := genreOf(th.request)
			liked, hated := f.taste(user)
			var first, rest, last []SimTitle
			for _, ti := range f.titles {
				if th.shown[ti.ID] || f.seen[user][ti.ID] || (want >= 0 && !slices.Contains(ti.Genres, simGenres[want].catalog)) {
					continue
				}
				switch {
				case slices.ContainsFunc(ti.Genres, func(g string) bool { return hated[g] }):
					last = append(last, ti)
				case slices.ContainsFunc(ti.Genres, func(g string) bool { return liked[g] }):
					first = append(first, ti)
				default:
					rest = append(rest, ti)
				}
			}
			out := slices.Concat(first, rest, last)[:listSize]
			for _, ti := range out {
				th.shown[ti.ID] = true
			}
			th.last = out
			return out, nil
		},
		Wait: func(context.Context) error { return nil },
		Beliefs: func(_ context.Context, user string) ([]string, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			return slices.Clone(f.said[user]), nil
		},
		Context: func(_ context.Context, user, thread, query string, _ time.Time) (SimContext, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.asked[user] == nil {
				f.asked[user] = map[string]string{}
			}
			f.asked[user][thread] += query + "|"
			// The document: the request and what memory says of its genre.
			doc := query
			for _, s := range f.said[user] {
				if g := genreOf(query); g < 0 || genreOf(s) == g {
					doc += "\n" + s
				}
			}
			return SimContext{Tokens: memento.EstimateTokens(doc), Holds: map[string]int{"episode": len(f.said[user])}}, nil
		},
	}
}

func TestSimulate(t *testing.T) {
	f := newFakeAgent()
	arms, err := ParseArms("semantic,episodic,none")
	if err != nil {
		t.Fatal(err)
	}
	cfg := SimConfig{Users: 40, Sessions: 8, Arms: arms, Seed: 3, ChangeRate: 0.6}
	res, err := Simulate(context.Background(), cfg, f.deps())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Arms) != 3 || len(res.Arms[0].Sessions) != 8 || !res.Arms[2].Baseline || res.Arms[0].Baseline {
		t.Fatalf("result %+v", res)
	}
	sem, epi, none := res.Arms[0], res.Arms[1], res.Arms[2]
	// Episodic memory keeps every statement, so it holds more stale
	// beliefs and more tokens than the fake semantic memory, which keeps
	// one statement per genre.
	if epi.Final.StaleShare <= sem.Final.StaleShare || epi.Final.StoredTokens <= sem.Final.StoredTokens {
		t.Errorf("final: semantic %+v, episodic %+v", sem.Final, epi.Final)
	}
	if sem.Sessions[0].StaleShare != 0 || none.Final.Beliefs != 0 {
		t.Errorf("stale after session 1 %g; the baseline holds %g beliefs", sem.Sessions[0].StaleShare, none.Final.Beliefs)
	}
	// The measures can fail: the agent without memory ranks liked genres
	// no higher and hated ones no lower, so it scores worse on the
	// measures of quality, user by user. (What is seen again depends on
	// how often the fake repeats itself, in every arm.)
	var mem, base SimQuality
	for _, k := range sortedKeys(sem.ByRequest) {
		mem, base = sem.ByRequest[k], none.ByRequest[k]
		if k != askOpen {
			continue
		}
		if mem.NDCG <= base.NDCG+0.05 || mem.Good <= base.Good || mem.Disliked >= base.Disliked {
			t.Errorf("open requests: memory %+v, none %+v", mem, base)
		}
	}
	for _, p := range res.Paired {
		if p.Arm != "none" || p.Measure == "seen10" {
			continue
		}
		worse := p.CIHigh < 0
		if p.Measure == "disliked10" {
			worse = p.CILow > 0
		}
		if !worse {
			t.Errorf("the baseline is not told apart on %s: %+v", p.Measure, p)
		}
	}
	// The context is assembled once a session for the request the user
	// asks, in its thread, so its size follows what is asked and what
	// memory holds.
	asked := map[string]bool{}
	for i := range cfg.Users {
		u := scriptFor(cfg, i)
		for s, ss := range u.sessions {
			got := f.asked[fmt.Sprintf("sim-episodic-%d", i)][fmt.Sprintf("session-%d-ask", s+1)]
			if got != ss.ask.Text+"|" {
				t.Fatalf("user %d session %d: context assembled for %q, want %q", i, s+1, got, ss.ask.Text)
			}
			asked[got] = true
		}
	}
	if len(asked) < 20 {
		t.Errorf("only %d different requests", len(asked))
	}
	var tokens []float64
	for _, s := range epi.Sessions {
		tokens = append(tokens, s.ContextTokens)
	}
	if slices.Min(tokens) == slices.Max(tokens) || epi.Final.ContextHolds["episode"] == 0 {
		t.Errorf("context tokens per session %v, holds %v", tokens, epi.Final.ContextHolds)
	}
	// The same seed gives the same histories and figures.
	again, _ := Simulate(context.Background(), cfg, newFakeAgent().deps())
	if again.Changes != res.Changes || again.Arms[1].Final.NDCG != res.Arms[1].Final.NDCG {
		t.Errorf("seeded runs differ: %+v vs %+v", again.Changes, res.Changes)
	}
	var b bytes.Buffer
	if err := res.WriteText(&b); err != nil || !strings.Contains(b.String(), "Paired") || !strings.Contains(b.String(), "none (none, baseline)") {
		t.Errorf("text: %v %q", err, b.String())
	}
	files, err := PlotSimulation(res, t.TempDir())
	if err != nil || len(files) != 8 {
		t.Errorf("plots %v: %v", files, err)
	}
	if _, err := Simulate(context.Background(), SimConfig{Users: 0, Sessions: 1, Arms: arms}, f.deps()); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("0 users: err = %v", err)
	}
}

// A frozen arm hears the first session only, so its memory never learns
// a change; the clock is moved to each session's day.
func TestSimulateFrozenAndClock(t *testing.T) {
	f := newFakeAgent()
	arms, _ := ParseArms("episodic,episodic+frozen")
	clock := NewSimClock(time.Time{})
	d := f.deps()
	d.Clock = clock
	var days []time.Time
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg := SimConfig{Users: 20, Sessions: 6, Arms: arms, Seed: 9, ChangeRate: 1, Start: start,
		Progress: func(int, int, time.Duration) { days = append(days, clock.Now()) }}
	res, err := Simulate(context.Background(), cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	for s, day := range days {
		if want := start.Add(time.Duration(s) * 7 * 24 * time.Hour); day.Before(want) || day.After(want.Add(time.Hour)) {
			t.Errorf("session %d ran at %s, want %s", s+1, day, want)
		}
	}
	for i := range 20 {
		first := len(f.said[fmt.Sprintf("sim-episodic-frozen-%d", i)])
		if first != len(scriptFor(cfg, i).sessions[0].talk) {
			t.Errorf("frozen user %d said %d things", i, first)
		}
	}
	if fr, ep := res.Arms[1].Final, res.Arms[0].Final; fr.Beliefs >= ep.Beliefs {
		t.Errorf("frozen %+v, episodic %+v", fr, ep)
	}
}

// scriptFor is user i's history in a run of cfg.
func scriptFor(cfg SimConfig, i int) simUser {
	var ev SimEvents
	return script(rand.New(rand.NewPCG(cfg.Seed, uint64(i)+1)), cfg.Sessions, cfg.ChangeRate, pickPeople(fakeCatalog()), &ev)
}
