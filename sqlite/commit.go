package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/internal/jobctx"
)

// Group commit.
//
// With synchronous=FULL every COMMIT writes its pages to the write-ahead
// log and waits for an fsync, half a millisecond to a millisecond here,
// while the statements of a pipeline run's write take 0.15ms. Writes that
// arrive while the writer is busy therefore queue up for the committer: one goroutine that takes every request
// waiting, runs each inside its own SAVEPOINT of one transaction, commits
// once and then answers every caller. A request that fails is rolled back
// to its savepoint and its error goes to its caller alone; the others are
// committed. Nobody hears "done" before their rows are durable (the
// COMMIT returned and, for a batch somebody waits on, the log syncer's
// fsync after it ended: logsync.go), so the semantics of a solo
// transaction are kept: a lone writer pays two handovers between
// goroutines and two tiny statements more, and concurrent writers share
// the fsync.

// Limits of one group commit. A batch stops taking requests once it holds
// maxBatch of them or its statements have run for maxBatchWork: every
// caller waits for the whole batch, so a batch of slow requests must not
// make a quick one (an ingest acknowledgement) wait for long.
const (
	maxBatch     = 256
	maxBatchWork = 2 * time.Millisecond
)

// The background's share of the writer.
//
// The committer begins a batch with a write somebody waits on (an
// append's, then a chat turn's) before any job's write. Under requests
// that keep those queues from emptying, that order alone let the jobs
// wait for as long as the requests came: in 20 s of `memento torture load
// --clients 64`, the writer saved 10,590 turns and 7,855 appends and ran
// 19 memory writes, so memory formation stopped while the conversations
// went on, and the lag grew until the ingest bound refused appends
// (turns, which it does not refuse, went on adding to it). The committer
// therefore keeps account of its time by the kind of each write (a
// background write, or one somebody waits on), decayed by half every
// shareHalfLife, and while both kinds wait and the background writes have
// had less than backgroundShare of that time, the next batch takes the
// background writes first. Where the requests leave the writer time
// enough (a steady 500 appends a second: the jobs take most of it), the
// order is as before; where they do not, they keep three quarters of it.
const (
	backgroundShare = 0.25
	shareHalfLife   = time.Second
)

// writerShare is the committer's account of the writer's recent time:
// seconds spent on background writes and on writes somebody waits on
// (foreground), each decayed by half every shareHalfLife. Only the
// committer's goroutine uses it.
type writerShare struct {
	fg, bg float64
	at     time.Time
}

// add counts a write of d, background or not, that ended at now.
func (s *writerShare) add(background bool, d time.Duration, now time.Time) {
	s.decay(now)
	if background {
		s.bg += d.Seconds()
	} else {
		s.fg += d.Seconds()
	}
}

// decay brings the account to now.
func (s *writerShare) decay(now time.Time) {
	if !s.at.IsZero() && now.After(s.at) {
		f := math.Exp2(-now.Sub(s.at).Seconds() / shareHalfLife.Seconds())
		s.fg *= f
		s.bg *= f
	}
	s.at = now
}

// owed reports whether background writes had less than backgroundShare
// of the writer's recent time.
func (s *writerShare) owed() bool {
	return s.bg < backgroundShare*(s.fg+s.bg)
}

// errClosed answers writes sent after Close.
var errClosed = memento.Errorf(memento.EUNAVAILABLE, "the store is closed")

// Request states: a caller whose context ends may withdraw its request
// only before the committer started it.
const (
	reqQueued int32 = iota
	reqStarted
	reqWithdrawn
)

// commitRequest is one write waiting for the committer.
type commitRequest struct {
	ctx   context.Context
	fn    func(ctx context.Context, tx *sql.Tx) error
	state atomic.Int32
	done  chan error // buffered: the committer never blocks on a caller
	// job marks the write of a background job, which commits without
	// waiting for the disk (durability.go). A batch that begins with a
	// write waited on takes no job's write; a batch of jobs' writes takes
	// the writes waited on that come while it runs when the log is synced
	// after the commit (run).
	job bool
	// syncAfter, set before the answer, is the number of the commit
	// that holds the write when its caller must wait for a sync of the
	// log after it (logsync.go); 0 when the commit waited itself.
	syncAfter int64
	// times, when the caller asked for them (memento.WithWriteTimes),
	// sent, when the caller sent the request, started, when the
	// committer began it, and behind, what the writer ran in between,
	// are for the caller's record of where the write's time went.
	times   *memento.WriteTimes
	sent    time.Time
	started time.Time
	split   bool // fill behind (memento.WithWaitSplit)
	behind  [3]memento.WaitPart
	// prio is the queue the request came by (prioUrgent, ...).
	prio int
}

