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
// replaces their contribution by what changed in it (the pairs from the
// first title of their liked sequence that moved, the titles they began
// or stopped liking), so the cost of an update follows what the new
// events changed, not the tenant's history nor the user's, and Build
// ranks again only the neighbours of titles whose pairs changed, and of
// the titles liked near a title whose likers changed, those whose list
// that changes.
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
	adj    []weights

	users map[string]userCounts
	// counted is how many users have at least one judgement.
	counted int32

	// lists are each title's neighbours as last built (numbered as in
	// ids); dirty marks the titles whose list may have changed since,
	// listed in marked (with titles since unmarked, which Build skips).
	lists  [][]Neighbour
	dirty  []bool
	marked []int32
	// moved marks the titles whose likers changed since the last build,
	// listed in movers, with builtLikers their likers at that build:
	// their similarity to every title liked near them changed, which
	// Build checks against those titles' lists (see Build).
	moved       []bool
	builtLikers []int32
	movers      []int32
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
	c := &Counts{opts: o, index: map[string]int32{}, users: map[string]userCounts{}}
	c.decayQ = make([]int64, o.MaxGap+1)
	for d := range c.decayQ {
		c.decayQ[d] = int64(math.Round(math.Exp(-float64(d)/o.Window) * weightUnit))
	}
	return c
}

// sameUser reports whether the user contributes the same to c as to o:
// the same titles liked, in the same order, and the same titles seen.
func (c *Counts) sameUser(o *Counts, user string) bool {
	a, aok := c.users[user]
	b, bok := o.users[user]
	return aok == bok && sameTitles(c, a.seq, o, b.seq) && sameTitles(c, a.seen, o, b.seen)
}

// sameTitles reports whether a, numbered as in c, and b, numbered as in
// o, name the same titles in the same order.
func sameTitles(c *Counts, a []int32, o *Counts, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if c.ids[a[k]] != o.ids[b[k]] {
			return false
		}
	}
	return true
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
		c.adj = append(c.adj, weights{})
		c.lists = append(c.lists, nil)
		c.dirty = append(c.dirty, false)
		c.moved = append(c.moved, false)
		c.builtLikers = append(c.builtLikers, 0)
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
	c.adj[i] = weights{}
	c.lists[i] = nil
	// A number reused for another title starts unmarked: the pairs
	// that held the old title marked its neighbours as they went.
	c.dirty[i], c.moved[i], c.builtLikers[i] = false, false, 0
	c.free = append(c.free, i)
}

// Set replaces what the user's events contribute: events are all of the
// user's events (none removes the user). The cost follows what changed:
// the pairs of the liked sequence from the first title that moved, and
// the titles the user started or stopped liking.
func (c *Counts) Set(user string, events []memento.Event) {
	js := Judge(events)
	var u userCounts
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
		u.seq = append(u.seq, c.id(j.TitleID))
	}
	c.replace(user, u, len(js) > 0)
}

// replace puts u in place of the user's contribution: has is false when
// the user has no judgement left. u's seen titles are counted already.
func (c *Counts) replace(user string, u userCounts, has bool) {
	old, had := c.users[user]
	// Likers: only the titles whose count changes move.
	delta := make(map[int32]int32, len(old.seq)+len(u.seq))
	for _, i := range old.seq {
		delta[i]--
	}
	for _, i := range u.seq {
		delta[i]++
	}
	for i, d := range delta {
		if d != 0 {
			c.moveLikers(i, d)
		}
	}
	// Pairs: those within the sequences' common beginning are the same.
	same := 0
	for same < min(len(old.seq), len(u.seq)) && old.seq[same] == u.seq[same] {
		same++
	}
	c.pairs(old.seq, same, -1)
	c.pairs(u.seq, same, 1)
	for _, i := range old.seen {
		c.seen[i]--
	}
	switch {
	case had && !has:
		delete(c.users, user)
		c.counted--
	case has:
		if !had {
			c.counted++
		}
		c.users[user] = u
	}
	for _, i := range old.seen {
		c.release(i)
	}
	for _, i := range old.seq {
		c.release(i)
	}
}

