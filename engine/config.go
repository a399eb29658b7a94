package engine

import (
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/llm/openai"
	"github.com/memento-ai/memento/pipeline"
	"github.com/memento-ai/memento/recall"
	"github.com/memento-ai/memento/sqlite"
)

// Config is every setting of the engine. DefaultConfig gives the
// zero-configuration values; a program sets what it needs and Open checks
// the whole with Validate.
type Config struct {
	// DB names the store: a PostgreSQL URL (postgres://… or
	// postgresql://…) or the path of an SQLite file, created if missing.
	DB      string
	Catalog string // a JSON-lines catalog used instead of the store's or the embedded one
	Schema  string // attribute schema: default, movie, generic or a JSON file
	Tenant  string // the tenant commands act for when none is given
	// RecallIndexMB is the memory recall's warm per-user index may hold,
	// in MiB (recall.Index).
	RecallIndexMB int
	// Workers is how many background jobs this process runs at once.
	Workers int
	// BackgroundProcessors is how many of the jobs compute at once
	// (memento.ProcessorGate), one fewer while requests are served, so
	// that the requests and the store's writer keep a processor; the
	// other jobs wait. 0 means the processors Go uses (GOMAXPROCS).
	BackgroundProcessors int
	// BackgroundNice is how much lower the operating system runs the
	// jobs' computations than the requests (nice values, 1 to 19; 0
	// runs them alike): the requests, and the store's writer that every
	// acknowledgement waits for, then take the processors first
	// (memento.ProcessorGate.LowerPriority). Linux only.
	BackgroundNice int
	// TurnSlots is how many chat turns compute at once; the others wait
	// for a slot in the order they came (agent.Slots). 0 means the
	// processors Go uses when the turn computes here (offline model,
	// embedder and emotion tagger) and no bound when it waits on a model
	// server; -1 means no bound.
	TurnSlots int
	// Intake, for an SQLite store, acknowledges appends from a file of
	// their own beside the store instead of from its one writer
	// (sqlite.Options.Intake).
	Intake bool
	// IntakePath puts that file elsewhere (a file or a directory), on a
	// device whose syncs do not wait for the store's, and turns the
	// intake on (sqlite.Options.IntakePath).
	IntakePath string

	LLM   LLMConfig
	Embed EmbedConfig
	// Emotion says who tags user messages with an emotion: offline (the
	// rules, the default) or model (the language-model server, one more
	// request per message on the turn's path).
	Emotion string
	// Budget, when set, puts per-tenant daily token budgets around an
	// OpenAI-compatible model (llm/budget); past a budget the offline
	// model answers and says so. Nil counts nothing.
	Budget *BudgetConfig
}

// LLMConfig selects and configures the language-model provider.
type LLMConfig struct {
	Provider string // offline or openai; empty picks openai when BaseURL is set
	BaseURL  string
	APIKey   string
	Model    string
	// Concurrency bounds the model requests in flight for turns (chat,
	// context reads) and JobConcurrency, separately, those of background
	// jobs, so jobs never take the slots a person waits for.
	Concurrency    int
	JobConcurrency int
}

// EmbedConfig selects and configures the embedder.
type EmbedConfig struct {
	Provider string // offline or openai; empty follows the language model's choice
	Model    string
	Dim      int
	// Cache is whether the catalog's title vectors are kept in the store
	// (memento.VectorCache), so that a restart reads them rather than
	// embedding the catalog again: on, off, or auto (the default), which
	// keeps them for an embedding server only. The offline embedder makes
	// them about as fast as the store reads them back.
	Cache string
}

// CacheTitleVectors reports whether the title vectors are kept in the
// store (EmbedConfig.Cache).
func (c EmbedConfig) CacheTitleVectors() bool {
	switch c.Cache {
	case "on":
		return true
	case "off":
		return false
	default:
		return c.Provider != "offline"
	}
}

// BudgetConfig is the language model's daily token budgets.
type BudgetConfig struct {
	// DailyTokens is every tenant's budget a day; 0 is no limit (the
	// calls and tokens are still counted per tenant).
	DailyTokens int64
	// Tenants overrides DailyTokens for some tenants.
	Tenants map[string]int64
}

