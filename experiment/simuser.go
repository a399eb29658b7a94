package experiment

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// The simulated users. Each has a latent rating function over titles,
// which is what "the user's current taste" means in every measure: a
// weight per genre in [-1, 1] (liked genres high, hated ones low, the rest
// near zero; the weights drift a little from session to session without a
// word, and jump when the user's taste changes and they say so), favourite
// and hated people, and an era they prefer. What they tell the agent is
// drawn from it, and so are their requests; how they would rate a title
// now decides whether a recommendation was any good.

// simGenre is a genre as users speak of it, as they ask for it, and as the
// catalog names it.
type simGenre struct{ word, plural, catalog string }

// The genres and platforms simulated tastes are made of.
var (
	simGenres = []simGenre{
		{"comedy", "comedies", "Comedy"}, {"drama", "dramas", "Drama"}, {"horror", "horror movies", "Horror"},
		{"thrillers", "thrillers", "Thriller"}, {"westerns", "westerns", "Western"}, {"musicals", "musicals", "Musical"},
		{"documentaries", "documentaries", "Documentary"}, {"romance", "romance movies", "Romance"},
		{"science fiction", "science fiction movies", "Science Fiction"}, {"war movies", "war movies", "War"},
		{"crime", "crime movies", "Crime"}, {"fantasy", "fantasy movies", "Fantasy"}, {"mysteries", "mysteries", "Mystery"},
		{"action", "action movies", "Action"}, {"animated movies", "animated movies", "Animated"},
	}
	simPlatforms = []string{"Netflix", "Hulu", "Disney+", "Prime Video", "HBO Max", "Apple TV"}
)

// Bands of the latent genre weights. A genre is liked (and said to be)
// while its weight is in the liked band, hated in the hated band, and of
// no concern in between; drift keeps a weight inside its band, so the
// stated taste and the latent one never disagree.
const (
	likedLow, likedHigh     = 0.6, 1.0
	hatedLow, hatedHigh     = -1.0, -0.6
	neutralLow, neutralHigh = -0.3, 0.4
	// weightDrift is the standard deviation of a weight's unspoken change
	// from one session to the next.
	weightDrift = 0.05
)

// The rating function's terms: a title's rating is the highest weight
// among its genres (not below zero), plus personBonus with a favourite
// person among its top-billed cast, plus eraBonus inside the preferred
// era or eraPenalty more than eraSlack years outside it. A genre or a
// person the user hates makes the title disliked, whatever else it has.
const (
	personBonus = 0.4
	eraBonus    = 0.15
	eraPenalty  = -0.25
	eraSlack    = 15
	// billedCast is how many of a title's cast count as its people, as
	// for the agent's own matching.
	billedCast = 5
)

// Grades of a title: how the user would rate it now. Grade 2 and above
// is "would rate it highly", the only titles a hit or good@10 counts; the
// gain of a grade in NDCG is 2^grade - 1.
var gradeFloors = [...]float64{3: 1.0, 2: 0.8, 1: 0.55}

// goodGrade is the lowest grade a user rates highly.
const goodGrade = 2

// taste is a simulated user's taste at one point of their history.
type taste struct {
	weight          []float64 // per simGenres
	liked, disliked []int     // the genres in the liked and hated bands
	platform        int
	favs, hated     []int // indexes into the people pool
	eraFrom, eraTo  int   // the years they prefer, inclusive
}

func (t *taste) clone() taste {
	c := *t
	c.weight, c.liked, c.disliked = slices.Clone(t.weight), slices.Clone(t.liked), slices.Clone(t.disliked)
	c.favs, c.hated = slices.Clone(t.favs), slices.Clone(t.hated)
	return c
}

