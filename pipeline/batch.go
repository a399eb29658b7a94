package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/graph"
)

// Batch runs the pipeline over messages of one user, one after the other,
// and keeps their writes until Flush stores them together in one
// transaction (memento.MemoryBatchWriter). Each run reads the user's
// semantic values as the runs before it in the batch left them, so the
// batch forms the same memories as runs one at a time would, while it
// waits for one commit instead of one per message: on a store with one
// writer, a run's wait for its commit, not its work, bounds how fast one
// user's messages go.
//
// A Batch is used by one goroutine, under the user's lock (Worker.Lock):
// values changed by anyone else between the first read and Flush make
// Flush fail with ECONFLICT, and then nothing of the batch is written and
// its messages must run again on their own (ProcessMessage), which merges
// over the values as they are.
type Batch struct {
	p    *Pipeline // over o
	o    *overlay
	real Store
	s    memento.Scope
}

// NewBatch returns an empty batch of the user's messages.
func (p *Pipeline) NewBatch(s memento.Scope) *Batch {
	if s.Tenant == "" {
		s.Tenant = memento.DefaultTenant
	}
	o := &overlay{Store: p.store, runs: map[string]memento.MemoryRun{}}
	q := *p
	q.store = o
	q.graph = q.build()
	return &Batch{p: &q, o: o, real: p.store, s: s}
}

// Process runs the pipeline over msg as ProcessMessage does, over the
// values the batch's earlier runs left, and keeps its write for Flush. A
// message processed before (stored, or earlier in the batch) returns its
// run and runs nothing.
func (b *Batch) Process(ctx context.Context, msg memento.Message) (*memento.MemoryRun, error) {
	return b.p.ProcessMessage(ctx, b.s, msg)
}

// Pending lists the messages whose runs wait for Flush, in order.
func (b *Batch) Pending() []memento.Message {
	out := make([]memento.Message, len(b.o.pending))
	for i, w := range b.o.pending {
		out[i] = w.Message
	}
	return out
}

// Flush stores the runs kept since the last Flush, in one transaction when
// the store can (memento.MemoryBatchWriter), and returns their messages.
// On an error nothing of them is written and the batch forgets them, and
// the values it read: the caller runs those messages again on their own.
func (b *Batch) Flush(ctx context.Context) ([]memento.Message, error) {
	pending := b.Pending()
	if len(pending) == 0 {
		return nil, nil
	}
	ws := b.o.pending
	var err error
	if bw, ok := b.real.(memento.MemoryBatchWriter); ok {
		_, err = bw.WriteMemoryBatch(ctx, b.s, ws)
	} else {
		for _, w := range ws {
			if _, err = b.real.WriteMemories(ctx, b.s, w); err != nil {
				break
			}
		}
	}
	b.o.pending, b.o.runs = nil, map[string]memento.MemoryRun{}
	for _, w := range ws {
		// Stored now, or to run again outside the batch.
		delete(b.o.unrecorded, w.Message.ID)
	}
	if err != nil {
		b.o.current, b.o.read = nil, false
		return pending, fmt.Errorf("flush %d runs: %w", len(ws), err)
	}
	return pending, nil
}

// overlay is the store as a batch's runs see it: the real store, with the
// writes the batch keeps applied to the user's current semantic values
// and to the recorded runs.
type overlay struct {
	Store
	pending []memento.MemoryWrite
	runs    map[string]memento.MemoryRun
	// current is the user's current semantic memories as of the pending
	// writes, once read.
	current []memento.Memory
	read    bool
	// threads are the thread windows the batch was given (Batch.Know),
	// and summaries the threads' latest summaries once read.
	threads   map[string]threadWindow
	summaries map[string]*memento.Summary
	// unrecorded and unsaved are the messages without a recorded run and
	// the checkpoint keys without a checkpoint when Prefetch read them.
	unrecorded, unsaved map[string]bool
}

// semanticCurrent is the filter of the current semantic values, the only
// read of memories a run makes (aggregate).
var semanticCurrent = memento.MemoryFilter{Mode: memento.ModeSemantic}