// moveLikers adds d to title i's likers: its own list changes (every
// similarity in it divides by its likers), and Build checks the lists of
// the titles liked near it.
func (c *Counts) moveLikers(i, d int32) {
	if !c.moved[i] {
		c.moved[i], c.builtLikers[i] = true, c.likers[i]
		c.movers = append(c.movers, i)
	}
	c.likers[i] += d
	c.mark(i)
}

// mark marks title i's list for the next build.
func (c *Counts) mark(i int32) {
	if !c.dirty[i] {
		c.dirty[i] = true
		c.marked = append(c.marked, i)
	}
}

// pairs adds (sign 1) or takes out (sign -1) the weights of the pairs of
// one liked sequence that end at position from or later: titles at
// distance d <= MaxGap count exp(-d/Window) each way. Both titles of a
// pair are marked.
func (c *Counts) pairs(seq []int32, from int, sign int64) {
	for q := from; q < len(seq); q++ {
		j := seq[q]
		for p := max(0, q-c.opts.MaxGap); p < q; p++ {
			i := seq[p]
			if j == i {
				continue
			}
			w := sign * c.decayQ[q-p]
			c.addWeight(i, j, w)
			c.addWeight(j, i, w)
			c.mark(i)
			c.mark(j)
		}
	}
}

func (c *Counts) addWeight(i, j int32, w int64) { c.adj[i].Add(j, w) }

