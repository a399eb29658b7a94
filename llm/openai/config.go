package openai

import (
	"net/url"
	"time"

	"github.com/memento-ai/memento"
)

// Defaults of Config's zero values.
const (
	DefaultTimeout     = 60 * time.Second
	DefaultMaxRetries  = 4
	DefaultConcurrency = 4
	// DefaultJobConcurrency keeps the jobs' share what the one shared
	// limit gave them before the turns had their own, so jobs (whose
	// timeouts count the wait for a slot) run no slower. A local server
	// that serves one request at a time queues a turn's request behind the
	// jobs' in flight, so lowering it there shortens a chat's wait.
	DefaultJobConcurrency = 4
)

// Structured-output modes, the values of Config.StructuredOutput.
const (
	// StructuredAuto asks for a strict JSON schema and, when the server
	// turns response_format down, uses JSON object mode from then on.
	StructuredAuto = "auto"
	// StructuredJSONSchema always asks for a strict JSON schema; a server
	// that refuses it fails the call.
	StructuredJSONSchema = "json_schema"
	// StructuredJSONObject only asks for a JSON object and puts the schema
	// in the prompt, for servers without schema support.
	StructuredJSONObject = "json_object"
)

// Config says which server and models to use and how patiently. It is a
// plain struct: the application fills it from flags and MEMENTO_*
// environment variables, and New applies the defaults.
type Config struct {
	// BaseURL is the server's API root, such as "https://api.openai.com/v1"
	// or "http://localhost:11434/v1" for Ollama (MEMENTO_LLM_BASE_URL).
	BaseURL string
	// APIKey is sent as a bearer token; local servers need none
	// (MEMENTO_LLM_API_KEY).
	APIKey string
	// Model is the chat model for every task (MEMENTO_LLM_MODEL).
	Model string
	// EmbedModel is the embedding model; empty means no embedder
	// (MEMENTO_EMBED_MODEL).
	EmbedModel string
	// Timeout bounds each HTTP request; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxRetries is how often a request is sent again after a rate limit,
	// a server error or a network failure; 0 means DefaultMaxRetries and a
	// negative value disables retries.
	MaxRetries int
	// Concurrency bounds the requests in flight at once for the work
	// someone waits for (a chat turn, a context read); 0 means
	// DefaultConcurrency (MEMENTO_LLM_CONCURRENCY).
	Concurrency int
	// JobConcurrency bounds, separately, the requests in flight for
	// background work, whose context memento.InBackground marks (the
	// queue's jobs), so a backlog of jobs never holds a turn's requests
	// back; 0 means DefaultJobConcurrency (MEMENTO_LLM_JOB_CONCURRENCY).
	JobConcurrency int
	// EmbedDim is the embedding model's dimension when known in advance;
	// 0 learns it from the first response.
	EmbedDim int
	// StructuredOutput is StructuredAuto (the default when empty),
	// StructuredJSONSchema or StructuredJSONObject.
	StructuredOutput string
}

// Validate reports the first field that cannot work, as an EINVALID error
// naming it. It checks the shape of the values only; New and NewEmbedder
// also require the model they use.
func (c Config) Validate() error {
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return memento.Errorf(memento.EINVALID, "MEMENTO_LLM_BASE_URL must be an http(s) URL, got %q", c.BaseURL)
	}
	if u.User != nil {
		return memento.Errorf(memento.EINVALID, "MEMENTO_LLM_BASE_URL must not hold credentials; set MEMENTO_LLM_API_KEY instead")
	}
	if c.Model == "" && c.EmbedModel == "" {
		return memento.Errorf(memento.EINVALID, "MEMENTO_LLM_MODEL or MEMENTO_EMBED_MODEL must name a model")
	}
	if c.Timeout < 0 {
		return memento.Errorf(memento.EINVALID, "LLM timeout must not be negative, got %s", c.Timeout)
	}
	if c.Concurrency < 0 {
		return memento.Errorf(memento.EINVALID, "LLM concurrency must not be negative, got %d", c.Concurrency)
	}
	if c.JobConcurrency < 0 {
		return memento.Errorf(memento.EINVALID, "LLM job concurrency must not be negative, got %d", c.JobConcurrency)
	}
	if c.EmbedDim < 0 {
		return memento.Errorf(memento.EINVALID, "embedding dimension must not be negative, got %d", c.EmbedDim)
	}
	switch c.StructuredOutput {
	case "", StructuredAuto, StructuredJSONSchema, StructuredJSONObject:
	default:
		return memento.Errorf(memento.EINVALID, "LLM structured output must be %q, %q or %q, got %q",
			StructuredAuto, StructuredJSONSchema, StructuredJSONObject, c.StructuredOutput)
	}
	return nil
}

// withDefaults returns c with its zero values replaced by the defaults.
func (c Config) withDefaults() Config {
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	switch {
	case c.MaxRetries == 0:
		c.MaxRetries = DefaultMaxRetries
	case c.MaxRetries < 0:
		c.MaxRetries = 0
	}
	if c.Concurrency == 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.JobConcurrency == 0 {
		c.JobConcurrency = DefaultJobConcurrency
	}
	if c.StructuredOutput == "" {
		c.StructuredOutput = StructuredAuto
	}
	return c
}
