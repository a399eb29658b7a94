package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/internal/backlog"
	"github.com/memento-ai/memento/internal/jobctx"
)

// The users' backlogs (memento.JobRequest.ByUser).
//
// A message used to bring three River jobs, each claimed, run and
// completed on its own, each with its own write transaction on the one
// writer; and the jobs of one user's messages, taken by several workers
// at once, queued up behind that user's lock. A job enqueued by user is
// instead a row of the backlog table, inserted in the transaction of its
// data, and the user gets one River job of kind memento.JobBacklog that
// takes whatever has accumulated when it runs: one claim, one read, the
// handler's pass over the jobs in order, and one transaction that deletes
// the jobs done.
//
// The gate (ensureBacklogJob): backlog_users.job_id names the backlog job
// that will read the user's backlog next, waiting or running. An insert
// enqueues a backlog job only when that one has ended, so the jobs
// enqueued meanwhile join it: at most one backlog job of a user is
// pending at a time. A job names itself there when it claims the backlog,
// and after each batch, in the transaction that records it, either finds
// jobs left (those enqueued while the batch ran, such as the profile job
// of the events the batch added) and runs another batch, or clears job_id
// and ends. One writer orders that transaction and every insert, so a job
// inserted before it is run by the next round and one inserted after it
// finds job_id cleared and enqueues a new backlog job. A job that has run
// backlog.Rounds batches, or for backlog.Share, enqueues its successor and
// ends, so that one busy user does not keep a worker from the others.
//
// The owner (claimBacklog): a batch runs while its queue process owns the
// user's row. A process whose row in queue_processes is gone (it stopped,
// or died and was found dead by the lease, queue_lease.go) owns nothing,
// so a batch cut short by a crash runs again once its River job is
// rescued. Within a process, batches of one user wait for each other on a
// mutex; a batch that finds the user owned by another live process waits
// for it, polling.
//
// A job the handler answers with an error leaves the backlog as a River
// job of its own kind, with its retries and dead letter; jobs the handler
// did not reach stay for the next batch.

// Defaults of the backlog's options.
const (
	// DefaultBacklogBatch bounds the jobs of one batch: a message brings
	// up to three, so about 170 messages. A batch that stops short of a
	// burst leaves the rest to another round, which costs a transaction
	// and a wait for the writer of its own, while the handler writes what
	// it formed a few messages at a time (engine's backlogChunk) however
	// large the batch: a bound that covers a client's burst (fifty
	// messages at once) keeps the burst in one round.
	DefaultBacklogBatch = 512
	// backlogPollMin and backlogPollMax bound the wait between tries of a
	// batch whose user another process holds.
	backlogPollMin = 2 * time.Millisecond
	backlogPollMax = 100 * time.Millisecond
)

// Statements of the backlog's hot path, prepared at Open (commit.go).
const (
	sqlInsertBacklog     = `INSERT INTO backlog (tenant_id, user_id, kind, payload, max_attempts, created_at) VALUES (?, ?, ?, ?, ?, ?)`
	sqlBacklogUser       = `SELECT job_id FROM backlog_users WHERE tenant_id = ? AND user_id = ?`
	sqlInsertBacklogUser = `INSERT INTO backlog_users (tenant_id, user_id) VALUES (?, ?)`
	sqlBacklogJobWaiting = `SELECT state IN ('available', 'scheduled', 'pending', 'retryable', 'running') FROM river_job WHERE id = ?`
	sqlSetBacklogJob     = `UPDATE backlog_users SET job_id = ? WHERE tenant_id = ? AND user_id = ?`
	sqlClaimBacklog      = `UPDATE backlog_users SET owner = ?1, job_id = ?2
		WHERE tenant_id = ?3 AND user_id = ?4
		  AND (owner IS NULL OR owner = ?1 OR owner NOT IN (SELECT id FROM queue_processes))`
	sqlBacklogLeft   = `SELECT EXISTS (SELECT 1 FROM backlog WHERE tenant_id = ? AND user_id = ?)`
	sqlGiveUpBacklog = `UPDATE backlog_users SET owner = NULL, job_id = CASE WHEN job_id = ? THEN NULL ELSE job_id END
		WHERE tenant_id = ? AND user_id = ? AND owner = ?`
)

// backlogState is this process's side of the backlogs: the handler and the
// locks that keep two batches of one user apart.
type backlogState struct {
	mu      sync.Mutex
	handler memento.BacklogHandler
	opts    memento.BacklogOptions
	locks   backlog.Locks
}

