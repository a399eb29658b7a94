package pipeline_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/graph"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/pipeline"
	"github.com/memento-ai/memento/sqlite"
)

// lookupStore is the SQLite store as a pipeline.RunLookup, answered from
// its own reads, counting the reads of runs and checkpoints the runs make
// themselves.
type lookupStore struct {
	*sqlite.DB
	runs, loads atomic.Int32
}

func (l *lookupStore) MemoryRun(ctx context.Context, s memento.Scope, message string) (*memento.MemoryRun, error) {
	l.runs.Add(1)
	return l.DB.MemoryRun(ctx, s, message)
}

func (l *lookupStore) Checkpointer(s memento.Scope) graph.Checkpointer {
	return countingLoads{l.DB.Checkpointer(s), &l.loads}
}

func (l *lookupStore) RunsAndCheckpoints(ctx context.Context, s memento.Scope, messages, keys []string) (recorded, saved map[string]bool, err error) {
	recorded, saved = map[string]bool{}, map[string]bool{}
	for _, id := range messages {
		if _, err := l.DB.MemoryRun(ctx, s, id); err == nil {
			recorded[id] = true
		}
	}
	cp := l.DB.Checkpointer(s)
	for _, k := range keys {
		if _, ok, err := cp.Load(ctx, k); err == nil && ok {
			saved[k] = true
		}
	}
	return recorded, saved, nil
}

type countingLoads struct {
	graph.Checkpointer
	n *atomic.Int32
}

func (c countingLoads) Load(ctx context.Context, key string) (*graph.Checkpoint, bool, error) {
	c.n.Add(1)
	return c.Checkpointer.Load(ctx, key)
}

// TestBatchPrefetch runs a conversation through a batch that read at once
// which of its messages were processed and which have checkpoints: its
// runs ask the store about neither for the messages without, the one
// processed before returns its stored run without running, and the
// memories are those runs one at a time form.
func TestBatchPrefetch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	one, batched, msgs := conversed(t)
	before := batched.process(t, msgs[0])
	store := &lookupStore{DB: batched.db}
	p, err := pipeline.New(batched.model, store, pipeline.Options{Embedder: offline.NewEmbedder(64)})
	if err != nil {
		t.Fatal(err)
	}
	b := p.NewBatch(batched.s)
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
	}
	b.Prefetch(ctx, ids)
	calls := batched.model.total()
	run, err := b.Process(ctx, msgs[0])
	if err != nil || run.Outcome != before.Outcome || batched.model.total() != calls {
		t.Errorf("a message processed before the batch: %+v, %v, %d model calls; want its stored run and none", run, err, batched.model.total()-calls)
	}
	for _, m := range msgs[1:] {
		if _, err := b.Process(ctx, m); err != nil {
			t.Fatalf("Batch.Process(%q): %v", m.Text, err)
		}
	}
	if runs, loads := store.runs.Load(), store.loads.Load(); runs != 1 || loads != 0 {
		t.Errorf("the batch's runs read %d runs and %d checkpoints of the store; want 1 (the message processed before) and 0", runs, loads)
	}
	if _, err := b.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(history(t, one), history(t, batched)); diff != "" {
		t.Errorf("memories one at a time (-) and in a prefetched batch (+):\n%s", diff)
	}
}
