package main

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/memento-ai/memento"
	mhttp "github.com/memento-ai/memento/http"
	"github.com/memento-ai/memento/llm/openai"
	"github.com/memento-ai/memento/pipeline"
	"github.com/memento-ai/memento/recall"
	"github.com/memento-ai/memento/sqlite"
)

// Config is every setting of the memento binary. Defaults come first, then
// MEMENTO_* environment variables, then flags; Validate rejects a bad value
// with a message naming the setting.
type Config struct {
	DB        string // path of the SQLite file
	Addr      string // where serve listens
	LogLevel  string // debug, info, warn, error
	LogFormat string // text or json
	Catalog   string // a JSON-lines catalog used instead of the store's or the embedded one
	Snapshot  string // serve --snapshot: file:///dir or s3://bucket/prefix (snapshot.go)
	Schema    string // attribute schema: default, movie, generic or a JSON file (memory.go)
	Tenant    string
	// RecallIndexMB is the memory recall's warm per-user index may hold,
	// in MiB (recall.Index).
	RecallIndexMB int
	// Workers is how many background jobs run at once (sqlite.Options).
	Workers int

	LLM   LLMConfig
	Embed EmbedConfig
	HTTP  HTTPConfig
	// Emotion says who tags user messages with an emotion: offline (the
	// rules, the default) or model (the language-model server, one more
	// request per message on the turn's path).
	Emotion string
	// Speech is the transcription server of POST /v1/chat/audio.
	Speech SpeechConfig
}

// SpeechConfig configures speech turns: an OpenAI-compatible
// transcription endpoint (POST {BaseURL}/audio/transcriptions).
type SpeechConfig struct {
	BaseURL string // empty: speech turns answer 503
	Model   string
	APIKey  string
	// KeepAudio, when set, names a directory where each turn's audio is
	// kept; empty keeps none.
	KeepAudio string
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
}

// HTTPConfig is who may call serve's HTTP server and the server's limits
// (http.Server).
type HTTPConfig struct {
	// AllowedOrigins lists, comma-separated, the origins of web pages other
	// than the server's own that may call the API (they get CORS headers).
	AllowedOrigins string
	// AllowedHosts lists, comma-separated, the names requests may carry in
	// Host besides loopback names and the listen address ("*": any).
	AllowedHosts      string
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	MaxConns          int
	// MaxQueueLag is how far memory formation may trail the message log
	// (the age of the oldest unfinished job) before appends are refused
	// with 503 and Retry-After; 0 never refuses.
	MaxQueueLag time.Duration
}

// DefaultMaxQueueLag is how far memory formation may trail the message log
// before appends are refused: far above what a healthy queue shows (jobs
// end within seconds), so only a backlog that keeps growing trips it.
const DefaultMaxQueueLag = 5 * time.Minute

// DefaultConfig returns the zero-configuration settings: an SQLite file in
// the working directory, the offline model and a loopback address.
func DefaultConfig() Config {
	return Config{
		DB:            "./memento.db",
		Addr:          "127.0.0.1:8080",
		LogLevel:      "info",
		LogFormat:     "text",
		Tenant:        memento.DefaultTenant,
		RecallIndexMB: recall.DefaultIndexBudget >> 20,
		Workers:       sqlite.DefaultWorkers,
		LLM:           LLMConfig{Model: "gpt-4o-mini", Concurrency: openai.DefaultConcurrency, JobConcurrency: openai.DefaultJobConcurrency},
		Embed:         EmbedConfig{Model: "text-embedding-3-small", Dim: 256},
		Emotion:       "offline",
		Speech:        SpeechConfig{Model: "whisper-1"},
		HTTP: HTTPConfig{
			ReadHeaderTimeout: mhttp.DefaultReadHeaderTimeout,
			ReadTimeout:       mhttp.DefaultReadTimeout,
			WriteTimeout:      mhttp.DefaultWriteTimeout,
			IdleTimeout:       mhttp.DefaultIdleTimeout,
			MaxConns:          mhttp.DefaultMaxConns,
			MaxQueueLag:       DefaultMaxQueueLag,
		},
	}
}

