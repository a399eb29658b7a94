package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/pipeline"
	"github.com/memento-ai/memento/prefs"
	"github.com/memento-ai/memento/profile"
)

// A message's background jobs (MessageJobs) go to its user's backlog
// (memento.JobRequest.ByUser), and the queue hands the backlog over in
// batches to backlog.run: the messages of a batch are read together, with
// the messages before them in their threads; each message's memories are
// formed in the order the messages were stored (the pipeline writes each
// message's run as it ends, so its memories are recallable at once); the
// preferences and the events the batch's messages teach are then written
// in one transaction each.

// backlogBudget is how long a batch takes on new messages: past it, the
// messages not begun stay in the backlog for the next batch, so that a
// slow model (seconds a message) never runs a batch into its timeout.
const backlogBudget = 30 * time.Second

// previousLookback is how many messages before a message its jobs read to
// find the user's previous message and the agent's turn before it, as the
// jobs of one message do (prefs and profile).
const previousLookback = 4

// errUnknownBacklogKind answers a backlog job of a kind the batch does not
// run: it goes to its kind's own handler.
var errUnknownBacklogKind = errors.New("the batch does not run this kind of job")

// backlog runs batches of one user's jobs.
type backlog struct {
	store    Store
	remember *pipeline.Worker
	prefs    *prefs.Service
	profile  *profile.Worker
	log      *slog.Logger
	// remembered is told about each message whose memories were written.
	remembered func(memento.Scope, memento.Message)
	// handlers are the queue's handlers by kind: a batch runs the jobs
	// of other kinds than a message's (the user's profile, preference
	// clusters, preferences from events) with them.
	handlers map[string]memento.JobHandler
	// computes says that forming a message's memories is compute (the
	// offline model), which takes one of the background's processors
	// (memento.Compute); with a model server it is mostly waiting.
	computes bool
}

// process forms the memories of m in batch, on one of the background's
// processors when that is compute.
func (b *backlog) process(ctx context.Context, batch *pipeline.Batch, m memento.Message) error {
	if b.computes {
		held, release, err := memento.Compute(ctx)
		if err != nil {
			return err
		}
		defer release()
		ctx = held
	}
	_, err := batch.Process(ctx, m)
	return err
}

// backlogMessage is a message of a batch with its jobs (indexes into the
// batch).
type backlogMessage struct {
	job  memento.MessageJob
	jobs map[string][]int
	msg  *memento.Message // nil when it is gone
	// previous and asked are the user's message before it and the
	// agent's turn just before it, in its thread.
	previous, asked string
}

// run is the memento.BacklogHandler of the engine.
func (b *backlog) run(ctx context.Context, s memento.Scope, jobs []memento.BacklogJob) []error {
	start := time.Now()
	results := make([]error, len(jobs))
	var msgs []*backlogMessage
	byID := map[string]*backlogMessage{}
	first := make([]int, 0, len(jobs)) // the first job of each message
	var others []int                   // jobs of other kinds, run after the messages
	for i, j := range jobs {
		switch j.Kind {
		case memento.JobRemember, memento.JobPreferences, memento.JobMessageEvents:
		default:
			if b.handlers[j.Kind] == nil {
				results[i] = errUnknownBacklogKind
			} else {
				others = append(others, i)
			}
			continue
		}
		var p memento.MessageJob
		if err := json.Unmarshal(j.Payload, &p); err != nil || p.Message == "" {
			results[i] = memento.Errorf(memento.EINVALID, "%s job: the payload names no message: %s", j.Kind, j.Payload)
			continue
		}
		m := byID[p.Message]
		if m == nil {
			m = &backlogMessage{job: p, jobs: map[string][]int{}}
			byID[p.Message] = m
			msgs = append(msgs, m)
			first = append(first, i)
		}
		m.jobs[j.Kind] = append(m.jobs[j.Kind], i)
	}
	windows, err := b.read(ctx, s, msgs)
	if err != nil {
		// Nothing ran: every job goes back to the backlog's next batch
		// when ctx ended, or to its own kind otherwise.
		if ctx.Err() != nil {
			return nil
		}
		for i := range results {
			if results[i] == nil {
				results[i] = err
			}
		}
		return results
	}

	unlock := b.remember.Lock(s)
	defer unlock()
	// The messages' memories are formed one after the other over what the
	// ones before left (pipeline.Batch), a few messages at a time; then
	// the few messages' memories, preferences and events are written at
	// once, and share a commit. Each write answers its own jobs.
	batch := b.remember.Pipeline.NewBatch(s)
	for _, w := range windows {
		batch.Know(w.thread, w.after, w.msgs)
	}
	var forming []string
	for _, m := range msgs {
		if m.msg != nil && len(m.jobs[memento.JobRemember]) > 0 {
			forming = append(forming, m.msg.ID)
		}
	}
	batch.Prefetch(ctx, forming)
	ran := len(msgs)
	for lo := 0; lo < len(msgs); lo += backlogChunk {
		if lo > 0 && (ctx.Err() != nil || time.Since(start) > backlogBudget) {
			ran = lo
			break
		}
		part := msgs[lo:min(lo+backlogChunk, len(msgs))]
		lastFlush := time.Now()
		for _, m := range part {
			if m.msg == nil || len(m.jobs[memento.JobRemember]) == 0 {
				continue
			}
			err := b.process(ctx, batch, *m.msg)
			if pipeline.Gone(err) {
				err = nil
			}
			for _, i := range m.jobs[memento.JobRemember] {
				results[i] = err
			}
			if time.Since(lastFlush) > backlogFlushEvery {
				// A slow model: what is formed becomes recallable now.
				b.flush(ctx, s, batch, byID, results)
				lastFlush = time.Now()
			}
		}
		var wg sync.WaitGroup
		wg.Go(func() { b.flush(ctx, s, batch, byID, results) })
		wg.Go(func() { b.learn(ctx, s, part, results) })
		wg.Wait()
	}
	cut := len(jobs)
	if ran < len(first) {
		// The messages not begun, and every job after the first of
		// them, wait for the next batch.
		cut = first[ran]
	}
	b.runOthers(ctx, jobs, others, cut, results)
	return results[:cut]
}

