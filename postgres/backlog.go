package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/internal/backlog"
	"github.com/memento-ai/memento/internal/jobctx"
)

// The users' backlogs (memento.JobRequest.ByUser), as in package sqlite
// (see its backlog.go for why): a job enqueued by user is a row of
// backlog, and one River job of kind memento.JobBacklog takes what a user
// has accumulated, in one pass, with one claim and one transaction that
// records the outcome.
//
// The gate (ensureBacklogJob): backlog_users.job_id names the backlog job
// that will read the user's backlog next, waiting or running. An insert
// reads it with the row locked (an upsert), and enqueues a job only when
// that one has ended. A job names itself there when it claims the
// backlog; after each batch, in the transaction that records it, it
// locks the row, then either finds jobs left and runs another batch, or
// clears job_id and ends. An insert that holds the row commits first, and
// its jobs are found; one that comes after finds job_id cleared and
// enqueues a new backlog job. At most one backlog job of a user is
// pending at a time, and a job that has had its share (backlog.Rounds,
// backlog.Share) enqueues its successor and ends.
//
// The owner (claimBacklog): a batch runs while its queue process owns the
// user's row; any number of processes run batches, never two of one user
// at once. An owner whose heartbeat in queue_processes has expired, or
// which has no row, holds nothing, so the batch of a process that died
// runs again once its River job is rescued (lease.go). Within a process,
// batches of one user wait for each other on a mutex; across processes a
// batch that finds its user owned waits, polling.

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
		db.logger.Error("postgres: backlog handler registered after the queue started; it takes effect at the next Start")
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

// queueBacklog queues in b the insert of items into the user's backlog
// and the read of the backlog's job (backlogJobQuery), nothing when there
// are no items; readBacklogQueued reads their answers.
func queueBacklog(b *pgx.Batch, s memento.Scope, items []backlogItem) {
	if len(items) == 0 {
		return
	}
	kinds := make([]string, len(items))
	payloads := make([]string, len(items))
	attempts := make([]int32, len(items))
	for i, it := range items {
		kinds[i], payloads[i], attempts[i] = it.kind, string(it.payload), int32(it.maxAttempts)
	}
	b.Queue(`INSERT INTO backlog (tenant_id, user_id, kind, payload, max_attempts)
		SELECT $1, $2, k, p, a FROM unnest($3::text[], $4::text[], $5::int[]) WITH ORDINALITY AS t(k, p, a, n) ORDER BY n`,
		s.Tenant, s.User, kinds, payloads, attempts)
	b.Queue(backlogJobQuery, s.Tenant, s.User)
}

// readBacklogQueued reads the answers of queueBacklog's statements:
// whether the backlog's job has not ended (nil when there is none).
func readBacklogQueued(br pgx.BatchResults) (*bool, error) {
	if _, err := br.Exec(); err != nil {
		return nil, fmt.Errorf("enqueue jobs in the backlog: %w", err)
	}
	var waiting *bool
	if err := br.QueryRow().Scan(&waiting); err != nil {
		return nil, fmt.Errorf("read the backlog's job: %w", err)
	}
	return waiting, nil
}

// waitingJobStates are the River states of a backlog job that has not
// ended: waiting to run, or running (it reads the backlog again before it
// ends).
const waitingJobStates = `'available', 'scheduled', 'pending', 'retryable', 'running'`

// backlogJobQuery locks the user's row of backlog_users (an upsert, held
// until the transaction ends) and reads whether the backlog job it names
// has not ended: NULL when it names none, or one that is gone.
const backlogJobQuery = `WITH u AS (INSERT INTO backlog_users (tenant_id, user_id) VALUES ($1, $2)
		ON CONFLICT (tenant_id, user_id) DO UPDATE SET job_id = backlog_users.job_id RETURNING job_id)
	SELECT (SELECT j.state IN (` + waitingJobStates + `) FROM river_job j WHERE j.id = u.job_id) FROM u`

// ensureBacklogJob enqueues a backlog job of the user in tx unless the one
// that backlog_users names has not ended. It locks the user's row until
// tx ends.
func (db *DB) ensureBacklogJob(ctx context.Context, tx pgx.Tx, s memento.Scope) error {
	var waiting *bool
	if err := tx.QueryRow(ctx, backlogJobQuery, s.Tenant, s.User).Scan(&waiting); err != nil {
		return fmt.Errorf("read the backlog's job: %w", err)
	}
	return db.enqueueUnlessWaiting(ctx, tx, s, waiting)
}

// enqueueUnlessWaiting enqueues a backlog job of the user in tx unless
// waiting, backlogJobQuery's answer, says one has not ended: that one
// will read what was just added.
func (db *DB) enqueueUnlessWaiting(ctx context.Context, tx pgx.Tx, s memento.Scope, waiting *bool) error {
	if waiting != nil && *waiting {
		return nil
	}
	return db.enqueueBacklogJob(ctx, tx, s)
}

