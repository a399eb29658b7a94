package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivertype"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/internal/jobctx"
)

// jobArgs is the one River args type of every job kind: the kind lives in
// the value (River asks Kind() of each inserted value), so one Go type
// serves every memento.JobHandler. Its JSON, stored in river_job.args, is
// {"tenant": ..., "user": ..., "payload": ...}: the scope lets DeleteUser
// find a user's jobs whatever their payload looks like.
type jobArgs struct {
	kind    string
	Tenant  string          `json:"tenant,omitempty"`
	User    string          `json:"user,omitempty"`
	Payload json.RawMessage `json:"payload"`
}

// Kind returns the job's kind, as River requires of job args.
func (a jobArgs) Kind() string { return a.kind }

// handler is a registered job kind.
type handler struct {
	fn   memento.JobHandler
	opts memento.JobOptions
}

// worker runs the jobs of one kind with its memento.JobHandler.
type worker struct {
	river.WorkerDefaults[jobArgs]
	db      *DB
	fn      memento.JobHandler
	timeout time.Duration
}

// Work hands the job's payload to the handler.
func (w *worker) Work(ctx context.Context, job *river.Job[jobArgs]) error {
	// What is counted per tenant (the language-model budget) is charged
	// to the tenant the job was enqueued for.
	if job.Args.Tenant != "" {
		ctx = memento.WithTenant(ctx, job.Args.Tenant)
	}
	// Its writes commit without waiting for the disk (durability.go).
	ctx = jobctx.With(ctx)
	err := w.fn(ctx, job.Kind, job.Args.Payload)
	if err == nil {
		w.db.completeJob(ctx, job)
	}
	return err
}

// completeJob records that job ended, in the writer's next group commit,
// after the job's own writes. River's completer records the completions
// of a queue in batches, every 250 ms when few jobs end, and until it
// does a job that has ended counts as running (Unfinished, the queues'
// lag): a tenant's model job, the last of a burst's jobs, showed as
// running for up to a quarter of a second after it ended. River's later
// update finds the job completed and leaves it so. If this write fails,
// nothing changes: River's completer records the completion.
func (db *DB) completeJob(ctx context.Context, job *river.Job[jobArgs]) {
	if ctx.Err() != nil {
		return
	}
	err := db.groupTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := river.JobCompleteTx[*riversqlite.Driver](ctx, tx, job)
		return err
	})
	if err != nil {
		db.logger.Debug("sqlite: a job's completion is left to River's completer", "job", job.ID, "kind", job.Kind, "err", err)
	}
}

// Timeout bounds one attempt of the job.
func (w *worker) Timeout(*river.Job[jobArgs]) time.Duration { return w.timeout }

// retryPolicy schedules retries with Options.RetryDelay.
type retryPolicy struct {
	delay func(attempt int) time.Duration
}

// NextRetry returns when the failed job runs again.
func (p retryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	return time.Now().UTC().Add(max(p.delay(job.Attempt), time.Millisecond))
}

