package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/memento-ai/memento"
)

var (
	_ memento.KeyCopier    = (*DB)(nil)
	_ memento.TenantLister = (*DB)(nil)
)

// Tenants lists every tenant with at least one user, in order.
func (db *DB) Tenants(ctx context.Context) ([]string, error) {
	rows, err := db.pool.Query(ctx, `SELECT tenant_id FROM users GROUP BY tenant_id ORDER BY tenant_id COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	out, err := collect(rows, func(r pgx.Rows) (string, error) {
		var t string
		err := r.Scan(&t)
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	return out, nil
}

// ExportKeys lists every key of every tenant with its hash, oldest first.
func (db *DB) ExportKeys(ctx context.Context) ([]memento.StoredKey, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+keyColumns+`, hash FROM api_keys ORDER BY created_at, id COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("export keys: %w", err)
	}
	out, err := collect(rows, func(r pgx.Rows) (memento.StoredKey, error) {
		var hash string
		k, err := scanKey(r, &hash)
		return memento.StoredKey{APIKey: k, Hash: hash}, err
	})
	if err != nil {
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
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		for _, k := range keys {
			var revoked *int64
			if k.RevokedAt != nil {
				r := nanos(*k.RevokedAt)
				revoked = &r
			}
			tag, err := tx.Exec(ctx, `INSERT INTO api_keys (id, hash, tenant_id, user_id, role, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING`,
				k.ID, k.Hash, k.Tenant, k.User, string(k.Role), nanos(k.CreatedAt), revoked)
			if isUniqueViolation(err) {
				return memento.WrapError(memento.ECONFLICT, err, "key %q: its hash is stored under another id", k.ID)
			}
			if err != nil {
				return err
			}
			n += int(tag.RowsAffected())
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("import keys: %w", err)
	}
	return n, nil
}

// Size is how many bytes the store's tables, River's included, take on
// disk with their indexes and TOAST: the relations of the schema the
// store uses.
func (db *DB) Size(ctx context.Context) (int64, error) {
	var n int64
	err := db.pool.QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
		FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
		WHERE ns.nspname = current_schema() AND c.relkind IN ('r', 'm')`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store size: %w", err)
	}
	return n, nil
}
