package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/memento-ai/memento"
)

// SetThreadContext replaces the active context of an existing thread.
// Errors: ENOTFOUND for an unknown thread, EINVALID for a bad scope, thread
// or context (year bounds outside 1870-2100 or reversed, negative count).
func (db *DB) SetThreadContext(ctx context.Context, s memento.Scope, thread string, ac memento.ActiveContext) error {
	s, err := db.scope(ctx, s)
	if err != nil {
		return err
	}
	if err := checkThread(thread); err != nil {
		return err
	}
	if err := checkContext(ac); err != nil {
		return err
	}
	ac = ac.Clone()
	b, err := json.Marshal(ac)
	if err != nil {
		return fmt.Errorf("set context of thread %s: %w", thread, err)
	}
	return db.groupTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := db.prepared(tx).ExecContext(ctx, `UPDATE threads SET context = ?, updated_at = ?
			WHERE tenant_id = ? AND user_id = ? AND id = ?`, string(b), nanos(db.now()), s.Tenant, s.User, thread)
		if err != nil {
			return fmt.Errorf("set context of thread %s: %w", thread, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return memento.Errorf(memento.ENOTFOUND, "thread %q of user %q not found", thread, s.User)
		}
		return nil
	})
}

func checkContext(ac memento.ActiveContext) error {
	for name, y := range map[string]*int{"minYear": ac.MinYear, "maxYear": ac.MaxYear} {
		if y != nil && (*y < memento.MinYear || *y > memento.MaxYear) {
			return memento.Errorf(memento.EINVALID, "%s must be a year between %d and %d, got %d", name, memento.MinYear, memento.MaxYear, *y)
		}
	}
	if ac.MinYear != nil && ac.MaxYear != nil && *ac.MinYear > *ac.MaxYear {
		return memento.Errorf(memento.EINVALID, "minYear %d is after maxYear %d", *ac.MinYear, *ac.MaxYear)
	}
	if ac.Count < 0 || ac.Count > memento.MaxPageSize {
		return memento.Errorf(memento.EINVALID, "count must be between 1 and %d, got %d", memento.MaxPageSize, ac.Count)
	}
	for i, id := range ac.ExcludedTitleIDs {
		if err := memento.CheckID(fmt.Sprintf("excludedTitleIds[%d]", i), id); err != nil {
			return err
		}
	}
	return nil
}
