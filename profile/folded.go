package profile

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/internal/lru"
)

// UserEventsSince is what a store offers for incremental profile
// recomputes; *sqlite.DB and *postgres.DB have it. Without it, or with
// custom Learners (which may read Input.Events), every recompute reads
// all of the user's events.
type UserEventsSince interface {
	// UserEventsSince returns the user's events added after mark (0: all
	// of them) in the order they happened, the mark of the read, the
	// number of the user's events and when the user was created.
	UserEventsSince(ctx context.Context, s memento.Scope, mark int64) (*memento.UserEvents, error)
}

// DefaultProfileCache is the default of Worker.ProfileCache.
const DefaultProfileCache = 1 << 18

// FoldStats is what a worker holds of users' events between profile
// recomputes, and how its recomputes read them (Worker.FoldStats).
type FoldStats struct {
	// Users and Events are the users and their events held now.
	Users  int `json:"users"`
	Events int `json:"events"`
	// FullReads counts recomputes that read every event of their user;
	// FoldedReads those that read only the events added since the last.
	FullReads   int64 `json:"fullReads"`
	FoldedReads int64 `json:"foldedReads"`
	// Evictions counts users dropped to stay within ProfileCache.
	Evictions int64 `json:"evictions"`
	// Mismatches is ProfileMismatches.
	Mismatches int64 `json:"mismatches"`
}

// FoldStats returns the worker's figures of incremental profile
// recomputes.
func (w *Worker) FoldStats() FoldStats {
	users, events, evictions := w.folds.Stats()
	return FoldStats{Users: users, Events: events, FullReads: w.fullReads.Load(),
		FoldedReads: w.foldedReads.Load(), Evictions: evictions, Mismatches: w.ProfileMismatches.Load()}
}

// folded is what a worker keeps of one user between recomputes: the
// judgements folded from their events up to an events mark, the catalog's
// records of the judged titles, and the profile as last saved. A
// recompute reads the events added since the mark, folds them in and
// learns from the judgements, so its reads and its fold grow with the new
// events, not with the user's history.
type folded struct {
	mu sync.Mutex // one recompute of the user at a time

	g       *judger // nil until the first read
	titles  map[string]*memento.Title
	mark    int64
	created time.Time // the user's, at the first read
	profile *memento.Profile
	// steps counts the recomputes since the last that read every event,
	// at full.
	steps int
	full  time.Time
}

// foldedFor returns the user's entry in the worker's folds, its folded
// state made empty when the worker holds none.
func (w *Worker) foldedFor(s memento.Scope) *lru.Entry[*folded] {
	return w.folds.Get(s.Tenant+"\x1f"+s.User, func() *folded { return &folded{} })
}

// resize records that e's user holds events folded events and drops the
// users recomputed least recently while the worker holds more than
// ProfileCache (e's user itself stays, however many it holds).
func (w *Worker) resize(e *lru.Entry[*folded], events int) {
	limit := w.ProfileCache
	if limit <= 0 {
		limit = DefaultProfileCache
	}
	w.folds.Weigh(e, events, limit)
}

