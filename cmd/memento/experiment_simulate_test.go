package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/experiment"
	"github.com/memento-ai/memento/prefs"
	"github.com/memento-ai/memento/recall"
)

// The simulation runs end to end on the real agent, store and pipeline;
// its measures are checked on the fake in package experiment.
func TestExperimentSimulateCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation skipped in -short mode")
	}
	plots := t.TempDir()
	var res experiment.SimResult
	out := mustRun(t, "experiment", "simulate", "--users", "3", "--sessions", "3", "--seed", "2", "--change-rate", "1", "--json", "--plot", plots)
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// The arms asked for, and the baseline without memory by default.
	if len(res.Arms) != 3 || len(res.Arms[0].Sessions) != 3 || res.Arms[1].Name != "episodic" || res.Arms[2].Name != "none" || !res.Arms[2].Baseline {
		t.Fatalf("result: %s", out)
	}
	var withPlots struct {
		Plots []string `json:"plots"`
	}
	if err := json.Unmarshal([]byte(out), &withPlots); err != nil || len(withPlots.Plots) != 8 {
		t.Errorf("simulate --json --plot lists %d plots (%v): %.200s", len(withPlots.Plots), err, out)
	}
	sem, epi, none := res.Arms[0], res.Arms[1], res.Arms[2]
	for _, a := range []experiment.SimArm{sem, epi} {
		first := a.Sessions[0]
		// After the first session the users' statements are in memory,
		// none contradicting what they said, and the request's context
		// draws on it.
		if first.Beliefs < 3 || first.StaleShare != 0 || first.StoredTokens <= 0 || first.ContextTokens <= 0 {
			t.Errorf("%s after session 1: %+v", a.Name, first)
		}
		for _, s := range a.Sessions {
			if s.HitRate < 0 || s.HitRate > 1 || s.NDCG < 0 || s.NDCG > 1 || s.Good+s.Disliked+s.Seen > 1 {
				t.Errorf("%s session %d out of range: %+v", a.Name, s.Session, s)
			}
		}
		// Every statement is kept in episodic memory, so it grows.
		if a.Name == "episodic" && a.Final.StoredTokens <= first.StoredTokens {
			t.Errorf("episodic memory did not grow: %g then %g tokens", first.StoredTokens, a.Final.StoredTokens)
		}
	}
	// The context tokens measure the document assembled for each request
	// from the user's memory: the agent without memory has nothing to
	// assemble, and a memory's document changes with the requests, which
	// differ from session to session. A figure fixed by the number of
	// items recalled (k) would be the same in every session.
	if none.Final.ContextTokens != 0 || none.Final.Beliefs != 0 {
		t.Errorf("the baseline without memory has a context or beliefs: %+v", none.Final)
	}
	tokens := map[float64]bool{}
	for _, a := range []experiment.SimArm{sem, epi} {
		for _, s := range a.Sessions {
			tokens[s.ContextTokens] = true
		}
	}
	if len(tokens) < 4 {
		t.Errorf("context tokens take %d values over 2 arms × 3 sessions: %v", len(tokens), tokens)
	}
	if n := res.Changes.LikedToDisliked + res.Changes.DislikedToLiked + res.Changes.Platform + res.Changes.Added + res.Changes.PersonAdded + res.Changes.PersonDropped; n == 0 {
		t.Errorf("change rate 1 changed nothing: %+v", res.Changes)
	}
	for _, f := range []string{experiment.PlotSimStale, experiment.PlotSimTokens, experiment.PlotSimNDCG, experiment.PlotSimDisliked} {
		if _, err := os.Stat(filepath.Join(plots, f)); err != nil {
			t.Errorf("no plot %s: %v", f, err)
		}
	}
}

// Arms are validated before anything is opened, with errors naming the
// arm and the setting; a study refuses what only a simulation can apply.
func TestSimulateArmErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"experiment", "simulate", "--users", "0"}, "--users"},
		{[]string{"experiment", "simulate", "--arms", "semantic,episodic+decay"}, "decay needs a value"},
		{[]string{"experiment", "simulate", "--arms", "semantic,episodic+fast", "--baselines", ""}, "unknown setting"},
		{[]string{"experiment", "simulate", "--arms", "semantic", "--baselines", ""}, "at least two arms"},
		{[]string{"experiment", "create", "--name", "s", "--arms", "semantic,episodic+decay=30d", "--db", db}, "one setting for every user"},
		{[]string{"experiment", "create", "--name", "s", "--arms", "semantic,none", "--db", db}, "simulation baseline"},
	} {
		_, err := run(t, "", c.args...)
		if memento.ErrorCode(err) != memento.EINVALID || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: err = %v, want EINVALID saying %q", strings.Join(c.args, " "), err, c.says)
		}
	}
}

