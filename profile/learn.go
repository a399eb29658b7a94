package profile

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/memento-ai/memento"
)

// The profile keys the default learners write. Their JSON values are
// documented on each learner; users may set any of them (PUT or PATCH),
// which makes the user's value stand against every later learning.
const (
	KeyPreferredGenres = "preferredGenres"
	KeyDislikedGenres  = "dislikedGenres"
	KeyEra             = "era"
	KeyFavouritePeople = "favouritePeople"
	KeyWatchlist       = "watchlist"
	KeySeen            = "seen"
	KeyLikedTitles     = "likedTitles"
	KeyDislikedTitles  = "dislikedTitles"
	KeyAbandonRate     = "abandonRate"
	KeyRewatcher       = "rewatcher"
	KeySkipped         = "skipped"
)

// GenreWeight is one genre of preferredGenres or dislikedGenres. Weight is
// in (0, 1]: 1 for the user's strongest genre of the list.
type GenreWeight struct {
	Genre  string  `json:"genre"`
	Weight float64 `json:"weight"`
}

// PersonWeight is one of favouritePeople, weighted like GenreWeight.
type PersonWeight struct {
	Name   string  `json:"name"`
	Weight float64 `json:"weight"`
}

// TitleWeight is one title of likedTitles or dislikedTitles: Weight is the
// strength of the opinion, in (0, 1].
type TitleWeight struct {
	ID     string  `json:"id"`
	Weight float64 `json:"weight"`
}

// Era is the typical release-year range of the titles a user likes.
type Era struct {
	From   int `json:"from"`
	To     int `json:"to"`
	Median int `json:"median"`
}

// Input is what a learner reads: the user's events in the order they
// happened, the judgements folded from them, and the catalog's record of
// each judged title the catalog knows.
type Input struct {
	// Events is nil when the input was folded incrementally (a Worker
	// with the default learners, which read judgements only).
	Events     []memento.Event
	Judgements []Judgement
	Titles     map[string]*memento.Title

	// index, seqTitle and seqID are the fold's (judger): each title's
	// place in Judgements, and every event's title and id in time order.
	index    map[string]int32
	seqTitle []int32
	seqID    []string
}

// NewInput prepares the learners' input from a user's events, looking
// their titles up with title (nil: no catalog, so learners that need
// genres, years or cast learn nothing).
func NewInput(events []memento.Event, title func(id string) (*memento.Title, bool)) *Input {
	events = sortedByTime(events)
	var g judger
	g.add(events)
	titles := map[string]*memento.Title{}
	lookUpTitles(titles, g.out, title)
	in := g.input(titles)
	in.Events = events
	return in
}

// lookUpTitles adds to titles the catalog's record of each judged title
// it does not hold yet.
func lookUpTitles(titles map[string]*memento.Title, judged []Judgement, title func(id string) (*memento.Title, bool)) {
	if title == nil {
		return
	}
	for _, j := range judged {
		if _, ok := titles[j.TitleID]; ok {
			continue
		}
		if t, ok := title(j.TitleID); ok {
			titles[j.TitleID] = t
		}
	}
}

// input is the learners' input from the events folded so far, without
// Events.
func (g *judger) input(titles map[string]*memento.Title) *Input {
	return &Input{Judgements: g.judgements(), Titles: titles, index: g.index, seqTitle: g.seqTitle, seqID: g.seqID}
}

// evidence returns the ids of the events about the titles in ids, oldest
// first.
func (in *Input) evidence(ids map[string]bool) []string {
	out := []string{}
	if in.seqTitle == nil { // an Input made by hand
		for _, e := range in.Events {
			if ids[e.TitleID] && e.ID != "" {
				out = append(out, e.ID)
			}
		}
		return out
	}
	picked := make([]bool, len(in.Judgements))
	for id := range ids {
		if i, ok := in.index[id]; ok && int(i) < len(picked) {
			picked[i] = true
		}
	}
	for k, i := range in.seqTitle {
		if picked[i] && in.seqID[k] != "" {
			out = append(out, in.seqID[k])
		}
	}
	return out
}

