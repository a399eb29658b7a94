package profile_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/profile"
)

// crowd builds a co-occurrence model from users who each liked the titles
// of one list, in order.
func crowd(lists ...[]string) *profile.Model {
	b := profile.NewModelBuilder(profile.ModelOptions{})
	for _, list := range lists {
		e := new(evs)
		for _, id := range list {
			e.add(memento.EventLiked, id)
		}
		b.Add(e.list)
	}
	return b.Build()
}

// profileOf learns a profile from events with the test catalog.
func profileOf(t *testing.T, events []memento.Event) *memento.Profile {
	t.Helper()
	idx := catalog.New(testTitles())
	title := func(id string) (*memento.Title, bool) {
		tt, err := idx.Title(context.Background(), id)
		return tt, err == nil
	}
	keys, err := profile.Learn(profile.NewInput(events, title), profile.DefaultLearners())
	if err != nil {
		t.Fatal(err)
	}
	return &memento.Profile{User: "u", Keys: keys}
}

type oneProfile struct{ p *memento.Profile }

func (o oneProfile) Profile(context.Context, memento.Scope) (*memento.Profile, error) {
	return o.p, nil
}

type oneModel struct{ m *profile.Model }

func (o oneModel) Model(context.Context, string) (*profile.Model, error) { return o.m, nil }

// rank ranks the whole test catalog for a profile through agent.Rank, as
// the agent does, and returns the ids in order with their reasons.
func rank(t *testing.T, p *memento.Profile, m *profile.Model, ac memento.ActiveContext) ([]string, map[string][]string) {
	t.Helper()
	idx := catalog.New(testTitles())
	sc := &profile.Scorer{Profiles: oneProfile{p}, Models: oneModel{m}, Catalog: idx}
	ranked, err := agent.Rank(context.Background(), memento.Scope{User: "u"}, ac, idx.All(), []agent.Scorer{sc})
	if err != nil {
		t.Fatalf("Rank: %v", err)
	}
	var ids []string
	why := map[string][]string{}
	for _, r := range ranked {
		ids = append(ids, r.Title.ID)
		why[r.Title.ID] = r.Why
	}
	return ids, why
}

func TestRankingNeverShowsSeenTitles(t *testing.T) {
	events := new(evs).add(memento.EventWatched, "heat").add(memento.EventRated, "casino", 2).add(memento.EventLiked, "godfather").
		add(memento.EventDisliked, "up").add(memento.EventAbandoned, "pride", 0.9)
	m := crowd([]string{"godfather", "heat", "casino", "collateral"}, []string{"godfather", "heat", "insider"})
	ids, _ := rank(t, profileOf(t, events.list), m, memento.NewActiveContext())
	for _, seen := range []string{"heat", "casino", "godfather", "up", "pride"} {
		if slices.Contains(ids, seen) {
			t.Errorf("seen title %s was ranked: %v", seen, ids)
		}
	}
	if len(ids) != len(testTitles())-5 {
		t.Errorf("ranked %d titles, want every unseen one (%d)", len(ids), len(testTitles())-5)
	}
	// Asked for by name, a seen title comes back.
	ac := memento.NewActiveContext()
	ac.FreeText = "heat"
	ids, why := rank(t, profileOf(t, events.list), m, ac)
	if !slices.Contains(ids, "heat") || !slices.Contains(why["heat"], "you have seen it, but asked for it") {
		t.Errorf("a seen title asked for by name was dropped: %v", ids)
	}
}

func TestRankingSignals(t *testing.T) {
	m := crowd(
		[]string{"heat", "collateral"}, []string{"heat", "collateral"}, []string{"heat", "collateral", "insider"},
		[]string{"godfather", "casino"}, []string{"hangover", "love"},
	)
	tests := []struct {
		name    string
		events  *evs
		user    map[string]string // user-set keys
		top     string
		why     string
		notTop3 []string
	}{
		{
			name:   "people who liked Heat also liked Collateral",
			events: new(evs).add(memento.EventLiked, "heat"),
			top:    "collateral", why: "people who liked Heat also liked it",
		},
		{
			name:   "watchlist boost",
			events: new(evs).add(memento.EventWatchlisted, "up"),
			top:    "up", why: "on your watchlist",
		},
		{
			name:   "favourite people",
			events: new(evs).add(memento.EventLiked, "heat").add(memento.EventLiked, "godfather"),
			top:    "collateral",
		},
		{
			name:    "disliked genres sink",
			events:  new(evs).add(memento.EventDisliked, "it").add(memento.EventDisliked, "conjuring"),
			notTop3: []string{"insidious"},
		},
		{
			name:   "a user-set genre preference stands",
			events: new(evs).add(memento.EventLiked, "heat"),
			user:   map[string]string{"likedTitles": `[]`, "preferredGenres": `[{"genre":"Romance","weight":1}]`},
			top:    "love", why: "you like Romance",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := profileOf(t, tt.events.list)
			for k, v := range tt.user {
				p.Keys[k] = memento.ProfileEntry{Value: json.RawMessage(v), Source: memento.ProfileUser}
			}
			ids, why := rank(t, p, m, memento.NewActiveContext())
			if tt.top != "" && ids[0] != tt.top {
				t.Errorf("top title = %s, want %s (ranking %v)", ids[0], tt.top, ids)
			}
			if tt.why != "" && !slices.Contains(why[tt.top], tt.why) {
				t.Errorf("why of %s = %q, want it to hold %q", tt.top, why[tt.top], tt.why)
			}
			for _, id := range tt.notTop3 {
				if slices.Contains(ids[:3], id) {
					t.Errorf("%s is in the top three: %v", id, ids)
				}
			}
		})
	}
}