// rate returns the user's grade of a title (0 to 3) and whether they
// dislike it.
func (t *taste) rate(ti *simCatTitle) (grade int, disliked bool) {
	best := 0.0
	for g := ti.genres; g != 0; g &= g - 1 {
		w := t.weight[bitIndex(g)]
		if w <= hatedHigh {
			return 0, true
		}
		best = math.Max(best, w)
	}
	for _, p := range ti.people {
		if slices.Contains(t.hated, p) {
			return 0, true
		}
	}
	r := best
	for _, p := range ti.people {
		if slices.Contains(t.favs, p) {
			r += personBonus
			break
		}
	}
	switch {
	case ti.year == 0:
	case ti.year >= t.eraFrom && ti.year <= t.eraTo:
		r += eraBonus
	case ti.year < t.eraFrom-eraSlack || ti.year > t.eraTo+eraSlack:
		r += eraPenalty
	}
	for g := 3; g >= 1; g-- {
		if r >= gradeFloors[g] {
			return g, false
		}
	}
	return 0, false
}

// bitIndex is the index of the lowest set bit.
func bitIndex(g uint32) int {
	n := 0
	for g&1 == 0 {
		g >>= 1
		n++
	}
	return n
}

// simRequest is what a user asks for in a session, with the constraints
// the request states (for the ideal ranking it is measured against).
type simRequest struct {
	Kind     string // open, genre, genre+era, person or era
	Text     string
	genre    int // index into simGenres, or -1
	from, to int // years, or 0
	person   int // index into the people pool, or -1
}

// Request kinds, reported separately because memory has more to do when
// the request says less.
const (
	askOpen     = "open"
	askGenre    = "genre"
	askGenreEra = "genre+era"
	askPerson   = "person"
	askEra      = "era"
)

// simSession is one session of a user's scripted history.
type simSession struct {
	talk  []string // what they tell the agent about themselves
	ask   simRequest
	taste taste // their taste once the session's statements are said
}

// simUser is one user's scripted history, the same in every arm.
type simUser struct{ sessions []simSession }

// script writes a user's history over sessions. people is the pool of
// people tastes draw from; the catalog has many titles of each.
func script(rnd *rand.Rand, sessions int, changeRate float64, people []string, ev *SimEvents) simUser {
	perm := rnd.Perm(len(simGenres))
	nl, nd := 2+rnd.IntN(2), 1+rnd.IntN(2)
	t := taste{weight: make([]float64, len(simGenres)), platform: rnd.IntN(len(simPlatforms))}
	t.liked = slices.Clone(perm[:nl])
	t.disliked = slices.Clone(perm[nl : nl+nd])
	for g := range simGenres {
		switch {
		case slices.Contains(t.liked, g):
			t.weight[g] = uniform(rnd, likedLow, likedHigh)
		case slices.Contains(t.disliked, g):
			t.weight[g] = uniform(rnd, hatedLow, hatedHigh)
		default:
			t.weight[g] = uniform(rnd, neutralLow, neutralHigh)
		}
	}
	// Eras lean to the decades most viewers grew up with.
	starts := []int{1940, 1950, 1960, 1970, 1970, 1980, 1980, 1990, 1990, 2000, 2000}
	t.eraFrom = starts[rnd.IntN(len(starts))]
	t.eraTo = t.eraFrom + 19
	if len(people) > 0 {
		pp := rnd.Perm(len(people))
		nf := rnd.IntN(3) // 0 to 2 favourites
		t.favs = slices.Clone(pp[:nf])
		if rnd.IntN(3) == 0 {
			t.hated = []int{pp[nf]}
		}
	}
	var u simUser
	for s := range sessions {
		var msgs []string
		if s == 0 {
			msgs = append(msgs, "I love "+genreWords(t.liked)+".")
			for _, g := range t.disliked {
				msgs = append(msgs, "I can't stand "+simGenres[g].word+".")
			}
			msgs = append(msgs, "I watch on "+simPlatforms[t.platform]+".")
			if len(t.favs) > 0 {
				msgs = append(msgs, "I'm a big fan of "+peopleNames(people, t.favs)+".")
			}
			for _, p := range t.hated {
				msgs = append(msgs, "I can't stand "+people[p]+".")
			}
		} else {
			drift(rnd, &t)
			if rnd.Float64() < changeRate {
				if m := change(rnd, &t, people, ev); m != "" {
					msgs = append(msgs, m)
				}
			}
			if rnd.IntN(2) == 0 {
				// A passing restatement of something still liked.
				msgs = append(msgs, "I still enjoy "+simGenres[t.liked[rnd.IntN(len(t.liked))]].word+".")
			}
		}
		u.sessions = append(u.sessions, simSession{talk: msgs, ask: request(rnd, &t, people), taste: t.clone()})
	}
	return u
}

