package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memento-ai/memento"
)

// The recall change log. Triggers append the key of every changed memory
// and message to recall_changes (migration 0001), in the transaction of
// the change; a message inserted is logged by the statement inserting it
// (migration 0019). A transaction's seq numbers are drawn when its rows are
// written, not when it commits, so across users the log's order is not
// the order of commits; but every write of one user holds that user's
// advisory lock from its first statement to its commit (userTx), so one
// user's changes are numbered in the order they commit. RecallDocs reads
// one user's changes only, in one snapshot, and answers with the largest
// seq of that user it saw: a later read, asking for what came after it,
// misses none of the user's changes, whichever process made them.
//
// Freshness across processes: a write committed on one server is in the
// log before its commit returns, so recall on another server sees it the
// next time its warm index asks the store (recall.Index asks before
// every recall of the user), with no polling delay of its own: the bound
// is the reader's own refresh, not a notification's latency.

// maxRecallChanges is how many changed rows of one user a change read
// loads one by one; past it, reading everything again is cheaper.
const maxRecallChanges = 2000

// RecallDocs returns the user's recall documents changed after the log
// position after, or all of them (Full) when after < 0, when the log was
// pruned past after, or when more than maxRecallChanges rows changed.
// Errors: EINVALID.
func (db *DB) RecallDocs(ctx context.Context, s memento.Scope, after int64) (*memento.RecallDocs, error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	// Most reads come from a warm index whose user has not changed since
	// its last read (every turn and context read asks): that answer
	// takes the one statement, outside a transaction, which spares a
	// BEGIN and a COMMIT, two of its three round trips.
	if after >= 0 {
		foreground(ctx)
		pos, err := readRecallPosition(ctx, db.pool, s)
		if err != nil {
			return nil, fmt.Errorf("recall documents of %s/%s: %w", s.Tenant, s.User, err)
		}
		if pos.current(after) {
			return &memento.RecallDocs{Through: max(pos.mine, pos.floor, after)}, nil
		}
	}
	var out *memento.RecallDocs
	err = db.readTx(ctx, func(tx pgx.Tx) error {
		out = &memento.RecallDocs{}
		pos, err := readRecallPosition(ctx, tx, s)
		if err != nil {
			return err
		}
		out.Through = max(pos.mine, pos.floor)
		// A position past the log's head is not this store's (a store
		// restored from elsewhere): read everything.
		if pos.valid(after) {
			if pos.current(after) {
				out.Through = max(out.Through, after)
				return nil
			}
			full, err := db.recallChanges(ctx, tx, s, after, out)
			if err != nil || !full {
				return err
			}
			out.Docs, out.Removed = nil, nil
		}
		out.Full = true
		return allRecallDocs(ctx, tx, s, out)
	})
	if err != nil {
		return nil, fmt.Errorf("recall documents of %s/%s: %w", s.Tenant, s.User, err)
	}
	return out, nil
}

// recallPosition is where the change log stands: the position it was
// pruned to (floor), its newest change (head) and the user's (mine).
type recallPosition struct{ floor, head, mine int64 }

// readRecallPosition reads the change log's position for the user s, in
// one statement.
func readRecallPosition(ctx context.Context, q querier, s memento.Scope) (recallPosition, error) {
	var p recallPosition
	if err := q.QueryRow(ctx, `SELECT pruned,
			coalesce((SELECT max(seq) FROM recall_changes), 0),
			coalesce((SELECT max(seq) FROM recall_changes WHERE tenant_id = $1 AND user_id = $2), 0)
		FROM recall_change_floor WHERE id = 1`, s.Tenant, s.User).Scan(&p.floor, &p.head, &p.mine); err != nil {
		return p, fmt.Errorf("read change log position: %w", err)
	}
	return p, nil
}

// valid reports whether a reader's position after is one of this log's:
// not pruned away, and not past its head (a store restored from
// elsewhere).
func (p recallPosition) valid(after int64) bool {
	return after >= 0 && after >= p.floor && after <= max(p.head, p.floor)
}

// current reports whether a reader at after has every change of the user.
func (p recallPosition) current(after int64) bool { return p.valid(after) && after >= p.mine }

