package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/memento-ai/memento"
)

// UserExists reports whether the store knows the user. Errors: EINVALID.
func (db *DB) UserExists(ctx context.Context, s memento.Scope) (bool, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return false, err
	}
	var n int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE tenant_id = ? AND id = ?`, s.Tenant, s.User).Scan(&n); err != nil {
		return false, fmt.Errorf("look up user %s: %w", s.User, err)
	}
	return n > 0, nil
}

// Users lists the ids of a tenant's users in order.
func (db *DB) Users(ctx context.Context, tenant string) ([]string, error) {
	if tenant == "" {
		tenant = memento.DefaultTenant
	}
	if err := db.intake.settleAll(ctx); err != nil {
		return nil, err
	}
	rows, err := db.read.QueryContext(ctx, `SELECT id FROM users WHERE tenant_id = ? ORDER BY id`, tenant)
	if err != nil {
		return nil, fmt.Errorf("list users of %s: %w", tenant, err)
	}
	defer rows.Close()
	users := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("list users of %s: %w", tenant, err)
		}
		users = append(users, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list users of %s: %w", tenant, err)
	}
	return users, nil
}

// ChangedUsers returns the users whose data may have changed after since,
// in every tenant, each with the time of their newest change: those with a
// thread updated, a summary, an event or a profile change after it, and
// those a background job finished for (which covers what the jobs of other
// components write, such as memories and preferences), and those with
// messages acknowledged into the intake after it and not yet moved. It may list a user
// whose data did not change; it never misses one whose change was
// committed after since by these paths.
func (db *DB) ChangedUsers(ctx context.Context, since time.Time) (map[memento.Scope]time.Time, error) {
	t := nanos(since)
	// River's SQLite driver keeps finalized_at as UTC text with
	// milliseconds ("2025-01-02 03:04:05.678"), which sorts as it should:
	// a text bound a second early lets the index narrow the scan, and the
	// exact comparison follows.
	bound := since.Add(-time.Second).UTC().Format("2006-01-02 15:04:05.000")
	// The messages acknowledged into the intake and not yet moved
	// (Options.Intake) are changes too: once moved, their thread's time
	// is when they were acknowledged, which may be before a cursor set
	// meanwhile. Read first, so that a message that moves between the
	// two reads is counted twice, never missed.
	out := map[memento.Scope]time.Time{}
	if db.intake != nil {
		if err := db.intake.changedUsers(ctx, t, out); err != nil {
			return nil, fmt.Errorf("list changed users: %w", err)
		}
	}
	rows, err := db.read.QueryContext(ctx, `SELECT tenant, user, max(at) FROM (
		SELECT tenant_id AS tenant, user_id AS user, updated_at AS at FROM threads WHERE updated_at > ?1
		UNION ALL SELECT tenant_id, user_id, created_at FROM summaries WHERE created_at > ?1
		UNION ALL SELECT tenant_id, user_id, created_at FROM events WHERE created_at > ?1
		UNION ALL SELECT tenant_id, user_id, updated_at FROM profiles WHERE updated_at > ?1
		UNION ALL SELECT coalesce(json_extract(args, '$.tenant'), ''), json_extract(args, '$.user'),
				CAST(unixepoch(finalized_at, 'subsec') * 1000000000 AS INTEGER) FROM river_job
			WHERE state = 'completed' AND finalized_at IS NOT NULL AND finalized_at >= ?2
			AND CAST(unixepoch(finalized_at, 'subsec') * 1000000000 AS INTEGER) > ?1
			AND json_extract(args, '$.user') IS NOT NULL AND json_extract(args, '$.user') <> ''
		) GROUP BY tenant, user`, t, bound)
	if err != nil {
		return nil, fmt.Errorf("list changed users: %w", err)
	}
	if err := scanChangedUsers(rows, out); err != nil {
		return nil, fmt.Errorf("list changed users: %w", err)
	}
	return out, nil
}

// scanChangedUsers reads rows of (tenant, user, nanoseconds) into out,
// keeping the latest time of each user, and closes rows.
func scanChangedUsers(rows *sql.Rows, out map[memento.Scope]time.Time) error {
	defer rows.Close()
	for rows.Next() {
		var s memento.Scope
		var at int64
		if err := rows.Scan(&s.Tenant, &s.User, &at); err != nil {
			return err
		}
		if s.Tenant == "" {
			s.Tenant = memento.DefaultTenant
		}
		if prev, ok := out[s]; !ok || fromNanos(at).After(prev) {
			out[s] = fromNanos(at)
		}
	}
	return rows.Err()
}

// SnapshotCursor returns how far the write-behind of a snapshot target has
// looked for changes, or the zero time when it never ran.
func (db *DB) SnapshotCursor(ctx context.Context, target string) (time.Time, error) {
	var at int64
	err := db.read.QueryRowContext(ctx, `SELECT at FROM snapshot_cursors WHERE target = ?`, target).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil
	} else if err != nil {
		return time.Time{}, fmt.Errorf("read snapshot cursor of %s: %w", target, err)
	}
	return fromNanos(at), nil
}

// SetSnapshotCursor records how far the write-behind of a snapshot target
// has written every change.
func (db *DB) SetSnapshotCursor(ctx context.Context, target string, at time.Time) error {
	err := db.writeTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO snapshot_cursors (target, at) VALUES (?, ?)
			ON CONFLICT (target) DO UPDATE SET at = excluded.at`, target, nanos(at))
		return err
	})
	if err != nil {
		return fmt.Errorf("write snapshot cursor of %s: %w", target, err)
	}
	return nil
}