// enqueueBacklogJob enqueues a backlog job of the user in tx and names it
// in the user's row of backlog_users, which the caller has locked.
func (db *DB) enqueueBacklogJob(ctx context.Context, tx pgx.Tx, s memento.Scope) error {
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
	if _, err := tx.Exec(ctx, `UPDATE backlog_users SET job_id = $3 WHERE tenant_id = $1 AND user_id = $2`,
		s.Tenant, s.User, res[0].Job.ID); err != nil {
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
	// Its writes commit without waiting for the disk (DB.userTx).
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
		tag, err := db.pool.Exec(ctx, `UPDATE backlog_users SET owner = $3, job_id = $4
			WHERE tenant_id = $1 AND user_id = $2
			  AND (owner IS NULL OR owner = $3 OR NOT EXISTS (SELECT 1 FROM queue_processes q
				WHERE q.id = backlog_users.owner AND q.heartbeat_at + q.lease_ms * interval '1 millisecond' >= now()))`,
			s.Tenant, s.User, owner, jobID)
		if err != nil {
			return fmt.Errorf("claim backlog: %w", err)
		}
		if tag.RowsAffected() == 1 {
			return nil
		}
		var exists bool
		if err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM backlog_users WHERE tenant_id = $1 AND user_id = $2)`,
			s.Tenant, s.User).Scan(&exists); err != nil {
			return fmt.Errorf("claim backlog: %w", err)
		}
		if !exists {
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
	rows, err := db.pool.Query(ctx, `SELECT id, kind, payload, created_at FROM backlog
		WHERE tenant_id = $1 AND user_id = $2 ORDER BY id LIMIT $3`, s.Tenant, s.User, batch)
	if err != nil {
		return nil, fmt.Errorf("read backlog: %w", err)
	}
	jobs, err := collect(rows, func(r pgx.Rows) (memento.BacklogJob, error) {
		var j memento.BacklogJob
		var payload string
		err := r.Scan(&j.ID, &j.Kind, &payload, &j.CreatedAt)
		j.Payload, j.CreatedAt = json.RawMessage(payload), j.CreatedAt.UTC()
		return j, err
	})
	if err != nil {
		return nil, fmt.Errorf("read backlog: %w", err)
	}
	return jobs, nil
}

// finishBacklog records a batch of the backlog job jobID in one
// transaction: it deletes the jobs answered with nil and turns those
// answered with an error into River jobs of their own kind. Then, with the
// user's row locked, when jobs are left and more allows another round, it
// keeps the backlog and reports that the job runs again; otherwise it
// gives the backlog up and, when jobs are left, enqueues the next backlog
// job.
func (db *DB) finishBacklog(ctx context.Context, s memento.Scope, owner string, jobID int64, jobs []memento.BacklogJob, results []error, more bool) (bool, error) {
	var ids, failed []int64
	for i, err := range results {
		ids = append(ids, jobs[i].ID)
		if err != nil {
			failed = append(failed, jobs[i].ID)
			if !errors.Is(err, backlog.ErrNoHandler) {
				db.logger.Warn("postgres: a backlog job failed; it runs again as a job of its own", "user", s.User,
					"kind", jobs[i].Kind, "backlog", jobs[i].ID, "err", err)
			}
		}
	}
	var again bool
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		again = false
		if len(failed) > 0 {
			if err := db.ejectBacklog(ctx, tx, s, failed); err != nil {
				return err
			}
		}
		if len(ids) > 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM backlog WHERE id = ANY($1)`, ids); err != nil {
				return fmt.Errorf("delete done backlog jobs: %w", err)
			}
		}
		// The row's lock orders this with every insert of the user's
		// jobs: one that commits first is seen by the next statement.
		if _, err := tx.Exec(ctx, `SELECT 1 FROM backlog_users WHERE tenant_id = $1 AND user_id = $2 FOR UPDATE`, s.Tenant, s.User); err != nil {
			return fmt.Errorf("lock the backlog: %w", err)
		}
		var left bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM backlog WHERE tenant_id = $1 AND user_id = $2)`,
			s.Tenant, s.User).Scan(&left); err != nil {
			return fmt.Errorf("look for backlog jobs left: %w", err)
		}
		if left && more {
			again = true
			return nil
		}
		if _, err := tx.Exec(ctx, `UPDATE backlog_users SET owner = NULL, job_id = CASE WHEN job_id = $4 THEN NULL ELSE job_id END
			WHERE tenant_id = $1 AND user_id = $2 AND owner = $3`, s.Tenant, s.User, owner, jobID); err != nil {
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

// ejectBacklog enqueues the backlog jobs of ids as River jobs of their own
// kinds, in tx.
func (db *DB) ejectBacklog(ctx context.Context, tx pgx.Tx, s memento.Scope, ids []int64) error {
	rows, err := tx.Query(ctx, `SELECT kind, payload, max_attempts FROM backlog WHERE id = ANY($1) ORDER BY id`, ids)
	if err != nil {
		return fmt.Errorf("read failed backlog jobs: %w", err)
	}
	params, err := collect(rows, func(r pgx.Rows) (river.InsertManyParams, error) {
		var kind, payload string
		var attempts int
		err := r.Scan(&kind, &payload, &attempts)
		return river.InsertManyParams{
			Args:       jobArgs{kind: kind, Tenant: s.Tenant, User: s.User, Payload: json.RawMessage(payload)},
			InsertOpts: &river.InsertOpts{MaxAttempts: attempts},
		}, err
	})
	if err != nil {
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
// oldest was enqueued (by the database's clock).
func backlogLag(ctx context.Context, q querier) (map[string]memento.QueueLag, error) {
	rows, err := q.Query(ctx, `SELECT kind, count(*), min(created_at) FROM backlog GROUP BY kind`)
	if err != nil {
		return nil, fmt.Errorf("read the backlog's lag: %w", err)
	}
	lags, err := collect(rows, func(r pgx.Rows) (memento.QueueLag, error) {
		var l memento.QueueLag
		err := r.Scan(&l.Kind, &l.Waiting, &l.Oldest)
		l.Oldest = l.Oldest.UTC()
		return l, err
	})
	if err != nil {
		return nil, fmt.Errorf("read the backlog's lag: %w", err)
	}
	out := make(map[string]memento.QueueLag, len(lags))
	for _, l := range lags {
		out[l.Kind] = l
	}
	return out, nil
}
