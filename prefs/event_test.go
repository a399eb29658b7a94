package prefs

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
)

func fptr(v float64) *float64 { return &v }

func TestEventStrength(t *testing.T) {
	tests := []struct {
		e    memento.Event
		want float64
	}{
		{memento.Event{Type: memento.EventLiked}, 0.6},
		{memento.Event{Type: memento.EventDisliked}, -0.6},
		{memento.Event{Type: memento.EventRated, Value: fptr(5)}, 1},
		{memento.Event{Type: memento.EventRated, Value: fptr(4)}, 0.5},
		{memento.Event{Type: memento.EventRated, Value: fptr(3.5)}, 0.25},
		{memento.Event{Type: memento.EventRated, Value: fptr(3)}, 0},
		{memento.Event{Type: memento.EventRated, Value: fptr(1)}, -1},
		{memento.Event{Type: memento.EventRated, Value: fptr(0.5)}, -1},
		{memento.Event{Type: memento.EventRated}, 0},
		{memento.Event{Type: memento.EventAbandoned}, -0.3},
		{memento.Event{Type: memento.EventAbandoned, Value: fptr(0.5)}, -0.15},
		{memento.Event{Type: memento.EventAbandoned, Value: fptr(0.9)}, 0},
		{memento.Event{Type: memento.EventWatched}, 0},
		{memento.Event{Type: memento.EventWatchlisted}, 0},
		{memento.Event{Type: memento.EventSkipped}, 0},
		{memento.Event{Type: memento.EventFinished}, 0},
	}
	for _, tt := range tests {
		if got := EventStrength(tt.e); !cmp.Equal(got, tt.want, cmpApprox) {
			t.Errorf("EventStrength(%+v) = %v, want %v", tt.e, got, tt.want)
		}
	}
}

var cmpApprox = cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })

var heat = memento.Title{
	ID: "wiki:Heat_(1995_film)", Title: "Heat", Year: 1995, Genres: []string{"Crime", "Thriller"},
	Cast:     []string{"Al Pacino", "Robert De Niro", "Val Kilmer", "Jon Voight"},
	Overview: "Heat is a 1995 American crime thriller film written and directed by Michael Mann. It features an ensemble cast.",
}

func TestFromEvent(t *testing.T) {
	got := FromEvent(memento.Event{Type: memento.EventLiked, TitleID: heat.ID}, heat)
	want := []memento.Concept{
		{Concept: "crime", Sign: 1, Strength: 0.6, Kind: memento.KindTaste},
		{Concept: "thriller", Sign: 1, Strength: 0.6, Kind: memento.KindTaste},
		{Concept: "crime thriller", Sign: 1, Strength: 0.48, Kind: memento.KindTaste},
		{Concept: "al pacino", Sign: 1, Strength: 0.42, Kind: memento.KindTaste},
		{Concept: "robert de niro", Sign: 1, Strength: 0.42, Kind: memento.KindTaste},
		{Concept: "val kilmer", Sign: 1, Strength: 0.42, Kind: memento.KindTaste},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("liked Heat (-want +got):\n%s", diff)
	}
	got = FromEvent(memento.Event{Type: memento.EventRated, Value: fptr(1)}, heat)
	for _, c := range got {
		if c.Sign != -1 {
			t.Errorf("a rating of 1 gives %+v, want a dislike", c)
		}
	}
	if got := FromEvent(memento.Event{Type: memento.EventWatched}, heat); got != nil {
		t.Errorf("watched gives %+v, want nothing", got)
	}
}

