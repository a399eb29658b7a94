package agent

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/memento-ai/memento"
)

// Similarity tells how alike titles are, and how close a title is to a
// concept, by plot and genres; prefs.Likeness (over the preference
// memory's title vectors) is one.
type Similarity interface {
	// Like returns, for each candidate, its similarity (a cosine) to the
	// nearest of the anchor titles.
	Like(ctx context.Context, anchors, candidates []memento.Title) ([]float64, error)
	// Near returns, for each candidate, its similarity to a concept such
	// as "feel-good" or "dark".
	Near(ctx context.Context, concept string, candidates []memento.Title) ([]float64, error)
}

// Weights of the ranking. The notability prior orders titles the
// constraints and memory do not tell apart; a remembered dislike outweighs
// everything but a direct request; likeness to an anchor title dominates a
// "more like that" request.
const (
	notabilityWeight = 0.5
	tasteLikeWeight  = 0.3
	tasteDislike     = -1.5
	likeWeight       = 1.2
	moodWeight       = 0.3
	// genreCover is what a title having every genre of a request for
	// several ("romantic comedies", "crime dramas") is worth over one
	// having only one of them: the catalog matches any of them, the user
	// means all.
	genreCover  = 0.4
	runtimeMiss = -0.4
	// whyLike and whyMood are the similarities from which a title's
	// likeness to an anchor, or to a mood, is named as a reason.
	whyLike = 0.2
	whyMood = 0.15
)

// Sizes of the candidate pool: the titles matching the constraints, most
// notable first, and the extra draws by what memory says the user likes
// and by likeness to anchor titles. The pool is bounded, so a turn ranks
// at most a few hundred titles whatever the catalog's size.
const (
	tasteDraw  = 60 // titles per liked genre, person or topic
	maxDraws   = 3  // liked genres (people, topics) drawn from
	anchorDraw = 100
)

