package profile_test

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/profile"
)

// evs builds events one minute apart, in the order given, with ids e1, e2...
type evs struct {
	list []memento.Event
	t    time.Time
}

func (b *evs) add(typ memento.EventType, title string, value ...float64) *evs {
	if b.t.IsZero() {
		b.t = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	b.t = b.t.Add(time.Minute)
	e := memento.Event{ID: "e" + strconv.Itoa(len(b.list)+1), Type: typ, TitleID: title, At: b.t}
	if len(value) > 0 {
		v := value[0]
		e.Value = &v
	}
	b.list = append(b.list, e)
	return b
}

// learn runs the default learners over events with the test catalog and
// returns each key's JSON value.
func learn(t *testing.T, events []memento.Event) (map[string]string, map[string][]string) {
	t.Helper()
	idx := catalog.New(testTitles())
	title := func(id string) (*memento.Title, bool) {
		tt, err := idx.Title(t.Context(), id)
		return tt, err == nil
	}
	keys, err := profile.Learn(profile.NewInput(events, title), profile.DefaultLearners())
	if err != nil {
		t.Fatalf("Learn: %v", err)
	}
	values, evidence := map[string]string{}, map[string][]string{}
	for k, e := range keys {
		if e.Source != memento.ProfileLearned {
			t.Errorf("key %s has source %q, want learned", k, e.Source)
		}
		values[k] = string(e.Value)
		evidence[k] = e.Evidence
	}
	return values, evidence
}

func TestJudgeResolvesConflictsByRecency(t *testing.T) {
	tests := []struct {
		name      string
		events    *evs
		sentiment float64
		seen      bool
		watch     bool
	}{
		{"liked then disliked", new(evs).add(memento.EventLiked, "heat").add(memento.EventDisliked, "heat"), -1, true, false},
		{"disliked then liked", new(evs).add(memento.EventDisliked, "heat").add(memento.EventLiked, "heat"), 1, true, false},
		{"rated 5 then disliked", new(evs).add(memento.EventRated, "heat", 5).add(memento.EventDisliked, "heat"), -1, true, false},
		{"disliked then rated 4", new(evs).add(memento.EventDisliked, "heat").add(memento.EventRated, "heat", 4), 0.5, true, false},
		{"explicit opinion beats a later watch", new(evs).add(memento.EventLiked, "heat").add(memento.EventAbandoned, "heat", 0.1), 1, true, false},
		{"finished without opinion", new(evs).add(memento.EventFinished, "heat"), 0.3, true, false},
		{"abandoned early", new(evs).add(memento.EventAbandoned, "heat", 0.2), -0.4, true, false},
		{"watchlisted", new(evs).add(memento.EventWatchlisted, "heat"), 0, false, true},
		{"watchlisted then watched", new(evs).add(memento.EventWatchlisted, "heat").add(memento.EventWatched, "heat"), 0.2, true, false},
		{"watched then watchlisted again", new(evs).add(memento.EventWatched, "heat").add(memento.EventWatchlisted, "heat"), 0.2, true, true},
		{"skipped", new(evs).add(memento.EventSkipped, "heat"), -0.2, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js := profile.Judge(tt.events.list)
			if len(js) != 1 {
				t.Fatalf("Judge gave %d judgements, want 1", len(js))
			}
			j := js[0]
			if j.Sentiment != tt.sentiment || j.Seen != tt.seen || j.Watchlisted != tt.watch {
				t.Errorf("judgement = sentiment %v seen %v watchlisted %v; want %v %v %v", j.Sentiment, j.Seen, j.Watchlisted, tt.sentiment, tt.seen, tt.watch)
			}
			if len(j.Evidence) != len(tt.events.list) {
				t.Errorf("evidence %v, want every event", j.Evidence)
			}
		})
	}
}

