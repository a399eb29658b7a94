package experiment

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/memento-ai/memento"
)

// The long-horizon simulation: the study the original trust experiment
// could not run. Simulated users whose tastes change over time (a genre
// liked becomes disliked, one hated becomes liked, a platform changes,
// genres are added) talk to the agent across many sessions through the
// real message log and memory pipeline, once per arm with identical taste
// histories (a paired design). After each session it measures, per arm:
// the share of stored beliefs that contradict the user's current taste
// (stale beliefs), the context tokens a turn assembles, and the quality of
// a recommendation against the current taste (hit rate and NDCG@10).

// SimConfig sizes a simulation.
type SimConfig struct {
	Users    int
	Sessions int
	Arms     []Arm
	Seed     uint64
	// Progress, when set, is told when each session has been measured.
	Progress func(session, sessions int, elapsed time.Duration)
	// Parallel users at once (default 4).
	Parallel int
	// ChangeRate is the chance that a session brings a change of taste
	// (default 0.35).
	ChangeRate float64
}

// maxSimUsers and maxSimSessions bound a run.
const (
	maxSimUsers    = 100000
	maxSimSessions = 1000
)

// Validate checks the configuration.
func (c SimConfig) Validate() error {
	if c.Users < 1 || c.Users > maxSimUsers {
		return memento.Errorf(memento.EINVALID, "--users must be 1 to %d, got %d", maxSimUsers, c.Users)
	}
	if c.Sessions < 1 || c.Sessions > maxSimSessions {
		return memento.Errorf(memento.EINVALID, "--sessions must be 1 to %d, got %d", maxSimSessions, c.Sessions)
	}
	if c.ChangeRate < 0 || c.ChangeRate > 1 {
		return memento.Errorf(memento.EINVALID, "the change rate must be 0 to 1, got %g", c.ChangeRate)
	}
	return checkArms(c.Arms)
}

// SimTitle is a recommended title as the simulation scores it.
type SimTitle struct {
	ID     string
	Genres []string
}

// SimDeps are the parts of Memento a simulation drives, passed in by the
// command that wires them (the agent, the store, the workers).
type SimDeps struct {
	// SetMode gives a user a memory mode for every attribute.
	SetMode func(ctx context.Context, user, mode string) error
	// Turn sends a user's message to the agent (stored in the message log
	// with its background jobs) and returns the titles it recommended.
	Turn func(ctx context.Context, user, thread, text string) ([]SimTitle, error)
	// Wait returns once every background job has ended.
	Wait func(ctx context.Context) error
	// Beliefs lists the values of the user's current memories.
	Beliefs func(ctx context.Context, user string) ([]string, error)
	// ContextTokens is the size of the context assembled for a turn.
	ContextTokens func(ctx context.Context, user, thread, query string) (int, error)
}

// SimResult is a simulation's outcome.
type SimResult struct {
	Users       int       `json:"users"`
	Sessions    int       `json:"sessions"`
	Seed        uint64    `json:"seed"`
	ChangeRate  float64   `json:"changeRate"`
	Arms        []SimArm  `json:"arms"`
	TookSeconds float64   `json:"tookSeconds"`
	Notes       []string  `json:"notes,omitempty"`
	Changes     SimEvents `json:"changes"`
}

// SimEvents counts the taste changes the users went through.
type SimEvents struct {
	LikedToDisliked int `json:"likedToDisliked"`
	DislikedToLiked int `json:"dislikedToLiked"`
	Platform        int `json:"platform"`
	Added           int `json:"added"`
}

// SimArm is one arm's figures, one entry a session.
type SimArm struct {
	Name     string       `json:"name"`
	Mode     string       `json:"mode"`
	Sessions []SimSession `json:"sessions"`
	// Final is the last session's figures.
	Final SimSession `json:"final"`
}