// Build computes the model from the counts: for each title i, the pair
// weight with every title j liked near it, divided by likers(i)^Alpha *
// likers(j)^(1-Alpha), the Neighbours best kept. Only the lists that may
// have changed since the last build are computed again. Titles are numbered in
// the order of their ids and ties broken by id, so equal counts give
// equal models, however they were reached.
func (c *Counts) Build() *Model {
	o := c.opts
	pow := func(i int32, e float64) float64 { return math.Pow(float64(c.likers[i]), e) }
	// likers(j)^(1-Alpha) of each title, computed once a build.
	var powB []float64
	if len(c.marked) > 0 {
		powB = make([]float64, len(c.likers))
		for j := range powB {
			powB[j] = pow(int32(j), 1-o.Alpha)
		}
	}
	// A title whose likers moved has another similarity to every title
	// liked near it, and that title's list changes if the moved title was
	// in it or enters it now: the list's last neighbour says which, with
	// the similarity computed as below, at the likers of the last build
	// and at the current ones. A list with room holds every title liked
	// near it. The other titles liked near it keep their lists: their
	// pairs and likers did not change (those that did are marked). Such a
	// list is patched with the new similarities of its moved titles
	// (patch) rather than ranked again from every title liked near it,
	// unless the patch cannot tell what comes after it.
	var patches map[int32][]Neighbour
	var patched []int32
	for _, i := range c.movers {
		if !c.moved[i] {
			continue // released since
		}
		c.moved[i] = false
		before := c.builtLikers[i]
		if before == 0 {
			continue // in no list: its pairs are all new, and marked
		}
		bBefore := math.Pow(float64(before), 1-o.Alpha)
		adj := &c.adj[i]
		for s, k := range adj.keys {
			if k == 0 {
				continue
			}
			j, w := k-1, adj.vals[s]
			if c.dirty[j] {
				continue
			}
			list, a := c.lists[j], pow(j, o.Alpha)
			now := Neighbour{Title: i, Sim: float32(float64(w) / weightUnit / (a * powB[i]))}
			if len(list) == o.Neighbours {
				last := list[len(list)-1]
				was := Neighbour{Title: i, Sim: float32(float64(w) / weightUnit / (a * bBefore))}
				if ranksBefore(last, was, c.ids) && !ranksBefore(now, last, c.ids) {
					continue // neither was nor is among the best
				}
			}
			if patches == nil {
				patches = map[int32][]Neighbour{}
			}
			if _, ok := patches[j]; !ok {
				patched = append(patched, j)
			}
			patches[j] = append(patches[j], now)
		}
	}
	for _, j := range patched {
		if !c.patch(j, patches[j]) {
			c.mark(j)
		}
	}
	c.movers = c.movers[:0]
	for _, i := range c.marked {
		if !c.dirty[i] {
			continue // released, or listed twice
		}
		c.dirty[i] = false
		adj := &c.adj[i]
		if adj.Len() == 0 {
			c.lists[i] = nil
			continue
		}
		list := make([]Neighbour, 0, adj.Len())
		a := pow(i, o.Alpha)
		for s, k := range adj.keys {
			if k != 0 {
				list = append(list, Neighbour{Title: k - 1, Sim: float32(float64(adj.vals[s]) / weightUnit / (a * powB[k-1]))})
			}
		}
		c.lists[i] = best(list, o.Neighbours, c.ids)
	}
	c.marked = c.marked[:0]

	byID := make([]int32, 0, len(c.index))
	for _, i := range c.index {
		byID = append(byID, i)
	}
	slices.SortFunc(byID, func(x, y int32) int { return cmp.Compare(c.ids[x], c.ids[y]) })
	n := len(byID)
	renum := make([]int32, len(c.ids))
	m := &Model{ids: make([]string, n), index: make(map[string]int32, n), seen: make([]int32, n), nbr: make([][]Neighbour, n), users: c.counted}
	for newI, old := range byID {
		renum[old] = int32(newI)
		m.ids[newI] = c.ids[old]
		m.index[c.ids[old]] = int32(newI)
		m.seen[newI] = c.seen[old]
		m.maxSeen = max(m.maxSeen, c.seen[old])
	}
	m.logMaxSn = math.Log1p(float64(m.maxSeen))
	for newI, old := range byID {
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

// patch puts into title j's list the new similarities of titles whose
// likers moved (news), which are among j's best before or after, and
// reports whether the list it made is the one ranking every title liked
// near j would make. The other titles of the list kept their similarity,
// and every title liked near j that is in neither ranks after the list's
// last as it was, so the patched list is right unless its new last ranks
// after that one: then a title left out before may belong in it.
func (c *Counts) patch(j int32, news []Neighbour) bool {
	list, k := c.lists[j], c.opts.Neighbours
	if len(list) == 0 {
		return false // nothing to patch (not reached: a moved title liked near j is in j's list)
	}
	last := list[len(list)-1]
	next := make([]Neighbour, 0, len(list)+len(news))
	for _, nb := range list {
		if !slices.ContainsFunc(news, func(x Neighbour) bool { return x.Title == nb.Title }) {
			next = append(next, nb)
		}
	}
	for _, nb := range news {
		at, _ := slices.BinarySearchFunc(next, nb, func(x, y Neighbour) int {
			if ranksBefore(x, y, c.ids) {
				return -1
			}
			return 1
		})
		next = slices.Insert(next, at, nb)
	}
	if len(next) > k {
		next = next[:k]
	}
	if len(list) == k && ranksBefore(last, next[len(next)-1], c.ids) {
		return false
	}
	c.lists[j] = slices.Clip(next)
	return true
}

// ranksBefore reports whether neighbour x ranks before y in a list: a
// higher similarity, and between equal ones the lower title id (ids are
// the titles' ids by number).
func ranksBefore(x, y Neighbour, ids []string) bool {
	if x.Sim != y.Sim {
		return x.Sim > y.Sim
	}
	return ids[x.Title] < ids[y.Title]
}

// best returns the k first of list in ranksBefore's order, sorted,
// reusing list's array: a heap of the k best so far, whose root is the
// worst of them, then a sort of those k. A title liked near thousands
// keeps a hundred, and sorting them all was most of a build. The
// comparisons are inline: calling a comparison function for each was
// half of a build's time.
func best(list []Neighbour, k int, ids []string) []Neighbour {
	order := func(x, y Neighbour) int {
		switch {
		case ranksBefore(x, y, ids):
			return -1
		case ranksBefore(y, x, ids):
			return 1
		}
		return 0
	}
	if len(list) <= k {
		slices.SortFunc(list, order)
		return list
	}
	h := list[:k]
	down := func(i int) {
		for {
			worst, l, r := i, 2*i+1, 2*i+2
			if l < k && ranksBefore(h[worst], h[l], ids) {
				worst = l
			}
			if r < k && ranksBefore(h[worst], h[r], ids) {
				worst = r
			}
			if worst == i {
				return
			}
			h[i], h[worst] = h[worst], h[i]
			i = worst
		}
	}
	for i := k/2 - 1; i >= 0; i-- {
		down(i)
	}
	for _, x := range list[k:] {
		if ranksBefore(x, h[0], ids) {
			h[0] = x
			down(0)
		}
	}
	slices.SortFunc(h, order)
	return slices.Clip(h)
}