func uniform(rnd *rand.Rand, lo, hi float64) float64 { return lo + (hi-lo)*rnd.Float64() }

// drift moves every weight a little, inside its band.
func drift(rnd *rand.Rand, t *taste) {
	for g := range t.weight {
		lo, hi := neutralLow, neutralHigh
		switch {
		case slices.Contains(t.liked, g):
			lo, hi = likedLow, likedHigh
		case slices.Contains(t.disliked, g):
			lo, hi = hatedLow, hatedHigh
		}
		t.weight[g] = math.Max(lo, math.Min(hi, t.weight[g]+weightDrift*rnd.NormFloat64()))
	}
}

// change applies one change of taste and returns what the user says of
// it, or "" when the change drawn cannot apply. The phrasings are ones the
// offline extractor keeps (docs/EXPERIMENTS.md lists some it drops), so
// the arms are compared on what memory does with a change it was told.
func change(rnd *rand.Rand, t *taste, people []string, ev *SimEvents) string {
	switch k := rnd.IntN(6); {
	case k == 0 && len(t.liked) > 1:
		i := rnd.IntN(len(t.liked))
		g := t.liked[i]
		t.liked = slices.Delete(t.liked, i, i+1)
		t.disliked = append(t.disliked, g)
		t.weight[g] = uniform(rnd, hatedLow, hatedHigh)
		ev.LikedToDisliked++
		return "I don't like " + simGenres[g].word + " anymore."
	case k == 1 && len(t.disliked) > 0:
		i := rnd.IntN(len(t.disliked))
		g := t.disliked[i]
		t.disliked = slices.Delete(t.disliked, i, i+1)
		t.liked = append(t.liked, g)
		t.weight[g] = uniform(rnd, likedLow, likedHigh)
		ev.DislikedToLiked++
		if rnd.IntN(2) == 0 {
			return "I've come around to " + simGenres[g].word + "."
		}
		return "I love " + simGenres[g].word + " now."
	case k == 2:
		t.platform = (t.platform + 1 + rnd.IntN(len(simPlatforms)-1)) % len(simPlatforms)
		ev.Platform++
		return "I watch on " + simPlatforms[t.platform] + " now."
	case k == 3:
		var free []int
		for g := range simGenres {
			if !slices.Contains(t.liked, g) && !slices.Contains(t.disliked, g) {
				free = append(free, g)
			}
		}
		if len(free) == 0 {
			return ""
		}
		g := free[rnd.IntN(len(free))]
		t.liked = append(t.liked, g)
		t.weight[g] = uniform(rnd, likedLow, likedHigh)
		ev.Added++
		return "I really enjoy " + simGenres[g].word + " these days."
	case k == 4 && len(people) > 0:
		var free []int
		for p := range people {
			if !slices.Contains(t.favs, p) && !slices.Contains(t.hated, p) {
				free = append(free, p)
			}
		}
		p := free[rnd.IntN(len(free))]
		t.favs = append(t.favs, p)
		ev.PersonAdded++
		return "I've become a fan of " + people[p] + "."
	case k == 5 && len(t.favs) > 0:
		i := rnd.IntN(len(t.favs))
		p := t.favs[i]
		t.favs = slices.Delete(t.favs, i, i+1)
		t.hated = append(t.hated, p)
		ev.PersonDropped++
		return "I've grown tired of " + people[p] + "."
	}
	return ""
}

