package sqlite

import (
	"cmp"
	"slices"
	"time"

	"github.com/memento-ai/memento"
)

// What a write waited behind.
//
// A write somebody waits on (an append's acknowledgement) waits first for
// the writer to finish what it is running, and that wait is most of the
// acknowledgements' tail while the background keeps the writer busy
// (memento.WriteTimes.Waited). Which of the writer's work it waited for
// says what to make shorter. The committer therefore keeps its latest
// stretches of work, each named (a write by its store operation, as in
// WriterStats.ByWrite; the writer's own checkpoint; taking the connection
// and beginning; a commit), and when it begins a request whose caller
// asked for its times it splits the request's wait by them
// (memento.WriteTimes.Behind). The stretches follow one another on the
// committer's goroutine, which alone reads and writes them.

// Names of the writer's work that is not a write.
const (
	spanCheckpoint = "checkpoint" // the writer's own checkpoint, and the look at whether one is due
	spanConnection = "connection" // taking the writer's connection and BEGIN
	spanCommit     = "commit"     // a batch's COMMIT
	spanCommitter  = "committer"  // between those: answering, taking requests, waiting for a processor
	spanEarlier    = "unrecorded" // before the oldest stretch kept
	spanOther      = "other"      // the kinds beyond those a split keeps apart
)

// timelineSpans is how many of its latest stretches the committer keeps:
// some hundreds of milliseconds of a busy writer's work, more than a
// write waits.
const timelineSpans = 2048

// span is a stretch of the writer's work.
type span struct {
	what     string
	from, to time.Time
}

// timeline is the writer's latest stretches of work, oldest overwritten.
type timeline struct {
	spans [timelineSpans]span
	n     int // stretches added
}

// add records a stretch of work what from from to to, which began after
// the last one recorded ended.
func (t *timeline) add(what string, from, to time.Time) {
	t.spans[t.n%timelineSpans] = span{what, from, to}
	t.n++
}

// behind splits the time from from to to by what the writer did
// meanwhile and returns the three largest parts, largest first. The time
// no stretch covers is the committer's own; that before the oldest
// stretch kept is unrecorded.
func (t *timeline) behind(from, to time.Time) [3]memento.WaitPart {
	var parts [16]memento.WaitPart
	k := 0
	put := func(what string, d time.Duration) {
		if d <= 0 {
			return
		}
		for i := range k {
			if parts[i].What == what {
				parts[i].D += d
				return
			}
		}
		if k == len(parts)-1 { // the last slot gathers the rest
			parts[k].What = spanOther
			parts[k].D += d
			return
		}
		parts[k] = memento.WaitPart{What: what, D: d}
		k++
	}
	var covered time.Duration
	oldest := to // the start of the oldest stretch met
	i := t.n - 1
	for ; i >= 0 && i >= t.n-timelineSpans; i-- {
		s := t.spans[i%timelineSpans]
		if !s.to.After(from) {
			break
		}
		lo, hi := s.from, s.to
		if lo.Before(from) {
			lo = from
		}
		if hi.After(to) {
			hi = to
		}
		if hi.After(lo) {
			put(s.what, hi.Sub(lo))
			covered += hi.Sub(lo)
		}
		oldest = s.from
	}
	if i >= 0 && i < t.n-timelineSpans && oldest.After(from) {
		// The ring ran out before the wait's beginning.
		d := oldest.Sub(from)
		put(spanEarlier, d)
		covered += d
	}
	put(spanCommitter, to.Sub(from)-covered)
	all := parts[:k]
	if parts[len(parts)-1].What != "" {
		all = parts[:]
	}
	slices.SortFunc(all, func(a, b memento.WaitPart) int { return cmp.Or(cmp.Compare(b.D, a.D), cmp.Compare(a.What, b.What)) })
	var top [3]memento.WaitPart
	copy(top[:], all)
	return top
}