// load reads the user's current semantic values once.
func (o *overlay) load(ctx context.Context, s memento.Scope) error {
	if o.read {
		return nil
	}
	cur, err := o.Store.Memories(ctx, s, semanticCurrent)
	if err != nil {
		return err
	}
	o.current, o.read = cur, true
	return nil
}

// Memories returns the current semantic values as the pending writes left
// them. A batch's runs read nothing else; another filter, which would not
// see the pending writes, is refused.
func (o *overlay) Memories(ctx context.Context, s memento.Scope, f memento.MemoryFilter) ([]memento.Memory, error) {
	if f != semanticCurrent {
		if len(o.pending) > 0 {
			return nil, fmt.Errorf("a batch reads only the current semantic values, not %+v", f)
		}
		return o.Store.Memories(ctx, s, f)
	}
	if err := o.load(ctx, s); err != nil {
		return nil, err
	}
	return slices.Clone(o.current), nil
}

// MemoryRun returns a run the batch keeps, else the stored one; a message
// Prefetch found without a run has none.
func (o *overlay) MemoryRun(ctx context.Context, s memento.Scope, message string) (*memento.MemoryRun, error) {
	if r, ok := o.runs[message]; ok {
		return &r, nil
	}
	if o.unrecorded[message] {
		return nil, memento.Errorf(memento.ENOTFOUND, "no run over message %q: it was not processed (yet)", message)
	}
	return o.Store.MemoryRun(ctx, s, message)
}

// WriteMemories checks w as the store would, against the values the
// pending writes left, and keeps it.
func (o *overlay) WriteMemories(ctx context.Context, s memento.Scope, w memento.MemoryWrite) (bool, error) {
	if _, ok := o.runs[w.Message.ID]; ok {
		return false, nil
	}
	if err := o.load(ctx, s); err != nil {
		return false, err
	}
	value := func(attr string) memento.MemoryBase {
		for _, m := range o.current {
			if strings.EqualFold(m.Attribute, attr) {
				return memento.MemoryBase{ID: m.ID, Value: m.Value}
			}
		}
		return memento.MemoryBase{}
	}
	for attr, base := range w.Base {
		if value(attr) != base {
			return false, memento.Errorf(memento.ECONFLICT, "the current value of %s changed while the message was processed", attr)
		}
	}
	closed := map[string]bool{}
	for _, c := range w.Close {
		closed[c.ID] = true
	}
	next := make([]memento.Memory, 0, len(o.current)+len(w.Insert))
	for _, m := range o.current {
		if closed[m.ID] {
			delete(closed, m.ID)
			continue
		}
		next = append(next, m)
	}
	for id := range closed {
		return false, memento.Errorf(memento.ECONFLICT, "memory %q is no longer current", id)
	}
	for _, m := range w.Insert {
		if m.Mode == memento.ModeSemantic {
			next = append(next, m)
		}
	}
	o.current = next
	o.pending = append(o.pending, w)
	o.runs[w.Message.ID] = w.Run
	return true, nil
}

// Messages and LatestSummary give the runs the conversation a message is
// read in (readConversation, hygiene) when the store has it: from the
// messages the batch was given (Batch.Know) when they answer the request
// whole, else from the store.
func (o *overlay) Messages(ctx context.Context, s memento.Scope, thread string, afterSeq int64, limit int) ([]memento.Message, error) {
	if w, ok := o.threads[thread]; ok && afterSeq >= w.after && limit > 0 {
		i, _ := slices.BinarySearchFunc(w.msgs, afterSeq+1, func(m memento.Message, seq int64) int { return cmp.Compare(m.Seq, seq) })
		if len(w.msgs)-i >= limit {
			return slices.Clone(w.msgs[i : i+limit]), nil
		}
	}
	tr, ok := o.Store.(threadReader)
	if !ok {
		return nil, memento.Errorf(memento.EINVALID, "the store does not list a thread's messages")
	}
	return tr.Messages(ctx, s, thread, afterSeq, limit)
}

