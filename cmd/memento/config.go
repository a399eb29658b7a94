package main

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/engine"
	mhttp "github.com/memento-ai/memento/http"
)

// Config is every setting of the memento binary: the engine's (the
// store, models, catalog and workers) and the command's own (where serve
// listens, logs, snapshots, HTTP limits, speech). Defaults come first,
// then MEMENTO_* environment variables, then flags; Validate rejects a bad
// value with a message naming the setting.
type Config struct {
	engine.Config
	Addr      string // where serve listens
	LogLevel  string // debug, info, warn, error
	LogFormat string // text or json
	Snapshot  string // serve --snapshot: file:///dir or s3://bucket/prefix (snapshot.go)
	HTTP      HTTPConfig
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
		Config:    engine.DefaultConfig(),
		Addr:      "127.0.0.1:8080",
		LogLevel:  "info",
		LogFormat: "text",
		Speech:    SpeechConfig{Model: "whisper-1"},
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

// envSettings are every MEMENTO_* variable of the command: the engine's
// and its own.
func (c *Config) envSettings() []engine.EnvSetting {
	return append(c.Config.EnvSettings(), []engine.EnvSetting{
		{Name: "MEMENTO_ADDR", Str: &c.Addr},
		{Name: "MEMENTO_LOG_LEVEL", Str: &c.LogLevel},
		{Name: "MEMENTO_LOG_FORMAT", Str: &c.LogFormat},
		{Name: "MEMENTO_SNAPSHOT", Str: &c.Snapshot},
		{Name: "MEMENTO_ALLOWED_ORIGINS", Str: &c.HTTP.AllowedOrigins},
		{Name: "MEMENTO_ALLOWED_HOSTS", Str: &c.HTTP.AllowedHosts},
		{Name: "MEMENTO_HTTP_READ_HEADER_TIMEOUT", Dur: &c.HTTP.ReadHeaderTimeout},
		{Name: "MEMENTO_HTTP_READ_TIMEOUT", Dur: &c.HTTP.ReadTimeout},
		{Name: "MEMENTO_HTTP_WRITE_TIMEOUT", Dur: &c.HTTP.WriteTimeout},
		{Name: "MEMENTO_HTTP_IDLE_TIMEOUT", Dur: &c.HTTP.IdleTimeout},
		{Name: "MEMENTO_HTTP_MAX_CONNS", Num: &c.HTTP.MaxConns},
		{Name: "MEMENTO_MAX_QUEUE_LAG", Dur: &c.HTTP.MaxQueueLag},
		{Name: "MEMENTO_STT_BASE_URL", Str: &c.Speech.BaseURL},
		{Name: "MEMENTO_STT_MODEL", Str: &c.Speech.Model},
		{Name: "MEMENTO_STT_API_KEY", Str: &c.Speech.APIKey},
		{Name: "MEMENTO_STT_KEEP_AUDIO", Str: &c.Speech.KeepAudio},
	}...)
}

// ApplyEnv reads MEMENTO_* variables through getenv (os.Getenv in main).
func (c *Config) ApplyEnv(getenv func(string) string) error {
	return engine.ApplyEnv(c.envSettings(), getenv)
}

// AddGlobalFlags binds the settings every command shares. The flags'
// defaults are the values already in c, so environment variables read
// before show through unless a flag is given.
func (c *Config) AddGlobalFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.DB, "db", c.DB, "the store: an SQLite file, created if missing, or a PostgreSQL URL such as postgres://user@host:5432/memento (MEMENTO_DB)")
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
	fs.StringVar(&c.Embed.Cache, "embed-cache", c.Embed.Cache, "keep the catalog's title vectors in the store, so a restart does not embed the catalog again: auto (for an embedding server only), on or off (MEMENTO_EMBED_CACHE)")
	fs.IntVar(&c.RecallIndexMB, "recall-index-mb", c.RecallIndexMB, "memory of recall's warm per-user index, MiB (MEMENTO_RECALL_INDEX_MB)")
	fs.IntVar(&c.Workers, "workers", c.Workers, "background jobs run at once (MEMENTO_WORKERS)")
	fs.IntVar(&c.BackgroundProcessors, "background-processors", c.BackgroundProcessors, "background jobs that compute at once, one fewer while requests are served; 0: the processors (MEMENTO_BACKGROUND_PROCESSORS)")
	fs.BoolVar(&c.Intake, "intake", c.Intake, "SQLite: acknowledge appends from a file of their own beside the store (<db>-intake), not from the writer the background jobs keep busy (MEMENTO_INTAKE)")
	fs.StringVar(&c.IntakePath, "intake-path", c.IntakePath, "SQLite: put the intake's file here (a file, or a directory to hold <db name>-intake), on a device whose syncs do not wait for the store's disk; turns --intake on. Every process on the store must give the same (MEMENTO_INTAKE_PATH)")
	fs.IntVar(&c.TurnSlots, "turn-slots", c.TurnSlots, "chat turns computed at once, the others wait their turn; 0: the processors when the model, embedder and emotion tagger are offline, no bound with a model server; -1: no bound (MEMENTO_TURN_SLOTS)")
	fs.IntVar(&c.BackgroundNice, "background-nice", c.BackgroundNice, "how much lower the system runs background jobs' computations than requests, as a nice value 1-19; 0: alike (Linux; MEMENTO_BACKGROUND_NICE)")
}

// Validate checks every setting and names the first bad one.
func (c *Config) Validate() error {
	if err := c.Config.Validate(); err != nil {
		return err
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
	if err := checkSnapshotURL(c.Snapshot); err != nil {
		return err
	}
	if err := c.HTTP.validate(); err != nil {
		return err
	}
	if c.Speech.BaseURL != "" {
		if err := engine.CheckHTTPURL("MEMENTO_STT_BASE_URL", c.Speech.BaseURL); err != nil {
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

// String describes the configuration for the start-up log, without secrets.
func (c Config) String() string {
	return fmt.Sprintf("db=%s llm=%s embed=%s", engine.RedactURL(c.DB), c.LLM.Provider, c.Embed.Provider)
}
