package prefs

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/internal/lru"
)

// PreferencesSince is what a store offers for incremental clustering;
// *sqlite.DB and *postgres.DB have it. Without it, every clustering reads
// all of the user's preferences and groups them from scratch.
type PreferencesSince interface {
	// PreferencesSince returns, in one snapshot, the user's version
	// counters, the number of their preferences and those written after
	// version (all of them when version is negative).
	PreferencesSince(ctx context.Context, s memento.Scope, version int64) (*memento.PreferencesRead, error)
}

// Defaults of the Service's incremental clustering.
const (
	// DefaultClusterCache is the default of Service.ClusterCache: about
	// 40 MB of preferences with 256-dimensional vectors.
	DefaultClusterCache = 1 << 15
	// DefaultClusterFullEvery and DefaultClusterFullAfter are the
	// defaults of Service.ClusterFullEvery and ClusterFullAfter.
	DefaultClusterFullEvery = 100
	DefaultClusterFullAfter = 10 * time.Minute
)

// ClusterStats is what a Service holds of users' preferences between
// clusterings, and how its clusterings read them (Service.ClusterStats).
type ClusterStats struct {
	// Users and Preferences are the users and their preferences held now.
	Users       int `json:"users"`
	Preferences int `json:"preferences"`
	// FullReads counts clusterings that read every preference of their
	// user; IncrementalReads those that read only the ones changed since
	// the user's last.
	FullReads        int64 `json:"fullReads"`
	IncrementalReads int64 `json:"incrementalReads"`
	// Evictions counts users dropped to stay within ClusterCache.
	Evictions int64 `json:"evictions"`
	// Mismatches counts the full reads that found the preferences held,
	// or their groups, other than read (a bug if ever above 0; the full
	// read is kept).
	Mismatches int64 `json:"mismatches"`
}

// ClusterStats returns the service's figures of incremental clustering.
func (sv *Service) ClusterStats() ClusterStats {
	users, prefs, evictions := sv.held.Stats()
	return ClusterStats{Users: users, Preferences: prefs, FullReads: sv.fullReads.Load(),
		IncrementalReads: sv.incrementalReads.Load(), Evictions: evictions, Mismatches: sv.mismatches.Load()}
}

// clusterState is what a Service keeps of one user between clusterings:
// their preferences as of a version (without sources), and for each of
// them the others within eps, their neighbours. A clustering reads the
// preferences written since the version, relinks those whose vectors
// changed (a comparison with each held preference, where a grouping from
// scratch compares every pair) and runs DBSCAN over the neighbour lists
// of the live ones.
type clusterState struct {
	mu sync.Mutex // one clustering of the user at a time

	ver  memento.PreferenceVersion // of the read held; zero Since: nothing held
	rows []memento.Preference      // by slot
	slot map[string]int32
	near [][]int32 // by slot, the slots within eps
	// minDot and embedder are what near was computed for.
	minDot   float32
	embedder string
	// steps counts the clusterings since the last that read every
	// preference, at full.
	steps int
	full  time.Time
}

// stateFor returns the user's entry in the service's held states, its
// state made empty when none is held.
func (sv *Service) stateFor(s memento.Scope) *lru.Entry[*clusterState] {
	return sv.held.Get(s.Tenant+"\x1f"+s.User, func() *clusterState { return &clusterState{} })
}

// drop forgets what e holds, and e itself.
func (sv *Service) drop(e *lru.Entry[*clusterState]) {
	sv.held.Drop(e)
	st := e.Value
	st.ver, st.rows, st.slot, st.near = memento.PreferenceVersion{}, nil, nil, nil
}

// resize records how many preferences e holds now and drops the users
// clustered least recently while the service holds more than
// ClusterCache (e itself stays).
func (sv *Service) resize(e *lru.Entry[*clusterState]) {
	limit := sv.ClusterCache
	if limit <= 0 {
		limit = DefaultClusterCache
	}
	sv.held.Weigh(e, len(e.Value.rows), limit)
}

// clusterFullBounds returns ClusterFullEvery and ClusterFullAfter with
// their defaults.
func (sv *Service) clusterFullBounds() (int, time.Duration) {
	every, after := sv.ClusterFullEvery, sv.ClusterFullAfter
	if every <= 0 {
		every = DefaultClusterFullEvery
	}
	if after <= 0 {
		after = DefaultClusterFullAfter
	}
	return every, after
}

