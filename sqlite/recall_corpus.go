package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/memento-ai/memento"
)

var _ memento.RecallCorpus = (*DB)(nil)

// maxRecallChanges is how many changed rows of one user a change read
// loads one by one; past it, reading everything again is cheaper.
const maxRecallChanges = 2000

// RecallDocs returns the user's recall documents changed after the change
// log position after, or all of them (Full) when after < 0, when the log
// was pruned past after, or when more than maxRecallChanges rows changed.
// It reads one snapshot. Errors: EINVALID.
func (db *DB) RecallDocs(ctx context.Context, s memento.Scope, after int64) (*memento.RecallDocs, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	// Most reads find nothing changed: one statement, which SQLite runs
	// in a snapshot of its own, tells without a transaction.
	if after >= 0 {
		var floor, head int64
		var changed bool
		err := db.readPoolRow(ctx, `SELECT pruned, coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'recall_changes'), 0),
			EXISTS (SELECT 1 FROM recall_changes WHERE tenant_id = ? AND user_id = ? AND seq > ?)
			FROM recall_change_floor WHERE id = 1`, s.Tenant, s.User, after).Scan(&floor, &head, &changed)
		if err != nil {
			return nil, fmt.Errorf("recall documents of %s/%s: read change log position: %w", s.Tenant, s.User, err)
		}
		if after >= floor && after <= head && !changed {
			return &memento.RecallDocs{Through: head}, nil
		}
	}
	var out *memento.RecallDocs
	err = db.readTx(ctx, func(tx *sql.Tx) error {
		out = &memento.RecallDocs{}
		var floor int64
		err := db.readRow(ctx, tx, recallPositionSQL).Scan(&floor, &out.Through)
		if err != nil {
			return fmt.Errorf("read change log position: %w", err)
		}
		out.Through = max(out.Through, floor)
		// A position past the log's end is not this store's (a file
		// restored from a snapshot): read everything.
		if after >= 0 && after >= floor && after <= out.Through {
			if after == out.Through {
				return nil
			}
			full, err := db.recallChanges(ctx, tx, s, after, out)
			if err != nil || !full {
				return err
			}
			out.Docs, out.Removed = nil, nil
		}
		out.Full = true
		return db.allRecallDocs(ctx, tx, s, out)
	})
	if err != nil {
		return nil, fmt.Errorf("recall documents of %s/%s: %w", s.Tenant, s.User, err)
	}
	return out, nil
}

// recallPositionSQL reads the change log's floor and last position.
const recallPositionSQL = `SELECT pruned, coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'recall_changes'), 0)
	FROM recall_change_floor WHERE id = 1`