// DefaultConfig returns the zero-configuration settings: an SQLite file in
// the working directory, the offline model and embedder, the embedded
// catalog.
func DefaultConfig() Config {
	return Config{
		DB:            "./memento.db",
		Tenant:        memento.DefaultTenant,
		RecallIndexMB: recall.DefaultIndexBudget >> 20,
		Workers:       sqlite.DefaultWorkers,
		LLM:           LLMConfig{Model: "gpt-4o-mini", Concurrency: openai.DefaultConcurrency, JobConcurrency: openai.DefaultJobConcurrency},
		Embed:         EmbedConfig{Model: "text-embedding-3-small", Dim: 256, Cache: "auto"},
		Emotion:       "offline",
		// The bench's steady 500 messages a second at 1.1 M memories:
		// acknowledgement p99 32.9-40.4 ms against 35.8-58.4 ms at the
		// same priority, nine rounds each (docs/BENCHMARKS.md).
		BackgroundNice: 10,
	}
}

// EnvSetting ties an environment variable to a configuration field; a
// program reads them with ApplyEnv.
type EnvSetting struct {
	Name string
	Str  *string
	Num  *int
	Dur  *time.Duration
	Bool *bool
}

// EnvSettings are the MEMENTO_* variables of the engine's settings.
func (c *Config) EnvSettings() []EnvSetting {
	return []EnvSetting{
		{Name: "MEMENTO_DB", Str: &c.DB},
		{Name: "MEMENTO_CATALOG", Str: &c.Catalog},
		{Name: "MEMENTO_SCHEMA", Str: &c.Schema},
		{Name: "MEMENTO_TENANT", Str: &c.Tenant},
		{Name: "MEMENTO_LLM_PROVIDER", Str: &c.LLM.Provider},
		{Name: "MEMENTO_LLM_BASE_URL", Str: &c.LLM.BaseURL},
		{Name: "MEMENTO_LLM_API_KEY", Str: &c.LLM.APIKey},
		{Name: "MEMENTO_LLM_MODEL", Str: &c.LLM.Model},
		{Name: "MEMENTO_LLM_CONCURRENCY", Num: &c.LLM.Concurrency},
		{Name: "MEMENTO_LLM_JOB_CONCURRENCY", Num: &c.LLM.JobConcurrency},
		{Name: "MEMENTO_EMBED_PROVIDER", Str: &c.Embed.Provider},
		{Name: "MEMENTO_EMBED_MODEL", Str: &c.Embed.Model},
		{Name: "MEMENTO_EMBED_DIM", Num: &c.Embed.Dim},
		{Name: "MEMENTO_EMBED_CACHE", Str: &c.Embed.Cache},
		{Name: "MEMENTO_RECALL_INDEX_MB", Num: &c.RecallIndexMB},
		{Name: "MEMENTO_WORKERS", Num: &c.Workers},
		{Name: "MEMENTO_BACKGROUND_PROCESSORS", Num: &c.BackgroundProcessors},
		{Name: "MEMENTO_BACKGROUND_NICE", Num: &c.BackgroundNice},
		{Name: "MEMENTO_TURN_SLOTS", Num: &c.TurnSlots},
		{Name: "MEMENTO_EMOTION", Str: &c.Emotion},
		{Name: "MEMENTO_INTAKE", Bool: &c.Intake},
		{Name: "MEMENTO_INTAKE_PATH", Str: &c.IntakePath},
	}
}

// ApplyEnv reads settings from the environment through getenv
// (os.Getenv in a program); unset or empty variables leave their field
// as it is. Errors: EINVALID naming the variable whose value does not
// parse.
func ApplyEnv(settings []EnvSetting, getenv func(string) string) error {
	for _, s := range settings {
		v := getenv(s.Name)
		if v == "" {
			continue
		}
		switch {
		case s.Str != nil:
			*s.Str = v
		case s.Bool != nil:
			b, err := strconv.ParseBool(v)
			if err != nil {
				return memento.Errorf(memento.EINVALID, "%s must be true or false, got %q", s.Name, v)
			}
			*s.Bool = b
		case s.Dur != nil:
			d, err := time.ParseDuration(v)
			if err != nil {
				return memento.Errorf(memento.EINVALID, "%s must be a duration such as 30s or 2m, got %q", s.Name, v)
			}
			*s.Dur = d
		default:
			n, err := strconv.Atoi(v)
			if err != nil {
				return memento.Errorf(memento.EINVALID, "%s must be a whole number, got %q", s.Name, v)
			}
			*s.Num = n
		}
	}
	return nil
}

