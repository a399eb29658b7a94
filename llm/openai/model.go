package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/memento-ai/memento"
)

// Model implements every task of memento.LanguageModel against an
// OpenAI-compatible chat completions endpoint. It is safe for concurrent
// use.
type Model struct {
	cfg      Config
	c        *caller
	prompts  *prompts
	embedder *Embedder
	// genres is the catalog's genre vocabulary, sorted, and genreKey maps
	// each genre's lower case to it.
	genres   []string
	genreKey map[string]string
	// objectMode is set once the server has turned json_schema down (or
	// the config asks for JSON object mode) and stays set.
	objectMode atomic.Bool
}

var _ memento.LanguageModel = (*Model)(nil)

// New returns a Model for cfg. It makes no request; Check does. When
// cfg.EmbedModel is set the Model also has an Embedder, sharing its
// concurrency limit and counters. Errors: EINVALID for a bad Config.
func New(cfg Config, opts ...Option) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Model == "" {
		return nil, memento.Errorf(memento.EINVALID, "MEMENTO_LLM_MODEL must name a chat model")
	}
	cfg = cfg.withDefaults()
	p, err := loadPrompts()
	if err != nil {
		return nil, fmt.Errorf("new openai model: %w", err)
	}
	o := buildOptions(opts)
	c, err := newCaller(cfg, o)
	if err != nil {
		return nil, fmt.Errorf("new openai model: %w", err)
	}
	m := &Model{cfg: cfg, c: c, prompts: p, genreKey: map[string]string{}}
	for _, g := range o.genres {
		if g = strings.TrimSpace(g); g != "" && m.genreKey[strings.ToLower(g)] == "" {
			m.genreKey[strings.ToLower(g)] = g
			m.genres = append(m.genres, g)
		}
	}
	slices.Sort(m.genres)
	m.objectMode.Store(cfg.StructuredOutput == StructuredJSONObject)
	if cfg.EmbedModel != "" {
		m.embedder = &Embedder{cfg: cfg, c: c, batch: o.embedBatch}
		m.embedder.dim.Store(int64(cfg.EmbedDim))
	}
	return m, nil
}

// Name says which provider and model this is, for logs and `version`.
func (m *Model) Name() string { return "openai/" + m.cfg.Model }

// Embedder returns the embedder for Config.EmbedModel, or nil when none is
// configured.
func (m *Model) Embedder() *Embedder { return m.embedder }

// Usage returns a snapshot of the counters of every task used so far,
// embeddings of the Model's Embedder included.
func (m *Model) Usage() map[Task]TaskUsage { return m.c.acct.snapshot() }

// StructuredOutput reports the mode requests use now: StructuredJSONSchema
// until the server refuses it, StructuredJSONObject after.
func (m *Model) StructuredOutput() string {
	if m.objectMode.Load() {
		return StructuredJSONObject
	}
	return StructuredJSONSchema
}

// chatMessage is one message of a conversation with the model.
type chatMessage struct {
	role, content string
}

// completion is what the server answered.
type completion struct {
	content, refusal, finish, model string
}

// complete sends one chat completion asking for output that matches
// schema. In auto mode a server that refuses response_format json_schema
// switches the Model to JSON object mode for good and is asked again.
func (m *Model) complete(ctx context.Context, task Task, msgs []chatMessage, schema *jsonSchema) (*completion, error) {
	schemaJSON, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("openai %s: marshal schema: %w", task, err)
	}
	for {
		objectMode := m.objectMode.Load()
		params, err := m.params(task, msgs, schema, schemaJSON, objectMode)
		if err != nil {
			return nil, err
		}
		var res *oai.ChatCompletion
		err = m.c.send(ctx, task, func(ctx context.Context, opts ...option.RequestOption) error {
			var err error
			res, err = m.c.client.Chat.Completions.New(ctx, params, opts...)
			return err
		})
		if err != nil {
			if !objectMode && m.cfg.StructuredOutput == StructuredAuto && rejectsResponseFormat(err) {
				if m.objectMode.CompareAndSwap(false, true) {
					m.c.log.LogAttrs(ctx, slog.LevelWarn, "model server refused json_schema output; using json_object from now on",
						slog.String("task", string(task)), slog.String("error", err.Error()))
				}
				continue
			}
			return nil, err
		}
		m.c.acct.tokensUsed(task, res.Usage.PromptTokens, res.Usage.CompletionTokens)
		memento.CountTokens(ctx, res.Usage.PromptTokens, res.Usage.CompletionTokens)
		out := &completion{model: res.Model}
		if len(res.Choices) > 0 {
			ch := res.Choices[0]
			out.content, out.refusal, out.finish = ch.Message.Content, ch.Message.Refusal, ch.FinishReason
		}
		return out, nil
	}
}

