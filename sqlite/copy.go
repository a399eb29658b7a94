package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"

	"github.com/memento-ai/memento"
)

var (
	_ memento.KeyCopier    = (*DB)(nil)
	_ memento.TenantLister = (*DB)(nil)
)

// Tenants lists every tenant with at least one user, in order.
func (db *DB) Tenants(ctx context.Context) ([]string, error) {
	if err := db.intake.settleAll(ctx); err != nil {
		return nil, err
	}
	rows, err := db.read.QueryContext(ctx, `SELECT DISTINCT tenant_id FROM users ORDER BY tenant_id`)
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, fmt.Errorf("list tenants: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	return out, nil
}

// ExportKeys lists every key of every tenant with its hash, oldest first.
func (db *DB) ExportKeys(ctx context.Context) ([]memento.StoredKey, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+keyColumns+`, hash FROM api_keys ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("export keys: %w", err)
	}
	defer rows.Close()
	out := []memento.StoredKey{}
	for rows.Next() {
		var hash string
		k, err := scanKey(rows, &hash)
		if err != nil {
			return nil, fmt.Errorf("export keys: %w", err)
		}
		out = append(out, memento.StoredKey{APIKey: *k, Hash: hash})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("export keys: %w", err)
	}
	return out, nil
}

// ImportKeys stores keys as they are, revoked ones revoked, in one
// transaction, and skips those whose id is already stored. Errors:
// EINVALID for a key without id, hash, tenant or a valid role; ECONFLICT
// for a hash stored under another id.
func (db *DB) ImportKeys(ctx context.Context, keys []memento.StoredKey) (int, error) {
	for _, k := range keys {
		if err := k.Validate(); err != nil {
			return 0, err
		}
	}
	n := 0
	err := db.writeTx(ctx, func(tx *sql.Tx) error {
		n = 0
		for _, k := range keys {
			var revoked any
			if k.RevokedAt != nil {
				revoked = nanos(*k.RevokedAt)
			}
			res, err := tx.ExecContext(ctx, `INSERT INTO api_keys (id, hash, tenant_id, user_id, role, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
				k.ID, k.Hash, k.Tenant, k.User, string(k.Role), nanos(k.CreatedAt), revoked)
			if isUniqueViolation(err) {
				return memento.WrapError(memento.ECONFLICT, err, "key %q: its hash is stored under another id", k.ID)
			}
			if err != nil {
				return err
			}
			if c, _ := res.RowsAffected(); c > 0 {
				n++
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("import keys: %w", err)
	}
	return n, nil
}

// Size is how many bytes the store takes on disk: the database file and
// its write-ahead log.
func (db *DB) Size(ctx context.Context) (int64, error) {
	var n int64
	for _, p := range []string{db.path, db.path + "-wal", db.path + "-shm"} {
		if st, err := os.Stat(p); err == nil {
			n += st.Size()
		}
	}
	return n, nil
}