// pool gathers the candidates of a turn: the constraint pool (paged with
// exclusions, CandidatePool titles in notability order, leaving out the
// titles shown before unless too few others match), then titles of
// the user's liked genres, people and topics and titles like the anchors,
// each drawn under the same constraints. Titles are deduplicated.
func (a *Agent) pool(ctx context.Context, ac memento.ActiveContext, taste *Taste, anchors []memento.Title, shown []string) ([]memento.Title, error) {
	seen := map[string]bool{}
	var seenIDs []string // seen's keys, in the order they came
	for _, t := range anchors {
		if !seen[t.ID] {
			seen[t.ID] = true // "more like Heat" does not show Heat
			seenIDs = append(seenIDs, t.ID)
		}
	}
	// Each draw's titles are kept in the slice the catalog returned, and
	// joined once at the end: appending them one by one to a growing
	// pool copied each title (184 bytes) about twice more: 6% of all a
	// server allocated under 64 clients.
	var parts [][]memento.Title
	total := 0
	_, excludes := a.Catalog.(CandidateSource)
	add := func(q memento.TitleQuery, limit int) error {
		// A catalog that hands out candidates leaves out the titles
		// already in the pool itself, so that a draw copies only the
		// titles it adds; one paged through is asked for enough more.
		n := limit + len(seen)
		if excludes {
			q.Exclude = append(slices.Clip(q.Exclude), seenIDs...)
			n = limit
		}
		titles, err := a.candidates(ctx, q, n)
		if err != nil {
			return err
		}
		kept := titles[:0] // the caller's own (CandidateSource)
		for _, t := range titles {
			if limit == 0 {
				break
			}
			if !seen[t.ID] {
				seen[t.ID] = true
				seenIDs = append(seenIDs, t.ID)
				kept = append(kept, t)
				limit--
			}
		}
		if len(kept) > 0 {
			parts = append(parts, kept)
			total += len(kept)
		}
		return nil
	}
	// The draws leave out what the thread showed before, so a long thread
	// still ranks fresh titles; those come back only when too few others
	// match.
	fresh := Query(ac, 1, PageSize)
	fresh.Exclude = append(slices.Clone(fresh.Exclude), shown...)
	if err := add(fresh, max(ac.Count, CandidatePool)); err != nil {
		return nil, err
	}
	base := fresh
	if total < ac.Count && len(shown) > 0 {
		base = Query(ac, 1, PageSize)
		if err := add(base, ac.Count); err != nil {
			return nil, err
		}
	}
	if !taste.Empty() {
		draws := map[string]int{}
		for _, it := range taste.Likes {
			q := base
			switch {
			case it.Genre != "" && len(ac.Genres) == 0:
				q.Genres = []string{it.Genre}
			case it.Person != "" && len(ac.People) == 0:
				q.People = []string{it.Person}
			case it.Word != "" && ac.FreeText == "":
				q.Text = it.Word
			default:
				continue
			}
			kind := kindOf(it)
			if draws[kind] >= maxDraws {
				continue
			}
			draws[kind]++
			if err := add(q, tasteDraw); err != nil {
				return nil, err
			}
		}
	}
	for _, t := range anchors {
		if len(ac.Genres) == 0 && len(t.Genres) > 0 {
			q := base
			q.Genres = t.Genres
			if err := add(q, anchorDraw); err != nil {
				return nil, err
			}
		}
		if text := anchorText(t); text != "" && ac.FreeText == "" {
			q := base
			q.Text = text
			if err := add(q, anchorDraw); err != nil {
				return nil, err
			}
		}
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	out := make([]memento.Title, 0, total)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out, nil
}

// CandidateSource is a catalog that hands out the n best matches of a
// query at once, without paging or counting every match;
// catalog.Index is one. A catalog without it is paged through. The
// returned slice is the caller's, which the pool filters in place.
type CandidateSource interface {
	Candidates(ctx context.Context, q memento.TitleQuery, n int) ([]memento.Title, error)
}

// candidates returns up to n titles matching q in the catalog's order.
func (a *Agent) candidates(ctx context.Context, q memento.TitleQuery, n int) ([]memento.Title, error) {
	if src, ok := a.Catalog.(CandidateSource); ok {
		return src.Candidates(ctx, q, n)
	}
	var out []memento.Title
	for page := 1; page <= MaxPages && len(out) < n; page++ {
		q.Page, q.Size = page, min(memento.MaxPageSize, max(n, PageSize))
		res, err := a.Catalog.Search(ctx, q)
		if err != nil {
			return nil, err
		}
		out = append(out, res.Titles...)
		if res.Last {
			break
		}
	}
	return out, nil
}

func kindOf(it TasteItem) string {
	switch {
	case it.Genre != "":
		return "genre"
	case it.Person != "":
		return "person"
	}
	return "word"
}

// anchorText is the free text that finds titles of a like plot: the
// anchor's plot after its first sentence (which mostly names the kind of
// film, its year and its makers, words most plots share), at most
// maxAnchorText bytes, without the anchor's own name (which would find its
// namesakes).
func anchorText(t memento.Title) string {
	text := t.Overview
	if i := strings.Index(text, ". "); i > 0 && len(text)-i > 80 {
		text = text[i+2:]
	}
	if len(text) > maxAnchorText {
		text = text[:max(strings.LastIndex(text[:maxAnchorText], " "), 0)]
	}
	return strings.TrimSpace(strings.ReplaceAll(text, t.Title, " "))
}

// maxAnchorText bounds the free text of an anchor's plot draw: each word
// is a posting list to score.
const maxAnchorText = 250

// scored is a candidate during ranking.
type scored struct {
	// Title is the pool's: a candidate is ranked without a copy of it.
	Title *memento.Title
	Score float64
	Why   []string
	// base is the score without what long-term memory says (notability,
	// likeness, mood): the order of a user the agent knows nothing of.
	base float64
	// memory are the reasons that came from long-term memory.
	memory []string
	// dislike is the remembered dislike that pushed the title down, if
	// any; dropped says a scorer removed it (seen, turned down) and why.
	dislike *TasteItem
	dropped string
	drop    bool
}

// ranked is the candidate as the agent answers it.
func (c *scored) ranked() Ranked { return Ranked{Title: *c.Title, Score: c.Score, Why: c.Why} }

// ranking is the outcome of ranking a pool.
type ranking struct {
	shown []scored
	// base is what a user without memory would have been shown.
	base []scored
	// contradicted are remembered dislikes the request asks for anyway.
	contradicted []TasteItem
	// notes are things the ranking could not honour (soft constraints).
	notes []string
}

// rank orders the pool for ac: notability, likeness to the anchors and the
// soft constraints for everyone; remembered likes and dislikes and the
// scorers' signals for this user. It keeps ac.Count titles, diversified.
func (a *Agent) rank(ctx context.Context, s memento.Scope, ac memento.ActiveContext, pool []memento.Title, taste *Taste, anchors []memento.Title, shown []string) (*ranking, error) {
	out := &ranking{}
	cands := make([]scored, len(pool))
	for i := range pool {
		t := &pool[i]
		cands[i] = scored{Title: t, Score: notabilityWeight * t.Notability, Why: Matches(ac, *t)}
		if n := len(ac.Genres); n > 1 {
			have := 0
			for _, g := range ac.Genres {
				if containsFold(t.Genres, g) {
					have++
				}
			}
			cands[i].Score += genreCover * float64(have-1) / float64(n-1)
		}
	}
	if len(anchors) > 0 {
		sims, err := a.likeness(ctx, anchors, pool)
		if err != nil {
			return nil, err
		}
		for i, sim := range sims {
			cands[i].Score += likeWeight * sim
			if sim >= whyLike {
				cands[i].Why = append(cands[i].Why, fmt.Sprintf("like %s (similarity %.2f)", nearestName(anchors, pool[i]), sim))
			}
		}
	}
	notes, err := a.soft(ctx, ac, cands)
	if err != nil {
		return nil, err
	}
	out.notes = notes
	for i := range cands {
		cands[i].base = cands[i].Score
	}

	if !taste.Empty() {
		out.contradicted = applyTaste(ac, taste, cands)
	}
	for _, sc := range a.Scorers {
		sigs, err := sc.Score(ctx, s, ac, pool)
		if err != nil {
			return nil, fmt.Errorf("rank: %w", err)
		}
		if len(sigs) != len(pool) {
			return nil, fmt.Errorf("rank: scorer %T returned %d signals for %d candidates", sc, len(sigs), len(pool))
		}
		for i, sig := range sigs {
			cands[i].Score += sig.Score
			cands[i].Why = append(cands[i].Why, sig.Why...)
			cands[i].memory = append(cands[i].memory, sig.Why...)
			if sig.Drop {
				cands[i].drop = true
				cands[i].dropped = strings.Join(sig.Why, "; ")
			}
		}
	}
	// Titles the thread showed before come after every fresh one, so a
	// follow-up never repeats an earlier answer while the catalog has
	// other matches.
	before := make(map[string]bool, len(shown))
	for _, id := range shown {
		before[id] = true
	}
	stale := func(c scored) bool { return before[c.Title.ID] }
	// Sorting positions, not the candidates themselves: a candidate is
	// about a hundred bytes, and a stable sort moves each many times.
	isStale := make([]bool, len(cands))
	for i := range cands {
		isStale[i] = stale(cands[i])
	}
	order := func(score func(*scored) float64, keep func(*scored) bool) []int {
		idx := make([]int, 0, len(cands))
		for i := range cands {
			if keep(&cands[i]) {
				idx = append(idx, i)
			}
		}
		slices.SortStableFunc(idx, func(x, y int) int {
			if isStale[x] != isStale[y] {
				if isStale[x] {
					return 1
				}
				return -1
			}
			return cmp.Compare(score(&cands[y]), score(&cands[x]))
		})
		return idx
	}
	kept := order(func(c *scored) float64 { return c.Score }, func(c *scored) bool { return !c.drop })
	base := order(func(c *scored) float64 { return c.base }, func(*scored) bool { return true })
	// The ranking without memory holds nothing back: it is what the
	// answer would be had nothing been remembered.
	out.shown = diversify(cands, kept, ac.Count, func(c *scored) bool { return c.dislike != nil })
	out.base = diversify(cands, base, ac.Count, nil)
	return out, nil
}

// applyTaste adds what the user's attribute memories say to each
// candidate's score. A remembered dislike the request itself asks for
// ("musicals", from a user who hates them) is not held against the
// titles: it is returned, so the reply can say so.
func applyTaste(ac memento.ActiveContext, taste *Taste, cands []scored) (contradicted []TasteItem) {
	asked := func(it TasteItem) bool {
		switch {
		case it.Genre != "":
			return containsFold(ac.Genres, it.Genre)
		case it.Person != "":
			return containsFold(ac.People, it.Person)
		}
		return it.Word != "" && slices.Contains(topicWords(ac.FreeText), it.Word)
	}
	var dislikes []TasteItem
	for _, it := range taste.Dislikes {
		if asked(it) {
			contradicted = append(contradicted, it)
			continue
		}
		dislikes = append(dislikes, it)
	}
	hasWords := slices.ContainsFunc(dislikes, func(it TasteItem) bool { return it.Word != "" }) ||
		slices.ContainsFunc(taste.Likes, func(it TasteItem) bool { return it.Word != "" })
	for i := range cands {
		c := &cands[i]
		var words map[string]bool
		if hasWords {
			words = plotWords(*c.Title)
		}
		for _, it := range dislikes {
			if it.matches(*c.Title, words) {
				c.Score += tasteDislike
				d := it
				c.dislike = &d
				break
			}
		}
		for _, it := range taste.Likes {
			if it.matches(*c.Title, words) {
				c.Score += tasteLikeWeight
				why := "you like " + it.label()
				c.Why = append(c.Why, why)
				c.memory = append(c.memory, why)
				break
			}
		}
	}
	return contradicted
}

// likeness scores candidates by similarity to the anchors: the
// Similarity's when the agent has one, otherwise the share of genres they
// have in common.
func (a *Agent) likeness(ctx context.Context, anchors, pool []memento.Title) ([]float64, error) {
	if a.Similar != nil {
		sims, err := a.Similar.Like(ctx, anchors, pool)
		if err != nil {
			return nil, fmt.Errorf("likeness: %w", err)
		}
		return sims, nil
	}
	out := make([]float64, len(pool))
	for i, t := range pool {
		for _, an := range anchors {
			out[i] = max(out[i], jaccard(an.Genres, t.Genres))
		}
	}
	return out, nil
}

func jaccard(a, b []string) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	common := 0
	for _, g := range a {
		if containsFold(b, g) {
			common++
		}
	}
	return float64(common) / float64(len(a)+len(b)-common)
}