// recomputeFolded is Recompute from the events added since the user's
// last recompute. It reads every event again when the worker holds
// nothing of the user, when the user was forgotten and created again,
// when an event is older than the newest folded (its place in the fold is
// taken), when the events held and read fall short of the user's (row
// numbers used again, or a write that committed behind a later mark) and
// after FullEvery recomputes or FullAfter; that last full read checks
// that the folded judgements learn what the full one learns, counting
// any difference in ProfileMismatches and keeping the full one.
func (w *Worker) recomputeFolded(ctx context.Context, s memento.Scope, src UserEventsSince) (*memento.Profile, error) {
	e := w.foldedFor(s)
	f := e.Value
	f.mu.Lock()
	defer f.mu.Unlock()
	fullEvery, fullAfter := w.profileFullBounds()
	check := f.g != nil && (f.steps+1 >= fullEvery || time.Since(f.full) >= fullAfter)
	mark := f.mark
	if f.g == nil || check {
		mark = 0
	}
	read, err := src.UserEventsSince(ctx, s, mark)
	if err != nil {
		return nil, err
	}
	if read.Created.IsZero() { // forgotten (or never was): nothing to keep
		w.folds.Drop(e)
		return w.recomputeAll(ctx, s)
	}
	fresh := mark == 0
	if !fresh && !f.continues(read) {
		if read, err = src.UserEventsSince(ctx, s, 0); err != nil {
			w.folds.Drop(e)
			return nil, err
		}
		fresh = true
	}
	title := w.titleFunc(ctx)
	if fresh && check && f.g != nil && f.created.Equal(read.Created) {
		w.checkFold(s, f, read, title)
	}
	if fresh {
		w.fullReads.Add(1)
		f.g, f.titles, f.created, f.steps, f.full = &judger{}, map[string]*memento.Title{}, read.Created, 0, time.Now()
		f.profile = nil
	} else {
		w.foldedReads.Add(1)
		f.steps++
	}
	titled := len(f.g.out)
	f.g.add(read.Events)
	lookUpTitles(f.titles, f.g.out[titled:], title)
	f.mark = read.Mark
	w.resize(e, len(f.g.seqID))

	before := f.profile
	if before == nil {
		if before, err = w.Profiles.Profile(ctx, s); err != nil {
			return nil, err
		}
	}
	if len(f.g.seqID) == 0 && len(before.Keys) == 0 {
		f.profile = before
		return before, nil // nothing to learn
	}
	_, release, err := memento.Compute(ctx)
	if err != nil {
		return nil, err
	}
	keys, err := Learn(f.g.input(f.titles), DefaultLearners())
	release()
	if err != nil {
		w.folds.Drop(e)
		return nil, err
	}
	p, err := w.saveLearned(ctx, s, keys, before)
	if err != nil {
		f.profile = nil // read it again next time
		return nil, err
	}
	kept := *p
	kept.Keys = maps.Clone(p.Keys)
	f.profile = &kept
	return p, nil
}

// continues reports whether read carries on from what f folded: the same
// user, no event older than the newest folded, and every event of the
// user either folded or read.
func (f *folded) continues(read *memento.UserEvents) bool {
	if !f.created.Equal(read.Created) || len(f.g.seqID)+len(read.Events) != read.Total {
		return false
	}
	return len(read.Events) == 0 || !read.Events[0].At.Before(f.g.last)
}

// checkFold compares what the judgements f folded, carried on with the
// events of all (every event of the user) that f has not folded, learn
// with what all folded from scratch learns. A difference is a bug: it
// is counted and logged, and the caller keeps the fold from scratch.
func (w *Worker) checkFold(s memento.Scope, f *folded, all *memento.UserEvents, title func(string) (*memento.Title, bool)) {
	n := len(f.g.seqID)
	same := n <= len(all.Events) && (n == len(all.Events) || !all.Events[n].At.Before(f.g.last))
	for i := 0; same && i < n; i++ {
		same = f.g.seqID[i] == all.Events[i].ID
	}
	if !same {
		// Events the fold never saw (written behind its mark): a full read
		// of its own would have been taken.
		return
	}
	inc := f.g.clone()
	inc.add(all.Events[n:])
	// Both learn with the titles the fold looked up (and those of its
	// new judgements): a title the catalog changed since is not the
	// fold's mistake, and the caller's fresh fold looks every one up.
	titles := maps.Clone(f.titles)
	lookUpTitles(titles, inc.out, title)
	got, err1 := Learn(inc.input(titles), DefaultLearners())
	var scratch judger
	scratch.add(all.Events)
	want, err2 := Learn(scratch.input(titles), DefaultLearners())
	if err1 != nil || err2 != nil || sameKeys(got, want) {
		return
	}
	w.ProfileMismatches.Add(1)
	w.logger().Error("profile: folded judgements learned other keys than a full read", "tenant", s.Tenant, "user", s.User, "events", len(all.Events))
}

// sameKeys reports whether two sets of learned keys are equal.
func sameKeys(a, b map[string]memento.ProfileEntry) bool {
	return maps.EqualFunc(a, b, func(x, y memento.ProfileEntry) bool {
		return x.Source == y.Source && bytes.Equal(x.Value, y.Value) && slices.Equal(x.Evidence, y.Evidence)
	})
}

// profileFullBounds are FullEvery and FullAfter with their defaults.
func (w *Worker) profileFullBounds() (int, time.Duration) {
	every, after := w.FullEvery, w.FullAfter
	if every <= 0 {
		every = 500
	}
	if after <= 0 {
		after = 10 * time.Minute
	}
	return every, after
}