// envSetting ties an environment variable to a configuration field.
type envSetting struct {
	name string
	str  *string
	num  *int
	dur  *time.Duration
}

func (c *Config) envSettings() []envSetting {
	return []envSetting{
		{name: "MEMENTO_DB", str: &c.DB},
		{name: "MEMENTO_ADDR", str: &c.Addr},
		{name: "MEMENTO_LOG_LEVEL", str: &c.LogLevel},
		{name: "MEMENTO_LOG_FORMAT", str: &c.LogFormat},
		{name: "MEMENTO_CATALOG", str: &c.Catalog},
		{name: "MEMENTO_SNAPSHOT", str: &c.Snapshot},
		{name: "MEMENTO_SCHEMA", str: &c.Schema},
		{name: "MEMENTO_TENANT", str: &c.Tenant},
		{name: "MEMENTO_LLM_PROVIDER", str: &c.LLM.Provider},
		{name: "MEMENTO_LLM_BASE_URL", str: &c.LLM.BaseURL},
		{name: "MEMENTO_LLM_API_KEY", str: &c.LLM.APIKey},
		{name: "MEMENTO_LLM_MODEL", str: &c.LLM.Model},
		{name: "MEMENTO_LLM_CONCURRENCY", num: &c.LLM.Concurrency},
		{name: "MEMENTO_LLM_JOB_CONCURRENCY", num: &c.LLM.JobConcurrency},
		{name: "MEMENTO_EMBED_PROVIDER", str: &c.Embed.Provider},
		{name: "MEMENTO_EMBED_MODEL", str: &c.Embed.Model},
		{name: "MEMENTO_EMBED_DIM", num: &c.Embed.Dim},
		{name: "MEMENTO_RECALL_INDEX_MB", num: &c.RecallIndexMB},
		{name: "MEMENTO_WORKERS", num: &c.Workers},
		{name: "MEMENTO_ALLOWED_ORIGINS", str: &c.HTTP.AllowedOrigins},
		{name: "MEMENTO_ALLOWED_HOSTS", str: &c.HTTP.AllowedHosts},
		{name: "MEMENTO_HTTP_READ_HEADER_TIMEOUT", dur: &c.HTTP.ReadHeaderTimeout},
		{name: "MEMENTO_HTTP_READ_TIMEOUT", dur: &c.HTTP.ReadTimeout},
		{name: "MEMENTO_HTTP_WRITE_TIMEOUT", dur: &c.HTTP.WriteTimeout},
		{name: "MEMENTO_HTTP_IDLE_TIMEOUT", dur: &c.HTTP.IdleTimeout},
		{name: "MEMENTO_HTTP_MAX_CONNS", num: &c.HTTP.MaxConns},
		{name: "MEMENTO_MAX_QUEUE_LAG", dur: &c.HTTP.MaxQueueLag},
		{name: "MEMENTO_EMOTION", str: &c.Emotion},
		{name: "MEMENTO_STT_BASE_URL", str: &c.Speech.BaseURL},
		{name: "MEMENTO_STT_MODEL", str: &c.Speech.Model},
		{name: "MEMENTO_STT_API_KEY", str: &c.Speech.APIKey},
		{name: "MEMENTO_STT_KEEP_AUDIO", str: &c.Speech.KeepAudio},
	}
}

// ApplyEnv reads MEMENTO_* variables through getenv (os.Getenv in main).
func (c *Config) ApplyEnv(getenv func(string) string) error {
	for _, s := range c.envSettings() {
		v := getenv(s.name)
		if v == "" {
			continue
		}
		if s.str != nil {
			*s.str = v
			continue
		}
		if s.dur != nil {
			d, err := time.ParseDuration(v)
			if err != nil {
				return memento.Errorf(memento.EINVALID, "%s must be a duration such as 30s or 2m, got %q", s.name, v)
			}
			*s.dur = d
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return memento.Errorf(memento.EINVALID, "%s must be a whole number, got %q", s.name, v)
		}
		*s.num = n
	}
	return nil
}

