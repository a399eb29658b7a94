package profile

import (
	"cmp"
	"math"
	"slices"

	"github.com/memento-ai/memento"
)

// Counts is what the co-occurrence model is computed from, kept so that it
// can be updated user by user: for every user, the sequence of titles they
// liked and the titles they have seen; for every pair of titles, the
// weight of their being liked close together; for every title, how many
// users have seen it and how often it was liked. Setting a user's events
// takes their old contribution out and puts the new one in, so the cost
// of an update follows the users whose events changed, not the tenant's
// history, and Build then only ranks neighbours.
//
// Pair weights are sums of exp(-d/Window) kept as integers in units of
// 2^-40, so that adding and taking out a user's pairs in any order gives
// exactly the weights a build from scratch gives: an incremental model
// equals the full rebuild bit for bit.
type Counts struct {
	opts   ModelOptions
	decayQ []int64 // exp(-d/Window) in units of 2^-40, by distance d

	index map[string]int32
	ids   []string
	free  []int32 // numbers of titles no longer referenced, for reuse

	seen   []int32 // users who have seen each title
	likers []int32 // occurrences of each title in liked sequences
	adj    []map[int32]int64

	users map[string]userCounts
	// counted is how many users have at least one judgement.
	counted int32

	// lists are each title's neighbours as last built (numbered as in
	// ids); dirty are the titles whose list changed since.
	lists [][]Neighbour
	dirty map[int32]bool
}

// userCounts is one user's contribution.
type userCounts struct {
	seq  []int32 // liked titles in the order the opinions were formed
	seen []int32 // titles seen
}

// weightUnit is the scale of the integer pair weights.
const weightUnit = 1 << 40

// NewCounts returns empty counts for a model with the given options.
func NewCounts(opts ModelOptions) *Counts {
	o := opts.withDefaults()
	c := &Counts{opts: o, index: map[string]int32{}, users: map[string]userCounts{}, dirty: map[int32]bool{}}
	c.decayQ = make([]int64, o.MaxGap+1)
	for d := range c.decayQ {
		c.decayQ[d] = int64(math.Round(math.Exp(-float64(d)/o.Window) * weightUnit))
	}
	return c
}

// Users is the number of users with at least one judgement.
func (c *Counts) Users() int { return int(c.counted) }

func (c *Counts) id(t string) int32 {
	if i, ok := c.index[t]; ok {
		return i
	}
	var i int32
	if n := len(c.free); n > 0 {
		i, c.free = c.free[n-1], c.free[:n-1]
		c.ids[i] = t
	} else {
		i = int32(len(c.ids))
		c.ids = append(c.ids, t)
		c.seen = append(c.seen, 0)
		c.likers = append(c.likers, 0)
		c.adj = append(c.adj, nil)
		c.lists = append(c.lists, nil)
	}
	c.index[t] = i
	return i
}

// release frees a title's number once nothing refers to it (once: a
// title both seen and liked is released from both lists).
func (c *Counts) release(i int32) {
	if c.seen[i] != 0 || c.likers[i] != 0 || c.ids[i] == "" {
		return
	}
	delete(c.index, c.ids[i])
	c.ids[i] = ""
	c.adj[i] = nil
	c.lists[i] = nil
	delete(c.dirty, i)
	c.free = append(c.free, i)
}

// Set replaces what the user's events contribute: events are all of the
// user's events (none removes the user).
func (c *Counts) Set(user string, events []memento.Event) {
	c.remove(user)
	js := Judge(events)
	if len(js) == 0 {
		return
	}
	u := userCounts{}
	var liked []Judgement
	for _, j := range js {
		if j.Seen {
			i := c.id(j.TitleID)
			c.seen[i]++
			u.seen = append(u.seen, i)
		}
		if j.Sentiment > 0 {
			liked = append(liked, j)
		}
	}
	slices.SortStableFunc(liked, byTime)
	for _, j := range liked {
		i := c.id(j.TitleID)
		c.likers[i]++
		u.seq = append(u.seq, i)
	}
	c.pairs(u.seq, 1)
	c.touch(u.seq)
	c.users[user] = u
	c.counted++
}

