package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/internal/jobctx"
)

// jobArgs is the one River args type of every job kind, as in package
// sqlite: the kind lives in the value, and the JSON stored in
// river_job.args is {"tenant": ..., "user": ..., "payload": ...}, so that
// DeleteUser finds a user's jobs whatever their payload.
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
	// Its writes commit without waiting for the disk (DB.userTx).
	ctx = jobctx.With(ctx)
	err := w.fn(ctx, job.Kind, job.Args.Payload)
	if err == nil {
		w.db.completeJob(ctx, job)
	}
	return err
}

// completeJob records that job ended, in a transaction of its own that,
// like the job's writes, does not wait for the disk, as the SQLite store
// does: River's completer records the completions of a queue in batches,
// every 250 ms when few jobs end, and until it does a job that has ended
// counts as running (Unfinished, the queues' lag). River's later update
// finds the job completed and leaves it so. If this write fails, nothing
// changes: River's completer records the completion.
func (db *DB) completeJob(ctx context.Context, job *river.Job[jobArgs]) {
	if ctx.Err() != nil {
		return
	}
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT set_config('synchronous_commit', 'off', true)`); err != nil {
			return err
		}
		_, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
		return err
	})
	if err != nil {
		db.logger.Debug("postgres: a job's completion is left to River's completer", "job", job.ID, "kind", job.Kind, "err", err)
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

// errorHandler fails a job at once when its error cannot succeed on retry
// (memento.PermanentJobError); River records it as cancelled, which Jobs
// lists as a failed dead letter.
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

// insertJobs enqueues reqs in tx, the transaction of the data they
// concern: those by user in the user's backlog (backlog.go), the others
// with River's InsertManyTx, so the jobs commit with the data or not at
// all. Equal requests are enqueued once.
func (db *DB) insertJobs(ctx context.Context, tx pgx.Tx, s memento.Scope, reqs []memento.JobRequest) error {
	b := &pgx.Batch{}
	q, err := db.queueJobs(ctx, tx, s, reqs, b)
	if err != nil {
		return err
	}
	if b.Len() > 0 {
		br := tx.SendBatch(ctx, b)
		err := q.read(br)
		if cerr := br.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("enqueue jobs in the backlog: %w", cerr)
		}
		if err != nil {
			return err
		}
	}
	return q.finish(ctx, tx)
}

// queueJobs is insertJobs with the backlog's statements queued in b, to go
// to the server with others in one round trip: River's jobs are inserted
// at once. Once b is sent, the caller reads their answers (read), in b's
// order, and after the batch calls finish.
func (db *DB) queueJobs(ctx context.Context, tx pgx.Tx, s memento.Scope, reqs []memento.JobRequest, b *pgx.Batch) (*queuedJobs, error) {
	q := &queuedJobs{db: db, s: s}
	if len(reqs) == 0 {
		return q, nil
	}
	params := make([]river.InsertManyParams, 0, len(reqs))
	var backlog []backlogItem
	seen := make(map[string]bool, len(reqs))
	for _, r := range reqs {
		if r.Kind == "" {
			return nil, fmt.Errorf("enqueue job: kind is required")
		}
		payload, err := json.Marshal(r.Payload)
		if err != nil {
			return nil, fmt.Errorf("enqueue %s job: encode payload: %w", r.Kind, err)
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
		params = append(params, river.InsertManyParams{
			Args:       jobArgs{kind: r.Kind, Tenant: s.Tenant, User: s.User, Payload: payload},
			InsertOpts: &river.InsertOpts{MaxAttempts: db.maxAttempts(r)},
		})
	}
	if len(params) > 0 {
		if _, err := db.inserter.InsertManyTx(ctx, tx, params); err != nil {
			return nil, fmt.Errorf("enqueue jobs: %w", err)
		}
	}
	queueBacklog(b, s, backlog)
	q.backlog = len(backlog) > 0
	return q, nil
}

// queuedJobs is what queueJobs left to do once its batch is sent.
type queuedJobs struct {
	db      *DB
	s       memento.Scope
	backlog bool  // backlog rows were queued
	waiting *bool // the backlog's job has not ended (readBacklogQueued)
}

// read reads the answers of the statements queueJobs queued.
func (q *queuedJobs) read(br pgx.BatchResults) error {
	if !q.backlog {
		return nil
	}
	var err error
	q.waiting, err = readBacklogQueued(br)
	return err
}

// finish enqueues a backlog job of the user unless one that will read the
// rows added is waiting.
func (q *queuedJobs) finish(ctx context.Context, tx pgx.Tx) error {
	if !q.backlog {
		return nil
	}
	return q.db.enqueueUnlessWaiting(ctx, tx, q.s, q.waiting)
}

func (db *DB) maxAttempts(r memento.JobRequest) int {
	if r.MaxAttempts > 0 {
		return r.MaxAttempts
	}
	db.mu.Lock()
	h, ok := db.handlers[r.Kind]
	db.mu.Unlock()
	if ok && h.opts.MaxAttempts > 0 {
		return h.opts.MaxAttempts
	}
	return db.opts.MaxAttempts
}

// Handle registers the handler of a job kind, replacing any earlier one.
// It must be called before Start.
func (db *DB) Handle(kind string, h memento.JobHandler, opts memento.JobOptions) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.worker != nil {
		db.logger.Error("postgres: job handler registered after the queue started; it takes effect at the next Start", "kind", kind)
	}
	db.handlers[kind] = handler{fn: h, opts: opts}
}

// Start begins working jobs of the registered kinds until ctx is done or
// Stop is called. Any number of processes may run a queue on one
// database: River claims each job for one of them with FOR UPDATE SKIP
// LOCKED, wakes every queue through LISTEN/NOTIFY when a job is inserted
// and polls every Options.PollInterval besides. Jobs of kinds without a
// handler here stay for a process that has one. Errors: EINVALID when no handler is registered, ECONFLICT when
// the queue already runs. A job whose process died while running it is
// made available again within about one Options.QueueLease (lease.go).
func (db *DB) Start(ctx context.Context) error {
	db.mu.Lock()
	if db.worker != nil {
		select {
		case <-db.worker.Stopped():
			p := db.proc
			db.worker, db.proc = nil, nil
			db.mu.Unlock()
			if p != nil {
				<-p.done
			}
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
	p, err := db.registerQueue(ctx)
	if err != nil {
		return fmt.Errorf("start queue: %w", err)
	}
	if err := db.startClient(ctx, p); err != nil {
		db.unregisterQueue(p)
		return err
	}
	return nil
}

// startClient starts the River client of the registered queue process p
// and the renewal of its lease.
func (db *DB) startClient(ctx context.Context, p *queueProcess) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.worker != nil {
		return memento.Errorf(memento.ECONFLICT, "the job queue is already running")
	}
	backlog, bopts := db.backlogHandler()
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
		river.AddWorkerArgs(workers, jobArgs{kind: kind}, &worker{db: db, fn: h.fn, timeout: timeout})
	}
	// Every queue takes the users' backlogs, with the registered handler
	// or, without one, by handing each job to its kind's handler.
	river.AddWorkerArgs(workers, jobArgs{kind: memento.JobBacklog}, &backlogWorker{db: db, owner: p.id, handler: backlog, opts: bopts})
	cfg := &river.Config{
		// The lease's id: River appends it to attempted_by of every
		// job this queue takes.
		ID:                   p.id,
		ErrorHandler:         errorHandler{},
		Logger:               db.logger,
		Workers:              workers,
		Queues:               map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: db.opts.Workers}},
		MaxAttempts:          db.opts.MaxAttempts,
		JobTimeout:           db.opts.JobTimeout,
		FetchCooldown:        min(db.opts.PollInterval, river.FetchCooldownDefault),
		FetchPollInterval:    db.opts.PollInterval,
		FetchOnlyKnownKinds:  true,
		SkipUnknownJobCheck:  true,
		RescueStuckJobsAfter: longest + time.Minute,
		Schema:               db.opts.Schema,
	}
	if db.opts.RetryDelay != nil {
		cfg.RetryPolicy = retryPolicy{delay: db.opts.RetryDelay}
	}
	client, err := river.NewClient(riverpgxv5.New(db.pool), cfg)
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

// Stop waits for running jobs to finish, up to ctx's deadline; past it,
// their contexts are cancelled. Stopping a queue that does not run does
// nothing.
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
		if p != nil {
			p.cancel()
			<-p.done
		}
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

// jobStateSQL maps River's job states to memento's, as package sqlite
// does.
const jobStateSQL = `CASE
	WHEN state IN ('available', 'scheduled', 'pending') AND attempt > 0 AND coalesce(array_length(errors, 1), 0) > 0 THEN 'retrying'
	WHEN state IN ('available', 'scheduled', 'pending') THEN 'pending'
	WHEN state = 'running' THEN 'running'
	WHEN state = 'retryable' THEN 'retrying'
	WHEN state = 'completed' THEN 'completed'
	ELSE 'failed'
END`

// Jobs lists jobs, newest first. Errors: EINVALID for an unknown state or
// a negative limit.
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
	var lim any
	if f.Limit > 0 {
		lim = f.Limit
	}
	jobs, err := queryJobs(ctx, db.pool, `($1 = '' OR job_state = $1) AND ($2 = '' OR kind = $2) ORDER BY id DESC LIMIT $3`, f.State, f.Kind, lim)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return jobs, nil
}

// queryJobs returns the jobs that cond selects from river_job (with
// job_state, memento's state), cond including ORDER BY and LIMIT.
func queryJobs(ctx context.Context, q querier, cond string, args ...any) ([]memento.Job, error) {
	rows, err := q.Query(ctx, `SELECT id, kind, job_state, state::text, attempt, max_attempts, args, coalesce(array_to_json(errors)::text, '[]'),
			created_at, finalized_at, coalesce(attempted_by[array_length(attempted_by, 1)], '')
		FROM (SELECT *, `+jobStateSQL+` AS job_state FROM river_job) AS j
		WHERE `+cond, args...)
	if err != nil {
		return nil, err
	}
	return collect(rows, func(r pgx.Rows) (memento.Job, error) {
		var j memento.Job
		var riverState, errs, owner string
		var args []byte
		var finalized *time.Time
		if err := r.Scan(&j.ID, &j.Kind, &j.State, &riverState, &j.Attempt, &j.MaxAttempts, &args, &errs, &j.CreatedAt, &finalized, &owner); err != nil {
			return j, err
		}
		var a jobArgs
		if err := json.Unmarshal(args, &a); err != nil {
			return j, fmt.Errorf("decode args of job %d: %w", j.ID, err)
		}
		j.Payload = a.Payload
		var attemptErrs []rivertype.AttemptError
		if err := json.Unmarshal([]byte(errs), &attemptErrs); err != nil {
			return j, fmt.Errorf("decode errors of job %d: %w", j.ID, err)
		}
		j.Errors = make([]string, len(attemptErrs))
		for i, e := range attemptErrs {
			j.Errors[i] = e.Error
		}
		if len(j.Errors) > 0 {
			j.LastError = j.Errors[len(j.Errors)-1]
		}
		j.CreatedAt = j.CreatedAt.UTC()
		if finalized != nil {
			t := finalized.UTC()
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
		return j, nil
	})
}

// RetryJobs makes the selected dead letters (and retrying jobs named by
// id) available at once, in one transaction, with River's JobRetryTx.
// Errors: EINVALID, ENOTFOUND, ECONFLICT, as memento.Queue documents.
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
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var err error
		if r.Failed {
			rows, err := tx.Query(ctx, `SELECT id FROM river_job WHERE state IN ('discarded', 'cancelled') AND ($1 = '' OR kind = $1) ORDER BY id FOR UPDATE`, r.Kind)
			if err != nil {
				return err
			}
			if ids, err = collect(rows, func(r pgx.Rows) (int64, error) { var id int64; err := r.Scan(&id); return id, err }); err != nil {
				return err
			}
		} else if ids, err = retryableJobIDs(ctx, tx, r.IDs); err != nil {
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
	jobs, err := queryJobs(ctx, db.pool, `id = ANY($1) ORDER BY id`, ids)
	if err != nil {
		return nil, fmt.Errorf("retry jobs: read them back: %w", err)
	}
	return jobs, nil
}

// retryableJobIDs checks that every job of ids exists and is failed or
// retrying, and returns them sorted without repeats.
func retryableJobIDs(ctx context.Context, tx pgx.Tx, ids []int64) ([]int64, error) {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for _, id := range ids {
		var state string
		err := tx.QueryRow(ctx, `SELECT `+jobStateSQL+` FROM river_job WHERE id = $1 FOR UPDATE`, id).Scan(&state)
		if errors.Is(err, pgx.ErrNoRows) {
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

// Unfinished counts jobs that have not ended, the jobs of the users'
// backlogs included. The unfinished states are named rather than the
// ended ones excluded, so that once the table is large (River keeps the
// completed jobs for a day) its index on the state finds the few
// unfinished jobs without reading the others.
func (db *DB) Unfinished(ctx context.Context) (int, error) {
	var n int
	err := db.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM river_job WHERE state IN ('available', 'pending', 'retryable', 'running', 'scheduled'))
		+ (SELECT count(*) FROM backlog)`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count unfinished jobs: %w", err)
	}
	return n, nil
}