func TestLearners(t *testing.T) {
	tests := []struct {
		name     string
		events   *evs
		want     map[string]string
		evidence map[string][]string
	}{
		{
			name: "crime fan who hates horror",
			events: new(evs).
				add(memento.EventLiked, "heat").add(memento.EventRated, "godfather", 5).add(memento.EventLiked, "insider").
				add(memento.EventDisliked, "conjuring").add(memento.EventRated, "insidious", 1),
			want: map[string]string{
				"preferredGenres": `[{"genre":"Crime","weight":1},{"genre":"Drama","weight":1},{"genre":"Thriller","weight":1}]`,
				"dislikedGenres":  `[{"genre":"Horror","weight":1}]`,
				"era":             `{"from":1972,"to":1999,"median":1995}`,
				"favouritePeople": `[{"name":"Al Pacino","weight":1}]`,
				"seen":            `["heat","godfather","insider","conjuring","insidious"]`,
				"likedTitles":     `[{"id":"heat","weight":1},{"id":"godfather","weight":1},{"id":"insider","weight":1}]`,
				"dislikedTitles":  `[{"id":"conjuring","weight":1},{"id":"insidious","weight":1}]`,
			},
			evidence: map[string][]string{
				"dislikedGenres":  {"e4", "e5"},
				"favouritePeople": {"e1", "e2", "e3"},
			},
		},
		{
			name:   "liked then disliked: disliked wins",
			events: new(evs).add(memento.EventLiked, "it").add(memento.EventDisliked, "it"),
			want: map[string]string{
				"dislikedGenres": `[{"genre":"Horror","weight":1}]`,
				"seen":           `["it"]`,
				"dislikedTitles": `[{"id":"it","weight":1}]`,
			},
			evidence: map[string][]string{"dislikedTitles": {"e1", "e2"}},
		},
		{
			name: "watching habits",
			events: new(evs).
				add(memento.EventWatchlisted, "up").add(memento.EventWatchlisted, "heat").
				add(memento.EventWatched, "heat").add(memento.EventWatched, "heat").
				add(memento.EventFinished, "casino").add(memento.EventAbandoned, "notebook", 0.5).
				add(memento.EventSkipped, "hangover"),
			want: map[string]string{
				"watchlist":       `["up"]`,
				"seen":            `["heat","casino","notebook"]`,
				"abandonRate":     `0.333`,
				"rewatcher":       `true`,
				"skipped":         `["hangover"]`,
				"era":             `{"from":1995,"to":2004,"median":1995}`,
				"likedTitles":     `[{"id":"heat","weight":0.2},{"id":"casino","weight":0.3}]`,
				"dislikedTitles":  `[{"id":"notebook","weight":0.25},{"id":"hangover","weight":0.2}]`,
				"preferredGenres": `[{"genre":"Crime","weight":1},{"genre":"Thriller","weight":0.4}]`,
				"dislikedGenres":  `[{"genre":"Romance","weight":1},{"genre":"Comedy","weight":0.8}]`,
			},
			evidence: map[string][]string{"watchlist": {"e1"}, "rewatcher": {"e2", "e3", "e4"}, "abandonRate": {"e6"}},
		},
		{
			name:   "nothing to learn",
			events: new(evs),
			want:   map[string]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, evidence := learn(t, tt.events.list)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("learned keys (-want +got):\n%s", diff)
			}
			for k, want := range tt.evidence {
				if diff := cmp.Diff(want, evidence[k]); diff != "" {
					t.Errorf("evidence of %s (-want +got):\n%s", k, diff)
				}
			}
		})
	}
}

func TestCheckValue(t *testing.T) {
	tests := []struct {
		key, value string
		ok         bool
	}{
		{"preferredGenres", `[{"genre":"Comedy","weight":0.5}]`, true},
		{"preferredGenres", `[{"genre":"Comedy","weight":2}]`, false},
		{"preferredGenres", `["Comedy"]`, false},
		{"dislikedGenres", `[{"genre":"Horror","weight":1,"extra":1}]`, false},
		{"era", `{"from":1980,"to":1999,"median":1990}`, true},
		{"era", `{"from":2000,"to":1990,"median":1995}`, false},
		{"seen", `["a","b"]`, true},
		{"seen", `"a"`, false},
		{"watchlist", `[""]`, false},
		{"likedTitles", `[{"id":"heat","weight":1}]`, true},
		{"abandonRate", `0.5`, true},
		{"abandonRate", `1.5`, false},
		{"rewatcher", `false`, true},
		{"rewatcher", `"yes"`, false},
		{"platform", `"Netflix"`, true},
		{"platform", `{`, false},
	}
	for _, tt := range tests {
		err := profile.CheckValue(tt.key, json.RawMessage(tt.value))
		if (err == nil) != tt.ok {
			t.Errorf("CheckValue(%s, %s) = %v, want ok %v", tt.key, tt.value, err, tt.ok)
		}
		if err != nil && memento.ErrorCode(err) != memento.EINVALID {
			t.Errorf("CheckValue(%s, %s) code %s, want EINVALID", tt.key, tt.value, memento.ErrorCode(err))
		}
	}
}
