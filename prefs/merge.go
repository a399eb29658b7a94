package prefs

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/memento-ai/memento"
)

// Evidence is one statement about a concept, embedded: "I love heist films"
// is {Concept: "heist", Sign: +1, Strength: 1}. Vector embeds the concept
// alone, never the sentence, so "I like X" and "I don't like X" land on the
// same memory.
type Evidence struct {
	Concept  string
	Vector   []float32
	Sign     int
	Strength float64
	Kind     string
	// At is when the statement was made; its age counts from then.
	At time.Time
}

// EvidenceOf pairs extracted concepts with their vectors, stamped with at.
// Concepts without a sign or strength are left out.
func EvidenceOf(concepts []memento.Concept, vectors [][]float32, at time.Time) []Evidence {
	out := make([]Evidence, 0, len(concepts))
	for i, c := range concepts {
		if i >= len(vectors) || c.Sign == 0 || !(c.Strength > 0) || strings.TrimSpace(c.Concept) == "" {
			continue
		}
		out = append(out, Evidence{Concept: c.Concept, Vector: vectors[i], Sign: c.Sign, Strength: c.Strength, Kind: c.Kind, At: at})
	}
	return out
}

// Merge decides what the evidence of one source (a message or event id)
// changes in current, a user's stored preferences of one embedder. It is
// pure, so the store can run it inside its write transaction.
//
// Each piece of evidence goes to the most similar memory of the same kind
// when their similarity is at least MergeThreshold (an identical concept
// always matches), and otherwise becomes a new memory with weight sign ×
// strength. A memory takes at most one piece of evidence per source.
// Reinforcing first decays the stored weight to the later of the memory's
// last reinforcement and the evidence's time, and the evidence itself by
// its age at that moment (a statement processed late counts less), then:
//
//   - evidence of the same sign adds its strength, scaled by how far the
//     weight still is from MaxWeight: w + s·a·(1 - |w|/MaxWeight);
//   - opposite evidence pulls the weight towards its own sign in proportion
//     to its strength: w·(1 - a) + s·a, so "I love it now" (a = 1) replaces
//     an old dislike outright and a mild remark only weakens it;
//   - opposite evidence older than the memory's newest statement (jobs of
//     one user may run out of order) only weakens it, by half of what the
//     same-sign rule would add, w + s·a·(1 - |w|/MaxWeight)/2, so it never
//     overrides what the user said after it.
//
// The memory's age restarts at that moment, its evidence count grows by
// one and the source joins its sources (the newest MaxPreferenceSources
// are kept). Concept text, kind and vector stay those of the first
// statement.
func (c Config) Merge(current []memento.Preference, source, embedder string, evidence []Evidence) memento.PreferenceChanges {
	c = c.withDefaults()
	var changes memento.PreferenceChanges
	// work points into current until evidence changes a memory, which is
	// then copied (with its sources) and changed in the copy: current is
	// left as it was, and a merge that changes few of many memories
	// copies only those.
	work := make([]*memento.Preference, len(current))
	for i := range current {
		work[i] = &current[i]
	}
	inserted := map[*memento.Preference]bool{}
	touched := map[*memento.Preference]bool{}
	for _, ev := range evidence {
		if ev.Sign == 0 || !(ev.Strength > 0) || strings.TrimSpace(ev.Concept) == "" || len(ev.Vector) == 0 {
			continue
		}
		kind := ev.Kind
		if kind != memento.KindFact {
			kind = memento.KindTaste
		}
		sign := 1.0
		if ev.Sign < 0 {
			sign = -1
		}
		strength := math.Min(ev.Strength, 1)
		best, bestSim, at := (*memento.Preference)(nil), -2.0, -1
		for i, p := range work {
			if p.Kind != kind || len(p.Vector) != len(ev.Vector) {
				continue
			}
			sim := float64(Dot(p.Vector, ev.Vector))
			if strings.EqualFold(strings.TrimSpace(p.Concept), strings.TrimSpace(ev.Concept)) {
				sim = 1
			}
			if sim > bestSim {
				best, bestSim, at = p, sim, i
			}
		}
		if best == nil || bestSim < c.MergeThreshold {
			p := &memento.Preference{
				Concept: strings.TrimSpace(ev.Concept), Weight: sign * strength, Kind: kind, Evidence: 1,
				Sources: sourceList(nil, source), FirstSeen: ev.At, LastSeen: ev.At, Embedder: embedder, Vector: ev.Vector,
			}
			work = append(work, p)
			inserted[p] = true
			touched[p] = true
			continue
		}
		if touched[best] {
			continue // one piece of evidence per memory and source
		}
		// Untouched, so still current's: changed in a copy from here on.
		own := *best
		own.Sources = slices.Clone(best.Sources)
		best, work[at] = &own, &own
		touched[best] = true
		c.reinforce(best, sign, strength, ev.At, source)
	}
	for _, p := range work {
		switch {
		case inserted[p]:
			changes.Insert = append(changes.Insert, *p)
		case touched[p]:
			changes.Update = append(changes.Update, *p)
		}
	}
	return changes
}

// reinforce applies one piece of evidence to p, as Merge documents.
func (c Config) reinforce(p *memento.Preference, sign, strength float64, at time.Time, source string) {
	ref := p.LastSeen
	if at.After(ref) {
		ref = at
	}
	w := c.Decay.Effective(p.Weight, p.Kind, p.LastSeen, ref)
	a := c.Decay.Effective(strength, p.Kind, at, ref)
	w = math.Max(-c.MaxWeight, math.Min(c.MaxWeight, w))
	switch {
	case w == 0 || math.Signbit(w) == math.Signbit(sign):
		w += sign * a * (1 - math.Abs(w)/c.MaxWeight)
	case at.Before(p.LastSeen):
		// A statement older than the memory's newest one, processed
		// late: it must not override what the user said after it.
		w += sign * a * (1 - math.Abs(w)/c.MaxWeight) / 2
	default:
		w = w*(1-a) + sign*a
	}
	p.Weight = math.Max(-c.MaxWeight, math.Min(c.MaxWeight, w))
	p.LastSeen = ref
	p.Evidence++
	p.Sources = sourceList(p.Sources, source)
}

// sourceList adds source to sources unless it is there or empty, keeping
// the newest MaxPreferenceSources.
func sourceList(sources []string, source string) []string {
	if source != "" && !slices.Contains(sources, source) {
		sources = append(sources, source)
	}
	if len(sources) > memento.MaxPreferenceSources {
		sources = slices.Clone(sources[len(sources)-memento.MaxPreferenceSources:])
	}
	if sources == nil {
		sources = []string{}
	}
	return sources
}