func TestPlotDescriptor(t *testing.T) {
	tests := map[string]string{
		"Heat is a 1995 American crime thriller film written and directed by Michael Mann.":                                "crime thriller",
		"Lift is an upcoming American heist action comedy thriller film directed by F. Gary Gray.":                         "heist action comedy thriller",
		"The Bad Guys is a 2022 American computer-animated heist comedy film loosely based on the children's book series.": "computer-animated heist comedy",
		"Sherlock is a British crime drama television series.":                                                             "crime drama",
		"It was the first of its kind.": "",
		"":                              "",
		"Nanook of the North is a 1922 American silent documentary film by Robert J. Flaherty.": "",
	}
	for in, want := range tests {
		if got := PlotDescriptor(in); got != want {
			t.Errorf("PlotDescriptor(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestJobs(t *testing.T) {
	s := memento.Scope{Tenant: "t", User: "ann"}
	if got := MessageJobs(s, "th", memento.Message{ID: "m1", Seq: 3, Role: memento.RoleAssistant}); got != nil {
		t.Errorf("assistant message jobs = %+v, want none", got)
	}
	got := MessageJobs(s, "th", memento.Message{ID: "m1", Seq: 3, Role: memento.RoleUser})
	want := []memento.JobRequest{{Kind: memento.JobPreferences, Payload: memento.MessageJob{Tenant: "t", User: "ann", Thread: "th", Message: "m1", Seq: 3}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("user message jobs (-want +got):\n%s", diff)
	}
	if got := EventJobs(s, memento.Event{ID: "e1", Type: memento.EventWatched}); got != nil {
		t.Errorf("watched event jobs = %+v, want none", got)
	}
	e := memento.Event{ID: "e1", Type: memento.EventLiked, TitleID: heat.ID}
	gotE := EventJobs(s, e)
	wantE := []memento.JobRequest{{Kind: memento.JobPreferencesFromEvents, ByUser: true, Payload: memento.PreferenceEventJob{Tenant: "t", User: "ann", Event: e}}}
	if diff := cmp.Diff(wantE, gotE); diff != "" {
		t.Errorf("liked event jobs (-want +got):\n%s", diff)
	}
}

func TestConfidenceAndStrength(t *testing.T) {
	member := func(id string, w float64, evidence int) memento.Preference {
		return memento.Preference{ID: id, EffectiveWeight: w, Evidence: evidence}
	}
	two := []memento.Preference{member("a", 0.7, 1), member("b", 0.7, 1)}
	many := []memento.Preference{member("a", 1.5, 3), member("b", 1.2, 3), member("c", 1, 2), member("d", -0.3, 1)}
	if got := Confidence(nil); got != 0 {
		t.Errorf("Confidence(nil) = %v", got)
	}
	c2, cm := Confidence(two), Confidence(many)
	if !(c2 > 0.2 && c2 < 0.4) || !(cm > 0.8 && cm < 1) {
		t.Errorf("confidence of two mild statements %v (want 0.2-0.4), of many strong ones %v (want 0.8-1)", c2, cm)
	}
	weights := map[string]float64{}
	for _, m := range append(two, many...) {
		weights[m.ID] = m.EffectiveWeight
	}
	cluster := func(conf float64, stances ...string) memento.PreferenceCluster {
		c := memento.PreferenceCluster{Confidence: conf}
		for i, s := range stances {
			c.Members = append(c.Members, memento.PreferenceClusterMember{Preference: string(rune('a' + i)), Stance: s})
		}
		return c
	}
	sup, opp := memento.StanceSupport, memento.StanceOppose
	tests := []struct {
		c    memento.PreferenceCluster
		want string
	}{
		{cluster(cm, sup, sup, sup, opp), memento.StrengthStrong}, // 0.3 of 4 opposes: under a quarter
		{cluster(c2, sup, sup), memento.StrengthMild},
		{cluster(cm, sup, opp, sup, sup), memento.StrengthMixed}, // 1.2 of 4 opposes
	}
	for _, tt := range tests {
		if got := Strength(tt.c, weights); got != tt.want {
			t.Errorf("Strength(%+v) = %q, want %q", tt.c, got, tt.want)
		}
	}
}

func TestClusterID(t *testing.T) {
	ms := []memento.Preference{
		{ID: "pref_b", FirstSeen: t0.Add(time.Hour)}, {ID: "pref_c", FirstSeen: t0}, {ID: "pref_a", FirstSeen: t0},
	}
	if got := ClusterID(ms); got != "pcl_a" {
		t.Errorf("ClusterID = %q, want pcl_a (the oldest, then the lowest id)", got)
	}
	a := Signature([]memento.Preference{{ID: "x", Concept: "heist", EffectiveWeight: 1}, {ID: "y", Concept: "horror", EffectiveWeight: -1}})
	b := Signature([]memento.Preference{{ID: "y", Concept: "horror", EffectiveWeight: -1}, {ID: "x", Concept: "heist", EffectiveWeight: 2}})
	c := Signature([]memento.Preference{{ID: "y", Concept: "horror", EffectiveWeight: 1}, {ID: "x", Concept: "heist", EffectiveWeight: 2}})
	if a != b || a == c {
		t.Errorf("signatures: %s %s %s; want the first two equal (order and size do not count) and the third different (a sign flipped)", a, b, c)
	}
}