// Resolve fills the choices that depend on other settings: the providers
// default to openai when a base URL is set.
func (c *Config) Resolve() {
	if c.LLM.Provider == "" {
		c.LLM.Provider = "offline"
		if c.LLM.BaseURL != "" {
			c.LLM.Provider = "openai"
		}
	}
	if c.Embed.Provider == "" {
		c.Embed.Provider = "offline"
		if c.LLM.BaseURL != "" && c.LLM.Provider == "openai" {
			c.Embed.Provider = "openai"
		}
	}
}

// Validate resolves the dependent choices and checks every setting,
// naming the first bad one by its flag and variable. Errors: EINVALID.
func (c *Config) Validate() error {
	c.Resolve()
	if err := CheckStoreURL(c.DB); err != nil {
		return err
	}
	if c.IntakePath != "" && StoreKind(c.DB) != KindSQLite {
		return memento.Errorf(memento.EINVALID, "--intake-path (MEMENTO_INTAKE_PATH) applies to an SQLite store; --db names a PostgreSQL one")
	}
	if strings.TrimSpace(c.Tenant) == "" {
		return memento.Errorf(memento.EINVALID, "--tenant (MEMENTO_TENANT) must not be empty")
	}
	if c.Workers < 1 {
		return memento.Errorf(memento.EINVALID, "--workers (MEMENTO_WORKERS) must be at least 1, got %d", c.Workers)
	}
	if c.BackgroundProcessors < 0 {
		return memento.Errorf(memento.EINVALID, "--background-processors (MEMENTO_BACKGROUND_PROCESSORS) must not be negative, got %d", c.BackgroundProcessors)
	}
	if c.BackgroundNice < 0 || c.BackgroundNice > 19 {
		return memento.Errorf(memento.EINVALID, "--background-nice (MEMENTO_BACKGROUND_NICE) must be between 0 and 19, got %d", c.BackgroundNice)
	}
	if c.TurnSlots < -1 {
		return memento.Errorf(memento.EINVALID, "--turn-slots (MEMENTO_TURN_SLOTS) must be -1 (no bound), 0 (the default) or a number of turns, got %d", c.TurnSlots)
	}
	if c.RecallIndexMB < 1 {
		return memento.Errorf(memento.EINVALID, "--recall-index-mb (MEMENTO_RECALL_INDEX_MB) must be at least 1, got %d", c.RecallIndexMB)
	}
	if _, err := pipeline.LoadSchema(c.Schema); err != nil {
		return memento.Errorf(memento.EINVALID, "--schema (MEMENTO_SCHEMA): %s", memento.ErrorMessage(err))
	}
	if c.Catalog != "" {
		if _, err := os.Stat(c.Catalog); err != nil {
			return memento.Errorf(memento.EINVALID, "--catalog (MEMENTO_CATALOG) %q cannot be read: %v", c.Catalog, err)
		}
	}
	if c.LLM.Concurrency < 1 {
		return memento.Errorf(memento.EINVALID, "--llm-concurrency (MEMENTO_LLM_CONCURRENCY) must be at least 1, got %d", c.LLM.Concurrency)
	}
	if c.LLM.JobConcurrency < 1 {
		return memento.Errorf(memento.EINVALID, "--llm-job-concurrency (MEMENTO_LLM_JOB_CONCURRENCY) must be at least 1, got %d", c.LLM.JobConcurrency)
	}
	switch c.LLM.Provider {
	case "offline":
	case "openai":
		if err := CheckHTTPURL("--llm-base-url (MEMENTO_LLM_BASE_URL)", c.LLM.BaseURL); err != nil {
			return err
		}
		if c.LLM.Model == "" {
			return memento.Errorf(memento.EINVALID, "--llm-model (MEMENTO_LLM_MODEL) must name a model when the provider is openai")
		}
	default:
		return memento.Errorf(memento.EINVALID, "--llm-provider (MEMENTO_LLM_PROVIDER) must be offline or openai, got %q", c.LLM.Provider)
	}
	switch c.Embed.Provider {
	case "offline":
		if c.Embed.Dim < 16 || c.Embed.Dim > 4096 {
			return memento.Errorf(memento.EINVALID, "--embed-dim (MEMENTO_EMBED_DIM) must be between 16 and 4096, got %d", c.Embed.Dim)
		}
	case "openai":
		if err := CheckHTTPURL("--llm-base-url (MEMENTO_LLM_BASE_URL)", c.LLM.BaseURL); err != nil {
			return err
		}
		if c.Embed.Model == "" {
			return memento.Errorf(memento.EINVALID, "--embed-model (MEMENTO_EMBED_MODEL) must name a model when the embedder is openai")
		}
	default:
		return memento.Errorf(memento.EINVALID, "--embed-provider (MEMENTO_EMBED_PROVIDER) must be offline or openai, got %q", c.Embed.Provider)
	}
	switch c.Embed.Cache {
	case "", "auto", "on", "off":
	default:
		return memento.Errorf(memento.EINVALID, "--embed-cache (MEMENTO_EMBED_CACHE) must be auto, on or off, got %q", c.Embed.Cache)
	}
	switch c.Emotion {
	case "offline":
	case "model":
		if c.LLM.Provider != "openai" {
			return memento.Errorf(memento.EINVALID, "MEMENTO_EMOTION=model needs a model server (MEMENTO_LLM_BASE_URL); the provider is %s", c.LLM.Provider)
		}
	default:
		return memento.Errorf(memento.EINVALID, "MEMENTO_EMOTION must be offline or model, got %q", c.Emotion)
	}
	if b := c.Budget; b != nil {
		if b.DailyTokens < 0 {
			return memento.Errorf(memento.EINVALID, "--llm-daily-tokens (MEMENTO_LLM_DAILY_TOKENS) must not be negative, got %d", b.DailyTokens)
		}
		for t, n := range b.Tenants {
			if n < 0 {
				return memento.Errorf(memento.EINVALID, "--llm-tenant-tokens (MEMENTO_LLM_TENANT_TOKENS): tenant %s has a negative budget %d", t, n)
			}
		}
	}
	return nil
}

