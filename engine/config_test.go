package engine

import (
	"context"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/memento-ai/memento"
)

func TestBackgroundProcessorsSetting(t *testing.T) {
	c := DefaultConfig()
	c.DB = t.TempDir() + "/m.db"
	if err := ApplyEnv(c.EnvSettings(), func(k string) string {
		if k == "MEMENTO_BACKGROUND_PROCESSORS" {
			return "3"
		}
		return ""
	}); err != nil {
		t.Fatal(err)
	}
	if c.BackgroundProcessors != 3 || c.backgroundProcessors() != 3 {
		t.Errorf("MEMENTO_BACKGROUND_PROCESSORS=3 gave %d (%d in use)", c.BackgroundProcessors, c.backgroundProcessors())
	}
	c.BackgroundProcessors = 0
	// GOMAXPROCS as the program started: StartWorkers may have raised it
	// since (goProcessors).
	if got := c.backgroundProcessors(); got != processors {
		t.Errorf("the default is %d processors, want GOMAXPROCS at start %d", got, processors)
	}
	c.BackgroundProcessors = -1
	err := c.Validate()
	if memento.ErrorCode(err) != memento.EINVALID || !strings.Contains(memento.ErrorMessage(err), "MEMENTO_BACKGROUND_PROCESSORS") {
		t.Errorf("a negative count: got %v, want EINVALID naming the variable", err)
	}
}

func TestBackgroundNiceSetting(t *testing.T) {
	c := DefaultConfig()
	if c.BackgroundNice != 10 {
		t.Errorf("default nice %d, want 10", c.BackgroundNice)
	}
	for _, tc := range []struct {
		env  string
		want int
		ok   bool
	}{{"3", 3, true}, {"0", 0, true}, {"19", 19, true}, {"20", 20, false}, {"-1", -1, false}} {
		c := DefaultConfig()
		c.DB = t.TempDir() + "/m.db"
		if err := ApplyEnv(c.EnvSettings(), func(k string) string {
			if k == "MEMENTO_BACKGROUND_NICE" {
				return tc.env
			}
			return ""
		}); err != nil {
			t.Fatal(err)
		}
		if c.BackgroundNice != tc.want {
			t.Errorf("MEMENTO_BACKGROUND_NICE=%s gave %d", tc.env, c.BackgroundNice)
		}
		err := c.Validate()
		if tc.ok && err != nil {
			t.Errorf("MEMENTO_BACKGROUND_NICE=%s: %v", tc.env, err)
		}
		if !tc.ok && (memento.ErrorCode(err) != memento.EINVALID || !strings.Contains(memento.ErrorMessage(err), "MEMENTO_BACKGROUND_NICE")) {
			t.Errorf("MEMENTO_BACKGROUND_NICE=%s: got %v, want EINVALID naming the variable", tc.env, err)
		}
	}
	if got := goProcessors(2); got != processors+2 {
		t.Errorf("goProcessors(2) = %d, want %d", got, processors+2)
	}
}