// nearestName names the anchor a title is most like by genres (the
// reason's wording; the score is the similarity's).
func nearestName(anchors []memento.Title, t memento.Title) string {
	best, name := -1.0, anchors[0].Title
	for _, an := range anchors {
		if j := jaccard(an.Genres, t.Genres); j > best {
			best, name = j, an.Title
		}
	}
	return name
}

// soft applies the soft constraints where the data allows and returns a
// note for each it could not apply.
func (a *Agent) soft(ctx context.Context, ac memento.ActiveContext, cands []scored) ([]string, error) {
	var notes []string
	for _, sc := range ac.Soft {
		switch sc.Kind {
		case memento.SoftMood:
			if a.Similar == nil {
				notes = append(notes, fmt.Sprintf("I cannot tell which titles are %s, so %q did not change the order.", sc.Value, sc.Said))
				continue
			}
			titles := make([]memento.Title, len(cands))
			for i := range cands {
				titles[i] = *cands[i].Title
			}
			// "not sad": steer away from the mood, naming nothing.
			mood, away := strings.CutPrefix(sc.Value, "not ")
			sims, err := a.Similar.Near(ctx, mood, titles)
			if err != nil {
				return nil, fmt.Errorf("mood %q: %w", sc.Value, err)
			}
			for i, sim := range sims {
				if away {
					cands[i].Score -= moodWeight * max(sim, 0)
					continue
				}
				cands[i].Score += moodWeight * sim
				if sim >= whyMood {
					cands[i].Why = append(cands[i].Why, fmt.Sprintf("feels %s (similarity %.2f)", mood, sim))
				}
			}
		case memento.SoftRuntime:
			lo, hi, ok := runtimeBounds(sc.Value)
			known := 0
			for i := range cands {
				m := cands[i].Title.RuntimeMinutes
				if !ok || m <= 0 {
					continue
				}
				known++
				if (lo > 0 && m < lo) || (hi > 0 && m > hi) {
					cands[i].Score += runtimeMiss
				} else {
					cands[i].Why = append(cands[i].Why, fmt.Sprintf("runs %d minutes", m))
				}
			}
			if known == 0 {
				notes = append(notes, fmt.Sprintf("The catalog has no running times for these titles, so I could not keep to %q.", sc.Said))
			}
		case memento.SoftPlatform:
			notes = append(notes, fmt.Sprintf("I don't know what is on %s, so I could not keep to %q.", sc.Value, sc.Said))
		}
	}
	return notes, nil
}

