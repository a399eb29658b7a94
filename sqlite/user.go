package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/memento-ai/memento"
)

// EnsureUser creates the user (and the tenant) if it does not exist and
// returns it. Errors: EINVALID for an empty id.
func (db *DB) EnsureUser(ctx context.Context, s memento.Scope) (*memento.User, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	var u *memento.User
	err = db.groupTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		u, err = db.ensureUser(ctx, tx, s)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("ensure user %s/%s: %w", s.Tenant, s.User, err)
	}
	return u, nil
}

// ensureUser inserts the tenant and the user unless they exist, and returns
// the stored user.
func (db *DB) ensureUser(ctx context.Context, tx *sql.Tx, s memento.Scope) (*memento.User, error) {
	return db.ensureUserAt(ctx, tx, s, db.now())
}

// ensureUserAt is ensureUser for a user created at the time at.
func (db *DB) ensureUserAt(ctx context.Context, tx *sql.Tx, s memento.Scope, at time.Time) (*memento.User, error) {
	now := nanos(at)
	if _, err := db.prepared(tx).ExecContext(ctx, `INSERT INTO tenants (id, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING`, s.Tenant, now); err != nil {
		return nil, fmt.Errorf("insert tenant: %w", err)
	}
	if _, err := db.prepared(tx).ExecContext(ctx, `INSERT INTO users (tenant_id, id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, s.Tenant, s.User, now); err != nil {
		return nil, fmt.Errorf("insert user: %w", err)
	}
	u := &memento.User{Tenant: s.Tenant, ID: s.User}
	var created int64
	if err := db.prepared(tx).QueryRowContext(ctx, `SELECT created_at FROM users WHERE tenant_id = ? AND id = ?`, s.Tenant, s.User).Scan(&created); err != nil {
		return nil, fmt.Errorf("read user: %w", err)
	}
	u.CreatedAt = fromNanos(created)
	return u, nil
}

// DeleteUser forgets everything about a user. Deleting the user row
// cascades to threads, messages (and their full-text entries), summaries
// and events. The user's jobs are deleted too: every job the store enqueues
// carries the tenant and user in its args ({"tenant": ..., "user": ...,
// "payload": ...}), so the jobs whose args name the user are removed,
// except those running at this moment, which finish (and find the user
// gone), and so are the jobs of the user's backlog. Errors: ENOTFOUND.
func (db *DB) DeleteUser(ctx context.Context, s memento.Scope) error {
	s, err := db.scope(ctx, s)
	if err != nil {
		return err
	}
	err = db.writeTx(ctx, func(tx *sql.Tx) error {
		res, err := db.prepared(tx).ExecContext(ctx, `DELETE FROM users WHERE tenant_id = ? AND id = ?`, s.Tenant, s.User)
		if err != nil {
			return fmt.Errorf("delete user row: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return memento.Errorf(memento.ENOTFOUND, "user %q not found", s.User)
		}
		if _, err := db.prepared(tx).ExecContext(ctx, `DELETE FROM river_job
			WHERE json_extract(args, '$.tenant') = ? AND json_extract(args, '$.user') = ? AND state <> 'running'`,
			s.Tenant, s.User); err != nil {
			return fmt.Errorf("delete jobs: %w", err)
		}
		if _, err := db.prepared(tx).ExecContext(ctx, `DELETE FROM backlog WHERE tenant_id = ? AND user_id = ?`, s.Tenant, s.User); err != nil {
			return fmt.Errorf("delete backlog: %w", err)
		}
		if _, err := db.prepared(tx).ExecContext(ctx, `DELETE FROM backlog_users WHERE tenant_id = ? AND user_id = ?`, s.Tenant, s.User); err != nil {
			return fmt.Errorf("delete backlog: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete user %s/%s: %w", s.Tenant, s.User, err)
	}
	return nil
}