// backlogItem is a job on its way into the backlog.
type backlogItem struct {
	kind        string
	payload     json.RawMessage
	maxAttempts int
}

// HandleBacklog registers the handler of the users' backlogs, replacing
// any earlier one. It must be called before Start, like Handle.
func (db *DB) HandleBacklog(h memento.BacklogHandler, opts memento.BacklogOptions) {
	db.mu.Lock()
	started := db.worker != nil
	db.mu.Unlock()
	if started {
		db.logger.Error("sqlite: backlog handler registered after the queue started; it takes effect at the next Start")
	}
	db.backlog.mu.Lock()
	defer db.backlog.mu.Unlock()
	db.backlog.handler, db.backlog.opts = h, opts
}

// backlogHandler returns the registered handler and its options with
// their defaults.
func (db *DB) backlogHandler() (memento.BacklogHandler, memento.BacklogOptions) {
	db.backlog.mu.Lock()
	defer db.backlog.mu.Unlock()
	opts := db.backlog.opts
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = DefaultBacklogBatch
	}
	if opts.Timeout <= 0 {
		opts.Timeout = db.opts.JobTimeout
	}
	return db.backlog.handler, opts
}

// insertBacklog adds items to the user's backlog in tx and makes sure a
// backlog job will take them.
func (db *DB) insertBacklog(ctx context.Context, tx *sql.Tx, s memento.Scope, items []backlogItem) error {
	if len(items) == 0 {
		return nil
	}
	now := nanos(time.Now())
	st := db.prepared(tx)
	for _, it := range items {
		if _, err := st.ExecContext(ctx, sqlInsertBacklog, s.Tenant, s.User, it.kind, string(it.payload), it.maxAttempts, now); err != nil {
			return fmt.Errorf("enqueue jobs in the backlog: %w", err)
		}
	}
	return db.ensureBacklogJob(ctx, tx, s)
}

// ensureBacklogJob enqueues a backlog job of the user in tx unless the one
// that backlog_users names has not ended: waiting to run, or running (it
// reads the backlog again before it ends).
func (db *DB) ensureBacklogJob(ctx context.Context, tx *sql.Tx, s memento.Scope) error {
	st := db.prepared(tx)
	// Read, and the row added only when missing: an upsert would rewrite
	// the user's row, a page more for every append's commit to log.
	var jobID sql.NullInt64
	switch err := st.QueryRowContext(ctx, sqlBacklogUser, s.Tenant, s.User).Scan(&jobID); {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := st.ExecContext(ctx, sqlInsertBacklogUser, s.Tenant, s.User); err != nil {
			return fmt.Errorf("add the user's backlog: %w", err)
		}
	case err != nil:
		return fmt.Errorf("read the backlog's job: %w", err)
	}
	if jobID.Valid {
		var waiting bool
		err := st.QueryRowContext(ctx, sqlBacklogJobWaiting, jobID.Int64).Scan(&waiting)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read the backlog's job: %w", err)
		}
		if waiting {
			return nil // it will read what was just added
		}
	}
	payload, err := json.Marshal(memento.Scope{Tenant: s.Tenant, User: s.User})
	if err != nil {
		return fmt.Errorf("enqueue backlog job: %w", err)
	}
	res, err := db.inserter.InsertManyTx(ctx, tx, []river.InsertManyParams{{
		Args:       jobArgs{kind: memento.JobBacklog, Tenant: s.Tenant, User: s.User, Payload: payload},
		InsertOpts: &river.InsertOpts{MaxAttempts: db.opts.MaxAttempts},
	}})
	if err != nil {
		return fmt.Errorf("enqueue backlog job: %w", err)
	}
	if len(res) != 1 || res[0].Job == nil {
		return fmt.Errorf("enqueue backlog job: River returned %d jobs", len(res))
	}
	if _, err := st.ExecContext(ctx, sqlSetBacklogJob, res[0].Job.ID, s.Tenant, s.User); err != nil {
		return fmt.Errorf("record the backlog's job: %w", err)
	}
	return nil
}

// backlogWorker is the River worker of memento.JobBacklog: one batch of
// the user its job names.
type backlogWorker struct {
	river.WorkerDefaults[jobArgs]
	db      *DB
	owner   string // the queue process's id
	handler memento.BacklogHandler
	opts    memento.BacklogOptions
}