// request draws what the user asks for this session from their current
// taste: anything for them, a liked genre, a liked genre from a decade of
// their era, a favourite person, or a decade of their era.
func request(rnd *rand.Rand, t *taste, people []string) simRequest {
	r := simRequest{genre: -1, person: -1}
	decade := t.eraFrom + 10*rnd.IntN(2)
	x := rnd.Float64()
	switch {
	case x < 0.25:
		r.Kind, r.Text = askOpen, "Recommend 10 movies for me."
	case x < 0.55:
		r.Kind, r.genre = askGenre, t.liked[rnd.IntN(len(t.liked))]
		r.Text = "Recommend 10 " + simGenres[r.genre].plural + "."
	case x < 0.75:
		r.Kind, r.genre, r.from, r.to = askGenreEra, t.liked[rnd.IntN(len(t.liked))], decade, decade+9
		r.Text = fmt.Sprintf("Recommend 10 %s from the %ds.", simGenres[r.genre].plural, decade)
	case x < 0.9 && len(t.favs) > 0:
		r.Kind, r.person = askPerson, t.favs[rnd.IntN(len(t.favs))]
		r.Text = "Recommend 10 movies with " + people[r.person] + "."
	default:
		r.Kind, r.from, r.to = askEra, decade, decade+9
		r.Text = fmt.Sprintf("Recommend 10 movies from the %ds.", decade)
	}
	return r
}

func genreWords(gs []int) string {
	names := make([]string, len(gs))
	for i, g := range gs {
		names[i] = simGenres[g].word
	}
	return strings.Join(names, " and ")
}

func peopleNames(people []string, ps []int) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = people[p]
	}
	return strings.Join(names, " and ")
}

// simCatTitle is a catalog title reduced to what ratings read.
type simCatTitle struct {
	id     string
	genres uint32 // bit g set: the title has simGenres[g]
	year   int
	people []int // indexes into the people pool among its billed cast
}

// simCatalog is the catalog as the simulation reads it.
type simCatalog struct {
	titles  []simCatTitle
	byID    map[string]int
	byGenre [][]int // title indexes per simGenres
	people  []string
}

// Bounds of the people pool: the most prolific actors of the catalog
// since peopleSince, each with at least minPersonTitles titles among their
// top-billed roles, so a request for one of them has answers.
const (
	poolSize        = 40
	peopleSince     = 1960
	minPersonTitles = 12
)

// newSimCatalog indexes the titles with the people pool they give.
func newSimCatalog(titles []SimTitle) *simCatalog { return indexTitles(titles, pickPeople(titles)) }

// pickPeople returns the people pool of a catalog, most prolific first.
func pickPeople(titles []SimTitle) []string {
	counts := map[string]int{}
	for _, t := range titles {
		if t.Year >= peopleSince {
			for _, p := range t.Cast[:min(len(t.Cast), billedCast)] {
				counts[p]++
			}
		}
	}
	var people []string
	for p, n := range counts {
		if n >= minPersonTitles {
			people = append(people, p)
		}
	}
	slices.SortFunc(people, func(a, b string) int { return cmp.Or(counts[b]-counts[a], strings.Compare(a, b)) })
	return people[:min(len(people), poolSize)]
}

// indexTitles reduces titles to what ratings read.
func indexTitles(titles []SimTitle, people []string) *simCatalog {
	c := &simCatalog{byID: make(map[string]int, len(titles)), byGenre: make([][]int, len(simGenres)), people: people}
	genre := map[string]int{}
	for g, sg := range simGenres {
		genre[sg.catalog] = g
	}
	person := map[string]int{}
	for i, p := range people {
		person[p] = i
	}
	for _, t := range titles {
		ct := simCatTitle{id: t.ID, year: t.Year}
		for _, g := range t.Genres {
			if i, ok := genre[g]; ok {
				ct.genres |= 1 << i
			}
		}
		for _, p := range t.Cast[:min(len(t.Cast), billedCast)] {
			if i, ok := person[p]; ok {
				ct.people = append(ct.people, i)
			}
		}
		i := len(c.titles)
		c.byID[t.ID] = i
		c.titles = append(c.titles, ct)
		for g := ct.genres; g != 0; g &= g - 1 {
			c.byGenre[bitIndex(g)] = append(c.byGenre[bitIndex(g)], i)
		}
	}
	return c
}

// title returns the catalog's entry of a recommended title, or one made
// from what the answer says of it when the catalog lacks it.
func (c *simCatalog) title(t SimTitle) *simCatTitle {
	if i, ok := c.byID[t.ID]; ok {
		return &c.titles[i]
	}
	return &indexTitles([]SimTitle{t}, c.people).titles[0]
}
