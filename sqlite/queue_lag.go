package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/memento-ai/memento"
)

// QueueLag reads, per job kind, how many jobs have not ended and when the
// oldest of them was enqueued, River's and the backlogs' alike (a job
// waiting in its user's backlog counts under its own kind). It reads
// River's job table through the index on state, so its cost follows the
// jobs not ended, not the history.
func (db *DB) QueueLag(ctx context.Context) (*memento.QueueLags, error) {
	backlog, err := db.backlogLag(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := db.read.QueryContext(ctx, `SELECT kind, count(*), sum(state = 'running'),
			CAST(round(min(unixepoch(created_at, 'subsec')) * 1000) AS INTEGER)
		FROM river_job
		WHERE state IN ('available', 'scheduled', 'pending', 'retryable', 'running')
		GROUP BY kind ORDER BY kind`)
	if err != nil {
		return nil, fmt.Errorf("read the queue's lag: %w", err)
	}
	defer rows.Close()
	now := time.Now().UTC()
	out := &memento.QueueLags{At: now, Kinds: []memento.QueueLag{}}
	for rows.Next() {
		var l memento.QueueLag
		var oldest sql.NullInt64
		if err := rows.Scan(&l.Kind, &l.Waiting, &l.Running, &oldest); err != nil {
			return nil, fmt.Errorf("read the queue's lag: %w", err)
		}
		if oldest.Valid {
			l.Oldest = time.UnixMilli(oldest.Int64).UTC()
		}
		out.Kinds = append(out.Kinds, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the queue's lag: %w", err)
	}
	return memento.MergeLags(out, backlog, now), nil
}

// JobStats counts every kind's jobs by state (completed jobs as long as
// River keeps them) and adds the queue's lag.
func (db *DB) JobStats(ctx context.Context) (*memento.JobStats, error) {
	backlog, err := db.backlogLag(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := db.read.QueryContext(ctx, `SELECT kind, job_state, count(*)
		FROM (SELECT kind, `+jobStateSQL+` AS job_state FROM river_job)
		GROUP BY kind, job_state ORDER BY kind`)
	if err != nil {
		return nil, fmt.Errorf("count jobs: %w", err)
	}
	defer rows.Close()
	byKind := map[string]*memento.JobKindStats{}
	var kinds []string
	for rows.Next() {
		var kind, state string
		var n int
		if err := rows.Scan(&kind, &state, &n); err != nil {
			return nil, fmt.Errorf("count jobs: %w", err)
		}
		k := byKind[kind]
		if k == nil {
			k = &memento.JobKindStats{Kind: kind}
			byKind[kind] = k
			kinds = append(kinds, kind)
		}
		switch state {
		case memento.JobPending:
			k.Pending += n
		case memento.JobRunning:
			k.Running += n
		case memento.JobRetrying:
			k.Retrying += n
		case memento.JobCompleted:
			k.Completed += n
		default:
			k.Failed += n
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count jobs: %w", err)
	}
	rows.Close()
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
	lag, err := db.QueueLag(ctx)
	if err != nil {
		return nil, err
	}
	for _, l := range lag.Kinds {
		if k := byKind[l.Kind]; k != nil {
			k.Waiting, k.OldestSeconds = l.Waiting, l.OldestSeconds
		}
	}
	out := &memento.JobStats{At: lag.At, Kinds: []memento.JobKindStats{}, Waiting: lag.Waiting, OldestSeconds: lag.OldestSeconds}
	for _, kind := range kinds {
		out.Kinds = append(out.Kinds, *byKind[kind])
	}
	return out, nil
}