// insertJobs enqueues reqs in tx, the transaction of the data they concern,
// marking each with the scope it belongs to: those by user in the user's
// backlog (backlog.go), the others as River jobs. Equal requests are
// enqueued once.
func (db *DB) insertJobs(ctx context.Context, tx *sql.Tx, s memento.Scope, reqs []memento.JobRequest) error {
	if len(reqs) == 0 {
		return nil
	}
	params := make([]river.InsertManyParams, 0, len(reqs))
	var keys []string // the coalescing key of each of params, or ""
	var backlog []backlogItem
	seen := make(map[string]bool, len(reqs))
	for _, r := range reqs {
		if r.Kind == "" {
			return fmt.Errorf("enqueue job: kind is required")
		}
		payload, err := json.Marshal(r.Payload)
		if err != nil {
			return fmt.Errorf("enqueue %s job: encode payload: %w", r.Kind, err)
		}
		key := fmt.Sprintf("%s\x00%t\x00%d\x00%s", r.Kind, r.ByUser, r.MaxAttempts, payload)
		if seen[key] {
			continue
		}
		seen[key] = true
		if r.ByUser {
			backlog = append(backlog, backlogItem{kind: r.Kind, payload: payload, maxAttempts: db.maxAttempts(r)})
			continue
		}
		ckey := ""
		if r.Coalesce {
			ckey = r.Kind + "\x00" + string(payload)
			if waiting, err := db.coalesce.waiting(ctx, db.prepared(tx), ckey); err != nil {
				return fmt.Errorf("enqueue %s job: %w", r.Kind, err)
			} else if waiting {
				continue
			}
		}
		params = append(params, river.InsertManyParams{
			Args:       jobArgs{kind: r.Kind, Tenant: s.Tenant, User: s.User, Payload: payload},
			InsertOpts: &river.InsertOpts{MaxAttempts: db.maxAttempts(r)},
		})
		keys = append(keys, ckey)
	}
	if len(params) > 0 {
		res, err := db.inserter.InsertManyTx(ctx, tx, params)
		if err != nil {
			return fmt.Errorf("enqueue jobs: %w", err)
		}
		db.coalesce.inserted(keys, res)
	}
	return db.insertBacklog(ctx, tx, s, backlog)
}

// Coalescing (memento.JobRequest.Coalesce). A job that recomputes from the
// store's state, such as the tenant's model after new events, is asked for
// by every transaction that adds to that state, and each such job costs
// River an insert, a fetch and a completion: three transactions on the one
// writer. The store remembers the last job it enqueued of each kind and
// payload, and skips a new one while that job is still waiting to run
// (available, scheduled or pending; not running, nor waiting to retry
// after a failure, which may be minutes away): the waiting
// job will read what the new one would have. The check runs in the
// transaction that would enqueue, and on SQLite no other write (River's
// fetch that would start the waiting job) can come between the check and
// that transaction's commit, so a job that starts always starts after the
// writes it stands for. The memory is per process; another process, or a
// restart, enqueues its own.

// sqlJobWaiting says whether a job is waiting to run.
const sqlJobWaiting = `SELECT state IN ('available', 'scheduled', 'pending') FROM river_job WHERE id = ?`

// coalescer is the last job enqueued of each coalescing key.
type coalescer struct {
	mu   sync.Mutex
	last map[string]int64
}

// waiting reports whether the last job of key is still waiting to run.
func (c *coalescer) waiting(ctx context.Context, tx stmtTx, key string) (bool, error) {
	c.mu.Lock()
	id, ok := c.last[key]
	c.mu.Unlock()
	if !ok {
		return false, nil
	}
	var waiting bool
	err := tx.QueryRowContext(ctx, sqlJobWaiting, id).Scan(&waiting)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil // cleaned away, or its transaction rolled back
	}
	return waiting, err
}

// inserted records the jobs River enqueued for keys (one per job; "" for
// a job that does not coalesce).
func (c *coalescer) inserted(keys []string, res []*rivertype.JobInsertResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, k := range keys {
		if k == "" || i >= len(res) || res[i] == nil || res[i].Job == nil {
			continue
		}
		if c.last == nil {
			c.last = map[string]int64{}
		}
		if len(c.last) >= coalesceKeys {
			clear(c.last)
		}
		c.last[k] = res[i].Job.ID
	}
}

// coalesceKeys bounds the keys a coalescer remembers (one a tenant for the
// model job); past it, it starts over.
const coalesceKeys = 4096

// maxAttempts returns the attempts a new job gets: its own, else its kind's
// as registered in this process, else the store's default.
func (db *DB) maxAttempts(r memento.JobRequest) int {
	if r.MaxAttempts > 0 {
		return r.MaxAttempts
	}
	db.handlersMu.RLock()
	h, ok := db.handlers[r.Kind]
	db.handlersMu.RUnlock()
	if ok && h.opts.MaxAttempts > 0 {
		return h.opts.MaxAttempts
	}
	return db.opts.MaxAttempts
}

