package experiment

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/stats"
)

// The long-horizon simulation: the study the original trust experiment
// could not run. Simulated users whose tastes change over time talk to the
// agent across many sessions through the real message log and memory
// pipeline, once per arm with identical histories (a paired design). Each
// session they say what changed, then ask for ten titles (a request drawn
// from their current taste) and react to a poor answer as a person would:
// they say which of the titles they have already seen, or turn the list
// down. After each session it measures, per arm: the share of stored
// beliefs that contradict the user's current taste (stale beliefs), the
// size of the memory and of the context document of the request, and the
// quality of the lists against how the user would rate their titles now.

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
	// SessionGap is the simulated time between sessions (default a
	// week), so that time-dependent settings such as decay act as they
	// would over months of use.
	SessionGap time.Duration
	// Start is the simulated time of the first session (default now).
	Start time.Time
}

// Bounds and defaults of a run.
const (
	maxSimUsers       = 100000
	maxSimSessions    = 1000
	defaultSessionGap = 7 * 24 * time.Hour
	maxSessionGap     = 365 * 24 * time.Hour
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
	if c.SessionGap < 0 || c.SessionGap > maxSessionGap {
		return memento.Errorf(memento.EINVALID, "the session gap must be 0 to a year, got %s", c.SessionGap)
	}
	return checkArms(c.Arms)
}

// SimTitle is a title as the agent recommended it or the catalog holds
// it: what a simulated user's rating reads.
type SimTitle struct {
	ID     string
	Genres []string
	Year   int
	Cast   []string
}

// SimContext is the context document assembled for a turn: its size and
// what it holds.
type SimContext struct {
	Tokens int
	// Holds counts the document's parts by kind: the lines of its
	// attributes section ("attributes"), its summary, and its recalled
	// items by their kind ("episode", "message", "preference", ...).
	Holds map[string]int
}

// SimDeps are the parts of Memento a simulation drives, passed in by the
// command that wires them (the agents, the store, the workers).
type SimDeps struct {
	// Titles is the catalog: the users' favourite people are drawn from
	// it, and the best answer to each request is found in it.
	Titles []SimTitle
	// Clock, when set, is the calendar the agents stamp messages and read
	// preference weights with; Simulate moves it to each session's day.
	Clock *SimClock
	// SetMode gives a user a memory mode for every attribute.
	SetMode func(ctx context.Context, user, mode string) error
	// Turn sends a user's message to the arm's agent (stored in the
	// message log with its background jobs) and returns the titles it
	// recommended, best first.
	Turn func(ctx context.Context, arm Arm, user, thread, text string) ([]SimTitle, error)
	// Wait returns once every background job has ended.
	Wait func(ctx context.Context) error
	// Beliefs lists the values of the user's current memories.
	Beliefs func(ctx context.Context, user string) ([]string, error)
	// Context assembles the context document a prompt would carry for a
	// message in a thread, at now: the same document for every arm.
	Context func(ctx context.Context, user, thread, query string, now time.Time) (SimContext, error)
}

// SimResult is a simulation's outcome.
type SimResult struct {
	Users          int       `json:"users"`
	Sessions       int       `json:"sessions"`
	Seed           uint64    `json:"seed"`
	ChangeRate     float64   `json:"changeRate"`
	SessionGapDays float64   `json:"sessionGapDays"`
	Arms           []SimArm  `json:"arms"`
	TookSeconds    float64   `json:"tookSeconds"`
	Notes          []string  `json:"notes,omitempty"`
	Changes        SimEvents `json:"changes"`
	// Requests counts the first requests of all sessions by kind (the
	// same in every arm).
	Requests map[string]int `json:"requests"`
	// Paired compares every arm with the first, user by user.
	Paired []SimPaired `json:"paired"`
}

// SimEvents counts the taste changes the users went through.
type SimEvents struct {
	LikedToDisliked int `json:"likedToDisliked"`
	DislikedToLiked int `json:"dislikedToLiked"`
	Platform        int `json:"platform"`
	Added           int `json:"added"`
	PersonAdded     int `json:"personAdded"`
	PersonDropped   int `json:"personDropped"`
}