// catchUp brings st up to the user's preferences as src holds them now
// and returns the version it holds. It reads every preference again when
// st holds nothing, when the user was forgotten and created again, when
// the count says a preference was deleted, when the parameters changed
// and after ClusterFullEvery clusterings or ClusterFullAfter; that last
// full read checks that the held preferences and their grouping are what
// the full read gives, counting any difference (ClusterStats' Mismatches)
// and keeping the full one. A user that does not exist leaves st empty
// and version 0.
func (sv *Service) catchUp(ctx context.Context, s memento.Scope, e *lru.Entry[*clusterState], src PreferencesSince, now time.Time) (int64, error) {
	st := e.Value
	c := sv.Config.withDefaults()
	minDot, _ := dbscanParams(c.Eps, c.MinPts)
	embedder := sv.Embedder.ID()
	held := !st.ver.Since.IsZero() && st.minDot == minDot && st.embedder == embedder
	every, after := sv.clusterFullBounds()
	check := held && (st.steps+1 >= every || time.Since(st.full) >= after)
	version := int64(-1) // every preference
	if held {
		version = st.ver.Version
	}
	read, err := src.PreferencesSince(ctx, s, version)
	if err != nil {
		return 0, err
	}
	if read.Version.Since.IsZero() { // forgotten (or never was)
		sv.drop(e)
		return 0, nil
	}
	fresh := version < 0
	if held && !read.Version.Since.Equal(st.ver.Since) {
		held = false
	}
	if held {
		for _, p := range read.Changed {
			st.apply(p)
		}
		held = len(st.rows) == read.Total // else one was deleted
	}
	if held && check {
		full, err := src.PreferencesSince(ctx, s, -1)
		if err != nil {
			sv.drop(e)
			return 0, err
		}
		if full.Version.Version == read.Version.Version && full.Version.Since.Equal(read.Version.Since) {
			sv.checkHeld(s, st, full, now)
		}
		read, fresh = full, true
	} else if !held && !fresh {
		if read, err = src.PreferencesSince(ctx, s, -1); err != nil {
			sv.drop(e)
			return 0, err
		}
		fresh = true
	}
	if fresh {
		sv.fullReads.Add(1)
		st.reset(read.Changed, embedder, minDot)
		st.steps, st.full = 0, time.Now()
	} else {
		sv.incrementalReads.Add(1)
		st.steps++
	}
	st.ver = read.Version
	sv.resize(e)
	return read.Version.Version, nil
}

// reset makes st hold prefs (in the order given) and links them all.
func (st *clusterState) reset(prefs []memento.Preference, embedder string, minDot float32) {
	st.rows = make([]memento.Preference, 0, len(prefs))
	st.slot = make(map[string]int32, len(prefs))
	st.near = make([][]int32, len(prefs))
	st.embedder, st.minDot = embedder, minDot
	for _, p := range prefs {
		p.Sources, p.Cluster = nil, nil
		st.slot[p.ID] = int32(len(st.rows))
		st.rows = append(st.rows, p)
	}
	// The embedder's vectors, linked through the pruning index DBSCAN
	// uses: only the pairs it cannot rule out are compared.
	var slots []int32
	var vectors [][]float32
	for i, p := range st.rows {
		if p.Embedder == embedder {
			slots = append(slots, int32(i))
			vectors = append(vectors, p.Vector)
		}
	}
	if len(vectors) < 2 {
		return
	}
	ix := newPairIndex(vectors, minDot, len(vectors) < 1000, 1)
	ix.forEachCandidate(1, func(i, j int32) {
		if ix.near(i, j) {
			a, b := slots[i], slots[j]
			st.near[a] = append(st.near[a], b)
			st.near[b] = append(st.near[b], a)
		}
	})
}