const (
	recallDocMemoryColumns  = memoryCandidateColumns + `, m.pk, m.valid_to IS NULL`
	recallDocMessageColumns = messageCandidateColumns + `, m.pk, EXISTS (SELECT 1 FROM memory_runs AS r
		WHERE r.tenant_id = m.tenant_id AND r.user_id = m.user_id AND r.message_id = m.id AND r.outcome = 'rejected')`
)

// allRecallDocs reads every current memory and every message of the user.
func allRecallDocs(ctx context.Context, tx pgx.Tx, s memento.Scope, out *memento.RecallDocs) error {
	rows, err := tx.Query(ctx, `SELECT `+recallDocMemoryColumns+` FROM memories AS m
		LEFT JOIN memory_vectors AS v ON v.memory_pk = m.pk
		WHERE m.tenant_id = $1 AND m.user_id = $2 AND m.valid_to IS NULL`, s.Tenant, s.User)
	if err != nil {
		return err
	}
	if err := scanRecallDocs(rows, true, out); err != nil {
		return err
	}
	rows, err = tx.Query(ctx, `SELECT `+recallDocMessageColumns+` FROM messages AS m
		LEFT JOIN message_vectors AS v ON v.message_pk = m.pk
		WHERE m.tenant_id = $1 AND m.user_id = $2`, s.Tenant, s.User)
	if err != nil {
		return err
	}
	return scanRecallDocs(rows, false, out)
}

// recallChanges adds to out the user's documents changed after position
// after, and reports full when there are too many to read one by one.
func (db *DB) recallChanges(ctx context.Context, tx pgx.Tx, s memento.Scope, after int64, out *memento.RecallDocs) (full bool, err error) {
	rows, err := tx.Query(ctx, `SELECT kind = 'memory', pk FROM recall_changes
		WHERE tenant_id = $1 AND user_id = $2 AND seq > $3 ORDER BY seq LIMIT $4`, s.Tenant, s.User, after, 4*maxRecallChanges+1)
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
		{true, memKeys, `SELECT ` + recallDocMemoryColumns + ` FROM memories AS m
			LEFT JOIN memory_vectors AS v ON v.memory_pk = m.pk WHERE m.pk = ANY($1) AND m.tenant_id = $2 AND m.user_id = $3`},
		{false, msgKeys, `SELECT ` + recallDocMessageColumns + ` FROM messages AS m
			LEFT JOIN message_vectors AS v ON v.message_pk = m.pk WHERE m.pk = ANY($1) AND m.tenant_id = $2 AND m.user_id = $3`},
	} {
		if len(part.keys) == 0 {
			continue
		}
		rows, err := tx.Query(ctx, part.query, part.keys, s.Tenant, s.User)
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
func scanRecallDocs(rows pgx.Rows, memory bool, out *memento.RecallDocs) error {
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
// of the change log by default.
const DefaultRecallChangesKept = memento.DefaultRecallChangesKept

// pruneBatch is how many change-log rows one pruning transaction deletes.
const pruneBatch = 20000

// PruneRecallChanges deletes the change-log rows older than keep, in
// batches, and raises the log's floor, so that readers that last looked
// before the deleted rows read everything again. Any one process may run
// it; several at once only repeat each other's work. It returns how many
// rows it deleted.
func (db *DB) PruneRecallChanges(ctx context.Context, keep time.Duration) (int64, error) {
	cutoff := time.Now().Add(-keep).UnixMilli()
	var total int64
	for {
		var n int64
		err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
			var last *int64
			if err := tx.QueryRow(ctx, `SELECT max(seq) FROM (SELECT seq, at FROM recall_changes ORDER BY seq LIMIT $1) AS oldest WHERE at < $2`,
				pruneBatch, cutoff).Scan(&last); err != nil {
				return err
			}
			if last == nil {
				return nil
			}
			tag, err := tx.Exec(ctx, `DELETE FROM recall_changes WHERE seq <= $1`, *last)
			if err != nil {
				return err
			}
			n = tag.RowsAffected()
			_, err = tx.Exec(ctx, `UPDATE recall_change_floor SET pruned = greatest(pruned, $1) WHERE id = 1`, *last)
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