// SimArm is one arm's figures, one entry a session.
type SimArm struct {
	Name   string `json:"name"`
	Mode   string `json:"mode"`
	Decay  string `json:"decay,omitempty"`
	Frozen bool   `json:"frozen,omitempty"`
	// Baseline marks the arms that are there to show the measures can
	// tell a worse memory apart: no memory at all, or one never told of
	// a change.
	Baseline bool         `json:"baseline,omitempty"`
	Sessions []SimSession `json:"sessions"`
	// Final is the last session's figures.
	Final SimSession `json:"final"`
	// ByRequest pools the sessions' first lists by the kind of request.
	ByRequest map[string]SimQuality `json:"byRequest"`
	// FollowUps pools the lists answering the users' reactions (seen
	// titles named, a list turned down). They differ between arms, since
	// a reaction follows what an arm showed, so they are kept apart from
	// the paired first lists.
	FollowUps SimQuality `json:"followUps"`
}

// SimQuality is the quality of recommendation lists against the users'
// current taste.
type SimQuality struct {
	// Lists is how many lists were scored.
	Lists int `json:"lists"`
	// HitRate is the share of lists with at least one unseen title the
	// user would rate highly now (grade 2 or 3).
	HitRate float64 `json:"hitRate"`
	// NDCG is NDCG@10 with graded gains (2^grade - 1) against the best
	// ten unseen titles of the catalog that meet the request.
	NDCG float64 `json:"ndcg10"`
	// Good, Disliked and Seen are the shares of the ten places of a list
	// holding an unseen title rated highly, a title the user dislikes now
	// (a hated genre or person) and a title they have already seen.
	Good     float64 `json:"good10"`
	Disliked float64 `json:"disliked10"`
	Seen     float64 `json:"seen10"`
}

// SimSession holds the means over users after one session.
type SimSession struct {
	Session int `json:"session"`
	// StaleShare is the share of assessable beliefs (clauses of current
	// memories stating a liking or dislike of a tracked genre or person,
	// or a platform) that contradict the user's current taste, pooled
	// over users.
	StaleShare float64 `json:"staleShare"`
	// Beliefs is the mean number of assessable beliefs per user.
	Beliefs float64 `json:"beliefs"`
	// StoredTokens is the mean size of a user's current memories, every
	// value counted once: what the memory holds, not what a turn reads.
	StoredTokens float64 `json:"storedTokens"`
	// ContextTokens is the mean size of the context document assembled
	// for the session's request, and ContextHolds the mean count of its
	// parts by kind.
	ContextTokens float64            `json:"contextTokens"`
	ContextHolds  map[string]float64 `json:"contextHolds"`
	// SimQuality scores the list answering the session's request: the
	// same request in every arm.
	SimQuality
}

// SimPaired is a paired comparison of two arms over the same users: the
// mean, over users, of the difference between their mean figure in Arm
// and in Against, with its 95 % confidence interval (t). An interval
// that leaves out zero is a difference the run can tell from chance.
type SimPaired struct {
	Arm     string  `json:"arm"`
	Against string  `json:"against"`
	Measure string  `json:"measure"`
	N       int     `json:"n"`
	Mean    float64 `json:"mean"`
	CILow   float64 `json:"ciLow"`
	CIHigh  float64 `json:"ciHigh"`
}

// listSize is how many titles a request asks for and a list is scored on.
const listSize = 10