// scorerOf returns the agent's preference signal.
func scorerOf(t *testing.T, ag *agent.Agent) *prefs.Scorer {
	t.Helper()
	for _, sc := range ag.Scorers {
		if ps, ok := sc.(*prefs.Scorer); ok {
			return ps
		}
	}
	t.Fatal("no preference scorer")
	return nil
}

func TestArmAgent(t *testing.T) {
	svc := &prefs.Service{}
	base := &agent.Agent{
		Scorers: []agent.Scorer{&prefs.Scorer{Prefs: svc, Weight: 2}},
		Memory:  stubMemory{}, Attributes: stubMemories{}, ForgetShown: true,
	}
	clock := experiment.NewSimClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	arms, err := experiment.ParseArms("semantic,fast=episodic+decay=14d,still=episodic+decay=off,none")
	if err != nil {
		t.Fatal(err)
	}
	for _, arm := range arms {
		ag, err := armAgent(base, arm, clock)
		if err != nil {
			t.Fatal(err)
		}
		if ag == base || ag.Clock != clock || !ag.ForgetShown {
			t.Errorf("%s: not a copy of the agent on the simulation's clock", arm.Name)
		}
		if arm.Mode == experiment.ModeNone {
			if ag.Memory != nil || ag.Attributes != nil || len(ag.Scorers) != 0 || ag.Jobs == nil || len(ag.Jobs(memento.Scope{}, "t", []memento.Message{{ID: "m"}})) != 0 {
				t.Errorf("none keeps long-term memory: %+v", ag)
			}
			continue
		}
		ps := scorerOf(t, ag)
		if ps.Weight != 2 || ps.Prefs == svc || ps.Prefs.Clock != clock {
			t.Errorf("%s: preference signal %+v", arm.Name, ps)
		}
		want := prefs.DecayConfig{}
		switch arm.Name {
		case "fast":
			want.TasteHalfLife = 14 * 24 * time.Hour
		case "still":
			want.Off = true
		}
		if ps.Prefs.Config.Decay != want {
			t.Errorf("%s: decay %+v, want %+v", arm.Name, ps.Prefs.Config.Decay, want)
		}
	}
	// The engine's agent is left as it was.
	if base.Clock != nil || scorerOf(t, base).Prefs != svc || svc.Clock != nil || svc.Config.Decay != (prefs.DecayConfig{}) {
		t.Errorf("the base agent changed: %+v", base)
	}
	decay, _ := experiment.ParseArms("semantic,episodic+decay=14d")
	if _, err := armAgent(&agent.Agent{}, decay[1], clock); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("decay without a preference signal: err = %v", err)
	}
}

type stubMemory struct{ agent.MemoryReader }
type stubMemories struct{ agent.AttributeMemories }

func TestCloneExported(t *testing.T) {
	type component struct {
		Name  string
		Items []int
		mu    sync.Mutex
		cache map[string]int
	}
	c := &component{Name: "x", Items: []int{1}, cache: map[string]int{"a": 1}}
	got := cloneExported(c)
	if got == c || got.Name != "x" || !slices.Equal(got.Items, c.Items) || got.cache != nil {
		t.Errorf("clone = %+v", got)
	}
}

func TestContextHolds(t *testing.T) {
	c := &recall.Context{
		Attributes: []memento.Memory{{Attribute: "GENRE"}, {Attribute: "DISLIKES"}},
		Summary:    &memento.Summary{Text: "s"},
		Items:      []memento.RecallItem{{Kind: memento.RecallAttribute}, {Kind: memento.RecallMessage}, {Kind: memento.RecallMessage}, {Kind: memento.RecallEpisode}},
	}
	want := map[string]int{"attributes": 2, memento.RecallSummary: 1, memento.RecallMessage: 2, memento.RecallEpisode: 1}
	if got := contextHolds(c); !maps.Equal(got, want) {
		t.Errorf("holds %v, want %v", got, want)
	}
	// Without an attributes section, a recalled value is rendered.
	c.Attributes = nil
	if got := contextHolds(c); got[memento.RecallAttribute] != 1 {
		t.Errorf("holds %v", got)
	}
}