// SimSession holds the means over users after one session.
type SimSession struct {
	Session int `json:"session"`
	// StaleShare is the share of assessable beliefs (current memories
	// naming a tracked genre or platform) that contradict the user's
	// current taste, pooled over users.
	StaleShare float64 `json:"staleShare"`
	// Beliefs is the mean number of assessable beliefs per user.
	Beliefs float64 `json:"beliefs"`
	// ContextTokens is the mean context size of a turn.
	ContextTokens float64 `json:"contextTokens"`
	// HitRate is the share of recommendations with at least one title of
	// a liked and no disliked genre in the top 10; NDCG is NDCG@10 with
	// such titles relevant.
	HitRate float64 `json:"hitRate"`
	NDCG    float64 `json:"ndcg10"`
}

// simGenre is a genre as users say it and as the catalog names it.
type simGenre struct{ word, catalog string }

// The genres and platforms simulated tastes are made of.
var (
	simGenres = []simGenre{
		{"comedy", "Comedy"}, {"drama", "Drama"}, {"horror", "Horror"}, {"thrillers", "Thriller"},
		{"westerns", "Western"}, {"musicals", "Musical"}, {"documentaries", "Documentary"}, {"romance", "Romance"},
		{"science fiction", "Science Fiction"}, {"war movies", "War"}, {"crime", "Crime"}, {"fantasy", "Fantasy"},
		{"mysteries", "Mystery"}, {"action", "Action"}, {"animated movies", "Animated"},
	}
	simPlatforms = []string{"Netflix", "Hulu", "Disney+", "Prime Video", "HBO Max", "Apple TV"}
)

// taste is a simulated user's current taste.
type taste struct {
	liked, disliked []int // indexes into simGenres
	platform        int
}

func (t *taste) clone() taste {
	return taste{liked: slices.Clone(t.liked), disliked: slices.Clone(t.disliked), platform: t.platform}
}

// simUser is one user's scripted history: the messages of every session
// and the taste after it, the same for every arm.
type simUser struct {
	messages [][]string
	tastes   []taste
}

// script writes a user's history.
func script(rnd *rand.Rand, sessions int, changeRate float64, ev *SimEvents) simUser {
	perm := rnd.Perm(len(simGenres))
	t := taste{liked: perm[:2+rnd.IntN(2)], platform: rnd.IntN(len(simPlatforms))}
	t.liked = slices.Clone(t.liked)
	t.disliked = slices.Clone(perm[len(t.liked) : len(t.liked)+1+rnd.IntN(2)])
	var u simUser
	for s := range sessions {
		var msgs []string
		if s == 0 {
			names := make([]string, len(t.liked))
			for i, g := range t.liked {
				names[i] = simGenres[g].word
			}
			msgs = append(msgs, "I love "+strings.Join(names, " and ")+".")
			for _, g := range t.disliked {
				msgs = append(msgs, "I can't stand "+simGenres[g].word+".")
			}
			msgs = append(msgs, "I watch on "+simPlatforms[t.platform]+".")
		} else if rnd.Float64() < changeRate {
			switch k := rnd.IntN(4); {
			case k == 0 && len(t.liked) > 1:
				i := rnd.IntN(len(t.liked))
				g := t.liked[i]
				t.liked = slices.Delete(t.liked, i, i+1)
				t.disliked = append(t.disliked, g)
				msgs = append(msgs, "I don't like "+simGenres[g].word+" anymore.")
				ev.LikedToDisliked++
			case k == 1 && len(t.disliked) > 0:
				i := rnd.IntN(len(t.disliked))
				g := t.disliked[i]
				t.disliked = slices.Delete(t.disliked, i, i+1)
				t.liked = append(t.liked, g)
				msgs = append(msgs, "Now I love "+simGenres[g].word+".")
				ev.DislikedToLiked++
			case k == 2:
				p := (t.platform + 1 + rnd.IntN(len(simPlatforms)-1)) % len(simPlatforms)
				t.platform = p
				msgs = append(msgs, "I watch on "+simPlatforms[p]+" now.")
				ev.Platform++
			default:
				var free []int
				for g := range simGenres {
					if !slices.Contains(t.liked, g) && !slices.Contains(t.disliked, g) {
						free = append(free, g)
					}
				}
				if len(free) == 0 {
					break
				}
				g := free[rnd.IntN(len(free))]
				t.liked = append(t.liked, g)
				msgs = append(msgs, "I have started to love "+simGenres[g].word+".")
				ev.Added++
			}
		}
		if s > 0 && rnd.IntN(2) == 0 {
			// A passing restatement of something still liked.
			msgs = append(msgs, "I still enjoy "+simGenres[t.liked[rnd.IntN(len(t.liked))]].word+".")
		}
		u.messages = append(u.messages, msgs)
		u.tastes = append(u.tastes, t.clone())
	}
	return u
}