func TestRankerIsDeterministic(t *testing.T) {
	m := crowd([]string{"heat", "collateral", "insider"}, []string{"insider", "heat"}, []string{"casino", "godfather"})
	p := profileOf(t, new(evs).add(memento.EventLiked, "heat").add(memento.EventRated, "casino", 4).list)
	first, _ := rank(t, p, m, memento.NewActiveContext())
	for range 5 {
		again, _ := rank(t, p, m, memento.NewActiveContext())
		if diff := cmp.Diff(first, again); diff != "" {
			t.Fatalf("a second ranking differs (-first +again):\n%s", diff)
		}
	}
}

func TestModel(t *testing.T) {
	m := crowd([]string{"a", "b", "c"}, []string{"a", "b"}, []string{"c", "d"})
	if m.Len() != 4 || m.Users() != 3 {
		t.Fatalf("model has %d titles, %d users; want 4, 3", m.Len(), m.Users())
	}
	a, _ := m.Index("a")
	var names []string
	for _, nb := range m.Neighbours(a) {
		names = append(names, m.ID(nb.Title))
	}
	if diff := cmp.Diff([]string{"b", "c"}, names); diff != "" {
		t.Errorf("neighbours of a (-want +got):\n%s", diff)
	}
	if m.Seen("a") != 2 || m.Seen("zzz") != 0 {
		t.Errorf("Seen(a) = %d, Seen(zzz) = %d; want 2, 0", m.Seen("a"), m.Seen("zzz"))
	}
	if p := m.Popularity("a"); p != 1 {
		t.Errorf("Popularity of the most seen title = %v, want 1", p)
	}

	data, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	back, err := profile.DecodeModel(data)
	if err != nil {
		t.Fatalf("DecodeModel: %v", err)
	}
	again, _ := back.MarshalBinary()
	if !slices.Equal(data, again) {
		t.Error("a decoded model encodes differently")
	}
	for _, bad := range [][]byte{nil, []byte("MCO1"), data[:len(data)-3], append(slices.Clone(data), 0), []byte("XXXX")} {
		if _, err := profile.DecodeModel(bad); err == nil {
			t.Errorf("DecodeModel(%q) succeeded", bad)
		}
	}
}

func TestModelWindow(t *testing.T) {
	// x is liked right after a by one user and 40 titles later by another:
	// the close pair weighs more than the distant one.
	long := []string{"a"}
	for i := range 39 {
		long = append(long, "filler"+strings.Repeat("z", i+1))
	}
	long = append(long, "y")
	m := crowd([]string{"a", "x"}, long)
	a, _ := m.Index("a")
	sims := map[string]float32{}
	for _, nb := range m.Neighbours(a) {
		sims[m.ID(nb.Title)] = nb.Sim
	}
	if !(sims["x"] > 10*sims["y"]) {
		t.Errorf("similarity to a close title %v is not far above a distant one %v", sims["x"], sims["y"])
	}
}

func BenchmarkRankCatalog(b *testing.B) {
	titles, err := catalog.EmbeddedTitles()
	if err != nil {
		b.Fatal(err)
	}
	// A crowd of 300 users with 80 likes each over the first 3000 titles.
	builder := profile.NewModelBuilder(profile.ModelOptions{})
	for u := range 300 {
		e := new(evs)
		for k := range 80 {
			e.add(memento.EventLiked, titles[(u*37+k*11)%3000].ID)
		}
		builder.Add(e.list)
	}
	m := builder.Build()
	e := new(evs)
	for k := range 200 {
		e.add(memento.EventRated, titles[(k*13)%3000].ID, float64(1+k%5))
	}
	idx := catalog.New(titles)
	title := func(id string) (*memento.Title, bool) {
		t, err := idx.Title(context.Background(), id)
		return t, err == nil
	}
	keys, _ := profile.Learn(profile.NewInput(e.list, title), profile.DefaultLearners())
	view := profile.Decode(&memento.Profile{Keys: keys})
	ac := memento.NewActiveContext()
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		r := profile.NewRanker(profile.DefaultWeights(), view, m, title)
		r.Scores(ac, titles)
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N)/1000, "ms/catalog")
}
