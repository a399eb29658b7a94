// Package openai implements memento.LanguageModel and memento.Embedder
// against any OpenAI-compatible server: OpenAI itself, Ollama, vLLM or
// llama.cpp's server.
//
// # Configuration
//
// Config is filled by the application from these environment variables
// (this package reads none of them itself):
//
//	MEMENTO_LLM_BASE_URL  the API root, such as http://localhost:11434/v1
//	MEMENTO_LLM_API_KEY   the bearer token; local servers need none
//	MEMENTO_LLM_MODEL     the chat model used for every task
//	MEMENTO_EMBED_MODEL   the embedding model; empty means no embedder
//
// Timeout, MaxRetries, Concurrency, JobConcurrency, EmbedDim and
// StructuredOutput have defaults (60s, 4, 4, 4, learned, auto). New builds a Model, NewEmbedder a
// stand-alone Embedder; Model.Embedder returns the one a Model builds when
// EmbedModel is set. Model.Check is `memento llm check`. Options add a
// Prometheus registerer, a logger, and the catalog's genre vocabulary
// (WithGenres), which grounds UnderstandRequest's genres.
//
// # How a task call flows
//
// A task method (ExtractFacts, WriteReply, ...) renders its prompt from its
// typed input with the templates in prompts/<task>.tmpl and sends a chat
// completion whose response_format is the task's JSON schema, strict. If
// the server answers 400 naming response_format or json_schema (older
// vLLM, llama.cpp and Ollama builds), the Model switches to json_object
// for the rest of its life, with the schema spelled out in the system
// prompt instead (StructuredOutput "auto"; "json_schema" and "json_object"
// fix the mode).
//
// Every HTTP request waits for a slot of its concurrency budget (the job
// budget when memento.IsBackground says its context is a job's, the
// turns' otherwise, so a backlog of jobs never holds a chat back), is bounded
// by Timeout, and is retried on 429, 5xx, 408 and network failures, up to
// MaxRetries times, with exponential backoff and full jitter, or after the
// server's Retry-After (seconds, HTTP date, or Retry-After-Ms). The SDK's
// own retries are off so that these are counted and testable.
//
// The reply is parsed tolerantly: reasoning in <think> tags (also when the
// server's template ate the opening tag), code fences (whose object wins
// over one in the prose around them) and prose around the first JSON
// object are skipped. The object is
// validated against the schema (types, required fields, enums, bounds;
// unknown fields are dropped and enum values matched ignoring case) and
// against the task's own rules (a rejection needs a reason, a summary has a
// length, each fact gets one attribute). When that fails, one repair
// request shows the model its reply and the problem. A second failure is an
// *OutputError naming the task, with code EUPSTREAM (llm/fallback answers
// those with the offline model); a few soft rules (summary
// length, a reviewer's missing reason, an attribute assigned twice) are
// fixed in code instead of failing the call.
//
// Server failures are *memento.Error values: EUNAVAILABLE when the server
// cannot be reached, times out, rate limits, fails, refuses the key or
// lacks the model; EUPSTREAM when it rejects the request itself. No
// failure of the server is EINTERNAL, so an API never answers 500 for it.
//
// # Accounting
//
// Calls, errors, repairs, retries and prompt and completion tokens are
// counted per task; Usage returns a snapshot for a per-run summary, and
// WithRegisterer exposes them as memento_openai_* Prometheus metrics.
//
// # Embeddings
//
// Embedder.Embed sends texts to /embeddings in batches of 64, concurrently
// within the limit, and L2-normalises the vectors. Its ID is
// "openai/<model>/<dim>"; the dimension comes from Config.EmbedDim or the
// first response, and any other dimension afterwards is an error.
//
// Tests use package llm/llmtest, a scripted in-process fake server; the
// prompts are checked against golden files in testdata/golden, refreshed
// with `go test ./llm/openai -update`.
package openai