// committer runs the group commits of one DB on its writer pool.
type committer struct {
	// pin takes the writer's connection for a batch's transaction, at
	// the synchronous level of a batch that is waited on (durable) or
	// not (durability.go).
	pin func(ctx context.Context, durable bool) (*pinnedWriter, error)
	// prepare runs before each batch's transaction (DB.boundWAL).
	prepare func(ctx context.Context)
	// logSync answers the requests of a batch that is waited on once the
	// log is on disk, when the batch committed without waiting for it
	// (logsync.go); nil when every such batch waits in its COMMIT.
	logSync *logSyncer
	// held is a request taken from a queue that did not fit the batch
	// running then (a job's write while an acknowledgement's batch ran,
	// or after a write waited on joined a batch of jobs' writes): the
	// next batch starts with it.
	held *commitRequest
	// maxBatch and maxWork are the limits of a batch (the constants;
	// tests widen them).
	maxBatch int
	maxWork  time.Duration
	// afterBatch, when set (by a test, before the first write), runs on
	// the committer's goroutine after each batch, the writer free: a test
	// pauses the writes of one DB there while another DB on the same
	// file writes, as another process would.
	afterBatch func()

	mu     sync.RWMutex // guards closed and sends on the queues
	closed bool
	// reqs queues the requests; urgent those of a caller that waits on
	// the request's path (an acknowledgement), which the committer takes
	// first, so that an append waits for the batch that is running, not
	// for every background write queued before it.
	// turns those of a chat turn's save, taken after the urgent ones and
	// before the rest: a turn's caller waits too, but an append's
	// acknowledgement is the promise that must not wait behind turns.
	reqs, turns, urgent chan *commitRequest
	// inReqs, inTurns and inUrgent are the queues as the committer's
	// goroutine reads them: nil once closed and drained.
	inReqs, inTurns, inUrgent chan *commitRequest

	stopped chan struct{}

	// taken counts the requests the committer took from the queue;
	// batches and requests count the commits and the requests they
	// committed; busy and committing are the nanoseconds the writer spent
	// on batches (from BEGIN to the answers) and on their COMMITs. For
	// tests and diagnostics (DB.WriterStats).
	// unsynced counts the batches that committed without waiting for the
	// disk.
	taken, batches, requests, unsynced atomic.Int64
	busy, committing                   atomic.Int64
	// pages counts the pages the commits appended to the log; nil for
	// a database without one (in memory).
	pages *logPages
	// uses is the writer's time by write (writeuse.go).
	uses writeUses
	// share is the account of the writer's time between background
	// writes and writes waited on (writerShare); favour says that the
	// batch running takes background writes first because of it, and
	// favouredBatches counts those batches.
	share           writerShare
	favour          bool
	favouredBatches atomic.Int64
	// spans are the writer's latest stretches of work, for the record
	// of what a write waited behind (timeline.go); only the committer's
	// goroutine uses them.
	spans timeline
}

func newCommitter(pin func(ctx context.Context, durable bool) (*pinnedWriter, error), prepare func(ctx context.Context), logSync *logSyncer, pages *logPages) *committer {
	c := &committer{pin: pin, prepare: prepare, logSync: logSync, pages: pages, maxBatch: maxBatch, maxWork: maxBatchWork,
		reqs: make(chan *commitRequest, maxBatch), turns: make(chan *commitRequest, maxBatch), urgent: make(chan *commitRequest, maxBatch),
		stopped: make(chan struct{})}
	c.inReqs, c.inTurns, c.inUrgent = c.reqs, c.turns, c.urgent
	go c.loop()
	return c
}

// close lets the committer finish every request sent so far, then stops
// it. Later writes fail with EUNAVAILABLE. The wal-index it reads stays
// open until closeFiles.
func (c *committer) close() {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		close(c.reqs)
		close(c.urgent)
		close(c.turns)
	}
	c.mu.Unlock()
	<-c.stopped
}

// waiting returns how many requests wait for a batch.
func (c *committer) waiting() int { return len(c.reqs) + len(c.urgent) + len(c.turns) }

