package profile

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
)

// Weights are the sizes of the ranking signals. Each signal is scaled to
// about [0, 1] (genre affinity to about [-1, 1]) before its weight applies,
// so the weights say how much each matters.
type Weights struct {
	// Collaborative weighs "people who liked what you liked also liked
	// this", from the co-occurrence model. It is the strongest signal.
	Collaborative float64
	// Dislike is the share of the collaborative signal of disliked titles
	// that is subtracted ("people who liked what you hated liked this").
	Dislike float64
	// Recency is the number of positions, counted back from a user's
	// newest like, over which a like's influence falls by a factor e.
	Recency float64
	Genre   float64
	People  float64
	// Era rewards a title inside the user's era and penalises one outside
	// it by up to the same amount, ten years or more away.
	Era float64
	// Popularity is the prior for titles many users have seen.
	Popularity float64
	Watchlist  float64
	// Skipped penalises titles the user skipped before.
	Skipped float64
}

// DefaultWeights are the weights the agent and the evaluation use.
func DefaultWeights() Weights {
	return Weights{
		Collaborative: 1,
		Dislike:       0.25,
		Recency:       20,
		Genre:         0.1,
		People:        0.2,
		Era:           0.03,
		Popularity:    0.05,
		Watchlist:     0.5,
		Skipped:       0.3,
	}
}

// Ranker scores catalog titles for one user from their profile and the
// co-occurrence model, deterministically and without any I/O: NewRanker
// does the per-user work once, Score is cheap per title.
type Ranker struct {
	w        Weights
	view     *View
	model    *Model
	seen     map[string]bool
	watch    map[string]bool
	genre    map[string]float64 // folded genre -> preferred weight minus disliked weight
	topGenre map[string]string  // folded genre -> name for reasons
	people   map[string]float64 // folded name -> weight
	names    map[string]string
	// collab holds the collaborative score of every title the user's
	// liked titles point to, scaled so the best is 1, and which liked
	// title contributed most.
	collab map[int32]collabScore
	// because holds the ids of the liked titles, for reasons; title and
	// named resolve and cache their names.
	because []string
	title   func(id string) (*memento.Title, bool)
	named   map[string]string
	skipped map[string]bool
	// folded caches fold of genre and cast names, which repeat across
	// titles.
	folded map[string]string
}

type collabScore struct {
	score float64
	from  int32 // index into because, -1 when none
}

// NewRanker prepares the ranking of one user. title names liked titles in
// reasons ("people who liked Heat also liked this"); nil uses ids. The
// model may be nil (no collaborative signal or popularity prior).
func NewRanker(w Weights, view *View, model *Model, title func(id string) (*memento.Title, bool)) *Ranker {
	if view == nil {
		view = &View{}
	}
	r := &Ranker{w: w, view: view, model: model,
		seen: map[string]bool{}, watch: map[string]bool{}, genre: map[string]float64{}, topGenre: map[string]string{},
		people: map[string]float64{}, names: map[string]string{}, collab: map[int32]collabScore{}, skipped: map[string]bool{},
		title: title, named: map[string]string{}, folded: map[string]string{}}
	for _, id := range view.Seen {
		r.seen[id] = true
	}
	for _, id := range view.Watchlist {
		r.watch[id] = true
	}
	for _, g := range view.PreferredGenres {
		k := fold(g.Genre)
		r.genre[k] += g.Weight
		r.topGenre[k] = g.Genre
	}
	for _, g := range view.DislikedGenres {
		k := fold(g.Genre)
		r.genre[k] -= g.Weight
		r.topGenre[k] = g.Genre
	}
	for _, p := range view.FavouritePeople {
		k := fold(p.Name)
		r.people[k] = max(r.people[k], p.Weight)
		r.names[k] = p.Name
	}
	for _, t := range view.DislikedTitles {
		r.seen[t.ID] = true // an opinion means it was seen
	}
	for _, id := range view.Skipped {
		r.skipped[id] = true
	}
	r.collaborative()
	return r
}