// TestStartWorkersLowersTheBackground: with a nice value, StartWorkers
// gives Go the background's processors on top of the machine's, which
// the requests' goroutines need to find one free (goProcessors).
func TestStartWorkersLowersTheBackground(t *testing.T) {
	if err := memento.NewProcessorGate(1).LowerPriority(1); err != nil {
		t.Skipf("the background cannot compute at a lower priority here: %v", err)
	}
	cfg := DefaultConfig()
	cfg.DB = t.TempDir() + "/m.db"
	cfg.Workers = 2
	cfg.BackgroundProcessors = 3
	cfg.BackgroundNice = 7
	e, err := Open(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	if err := e.StartWorkers(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := runtime.GOMAXPROCS(0), processors+3; got < want {
		t.Errorf("GOMAXPROCS %d after StartWorkers, want at least %d (the machine's %d and the background's 3)", got, want, processors)
	}
}

// TestTurnSlotsSetting: turns are bounded to the processors by default
// only when they compute here; -1 lifts the bound, a number sets it, and
// the engine's agent takes it and reports its use in /metrics.
func TestTurnSlotsSetting(t *testing.T) {
	for _, tc := range []struct {
		name  string
		set   func(*Config)
		slots int
	}{
		{"offline default", func(*Config) {}, processors},
		{"model server", func(c *Config) { c.LLM.BaseURL = "http://127.0.0.1:1/v1" }, 0},
		{"offline model, remote embedder", func(c *Config) {
			c.LLM.Provider, c.Embed.Provider, c.LLM.BaseURL = "offline", "openai", "http://127.0.0.1:1/v1"
		}, 0},
		{"no bound", func(c *Config) { c.TurnSlots = -1 }, 0},
		{"set", func(c *Config) { c.TurnSlots = 5 }, 5},
		{"set with a model server", func(c *Config) { c.TurnSlots = 5; c.LLM.BaseURL = "http://127.0.0.1:1/v1" }, 5},
	} {
		c := DefaultConfig()
		c.DB = t.TempDir() + "/m.db"
		tc.set(&c)
		if err := c.Validate(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := c.turnSlots(); got != tc.slots {
			t.Errorf("%s: %d slots, want %d", tc.name, got, tc.slots)
		}
	}

	c := DefaultConfig()
	c.DB = t.TempDir() + "/m.db"
	if err := ApplyEnv(c.EnvSettings(), func(k string) string {
		if k == "MEMENTO_TURN_SLOTS" {
			return "-2"
		}
		return ""
	}); err != nil {
		t.Fatal(err)
	}
	err := c.Validate()
	if memento.ErrorCode(err) != memento.EINVALID || !strings.Contains(memento.ErrorMessage(err), "MEMENTO_TURN_SLOTS") {
		t.Errorf("MEMENTO_TURN_SLOTS=-2: got %v, want EINVALID naming the variable", err)
	}

	c = DefaultConfig()
	c.DB = t.TempDir() + "/m.db"
	c.TurnSlots = 3
	ctx := context.Background()
	e, err := Open(ctx, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	ag, err := e.Agent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ag.Slots == nil || ag.Slots.Stats().Size != 3 {
		t.Fatalf("the agent's slots are %+v, want 3", ag.Slots)
	}
	families, err := e.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found, index := false, false
	for _, f := range families {
		switch f.GetName() {
		case "memento_turn_slots":
			found = f.GetMetric()[0].GetGauge().GetValue() == 3
		case "memento_recall_index_users":
			index = true
		}
	}
	if !found {
		t.Error("/metrics has no memento_turn_slots of 3")
	}
	if !index {
		t.Error("/metrics has no memento_recall_index_users beside the slots'")
	}
}

// TestEmbedCacheSetting checks which embedders keep the title vectors in
// the store: auto keeps an embedding server's only, and a bad value is
// refused by name.
func TestEmbedCacheSetting(t *testing.T) {
	for _, tt := range []struct {
		provider, cache string
		want            bool
	}{
		{"offline", "auto", false}, {"openai", "auto", true}, {"openai", "", true},
		{"offline", "on", true}, {"openai", "off", false},
	} {
		if got := (EmbedConfig{Provider: tt.provider, Cache: tt.cache}).CacheTitleVectors(); got != tt.want {
			t.Errorf("provider %s, cache %q: CacheTitleVectors = %v, want %v", tt.provider, tt.cache, got, tt.want)
		}
	}
	c := DefaultConfig()
	c.Resolve()
	if err := c.Validate(); err != nil || c.Embed.CacheTitleVectors() {
		t.Errorf("the default config: %v, caching %v; want valid and no cache for the offline embedder", err, c.Embed.CacheTitleVectors())
	}
	c.Embed.Cache = "always"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "MEMENTO_EMBED_CACHE") {
		t.Errorf("Validate with cache %q = %v, want an error naming MEMENTO_EMBED_CACHE", c.Embed.Cache, err)
	}
}

// TestIntakePathSetting reads MEMENTO_INTAKE_PATH, which opens an SQLite
// store with its intake there, and refuses it for PostgreSQL.
func TestIntakePathSetting(t *testing.T) {
	dir, fast := t.TempDir(), t.TempDir()
	c := DefaultConfig()
	c.DB = dir + "/m.db"
	if err := ApplyEnv(c.EnvSettings(), func(k string) string {
		if k == "MEMENTO_INTAKE_PATH" {
			return fast
		}
		return ""
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	st, err := OpenStore(context.Background(), c.DB, StoreOptions{IntakePath: c.IntakePath})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := os.Stat(fast + "/m.db-intake"); err != nil {
		t.Errorf("the intake in MEMENTO_INTAKE_PATH: %v", err)
	}
	c.DB = "postgres://postgres@127.0.0.1:5432/test"
	if err := c.Validate(); memento.ErrorCode(err) != memento.EINVALID || !strings.Contains(memento.ErrorMessage(err), "MEMENTO_INTAKE_PATH") {
		t.Errorf("an intake path for PostgreSQL: got %v, want EINVALID naming the variable", err)
	}
}