// params builds the request. In JSON object mode the schema goes into the
// system prompt, since the server will not enforce it.
func (m *Model) params(task Task, msgs []chatMessage, schema *jsonSchema, schemaJSON []byte, objectMode bool) (oai.ChatCompletionNewParams, error) {
	p := oai.ChatCompletionNewParams{Model: shared.ChatModel(m.cfg.Model)}
	for _, msg := range msgs {
		switch msg.role {
		case "system":
			content := msg.content
			if objectMode {
				extra, err := objectModeInstructions(schema)
				if err != nil {
					return p, fmt.Errorf("openai %s: %w", task, err)
				}
				content += extra
			}
			p.Messages = append(p.Messages, oai.SystemMessage(content))
		case "assistant":
			p.Messages = append(p.Messages, oai.AssistantMessage(msg.content))
		default:
			p.Messages = append(p.Messages, oai.UserMessage(msg.content))
		}
	}
	if objectMode {
		p.ResponseFormat.OfJSONObject = &shared.ResponseFormatJSONObjectParam{}
	} else {
		p.ResponseFormat.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
				Name:   string(task),
				Strict: oai.Bool(true),
				Schema: json.RawMessage(schemaJSON),
			},
		}
	}
	return p, nil
}

// rejectsResponseFormat reports whether err is a server refusing the
// request because of its response_format: a 4xx whose message names it.
func rejectsResponseFormat(err error) bool {
	var rerr *requestError
	if !errors.As(err, &rerr) || rerr.Status < 400 || rerr.Status >= 500 || rerr.Status == 429 {
		return false
	}
	msg := strings.ToLower(rerr.Message)
	for _, s := range []string{"response_format", "response format", "json_schema", "json schema", "structured output"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// softError marks a broken rule of a task that the task can repair itself
// when the model's second try still breaks it (a summary over its length is
// cut, a missing reason gets a generic one): worth one repair request, not
// worth failing the call.
type softError struct{ error }

func (e softError) Unwrap() error { return e.error }

func soft(format string, args ...any) error { return softError{fmt.Errorf(format, args...)} }

// run renders the task's prompt, asks the model, and decodes and checks its
// output; on unusable output it sends one repair request showing the model
// its reply and the problem. check enforces the rules of the task a schema
// cannot say; it may return soft errors.
func run[T any](ctx context.Context, m *Model, task Task, data any, schema *jsonSchema, check func(*T) error) (_ *T, _ *completion, err error) {
	m.c.acct.call(task)
	defer func() {
		if err != nil {
			m.c.acct.failed(task)
		}
	}()
	p, err := m.prompts.render(task, data)
	if err != nil {
		return nil, nil, fmt.Errorf("openai %s: %w", task, err)
	}
	msgs := []chatMessage{{"system", p.System}, {"user", p.User}}
	comp, err := m.complete(ctx, task, msgs, schema)
	if err != nil {
		return nil, nil, err
	}
	out, problem := decode(comp, schema, check)
	if problem == nil {
		return out, comp, nil
	}

	m.c.acct.repair(task)
	m.c.log.LogAttrs(ctx, slog.LevelInfo, "repairing unusable model output",
		slog.String("task", string(task)), slog.String("problem", problem.Error()))
	repair, err := m.prompts.renderRepair(problem)
	if err != nil {
		return nil, nil, fmt.Errorf("openai %s: %w", task, err)
	}
	msgs = append(msgs, chatMessage{"assistant", comp.content}, chatMessage{"user", repair})
	comp, err = m.complete(ctx, task, msgs, schema)
	if err != nil {
		return nil, nil, err
	}
	out, problem = decode(comp, schema, check)
	var se softError
	if problem != nil && out != nil && errors.As(problem, &se) {
		return out, comp, nil
	}
	if problem != nil {
		return nil, nil, newOutputError(task, comp.content, problem)
	}
	return out, comp, nil
}

// decode reads a T out of the model's reply. On a broken soft rule it
// returns the decoded value with the error.
func decode[T any](comp *completion, schema *jsonSchema, check func(*T) error) (*T, error) {
	if strings.TrimSpace(comp.content) == "" && comp.refusal != "" {
		return nil, fmt.Errorf("the model refused: %s", comp.refusal)
	}
	raw, err := extractObject(comp.content)
	if err != nil {
		if comp.finish == "length" {
			err = fmt.Errorf("%w (the reply was cut off at the token limit)", err)
		}
		return nil, err
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("the JSON object is malformed: %v", err)
	}
	v, err = validate(schema, v, "$")
	if err != nil {
		return nil, fmt.Errorf("the JSON does not match the schema: %w", err)
	}
	// Unknown fields were dropped by validate; decode what is left.
	clean, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("re-encode output: %w", err)
	}
	out := new(T)
	if err := json.Unmarshal(clean, out); err != nil {
		return nil, fmt.Errorf("the JSON does not fit the expected shape: %v", err)
	}
	if check != nil {
		if err := check(out); err != nil {
			var se softError
			if errors.As(err, &se) {
				return out, err
			}
			return nil, err
		}
	}
	return out, nil
}

// CheckResult is what `memento llm check` reports about the server.
type CheckResult struct {
	BaseURL string `json:"baseUrl"`
	// Model is the chat model as the server named it in its answer.
	Model   string        `json:"model"`
	Latency time.Duration `json:"latency"`
	// StructuredOutput is the mode requests use from now on.
	StructuredOutput string `json:"structuredOutput"`
	// JSONSchema is true when the server accepted a strict json_schema
	// response format.
	JSONSchema bool `json:"jsonSchema"`
	// EmbedModel and EmbedDim describe the embedder, when one is
	// configured; EmbedLatency is the time of one embeddings request.
	EmbedModel   string        `json:"embedModel,omitempty"`
	EmbedDim     int           `json:"embedDim,omitempty"`
	EmbedLatency time.Duration `json:"embedLatency,omitempty"`
}

// Check sends a tiny request, and one embedding when an embedder is
// configured, and reports what it learned. In auto mode it also settles
// whether the server supports json_schema. Errors: EUNAVAILABLE when the
// server cannot be reached, EUPSTREAM when it rejects the request or its
// answer is unusable.
func (m *Model) Check(ctx context.Context) (*CheckResult, error) {
	start := m.c.clock.Now()
	_, comp, err := run(ctx, m, TaskCheck, nil, checkSchema(), func(v *checkOutput) error {
		if !v.OK {
			return errors.New(`ok must be true`)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	r := &CheckResult{
		BaseURL:          m.cfg.BaseURL,
		Model:            comp.model,
		Latency:          m.c.clock.Now().Sub(start),
		StructuredOutput: m.StructuredOutput(),
		JSONSchema:       !m.objectMode.Load(),
	}
	if m.embedder != nil {
		start := m.c.clock.Now()
		vecs, err := m.embedder.Embed(ctx, []string{"Memento checks the embedding model."})
		if err != nil {
			return nil, err
		}
		r.EmbedModel = m.cfg.EmbedModel
		r.EmbedDim = len(vecs[0])
		r.EmbedLatency = m.c.clock.Now().Sub(start)
	}
	return r, nil
}
