package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// A started queue holds a lease on the jobs it runs. River marks a job it
// takes as running and appends its client id to the job's attempted_by;
// if the process dies, nothing ever finishes the job, and River's own
// rescuer takes it back only once it has run longer than the longest job
// timeout plus a margin (minutes). Instead, every started queue has a row
// in queue_processes under its client id and renews it every fifth of
// Options.QueueLease. Every queue on the file, at Start and at each
// renewal, makes available again each running job whose owner's lease
// ran out or which has no owner it knows, recording "process died" as the
// attempt's error and keeping the attempt (a job whose processes died as
// many times as it had attempts is failed, so a job that crashes its
// process cannot loop forever).
//
// A queue process that holds its process lock (lease_lock_unix.go; every
// Unix has flock(2)) is alive whatever its lease says, and one whose lock
// is free is dead whatever its lease says: the kernel drops the lock the
// moment the process dies. The lease decides only where there is no lock
// file to go by (no flock, a read-only directory).
//
// The bound: with the lock, the queue that starts next on the file
// rescues the jobs of a process that was killed at once, at its Start, and
// a queue already running does so at its next renewal, within a fifth of
// a lease (3s by default). With the lease alone, a process that dies
// renewed it at most a fifth of a lease before, and a queue on the file
// sees it run out within a fifth of a lease after it did, so a lost job is
// available again at most 1.2 leases after its process died (18s with the
// default lease of 15s). A worker then takes it within the poll interval.
//
// A live queue's jobs are never taken while it holds its lock or, without
// one, renews its lease. Without a lock it can fail to renew if its writer
// is held for a whole lease (a write transaction of more than 15s) while
// another queue on the file can write; its running jobs may then run
// twice, which River's at-least-once delivery allows anyway, and the queue
// logs that it lost its lease.

// queueProcess is a started queue's lease, its process lock
// (lease_lock_unix.go) and the goroutine renewing the lease.
type queueProcess struct {
	id    string
	lease time.Duration
	lock  *processLock // nil when none could be had
	// cancel and done stop and await keepLease; set once it runs.
	cancel context.CancelFunc
	done   chan struct{}
}

// nowMillisSQL is SQLite's clock in milliseconds, the one clock every
// process on the file stamps and judges leases by.
const nowMillisSQL = `CAST(unixepoch('subsec') * 1000 AS INTEGER)`

// newQueueID returns a fresh client id for a started queue: unique among
// every process that ever opens the file, and short enough for River (at
// most 100 bytes).
func newQueueID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return fmt.Sprintf("memento-%d-%s", os.Getpid(), hex.EncodeToString(b[:]))
}

// lockPath returns the path of the lock file of queue process id, "" for a
// memory database, which no other process can open.
func (db *DB) lockPath(id string) string {
	if db.path == ":memory:" {
		return ""
	}
	return db.path + "-queue-" + id + ".lock"
}