// AddGlobalFlags binds the settings every command shares. The flags'
// defaults are the values already in c, so environment variables read
// before show through unless a flag is given.
func (c *Config) AddGlobalFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.DB, "db", c.DB, "SQLite database file (MEMENTO_DB)")
	fs.StringVar(&c.Catalog, "catalog", c.Catalog, "JSON-lines catalog file to use instead of the stored or embedded one (MEMENTO_CATALOG)")
	fs.StringVar(&c.Schema, "schema", c.Schema, "attribute schema of the memory pipeline: default, movie, generic or a JSON file (MEMENTO_SCHEMA)")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "log level: debug, info, warn or error (MEMENTO_LOG_LEVEL)")
	fs.StringVar(&c.LogFormat, "log-format", c.LogFormat, "log format: text or json (MEMENTO_LOG_FORMAT)")
	fs.StringVar(&c.Tenant, "tenant", c.Tenant, "tenant the command acts for (MEMENTO_TENANT)")
	fs.StringVar(&c.LLM.Provider, "llm-provider", c.LLM.Provider, "language model: offline or openai; default openai when MEMENTO_LLM_BASE_URL is set (MEMENTO_LLM_PROVIDER)")
	fs.StringVar(&c.LLM.BaseURL, "llm-base-url", c.LLM.BaseURL, "OpenAI-compatible base URL, such as http://localhost:11434/v1 (MEMENTO_LLM_BASE_URL)")
	fs.StringVar(&c.LLM.Model, "llm-model", c.LLM.Model, "chat model name (MEMENTO_LLM_MODEL)")
	fs.IntVar(&c.LLM.Concurrency, "llm-concurrency", c.LLM.Concurrency, "model requests in flight at once for chat turns and context reads (MEMENTO_LLM_CONCURRENCY)")
	fs.IntVar(&c.LLM.JobConcurrency, "llm-job-concurrency", c.LLM.JobConcurrency, "model requests in flight at once for background jobs, apart from the turns' (MEMENTO_LLM_JOB_CONCURRENCY)")
	fs.StringVar(&c.Embed.Provider, "embed-provider", c.Embed.Provider, "embedder: offline or openai (MEMENTO_EMBED_PROVIDER)")
	fs.StringVar(&c.Embed.Model, "embed-model", c.Embed.Model, "embedding model name (MEMENTO_EMBED_MODEL)")
	fs.IntVar(&c.Embed.Dim, "embed-dim", c.Embed.Dim, "dimension of offline embeddings (MEMENTO_EMBED_DIM)")
	fs.IntVar(&c.RecallIndexMB, "recall-index-mb", c.RecallIndexMB, "memory of recall's warm per-user index, MiB (MEMENTO_RECALL_INDEX_MB)")
	fs.IntVar(&c.Workers, "workers", c.Workers, "background jobs run at once (MEMENTO_WORKERS)")
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