// readPoolRow runs a one-row read query on the read pool through a
// statement prepared once: the assembly of a prompt's context runs a few
// such small queries, and parsing each again cost more than running it.
func (db *DB) readPoolRow(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := db.readStmt(ctx, query)
	if err != nil {
		return db.read.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// readRow runs a one-row read query in tx through the statement prepared
// for it on the read pool, or, the first time, unprepared (txStmt).
func (db *DB) readRow(ctx context.Context, tx *sql.Tx, query string, args ...any) *sql.Row {
	if st := db.txStmt(ctx, tx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return tx.QueryRowContext(ctx, query, args...)
}

// recallDocMemoryColumns and recallDocMessageColumns read a recall
// document: the candidate's columns, the row key, and whether it is
// current (memories) or rejected (messages).
const (
	recallDocMemoryColumns  = memoryCandidateColumns + `, m.pk, m.valid_to IS NULL`
	recallDocMessageColumns = messageCandidateColumns + `, m.pk, EXISTS (SELECT 1 FROM memory_runs AS r
		WHERE r.tenant_id = m.tenant_id AND r.user_id = m.user_id AND r.message_id = m.id AND r.outcome = 'rejected')`
)

// allRecallDocs reads every current memory and every message of the user.
func (db *DB) allRecallDocs(ctx context.Context, tx *sql.Tx, s memento.Scope, out *memento.RecallDocs) error {
	rows, err := db.readQuery(ctx, tx, `SELECT `+recallDocMemoryColumns+` FROM memories AS m
		LEFT JOIN memory_vectors AS v ON v.memory_pk = m.pk
		WHERE m.tenant_id = ? AND m.user_id = ? AND m.valid_to IS NULL`, s.Tenant, s.User)
	if err != nil {
		return err
	}
	if err := scanRecallDocs(rows, true, out); err != nil {
		return err
	}
	rows, err = db.readQuery(ctx, tx, `SELECT `+recallDocMessageColumns+` FROM messages AS m
		LEFT JOIN message_vectors AS v ON v.message_pk = m.pk
		WHERE m.tenant_id = ? AND m.user_id = ?`, s.Tenant, s.User)
	if err != nil {
		return err
	}
	return scanRecallDocs(rows, false, out)
}

// recallChanges adds to out the user's documents changed after position
// after, and reports full when there are too many to read one by one.
func (db *DB) recallChanges(ctx context.Context, tx *sql.Tx, s memento.Scope, after int64, out *memento.RecallDocs) (full bool, err error) {
	rows, err := db.readQuery(ctx, tx, `SELECT kind = 'memory', pk FROM recall_changes
		WHERE tenant_id = ? AND user_id = ? AND seq > ? AND seq <= ? LIMIT ?`, s.Tenant, s.User, after, out.Through, 4*maxRecallChanges+1)
	if err != nil {
		return false, err
	}
	changed := map[memento.RecallKey]bool{}
	var memKeys, msgKeys []int64
	n := 0
	for rows.Next() {
		var k memento.RecallKey
		if err := rows.Scan(&k.Memory, &k.Key); err != nil {
			rows.Close()
			return false, err
		}
		n++
		if changed[k] {
			continue
		}
		changed[k] = true
		if k.Memory {
			memKeys = append(memKeys, k.Key)
		} else {
			msgKeys = append(msgKeys, k.Key)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, err
	}
	if n > 4*maxRecallChanges || len(changed) > maxRecallChanges {
		return true, nil
	}
	for _, part := range []struct {
		memory bool
		keys   []int64
		query  string
	}{
		{true, memKeys, `SELECT ` + recallDocMemoryColumns + ` FROM json_each(?) AS j CROSS JOIN memories AS m ON m.pk = j.value
			LEFT JOIN memory_vectors AS v ON v.memory_pk = m.pk WHERE m.tenant_id = ? AND m.user_id = ?`},
		{false, msgKeys, `SELECT ` + recallDocMessageColumns + ` FROM json_each(?) AS j CROSS JOIN messages AS m ON m.pk = j.value
			LEFT JOIN message_vectors AS v ON v.message_pk = m.pk WHERE m.tenant_id = ? AND m.user_id = ?`},
	} {
		if len(part.keys) == 0 {
			continue
		}
		list, err := json.Marshal(part.keys)
		if err != nil {
			return false, err
		}
		rows, err := db.readQuery(ctx, tx, part.query, string(list), s.Tenant, s.User)
		if err != nil {
			return false, err
		}
		before := len(out.Docs)
		if err := scanRecallDocs(rows, part.memory, out); err != nil {
			return false, err
		}
		found := map[int64]bool{}
		for _, d := range out.Docs[before:] {
			found[d.Key] = true
		}
		for _, k := range part.keys {
			if !found[k] {
				out.Removed = append(out.Removed, memento.RecallKey{Memory: part.memory, Key: k})
			}
		}
	}
	return false, nil
}

// scanRecallDocs appends the documents of rows to out and closes rows.
func scanRecallDocs(rows *sql.Rows, memory bool, out *memento.RecallDocs) error {
	defer rows.Close()
	for rows.Next() {
		d := memento.RecallDoc{Current: true}
		var err error
		if memory {
			d.Candidate, err = scanMemoryCandidate(rows, &d.Key, &d.Current)
		} else {
			d.Candidate, err = scanMessageCandidate(rows, &d.Key, &d.Rejected)
		}
		if err != nil {
			return err
		}
		out.Docs = append(out.Docs, d)
	}
	return rows.Err()
}

// DefaultRecallChangesKept is how long PruneRecallChanges keeps the rows
// of the recall change log by default. An index that looks at a user less
// often than that reads the user's documents again in full, which is
// correct, only slower.
const DefaultRecallChangesKept = memento.DefaultRecallChangesKept

// PruneRecallChanges deletes the rows of the recall change log older than
// keep, in batches so the writer is never held long, and raises the log's
// floor, so readers that last looked before the deleted rows read
// everything again. It returns how many rows it deleted.
func (db *DB) PruneRecallChanges(ctx context.Context, keep time.Duration) (int64, error) {
	// The changes of the messages acknowledged so far are pruned too.
	if err := db.intake.settleAll(ctx); err != nil {
		return 0, err
	}
	cutoff := time.Now().Add(-keep).UnixMilli()
	var total int64
	for {
		var n int64
		err := db.writeTx(ctx, func(tx *sql.Tx) error {
			var last sql.NullInt64
			if err := tx.QueryRowContext(ctx, `SELECT max(seq) FROM (SELECT seq, at FROM recall_changes ORDER BY seq LIMIT ?) WHERE at < ?`,
				pruneBatch, cutoff).Scan(&last); err != nil {
				return err
			}
			if !last.Valid {
				return nil
			}
			res, err := tx.ExecContext(ctx, `DELETE FROM recall_changes WHERE seq <= ?`, last.Int64)
			if err != nil {
				return err
			}
			if n, err = res.RowsAffected(); err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, `UPDATE recall_change_floor SET pruned = max(pruned, ?) WHERE id = 1`, last.Int64)
			return err
		})
		if err != nil {
			return total, fmt.Errorf("prune recall changes: %w", err)
		}
		total += n
		if n < pruneBatch {
			return total, nil
		}
	}
}

// pruneBatch is how many change-log rows one pruning transaction deletes.
const pruneBatch = 20000

// truncateRecallChanges drops the change-log rows written after position
// after in tx and raises the floor past them: a bulk load's rows are far
// too many to replay, so every reader reads its users again in full.
func truncateRecallChanges(ctx context.Context, tx *sql.Tx, after int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM recall_changes WHERE seq > ?`, after); err != nil {
		return fmt.Errorf("truncate recall changes: %w", err)
	}
	_, err := tx.ExecContext(ctx, `UPDATE recall_change_floor SET pruned =
		max(pruned, coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'recall_changes'), 0)) WHERE id = 1`)
	if err != nil {
		return fmt.Errorf("raise recall change floor: %w", err)
	}
	return nil
}

// recallChangeHead returns the last position of the change log.
func recallChangeHead(ctx context.Context, tx *sql.Tx) (int64, error) {
	var head int64
	err := tx.QueryRowContext(ctx, `SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'recall_changes'), 0)`).Scan(&head)
	return head, err
}
