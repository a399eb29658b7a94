package experiment

import "math"

// gradedTitle is a catalog title with the grade one user gives it.
type gradedTitle struct {
	id    string
	grade int
}

// idealDepth is how many of the best titles for a request are kept for
// the ideal ranking: enough that ten remain once the titles a user has
// seen (one a session) and those shown earlier in the thread are left out.
const idealDepth = 64

// ideal returns the catalog's best titles for a request as the user rates
// them now, best grade first and the catalog's order among equals, only
// those the user would rate 1 or more and does not dislike. A title meets
// a request when it has the genre, the year and the person it names.
func (c *simCatalog) ideal(t *taste, r simRequest) []gradedTitle {
	var buckets [4][]gradedTitle
	consider := func(i int) {
		ti := &c.titles[i]
		if r.from != 0 && (ti.year < r.from || ti.year > r.to) {
			return
		}
		if r.person >= 0 && !containsInt(ti.people, r.person) {
			return
		}
		g, bad := t.rate(ti)
		if bad || g == 0 || len(buckets[g]) == idealDepth {
			return
		}
		buckets[g] = append(buckets[g], gradedTitle{ti.id, g})
	}
	if r.genre >= 0 {
		for _, i := range c.byGenre[r.genre] {
			consider(i)
		}
	} else {
		for i := range c.titles {
			consider(i)
		}
	}
	var out []gradedTitle
	for g := 3; g >= 1 && len(out) < idealDepth; g-- {
		out = append(out, buckets[g][:min(len(buckets[g]), idealDepth-len(out))]...)
	}
	return out
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// listScore is one recommendation list scored against the user's taste.
type listScore struct {
	hit bool
	// ndcg is NDCG@10; ideal is false when nothing in the catalog meets
	// the request and would please the user, so NDCG is undefined and the
	// list is left out of its mean.
	ndcg  float64
	ideal bool
	// good, disliked and seen count the list's top ten places holding an
	// unseen title graded goodGrade or more, a disliked title, and a
	// title the user has seen.
	good, disliked, seen int
}

// gain is the NDCG gain of a grade.
func gain(grade int) float64 { return math.Exp2(float64(grade)) - 1 }

// score grades the first ten titles of a list. Seen titles and disliked
// ones gain nothing and are counted apart; the ideal is the best ten of
// ideal not in exclude (the titles seen, and those the thread showed
// before, which the agent rightly leaves out).
func (c *simCatalog) score(titles []SimTitle, t *taste, seen map[string]bool, ideal []gradedTitle, exclude map[string]bool) listScore {
	var s listScore
	var dcg, idcg float64
	for i, ti := range titles {
		if i == listSize {
			break
		}
		if seen[ti.ID] {
			s.seen++
			continue
		}
		g, bad := t.rate(c.title(ti))
		if bad {
			s.disliked++
			continue
		}
		if g >= goodGrade {
			s.good++
			s.hit = true
		}
		dcg += gain(g) / math.Log2(float64(i+2))
	}
	k := 0
	for _, it := range ideal {
		if k == listSize {
			break
		}
		if exclude[it.id] {
			continue
		}
		idcg += gain(it.grade) / math.Log2(float64(k+2))
		k++
	}
	if idcg > 0 {
		s.ideal = true
		s.ndcg = math.Min(1, dcg/idcg)
	}
	return s
}