// Learner is a deterministic rule that turns a user's events into one
// profile key. Adding a learner means writing one such function and
// listing it in DefaultLearners.
type Learner struct {
	// Key is the profile key the learner writes.
	Key string
	// Learn returns the key's value (marshalled to JSON) and the ids of
	// the events that support it; ok is false when the events say nothing
	// about the key, which removes a learned value.
	Learn func(in *Input) (value any, evidence []string, ok bool)
}

// DefaultLearners returns the learners of the recommendation agent, in the
// order their keys are documented.
func DefaultLearners() []Learner {
	return []Learner{
		{KeyPreferredGenres, learnPreferredGenres},
		{KeyDislikedGenres, learnDislikedGenres},
		{KeyEra, learnEra},
		{KeyFavouritePeople, learnFavouritePeople},
		{KeyWatchlist, learnWatchlist},
		{KeySeen, learnSeen},
		{KeyLikedTitles, learnLikedTitles},
		{KeyDislikedTitles, learnDislikedTitles},
		{KeyAbandonRate, learnAbandonRate},
		{KeyRewatcher, learnRewatcher},
		{KeySkipped, learnSkipped},
	}
}

// Learn runs learners over the input and returns the learned keys, ready
// for memento.ProfileService.SaveLearned.
func Learn(in *Input, learners []Learner) (map[string]memento.ProfileEntry, error) {
	out := make(map[string]memento.ProfileEntry, len(learners))
	for _, l := range learners {
		v, evidence, ok := l.Learn(in)
		if !ok {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("learn %s: %w", l.Key, err)
		}
		if evidence == nil {
			evidence = []string{}
		}
		out[l.Key] = memento.ProfileEntry{Value: b, Source: memento.ProfileLearned, Evidence: evidence}
	}
	return out, nil
}

// round3 keeps three decimals, so learned values are short and stable.
func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// keyWeight is one entry of a learned, weighted list: a genre or a person.
type keyWeight struct {
	key    string
	weight float64
}

// weighKeys sums, per key of the judged titles the catalog knows (their
// genres, or their billed people, as keysOf says), the sentiment of those
// titles times sign, so positive and negative opinions cancel out. Of the
// keys whose sum and number of titles pass keep, it weighs each by its sum
// over the largest, drops weights under minWeight and returns at most n,
// strongest first (ties by key), with the events of their titles as
// evidence. ok is false when no key passes.
func weighKeys(in *Input, keysOf func(*memento.Title) []string, sign float64, keep func(sum float64, titles int) bool, minWeight float64, n int) (_ []keyWeight, evidence []string, ok bool) {
	// A key's sum takes every time a title lists it; its titles count
	// each title once.
	type tally struct {
		sum    float64
		titles int
	}
	tallies := map[string]tally{}
	for _, j := range in.Judgements {
		t, ok := in.Titles[j.TitleID]
		if !ok || j.Sentiment == 0 {
			continue
		}
		keys := keysOf(t)
		for i, k := range keys {
			tl := tallies[k]
			tl.sum += j.Sentiment * sign
			if !slices.Contains(keys[:i], k) {
				tl.titles++
			}
			tallies[k] = tl
		}
	}
	var top float64
	for _, tl := range tallies {
		if keep(tl.sum, tl.titles) {
			top = max(top, tl.sum)
		}
	}
	if top <= 0 {
		return nil, nil, false
	}
	var out []keyWeight
	for k, tl := range tallies {
		if w := tl.sum / top; keep(tl.sum, tl.titles) && w >= minWeight {
			out = append(out, keyWeight{key: k, weight: round3(w)})
		}
	}
	slices.SortFunc(out, func(a, b keyWeight) int {
		if c := cmp.Compare(b.weight, a.weight); c != 0 {
			return c
		}
		return cmp.Compare(a.key, b.key)
	})
	if len(out) > n {
		out = out[:n]
	}
	chosen := make(map[string]bool, len(out))
	for _, kw := range out {
		chosen[kw.key] = true
	}
	ids := map[string]bool{}
	for _, j := range in.Judgements {
		t, ok := in.Titles[j.TitleID]
		if !ok || j.Sentiment == 0 {
			continue
		}
		for _, k := range keysOf(t) {
			if chosen[k] {
				ids[j.TitleID] = true
				break
			}
		}
	}
	return out, in.evidence(ids), true
}