// collaborative sums, for every neighbour of the user's liked titles, the
// likes' weights times their recency times the similarity, minus Dislike
// times the same over disliked titles, and scales the result by the best
// positive sum.
func (r *Ranker) collaborative() {
	if r.model == nil || r.w.Collaborative == 0 {
		return
	}
	type acc struct {
		sum      float64
		best     float64
		bestFrom int32
	}
	sums := map[int32]*acc{}
	add := func(list []TitleWeight, sign float64, named bool) {
		n := len(list)
		for p, t := range list {
			i, ok := r.model.Index(t.ID)
			if !ok {
				continue
			}
			w := t.Weight
			if r.w.Recency > 0 {
				w *= math.Exp(-float64(n-1-p) / r.w.Recency)
			}
			from := int32(-1)
			if named {
				from = int32(len(r.because))
				r.because = append(r.because, t.ID)
			}
			for _, nb := range r.model.Neighbours(i) {
				c := w * float64(nb.Sim) * sign
				a := sums[nb.Title]
				if a == nil {
					a = &acc{bestFrom: -1}
					sums[nb.Title] = a
				}
				a.sum += c
				if c > a.best {
					a.best, a.bestFrom = c, from
				}
			}
		}
	}
	add(r.view.LikedTitles, 1, true)
	if r.w.Dislike > 0 {
		add(r.view.DislikedTitles, -r.w.Dislike, false)
	}
	var top float64
	for _, a := range sums {
		top = max(top, a.sum)
	}
	if top <= 0 {
		return
	}
	for i, a := range sums {
		r.collab[i] = collabScore{score: a.sum / top, from: a.bestFrom}
	}
}

// Signal scores one title. Seen titles are dropped, unless ac asks for the
// title by name (its free text is the title).
func (r *Ranker) Signal(ac memento.ActiveContext, t memento.Title) agent.Signal {
	sig := agent.Signal{}
	asked := ac.FreeText != "" && fold(ac.FreeText) == fold(t.Title)
	if r.seen[t.ID] {
		if !asked {
			return agent.Signal{Drop: true, Why: []string{"you have seen it"}}
		}
		sig.Why = append(sig.Why, "you have seen it, but asked for it")
	}
	// A title turned down (skipped) in any thread is not offered again
	// unless asked for by name.
	if r.skipped[t.ID] && !asked {
		return agent.Signal{Drop: true, Why: []string{"you turned it down before"}}
	}
	if r.model != nil {
		if i, ok := r.model.Index(t.ID); ok {
			if c, ok := r.collab[i]; ok {
				sig.Score += r.w.Collaborative * c.score
				if c.score >= 0.2 && c.from >= 0 {
					sig.Why = append(sig.Why, "people who liked "+r.name(r.because[c.from])+" also liked it")
				}
			}
			pop := r.model.popularityAt(i)
			sig.Score += r.w.Popularity * pop
			if pop >= 0.8 {
				sig.Why = append(sig.Why, "popular with other viewers")
			}
		}
	}
	if len(r.genre) > 0 && len(t.Genres) > 0 {
		var sum, best, worst float64
		var bestName, worstName string
		for _, g := range t.Genres {
			k := r.fold(g)
			w := r.genre[k]
			sum += w
			if w > best {
				best, bestName = w, r.topGenre[k]
			}
			if w < worst {
				worst, worstName = w, r.topGenre[k]
			}
		}
		sig.Score += r.w.Genre * sum / math.Sqrt(float64(len(t.Genres)))
		if best >= 0.5 {
			sig.Why = append(sig.Why, "you like "+bestName)
		}
		if worst <= -0.5 {
			sig.Why = append(sig.Why, "you tend to dislike "+worstName)
		}
	}
	if len(r.people) > 0 {
		var best float64
		var who string
		for _, p := range t.Cast[:min(len(t.Cast), castBilled)] {
			k := r.fold(p)
			if w := r.people[k]; w > best {
				best, who = w, r.names[k]
			}
		}
		if best > 0 {
			sig.Score += r.w.People * best
			sig.Why = append(sig.Why, "with "+who+", a favourite of yours")
		}
	}
	if e := r.view.Era; e != nil && t.Year > 0 {
		switch {
		case t.Year >= e.From && t.Year <= e.To:
			sig.Score += r.w.Era
			sig.Why = append(sig.Why, fmt.Sprintf("from your usual years (%d-%d)", e.From, e.To))
		case t.Year < e.From:
			sig.Score -= r.w.Era * min(1, float64(e.From-t.Year)/10)
		default:
			sig.Score -= r.w.Era * min(1, float64(t.Year-e.To)/10)
		}
	}
	if r.watch[t.ID] {
		sig.Score += r.w.Watchlist
		sig.Why = append(sig.Why, "on your watchlist")
	}
	if r.skipped[t.ID] {
		sig.Score -= r.w.Skipped
		sig.Why = append(sig.Why, "you turned it down before, but asked for it")
	}
	return sig
}