// closeFiles closes the wal-index the committer reads, once the
// database's last connection has closed (see walCheckpointer.closeFiles).
func (c *committer) closeFiles() { c.pages.close() }

// groupTx runs fn in the next group commit and returns once that
// transaction is committed (fn's writes are durable) or fn's writes were
// rolled back. fn receives a context that is not cancelled: once a batch
// runs, a cancelled statement would interrupt the whole transaction. If
// ctx ends while the request still waits for its batch, it is withdrawn
// and groupTx returns ctx's error; a request already running is waited
// for, so an error return always means nothing was written. fn may run
// more than once (after a failure that ends the whole transaction, the
// other requests are retried in a new one), so it must reset what it
// reports at its start. Writes that need the writer for long (Bulk,
// migrations) use writeTx instead.
func (db *DB) groupTx(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return db.commitTx(ctx, prioBackground, fn)
}

// groupSeq hands writes to the group commit at once, in their order, as
// background requests (a job's without waiting for the disk), and then
// waits for every answer: the writes run in that order, each a request of
// its own, so a batch takes as many as its bounds allow, the writes
// somebody waits on still come first, and the caller waits for the queue
// once rather than once a write. It returns each write's error; a write
// not sent (ctx ended, the store closed) has that error.
func (db *DB) groupSeq(ctx context.Context, writes []func(ctx context.Context, tx *sql.Tx) error) []error {
	errs := make([]error, len(writes))
	reqs := make([]*commitRequest, len(writes))
	lazy := db.syncLevels.switches() && jobctx.Is(ctx)
	foreground(ctx)
	for i, fn := range writes {
		r := &commitRequest{ctx: ctx, fn: fn, done: make(chan error, 1), job: lazy, prio: prioBackground}
		if errs[i] = ctx.Err(); errs[i] == nil {
			errs[i] = db.commits.send(ctx, prioBackground, r)
		}
		if errs[i] == nil {
			reqs[i] = r
		}
	}
	for i, r := range reqs {
		if r == nil {
			continue
		}
		answered, err := db.commits.await(ctx, r)
		if answered {
			err = db.synced(r, err)
		}
		errs[i] = err
	}
	return errs
}

// urgentTx is groupTx for a write whose caller is waiting on the request's
// path (an append's acknowledgement): the committer takes it before the
// background writes queued ahead of it, into the next batch.
func (db *DB) urgentTx(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return db.commitTx(ctx, prioUrgent, fn)
}

// turnTx is groupTx for the save of a chat turn: after the urgent writes,
// before the others.
func (db *DB) turnTx(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return db.commitTx(ctx, prioTurn, fn)
}

// Priorities of the committer's queues.
const (
	prioBackground = iota
	prioTurn
	prioUrgent
)

// commitTx is groupTx, on the queue of the priority prio.
func (db *DB) commitTx(ctx context.Context, prio int, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return db.commitAt(ctx, prio, jobctx.Is(ctx), fn)
}

// lazyTx is urgentTx for a write that nobody waits on the disk for, like
// a job's: it commits without waiting for the disk (durability.go). The
// intake's mover makes its writes durable itself before it forgets them.
func (db *DB) lazyTx(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return db.commitAt(ctx, prioUrgent, true, fn)
}