// simRequest is the recommendation request of every session.
const simRequest = "Recommend 10 movies for me."

// Simulate runs the simulation: every arm, every session, every user.
func Simulate(ctx context.Context, cfg SimConfig, d SimDeps) (*SimResult, error) {
	if cfg.ChangeRate == 0 {
		cfg.ChangeRate = 0.35
	}
	if cfg.Parallel < 1 {
		cfg.Parallel = 4
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	rnd := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))
	res := &SimResult{Users: cfg.Users, Sessions: cfg.Sessions, Seed: cfg.Seed, ChangeRate: cfg.ChangeRate}
	users := make([]simUser, cfg.Users)
	for i := range users {
		users[i] = script(rnd, cfg.Sessions, cfg.ChangeRate, &res.Changes)
	}
	id := func(arm Arm, i int) string { return fmt.Sprintf("sim-%s-%d", arm.Name, i) }
	for _, arm := range cfg.Arms {
		for i := range users {
			if err := d.SetMode(ctx, id(arm, i), arm.Mode); err != nil {
				return nil, fmt.Errorf("simulate: set mode: %w", err)
			}
		}
		res.Arms = append(res.Arms, SimArm{Name: arm.Name, Mode: arm.Mode})
	}
	// Every arm's users talk in the same round, so one wait for the
	// background jobs serves all arms, and the arms meet the same load.
	na := len(cfg.Arms)
	for s := range cfg.Sessions {
		thread := fmt.Sprintf("session-%d", s+1)
		// The request comes in a thread of its own, so the answer rests on
		// long-term memory, not on the active context the session's
		// statements just set.
		ask := thread + "-ask"
		err := forEach(ctx, cfg.Parallel, na*len(users), func(k int) error {
			arm, i := cfg.Arms[k%na], k/na
			for _, m := range users[i].messages[s] {
				if _, err := d.Turn(ctx, id(arm, i), thread, m); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("simulate session %d: %w", s+1, err)
		}
		if err := d.Wait(ctx); err != nil {
			return nil, fmt.Errorf("simulate session %d: %w", s+1, err)
		}
		type tally struct {
			stale, assessed, tokens, hits int
			ndcg                          float64
		}
		var mu sync.Mutex
		tallies := make([]tally, na)
		err = forEach(ctx, cfg.Parallel, na*len(users), func(k int) error {
			a, i := k%na, k/na
			user := id(cfg.Arms[a], i)
			t := users[i].tastes[s]
			values, err := d.Beliefs(ctx, user)
			if err != nil {
				return err
			}
			st, as := staleBeliefs(values, t)
			tok, err := d.ContextTokens(ctx, user, ask, simRequest)
			if err != nil {
				return err
			}
			titles, err := d.Turn(ctx, user, ask, simRequest)
			if err != nil {
				return err
			}
			hit, n := scoreTitles(titles, t)
			mu.Lock()
			defer mu.Unlock()
			ta := &tallies[a]
			ta.stale += st
			ta.assessed += as
			ta.tokens += tok
			if hit {
				ta.hits++
			}
			ta.ndcg += n
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("simulate session %d: %w", s+1, err)
		}
		n := float64(len(users))
		for a, ta := range tallies {
			ss := SimSession{Session: s + 1, Beliefs: float64(ta.assessed) / n, ContextTokens: float64(ta.tokens) / n,
				HitRate: float64(ta.hits) / n, NDCG: ta.ndcg / n}
			if ta.assessed > 0 {
				ss.StaleShare = float64(ta.stale) / float64(ta.assessed)
			}
			res.Arms[a].Sessions = append(res.Arms[a].Sessions, ss)
		}
		if cfg.Progress != nil {
			cfg.Progress(s+1, cfg.Sessions, time.Since(start))
		}
	}
	for a := range res.Arms {
		res.Arms[a].Final = res.Arms[a].Sessions[len(res.Arms[a].Sessions)-1]
	}
	res.TookSeconds = math.Round(time.Since(start).Seconds()*10) / 10
	return res, nil
}

// forEach runs fn for 0..n-1 on up to par goroutines, stopping at the
// first error.
func forEach(ctx context.Context, par, n int, fn func(i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					cancel(err)
				}
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := context.Cause(ctx); err != nil && err != context.Canceled {
		return err
	}
	return nil
}

// Cues of a belief's polarity, for the stale-belief count. The same rules
// read the memories of every arm.
var (
	negativeCues = []string{"can't stand", "cannot stand", "don't like", "doesn't like", "do not like", "does not like", "dislike", "hate", "not into", "avoid", "tired of", "no longer"}
	positiveCues = []string{"love", "like", "enjoy", "favorite", "favourite", "into", "fan of"}
	pastCues     = []string{"used to"}
)

// staleBeliefs counts the clauses of the user's memory values that state
// something about a tracked genre or platform (assessed) and those that
// contradict the current taste (stale): a liking of a genre now disliked,
// a dislike of one now liked, or a platform other than the current one.
// A merged semantic value holds several clauses ("; "), each a belief.
func staleBeliefs(values []string, t taste) (stale, assessed int) {
	for _, v := range values {
		for _, clause := range strings.Split(v, ";") {
			c := strings.ToLower(strings.TrimSpace(clause))
			if c == "" {
				continue
			}
			past := containsAny(c, pastCues)
			for _, p := range simPlatforms {
				if strings.Contains(c, strings.ToLower(p)) {
					assessed++
					if (p != simPlatforms[t.platform]) != past {
						stale++
					}
				}
			}
			var pol int
			switch {
			case containsAny(c, negativeCues):
				pol = -1
			case containsAny(c, positiveCues):
				pol = 1
			}
			if past {
				pol = -pol
			}
			if pol == 0 {
				continue
			}
			for g, sg := range simGenres {
				if !strings.Contains(c, sg.word) && !strings.Contains(c, strings.ToLower(sg.catalog)) {
					continue
				}
				liked, disliked := slices.Contains(t.liked, g), slices.Contains(t.disliked, g)
				if !liked && !disliked {
					continue
				}
				assessed++
				if (pol > 0 && disliked) || (pol < 0 && liked) {
					stale++
				}
			}
		}
	}
	return stale, assessed
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// scoreTitles scores the top 10 titles against the taste: a title is
// relevant when it has a liked genre and no disliked one.
func scoreTitles(titles []SimTitle, t taste) (hit bool, ndcg float64) {
	liked, disliked := map[string]bool{}, map[string]bool{}
	for _, g := range t.liked {
		liked[simGenres[g].catalog] = true
	}
	for _, g := range t.disliked {
		disliked[simGenres[g].catalog] = true
	}
	var dcg, idcg float64
	for i := range 10 {
		idcg += 1 / math.Log2(float64(i+2))
	}
	for i, ti := range titles {
		if i == 10 {
			break
		}
		rel, bad := false, false
		for _, g := range ti.Genres {
			rel = rel || liked[g]
			bad = bad || disliked[g]
		}
		if rel && !bad {
			hit = true
			dcg += 1 / math.Log2(float64(i+2))
		}
	}
	return hit, dcg / idcg
}