// backlogChunk is how many messages a batch forms memories for before it
// writes what they taught: a longer write would hold the one writer of
// SQLite, and the acknowledgements waiting for it, for longer.
const backlogChunk = 32

// learn does the preference and message-event jobs of msgs, at once, each
// answering its own jobs.
func (b *backlog) learn(ctx context.Context, s memento.Scope, msgs []*backlogMessage, results []error) {
	var learn []prefs.MessageInput
	var learnAt [][]int
	var read []profile.MessageInput
	var readAt [][]int
	for _, m := range msgs {
		if m.msg == nil {
			continue
		}
		if idx := m.jobs[memento.JobPreferences]; len(idx) > 0 {
			learn = append(learn, prefs.MessageInput{Message: *m.msg, Previous: m.previous})
			learnAt = append(learnAt, idx)
		}
		if idx := m.jobs[memento.JobMessageEvents]; len(idx) > 0 && m.msg.Role == memento.RoleUser {
			read = append(read, profile.MessageInput{ID: m.msg.ID, Text: m.msg.Text, At: m.msg.At, Previous: m.previous, Asked: m.asked})
			readAt = append(readAt, idx)
		}
	}
	var wg sync.WaitGroup
	if len(learn) > 0 {
		wg.Go(func() {
			for k, err := range b.prefs.LearnMessages(ctx, s, learn) {
				for _, i := range learnAt[k] {
					results[i] = err
				}
			}
		})
	}
	if len(read) > 0 && b.profile != nil {
		wg.Go(func() {
			for k, err := range b.profile.LearnMessages(ctx, s, read) {
				for _, i := range readAt[k] {
					results[i] = err
				}
			}
		})
	}
	wg.Wait()
}

// backlogFlushEvery is how long a batch forms memories before it writes
// them: with the offline model a whole batch is written at once, while
// with a model server, seconds a message, each message's memories are
// recallable as soon as they are formed.
const backlogFlushEvery = 200 * time.Millisecond

// flush writes the memories batch formed and answers their remember jobs:
// nil, and the observers are told, when they are written; when the write
// fails (a value changed meanwhile), each message runs again on its own,
// over the values as they are.
func (b *backlog) flush(ctx context.Context, s memento.Scope, batch *pipeline.Batch, byID map[string]*backlogMessage, results []error) {
	msgs, err := batch.Flush(ctx)
	for _, msg := range msgs {
		err := err
		if err != nil {
			_, err = b.remember.Pipeline.ProcessMessage(ctx, s, msg)
			if pipeline.Gone(err) {
				err = nil
			}
		}
		for _, i := range byID[msg.ID].jobs[memento.JobRemember] {
			results[i] = err
		}
		if err == nil && b.remembered != nil {
			b.remembered(s, msg)
		}
	}
}

// runOthers runs the batch's jobs of other kinds (indexes into jobs,
// those below cut) with their kinds' handlers, in order, each distinct
// job once: a batch of events asks for one recompute of the profile, and
// several batches' requests that met in one batch are one request.
func (b *backlog) runOthers(ctx context.Context, jobs []memento.BacklogJob, others []int, cut int, results []error) {
	done := map[string]error{}
	for _, i := range others {
		if i >= cut {
			break
		}
		j := jobs[i]
		key := j.Kind + "\x00" + string(j.Payload)
		if err, ok := done[key]; ok {
			results[i] = err
			continue
		}
		err := b.handlers[j.Kind](ctx, j.Kind, j.Payload)
		done[key], results[i] = err, err
	}
}

// threadWindow is what read read of a thread: the store's answer to
// Messages(thread, after, ...).
type threadWindow struct {
	thread string
	after  int64
	msgs   []memento.Message
}

