package postgres

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memento-ai/memento"
)

var _ memento.LagReporter = (*DB)(nil)

// QueueLag reads, per job kind, how many jobs have not ended and when the
// oldest of them was enqueued, River's and the backlogs' alike (a job
// waiting in its user's backlog counts under its own kind). It reads River's job table through River's
// index on state, so its cost follows the jobs not ended, not the
// history. Ages are measured by the database's clock, which stamped the
// jobs, so every process reports the same lag whatever its own clock says.
func (db *DB) QueueLag(ctx context.Context) (*memento.QueueLags, error) {
	var out *memento.QueueLags
	err := db.readTx(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = queueLag(ctx, tx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read the queue's lag: %w", err)
	}
	return out, nil
}

// queueLag reads the lag in q.
func queueLag(ctx context.Context, q querier) (*memento.QueueLags, error) {
	var now time.Time
	if err := q.QueryRow(ctx, `SELECT now()`).Scan(&now); err != nil {
		return nil, err
	}
	rows, err := q.Query(ctx, `SELECT kind, count(*), count(*) FILTER (WHERE state = 'running'), min(created_at)
		FROM river_job
		WHERE state IN ('available', 'scheduled', 'pending', 'retryable', 'running')
		GROUP BY kind ORDER BY kind COLLATE "C"`)
	if err != nil {
		return nil, err
	}
	now = now.UTC()
	out := &memento.QueueLags{At: now, Kinds: []memento.QueueLag{}}
	kinds, err := collect(rows, func(r pgx.Rows) (memento.QueueLag, error) {
		var l memento.QueueLag
		var oldest *time.Time
		if err := r.Scan(&l.Kind, &l.Waiting, &l.Running, &oldest); err != nil {
			return l, err
		}
		if oldest != nil {
			l.Oldest = oldest.UTC()
			l.OldestSeconds = max(0, now.Sub(l.Oldest).Seconds())
		}
		return l, nil
	})
	if err != nil {
		return nil, err
	}
	out.Kinds = append(out.Kinds, kinds...)
	backlog, err := backlogLag(ctx, q)
	if err != nil {
		return nil, err
	}
	return memento.MergeLags(out, backlog, now), nil
}

// JobStats counts every kind's jobs by state (completed jobs as long as
// River keeps them) and adds the queue's lag, both from one snapshot.
func (db *DB) JobStats(ctx context.Context) (*memento.JobStats, error) {
	var out *memento.JobStats
	err := db.readTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT kind, job_state, count(*)
			FROM (SELECT kind, `+jobStateSQL+` AS job_state FROM river_job) AS j
			GROUP BY kind, job_state ORDER BY kind COLLATE "C"`)
		if err != nil {
			return err
		}
		byKind := map[string]*memento.JobKindStats{}
		var kinds []string
		type count struct {
			kind, state string
			n           int
		}
		counts, err := collect(rows, func(r pgx.Rows) (count, error) {
			var c count
			err := r.Scan(&c.kind, &c.state, &c.n)
			return c, err
		})
		if err != nil {
			return err
		}
		for _, c := range counts {
			k := byKind[c.kind]
			if k == nil {
				k = &memento.JobKindStats{Kind: c.kind}
				byKind[c.kind] = k
				kinds = append(kinds, c.kind)
			}
			switch c.state {
			case memento.JobPending:
				k.Pending += c.n
			case memento.JobRunning:
				k.Running += c.n
			case memento.JobRetrying:
				k.Retrying += c.n
			case memento.JobCompleted:
				k.Completed += c.n
			default:
				k.Failed += c.n
			}
		}
		lag, err := queueLag(ctx, tx)
		if err != nil {
			return err
		}
		// A job waiting in its user's backlog is pending under its kind.
		backlog, err := backlogLag(ctx, tx)
		if err != nil {
			return err
		}
		for _, l := range backlog {
			k := byKind[l.Kind]
			if k == nil {
				k = &memento.JobKindStats{Kind: l.Kind}
				byKind[l.Kind] = k
				kinds = append(kinds, l.Kind)
			}
			k.Pending += l.Waiting
		}
		slices.Sort(kinds)
		for _, l := range lag.Kinds {
			if k := byKind[l.Kind]; k != nil {
				k.Waiting, k.OldestSeconds = l.Waiting, l.OldestSeconds
			}
		}
		out = &memento.JobStats{At: lag.At, Kinds: []memento.JobKindStats{}, Waiting: lag.Waiting, OldestSeconds: lag.OldestSeconds}
		for _, kind := range kinds {
			out.Kinds = append(out.Kinds, *byKind[kind])
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("count jobs: %w", err)
	}
	return out, nil
}
