package prefs

import (
	"math"
	"regexp"
	"strings"
	"unicode"

	"github.com/memento-ai/memento"
)

// Strengths of the concepts a title contributes through an event, relative
// to the event's own strength: genres and the plot's descriptor say most
// about a taste, a cast member a little less (people act in films of every
// kind).
const (
	eventGenreFactor  = 1.0
	eventPlotFactor   = 0.8
	eventPersonFactor = 0.7
	// MaxEventPeople is how many top-billed cast members an event
	// contributes.
	MaxEventPeople = 3
)

// EventStrength returns the signed strength of the taste an event shows for
// its title, 0 for events that show none. Liking and disliking are clear
// but single signals (±0.6); a rating maps 5 to +1 and 1 to -1 ((v-3)/2,
// ignored between 2.5 and 3.5, where it says little either way); abandoning
// a title is a mild dislike, milder the more of it was watched. Watching,
// finishing, skipping and watch-listing are left to the profile's
// learners: they say more about habits than about taste.
func EventStrength(e memento.Event) float64 {
	switch e.Type {
	case memento.EventLiked:
		return 0.6
	case memento.EventDisliked:
		return -0.6
	case memento.EventRated:
		if e.Value == nil {
			return 0
		}
		s := math.Max(-1, math.Min(1, (*e.Value-3)/2))
		if math.Abs(s) < 0.25 {
			return 0
		}
		return s
	case memento.EventAbandoned:
		s := -0.3
		if e.Value != nil {
			s *= 1 - math.Max(0, math.Min(1, *e.Value))
		}
		if math.Abs(s) < 0.05 {
			return 0
		}
		return s
	}
	return 0
}

// FromEvent returns the preference concepts an event about title t
// contributes: each of its genres, its top-billed cast members and its
// plot's descriptor (the words before "film" in a catalog overview such as
// "Heat is a 1995 American crime thriller film ..." give "crime thriller"),
// all with the event's sign. Events that show no taste give none.
func FromEvent(e memento.Event, t memento.Title) []memento.Concept {
	s := EventStrength(e)
	if s == 0 {
		return nil
	}
	sign, a := 1, math.Abs(s)
	if s < 0 {
		sign = -1
	}
	var out []memento.Concept
	seen := map[string]bool{}
	add := func(concept string, factor float64) {
		concept = strings.Join(strings.Fields(strings.ToLower(concept)), " ")
		if concept == "" || seen[concept] {
			return
		}
		seen[concept] = true
		out = append(out, memento.Concept{Concept: concept, Sign: sign, Strength: math.Round(a*factor*100) / 100, Kind: memento.KindTaste})
	}
	for _, g := range t.Genres {
		add(g, eventGenreFactor)
	}
	if d := PlotDescriptor(t.Overview); d != "" {
		add(d, eventPlotFactor)
	}
	for i, p := range t.Cast {
		if i == MaxEventPeople {
			break
		}
		add(p, eventPersonFactor)
	}
	return out
}

// descriptorRE finds "is a ... film" in an overview's first sentence.
var descriptorRE = regexp.MustCompile(`(?i)\b(?:is|was|are|were)\s+(?:an?|the)\s+(.{1,120}?)\s+(?:feature\s+)?(?:film|movie|motion picture|picture|series|miniseries|documentary|sitcom|short)\b`)

// descriptorNoise are words of a descriptor that say nothing about the plot.
var descriptorNoise = map[string]bool{
	"upcoming": true, "independent": true, "feature": true, "feature-length": true, "low-budget": true,
	"big-budget": true, "silent": true, "sound": true, "black-and-white": true, "color": true, "colour": true,
	"television": true, "tv": true, "made-for-television": true, "theatrical": true, "english-language": true,
	"american": true, "british": true, "and": true, "or": true, "of": true, "the": true, "a": true, "an": true,
}

// PlotDescriptor returns the words a catalog overview uses to say what
// kind of story a title is ("heist action comedy thriller"), without years,
// nationalities, names and production details, or "" when the overview
// has no such phrase.
func PlotDescriptor(overview string) string {
	first := overview
	if i := strings.Index(first, ". "); i > 0 {
		first = first[:i]
	}
	m := descriptorRE.FindStringSubmatch(first)
	if m == nil {
		return ""
	}
	var kept []string
	for _, w := range strings.Fields(m[1]) {
		w = strings.Trim(w, ",;:()\"'")
		if w == "" {
			continue
		}
		r := []rune(w)
		if unicode.IsUpper(r[0]) || unicode.IsDigit(r[0]) || descriptorNoise[strings.ToLower(w)] {
			continue
		}
		kept = append(kept, strings.ToLower(w))
	}
	if len(kept) == 0 || len(kept) > 5 {
		return ""
	}
	return strings.Join(kept, " ")
}

// EventJobs returns the preference job of a stored event, none for events
// that show no taste. Stores call it (through their jobsFor) in the
// transaction that stores the event.
func EventJobs(s memento.Scope, e memento.Event) []memento.JobRequest {
	if EventStrength(e) == 0 {
		return nil
	}
	return []memento.JobRequest{{Kind: memento.JobPreferencesFromEvents, ByUser: true,
		Payload: memento.PreferenceEventJob{Tenant: s.Tenant, User: s.User, Event: e}}}
}

// MessageJobs returns the preference job of a stored message: user
// messages only, since what the agent says is not the user's taste.
func MessageJobs(s memento.Scope, thread string, m memento.Message) []memento.JobRequest {
	if m.Role != memento.RoleUser {
		return nil
	}
	return []memento.JobRequest{{Kind: memento.JobPreferences, Payload: memento.MessageJob{
		Tenant: s.Tenant, User: s.User, Thread: thread, Message: m.ID, Seq: m.Seq,
	}}}
}