// Work runs one batch of the job's user.
func (w *backlogWorker) Work(ctx context.Context, job *river.Job[jobArgs]) error {
	s := memento.Scope{Tenant: job.Args.Tenant, User: job.Args.User}
	if s.Tenant == "" {
		s.Tenant = memento.DefaultTenant
	}
	// Its writes commit without waiting for the disk (durability.go).
	ctx = jobctx.With(memento.WithTenant(ctx, s.Tenant))
	err := backlog.Run(ctx, steps{w.db}, &w.db.backlog.locks, s, w.owner, job.ID, w.handler, w.opts.MaxBatch)
	if err == nil {
		w.db.completeJob(ctx, job)
	}
	return err
}

// Timeout bounds one batch.
func (w *backlogWorker) Timeout(*river.Job[jobArgs]) time.Duration { return w.opts.Timeout }

// steps are the store's operations on a user's backlog, as
// backlog.Run takes them.
type steps struct{ db *DB }

func (st steps) Claim(ctx context.Context, s memento.Scope, owner string, jobID int64) error {
	return st.db.claimBacklog(ctx, s, owner, jobID)
}

func (st steps) Read(ctx context.Context, s memento.Scope, batch int) ([]memento.BacklogJob, error) {
	return st.db.readBacklog(ctx, s, batch)
}

func (st steps) Finish(ctx context.Context, s memento.Scope, owner string, jobID int64, jobs []memento.BacklogJob, results []error, more bool) (bool, error) {
	return st.db.finishBacklog(ctx, s, owner, jobID, jobs, results, more)
}

// claimBacklog makes owner the owner of the user's backlog and jobID its
// job, waiting while another live queue process owns it. Errors:
// backlog.ErrNoBacklog when the user has no backlog row, ctx's error when it ends
// first.
func (db *DB) claimBacklog(ctx context.Context, s memento.Scope, owner string, jobID int64) error {
	wait := backlogPollMin
	for {
		var claimed, exists bool
		err := db.groupTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
			claimed, exists = false, false
			res, err := db.prepared(tx).ExecContext(ctx, sqlClaimBacklog, owner, jobID, s.Tenant, s.User)
			if err != nil {
				return fmt.Errorf("claim backlog: %w", err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			if claimed = n == 1; claimed {
				exists = true
				return nil
			}
			var one int
			err = tx.QueryRowContext(ctx, `SELECT 1 FROM backlog_users WHERE tenant_id = ? AND user_id = ?`, s.Tenant, s.User).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			exists = err == nil
			return err
		})
		switch {
		case err != nil:
			return err
		case claimed:
			return nil
		case !exists:
			return backlog.ErrNoBacklog
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("wait for another process's batch: %w", ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, backlogPollMax)
	}
}

// readBacklog reads up to batch of the user's oldest backlog jobs.
func (db *DB) readBacklog(ctx context.Context, s memento.Scope, batch int) ([]memento.BacklogJob, error) {
	rows, err := db.reads().QueryContext(ctx, `SELECT id, kind, payload, created_at FROM backlog
		WHERE tenant_id = ? AND user_id = ? ORDER BY id LIMIT ?`, s.Tenant, s.User, batch)
	if err != nil {
		return nil, fmt.Errorf("read backlog: %w", err)
	}
	defer rows.Close()
	var jobs []memento.BacklogJob
	for rows.Next() {
		var j memento.BacklogJob
		var payload string
		var created int64
		if err := rows.Scan(&j.ID, &j.Kind, &payload, &created); err != nil {
			return nil, fmt.Errorf("read backlog: %w", err)
		}
		j.Payload, j.CreatedAt = json.RawMessage(payload), fromNanos(created)
		jobs = append(jobs, j)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read backlog: %w", err)
	}
	return jobs, nil
}

// finishBacklog records a batch of the backlog job jobID in one
// transaction: it deletes the jobs answered with nil and turns those
// answered with an error into River jobs of their own kind. Then, when
// jobs are left and more allows another round, it keeps the backlog and
// reports that the job runs again; otherwise it gives the backlog up and,
// when jobs are left, enqueues the next backlog job.
func (db *DB) finishBacklog(ctx context.Context, s memento.Scope, owner string, jobID int64, jobs []memento.BacklogJob, results []error, more bool) (bool, error) {
	var ids []int64
	var failed []int64
	for i, err := range results {
		ids = append(ids, jobs[i].ID)
		if err != nil {
			failed = append(failed, jobs[i].ID)
			if !errors.Is(err, backlog.ErrNoHandler) {
				db.logger.Warn("sqlite: a backlog job failed; it runs again as a job of its own", "user", s.User,
					"kind", jobs[i].Kind, "backlog", jobs[i].ID, "err", err)
			}
		}
	}
	idList, err := json.Marshal(ids)
	if err != nil {
		return false, fmt.Errorf("finish backlog batch: %w", err)
	}
	failedList, err := json.Marshal(failed)
	if err != nil {
		return false, fmt.Errorf("finish backlog batch: %w", err)
	}
	var again bool
	err = db.groupTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		again = false
		st := db.prepared(tx)
		if len(failed) > 0 {
			if err := db.ejectBacklog(ctx, tx, s, string(failedList)); err != nil {
				return err
			}
		}
		if len(ids) > 0 {
			if _, err := tx.ExecContext(ctx, `DELETE FROM backlog WHERE id IN (SELECT value FROM json_each(?))`, string(idList)); err != nil {
				return fmt.Errorf("delete done backlog jobs: %w", err)
			}
		}
		var left bool
		if err := st.QueryRowContext(ctx, sqlBacklogLeft, s.Tenant, s.User).Scan(&left); err != nil {
			return fmt.Errorf("look for backlog jobs left: %w", err)
		}
		if left && more {
			again = true
			return nil
		}
		if _, err := st.ExecContext(ctx, sqlGiveUpBacklog, jobID, s.Tenant, s.User, owner); err != nil {
			return fmt.Errorf("give up the backlog: %w", err)
		}
		if !left {
			return nil
		}
		return db.ensureBacklogJob(ctx, tx, s)
	})
	if err != nil {
		return false, fmt.Errorf("finish backlog batch: %w", err)
	}
	return again, nil
}