// name returns a title's name for reasons, or its id when the catalog
// does not have it.
func (r *Ranker) name(id string) string {
	if n, ok := r.named[id]; ok {
		return n
	}
	n := id
	if r.title != nil {
		if t, ok := r.title(id); ok && t.Title != "" {
			n = t.Title
		}
	}
	r.named[id] = n
	return n
}

// Scores scores every candidate, in order.
func (r *Ranker) Scores(ac memento.ActiveContext, candidates []memento.Title) []agent.Signal {
	out := make([]agent.Signal, len(candidates))
	for i, t := range candidates {
		out[i] = r.Signal(ac, t)
	}
	return out
}

// fold is the package's fold with a cache.
func (r *Ranker) fold(s string) string {
	if f, ok := r.folded[s]; ok {
		return f
	}
	f := fold(s)
	r.folded[s] = f
	return f
}

// fold makes names comparable: lower case, single spaces.
func fold(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }

// Profiles reads profiles; *sqlite.DB is one.
type Profiles interface {
	Profile(ctx context.Context, s memento.Scope) (*memento.Profile, error)
}

// Models hands out the current co-occurrence model of a tenant, or nil
// when none was learned yet.
type Models interface {
	Model(ctx context.Context, tenant string) (*Model, error)
}

// Scorer is the profile's ranking signal for the agent (an agent.Scorer):
// it reads the user's profile and the tenant's co-occurrence model and
// scores candidates with a Ranker.
type Scorer struct {
	Profiles Profiles
	// Models may be nil: ranking then reads the profile alone.
	Models Models
	// Catalog names liked titles in reasons; may be nil.
	Catalog memento.Catalog
	Weights Weights
	// Restore, when set, is called before the profile is read, so a user
	// unknown to the local store is restored from a snapshot first.
	Restore func(ctx context.Context, s memento.Scope) error
	// Logger reports a model that cannot be read; ranking then goes on
	// without it.
	Logger *slog.Logger
}

var _ agent.Scorer = (*Scorer)(nil)

// Score implements agent.Scorer.
func (sc *Scorer) Score(ctx context.Context, s memento.Scope, ac memento.ActiveContext, candidates []memento.Title) ([]agent.Signal, error) {
	r, err := sc.Ranker(ctx, s)
	if err != nil {
		return nil, err
	}
	return r.Scores(ac, candidates), nil
}

// Ranker prepares the ranking of one user.
func (sc *Scorer) Ranker(ctx context.Context, s memento.Scope) (*Ranker, error) {
	if sc.Restore != nil {
		if err := sc.Restore(ctx, s); err != nil {
			return nil, err
		}
	}
	p, err := sc.Profiles.Profile(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("profile scorer: %w", err)
	}
	var m *Model
	if sc.Models != nil {
		if m, err = sc.Models.Model(ctx, s.Tenant); err != nil {
			if sc.Logger != nil {
				sc.Logger.ErrorContext(ctx, "the co-occurrence model cannot be read; ranking without it", "tenant", s.Tenant, "err", err)
			}
			m = nil
		}
	}
	w := sc.Weights
	if w == (Weights{}) {
		w = DefaultWeights()
	}
	var title func(string) (*memento.Title, bool)
	if sc.Catalog != nil {
		title = func(id string) (*memento.Title, bool) {
			t, err := sc.Catalog.Title(ctx, id)
			return t, err == nil
		}
	}
	return NewRanker(w, Decode(p), m, title), nil
}
