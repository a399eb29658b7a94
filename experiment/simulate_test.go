package experiment

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

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

func TestStaleBeliefs(t *testing.T) {
	comedy, horror, westerns := genreIndex(t, "comedy"), genreIndex(t, "horror"), genreIndex(t, "westerns")
	// The user liked comedy and hated horror, then turned: horror is now
	// liked, comedy disliked, and they moved from Netflix to Hulu.
	now := taste{liked: []int{horror, westerns}, disliked: []int{comedy}, platform: slices.Index(simPlatforms, "Hulu")}
	for _, c := range []struct {
		values          []string
		stale, assessed int
	}{
		{[]string{"loves comedy and drama movies"}, 1, 1},           // comedy now disliked; drama untracked
		{[]string{"can't stand horror"}, 1, 1},                      // horror now liked
		{[]string{"doesn't like comedy anymore"}, 0, 1},             // current
		{[]string{"watches on Netflix; watches on Hulu now"}, 1, 2}, // a merged value: two beliefs
		{[]string{"used to hate horror"}, 0, 1},                     // the past, flipped: current
		{[]string{"has started to love westerns"}, 0, 1},
		{[]string{"prefers short films"}, 0, 0}, // nothing tracked
	} {
		st, as := staleBeliefs(c.values, now)
		if st != c.stale || as != c.assessed {
			t.Errorf("%q: %d stale of %d, want %d of %d", c.values, st, as, c.stale, c.assessed)
		}
	}
}

func TestScoreTitles(t *testing.T) {
	tt := taste{liked: []int{genreIndex(t, "comedy")}, disliked: []int{genreIndex(t, "horror")}}
	titles := []SimTitle{{Genres: []string{"Drama"}}, {Genres: []string{"Comedy"}}, {Genres: []string{"Comedy", "Horror"}}}
	hit, ndcg := scoreTitles(titles, tt)
	var idcg float64
	for i := range 10 {
		idcg += 1 / math.Log2(float64(i+2))
	}
	// Only the second title counts (the third has a disliked genre).
	if want := (1 / math.Log2(3)) / idcg; !hit || math.Abs(ndcg-want) > 1e-12 {
		t.Errorf("hit %v, ndcg %g; want true, %g", hit, ndcg, want)
	}
	if hit, ndcg := scoreTitles(nil, tt); hit || ndcg != 0 {
		t.Errorf("no titles: hit %v, ndcg %g", hit, ndcg)
	}
}

func TestScriptedTastesChange(t *testing.T) {
	var ev SimEvents
	rnd := rand.New(rand.NewPCG(5, 5))
	for range 50 {
		u := script(rnd, 12, 0.5, &ev)
		if len(u.messages) != 12 || len(u.tastes) != 12 {
			t.Fatalf("%d sessions of messages, %d tastes", len(u.messages), len(u.tastes))
		}
		if len(u.messages[0]) < 3 {
			t.Errorf("the first session states the tastes: %q", u.messages[0])
		}
		for _, tt := range u.tastes {
			for _, g := range tt.liked {
				if slices.Contains(tt.disliked, g) {
					t.Fatalf("genre %s both liked and disliked", simGenres[g].word)
				}
			}
		}
	}
	if ev.LikedToDisliked == 0 || ev.DislikedToLiked == 0 || ev.Platform == 0 || ev.Added == 0 {
		t.Errorf("some kinds of change never happened: %+v", ev)
	}
}

// fakeMemory stands in for the store and pipeline: semantic users keep
// one value per statement kind, replaced; episodic users keep every
// statement.
type fakeMemory struct {
	mu    sync.Mutex
	modes map[string]string
	mem   map[string][]string
	turns int
}

func (f *fakeMemory) deps() SimDeps {
	return SimDeps{
		SetMode: func(_ context.Context, user, mode string) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.modes[user] = mode
			return nil
		},
		Turn: func(_ context.Context, user, _, text string) ([]SimTitle, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.turns++
			if text == simRequest {
				return []SimTitle{{Genres: []string{"Comedy"}}}, nil
			}
			v := strings.TrimSuffix(strings.ToLower(text), ".")
			if f.modes[user] == memento.ModeSemantic && strings.Contains(v, "watch on") {
				var keep []string
				for _, m := range f.mem[user] {
					if !strings.Contains(m, "watch on") {
						keep = append(keep, m)
					}
				}
				f.mem[user] = keep
			}
			f.mem[user] = append(f.mem[user], v)
			return nil, nil
		},
		Wait: func(context.Context) error { return nil },
		Beliefs: func(_ context.Context, user string) ([]string, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			return slices.Clone(f.mem[user]), nil
		},
		ContextTokens: func(_ context.Context, user, _, _ string) (int, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			return 10 * len(f.mem[user]), nil
		},
	}
}

func TestSimulate(t *testing.T) {
	f := &fakeMemory{modes: map[string]string{}, mem: map[string][]string{}}
	arms, _ := ParseArms("semantic,episodic")
	cfg := SimConfig{Users: 30, Sessions: 8, Arms: arms, Seed: 3, ChangeRate: 0.6}
	res, err := Simulate(context.Background(), cfg, f.deps())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Arms) != 2 || len(res.Arms[0].Sessions) != 8 {
		t.Fatalf("result %+v", res)
	}
	sem, epi := res.Arms[0].Final, res.Arms[1].Final
	// Episodic memory keeps every platform the users ever named; the fake
	// semantic memory replaces it, so episodic holds more stale beliefs
	// and a larger context.
	if epi.StaleShare <= sem.StaleShare || epi.ContextTokens <= sem.ContextTokens {
		t.Errorf("final: semantic %+v, episodic %+v", sem, epi)
	}
	if res.Arms[0].Sessions[0].StaleShare != 0 {
		t.Errorf("nothing is stale after the first session: %+v", res.Arms[0].Sessions[0])
	}
	// The fake recommends one comedy to everyone: it hits for the users
	// who like comedy now, the same in both arms (their tastes are the
	// same), and NDCG is a tenth-ish of the hit rate (one title in ten).
	if sem.HitRate <= 0 || sem.HitRate >= 1 || sem.HitRate != epi.HitRate || math.Abs(sem.NDCG-sem.HitRate/4.543559338088346) > 1e-9 {
		t.Errorf("the fake's comedy title scores hit %g (episodic %g), ndcg %g", sem.HitRate, epi.HitRate, sem.NDCG)
	}
	// The same seed gives the same histories.
	g := &fakeMemory{modes: map[string]string{}, mem: map[string][]string{}}
	again, _ := Simulate(context.Background(), cfg, g.deps())
	if again.Changes != res.Changes || again.Arms[1].Final != res.Arms[1].Final {
		t.Errorf("seeded runs differ: %+v vs %+v", again.Changes, res.Changes)
	}
	var b bytes.Buffer
	if err := res.WriteText(&b); err != nil || !strings.Contains(b.String(), "stale") {
		t.Errorf("text: %v %q", err, b.String())
	}
	files, err := PlotSimulation(res, t.TempDir())
	if err != nil || len(files) != 4 {
		t.Errorf("plots %v: %v", files, err)
	}
	if _, err := Simulate(context.Background(), SimConfig{Users: 0, Sessions: 1, Arms: arms}, f.deps()); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("0 users: err = %v", err)
	}
}