// ejectBacklog enqueues the backlog jobs whose ids idList (a JSON array)
// holds as River jobs of their own kinds, in tx.
func (db *DB) ejectBacklog(ctx context.Context, tx *sql.Tx, s memento.Scope, idList string) error {
	rows, err := tx.QueryContext(ctx, `SELECT kind, payload, max_attempts FROM backlog
		WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id`, idList)
	if err != nil {
		return fmt.Errorf("read failed backlog jobs: %w", err)
	}
	var params []river.InsertManyParams
	for rows.Next() {
		var kind, payload string
		var attempts int
		if err := rows.Scan(&kind, &payload, &attempts); err != nil {
			rows.Close()
			return fmt.Errorf("read failed backlog jobs: %w", err)
		}
		params = append(params, river.InsertManyParams{
			Args:       jobArgs{kind: kind, Tenant: s.Tenant, User: s.User, Payload: json.RawMessage(payload)},
			InsertOpts: &river.InsertOpts{MaxAttempts: attempts},
		})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read failed backlog jobs: %w", err)
	}
	if len(params) == 0 {
		return nil
	}
	if _, err := db.inserter.InsertManyTx(ctx, tx, params); err != nil {
		return fmt.Errorf("enqueue failed backlog jobs: %w", err)
	}
	return nil
}

// backlogLag reads the backlog's jobs by kind: how many, and when the
// oldest was enqueued; and, as the kind IntakeKind, the acknowledged
// messages still in the intake, whose jobs are yet to be enqueued.
func (db *DB) backlogLag(ctx context.Context) (map[string]memento.QueueLag, error) {
	out := map[string]memento.QueueLag{}
	if db.intake != nil {
		// First: a message that moves meanwhile is then counted
		// twice, never missed.
		l, err := db.intake.lag(ctx)
		if err != nil {
			return nil, err
		}
		if l.Waiting > 0 {
			out[IntakeKind] = l
		}
	}
	rows, err := db.read.QueryContext(ctx, `SELECT kind, count(*), min(created_at) FROM backlog GROUP BY kind`)
	if err != nil {
		return nil, fmt.Errorf("read the backlog's lag: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var l memento.QueueLag
		var oldest int64
		if err := rows.Scan(&l.Kind, &l.Waiting, &oldest); err != nil {
			return nil, fmt.Errorf("read the backlog's lag: %w", err)
		}
		l.Oldest = fromNanos(oldest)
		out[l.Kind] = l
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the backlog's lag: %w", err)
	}
	return out, nil
}