// commitAt is commitTx for a write that waits for the disk unless lazy.
func (db *DB) commitAt(ctx context.Context, prio int, lazy bool, fn func(ctx context.Context, tx *sql.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	foreground(ctx)
	r := &commitRequest{ctx: ctx, fn: fn, done: make(chan error, 1), job: db.syncLevels.switches() && lazy,
		times: memento.WriteTimesFrom(ctx), prio: prio}
	if r.times != nil {
		r.sent, r.split = time.Now(), memento.WaitSplitFrom(ctx)
	}
	answered, err := db.commits.submit(ctx, prio, r)
	if !answered {
		return err
	}
	if r.times == nil {
		return db.synced(r, err)
	}
	at := time.Now()
	err = db.synced(r, err)
	recordWriteTimes(r, at, time.Now())
	return err
}

// submit queues r at the priority prio and waits for its answer.
// answered is false when r never ran: the committer was closed, or ctx
// ended while r still waited (it is withdrawn).
func (c *committer) submit(ctx context.Context, prio int, r *commitRequest) (answered bool, err error) {
	if err := c.send(ctx, prio, r); err != nil {
		return false, err
	}
	return c.await(ctx, r)
}

// send queues r on the queue of priority prio; requests sent one after
// the other to one queue run in that order.
func (c *committer) send(ctx context.Context, prio int, r *commitRequest) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return errClosed
	}
	queue := c.reqs
	switch prio {
	case prioUrgent:
		queue = c.urgent
	case prioTurn:
		queue = c.turns
	}
	select {
	case queue <- r:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// await waits for the answer to r, which send queued. If ctx ends while r
// still waits for its batch, r is withdrawn (answered false).
func (c *committer) await(ctx context.Context, r *commitRequest) (answered bool, err error) {
	select {
	case err = <-r.done:
	case <-ctx.Done():
		if r.state.CompareAndSwap(reqQueued, reqWithdrawn) {
			return false, ctx.Err()
		}
		err = <-r.done // running: its batch ends soon
	}
	return true, err
}

// isClosed reports whether close was called.
func (c *committer) isClosed() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.closed
}

// post queues fn as a background request, once the queue has room, and
// returns without waiting for it to run: for a write whose outcome
// nobody waits on (the intake's record of its progress, its deletions of
// what reached the store). It reports whether fn was queued (not after
// close).
func (c *committer) post(fn func(ctx context.Context, tx *sql.Tx) error) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return false
	}
	c.reqs <- &commitRequest{ctx: context.Background(), fn: fn, done: make(chan error, 1)}
	return true
}

// recordWriteTimes fills r's times from the moments it was sent to the
// committer, started (zero if it never was), answered and synced, and
// what the writer ran while it waited.
func recordWriteTimes(r *commitRequest, answered, synced time.Time) {
	started := r.started
	if started.IsZero() {
		started = answered // never begun: it waited throughout
	}
	*r.times = memento.WriteTimes{Waited: started.Sub(r.sent), Wrote: answered.Sub(started), Synced: synced.Sub(answered), Behind: r.behind}
}

// synced returns a request's answer err once its write is on disk: at
// once when its commit waited for the disk, else after a sync of the log
// (logsync.go), which a cancelled caller waits for too, since its write
// is committed.
func (db *DB) synced(r *commitRequest, err error) error {
	if err != nil || r.syncAfter == 0 {
		return err
	}
	return db.logSync.wait(r.syncAfter)
}

// loop takes batches of requests until close.
func (c *committer) loop() {
	defer close(c.stopped)
	for {
		first := c.receive(true)
		if first == nil {
			return
		}
		start := time.Now()
		c.run(first)
		c.busy.Add(int64(time.Since(start)))
		if c.afterBatch != nil {
			c.afterBatch()
		}
	}
}

// receive takes a waiting request, an urgent one first, then a turn's,
// then any other; with wait it waits for one. It returns nil when none
// waits (without wait) or every queue is closed and drained. With wait it
// takes the first request of a batch, and when the background is owed
// its share of the writer (writerShare) that batch takes background
// writes first.
func (c *committer) receive(wait bool) *commitRequest {
	if wait {
		// A new batch: it favours the background writes if they are
		// owed their share while writes waited on wait too.
		c.favour = false
		held := c.held != nil && c.held.prio != prioBackground
		if len(c.inReqs) > 0 && (held || len(c.inUrgent) > 0 || len(c.inTurns) > 0) {
			c.share.decay(time.Now())
			if c.share.owed() {
				c.favour = true
				c.favouredBatches.Add(1)
			}
		}
	}
	// A request held from the last batch goes first, but for a
	// background write that the batch favours: the held request then
	// joins the batch as its second (the first call without wait).
	if r := c.held; r != nil && !(wait && c.favour && r.prio != prioBackground) {
		c.held = nil
		return r
	}
	order := [...]*chan *commitRequest{&c.inUrgent, &c.inTurns, &c.inReqs}
	if c.favour {
		order = [...]*chan *commitRequest{&c.inReqs, &c.inUrgent, &c.inTurns}
	}
	for c.inUrgent != nil || c.inTurns != nil || c.inReqs != nil {
		for _, q := range order {
			if *q == nil {
				continue
			}
			select {
			case r, ok := <-*q:
				if !ok {
					*q = nil
					continue
				}
				c.taken.Add(1)
				return r
			default:
			}
		}
		if !wait || c.inUrgent == nil && c.inTurns == nil && c.inReqs == nil {
			return nil
		}
		var r *commitRequest
		var ok bool
		select {
		case r, ok = <-c.inUrgent:
			if !ok {
				c.inUrgent = nil
				continue
			}
		case r, ok = <-c.inTurns:
			if !ok {
				c.inTurns = nil
				continue
			}
		case r, ok = <-c.inReqs:
			if !ok {
				c.inReqs = nil
				continue
			}
		}
		c.taken.Add(1)
		return r
	}
	return nil
}

