package eval

import (
	"cmp"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/profile"
)

// MovieLensOptions configure the MovieLens recommendation evaluation.
type MovieLensOptions struct {
	// Dir holds movies.csv and ratings.csv (MovieLens "latest-small" or
	// any other MovieLens release in the same format).
	Dir string
	// FromUser and ToUser bound the evaluated user ids, inclusive.
	FromUser, ToUser int
	// K is how many titles are recommended per user. Default 10.
	K int
	// Train is the share of each user's ratings, earliest first, that
	// becomes events; the rest is held out. Default 0.8.
	Train float64
	// Relevant is the rating from which a held-out title counts as a hit.
	// Default 4.
	Relevant float64
	// Weights and Model tune the ranking; zero values take the defaults
	// the agent uses.
	Weights profile.Weights
	Model   profile.ModelOptions
}

// Metrics are hit rate and NDCG at k, averaged over the evaluated users.
type Metrics struct {
	Hit  float64 `json:"hit"`
	NDCG float64 `json:"ndcg"`
}

// MovieLensResult is the outcome of the evaluation. Its JSON shape is a
// contract: {"users","k","hit","ndcg","baselines":{"popularity":{"hit",
// "ndcg"}},"seconds"}.
type MovieLensResult struct {
	// Users counts the evaluated users: those in range with at least one
	// held-out title rated Relevant or more.
	Users     int                `json:"users"`
	K         int                `json:"k"`
	Hit       float64            `json:"hit"`
	NDCG      float64            `json:"ndcg"`
	Baselines map[string]Metrics `json:"baselines"`
	Seconds   float64            `json:"seconds"`
}

// mlRating is one row of ratings.csv.
type mlRating struct {
	movie  string // catalog id, "ml:" + movieId
	rating float64
	at     int64
	row    int
}