// apply holds p as written now: a new preference is linked with the
// others, a rewritten one relinked when its vector or embedder changed.
func (st *clusterState) apply(p memento.Preference) {
	p.Sources, p.Cluster = nil, nil
	i, ok := st.slot[p.ID]
	if ok {
		old := st.rows[i]
		st.rows[i] = p
		if old.Embedder == p.Embedder && slices.Equal(old.Vector, p.Vector) {
			return // the same neighbours
		}
		for _, j := range st.near[i] {
			st.near[j] = slices.DeleteFunc(st.near[j], func(k int32) bool { return k == i })
		}
		st.near[i] = st.near[i][:0]
	} else {
		i = int32(len(st.rows))
		st.slot[p.ID] = i
		st.rows = append(st.rows, p)
		st.near = append(st.near, nil)
	}
	if p.Embedder != st.embedder {
		return
	}
	for j, q := range st.rows {
		if int32(j) != i && q.Embedder == st.embedder && within(p.Vector, q.Vector, st.minDot) {
			st.near[i] = append(st.near[i], int32(j))
			st.near[int32(j)] = append(st.near[int32(j)], i)
		}
	}
}

// group returns the user's live preferences at now (of st's embedder, not
// faded, with their effective weights), in the store's order, and their
// groups as Config.Group forms them: DBSCAN over the held neighbour lists.
func (sv *Service) group(st *clusterState, now time.Time) ([]memento.Preference, [][]int) {
	var slots []int32
	weights := make([]float64, len(st.rows))
	for i := range st.rows {
		if w, ok := sv.effective(&st.rows[i], st.embedder, now); ok {
			slots = append(slots, int32(i))
			weights[i] = w
		}
	}
	// The store lists preferences by first seen, then id.
	slices.SortFunc(slots, func(a, b int32) int {
		return cmp.Or(st.rows[a].FirstSeen.Compare(st.rows[b].FirstSeen), strings.Compare(st.rows[a].ID, st.rows[b].ID))
	})
	live := make([]memento.Preference, len(slots))
	pos := make([]int32, len(st.rows))
	for i := range pos {
		pos[i] = -1
	}
	for k, i := range slots {
		live[k] = st.rows[i]
		live[k].EffectiveWeight = weights[i]
		pos[i] = int32(k)
	}
	c := sv.Config.withDefaults()
	_, minPts := dbscanParams(c.Eps, c.MinPts)
	labels := regionDBSCAN(len(live), minPts, func(p int) []int {
		out := []int{p}
		for _, j := range st.near[slots[p]] {
			if q := pos[j]; q >= 0 {
				out = append(out, int(q))
			}
		}
		slices.Sort(out)
		return out
	})
	return live, groupsOf(labels)
}

// checkHeld compares what st holds, brought up to full's version by
// incremental reads, with the full read of the same version: the same
// preferences, and the same groups at now. A difference is counted
// (ClusterStats' Mismatches) and logged; the caller then keeps the full
// read.
func (sv *Service) checkHeld(s memento.Scope, st *clusterState, full *memento.PreferencesRead, now time.Time) {
	same := len(full.Changed) == len(st.rows)
	for _, p := range full.Changed {
		i, ok := st.slot[p.ID]
		if !same || !ok || !samePreference(st.rows[i], p) {
			same = false
			break
		}
	}
	if same {
		held, groups := sv.group(st, now)
		live := make([]memento.Preference, 0, len(full.Changed))
		for _, p := range full.Changed {
			if w, ok := sv.effective(&p, st.embedder, now); ok {
				p.EffectiveWeight = w
				live = append(live, p)
			}
		}
		same = slices.EqualFunc(groupIDs(held, groups), groupIDs(live, sv.Config.Group(live)), slices.Equal)
	}
	if !same {
		sv.mismatches.Add(1)
		sv.logger().Warn("incremental clustering differs from a full read; keeping the full read",
			"tenant", s.Tenant, "user", s.User, "version", full.Version.Version)
	}
}

// samePreference reports whether a held preference is the stored one, in
// everything clustering reads.
func samePreference(a, b memento.Preference) bool {
	return a.ID == b.ID && a.Concept == b.Concept && a.Kind == b.Kind && a.Evidence == b.Evidence &&
		math.Float64bits(a.Weight) == math.Float64bits(b.Weight) && a.Embedder == b.Embedder &&
		a.FirstSeen.Equal(b.FirstSeen) && a.LastSeen.Equal(b.LastSeen) &&
		slices.EqualFunc(a.Vector, b.Vector, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

// groupIDs names the members of each group by id.
func groupIDs(prefs []memento.Preference, groups [][]int) [][]string {
	out := make([][]string, len(groups))
	for g, idx := range groups {
		for _, i := range idx {
			out[g] = append(out[g], prefs[i].ID)
		}
	}
	return out
}
