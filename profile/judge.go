package profile

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/memento-ai/memento"
)

// Judgement is what a user's events say about one title, with conflicts
// resolved by recency: the newest explicit opinion (liked, disliked or a
// rating) is the user's opinion, whatever came before it. Every learner
// reads judgements rather than raw events, so they all agree on what the
// user thinks.
type Judgement struct {
	TitleID string
	// Sentiment is the user's opinion from -1 (hated) to +1 (loved), 0 for
	// none: liked is +1, disliked -1, a rating r is (r-3)/2 (so 5 is +1,
	// 4 is +0.5, 3 is neutral, 1 is -1). Without an explicit opinion a
	// title the user finished counts +0.3, one they watched +0.2, one
	// they abandoned after a fraction f -0.5*(1-f) (-0.25 without f) and
	// one they skipped -0.2.
	Sentiment float64
	// Explicit is true when Sentiment comes from liked, disliked or rated.
	Explicit bool
	// At is when the user last said or did something that set Sentiment
	// (the time of the opinion that counts), or of their last event.
	At time.Time
	// Seen is true once the user watched, finished, abandoned, rated,
	// liked or disliked the title.
	Seen bool
	// Watchlisted is true when the newest watchlisted event is later than
	// every event that marks the title seen.
	Watchlisted   bool
	WatchlistedAt time.Time
	// Watches counts the watched and finished events.
	Watches int
	// Started is true once the user watched, finished or abandoned it;
	// Abandoned when the newest of those events is abandoned.
	Started   bool
	Abandoned bool
	// Skipped is true when the user skipped it and never saw it.
	Skipped bool
	// FirstSeen is the time of the first event that marks it seen.
	FirstSeen time.Time
	// Evidence lists the ids of the title's events, oldest first.
	Evidence []string
}

// Judge folds a user's events into one judgement per title, in the order
// of the titles' first events. Events are taken in time order (ties in the
// order given), so callers may pass them as stored.
func Judge(events []memento.Event) []Judgement {
	var g judger
	g.add(sortedByTime(events))
	return g.judgements()
}

// sortedByTime returns a copy of events in time order, ties in the order
// given.
func sortedByTime(events []memento.Event) []memento.Event {
	events = slices.Clone(events)
	slices.SortStableFunc(events, func(a, b memento.Event) int { return a.At.Compare(b.At) })
	return events
}

// judger folds events into judgements one event at a time, keeping what
// the fold needs to go on, so a user's judgements are updated from their
// new events alone (Worker.Recompute) and equal Judge over every event
// as long as the new events are not older than the last one folded.
type judger struct {
	index map[string]int32 // title id -> its place in out
	out   []Judgement      // as folded so far; judgements finishes them
	// implicits is the sentiment and time of the newest implicit opinion
	// (watched, finished, abandoned, skipped) of each title, which counts
	// when the user gave no explicit one; lastSeen the time of each
	// title's newest event that marks it seen.
	implicits []implicit
	lastSeen  []time.Time
	// seqTitle and seqID are every folded event's title (its place in
	// out) and id, in the order folded: what Input.evidence reads.
	seqTitle []int32
	seqID    []string
	last     time.Time // the time of the newest event folded
}

type implicit struct {
	sentiment float64
	at        time.Time
	ok        bool
}

// add folds events, which must be in time order and no older than the
// events folded before.
func (g *judger) add(events []memento.Event) {
	if g.index == nil {
		g.index = map[string]int32{}
	}
	for _, e := range events {
		i, ok := g.index[e.TitleID]
		if !ok {
			i = int32(len(g.out))
			g.index[e.TitleID] = i
			g.out = append(g.out, Judgement{TitleID: e.TitleID})
			g.implicits = append(g.implicits, implicit{})
			g.lastSeen = append(g.lastSeen, time.Time{})
		}
		g.seqTitle = append(g.seqTitle, i)
		g.seqID = append(g.seqID, e.ID)
		g.last = e.At
		j := &g.out[i]
		if e.ID != "" {
			j.Evidence = append(j.Evidence, e.ID)
		}
		seen := false
		switch e.Type {
		case memento.EventLiked:
			j.Sentiment, j.Explicit, j.At, seen = 1, true, e.At, true
		case memento.EventDisliked:
			j.Sentiment, j.Explicit, j.At, seen = -1, true, e.At, true
		case memento.EventRated:
			if e.Value != nil {
				j.Sentiment, j.Explicit, j.At = RatingSentiment(*e.Value), true, e.At
			}
			seen = true
		case memento.EventWatched:
			j.Watches++
			j.Started, j.Abandoned, seen = true, false, true
			g.implicits[i] = implicit{0.2, e.At, true}
		case memento.EventFinished:
			j.Watches++
			j.Started, j.Abandoned, seen = true, false, true
			g.implicits[i] = implicit{0.3, e.At, true}
		case memento.EventAbandoned:
			j.Started, j.Abandoned, seen = true, true, true
			s := -0.25
			if e.Value != nil {
				s = -0.5 * (1 - clamp(*e.Value, 0, 1))
			}
			g.implicits[i] = implicit{s, e.At, true}
		case memento.EventWatchlisted:
			j.Watchlisted, j.WatchlistedAt = true, e.At
		case memento.EventSkipped:
			if !j.Seen {
				j.Skipped = true
				g.implicits[i] = implicit{-0.2, e.At, true}
			}
		}
		if seen {
			if !j.Seen {
				j.FirstSeen = e.At
			}
			j.Seen, j.Skipped = true, false
			g.lastSeen[i] = e.At
			if j.Watchlisted && !j.WatchlistedAt.After(e.At) {
				j.Watchlisted = false
			}
		}
	}
}

// clone returns a copy of the fold that events may be added to without
// changing g.
func (g *judger) clone() *judger {
	c := *g
	c.out = slices.Clone(g.out)
	for i := range c.out {
		c.out[i].Evidence = slices.Clip(c.out[i].Evidence)
	}
	c.index = maps.Clone(g.index)
	c.implicits, c.lastSeen = slices.Clone(g.implicits), slices.Clone(g.lastSeen)
	c.seqTitle, c.seqID = slices.Clip(g.seqTitle), slices.Clip(g.seqID)
	return &c
}

// judgements returns the judgements folded so far, finished: a title
// without an explicit opinion takes its implicit one, and a title with
// neither the time of its last event. The fold is left as it was, so
// more events may be added after; the Evidence of the judgements returned
// must not be changed.
func (g *judger) judgements() []Judgement {
	out := slices.Clone(g.out)
	for i := range out {
		j := &out[i]
		if !j.Explicit && g.implicits[i].ok {
			j.Sentiment, j.At = g.implicits[i].sentiment, g.implicits[i].at
		}
		if j.At.IsZero() {
			j.At = latest(j.WatchlistedAt, g.lastSeen[i])
		}
		j.Evidence = slices.Clip(j.Evidence)
	}
	return out
}

// RatingSentiment maps a rating from 0.5 to 5 stars to a sentiment from -1
// to +1: (r-3)/2, clamped, so 3 stars is neutral.
func RatingSentiment(r float64) float64 { return clamp((r-3)/2, -1, 1) }

func clamp(v, lo, hi float64) float64 { return max(lo, min(hi, v)) }

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// byTime orders judgements by At, then by title id, so every list a learner
// writes has one order.
func byTime(a, b Judgement) int {
	if c := a.At.Compare(b.At); c != 0 {
		return c
	}
	return cmp.Compare(a.TitleID, b.TitleID)
}