// run commits a batch that starts with first and takes further requests as
// they come, within the batch's limits.
func (c *committer) run(first *commitRequest) {
	tx, pinned, ok := c.begin([]*commitRequest{first}, !first.job)
	if !ok {
		return
	}
	defer func() {
		if pinned != nil {
			pinned.release()
		}
	}()
	start := time.Now()
	var ran []*commitRequest // run without error, not yet answered
	// failed are the requests that failed, with their errors, answered
	// once the batch has committed: a failure can be due to a request
	// before it in the batch (a turn whose thread another turn of the
	// batch moved on), and a caller who reads the store again to try
	// again must find that request's writes there.
	var failed []failedRequest
	defer func() {
		for _, f := range failed {
			f.r.done <- f.err
		}
	}()
	// waited says that a write somebody waits on joined this batch of
	// jobs' writes.
	waited := false
	// urgent says that an urgent write somebody waits on (an
	// acknowledgement; not the intake's mover, urgent but lazy) is in the
	// batch: from then on it takes only urgent writes, so that the
	// acknowledgement waits for no chat turn's save nor any other write
	// queued behind it (a turn is a millisecond of the writer, and the
	// batch's commit writes its pages too); those begin the next batch.
	urgent := false
	for r, n := first, 1; r != nil; r, n = c.next(n, start), n+1 {
		if urgent && r.prio != prioUrgent {
			c.held = r
			break
		}
		urgent = urgent || r.prio == prioUrgent && !r.job
		switch {
		case r.job && !first.job:
			// A write waited on does not wait for jobs' writes: a
			// job's write begins the next batch.
			c.held = r
		case !r.job && first.job && c.logSync == nil:
			// Nor do jobs' writes wait for the disk with it, when
			// its own commit would.
			c.held = r
		case !r.job && first.job:
			// With the log synced after the commit, a batch of jobs'
			// writes and one waited on differ only in who waits for
			// the sync: the write waited on joins the batch running
			// (its caller waits for the sync, commit), and the batch
			// takes no more jobs' writes after it.
			waited = true
		case r.job && waited:
			c.held = r
		}
		if c.held == r {
			break
		}
		if !r.start() {
			continue
		}
		if r.split {
			r.behind = c.spans.behind(r.sent, r.started)
		}
		switch err, fatal := c.runRequest(tx, r); {
		case fatal:
			// The transaction is gone with everything in it: r gets its
			// error, and the requests that ran before it are retried in
			// a new transaction.
			_ = tx.Rollback()
			pinned.release()
			pinned = nil
			r.done <- err
			c.retry(ran, !first.job)
			return
		case err != nil:
			failed = append(failed, failedRequest{r, err})
		default:
			ran = append(ran, r)
		}
	}
	c.commit(tx, pinned, ran)
}

// failedRequest is a request of a batch that failed, with its error.
type failedRequest struct {
	r   *commitRequest
	err error
}

// next returns a waiting request for a batch that holds n requests and
// began at start, or nil when none waits or the batch is full.
func (c *committer) next(n int, start time.Time) *commitRequest {
	if n >= c.maxBatch || time.Since(start) >= c.maxWork {
		return nil
	}
	return c.receive(false)
}

// retry runs requests again in one transaction of their own, without
// taking new ones, until each has either failed or committed.
func (c *committer) retry(pending []*commitRequest, durable bool) {
	for len(pending) > 0 {
		tx, pinned, ok := c.begin(pending, durable)
		if !ok {
			return
		}
		var ran []*commitRequest
		var failed []failedRequest
		dead := false
		for i, r := range pending {
			err, fatal := c.runRequest(tx, r)
			if fatal {
				_ = tx.Rollback()
				pinned.release()
				r.done <- err
				pending = append(ran, pending[i+1:]...)
				dead = true
				break
			}
			if err != nil {
				failed = append(failed, failedRequest{r, err})
				continue
			}
			ran = append(ran, r)
		}
		if !dead {
			c.commit(tx, pinned, ran)
			pinned.release()
		}
		// Answered after the commit, as in run; after a fatal error,
		// what they failed on is gone too.
		for _, f := range failed {
			f.r.done <- f.err
		}
		if !dead {
			return
		}
	}
}

