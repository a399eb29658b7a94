package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/memento-ai/memento"
)

var _ memento.KeyStore = (*DB)(nil)

// CreateKey stores k under hash (memento.HashAPIKey of the key; the key
// itself is never stored). Errors: EINVALID for a key without id, tenant,
// hash or a valid role, ECONFLICT for an id or hash already stored.
func (db *DB) CreateKey(ctx context.Context, k memento.APIKey, hash string) error {
	switch {
	case k.ID == "" || hash == "":
		return memento.Errorf(memento.EINVALID, "a key needs an id and a hash")
	case !k.Role.Valid():
		return memento.Errorf(memento.EINVALID, "role must be admin, write or read, got %q", k.Role)
	}
	if err := memento.CheckID("tenant id", k.Tenant); err != nil {
		return err
	}
	created := k.CreatedAt
	if created.IsZero() {
		created = db.now()
	}
	err := db.writeTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO api_keys (id, hash, tenant_id, user_id, role, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
			k.ID, hash, k.Tenant, k.User, string(k.Role), nanos(created))
		if isUniqueViolation(err) {
			return memento.WrapError(memento.ECONFLICT, err, "key %q is already stored", k.ID)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("create key %s: %w", k.ID, err)
	}
	return nil
}

const keyColumns = `id, tenant_id, user_id, role, created_at, revoked_at`

// scanKey decodes a row of keyColumns, followed by the columns extra
// receives.
func scanKey(row interface{ Scan(...any) error }, extra ...any) (*memento.APIKey, error) {
	var (
		k       memento.APIKey
		role    string
		created int64
		revoked sql.NullInt64
	)
	if err := row.Scan(append([]any{&k.ID, &k.Tenant, &k.User, &role, &created, &revoked}, extra...)...); err != nil {
		return nil, err
	}
	k.Role = memento.KeyRole(role)
	k.CreatedAt = fromNanos(created)
	if revoked.Valid {
		t := fromNanos(revoked.Int64)
		k.RevokedAt = &t
	}
	return &k, nil
}

// KeyByHash returns the key stored under hash, revoked or not. Errors:
// ENOTFOUND.
func (db *DB) KeyByHash(ctx context.Context, hash string) (*memento.APIKey, error) {
	k, err := scanKey(db.reads().QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE hash = ?`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, memento.Errorf(memento.ENOTFOUND, "no such key")
	}
	if err != nil {
		return nil, fmt.Errorf("look up key: %w", err)
	}
	return k, nil
}

// Keys lists the keys of tenant (every tenant's when empty), revoked
// included, oldest first.
func (db *DB) Keys(ctx context.Context, tenant string) ([]memento.APIKey, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE ? = '' OR tenant_id = ? ORDER BY created_at, id`, tenant, tenant)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	defer rows.Close()
	var out []memento.APIKey
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, fmt.Errorf("list keys: %w", err)
		}
		out = append(out, *k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	return out, nil
}

// RevokeKey stops key id of tenant (of any tenant when tenant is empty)
// from working. A key of another tenant is ENOTFOUND, as if it did not
// exist. Errors: ENOTFOUND.
func (db *DB) RevokeKey(ctx context.Context, tenant, id string) error {
	err := db.writeTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ? AND (? = '' OR tenant_id = ?)`,
			nanos(db.now()), id, tenant, tenant)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return memento.Errorf(memento.ENOTFOUND, "key %q not found", id)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("revoke key %s: %w", id, err)
	}
	return nil
}

// HasKeys reports whether any key was ever created, revoked ones included.
func (db *DB) HasKeys(ctx context.Context) (bool, error) {
	var found bool
	if err := db.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM api_keys)`).Scan(&found); err != nil {
		return false, fmt.Errorf("look for keys: %w", err)
	}
	return found, nil
}