// Handle registers the handler of a job kind, replacing any earlier one. It
// must be called before Start; a handler registered while the queue runs is
// used from the next Start on. opts.MaxAttempts applies to jobs of the kind
// enqueued by this process without their own MaxAttempts.
func (db *DB) Handle(kind string, h memento.JobHandler, opts memento.JobOptions) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.worker != nil {
		db.logger.Error("sqlite: job handler registered after the queue started; it takes effect at the next Start", "kind", kind)
	}
	db.handlersMu.Lock()
	db.handlers[kind] = handler{fn: h, opts: opts}
	db.handlersMu.Unlock()
}

// errorHandler fails a job at once when its handler's error cannot
// succeed on retry (memento.PermanentJobError), keeping the error as the
// attempt's. River then records the job as cancelled, which memento lists
// as failed: a dead letter that RetryJobs can run again.
type errorHandler struct{}

// HandleError cancels the job when err is permanent.
func (errorHandler) HandleError(ctx context.Context, job *rivertype.JobRow, err error) *river.ErrorHandlerResult {
	if memento.PermanentJobError(err) {
		return &river.ErrorHandlerResult{SetCancelled: true}
	}
	return nil
}

// HandlePanic leaves a panicking job to its retries.
func (errorHandler) HandlePanic(context.Context, *rivertype.JobRow, any, string) *river.ErrorHandlerResult {
	return nil
}

// Start begins working jobs of the registered kinds until ctx is done or
// Stop is called. Jobs of kinds without a handler stay in the table for a
// process that handles them. The queue first rescues the jobs of queue
// processes that died with jobs running, and holds a lease on its own
// jobs while it runs (queue_lease.go). Errors: EINVALID when no handler is
// registered, ECONFLICT when the queue already runs.
func (db *DB) Start(ctx context.Context) error {
	db.mu.Lock()
	if db.worker != nil {
		select {
		case <-db.worker.Stopped():
			// Stopped by the cancellation of its Start context; its
			// lease goroutine ends with it, once it has unregistered
			// (a write, so not under mu).
			p := db.proc
			db.worker, db.proc = nil, nil
			db.mu.Unlock()
			<-p.done
			db.mu.Lock()
		default:
			db.mu.Unlock()
			return memento.Errorf(memento.ECONFLICT, "the job queue is already running")
		}
	}
	n := len(db.handlers)
	db.mu.Unlock()
	if h, _ := db.backlogHandler(); h != nil {
		n++
	}
	if n == 0 {
		return memento.Errorf(memento.EINVALID, "no job handlers are registered")
	}
	// The process registers, and rescues dead ones' jobs, before it
	// takes any job, and without holding mu: enqueuing takes mu inside
	// its write transaction, so waiting for the writer under mu could
	// deadlock.
	p, err := db.registerQueue(ctx, newQueueID())
	if err != nil {
		return fmt.Errorf("start queue: %w", err)
	}
	if err := db.startClient(ctx, p); err != nil {
		db.unregisterQueue(p)
		return err
	}
	return nil
}