// begin starts a batch's transaction on the pinned writer, at the
// synchronous level of a batch that is waited on (durable) or not; on
// failure it answers the batch's requests with the error. Release the
// pinned writer once the transaction has ended.
func (c *committer) begin(batch []*commitRequest, durable bool) (*sql.Tx, *pinnedWriter, bool) {
	// The transaction belongs to the committer, not to a caller: a
	// caller's cancellation must not roll back the others' writes.
	ctx := context.Background()
	start := time.Now()
	if c.prepare != nil {
		c.prepare(ctx)
		at := time.Now()
		c.spans.add(spanCheckpoint, start, at)
		start = at
	}
	pinned, err := c.pin(ctx, durable)
	var tx *sql.Tx
	if err == nil {
		tx, err = pinned.conn.BeginTx(ctx, nil)
		if err != nil {
			pinned.release()
		}
	}
	c.spans.add(spanConnection, start, time.Now())
	if err != nil {
		err = fmt.Errorf("begin: %w", err)
		for _, r := range batch {
			if r.start() {
				r.done <- err
			}
		}
		return nil, nil, false
	}
	return tx, pinned, true
}

// commit commits the batch and answers the requests that ran in it.
func (c *committer) commit(tx *sql.Tx, pinned *pinnedWriter, ran []*commitRequest) {
	start := time.Now()
	before, marked := c.pages.mark()
	err := tx.Commit()
	end := time.Now()
	c.committing.Add(int64(end.Sub(start)))
	c.spans.add(spanCommit, start, end)
	if err != nil {
		err = fmt.Errorf("commit: %w", err)
	} else {
		c.pages.count(before, marked)
	}
	c.batches.Add(1)
	c.requests.Add(int64(len(ran)))
	n := int64(0) // the commit's number for the log syncer, when waited on
	if err == nil && c.logSync != nil && !(pinned.durable && !pinned.deferred) {
		// Committed, not yet on disk: each caller of a write waited
		// on waits for a sync of the log after this commit
		// (logsync.go), while the writer goes on; the jobs' writes of
		// the batch do not.
		for _, r := range ran {
			if !r.job {
				if n == 0 {
					n = c.logSync.commit()
				}
				r.syncAfter = n
			}
		}
	}
	if !pinned.durable && n == 0 {
		c.unsynced.Add(1) // nobody waits for the disk
	}
	for _, r := range ran {
		r.done <- err
	}
}

// WriterStats says how much the one writer has done since Open: its
// group commits, the writes they committed, and the time it spent on
// batches and, of that, on their COMMITs, and the syncs of the log that
// made the commits waited on durable after they returned. The writer's
// share of a span of wall time, from two readings, says whether
// it is what limits the writes.
func (db *DB) WriterStats() memento.WriterStats {
	c := db.commits
	st := memento.WriterStats{
		Commits:         c.batches.Load(),
		Writes:          c.requests.Load(),
		BusySeconds:     time.Duration(c.busy.Load()).Seconds(),
		SyncSeconds:     time.Duration(c.committing.Load()).Seconds(),
		UnsyncedCommits: c.unsynced.Load(),
		LogPages:        c.pages.total(),
		ByWrite:         c.uses.read(),
		FavouredBatches: c.favouredBatches.Load(),
	}
	if l := c.logSync; l != nil {
		st.LogSyncs, st.LogSyncSeconds = l.syncs.Load(), time.Duration(l.syncing.Load()).Seconds()
		st.LogSyncTimes = l.times.Read()
	}
	if in := db.intake; in != nil && in.logSync != nil {
		l := in.logSync
		st.IntakeLogSyncs, st.IntakeLogSyncSeconds = l.syncs.Load(), time.Duration(l.syncing.Load()).Seconds()
		st.IntakeLogSyncTimes = l.times.Read()
	}
	if in := db.intake; in != nil && in.commits != nil {
		st.IntakeLogPages = in.commits.pages.total()
	}
	if k := db.ckpt; k != nil {
		st.Checkpoints, st.CheckpointSeconds = k.bounds.Load(), time.Duration(k.bounding.Load()).Seconds()
		st.DatabaseWritebacks, st.DatabaseWritebackSeconds = k.writebacks.Load(), time.Duration(k.writingBack.Load()).Seconds()
	}
	return st
}