// learnPreferredGenres writes preferredGenres: the genres whose titles the
// user likes on balance (the sum of the sentiments of the judged titles of
// the genre is positive), weighted by that sum over the largest such sum,
// at most eight, strongest first, leaving out weights under 0.1. Evidence:
// the events of the judged titles of those genres.
func learnPreferredGenres(in *Input) (any, []string, bool) {
	return learnGenres(in, 1)
}

// learnDislikedGenres writes dislikedGenres: the genres whose titles the
// user dislikes on balance, weighted like preferredGenres by the size of
// the negative sum.
func learnDislikedGenres(in *Input) (any, []string, bool) {
	return learnGenres(in, -1)
}

func learnGenres(in *Input, sign float64) (any, []string, bool) {
	genres := func(t *memento.Title) []string { return t.Genres }
	onBalance := func(sum float64, _ int) bool { return sum > 0 }
	ranked, evidence, ok := weighKeys(in, genres, sign, onBalance, 0.1, 8)
	if !ok {
		return nil, nil, false
	}
	out := make([]GenreWeight, len(ranked))
	for i, kw := range ranked {
		out[i] = GenreWeight{Genre: kw.key, Weight: kw.weight}
	}
	return out, evidence, true
}

// learnEra writes era: the 10th, 90th and 50th percentiles (nearest rank)
// of the release years of the titles the user likes (positive sentiment),
// or, when fewer than three are liked, of every title they have seen.
// It needs three titles with a known year. Evidence: those titles' events.
func learnEra(in *Input) (any, []string, bool) {
	pick := func(ok func(Judgement) bool) ([]int, map[string]bool) {
		var years []int
		ids := map[string]bool{}
		for _, j := range in.Judgements {
			t, known := in.Titles[j.TitleID]
			if known && t.Year > 0 && ok(j) {
				years = append(years, t.Year)
				ids[j.TitleID] = true
			}
		}
		return years, ids
	}
	years, ids := pick(func(j Judgement) bool { return j.Sentiment > 0 })
	if len(years) < 3 {
		years, ids = pick(func(j Judgement) bool { return j.Seen })
	}
	if len(years) < 3 {
		return nil, nil, false
	}
	slices.Sort(years)
	rank := func(p float64) int {
		i := int(math.Ceil(p*float64(len(years)))) - 1
		return years[max(0, min(len(years)-1, i))]
	}
	return Era{From: rank(0.1), To: rank(0.9), Median: rank(0.5)}, in.evidence(ids), true
}

// castBilled is how many names at the top of a cast list count as the
// title's people; long lists go on to minor parts.
const castBilled = 6

// learnFavouritePeople writes favouritePeople: the people billed in the
// first six places of at least two titles the user judged, whose summed
// sentiment over those titles is at least 1, weighted by that sum over the
// largest, at most ten, strongest first. Evidence: those titles' events.
func learnFavouritePeople(in *Input) (any, []string, bool) {
	billed := func(t *memento.Title) []string { return t.Cast[:min(len(t.Cast), castBilled)] }
	favourite := func(sum float64, titles int) bool { return titles >= 2 && sum >= 1 }
	ranked, evidence, ok := weighKeys(in, billed, 1, favourite, 0, 10)
	if !ok {
		return nil, nil, false
	}
	out := make([]PersonWeight, len(ranked))
	for i, kw := range ranked {
		out[i] = PersonWeight{Name: kw.key, Weight: kw.weight}
	}
	return out, evidence, true
}

// learnWatchlist writes watchlist: the ids of the titles the user added to
// their watchlist and has not seen since, in the order they were added.
func learnWatchlist(in *Input) (any, []string, bool) {
	return learnIDs(in, func(j Judgement) bool { return j.Watchlisted }, func(j Judgement) time.Time { return j.WatchlistedAt })
}

// learnSeen writes seen: the ids of every title the user watched,
// finished, abandoned, rated, liked or disliked, in the order they first
// saw them. Ranking never recommends these again unless asked for by name.
func learnSeen(in *Input) (any, []string, bool) {
	return learnIDs(in, func(j Judgement) bool { return j.Seen }, func(j Judgement) time.Time { return j.FirstSeen })
}

