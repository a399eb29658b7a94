package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
)

// The queue lease. River's own rescuer makes a running job available
// again only RescueStuckJobsAfter (the longest job timeout plus a minute)
// after it started; a server that dies mid-job would leave its jobs
// stalled that long. So every started queue registers in queue_processes
// under its River client id and renews its heartbeat every fifth of
// Options.QueueLease; when a queue starts and at each renewal, it makes
// available again (or fails, when their attempts are used up) the running
// jobs whose process has no row or a lease that expired, with an error
// saying so. A live process that cannot reach the database for a whole
// lease may have its jobs run twice; handlers are idempotent by message
// id, as they must be for River's retries anyway.

// DefaultQueueLease is how long a queue's heartbeat vouches for it.
const DefaultQueueLease = 15 * time.Second

// queueProcess is a started queue's registration.
type queueProcess struct {
	id     string
	lease  time.Duration
	cancel context.CancelFunc
	done   chan struct{}
}

// newQueueID names a queue process: its pid and random bytes.
func newQueueID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("memento-%d-%s", os.Getpid(), hex.EncodeToString(b[:]))
}

// registerQueue records the process and rescues the jobs of dead ones.
func (db *DB) registerQueue(ctx context.Context) (*queueProcess, error) {
	p := &queueProcess{id: newQueueID(), lease: db.opts.QueueLease}
	host, _ := os.Hostname()
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO queue_processes (id, pid, host, lease_ms) VALUES ($1, $2, $3, $4)
			ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()`, p.id, os.Getpid(), host, p.lease.Milliseconds()); err != nil {
			return err
		}
		_, err := db.rescueTx(ctx, tx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("register queue process: %w", err)
	}
	return p, nil
}

// rescueTx makes the running jobs of dead queue processes available again
// (failed, when out of attempts), forgets those processes, and returns how
// many jobs it rescued.
func (db *DB) rescueTx(ctx context.Context, tx pgx.Tx) (int, error) {
	rows, err := tx.Query(ctx, `WITH live AS (
			SELECT id FROM queue_processes WHERE heartbeat_at + lease_ms * interval '1 millisecond' >= now()),
		rescued AS (
			UPDATE river_job SET
				state = CASE WHEN attempt >= max_attempts THEN 'discarded'::river_job_state ELSE 'available'::river_job_state END,
				finalized_at = CASE WHEN attempt >= max_attempts THEN now() END,
				scheduled_at = now(),
				errors = array_append(errors, jsonb_build_object('at', now(), 'attempt', attempt, 'trace', '',
					'error', 'process died: queue process ' || coalesce(attempted_by[array_length(attempted_by, 1)], '(unknown)') || ' died while running the job'))
			WHERE state = 'running' AND coalesce(attempted_by[array_length(attempted_by, 1)], '') NOT IN (SELECT id FROM live)
			RETURNING id, kind, state::text),
		forgotten AS (DELETE FROM queue_processes WHERE id NOT IN (SELECT id FROM live))
		SELECT id, kind, state FROM rescued`)
	if err != nil {
		return 0, fmt.Errorf("rescue jobs of dead processes: %w", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id int64
		var kind, state string
		if err := rows.Scan(&id, &kind, &state); err != nil {
			return n, fmt.Errorf("rescue jobs of dead processes: %w", err)
		}
		n++
		db.logger.Warn("postgres: rescued a job whose process died", "job", id, "kind", kind, "state", state)
	}
	return n, rows.Err()
}

// RescueJobs makes the jobs of dead queue processes available again now,
// and returns how many it rescued.
func (db *DB) RescueJobs(ctx context.Context) (int, error) {
	var n int
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var err error
		n, err = db.rescueTx(ctx, tx)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("rescue jobs: %w", err)
	}
	return n, nil
}

// keepLease renews the process's lease until ctx ends or the client
// stops, then unregisters it.
func (db *DB) keepLease(ctx context.Context, p *queueProcess, stopped <-chan struct{}) {
	defer close(p.done)
	tick := time.NewTicker(max(p.lease/5, time.Millisecond))
	defer tick.Stop()
	host, _ := os.Hostname()
	for {
		select {
		case <-ctx.Done():
			db.unregisterQueue(p)
			return
		case <-stopped:
			db.unregisterQueue(p)
			return
		case <-tick.C:
			rctx, cancel := context.WithTimeout(ctx, p.lease)
			err := pgx.BeginFunc(rctx, db.pool, func(tx pgx.Tx) error {
				tag, err := tx.Exec(rctx, `UPDATE queue_processes SET heartbeat_at = now() WHERE id = $1`, p.id)
				if err != nil {
					return err
				}
				if tag.RowsAffected() == 0 {
					db.logger.Warn("postgres: the job queue lost its lease; jobs it was running may run twice", "queue", p.id)
					if _, err := tx.Exec(rctx, `INSERT INTO queue_processes (id, pid, host, lease_ms) VALUES ($1, $2, $3, $4)`,
						p.id, os.Getpid(), host, p.lease.Milliseconds()); err != nil {
						return err
					}
				}
				_, err = db.rescueTx(rctx, tx)
				return err
			})
			if err != nil && ctx.Err() == nil {
				db.logger.Error("postgres: job queue lease not renewed", "queue", p.id, "err", err)
			}
			cancel()
		}
	}
}

// unregisterQueue removes a stopped queue's row.
func (db *DB) unregisterQueue(p *queueProcess) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := db.pool.Exec(ctx, `DELETE FROM queue_processes WHERE id = $1`, p.id); err != nil {
		db.logger.Warn("postgres: stopped job queue not unregistered; its row expires with its lease", "queue", p.id, "err", err)
	}
}