// start marks the request as running, unless its caller withdrew it or
// its context ended before it ran (then the caller hears that). A request
// started before (being retried) stays started.
func (r *commitRequest) start() bool {
	if r.state.Load() == reqStarted {
		return true
	}
	if err := r.ctx.Err(); err != nil {
		if r.state.CompareAndSwap(reqQueued, reqWithdrawn) {
			r.done <- err
		}
		return false
	}
	if r.times != nil {
		r.started = time.Now()
	}
	return r.state.CompareAndSwap(reqQueued, reqStarted)
}

// runRequest runs one request inside a savepoint of tx. An error of the
// request rolls back to the savepoint and is returned; fatal reports that
// the savepoint could not be rolled back or released, which means SQLite
// ended the whole transaction (an I/O error, a full disk): nothing of the
// batch is kept.
func runRequest(tx *sql.Tx, r *commitRequest) (err error, fatal bool) {
	ctx := context.WithoutCancel(r.ctx)
	if _, err := tx.ExecContext(ctx, `SAVEPOINT request`); err != nil {
		return fmt.Errorf("savepoint: %w", err), true
	}
	if err := callRequest(ctx, tx, r.fn); err != nil {
		if _, rbErr := tx.ExecContext(ctx, `ROLLBACK TO request`); rbErr != nil {
			return errors.Join(err, fmt.Errorf("roll back to savepoint: %w", rbErr)), true
		}
		if _, relErr := tx.ExecContext(ctx, `RELEASE request`); relErr != nil {
			return errors.Join(err, fmt.Errorf("release savepoint: %w", relErr)), true
		}
		return err, false
	}
	if _, err := tx.ExecContext(ctx, `RELEASE request`); err != nil {
		return fmt.Errorf("release savepoint: %w", err), true
	}
	return nil, false
}

// runRequest runs r as the function runRequest does, and counts the
// time it held the writer under the name of its write (writeuse.go).
func (c *committer) runRequest(tx *sql.Tx, r *commitRequest) (err error, fatal bool) {
	start := time.Now()
	err, fatal = runRequest(tx, r)
	end := time.Now()
	name := writeName(r.fn)
	c.spans.add(name, start, end)
	c.uses.add(name, end.Sub(start))
	c.share.add(r.prio == prioBackground, end.Sub(start), end)
	return err, fatal
}

// callRequest calls fn, turning a panic into an error so that one bad
// request cannot take the committer, and every writer, down with it.
func callRequest(ctx context.Context, tx *sql.Tx, fn func(ctx context.Context, tx *sql.Tx) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("write panicked: %v", p)
		}
	}()
	return fn(ctx, tx)
}

// Prepared writes.
//
// Parsing a statement costs more than running it in most of the small
// writes the committer runs, and the committer runs them one after the
// other; the statements of the hot writes are therefore prepared once, at
// Open, on the writer's one connection, and the transaction bodies run
// them through a stmtTx.

// execQuerier is what the transaction helpers need of a write
// transaction: a *sql.Tx, or a stmtTx.
type execQuerier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// stmtTx is a write transaction that runs the statements the writer has
// prepared (by their text) as prepared statements, and parses any other.
type stmtTx struct {
	tx    *sql.Tx
	stmts *stmtCache
}

// prepared wraps tx so the prepared statements serve it.
func (db *DB) prepared(tx *sql.Tx) stmtTx { return stmtTx{tx: tx, stmts: db.writeStmts} }