// Simulate runs the simulation: every arm, every session, every user.
func Simulate(ctx context.Context, cfg SimConfig, d SimDeps) (*SimResult, error) {
	if cfg.ChangeRate == 0 {
		cfg.ChangeRate = 0.35
	}
	if cfg.Parallel < 1 {
		cfg.Parallel = 4
	}
	if cfg.SessionGap == 0 {
		cfg.SessionGap = defaultSessionGap
	}
	if cfg.Start.IsZero() {
		cfg.Start = time.Now().UTC().Truncate(time.Second)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cat := newSimCatalog(d.Titles)
	if len(cat.titles) == 0 {
		return nil, memento.Errorf(memento.EINVALID, "simulate: the catalog has no titles to recommend")
	}
	start := time.Now()
	res := &SimResult{Users: cfg.Users, Sessions: cfg.Sessions, Seed: cfg.Seed, ChangeRate: cfg.ChangeRate,
		SessionGapDays: cfg.SessionGap.Hours() / 24, Requests: map[string]int{}}
	users := make([]simUser, cfg.Users)
	for i := range users {
		// A stream per user: a user's history does not depend on how
		// many users come before them.
		rnd := rand.New(rand.NewPCG(cfg.Seed, uint64(i)+1))
		users[i] = script(rnd, cfg.Sessions, cfg.ChangeRate, cat.people, &res.Changes)
		for _, s := range users[i].sessions {
			res.Requests[s.ask.Kind]++
		}
	}
	if len(cat.people) == 0 {
		res.Notes = append(res.Notes, "the catalog has no prolific actors: the users have no favourite people")
	}
	na := len(cfg.Arms)
	sim := &simRun{cfg: cfg, d: d, cat: cat, users: users, seen: make([][]map[string]bool, na), perUser: make([][]qualityTally, na)}
	for a, arm := range cfg.Arms {
		sim.seen[a] = make([]map[string]bool, len(users))
		sim.perUser[a] = make([]qualityTally, len(users))
		for i := range users {
			sim.seen[a][i] = map[string]bool{}
			if arm.Mode != ModeNone {
				if err := d.SetMode(ctx, sim.user(arm, i, 0), arm.Mode); err != nil {
					return nil, fmt.Errorf("simulate: set mode: %w", err)
				}
			}
		}
		res.Arms = append(res.Arms, SimArm{Name: arm.Name, Mode: arm.Mode, Decay: arm.Decay, Frozen: arm.Frozen,
			Baseline: arm.Baseline(), ByRequest: map[string]SimQuality{}})
	}
	byRequest := make([]map[string]*qualityTally, na)
	followUps := make([]qualityTally, na)
	for a := range byRequest {
		byRequest[a] = map[string]*qualityTally{}
	}
	for s := range cfg.Sessions {
		day := cfg.Start.Add(time.Duration(s) * cfg.SessionGap)
		if d.Clock != nil {
			d.Clock.Set(day)
		}
		// Every arm's users talk in the same round, so one wait for the
		// background jobs serves all arms, and the arms meet the same load.
		err := forEach(ctx, cfg.Parallel, na*len(users), func(k int) error {
			a, i := k%na, k/na
			return sim.talk(ctx, a, i, s)
		})
		if err != nil {
			return nil, fmt.Errorf("simulate session %d: %w", s+1, err)
		}
		if err := d.Wait(ctx); err != nil {
			return nil, fmt.Errorf("simulate session %d: %w", s+1, err)
		}
		ideals := make([][]gradedTitle, len(users))
		_ = forEach(ctx, cfg.Parallel, len(users), func(i int) error {
			ss := &users[i].sessions[s]
			ideals[i] = cat.ideal(&ss.taste, ss.ask)
			return nil
		})
		results := make([]*measured, na*len(users))
		err = forEach(ctx, cfg.Parallel, na*len(users), func(k int) error {
			a, i := k%na, k/na
			m, err := sim.measure(ctx, a, i, s, ideals[i], day)
			results[k] = m
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("simulate session %d: %w", s+1, err)
		}
		// Summed in a fixed order, so a seed gives the same figures to
		// the last digit however the goroutines ran.
		tallies := make([]sessionTally, na)
		for k, m := range results {
			a := k % na
			tallies[a].add(m)
			q := byRequest[a][m.first.kind]
			if q == nil {
				q = &qualityTally{}
				byRequest[a][m.first.kind] = q
			}
			q.add(m.first.listScore)
			if m.followUp != nil {
				followUps[a].add(*m.followUp)
			}
		}
		for a, ta := range tallies {
			res.Arms[a].Sessions = append(res.Arms[a].Sessions, ta.session(s+1, len(users)))
		}
		if cfg.Progress != nil {
			cfg.Progress(s+1, cfg.Sessions, time.Since(start))
		}
	}
	for a := range res.Arms {
		res.Arms[a].Final = res.Arms[a].Sessions[len(res.Arms[a].Sessions)-1]
		for kind, q := range byRequest[a] {
			res.Arms[a].ByRequest[kind] = q.quality()
		}
		res.Arms[a].FollowUps = followUps[a].quality()
	}
	res.Paired = sim.paired()
	res.TookSeconds = math.Round(time.Since(start).Seconds()*10) / 10
	return res, nil
}

// simRun is the state of one simulation.
type simRun struct {
	cfg   SimConfig
	d     SimDeps
	cat   *simCatalog
	users []simUser
	// seen holds, per arm and user, the titles the user has watched: the
	// same user, but what they watched follows what each arm showed them.
	seen [][]map[string]bool
	// perUser sums each user's first lists over the run, per arm, for
	// the paired comparison.
	perUser [][]qualityTally
}

// user is the Memento user of simulated user i in an arm. The baseline
// without memory meets a new user every session.
func (r *simRun) user(arm Arm, i, session int) string {
	if arm.Mode == ModeNone {
		return fmt.Sprintf("sim-%s-%d-s%d", arm.Name, i, session+1)
	}
	return fmt.Sprintf("sim-%s-%d", arm.Name, i)
}

// talk has user i of arm a say what the session's script says: nothing in
// the arm without memory, and only the first session's statements in a
// frozen arm.
func (r *simRun) talk(ctx context.Context, a, i, s int) error {
	arm := r.cfg.Arms[a]
	if arm.Mode == ModeNone || (arm.Frozen && s > 0) {
		return nil
	}
	for _, m := range r.users[i].sessions[s].talk {
		if _, err := r.d.Turn(ctx, arm, r.user(arm, i, s), fmt.Sprintf("session-%d", s+1), m); err != nil {
			return err
		}
	}
	return nil
}

// measured is what one user's session gave in one arm.
type measured struct {
	stale, assessed, storedTokens int
	context                       SimContext
	// first is the list answering the session's request, the same
	// request in every arm; followUp the one answering the user's
	// reaction to it, if they had one.
	first    scoredList
	followUp *listScore
}

// scoredList is one list with the kind of the request it answered.
type scoredList struct {
	kind string
	listScore
}

// measure reads user i's memory after session s in arm a, then has them
// ask for ten titles in a thread of its own (so the answer rests on
// long-term memory, not on the active context the session's statements
// just set), react to the answer, and watch the best title shown. The
// context document is measured for the request, before the agent answers
// it. The baseline without memory answers the request only: what the user
// says next cannot change what it does in later sessions.
func (r *simRun) measure(ctx context.Context, a, i, s int, ideal []gradedTitle, day time.Time) (*measured, error) {
	arm := r.cfg.Arms[a]
	user := r.user(arm, i, s)
	ss := &r.users[i].sessions[s]
	t := &ss.taste
	seen := r.seen[a][i]
	out := &measured{}
	if arm.Mode != ModeNone {
		values, err := r.d.Beliefs(ctx, user)
		if err != nil {
			return nil, err
		}
		out.stale, out.assessed = staleBeliefs(values, t, r.cat.people)
		out.storedTokens = memento.EstimateTokens(strings.Join(values, "\n"))
	}
	thread := fmt.Sprintf("session-%d-ask", s+1)
	var err error
	if out.context, err = r.d.Context(ctx, user, thread, ss.ask.Text, day); err != nil {
		return nil, err
	}
	first, err := r.d.Turn(ctx, arm, user, thread, ss.ask.Text)
	if err != nil {
		return nil, err
	}
	out.first = scoredList{kind: ss.ask.Kind, listScore: r.cat.score(first, t, seen, ideal, seen)}
	shown := first[:min(len(first), listSize)]
	if text := r.reaction(shown, out.first.listScore, seen); text != "" && arm.Mode != ModeNone {
		exclude := maps.Clone(seen)
		for _, ti := range shown {
			exclude[ti.ID] = true
		}
		more, err := r.d.Turn(ctx, arm, user, thread, text)
		if err != nil {
			return nil, err
		}
		fu := r.cat.score(more, t, seen, ideal, exclude)
		out.followUp = &fu
		shown = append(shown, more[:min(len(more), listSize)]...)
	}
	// The user watches the best unseen title they were shown, if they
	// would rate it highly; the agent is told only when it offers the
	// title again.
	best, bestGrade := "", goodGrade-1
	for _, ti := range shown {
		if g, bad := t.rate(r.cat.title(ti)); !bad && !seen[ti.ID] && g > bestGrade {
			best, bestGrade = ti.ID, g
		}
	}
	if best != "" {
		seen[best] = true
	}
	r.perUser[a][i].add(out.first.listScore)
	return out, nil
}

// rejectBelow is the number of titles a user would rate highly below
// which they are not content with a list.
const rejectBelow = 2

// reaction is what the user says to a list. Content with it, they say
// nothing, as people seldom do; otherwise they name the titles they have
// seen already if it offered any, or turn it down. "" says nothing.
func (r *simRun) reaction(shown []SimTitle, sc listScore, seen map[string]bool) string {
	if len(shown) == 0 || sc.good >= rejectBelow {
		return ""
	}
	var pos []int
	for k, ti := range shown {
		if seen[ti.ID] {
			pos = append(pos, k+1)
		}
	}
	if len(pos) > 0 {
		return "I've already seen " + ordinals(pos) + "."
	}
	return "Not those, something else."
}

var ordinalWords = []string{"", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"}

// ordinals names list positions as the user would: "the second one",
// "the second and the fifth ones".
func ordinals(pos []int) string {
	words := make([]string, len(pos))
	for k, p := range pos {
		words[k] = "the " + ordinalWords[p]
	}
	if len(words) == 1 {
		return words[0] + " one"
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1] + " ones"
}

// qualityTally sums list scores.
type qualityTally struct {
	lists, hits, ndcgLists, good, disliked, seen int
	ndcg                                         float64
}

func (q *qualityTally) add(l listScore) {
	q.lists++
	if l.hit {
		q.hits++
	}
	if l.ideal {
		q.ndcgLists++
		q.ndcg += l.ndcg
	}
	q.good += l.good
	q.disliked += l.disliked
	q.seen += l.seen
}

func (q *qualityTally) quality() SimQuality {
	if q.lists == 0 {
		return SimQuality{}
	}
	n, slots := float64(q.lists), float64(q.lists*listSize)
	out := SimQuality{Lists: q.lists, HitRate: float64(q.hits) / n,
		Good: float64(q.good) / slots, Disliked: float64(q.disliked) / slots, Seen: float64(q.seen) / slots}
	if q.ndcgLists > 0 {
		out.NDCG = q.ndcg / float64(q.ndcgLists)
	}
	return out
}

// sessionTally sums one arm's session over users.
type sessionTally struct {
	stale, assessed, stored, contexts, tokens int
	holds                                     map[string]int
	qualityTally
}

func (t *sessionTally) add(m *measured) {
	t.stale += m.stale
	t.assessed += m.assessed
	t.stored += m.storedTokens
	t.contexts++
	t.tokens += m.context.Tokens
	for k, n := range m.context.Holds {
		if t.holds == nil {
			t.holds = map[string]int{}
		}
		t.holds[k] += n
	}
	t.qualityTally.add(m.first.listScore)
}

func (t *sessionTally) session(s, users int) SimSession {
	n := float64(users)
	out := SimSession{Session: s, Beliefs: float64(t.assessed) / n, StoredTokens: float64(t.stored) / n,
		ContextHolds: map[string]float64{}, SimQuality: t.quality()}
	if t.assessed > 0 {
		out.StaleShare = float64(t.stale) / float64(t.assessed)
	}
	if t.contexts > 0 {
		out.ContextTokens = float64(t.tokens) / float64(t.contexts)
		for k, v := range t.holds {
			out.ContextHolds[k] = float64(v) / float64(t.contexts)
		}
	}
	return out
}

// pairedMeasures are the figures compared user by user.
var pairedMeasures = []struct {
	name string
	of   func(SimQuality) float64
}{
	{"ndcg10", func(q SimQuality) float64 { return q.NDCG }},
	{"good10", func(q SimQuality) float64 { return q.Good }},
	{"disliked10", func(q SimQuality) float64 { return q.Disliked }},
	{"seen10", func(q SimQuality) float64 { return q.Seen }},
}

// paired compares every arm with the first: per user, the difference of
// their mean figure over the first lists of all sessions.
func (r *simRun) paired() []SimPaired {
	var out []SimPaired
	for a := 1; a < len(r.cfg.Arms); a++ {
		for _, m := range pairedMeasures {
			diffs := make([]float64, 0, len(r.users))
			for i := range r.users {
				x, y := r.perUser[a][i].quality(), r.perUser[0][i].quality()
				if x.Lists == 0 || y.Lists == 0 {
					continue
				}
				diffs = append(diffs, m.of(x)-m.of(y))
			}
			sum, err := stats.Describe(diffs)
			if err != nil {
				continue
			}
			out = append(out, SimPaired{Arm: r.cfg.Arms[a].Name, Against: r.cfg.Arms[0].Name, Measure: m.name,
				N: sum.N, Mean: sum.Mean, CILow: sum.CILow, CIHigh: sum.CIHigh})
		}
	}
	return out
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
	positiveCues = []string{"love", "like", "enjoy", "favorite", "favourite", "into", "fan of", "come around to"}
	pastCues     = []string{"used to"}
)

// staleBeliefs counts the clauses of the user's memory values that state
// something about a tracked genre, person or platform (assessed) and those
// that contradict the current taste (stale): a liking of a genre or person
// now disliked, a dislike of one now liked, or a platform other than the
// current one. A merged semantic value holds several clauses ("; "), each
// a belief.
func staleBeliefs(values []string, t *taste, people []string) (stale, assessed int) {
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
			judge := func(liked, disliked bool) {
				if !liked && !disliked {
					return
				}
				assessed++
				if (pol > 0 && disliked) || (pol < 0 && liked) {
					stale++
				}
			}
			for g, sg := range simGenres {
				if strings.Contains(c, sg.word) || strings.Contains(c, strings.ToLower(sg.catalog)) {
					judge(slices.Contains(t.liked, g), slices.Contains(t.disliked, g))
				}
			}
			for p, name := range people {
				if strings.Contains(c, strings.ToLower(name)) {
					judge(slices.Contains(t.favs, p), slices.Contains(t.hated, p))
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