// registerQueue locks a new queue process's file, records the process and
// rescues the jobs of dead ones at once, before the queue takes any job:
// a job can carry the id in attempted_by only after the row exists, and
// the row exists only while the lock is held, so no other queue mistakes
// one of this queue's jobs for a lost one.
func (db *DB) registerQueue(ctx context.Context, id string) (*queueProcess, error) {
	p := &queueProcess{id: id, lease: db.opts.QueueLease}
	if path := db.lockPath(id); path != "" {
		lock, err := lockProcess(path)
		if err != nil {
			db.logger.Debug("sqlite: no process lock for the job queue; the lease alone tells when it died", "queue", id, "err", err)
		}
		p.lock = lock
	}
	host, _ := os.Hostname() // for people reading the table; "" will do
	err := db.writeTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO queue_processes (id, pid, host, started_at, heartbeat_at, lease_ms)
			VALUES (?, ?, ?, `+nowMillisSQL+`, `+nowMillisSQL+`, ?)`,
			id, os.Getpid(), host, db.opts.QueueLease.Milliseconds()); err != nil {
			return err
		}
		return db.rescueTx(ctx, tx)
	})
	if err != nil {
		if p.lock != nil {
			p.lock.release()
		}
		return nil, fmt.Errorf("register queue process: %w", err)
	}
	return p, nil
}

// renewLease renews the lease of the queue process id and rescues the
// jobs of dead ones, in one transaction.
//
// It goes through the group commit and commits without waiting for the
// disk, as the jobs' writes do, rather than holding the writer for a
// transaction and a sync of its own every fifth of a lease: a renewal
// matters to the processes running now, which see it at once, and one
// lost with a power loss went with the process it was renewing.
func (db *DB) renewLease(ctx context.Context, id string) error {
	err := db.commitAt(ctx, prioBackground, true, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE queue_processes SET heartbeat_at = `+nowMillisSQL+` WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			// Another queue judged this one dead, so the jobs it was
			// running may be running elsewhere too. Carry on with a
			// new lease: the jobs it takes from now on are its own.
			db.logger.Warn("sqlite: the job queue lost its lease; jobs it was running may run twice", "queue", id)
			host, _ := os.Hostname()
			if _, err := tx.ExecContext(ctx, `INSERT INTO queue_processes (id, pid, host, started_at, heartbeat_at, lease_ms)
				VALUES (?, ?, ?, `+nowMillisSQL+`, `+nowMillisSQL+`, ?)`,
				id, os.Getpid(), host, db.opts.QueueLease.Milliseconds()); err != nil {
				return err
			}
		}
		return db.rescueTx(ctx, tx)
	})
	if err != nil {
		return fmt.Errorf("renew queue lease: %w", err)
	}
	return nil
}

// ownerSQL is the queue process that took a job last: the newest entry of
// attempted_by, or "" when it has none or holds something that is not
// JSON (so that one damaged row cannot stop the rescue of every other).
const ownerSQL = `coalesce(CASE WHEN json_valid(attempted_by, 5) THEN json_extract(attempted_by, '$[#-1]') END, '')`

// lockState is what a queue process's lock file says of it.
type lockState int

const (
	lockUnknown lockState = iota // no lock file to go by: the lease decides
	lockHeld                     // alive, whatever its lease says
	lockGone                     // dead, whatever its lease says
)

// rescueTx makes available again, in tx, every running job whose owner
// died or is unknown, and forgets the dead owners. An owner is alive while
// it holds its process lock, dead once the lock is free, and, without a
// lock file to go by, alive while its lease runs. A job out of attempts is
// discarded instead, as River does when a job's last attempt fails.
func (db *DB) rescueTx(ctx context.Context, tx *sql.Tx) error {
	type process struct {
		id      string
		expired bool
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, heartbeat_at + lease_ms < `+nowMillisSQL+` FROM queue_processes`)
	if err != nil {
		return fmt.Errorf("rescue jobs of dead processes: %w", err)
	}
	var procs []process
	for rows.Next() {
		var p process
		if err := rows.Scan(&p.id, &p.expired); err != nil {
			rows.Close()
			return fmt.Errorf("rescue jobs of dead processes: %w", err)
		}
		procs = append(procs, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("rescue jobs of dead processes: %w", err)
	}
	live, dead := []string{}, []string{}
	for _, p := range procs {
		state := lockUnknown
		if path := db.lockPath(p.id); path != "" {
			state = probeProcess(path)
		}
		if state == lockHeld || state == lockUnknown && !p.expired {
			live = append(live, p.id)
		} else {
			dead = append(dead, p.id)
		}
	}
	liveJSON, err := json.Marshal(live)
	if err != nil {
		return fmt.Errorf("rescue jobs of dead processes: %w", err)
	}

	at := time.Now().UTC().Format(time.RFC3339Nano) // as River's attempt errors have it
	rescued, err := tx.QueryContext(ctx, `UPDATE river_job SET
			state = CASE WHEN attempt >= max_attempts THEN 'discarded' ELSE 'available' END,
			finalized_at = CASE WHEN attempt >= max_attempts THEN datetime('now', 'subsec') END,
			errors = jsonb_insert(coalesce(errors, jsonb('[]')), '$[#]', json_object(
				'at', ?, 'attempt', attempt, 'trace', '',
				'error', 'process died: queue process ' || iif(`+ownerSQL+` = '', '(unknown)', `+ownerSQL+`) || ' died while running the job'))
		WHERE state = 'running' AND `+ownerSQL+` NOT IN (SELECT value FROM json_each(?))
		RETURNING id, kind, state`, at, string(liveJSON))
	if err != nil {
		return fmt.Errorf("rescue jobs of dead processes: %w", err)
	}
	defer rescued.Close()
	for rescued.Next() {
		var id int64
		var kind, state string
		if err := rescued.Scan(&id, &kind, &state); err != nil {
			return fmt.Errorf("rescue jobs of dead processes: %w", err)
		}
		db.logger.Warn("sqlite: rescued a job whose process died", "job", id, "kind", kind, "state", state)
	}
	if err := rescued.Err(); err != nil {
		return fmt.Errorf("rescue jobs of dead processes: %w", err)
	}
	for _, id := range dead {
		if _, err := tx.ExecContext(ctx, `DELETE FROM queue_processes WHERE id = ?`, id); err != nil {
			return fmt.Errorf("forget dead queue process: %w", err)
		}
		if path := db.lockPath(id); path != "" {
			_ = os.Remove(path) // what a process that died without its lock left
		}
	}
	return nil
}

// RescueJobs makes available again, at once, the running jobs of queue
// processes that died (whose lease ran out, or which are unknown), as a
// started queue does by itself at Start and every fifth of its lease. It
// returns how many jobs it rescued.
func (db *DB) RescueJobs(ctx context.Context) (int, error) {
	var before, after int
	err := db.writeTx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM river_job WHERE state = 'running'`).Scan(&before); err != nil {
			return err
		}
		if err := db.rescueTx(ctx, tx); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT count(*) FROM river_job WHERE state = 'running'`).Scan(&after)
	})
	if err != nil {
		return 0, fmt.Errorf("rescue jobs: %w", err)
	}
	return before - after, nil
}

// keepLease renews the lease of p every fifth of its lease until the
// queue's client has stopped (stopped is closed) or p is cancelled, then
// removes the process's row.
func (db *DB) keepLease(ctx context.Context, p *queueProcess, stopped <-chan struct{}) {
	defer close(p.done)
	tick := time.NewTicker(max(p.lease/5, time.Millisecond))
	defer tick.Stop()
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
			if err := db.renewLease(rctx, p.id); err != nil && ctx.Err() == nil {
				db.logger.Error("sqlite: job queue lease not renewed", "queue", p.id, "err", err)
			}
			cancel()
		}
	}
}

// unregisterQueue removes the row of a queue process that stopped (its
// jobs have all finished or been handed back by River), then releases its
// lock: while the row exists, the lock is held.
func (db *DB) unregisterQueue(p *queueProcess) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := db.write.ExecContext(ctx, `DELETE FROM queue_processes WHERE id = ?`, p.id); err != nil {
		db.logger.Warn("sqlite: stopped job queue not unregistered; its row expires with its lease", "queue", p.id, "err", err)
		return // keep the lock, which goes with the process
	}
	if p.lock != nil {
		p.lock.release()
	}
}