// startClient starts the River client of the queue process p, which has
// registered, and the renewal of its lease.
func (db *DB) startClient(ctx context.Context, p *queueProcess) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.worker != nil {
		return memento.Errorf(memento.ECONFLICT, "the job queue is already running")
	}
	backlog, bopts := db.backlogHandler()
	if len(db.handlers) == 0 && backlog == nil {
		return memento.Errorf(memento.EINVALID, "no job handlers are registered")
	}
	workers := river.NewWorkers()
	longest := max(db.opts.JobTimeout, bopts.Timeout)
	for kind, h := range db.handlers {
		if kind == memento.JobBacklog {
			continue // the queue's own
		}
		timeout := h.opts.Timeout
		if timeout <= 0 {
			timeout = db.opts.JobTimeout
		}
		longest = max(longest, timeout)
		// AddWorkerArgs fails (by panicking) only for a kind registered
		// twice, which the handlers map rules out. River validates the
		// kind's format in NewClient below.
		river.AddWorkerArgs(workers, jobArgs{kind: kind}, &worker{db: db, fn: h.fn, timeout: timeout})
	}
	// Every queue takes the users' backlogs, with the registered handler
	// or, without one, by handing each job to its kind's handler.
	river.AddWorkerArgs(workers, jobArgs{kind: memento.JobBacklog}, &backlogWorker{db: db, owner: p.id, handler: backlog, opts: bopts})
	cfg := &river.Config{
		// The lease's id: River appends it to attempted_by of every
		// job this queue takes.
		ID:            p.id,
		ErrorHandler:  errorHandler{},
		Logger:        db.logger,
		Workers:       workers,
		Queues:        map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: db.opts.Workers}},
		MaxAttempts:   db.opts.MaxAttempts,
		JobTimeout:    db.opts.JobTimeout,
		FetchCooldown: min(db.opts.PollInterval, river.FetchCooldownDefault),
		// Polling, not River's notifier: on SQLite the notifier is itself
		// a poll of a notification table on the one writer connection.
		PollOnly:          true,
		FetchPollInterval: db.opts.PollInterval,
		// Leave kinds this process does not handle to one that does
		// instead of failing them.
		FetchOnlyKnownKinds: true,
		SkipUnknownJobCheck: true,
		// A job of a live process that ran much longer than its
		// timeout (a handler that ignores its context) is retried by
		// River. Jobs lost with a process that died are rescued much
		// sooner, by the lease (queue_lease.go).
		RescueStuckJobsAfter: longest + time.Minute,
	}
	if db.opts.RetryDelay != nil {
		cfg.RetryPolicy = retryPolicy{delay: db.opts.RetryDelay}
	}
	client, err := river.NewClient(riversqlite.New(db.write), cfg)
	if err != nil {
		return fmt.Errorf("start queue: %w", err)
	}
	if err := client.Start(ctx); err != nil {
		return fmt.Errorf("start queue: %w", err)
	}
	lctx, cancel := context.WithCancel(context.Background())
	p.cancel, p.done = cancel, make(chan struct{})
	go db.keepLease(lctx, p, client.Stopped())
	db.worker, db.proc = client, p
	return nil
}

// Stop waits for running jobs to finish, up to ctx's deadline; past it, the
// jobs' contexts are cancelled, Stop waits a little more for them to return
// and reports ctx's error. Stopping a queue that does not run does nothing.
func (db *DB) Stop(ctx context.Context) error {
	db.mu.Lock()
	client, p := db.worker, db.proc
	db.worker, db.proc = nil, nil
	db.mu.Unlock()
	if client == nil {
		return nil
	}
	// The lease outlives the client, so that no job of this process runs
	// unleased, and then goes with it.
	defer func() {
		p.cancel()
		<-p.done
	}()
	err := client.Stop(ctx)
	if err == nil {
		return nil
	}
	hard, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err2 := client.StopAndCancel(hard); err2 != nil {
		return fmt.Errorf("stop queue: %w", errors.Join(err, err2))
	}
	return fmt.Errorf("stop queue: running jobs were cancelled: %w", err)
}

// jobStateSQL maps River's job states to memento's. An available or
// scheduled job that has failed before is waiting for a retry.
const jobStateSQL = `CASE
	WHEN state IN ('available', 'scheduled', 'pending') AND attempt > 0 AND coalesce(json_array_length(errors), 0) > 0 THEN 'retrying'
	WHEN state IN ('available', 'scheduled', 'pending') THEN 'pending'
	WHEN state = 'running' THEN 'running'
	WHEN state = 'retryable' THEN 'retrying'
	WHEN state = 'completed' THEN 'completed'
	ELSE 'failed'
END`

