package eval

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/memento-ai/memento"
)

// Answerer answers a question from the memories recall brought back, as
// the LoCoMo paper's question-answering task does.
type Answerer interface {
	// Answer returns a short answer to question using only memories (one
	// memory per line, with its date). Errors: EUNAVAILABLE.
	Answer(ctx context.Context, question, memories string) (string, error)
}

// ChatAnswerer answers with a chat model of an OpenAI-compatible server
// (OpenAI, Ollama, vLLM, llama.cpp). It is evaluation code, not one of the
// agent's language-model tasks: it sends one plain chat completion per
// question, with the server's own client retrying rate limits and server
// errors.
type ChatAnswerer struct {
	client oai.Client
	model  string
}

// ChatAnswererConfig names the server and model; APIKey may be empty for a
// local server. HTTPClient is optional (tests pass the fake server's).
type ChatAnswererConfig struct {
	BaseURL    string
	APIKey     string
	Model      string
	Timeout    time.Duration // per request; default 60s
	MaxRetries int           // default 3
	HTTPClient *http.Client
}

// NewChatAnswerer returns an answerer over the configured server. Errors:
// EINVALID when the base URL or the model is missing.
func NewChatAnswerer(cfg ChatAnswererConfig) (*ChatAnswerer, error) {
	if cfg.BaseURL == "" {
		return nil, memento.Errorf(memento.EINVALID, "answering needs an OpenAI-compatible server: set MEMENTO_LLM_BASE_URL")
	}
	if cfg.Model == "" {
		return nil, memento.Errorf(memento.EINVALID, "answering needs a chat model: set MEMENTO_LLM_MODEL")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.MaxRetries <= 0 {
		cfg.MaxRetries = 3
	}
	key := cfg.APIKey
	if key == "" {
		// A placeholder keeps the client from sending OPENAI_API_KEY from
		// the environment to a server that was never meant to see it.
		key = "none"
	}
	opts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL), option.WithAPIKey(key),
		option.WithMaxRetries(cfg.MaxRetries), option.WithRequestTimeout(cfg.Timeout),
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	return &ChatAnswerer{client: oai.NewClient(opts...), model: cfg.Model}, nil
}

// answerSystem is the instruction of the LoCoMo paper's answering prompt,
// adapted to memories instead of the whole conversation.
const answerSystem = `You answer questions about a long conversation between two people, using only the memories given.
Write the answer as a short phrase, with exact words from the memories whenever possible.
For a question about when something happened, use the dates of the memories and answer with a date.
If the memories do not say, answer "unknown".`

// Answer asks the model for a short answer and returns its first line.
func (a *ChatAnswerer) Answer(ctx context.Context, question, memories string) (string, error) {
	user := "Memories:\n" + strings.TrimSpace(memories) + "\n\nQuestion: " + question + "\nShort answer:"
	res, err := a.client.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{
		Model:       shared.ChatModel(a.model),
		Messages:    []oai.ChatCompletionMessageParamUnion{oai.SystemMessage(answerSystem), oai.UserMessage(user)},
		Temperature: oai.Float(0),
	})
	if err != nil {
		return "", memento.WrapError(memento.EUNAVAILABLE, err, "answer %q: the model server failed: %v", question, err)
	}
	if len(res.Choices) == 0 {
		return "", memento.Errorf(memento.EUNAVAILABLE, "answer %q: the model server returned no choice", question)
	}
	answer := strings.TrimSpace(res.Choices[0].Message.Content)
	answer, _, _ = strings.Cut(answer, "\n")
	return strings.TrimSpace(answer), nil
}

// Compile-time check.
var _ Answerer = (*ChatAnswerer)(nil)

// answerError wraps an answering failure with the question's place.
func answerError(conv string, i int, err error) error {
	return fmt.Errorf("conversation %s question %d: %w", conv, i+1, err)
}