// learnLikedTitles writes likedTitles: the titles with a positive
// sentiment and its strength, in the order the opinion was formed (the
// last is the newest). Ranking weighs recent likes more and reads them
// through the co-occurrence model.
func learnLikedTitles(in *Input) (any, []string, bool) {
	return learnTitles(in, 1)
}

// learnDislikedTitles writes dislikedTitles: the titles with a negative
// sentiment and its strength, ordered like likedTitles.
func learnDislikedTitles(in *Input) (any, []string, bool) {
	return learnTitles(in, -1)
}

func learnTitles(in *Input, sign float64) (any, []string, bool) {
	list, evidence := in.judged(func(j Judgement) bool { return j.Sentiment*sign > 0 }, judgedAt)
	if len(list) == 0 {
		return nil, nil, false
	}
	out := make([]TitleWeight, len(list))
	for i, j := range list {
		out[i] = TitleWeight{ID: j.TitleID, Weight: round3(j.Sentiment * sign)}
	}
	return out, evidence, true
}

// learnAbandonRate writes abandonRate: of the titles the user started
// (watched, finished or abandoned), the share whose newest such event is
// abandoned, to three decimals. Evidence: the events of the abandoned
// titles, or of every started title when none was abandoned.
func learnAbandonRate(in *Input) (any, []string, bool) {
	started, abandoned := map[string]bool{}, map[string]bool{}
	for _, j := range in.Judgements {
		if j.Started {
			started[j.TitleID] = true
			if j.Abandoned {
				abandoned[j.TitleID] = true
			}
		}
	}
	if len(started) == 0 {
		return nil, nil, false
	}
	rate := round3(float64(len(abandoned)) / float64(len(started)))
	if len(abandoned) == 0 {
		return rate, in.evidence(started), true
	}
	return rate, in.evidence(abandoned), true
}

// learnRewatcher writes rewatcher: true when the user watched (or
// finished) at least one title more than once and such titles are at least
// one in ten of the titles they watched; false once they watched three
// titles without that. Evidence: the rewatched titles' events, or every
// watched title's when false.
func learnRewatcher(in *Input) (any, []string, bool) {
	watched, again := map[string]bool{}, map[string]bool{}
	for _, j := range in.Judgements {
		if j.Watches > 0 {
			watched[j.TitleID] = true
		}
		if j.Watches > 1 {
			again[j.TitleID] = true
		}
	}
	if len(again) > 0 && float64(len(again)) >= 0.1*float64(len(watched)) {
		return true, in.evidence(again), true
	}
	if len(watched) >= 3 {
		return false, in.evidence(watched), true
	}
	return nil, nil, false
}

// learnSkipped writes skipped: the ids of the titles the user skipped and
// has not seen, in the order they were skipped. Ranking lowers them.
func learnSkipped(in *Input) (any, []string, bool) {
	return learnIDs(in, func(j Judgement) bool { return j.Skipped }, judgedAt)
}

// judgedAt is the time of a judgement's opinion, the order of the lists of
// liked, disliked and skipped titles.
func judgedAt(j Judgement) time.Time { return j.At }

// judged returns the judgements that pass keep, ordered by the time at
// gives each (ties by title id), and the ids of their titles' events.
func (in *Input) judged(keep func(Judgement) bool, at func(Judgement) time.Time) ([]Judgement, []string) {
	var list []Judgement
	titles := map[string]bool{}
	for _, j := range in.Judgements {
		if keep(j) {
			list = append(list, j)
			titles[j.TitleID] = true
		}
	}
	slices.SortStableFunc(list, func(a, b Judgement) int {
		if c := at(a).Compare(at(b)); c != 0 {
			return c
		}
		return cmp.Compare(a.TitleID, b.TitleID)
	})
	return list, in.evidence(titles)
}

// learnIDs is a learner whose value is the ids of the titles whose
// judgement passes keep, in the order of at; it learns nothing when none
// does.
func learnIDs(in *Input, keep func(Judgement) bool, at func(Judgement) time.Time) (any, []string, bool) {
	list, evidence := in.judged(keep, at)
	if len(list) == 0 {
		return nil, nil, false
	}
	ids := make([]string, len(list))
	for i, j := range list {
		ids[i] = j.TitleID
	}
	return ids, evidence, true
}