// Validate checks every setting and names the first bad one.
func (c *Config) Validate() error {
	c.Resolve()
	if strings.TrimSpace(c.DB) == "" {
		return memento.Errorf(memento.EINVALID, "--db (MEMENTO_DB) must name a file, got an empty value")
	}
	if _, port, err := net.SplitHostPort(c.Addr); err != nil {
		return memento.Errorf(memento.EINVALID, "--addr (MEMENTO_ADDR) must be host:port, got %q", c.Addr)
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return memento.Errorf(memento.EINVALID, "--addr (MEMENTO_ADDR) has a bad port %q", port)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return memento.Errorf(memento.EINVALID, "--log-level (MEMENTO_LOG_LEVEL) must be debug, info, warn or error, got %q", c.LogLevel)
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		return memento.Errorf(memento.EINVALID, "--log-format (MEMENTO_LOG_FORMAT) must be text or json, got %q", c.LogFormat)
	}
	if strings.TrimSpace(c.Tenant) == "" {
		return memento.Errorf(memento.EINVALID, "--tenant (MEMENTO_TENANT) must not be empty")
	}
	if c.Workers < 1 {
		return memento.Errorf(memento.EINVALID, "--workers (MEMENTO_WORKERS) must be at least 1, got %d", c.Workers)
	}
	if c.RecallIndexMB < 1 {
		return memento.Errorf(memento.EINVALID, "--recall-index-mb (MEMENTO_RECALL_INDEX_MB) must be at least 1, got %d", c.RecallIndexMB)
	}
	if err := checkSnapshotURL(c.Snapshot); err != nil {
		return err
	}
	if err := c.HTTP.validate(); err != nil {
		return err
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
		if err := checkURL("--llm-base-url (MEMENTO_LLM_BASE_URL)", c.LLM.BaseURL); err != nil {
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
		if err := checkURL("--llm-base-url (MEMENTO_LLM_BASE_URL)", c.LLM.BaseURL); err != nil {
			return err
		}
		if c.Embed.Model == "" {
			return memento.Errorf(memento.EINVALID, "--embed-model (MEMENTO_EMBED_MODEL) must name a model when the embedder is openai")
		}
	default:
		return memento.Errorf(memento.EINVALID, "--embed-provider (MEMENTO_EMBED_PROVIDER) must be offline or openai, got %q", c.Embed.Provider)
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
	if c.Speech.BaseURL != "" {
		if err := checkURL("MEMENTO_STT_BASE_URL", c.Speech.BaseURL); err != nil {
			return err
		}
		if strings.TrimSpace(c.Speech.Model) == "" {
			return memento.Errorf(memento.EINVALID, "MEMENTO_STT_MODEL must name a transcription model when MEMENTO_STT_BASE_URL is set")
		}
	}
	return nil
}

// validate checks the server's allow-lists and limits.
func (h HTTPConfig) validate() error {
	for _, o := range splitList(h.AllowedOrigins) {
		if _, err := mhttp.NormalizeOrigin(o); err != nil {
			return memento.Errorf(memento.EINVALID, "--allowed-origins (MEMENTO_ALLOWED_ORIGINS): %s", memento.ErrorMessage(err))
		}
	}
	for _, n := range splitList(h.AllowedHosts) {
		if err := mhttp.CheckAllowedHost(n); err != nil {
			return memento.Errorf(memento.EINVALID, "--allowed-hosts (MEMENTO_ALLOWED_HOSTS): %s", memento.ErrorMessage(err))
		}
	}
	for _, d := range []struct {
		setting string
		v       time.Duration
	}{
		{"--http-read-header-timeout (MEMENTO_HTTP_READ_HEADER_TIMEOUT)", h.ReadHeaderTimeout},
		{"--http-read-timeout (MEMENTO_HTTP_READ_TIMEOUT)", h.ReadTimeout},
		{"--http-write-timeout (MEMENTO_HTTP_WRITE_TIMEOUT)", h.WriteTimeout},
		{"--http-idle-timeout (MEMENTO_HTTP_IDLE_TIMEOUT)", h.IdleTimeout},
	} {
		if d.v <= 0 || d.v > time.Hour {
			return memento.Errorf(memento.EINVALID, "%s must be more than 0 and at most 1h, got %s", d.setting, d.v)
		}
	}
	if h.ReadHeaderTimeout > h.ReadTimeout {
		return memento.Errorf(memento.EINVALID, "--http-read-header-timeout (MEMENTO_HTTP_READ_HEADER_TIMEOUT) %s must not be above --http-read-timeout (MEMENTO_HTTP_READ_TIMEOUT) %s, which covers the headers too", h.ReadHeaderTimeout, h.ReadTimeout)
	}
	if h.MaxQueueLag < 0 || h.MaxQueueLag > 24*time.Hour {
		return memento.Errorf(memento.EINVALID, "--max-queue-lag (MEMENTO_MAX_QUEUE_LAG) must be between 0 (never refuse) and 24h, got %s", h.MaxQueueLag)
	}
	if h.MaxConns < 1 || h.MaxConns > 1_000_000 {
		return memento.Errorf(memento.EINVALID, "--http-max-conns (MEMENTO_HTTP_MAX_CONNS) must be between 1 and 1000000, got %d", h.MaxConns)
	}
	return nil
}

// splitList splits a comma-separated setting, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func checkURL(setting, v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return memento.Errorf(memento.EINVALID, "%s must be an http(s) URL, got %q", setting, v)
	}
	return nil
}

// String describes the configuration for the start-up log, without secrets.
func (c Config) String() string {
	return fmt.Sprintf("db=%s llm=%s embed=%s", c.DB, c.LLM.Provider, c.Embed.Provider)
}
