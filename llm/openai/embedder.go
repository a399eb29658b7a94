package openai

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/memento-ai/memento"
)

// DefaultEmbedBatch is how many texts one embeddings request carries.
const DefaultEmbedBatch = 64

// Embedder implements memento.Embedder with an OpenAI-compatible
// /embeddings endpoint. Texts are sent in batches, several at once within
// the concurrency limit, and every vector comes back L2-normalised. It is
// safe for concurrent use.
type Embedder struct {
	cfg   Config
	c     *caller
	batch int
	// dim is Config.EmbedDim, or learned from the first response.
	dim atomic.Int64
}

var _ memento.Embedder = (*Embedder)(nil)

// NewEmbedder returns an Embedder for cfg.EmbedModel. It makes no request.
// Errors: EINVALID for a bad Config.
func NewEmbedder(cfg Config, opts ...Option) (*Embedder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.EmbedModel == "" {
		return nil, memento.Errorf(memento.EINVALID, "MEMENTO_EMBED_MODEL must name an embedding model")
	}
	cfg = cfg.withDefaults()
	o := buildOptions(opts)
	c, err := newCaller(cfg, o)
	if err != nil {
		return nil, fmt.Errorf("new openai embedder: %w", err)
	}
	e := &Embedder{cfg: cfg, c: c, batch: o.embedBatch}
	e.dim.Store(int64(cfg.EmbedDim))
	return e, nil
}

// ID names the embedder as "openai/<model>/<dim>", so vectors of another
// model or dimension are never compared with these. Until the dimension is
// known (Config.EmbedDim, or the first Embed) it ends in "/0"; set EmbedDim
// or call Embed once before storing vectors under the ID.
func (e *Embedder) ID() string {
	return "openai/" + e.cfg.EmbedModel + "/" + strconv.FormatInt(e.dim.Load(), 10)
}

// Dim returns the vectors' dimension, 0 while unknown.
func (e *Embedder) Dim() int { return int(e.dim.Load()) }

// Usage returns a snapshot of the embedder's counters.
func (e *Embedder) Usage() map[Task]TaskUsage { return e.c.acct.snapshot() }

// Embed returns one L2-normalised vector per text, in order. Empty texts,
// which OpenAI refuses, are sent as a single space. Errors: EUNAVAILABLE
// when the server fails, EUPSTREAM when it answers with the wrong number
// of vectors or a dimension other than the configured one.
func (e *Embedder) Embed(ctx context.Context, texts []string) (_ [][]float32, err error) {
	out := make([][]float32, len(texts))
	if len(texts) == 0 {
		return out, nil
	}
	e.c.acct.call(TaskEmbed)
	defer func() {
		if err != nil {
			e.c.acct.failed(TaskEmbed)
		}
	}()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for start := 0; start < len(texts); start += e.batch {
		end := min(start+e.batch, len(texts))
		wg.Go(func() {
			if err := e.embedBatch(ctx, texts[start:end], out[start:end]); err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
					cancel()
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

// embedBatch embeds texts into out, which has the same length.
func (e *Embedder) embedBatch(ctx context.Context, texts []string, out [][]float32) error {
	input := make([]string, len(texts))
	for i, t := range texts {
		if t == "" {
			t = " "
		}
		input[i] = t
	}
	params := oai.EmbeddingNewParams{
		Model:          oai.EmbeddingModel(e.cfg.EmbedModel),
		Input:          oai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: input},
		EncodingFormat: oai.EmbeddingNewParamsEncodingFormatFloat,
	}
	var res *oai.CreateEmbeddingResponse
	err := e.c.send(ctx, TaskEmbed, func(ctx context.Context, opts ...option.RequestOption) error {
		var err error
		res, err = e.c.client.Embeddings.New(ctx, params, opts...)
		return err
	})
	if err != nil {
		return err
	}
	e.c.acct.tokensUsed(TaskEmbed, res.Usage.PromptTokens, 0)
	if len(res.Data) != len(texts) {
		return e.badResponse("sent %d texts, got %d vectors", len(texts), len(res.Data))
	}
	for _, d := range res.Data {
		if d.Index < 0 || int(d.Index) >= len(out) || out[d.Index] != nil {
			return e.badResponse("vector index %d is out of range or repeated", d.Index)
		}
		if len(d.Embedding) == 0 {
			return e.badResponse("vector %d is empty", d.Index)
		}
		if err := e.learnDim(len(d.Embedding)); err != nil {
			return err
		}
		out[d.Index] = normalise(d.Embedding)
	}
	return nil
}

// learnDim records the dimension of the first vector and refuses any other.
func (e *Embedder) learnDim(n int) error {
	if e.dim.CompareAndSwap(0, int64(n)) {
		return nil
	}
	if want := e.dim.Load(); int64(n) != want {
		return memento.Errorf(memento.EUPSTREAM, "The embedding model %s returned %d dimensions, expected %d; set the embedding dimension to match the model.", e.cfg.EmbedModel, n, want)
	}
	return nil
}

func (e *Embedder) badResponse(format string, args ...any) error {
	return fmt.Errorf("openai embed: %w", memento.WrapError(memento.EUPSTREAM, fmt.Errorf(format, args...),
		"The embedding server at %s gave a malformed answer.", hostOf(e.cfg.BaseURL)))
}

// normalise scales v to unit length; a zero vector stays zero.
func normalise(v []float64) []float32 {
	var sum float64
	for _, x := range v {
		sum += x * x
	}
	out := make([]float32, len(v))
	if sum == 0 {
		return out
	}
	inv := 1 / math.Sqrt(sum)
	for i, x := range v {
		out[i] = float32(x * inv)
	}
	return out
}