// LatestSummary returns the thread's latest summary, when the store keeps
// them, read once a batch: the runs of a batch read their threads as the
// batch found them.
func (o *overlay) LatestSummary(ctx context.Context, s memento.Scope, thread string) (*memento.Summary, error) {
	sr, ok := o.Store.(summaryReader)
	if !ok {
		return nil, nil
	}
	if sum, ok := o.summaries[thread]; ok {
		return sum, nil
	}
	sum, err := sr.LatestSummary(ctx, s, thread)
	if err != nil {
		return nil, err
	}
	if o.summaries == nil {
		o.summaries = map[string]*memento.Summary{}
	}
	o.summaries[thread] = sum
	return sum, nil
}

// threadWindow is a run of a thread's messages as the store listed them:
// every message with after < Seq <= the last one's, in order.
type threadWindow struct {
	after int64
	msgs  []memento.Message
}

// Know gives the batch the messages of a thread that the caller read
// (Messages(thread, afterSeq, n) of the store, in order): the runs read
// the conversations of their messages from them instead of reading the
// thread again, one message at a time. A request they do not answer whole
// goes to the store.
func (b *Batch) Know(thread string, afterSeq int64, msgs []memento.Message) {
	if len(msgs) == 0 || !slices.IsSortedFunc(msgs, func(x, y memento.Message) int { return cmp.Compare(x.Seq, y.Seq) }) || msgs[0].Seq <= afterSeq {
		return
	}
	if b.o.threads == nil {
		b.o.threads = map[string]threadWindow{}
	}
	b.o.threads[thread] = threadWindow{after: afterSeq, msgs: msgs}
}

// RunLookup is a store that tells, in one read, which of a user's
// messages have their runs recorded and which of the given checkpoint
// keys have a checkpoint saved. A batch asks it once for all its messages
// (Batch.Prefetch) where each run would otherwise ask the store twice,
// once whether its message was processed and once for its checkpoint:
// two round trips a message on a store behind a network.
type RunLookup interface {
	RunsAndCheckpoints(ctx context.Context, s memento.Scope, messages, keys []string) (recorded, saved map[string]bool, err error)
}

// Prefetch reads at once, when the store is a RunLookup, which of the
// messages have their runs recorded and which have a checkpoint: the
// batch's runs then ask the store only about those that do. A run
// recorded after Prefetch by someone else is still found: the write
// refuses to store a message's run twice, and the run reports the stored
// one. Without a RunLookup, or when the read fails, it does nothing.
func (b *Batch) Prefetch(ctx context.Context, messages []string) {
	rl, ok := b.real.(RunLookup)
	if !ok || len(messages) == 0 {
		return
	}
	keys := make([]string, len(messages))
	for i, id := range messages {
		keys[i] = checkpointKey(id)
	}
	recorded, saved, err := rl.RunsAndCheckpoints(ctx, b.s, messages, keys)
	if err != nil {
		return
	}
	if b.o.unrecorded == nil {
		b.o.unrecorded, b.o.unsaved = map[string]bool{}, map[string]bool{}
	}
	for i, id := range messages {
		if !recorded[id] {
			b.o.unrecorded[id] = true
		}
		if !saved[keys[i]] {
			b.o.unsaved[keys[i]] = true
		}
	}
}

// checkpointKey is the key of the checkpoint of the run over a message.
func checkpointKey(message string) string { return GraphName + "/" + message }

// Checkpointer is the real store's: a batch's long runs save their
// checkpoints as runs one at a time do. A key Prefetch found without a
// checkpoint loads as none without asking the store, until it is saved.
func (o *overlay) Checkpointer(s memento.Scope) graph.Checkpointer {
	inner := o.Store.Checkpointer(s)
	if len(o.unsaved) == 0 {
		return inner
	}
	return prefetched{inner, o}
}

// prefetched is a checkpointer that knows which keys have no checkpoint.
type prefetched struct {
	graph.Checkpointer
	o *overlay
}

func (p prefetched) Load(ctx context.Context, key string) (*graph.Checkpoint, bool, error) {
	if p.o.unsaved[key] {
		return nil, false, nil
	}
	return p.Checkpointer.Load(ctx, key)
}

func (p prefetched) Save(ctx context.Context, key string, cp graph.Checkpoint) error {
	delete(p.o.unsaved, key)
	return p.Checkpointer.Save(ctx, key, cp)
}