// runtimeBounds reads a runtime bound: "<=120", ">=150", "90-120".
func runtimeBounds(v string) (lo, hi int, ok bool) {
	v = strings.ReplaceAll(v, " ", "")
	var n, m int
	switch {
	case strings.HasPrefix(v, "<="):
		_, err := fmt.Sscanf(v[2:], "%d", &n)
		return 0, n, err == nil && n > 0
	case strings.HasPrefix(v, ">="):
		_, err := fmt.Sscanf(v[2:], "%d", &n)
		return n, 0, err == nil && n > 0
	}
	if _, err := fmt.Sscanf(v, "%d-%d", &n, &m); err == nil && n > 0 && m >= n {
		return n, m, true
	}
	return 0, 0, false
}

// diversify keeps n of cands in the order of ranked (indexes into cands:
// the ranking sorts positions and copies only what it keeps), passing
// over a title of a series already kept (the same name before a number or
// a colon: "Saw II" after "Saw") while others are left; passed-over
// titles fill what is left.
// Titles held back (a remembered dislike, when held is set) never jump
// ahead for variety: they come after every passed-over sequel.
func diversify(cands []scored, ranked []int, n int, held func(*scored) bool) []scored {
	if len(ranked) <= n {
		out := make([]scored, len(ranked))
		for k, i := range ranked {
			out[k] = cands[i]
		}
		return out
	}
	out := make([]scored, 0, n)
	var later, last []int
	series := map[string]bool{}
	for _, i := range ranked {
		if len(out) == n {
			break
		}
		c := &cands[i]
		if held != nil && held(c) {
			last = append(last, i)
			continue
		}
		k := seriesKey(c.Title.Title)
		if series[k] {
			later = append(later, i)
			continue
		}
		series[k] = true
		out = append(out, *c)
	}
	for _, i := range append(later, last...) {
		if len(out) == n {
			break
		}
		out = append(out, cands[i])
	}
	return out
}

// seriesKey is a title's name without what tells the parts of a series
// apart: what follows a colon or dash, a trailing number or roman numeral,
// a leading article.
func seriesKey(title string) string {
	t := strings.ToLower(title)
	for _, sep := range []string{":", " - ", " – "} {
		if i := strings.Index(t, sep); i > 0 {
			t = t[:i]
		}
	}
	words := strings.FieldsFunc(t, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for len(words) > 1 && isPartNumber(words[len(words)-1]) {
		words = words[:len(words)-1]
	}
	if len(words) > 1 && (words[0] == "the" || words[0] == "a" || words[0] == "an") {
		words = words[1:]
	}
	return strings.Join(words, " ")
}

func isPartNumber(w string) bool {
	switch w {
	case "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x", "part", "returns", "again", "3d":
		return true
	}
	for _, r := range w {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}
