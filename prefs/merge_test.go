package prefs

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memento-ai/memento"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// stored returns a stored preference along the direction of degrees.
func stored(id, concept string, weight float64, degrees float64, lastSeen time.Time) memento.Preference {
	return memento.Preference{ID: id, Concept: concept, Weight: weight, Kind: memento.KindTaste, Evidence: 1,
		Sources: []string{"old"}, FirstSeen: lastSeen, LastSeen: lastSeen, Embedder: "e", Vector: angles(degrees)[0]}
}

func ev(concept string, sign int, strength float64, degrees float64, at time.Time) Evidence {
	return Evidence{Concept: concept, Sign: sign, Strength: strength, Kind: memento.KindTaste, Vector: angles(degrees)[0], At: at}
}

// weights returns the concepts and rounded weights of changes.
func weights(ps []memento.Preference) map[string]float64 {
	out := map[string]float64{}
	for _, p := range ps {
		out[p.Concept] = math.Round(p.Weight*1e4) / 1e4
	}
	return out
}

func TestMerge(t *testing.T) {
	// With the default threshold of 0.9, vectors up to acos(0.9) ≈ 25.8
	// degrees apart reinforce each other.
	tests := []struct {
		name        string
		current     []memento.Preference
		evidence    []Evidence
		wantInsert  map[string]float64
		wantUpdate  map[string]float64
		wantEvCount int // evidence count of the updated memory, if any
	}{
		{
			name:       "a new concept becomes a memory of weight sign × strength",
			evidence:   []Evidence{ev("strawberries", 1, 0.7, 0, t0), ev("very sweet desserts", -1, 0.7, 90, t0)},
			wantInsert: map[string]float64{"strawberries": 0.7, "very sweet desserts": -0.7},
		},
		{
			name:        "same sign adds, scaled by the headroom to 3",
			current:     []memento.Preference{stored("p1", "heist", 0.7, 0, t0)},
			evidence:    []Evidence{ev("heist", 1, 1, 0, t0)},
			wantUpdate:  map[string]float64{"heist": 0.7 + 1*(1-0.7/3)},
			wantEvCount: 2,
		},
		{
			name:        "a similar concept reinforces (20 degrees apart)",
			current:     []memento.Preference{stored("p1", "heist", 0.7, 0, t0)},
			evidence:    []Evidence{ev("heists", 1, 0.5, 20, t0)},
			wantUpdate:  map[string]float64{"heist": 0.7 + 0.5*(1-0.7/3)},
			wantEvCount: 2,
		},
		{
			name:       "a neighbouring concept is a new memory (30 degrees apart)",
			current:    []memento.Preference{stored("p1", "heist", 0.7, 0, t0)},
			evidence:   []Evidence{ev("crime", 1, 0.5, 30, t0)},
			wantInsert: map[string]float64{"crime": 0.5},
		},
		{
			name:        "the same words always match, whatever the vectors",
			current:     []memento.Preference{stored("p1", "Heist", 0.7, 0, t0)},
			evidence:    []Evidence{ev("heist", 1, 0.5, 80, t0)},
			wantUpdate:  map[string]float64{"Heist": 0.7 + 0.5*(1-0.7/3)},
			wantEvCount: 2,
		},
		{
			name:        "a strong opposite statement flips the sign outright",
			current:     []memento.Preference{stored("p1", "horror", -1.4, 0, t0)},
			evidence:    []Evidence{ev("horror", 1, 1, 0, t0)},
			wantUpdate:  map[string]float64{"horror": 1},
			wantEvCount: 2,
		},
		{
			name:        "a middling opposite statement just flips a weak memory",
			current:     []memento.Preference{stored("p1", "horror", -0.7, 0, t0)},
			evidence:    []Evidence{ev("horror", 1, 0.5, 0, t0)},
			wantUpdate:  map[string]float64{"horror": -0.7*0.5 + 0.5},
			wantEvCount: 2,
		},
		{
			name:        "a mild opposite statement weakens without flipping",
			current:     []memento.Preference{stored("p1", "musicals", 1, 0, t0)},
			evidence:    []Evidence{ev("musicals", -1, 0.3, 0, t0)},
			wantUpdate:  map[string]float64{"musicals": 1*0.7 - 0.3},
			wantEvCount: 2,
		},
		{
			name:        "the stored weight decays before it is reinforced",
			current:     []memento.Preference{stored("p1", "westerns", 1, 0, t0.Add(-DefaultTasteHalfLife))},
			evidence:    []Evidence{ev("westerns", 1, 0.6, 0, t0)},
			wantUpdate:  map[string]float64{"westerns": 0.5 + 0.6*(1-0.5/3)},
			wantEvCount: 2,
		},
		{
			name:        "evidence older than the memory counts decayed",
			current:     []memento.Preference{stored("p1", "westerns", 1, 0, t0)},
			evidence:    []Evidence{ev("westerns", 1, 1, 0, t0.Add(-DefaultTasteHalfLife))},
			wantUpdate:  map[string]float64{"westerns": 1 + 0.5*(1-1.0/3)},
			wantEvCount: 2,
		},
		{
			name:        "late opposite evidence weakens but cannot override newer statements",
			current:     []memento.Preference{stored("p1", "horror", -1, 0, t0)},
			evidence:    []Evidence{ev("horror", 1, 1, 0, t0.Add(-time.Minute))},
			wantUpdate:  map[string]float64{"horror": -1 + 0.99999*(1-1.0/3)/2},
			wantEvCount: 2,
		},
		{
			name:        "one piece of evidence per memory and source",
			current:     []memento.Preference{stored("p1", "heist", 0.7, 0, t0)},
			evidence:    []Evidence{ev("heist", 1, 1, 0, t0), ev("heists", -1, 1, 5, t0)},
			wantUpdate:  map[string]float64{"heist": 0.7 + 1*(1-0.7/3)},
			wantEvCount: 2,
		},
		{
			name:       "two statements of one message about one new concept make one memory",
			evidence:   []Evidence{ev("heist", 1, 0.7, 0, t0), ev("heists", 1, 1, 10, t0)},
			wantInsert: map[string]float64{"heist": 0.7},
		},
		{
			name:       "a fact never merges with a taste",
			current:    []memento.Preference{stored("p1", "lisbon", 0.7, 0, t0)},
			evidence:   []Evidence{{Concept: "lives in lisbon", Sign: 1, Strength: 1, Kind: memento.KindFact, Vector: angles(0)[0], At: t0}},
			wantInsert: map[string]float64{"lives in lisbon": 1},
		},
		{
			name:        "the weight saturates at the maximum",
			current:     []memento.Preference{stored("p1", "noir", 2.9, 0, t0)},
			evidence:    []Evidence{ev("noir", 1, 1, 0, t0)},
			wantUpdate:  map[string]float64{"noir": 2.9 + 1*(1-2.9/3)},
			wantEvCount: 2,
		},
		{
			name:     "evidence without sign, strength or concept is ignored",
			evidence: []Evidence{ev("x", 0, 1, 0, t0), ev("y", 1, 0, 0, t0), ev(" ", 1, 1, 0, t0)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Config{}.Merge(tt.current, "m1", "e", tt.evidence)
			if diff := cmp.Diff(tt.wantInsert, weights(got.Insert), cmpopts.EquateEmpty(), cmpopts.EquateApprox(0, 1e-4)); diff != "" {
				t.Errorf("inserted (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantUpdate, weights(got.Update), cmpopts.EquateEmpty(), cmpopts.EquateApprox(0, 1e-4)); diff != "" {
				t.Errorf("updated (-want +got):\n%s", diff)
			}
			for _, p := range got.Update {
				if p.Evidence != tt.wantEvCount {
					t.Errorf("%s has evidence %d, want %d", p.Concept, p.Evidence, tt.wantEvCount)
				}
				if diff := cmp.Diff([]string{"old", "m1"}, p.Sources); diff != "" {
					t.Errorf("%s sources (-want +got):\n%s", p.Concept, diff)
				}
				if !p.LastSeen.Equal(t0) {
					t.Errorf("%s last seen %v, want %v (reinforcement restarts the age)", p.Concept, p.LastSeen, t0)
				}
			}
			for _, p := range got.Insert {
				if p.Evidence != 1 || p.Embedder != "e" || !cmp.Equal(p.Sources, []string{"m1"}) || len(p.Vector) == 0 {
					t.Errorf("inserted %+v", p)
				}
			}
		})
	}
}

func TestMergeDoesNotModifyCurrent(t *testing.T) {
	cur := []memento.Preference{stored("p1", "heist", 0.7, 0, t0), stored("p2", "westerns", -0.4, 90, t0)}
	// Room after the sources: an append to them in place would write
	// into current's array.
	cur[0].Sources = append(make([]string, 0, 4), "old")
	want := slices.Clone(cur)
	got := Config{}.Merge(cur, "m1", "e", []Evidence{ev("heist", 1, 1, 0, t0.Add(time.Hour)), ev("heist", 1, 1, 1, t0.Add(time.Hour)),
		ev("thrillers", 1, 1, 45, t0)})
	if diff := cmp.Diff(want, cur); diff != "" {
		t.Errorf("Merge modified its input (-before +after):\n%s", diff)
	}
	if spare := cur[0].Sources[:2]; spare[1] != "" {
		t.Errorf("Merge wrote %q past the input's sources", spare[1])
	}
	if len(got.Update) != 1 || got.Update[0].ID != "p1" || got.Update[0].Evidence != 2 || !slices.Equal(got.Update[0].Sources, []string{"old", "m1"}) ||
		len(got.Insert) != 1 || got.Insert[0].Concept != "thrillers" {
		t.Errorf("Merge = %+v, want p1 reinforced once and thrillers inserted", got)
	}
}

func TestMergeKeepsNewestSources(t *testing.T) {
	p := stored("p1", "heist", 0.7, 0, t0)
	p.Sources = nil
	for i := range memento.MaxPreferenceSources {
		p.Sources = append(p.Sources, "s"+string(rune('A'+i%26))+string(rune('a'+i/26)))
	}
	got := Config{}.Merge([]memento.Preference{p}, "newest", "e", []Evidence{ev("heist", 1, 1, 0, t0)})
	s := got.Update[0].Sources
	if len(s) != memento.MaxPreferenceSources || s[len(s)-1] != "newest" || s[0] != p.Sources[1] {
		t.Errorf("sources = %v", s)
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []Config{
		{MergeThreshold: 1.5}, {MaxWeight: 0.5}, {Eps: 3}, {MinPts: -1},
		{Decay: DecayConfig{TasteHalfLife: -time.Hour}},
	}
	for _, c := range bad {
		if err := c.Validate(); memento.ErrorCode(err) != memento.EINVALID {
			t.Errorf("%+v: Validate() = %v, want EINVALID", c, err)
		}
	}
	if err := (Config{}).Validate(); err != nil {
		t.Errorf("zero config: %v", err)
	}
}

func TestConfigApplyEnv(t *testing.T) {
	env := map[string]string{
		"MEMENTO_PREFS_TASTE_HALF_LIFE": "720h", "MEMENTO_PREFS_FACT_HALF_LIFE": "8760h",
		"MEMENTO_PREFS_MERGE_THRESHOLD": "0.85", "MEMENTO_PREFS_EPS": "0.4", "MEMENTO_PREFS_MIN_PTS": "3",
		"MEMENTO_PREFS_DECAY": "off",
	}
	var c Config
	if err := c.ApplyEnv(func(k string) string { return env[k] }); err != nil {
		t.Fatalf("ApplyEnv: %v", err)
	}
	want := Config{Decay: DecayConfig{TasteHalfLife: 720 * time.Hour, FactHalfLife: 8760 * time.Hour, Off: true},
		MergeThreshold: 0.85, Eps: 0.4, MinPts: 3}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	for k, v := range map[string]string{"MEMENTO_PREFS_EPS": "wide", "MEMENTO_PREFS_MIN_PTS": "2.5",
		"MEMENTO_PREFS_DECAY": "maybe", "MEMENTO_PREFS_TASTE_HALF_LIFE": "90 days", "MEMENTO_PREFS_MERGE_THRESHOLD": "2"} {
		var c Config
		err := c.ApplyEnv(func(name string) string {
			if name == k {
				return v
			}
			return ""
		})
		if memento.ErrorCode(err) != memento.EINVALID {
			t.Errorf("%s=%s: %v, want EINVALID", k, v, err)
		}
	}
}

func TestGroup(t *testing.T) {
	// Angles 0, 10, 20 chain into one cluster and 100, 105 into another
	// within 25 degrees; 200 is alone.
	var ps []memento.Preference
	for i, a := range []float64{0, 100, 10, 200, 105, 20} {
		ps = append(ps, stored(string(rune('a'+i)), "c", 1, a, t0))
	}
	got := Config{Eps: epsForAngle(12), MinPts: 2}.Group(ps)
	want := [][]int{{0, 2, 5}, {1, 4}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
	if got := (Config{Eps: epsForAngle(1), MinPts: 2}).Group(ps); len(got) != 0 {
		t.Errorf("all noise: groups %v, want none", got)
	}
	if got := (Config{Eps: 2, MinPts: 2}).Group(ps); len(got) != 1 || len(got[0]) != len(ps) {
		t.Errorf("one cluster: groups %v", got)
	}
}