// remove takes the user's contribution out.
func (c *Counts) remove(user string) {
	u, ok := c.users[user]
	if !ok {
		return
	}
	delete(c.users, user)
	c.counted--
	c.touch(u.seq)
	c.pairs(u.seq, -1)
	for _, i := range u.seen {
		c.seen[i]--
	}
	for _, i := range u.seq {
		c.likers[i]--
	}
	for _, i := range u.seen {
		c.release(i)
	}
	for _, i := range u.seq {
		c.release(i)
	}
}

// touch marks for the next build the titles whose neighbour lists a
// change of these titles' likers can move: the titles themselves, and
// every title liked near them (their similarity to a title divides by its
// likers).
func (c *Counts) touch(titles []int32) {
	for _, i := range titles {
		c.dirty[i] = true
		for j := range c.adj[i] {
			c.dirty[j] = true
		}
	}
}

// pairs adds (sign 1) or takes out (sign -1) the weights of the pairs of
// one liked sequence: titles at distance d <= MaxGap count exp(-d/Window)
// each way.
func (c *Counts) pairs(seq []int32, sign int64) {
	for p, i := range seq {
		hi := min(len(seq)-1, p+c.opts.MaxGap)
		for q := p + 1; q <= hi; q++ {
			j := seq[q]
			if j == i {
				continue
			}
			w := sign * c.decayQ[q-p]
			c.addWeight(i, j, w)
			c.addWeight(j, i, w)
		}
	}
}

func (c *Counts) addWeight(i, j int32, w int64) {
	m := c.adj[i]
	if m == nil {
		m = map[int32]int64{}
		c.adj[i] = m
	}
	if v := m[j] + w; v == 0 {
		delete(m, j)
	} else {
		m[j] = v
	}
}

// Build computes the model from the counts: for each title i, the pair
// weight with every title j liked near it, divided by likers(i)^Alpha *
// likers(j)^(1-Alpha), the Neighbours best kept. Only the lists of titles
// touched since the last build are computed again. Titles are numbered in
// the order of their ids and ties broken by id, so equal counts give
// equal models, however they were reached.
func (c *Counts) Build() *Model {
	o := c.opts
	pow := func(i int32, e float64) float64 { return math.Pow(float64(c.likers[i]), e) }
	for i := range c.dirty {
		if len(c.adj[i]) == 0 {
			c.lists[i] = nil
			continue
		}
		list := make([]Neighbour, 0, len(c.adj[i]))
		a := pow(i, o.Alpha)
		for j, w := range c.adj[i] {
			list = append(list, Neighbour{Title: j, Sim: float32(float64(w) / weightUnit / (a * pow(j, 1-o.Alpha)))})
		}
		slices.SortFunc(list, func(x, y Neighbour) int {
			if c := cmp.Compare(y.Sim, x.Sim); c != 0 {
				return c
			}
			return cmp.Compare(c.ids[x.Title], c.ids[y.Title])
		})
		if len(list) > o.Neighbours {
			list = slices.Clip(list[:o.Neighbours])
		}
		c.lists[i] = list
	}
	clear(c.dirty)

	order := make([]int32, 0, len(c.index))
	for _, i := range c.index {
		order = append(order, i)
	}
	slices.SortFunc(order, func(x, y int32) int { return cmp.Compare(c.ids[x], c.ids[y]) })
	n := len(order)
	renum := make([]int32, len(c.ids))
	m := &Model{ids: make([]string, n), index: make(map[string]int32, n), seen: make([]int32, n), nbr: make([][]Neighbour, n), users: c.counted}
	for newI, old := range order {
		renum[old] = int32(newI)
		m.ids[newI] = c.ids[old]
		m.index[c.ids[old]] = int32(newI)
		m.seen[newI] = c.seen[old]
		m.maxSeen = max(m.maxSeen, c.seen[old])
	}
	m.logMaxSn = math.Log1p(float64(m.maxSeen))
	for newI, old := range order {
		if len(c.lists[old]) == 0 {
			continue
		}
		list := make([]Neighbour, len(c.lists[old]))
		for k, nb := range c.lists[old] {
			list[k] = Neighbour{Title: renum[nb.Title], Sim: nb.Sim}
		}
		m.nbr[newI] = list
	}
	return m
}
