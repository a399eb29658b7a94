package engine

import (
	"context"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/pipeline"
	"github.com/memento-ai/memento/recall"
)

// Schema returns the attribute schema: Config.Schema, a built-in name or a
// JSON file, by default the movie and generic schemas.
func (e *Engine) Schema() (memento.Schema, error) {
	return pipeline.LoadSchema(e.Config.Schema)
}

// Pipeline returns the attribute-memory pipeline over the engine's store,
// model, embedder and schema. It holds no state between runs, so every
// call may make a new one.
func (e *Engine) Pipeline(ctx context.Context) (*pipeline.Pipeline, error) {
	model, err := e.Model(ctx)
	if err != nil {
		return nil, err
	}
	emb, err := e.Embedder(ctx)
	if err != nil {
		return nil, err
	}
	schema, err := e.Schema()
	if err != nil {
		return nil, err
	}
	return pipeline.New(model, e.Store, pipeline.Options{Schema: schema, Embedder: emb, Logger: e.Logger})
}

// handleRememberJobs registers the worker of the remember jobs. One worker
// serves the process, so its per-user ordering holds across jobs.
func (e *Engine) handleRememberJobs(ctx context.Context, q memento.Queue) error {
	p, err := e.Pipeline(ctx)
	if err != nil {
		return err
	}
	// The batches of the users' backlogs share the worker, and so its
	// per-user lock (handleBacklog).
	w := &pipeline.Worker{Pipeline: p, Ordered: e.Store, Logger: e.Logger}
	e.remember = w
	q.Handle(memento.JobRemember, w.Handle, memento.JobOptions{Timeout: pipeline.JobTimeout})
	return nil
}

// rememberJobs is the remember job of a newly stored message: the
// pipeline extracts from the user's messages and indexes every message
// for recall.
func rememberJobs(s memento.Scope, thread string, m memento.Message) []memento.JobRequest {
	return []memento.JobRequest{{Kind: memento.JobRemember, Payload: memento.MessageJob{
		Tenant: s.Tenant, User: s.User, Thread: thread, Message: m.ID, Seq: m.Seq,
	}}}
}

// Assembler returns the context assembler over the engine's store and
// embedder, with the preference memory's recaller. There is one per
// engine, so the API and the agent share its warm recall index.
func (e *Engine) Assembler(ctx context.Context) (*recall.Assembler, error) {
	e.assemblerMu.Lock()
	defer e.assemblerMu.Unlock()
	if e.assembler != nil {
		return e.assembler, nil
	}
	emb, err := e.Embedder(ctx)
	if err != nil {
		return nil, err
	}
	pr, err := e.PrefsRecaller(ctx)
	if err != nil {
		return nil, err
	}
	asm := recall.WithIndex(e.Store, recall.NewIndex(e.Store, int64(e.Config.RecallIndexMB)<<20), emb, pr)
	e.registerIndexMetrics(asm.Index)
	e.assembler = asm
	return asm, nil
}

// memoryReader gives the agent the assembled long-term memory of a user.
type memoryReader struct {
	asm *recall.Assembler
	k   int
}

// agentRecallK is how many memories a turn of the agent draws on.
const agentRecallK = 5

// Recall returns the memories relevant to the message.
func (r memoryReader) Recall(ctx context.Context, s memento.Scope, thread, message string) ([]agent.MemoryItem, error) {
	items, err := r.asm.Recall(ctx, memento.RecallQuery{Scope: s, Thread: thread, Query: message, K: r.k})
	if err != nil {
		return nil, err
	}
	out := make([]agent.MemoryItem, len(items))
	for i, it := range items {
		out[i] = agent.MemoryItem{Kind: it.Kind, ID: it.ID, Text: it.Text}
	}
	return out, nil
}

// agentMemory returns the agent's memory reader, or nil (and a warning)
// when the assembler cannot be built: the agent then answers without
// long-term memory.
func (e *Engine) agentMemory(ctx context.Context) agent.MemoryReader {
	asm, err := e.Assembler(ctx)
	if err != nil {
		e.Logger.Warn("long-term memory is off for the agent", "err", err)
		return nil
	}
	return memoryReader{asm: asm, k: agentRecallK}
}

// attributeMemories lists a user's memories from the store and hands the
// agent's ranking the current ones of the attributes it ranks by from the
// warm recall index, which follows the store's changes: reading up to
// 1,000 rows for them from the store took about 4.5 ms of a turn's 10 at
// the median, at 1.1 M memories (docs/BENCHMARKS.md).
type attributeMemories struct {
	Store
	index *recall.Index
}

// CurrentMemories implements agent.CurrentMemories.
func (m attributeMemories) CurrentMemories(ctx context.Context, s memento.Scope, attributes []string, limit int) ([]memento.Memory, error) {
	return m.index.CurrentMemories(ctx, s, attributes, limit)
}

// agentAttributes returns what the agent reads attribute memories from:
// the store, with the assembler's index when it can be built.
func (e *Engine) agentAttributes(ctx context.Context) agent.AttributeMemories {
	asm, err := e.Assembler(ctx)
	if err != nil {
		return e.Store
	}
	return attributeMemories{Store: e.Store, index: asm.Index}
}

// Reindex embeds the user's memories and messages that have no vector by
// the current embedder: after an import, an edit or a change of embedder.
func (e *Engine) Reindex(ctx context.Context, s memento.Scope) error {
	emb, err := e.Embedder(ctx)
	if err != nil {
		return err
	}
	const batch = 256
	for range 10000 {
		mems, msgs, err := e.Store.MissingVectors(ctx, s, emb.ID(), batch)
		if err != nil {
			return err
		}
		if len(mems)+len(msgs) == 0 {
			return nil
		}
		if err := e.embed(ctx, s, emb, mems, msgs); err != nil {
			return err
		}
	}
	return nil
}

// embed computes and stores the vectors of mems and msgs by emb.
func (e *Engine) embed(ctx context.Context, s memento.Scope, emb memento.Embedder, mems, msgs []memento.VectorText) error {
	texts := make([]string, 0, len(mems)+len(msgs))
	for _, t := range mems {
		texts = append(texts, t.Text)
	}
	for _, t := range msgs {
		texts = append(texts, t.Text)
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return err
	}
	mv, gv := map[string][]float32{}, map[string][]float32{}
	for i, t := range mems {
		mv[t.ID] = vecs[i]
	}
	for i, t := range msgs {
		gv[t.ID] = vecs[len(mems)+i]
	}
	return e.Store.PutVectors(ctx, s, emb.ID(), mv, gv)
}