// OpenAI is the configuration of the OpenAI-compatible provider.
func (c *Config) OpenAI() openai.Config {
	return openai.Config{
		BaseURL:        c.LLM.BaseURL,
		APIKey:         c.LLM.APIKey,
		Model:          c.LLM.Model,
		EmbedModel:     c.Embed.Model,
		Concurrency:    c.LLM.Concurrency,
		JobConcurrency: c.LLM.JobConcurrency,
	}
}

// CheckHTTPURL checks that v, the value of setting, is an http(s) URL
// with a host. Errors: EINVALID naming the setting.
func CheckHTTPURL(setting, v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return memento.Errorf(memento.EINVALID, "%s must be an http(s) URL, got %q", setting, v)
	}
	return nil
}

// backgroundProcessors is BackgroundProcessors with its default applied.
func (c Config) backgroundProcessors() int {
	if c.BackgroundProcessors > 0 {
		return c.BackgroundProcessors
	}
	return processors
}

// turnSlots is TurnSlots with its default applied: 0 for no bound.
func (c Config) turnSlots() int {
	switch {
	case c.TurnSlots > 0:
		return c.TurnSlots
	case c.TurnSlots < 0:
		return 0
	case c.LLM.Provider == "offline" && c.Embed.Provider == "offline" && c.Emotion != "model":
		return processors
	}
	return 0
}

// processors is the number of processors Go ran on when the program
// started (GOMAXPROCS: the machine's, or its container's share), before
// StartWorkers added the background's (goProcessors).
var processors = runtime.GOMAXPROCS(0)

// goProcessors is how many processors Go should run on when a background
// of n processors computes at a lower priority: the machine's and n more,
// so that while the background's goroutines hold n of Go's processors the
// requests' goroutines still find one free, and the kernel, which knows
// the priorities, shares the machine's processors between their threads.
func goProcessors(n int) int { return processors + n }