// ExecContext runs query in the transaction.
func (t stmtTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := t.stmts.get(query); st != nil {
		return t.tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return t.tx.ExecContext(ctx, query, args...)
}

// QueryRowContext runs query in the transaction.
func (t stmtTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := t.stmts.get(query); st != nil {
		return t.tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return t.tx.QueryRowContext(ctx, query, args...)
}

// QueryContext runs query in the transaction.
func (t stmtTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := t.stmts.get(query); st != nil {
		return t.tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return t.tx.QueryContext(ctx, query, args...)
}

// stmtCache holds the writer's prepared statements: those of
// preparedWrites, prepared at Open, and those the writes run often,
// learned as they run. A statement cannot be prepared for later use while
// a transaction holds the writer's one connection, so a statement run
// unprepared is only noted; once it has run stmtLearnAfter times, the
// committer prepares it before its next transaction (prepareWanted).
// Parsing the statements of the preference, event and profile writes took
// a tenth of the writer's time before.
type stmtCache struct {
	write  *sql.DB
	mu     sync.RWMutex
	stmts  map[string]*sql.Stmt
	wanted map[string]int // statements run unprepared, with their count
	failed map[string]bool
}

// Bounds of the learned statements: stmtCacheMax prepared ones at most
// (statements built with a variable number of parameters must not fill
// memory), and what has run stmtLearnAfter times is prepared.
const (
	stmtCacheMax   = 256
	stmtLearnAfter = 3
)

func newStmtCache(write *sql.DB) *stmtCache {
	return &stmtCache{write: write, stmts: map[string]*sql.Stmt{}, wanted: map[string]int{}, failed: map[string]bool{}}
}

// get returns the prepared statement of query, or nil (noting the query)
// when there is none.
func (c *stmtCache) get(query string) *sql.Stmt {
	if c == nil {
		return nil
	}
	c.mu.RLock()
	st := c.stmts[query]
	c.mu.RUnlock()
	if st != nil {
		return st
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.stmts) >= stmtCacheMax || c.failed[query] {
		return nil
	}
	if len(c.wanted) >= stmtCacheMax {
		// One-off statements fill the notes: start them over.
		clear(c.wanted)
	}
	c.wanted[query]++
	return nil
}

// prepare prepares query on the writer and keeps it. It must not run while
// a transaction holds the writer's connection: it would wait for it.
func (c *stmtCache) prepare(ctx context.Context, query string) error {
	st, err := c.write.PrepareContext(ctx, query)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.stmts[query]; old != nil {
		old.Close()
	}
	c.stmts[query] = st
	return nil
}

// prepareWanted prepares the statements run stmtLearnAfter times
// unprepared; the committer calls it before a transaction, while the
// writer's connection is free. A statement that does not prepare is not
// tried again (it runs unprepared, and fails there as it would anyway).
func (c *stmtCache) prepareWanted(ctx context.Context) {
	if c == nil {
		return
	}
	var due []string
	c.mu.Lock()
	for q, n := range c.wanted {
		if n >= stmtLearnAfter && len(c.stmts)+len(due) < stmtCacheMax {
			due = append(due, q)
			delete(c.wanted, q)
		}
	}
	c.mu.Unlock()
	for _, q := range due {
		if err := c.prepare(ctx, q); err != nil {
			c.mu.Lock()
			c.failed[q] = true
			c.mu.Unlock()
		}
	}
}

// close closes every prepared statement.
func (c *stmtCache) close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.stmts {
		st.Close()
	}
	clear(c.stmts)
}

// size returns how many statements are prepared.
func (c *stmtCache) size() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.stmts)
}

// prepareWrites prepares the statements of preparedWrites on the writer.
// The writer pool has one connection, so each is parsed once; should the
// connection be replaced, database/sql prepares them again on the new one.
func (db *DB) prepareWrites(ctx context.Context) error {
	db.writeStmts = newStmtCache(db.write)
	for _, q := range preparedWrites {
		if err := db.writeStmts.prepare(ctx, q); err != nil {
			return fmt.Errorf("prepare %.40q...: %w", q, err)
		}
	}
	return nil
}

// preparedWrites are the statements of AppendMessages, WriteMemories and
// the users' backlogs.
var preparedWrites = []string{
	sqlMessageOfRun, sqlRunCount, sqlCurrentValue, sqlCloseMemory, sqlInsertMemory, sqlInsertMemoryVector, sqlIndexMemories,
	sqlInsertRun, sqlUpsertMessageVector, sqlDeleteCheckpoint,
	sqlInsertThread, sqlThreadSeq, sqlMessageByID, sqlInsertMessage, sqlUpdateThreadSeq,
	sqlInsertBacklog, sqlBacklogUser, sqlInsertBacklogUser, sqlBacklogJobWaiting, sqlSetBacklogJob, sqlClaimBacklog, sqlBacklogLeft, sqlGiveUpBacklog,
}