// Jobs lists jobs, newest first, reading River's job table. Errors:
// EINVALID for an unknown state or a negative limit.
func (db *DB) Jobs(ctx context.Context, f memento.JobFilter) ([]memento.Job, error) {
	switch f.State {
	case "", memento.JobPending, memento.JobRunning, memento.JobRetrying, memento.JobCompleted, memento.JobFailed:
	default:
		return nil, memento.Errorf(memento.EINVALID, "job state must be one of %s, %s, %s, %s or %s, got %q",
			memento.JobPending, memento.JobRunning, memento.JobRetrying, memento.JobCompleted, memento.JobFailed, f.State)
	}
	if f.Limit < 0 {
		return nil, memento.Errorf(memento.EINVALID, "limit must not be negative, got %d", f.Limit)
	}
	// The jobs of every message acknowledged so far are listed.
	if err := db.intake.settleAll(ctx); err != nil {
		return nil, err
	}
	limit := f.Limit
	if limit == 0 {
		limit = -1
	}
	jobs, err := queryJobs(ctx, db.read, `(? = '' OR job_state = ?) AND (? = '' OR kind = ?)
		ORDER BY id DESC LIMIT ?`, f.State, f.State, f.Kind, f.Kind, limit)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return jobs, nil
}

// querier is what queryJobs reads with: a pool or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// queryJobs returns the jobs that cond (an SQL condition on river_job's
// columns and job_state, memento's state, and what follows it: ORDER BY,
// LIMIT) selects.
func queryJobs(ctx context.Context, q querier, cond string, args ...any) ([]memento.Job, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, kind, job_state, state, attempt, max_attempts, json(args), coalesce(json(errors), '[]'),
			CAST(round(unixepoch(created_at, 'subsec') * 1000) AS INTEGER),
			CAST(round(unixepoch(finalized_at, 'subsec') * 1000) AS INTEGER),
			`+ownerSQL+`
		FROM (SELECT *, `+jobStateSQL+` AS job_state FROM river_job)
		WHERE `+cond, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	jobs := []memento.Job{}
	for rows.Next() {
		var j memento.Job
		var riverState, args, errs, owner string
		var created int64
		var finalized sql.NullInt64
		if err := rows.Scan(&j.ID, &j.Kind, &j.State, &riverState, &j.Attempt, &j.MaxAttempts, &args, &errs, &created, &finalized, &owner); err != nil {
			return nil, err
		}
		var a jobArgs
		if err := json.Unmarshal([]byte(args), &a); err != nil {
			return nil, fmt.Errorf("decode args of job %d: %w", j.ID, err)
		}
		j.Payload = a.Payload
		var attemptErrs []rivertype.AttemptError
		if err := json.Unmarshal([]byte(errs), &attemptErrs); err != nil {
			return nil, fmt.Errorf("decode errors of job %d: %w", j.ID, err)
		}
		j.Errors = make([]string, len(attemptErrs))
		for i, e := range attemptErrs {
			j.Errors[i] = e.Error
		}
		if len(j.Errors) > 0 {
			j.LastError = j.Errors[len(j.Errors)-1]
		}
		j.CreatedAt = time.UnixMilli(created).UTC()
		if finalized.Valid {
			t := time.UnixMilli(finalized.Int64).UTC()
			j.FinalizedAt = &t
		}
		switch {
		case j.State == memento.JobFailed && riverState == "cancelled":
			j.Reason = memento.JobPermanent
		case j.State == memento.JobFailed:
			j.Reason = memento.JobOutOfAttempts
		case j.State == memento.JobRunning:
			j.Worker = owner
		}
		jobs = append(jobs, j)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return jobs, nil
}

// RetryJobs makes the selected dead letters (and retrying jobs named by
// id) available at once, in one transaction, with River's JobRetry: a job
// keeps its attempts and errors and gets one more attempt if it had used
// up its own. It returns the retried jobs, oldest first. Errors: EINVALID
// when r selects nothing or both by id and by state, ENOTFOUND for an
// unknown id, ECONFLICT for a job that is neither failed nor retrying.
func (db *DB) RetryJobs(ctx context.Context, r memento.JobRetry) ([]memento.Job, error) {
	switch {
	case len(r.IDs) == 0 && !r.Failed:
		return nil, memento.Errorf(memento.EINVALID, "name the jobs to retry by id, or retry every failed job")
	case len(r.IDs) > 0 && r.Failed:
		return nil, memento.Errorf(memento.EINVALID, "retry either jobs named by id or every failed job, not both")
	case len(r.IDs) > 0 && r.Kind != "":
		return nil, memento.Errorf(memento.EINVALID, "a kind selects among failed jobs; jobs named by id need none")
	}
	var ids []int64
	err := db.writeTx(ctx, func(tx *sql.Tx) error {
		var err error
		if r.Failed {
			ids, err = failedJobIDs(ctx, tx, r.Kind)
		} else {
			ids, err = retryableJobIDs(ctx, tx, r.IDs)
		}
		if err != nil {
			return err
		}
		for _, id := range ids {
			if _, err := db.inserter.JobRetryTx(ctx, tx, id); err != nil {
				return fmt.Errorf("job %d: %w", id, err)
			}
		}
		return nil
	})
	if err != nil {
		if memento.ErrorCode(err) != memento.EINTERNAL {
			return nil, err
		}
		return nil, fmt.Errorf("retry jobs: %w", err)
	}
	if len(ids) == 0 {
		return []memento.Job{}, nil
	}
	idList, err := json.Marshal(ids)
	if err != nil {
		return nil, fmt.Errorf("retry jobs: %w", err)
	}
	jobs, err := queryJobs(ctx, db.read, `id IN (SELECT value FROM json_each(?)) ORDER BY id`, string(idList))
	if err != nil {
		return nil, fmt.Errorf("retry jobs: read them back: %w", err)
	}
	return jobs, nil
}

// failedJobIDs returns the ids of the dead letters (of kind, unless it is
// ""), oldest first.
func failedJobIDs(ctx context.Context, tx *sql.Tx, kind string) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id FROM river_job
		WHERE state IN ('discarded', 'cancelled') AND (? = '' OR kind = ?) ORDER BY id`, kind, kind)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// retryableJobIDs checks that every job of ids exists and is failed or