// MovieLens measures the profile ranking on MovieLens, against a
// popularity baseline measured in the same run.
//
// movies.csv becomes the catalog (an in-memory index). For every user, the
// earliest Train share of their ratings by time (floor, ties in file order)
// become "rated" events and the rest are held out. The co-occurrence model
// and the popularity baseline learn from the training events of every user
// in the file; the evaluated users are those from FromUser to ToUser with
// at least one held-out title rated Relevant or more. Each evaluated user's
// events go through the learners into a profile, and the agent's ranking
// (agent.Rank with the profile Scorer, over the whole catalog in the
// catalog's order) recommends K titles; titles the user rated in training
// are seen, so never recommended. The popularity baseline recommends the K
// titles most rated in training (ties by id) that the user has not rated.
//
// A hit is a user with at least one relevant held-out title among the K;
// NDCG uses binary relevance, log2 discounts and the ideal ranking of
// min(K, relevant) titles. Both are averaged over the evaluated users.
func MovieLens(ctx context.Context, o MovieLensOptions) (*MovieLensResult, error) {
	start := time.Now()
	if o.K <= 0 {
		o.K = 10
	}
	if o.Train <= 0 || o.Train >= 1 {
		o.Train = 0.8
	}
	if o.Relevant == 0 {
		o.Relevant = 4
	}
	if o.Weights == (profile.Weights{}) {
		o.Weights = profile.DefaultWeights()
	}
	if o.FromUser <= 0 || o.ToUser < o.FromUser {
		return nil, memento.Errorf(memento.EINVALID, "users must be a range such as 1-300, got %d-%d", o.FromUser, o.ToUser)
	}
	titles, report, err := catalog.ReadFile(filepath.Join(o.Dir, "movies.csv"), catalog.FormatMovieLens)
	if err != nil {
		return nil, memento.WrapError(memento.EINVALID, err, "read %s: %v", filepath.Join(o.Dir, "movies.csv"), err)
	}
	if len(titles) == 0 {
		return nil, memento.Errorf(memento.EINVALID, "%s has no movies (%s)", filepath.Join(o.Dir, "movies.csv"), report.String())
	}
	idx := catalog.New(titles)
	all := idx.All()
	byUser, err := readRatings(filepath.Join(o.Dir, "ratings.csv"), idx)
	if err != nil {
		return nil, err
	}

	users := slices.Sorted(maps.Keys(byUser))
	train := make(map[int][]memento.Event, len(users))
	held := make(map[int][]mlRating, len(users))
	builder := profile.NewModelBuilder(o.Model)
	counts := map[string]int{}
	for _, u := range users {
		rs := byUser[u]
		slices.SortStableFunc(rs, func(a, b mlRating) int {
			if c := cmp.Compare(a.at, b.at); c != 0 {
				return c
			}
			return cmp.Compare(a.row, b.row)
		})
		n := int(math.Floor(o.Train * float64(len(rs))))
		events := make([]memento.Event, n)
		for i, r := range rs[:n] {
			v := r.rating
			events[i] = memento.Event{ID: fmt.Sprintf("ml-%d-%d", u, r.row), Type: memento.EventRated, TitleID: r.movie, Value: &v, At: time.Unix(r.at, 0).UTC()}
			counts[r.movie]++
		}
		train[u], held[u] = events, rs[n:]
		builder.Add(events)
	}
	model := builder.Build()

	popular := slices.Clone(all)
	slices.SortStableFunc(popular, func(a, b memento.Title) int {
		if c := cmp.Compare(counts[b.ID], counts[a.ID]); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})

	title := func(id string) (*memento.Title, bool) {
		t, err := idx.Title(ctx, id)
		return t, err == nil
	}
	profiles := memoryProfiles{}
	scorer := &profile.Scorer{Profiles: profiles, Models: staticModel{model}, Catalog: idx, Weights: o.Weights}
	ac := memento.NewActiveContext()
	ac.Count = o.K

	res := &MovieLensResult{K: o.K, Baselines: map[string]Metrics{}}
	var pop Metrics
	for _, u := range users {
		if u < o.FromUser || u > o.ToUser {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		relevant := map[string]bool{}
		for _, r := range held[u] {
			if r.rating >= o.Relevant {
				relevant[r.movie] = true
			}
		}
		if len(relevant) == 0 {
			continue
		}
		res.Users++
		s := memento.Scope{Tenant: memento.DefaultTenant, User: strconv.Itoa(u)}
		keys, err := profile.Learn(profile.NewInput(train[u], title), profile.DefaultLearners())
		if err != nil {
			return nil, err
		}
		profiles[s.User] = &memento.Profile{Tenant: s.Tenant, User: s.User, Keys: keys}

		ranked, err := agent.Rank(ctx, s, ac, all, []agent.Scorer{scorer})
		if err != nil {
			return nil, err
		}
		got := make([]string, 0, o.K)
		for _, r := range ranked[:min(o.K, len(ranked))] {
			got = append(got, r.Title.ID)
		}
		h, d := score(got, relevant, o.K)
		res.Hit += h
		res.NDCG += d

		rated := map[string]bool{}
		for _, e := range train[u] {
			rated[e.TitleID] = true
		}
		base := make([]string, 0, o.K)
		for _, t := range popular {
			if len(base) == o.K {
				break
			}
			if !rated[t.ID] {
				base = append(base, t.ID)
			}
		}
		h, d = score(base, relevant, o.K)
		pop.Hit += h
		pop.NDCG += d
		delete(profiles, s.User)
	}
	if res.Users > 0 {
		n := float64(res.Users)
		res.Hit, res.NDCG = res.Hit/n, res.NDCG/n
		pop.Hit, pop.NDCG = pop.Hit/n, pop.NDCG/n
	}
	res.Baselines["popularity"] = pop
	res.Seconds = math.Round(time.Since(start).Seconds()*1000) / 1000
	return res, nil
}

// score returns the hit (0 or 1) and NDCG of a recommendation list.
func score(list []string, relevant map[string]bool, k int) (hit, ndcg float64) {
	var dcg float64
	for i, id := range list {
		if relevant[id] {
			hit = 1
			dcg += 1 / math.Log2(float64(i+2))
		}
	}
	var ideal float64
	for i := range min(k, len(relevant)) {
		ideal += 1 / math.Log2(float64(i+2))
	}
	if ideal == 0 {
		return hit, 0
	}
	return hit, dcg / ideal
}

// readRatings reads ratings.csv (userId,movieId,rating,timestamp) into each
// user's ratings of titles the catalog has.
func readRatings(path string, idx *catalog.Index) (map[int][]mlRating, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, memento.WrapError(memento.EINVALID, err, "read %s: %v", path, err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.ReuseRecord = true
	r.FieldsPerRecord = 4
	out := map[int][]mlRating{}
	ctx := context.Background()
	for row := 0; ; row++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, memento.WrapError(memento.EINVALID, err, "read %s: %v", path, err)
		}
		if row == 0 && rec[0] == "userId" {
			continue
		}
		u, err1 := strconv.Atoi(rec[0])
		rating, err2 := strconv.ParseFloat(rec[2], 64)
		at, err3 := strconv.ParseInt(rec[3], 10, 64)
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, memento.Errorf(memento.EINVALID, "%s row %d: %v", path, row+1, err)
		}
		id := "ml:" + rec[1]
		if _, err := idx.Title(ctx, id); err != nil || rating < 0.5 || rating > 5 {
			continue
		}
		out[u] = append(out[u], mlRating{movie: id, rating: rating, at: at, row: row})
	}
	if len(out) == 0 {
		return nil, memento.Errorf(memento.EINVALID, "%s has no ratings of the catalog's movies", path)
	}
	return out, nil
}

// memoryProfiles serves the profiles the evaluation learns, by user.
type memoryProfiles map[string]*memento.Profile

func (p memoryProfiles) Profile(_ context.Context, s memento.Scope) (*memento.Profile, error) {
	if pr, ok := p[s.User]; ok {
		return pr, nil
	}
	return &memento.Profile{Tenant: s.Tenant, User: s.User, Keys: map[string]memento.ProfileEntry{}}, nil
}

// staticModel serves one co-occurrence model to every tenant.
type staticModel struct{ m *profile.Model }

func (s staticModel) Model(context.Context, string) (*profile.Model, error) { return s.m, nil }