// read reads the batch's messages, each thread's from the first message's
// predecessors to the last message in one call, and sets each message's
// conversation; it returns what it read of each thread, from which the
// batch's runs read their conversations (pipeline.Batch.Know) instead of
// reading the thread again for each message. A message (or thread) that
// no longer exists stays nil.
func (b *backlog) read(ctx context.Context, s memento.Scope, msgs []*backlogMessage) ([]threadWindow, error) {
	// A job that does not say where its message is gets it looked up.
	for _, m := range msgs {
		if m.job.Thread != "" && m.job.Seq > 0 {
			continue
		}
		got, err := b.store.MessageByID(ctx, s, m.job.Message)
		if memento.ErrorCode(err) == memento.ENOTFOUND {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("read message %s: %w", m.job.Message, err)
		}
		m.job.Thread, m.job.Seq = got.Thread, got.Seq
	}
	var windows []threadWindow
	byThread := map[string][]*backlogMessage{}
	var threads []string
	for _, m := range msgs {
		if m.job.Thread == "" || m.job.Seq <= 0 {
			continue
		}
		if _, ok := byThread[m.job.Thread]; !ok {
			threads = append(threads, m.job.Thread)
		}
		byThread[m.job.Thread] = append(byThread[m.job.Thread], m)
	}
	for _, thread := range threads {
		ms := byThread[thread]
		lo, hi := ms[0].job.Seq, ms[0].job.Seq
		for _, m := range ms {
			lo, hi = min(lo, m.job.Seq), max(hi, m.job.Seq)
		}
		after := max(0, lo-1-previousLookback)
		stored, err := b.store.Messages(ctx, s, thread, after, int(hi-after))
		if memento.ErrorCode(err) == memento.ENOTFOUND {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("read thread %s: %w", thread, err)
		}
		windows = append(windows, threadWindow{thread: thread, after: after, msgs: stored})
		for _, m := range ms {
			i, ok := slices.BinarySearchFunc(stored, m.job.Seq, func(x memento.Message, seq int64) int { return int(x.Seq - seq) })
			if !ok || stored[i].ID != m.job.Message {
				continue
			}
			m.msg = &stored[i]
			m.previous, m.asked = conversation(stored[:i], m.msg.Seq)
		}
	}
	return windows, nil
}

// conversation returns, from the messages before one at seq in its thread
// (oldest first), the user's previous message within previousLookback and
// the agent's turn just before it, "" when there is none.
func conversation(before []memento.Message, seq int64) (previous, asked string) {
	for i := len(before) - 1; i >= 0; i-- {
		m := before[i]
		if m.Seq < seq-previousLookback {
			break
		}
		switch {
		case m.Role == memento.RoleUser:
			return m.Text, asked
		case m.Role == memento.RoleAssistant && m.Seq == seq-1:
			asked = m.Text
		}
	}
	return "", asked
}

// OnRemembered registers fn to be told of every message whose memories a
// batch of this process wrote, right after the write: the moment they
// became recallable. Call it before StartWorkers; `memento bench` times
// the lag from acknowledgement to recall with it.
func (e *Engine) OnRemembered(fn func(memento.Scope, memento.Message)) {
	e.workersMu.Lock()
	defer e.workersMu.Unlock()
	e.remembered = append(e.remembered, fn)
}

// handleBacklog registers the handler of the users' backlogs, which runs
// the message jobs that MessageJobs puts there.
func (e *Engine) handleBacklog(ctx context.Context) error {
	p, err := e.Pipeline(ctx)
	if err != nil {
		return err
	}
	svc, err := e.Prefs(ctx)
	if err != nil {
		return err
	}
	pw, err := e.profileWorker(ctx)
	if err != nil {
		return err
	}
	lag := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "memento_memory_lag_seconds",
		Help:    "Time from a message being stored to its memories being written by a batch of its user's backlog.",
		Buckets: []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300},
	})
	if err := e.Registry.Register(lag); err != nil {
		e.Logger.Warn("memory lag metric", "err", err)
	}
	if e.remember == nil {
		e.remember = &pipeline.Worker{Pipeline: p, Ordered: e.Store, Logger: e.Logger}
	}
	observers := slices.Clone(e.remembered)
	b := &backlog{
		store: e.Store, prefs: svc, profile: pw, log: e.Logger, remember: e.remember, handlers: e.handlers,
		computes: e.Config.LLM.Provider == "offline",
		remembered: func(s memento.Scope, m memento.Message) {
			if !m.CreatedAt.IsZero() {
				lag.Observe(time.Since(m.CreatedAt).Seconds())
			}
			for _, fn := range observers {
				fn(s, m)
			}
		},
	}
	e.Store.HandleBacklog(b.run, memento.BacklogOptions{Timeout: pipeline.JobTimeout})
	return nil
}

// recordingQueue is the engine's store as the components register their
// job handlers with it: it registers each with the store and keeps it, so
// that a batch of a user's backlog can run jobs of any kind.
type recordingQueue struct {
	Store
	handlers map[string]memento.JobHandler
}

// Handle registers h with the store and keeps it.
func (q recordingQueue) Handle(kind string, h memento.JobHandler, opts memento.JobOptions) {
	q.handlers[kind] = h
	q.Store.Handle(kind, h, opts)
}