// retrying, and returns them sorted without repeats.
func retryableJobIDs(ctx context.Context, tx *sql.Tx, ids []int64) ([]int64, error) {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for _, id := range ids {
		var state string
		err := tx.QueryRowContext(ctx, `SELECT `+jobStateSQL+` FROM river_job WHERE id = ?`, id).Scan(&state)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, memento.Errorf(memento.ENOTFOUND, "job %d not found", id)
		} else if err != nil {
			return nil, err
		}
		if state != memento.JobFailed && state != memento.JobRetrying {
			return nil, memento.Errorf(memento.ECONFLICT, "job %d is %s; only failed or retrying jobs can be retried", id, state)
		}
	}
	return ids, nil
}

// Unfinished counts jobs that have not ended: River's neither completed
// nor failed (discarded or cancelled, in River's words), found through the
// index on state, and the jobs of the users' backlogs; and one for each
// message still in the intake, whose jobs are to come. A message moving
// from the intake at that moment may be counted twice, never missed.
func (db *DB) Unfinished(ctx context.Context) (int, error) {
	var n int
	if db.intake != nil {
		// Each message still in the intake has its jobs to come.
		l, err := db.intake.lag(ctx)
		if err != nil {
			return 0, fmt.Errorf("count unfinished jobs: %w", err)
		}
		n = l.Waiting
	}
	var jobs int
	err := db.reads().QueryRowContext(ctx, `SELECT (SELECT count(*) FROM river_job
			WHERE state IN ('available', 'scheduled', 'pending', 'retryable', 'running'))
		+ (SELECT count(*) FROM backlog)`).Scan(&jobs)
	if err != nil {
		return 0, fmt.Errorf("count unfinished jobs: %w", err)
	}
	return n + jobs, nil
}
