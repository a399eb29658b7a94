package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivertype"

	"github.com/memento-ai/memento"
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
	fn      memento.JobHandler
	timeout time.Duration
}

// Work hands the job's payload to the handler.
func (w *worker) Work(ctx context.Context, job *river.Job[jobArgs]) error {
	return w.fn(ctx, job.Kind, job.Args.Payload)
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
// marking each with the scope it belongs to.
func (db *DB) insertJobs(ctx context.Context, tx *sql.Tx, s memento.Scope, reqs []memento.JobRequest) error {
	if len(reqs) == 0 {
		return nil
	}
	params := make([]river.InsertManyParams, 0, len(reqs))
	for _, r := range reqs {
		if r.Kind == "" {
			return fmt.Errorf("enqueue job: kind is required")
		}
		payload, err := json.Marshal(r.Payload)
		if err != nil {
			return fmt.Errorf("enqueue %s job: encode payload: %w", r.Kind, err)
		}
		params = append(params, river.InsertManyParams{
			Args:       jobArgs{kind: r.Kind, Tenant: s.Tenant, User: s.User, Payload: payload},
			InsertOpts: &river.InsertOpts{MaxAttempts: db.maxAttempts(r)},
		})
	}
	if _, err := db.inserter.InsertManyTx(ctx, tx, params); err != nil {
		return fmt.Errorf("enqueue jobs: %w", err)
	}
	return nil
}

// maxAttempts returns the attempts a new job gets: its own, else its kind's
// as registered in this process, else the store's default.
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
	db.handlers[kind] = handler{fn: h, opts: opts}
}

// Start begins working jobs of the registered kinds until ctx is done or
// Stop is called. Jobs of kinds without a handler stay in the table for a
// process that handles them. Errors: EINVALID when no handler is
// registered, ECONFLICT when the queue already runs.
func (db *DB) Start(ctx context.Context) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.worker != nil {
		select {
		case <-db.worker.Stopped():
			db.worker = nil // stopped by the cancellation of its Start context
		default:
			return memento.Errorf(memento.ECONFLICT, "the job queue is already running")
		}
	}
	if len(db.handlers) == 0 {
		return memento.Errorf(memento.EINVALID, "no job handlers are registered")
	}
	workers := river.NewWorkers()
	longest := db.opts.JobTimeout
	for kind, h := range db.handlers {
		timeout := h.opts.Timeout
		if timeout <= 0 {
			timeout = db.opts.JobTimeout
		}
		longest = max(longest, timeout)
		// AddWorkerArgs fails (by panicking) only for a kind registered
		// twice, which the handlers map rules out. River validates the
		// kind's format in NewClient below.
		river.AddWorkerArgs(workers, jobArgs{kind: kind}, &worker{fn: h.fn, timeout: timeout})
	}
	cfg := &river.Config{
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
		// A job running much longer than its timeout was lost with its
		// process; River then retries it.
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
	db.worker = client
	return nil
}

// Stop waits for running jobs to finish, up to ctx's deadline; past it, the
// jobs' contexts are cancelled, Stop waits a little more for them to return
// and reports ctx's error. Stopping a queue that does not run does nothing.
func (db *DB) Stop(ctx context.Context) error {
	db.mu.Lock()
	client := db.worker
	db.worker = nil
	db.mu.Unlock()
	if client == nil {
		return nil
	}
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
	limit := f.Limit
	if limit == 0 {
		limit = -1
	}
	rows, err := db.read.QueryContext(ctx, `SELECT id, kind, job_state, attempt, max_attempts, json(args), coalesce(json(errors), '[]'),
			CAST(round(unixepoch(created_at, 'subsec') * 1000) AS INTEGER),
			CAST(round(unixepoch(finalized_at, 'subsec') * 1000) AS INTEGER)
		FROM (SELECT *, `+jobStateSQL+` AS job_state FROM river_job)
		WHERE (? = '' OR job_state = ?) AND (? = '' OR kind = ?)
		ORDER BY id DESC LIMIT ?`, f.State, f.State, f.Kind, f.Kind, limit)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	defer rows.Close()
	jobs := []memento.Job{}
	for rows.Next() {
		var j memento.Job
		var args, errs string
		var created int64
		var finalized sql.NullInt64
		if err := rows.Scan(&j.ID, &j.Kind, &j.State, &j.Attempt, &j.MaxAttempts, &args, &errs, &created, &finalized); err != nil {
			return nil, fmt.Errorf("list jobs: %w", err)
		}
		var a jobArgs
		if err := json.Unmarshal([]byte(args), &a); err != nil {
			return nil, fmt.Errorf("list jobs: decode args of job %d: %w", j.ID, err)
		}
		j.Payload = a.Payload
		var attemptErrs []rivertype.AttemptError
		if err := json.Unmarshal([]byte(errs), &attemptErrs); err != nil {
			return nil, fmt.Errorf("list jobs: decode errors of job %d: %w", j.ID, err)
		}
		j.Errors = make([]string, len(attemptErrs))
		for i, e := range attemptErrs {
			j.Errors[i] = e.Error
		}
		j.CreatedAt = time.UnixMilli(created).UTC()
		if finalized.Valid {
			t := time.UnixMilli(finalized.Int64).UTC()
			j.FinalizedAt = &t
		}
		jobs = append(jobs, j)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return jobs, nil
}

// Unfinished counts jobs that have not ended: neither completed nor failed
// (discarded or cancelled, in River's words).
func (db *DB) Unfinished(ctx context.Context) (int, error) {
	var n int
	err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM river_job
		WHERE state NOT IN ('completed', 'discarded', 'cancelled')`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count unfinished jobs: %w", err)
	}
	return n, nil
}
