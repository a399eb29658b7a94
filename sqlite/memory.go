package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/memento-ai/memento"
)

// Compile-time checks that *DB provides the attribute-memory services.
var (
	_ memento.MemoryService     = (*DB)(nil)
	_ memento.MemoryWriter      = (*DB)(nil)
	_ memento.MemoryBatchWriter = (*DB)(nil)
	_ memento.RecallStore       = (*DB)(nil)
)

// memoryColumns are the columns scanMemoryRow reads, in its order.
const memoryColumns = `id, kind, attribute, mode, value, valid_from, valid_to, sources, thread_id, run_id, created_at, updated_at`

// scanMemoryRow reads one memory selected with memoryColumns, then extra.
func scanMemoryRow(r rowScanner, extra ...any) (memento.Memory, error) {
	var m memento.Memory
	var from, created, updated int64
	var to sql.NullInt64
	var sources string
	dest := append([]any{&m.ID, &m.Kind, &m.Attribute, &m.Mode, &m.Value, &from, &to, &sources, &m.Thread, &m.RunID, &created, &updated}, extra...)
	if err := r.Scan(dest...); err != nil {
		return m, err
	}
	m.ValidFrom, m.CreatedAt, m.UpdatedAt = fromNanos(from), fromNanos(created), fromNanos(updated)
	if to.Valid {
		t := fromNanos(to.Int64)
		m.ValidTo = &t
	}
	if err := json.Unmarshal([]byte(sources), &m.Sources); err != nil {
		return m, fmt.Errorf("decode sources of memory %s: %w", m.ID, err)
	}
	if m.Sources == nil {
		m.Sources = []string{}
	}
	return m, nil
}

// memVectorBytes encodes a vector as little-endian float32s; nil stays nil.
func memVectorBytes(v []float32) []byte {
	if v == nil {
		return nil
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// memVectorFrom decodes a vector stored by memVectorBytes.
func memVectorFrom(b []byte) []float32 {
	if len(b) == 0 || len(b)%4 != 0 {
		return nil
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// checkMemoryID validates a memory id from a request.
func checkMemoryID(id string) error {
	if strings.TrimSpace(id) == "" {
		return memento.Errorf(memento.EINVALID, "memory id is required")
	}
	return memento.CheckID("memory id", id)
}

// MessageByID returns one of the user's messages by its id. Errors:
// ENOTFOUND.
func (db *DB) MessageByID(ctx context.Context, s memento.Scope, id string) (*memento.Message, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	m, err := scanMessage(db.reads().QueryRowContext(ctx, `SELECT `+messageColumns+` FROM messages
		WHERE tenant_id = ? AND user_id = ? AND id = ?`, s.Tenant, s.User, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, memento.Errorf(memento.ENOTFOUND, "message %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("read message %s: %w", id, err)
	}
	return &m, nil
}

// Memories lists a user's memories matching f: semantic values before
// episodes, by attribute, each oldest first. Errors: EINVALID.
func (db *DB) Memories(ctx context.Context, s memento.Scope, f memento.MemoryFilter) ([]memento.Memory, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	limit := f.Limit
	if limit == 0 {
		limit = -1
	}
	// Conditions on mode and validity are written as literals (the values
	// are validated), so SQLite can use the partial index of current
	// semantic values: a prompt reads them on every turn.
	where := []string{"tenant_id = ?", "user_id = ?"}
	args := []any{s.Tenant, s.User}
	if f.Mode != "" {
		where = append(where, "mode = '"+f.Mode+"'")
	}
	if !f.All {
		where = append(where, "valid_to IS NULL")
	}
	if f.Kind != "" {
		where = append(where, "kind = '"+f.Kind+"'")
	}
	if f.Attribute != "" {
		where, args = append(where, "attribute = upper(?)"), append(args, f.Attribute)
	}
	if f.Thread != "" {
		where, args = append(where, "thread_id = ?"), append(args, f.Thread)
	}
	table := "memories"
	if f.Mode == memento.ModeSemantic && !f.All {
		// Without statistics the planner may walk the user's episodes by
		// time instead; the current semantic values are few.
		table = "memories INDEXED BY memories_one_current"
	}
	st, err := db.readStmt(ctx, `SELECT `+memoryColumns+` FROM `+table+` WHERE `+strings.Join(where, " AND ")+`
		ORDER BY mode DESC, attribute, valid_from, pk LIMIT ?`)
	if err != nil {
		return nil, fmt.Errorf("list memories: %w", err)
	}
	rows, err := st.QueryContext(ctx, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("list memories: %w", err)
	}
	defer rows.Close()
	out := []memento.Memory{}
	for rows.Next() {
		m, err := scanMemoryRow(rows)
		if err != nil {
			return nil, fmt.Errorf("list memories: %w", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list memories: %w", err)
	}
	return out, nil
}

// Memory returns one memory. Errors: ENOTFOUND.
func (db *DB) Memory(ctx context.Context, s memento.Scope, id string) (*memento.Memory, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	if err := checkMemoryID(id); err != nil {
		return nil, err
	}
	var m memento.Memory
	err = db.readTx(ctx, func(tx *sql.Tx) error {
		var err error
		m, err = loadMemory(ctx, tx, s, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read memory %s: %w", id, err)
	}
	return &m, nil
}

// loadMemory reads a memory in tx; a missing one is ENOTFOUND.
func loadMemory(ctx context.Context, tx *sql.Tx, s memento.Scope, id string) (memento.Memory, error) {
	var embedder string
	var emb []byte
	m, err := scanMemoryRow(tx.QueryRowContext(ctx, `SELECT `+prefixed("m.", memoryColumns)+`, coalesce(v.embedder, ''), v.embedding
		FROM memories AS m LEFT JOIN memory_vectors AS v ON v.memory_pk = m.pk
		WHERE m.tenant_id = ? AND m.user_id = ? AND m.id = ?`, s.Tenant, s.User, id), &embedder, &emb)
	if errors.Is(err, sql.ErrNoRows) {
		return m, memento.Errorf(memento.ENOTFOUND, "memory %q not found", id)
	} else if err != nil {
		return m, err
	}
	m.Embedder, m.Vector = embedder, memVectorFrom(emb)
	return m, nil
}

// MemoryHistory returns every version of the memory's attribute value,
// newest first: for a semantic memory, the semantic values of its
// attribute; for an episode, the episode alone. Errors: ENOTFOUND.
func (db *DB) MemoryHistory(ctx context.Context, s memento.Scope, id string) ([]memento.Memory, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	if err := checkMemoryID(id); err != nil {
		return nil, err
	}
	var out []memento.Memory
	err = db.readTx(ctx, func(tx *sql.Tx) error {
		m, err := loadMemory(ctx, tx, s, id)
		if err != nil {
			return err
		}
		m.Vector, m.Embedder = nil, ""
		if m.Mode != memento.ModeSemantic {
			out = []memento.Memory{m}
			return nil
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories
			WHERE tenant_id = ? AND user_id = ? AND attribute = ? AND mode = 'semantic'
			ORDER BY valid_from DESC, pk DESC`, s.Tenant, s.User, m.Attribute)
		if err != nil {
			return err
		}
		defer rows.Close()
		out = []memento.Memory{}
		for rows.Next() {
			v, err := scanMemoryRow(rows)
			if err != nil {
				return err
			}
			out = append(out, v)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("history of memory %s: %w", id, err)
	}
	return out, nil
}

// UpdateMemory changes a memory's value. A current semantic value keeps its
// id and validity starts now; its old value is kept as a closed version in
// its history. The embedding is cleared, since it described the old value:
// the caller stores a new one with PutMemoryVectors. Errors: ENOTFOUND,
// EINVALID, ECONFLICT for a superseded semantic value.
func (db *DB) UpdateMemory(ctx context.Context, s memento.Scope, id string, u memento.MemoryUpdate) (*memento.Memory, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	if err := checkMemoryID(id); err != nil {
		return nil, err
	}
	value := strings.TrimSpace(u.Value)
	if value == "" {
		return nil, memento.Errorf(memento.EINVALID, "value must not be empty")
	}
	var out memento.Memory
	err = db.writeTx(ctx, func(tx *sql.Tx) error {
		m, err := loadMemory(ctx, tx, s, id)
		if err != nil {
			return err
		}
		now := db.now()
		if m.Mode == memento.ModeSemantic {
			if !m.Current() {
				return memento.Errorf(memento.ECONFLICT, "memory %q was superseded; edit the current value of %s instead", id, m.Attribute)
			}
			if value == m.Value {
				out = m
				return nil
			}
			old := m
			old.ID = newID("mem_")
			old.ValidTo = &now
			if old.ValidFrom.After(now) {
				old.ValidFrom = now
			}
			// The closed copy takes the old value; the current row keeps
			// its id, so links to it stay valid.
			if _, err := tx.ExecContext(ctx, `UPDATE memories SET value = ?, valid_from = ?, updated_at = ?, periods = ?
				WHERE tenant_id = ? AND user_id = ? AND id = ?`, value, nanos(now), nanos(now), periodsColumn(value, now), s.Tenant, s.User, id); err != nil {
				return fmt.Errorf("update memory: %w", err)
			}
			// The closed copy is not current: nothing to index.
			var ix unindexed
			if err := insertMemory(ctx, tx, s, old, now, &ix); err != nil {
				return err
			}
			if err := ix.index(ctx, tx); err != nil {
				return err
			}
			m.Value, m.ValidFrom = value, now
		} else {
			if _, err := tx.ExecContext(ctx, `UPDATE memories SET value = ?, updated_at = ?, periods = ?
				WHERE tenant_id = ? AND user_id = ? AND id = ?`, value, nanos(now), periodsColumn(value, m.ValidFrom), s.Tenant, s.User, id); err != nil {
				return fmt.Errorf("update memory: %w", err)
			}
			m.Value = value
		}
		// The vector described the old value.
		if _, err := tx.ExecContext(ctx, `DELETE FROM memory_vectors WHERE memory_pk =
			(SELECT pk FROM memories WHERE tenant_id = ? AND user_id = ? AND id = ?)`, s.Tenant, s.User, id); err != nil {
			return fmt.Errorf("drop the old vector: %w", err)
		}
		m.UpdatedAt, m.Vector, m.Embedder = now, nil, ""
		out = m
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("update memory %s: %w", id, err)
	}
	out.Vector, out.Embedder = nil, ""
	return &out, nil
}

// DeleteMemory forgets a memory. Deleting a semantic value also deletes the
// versions of its attribute that it superseded (those valid before it), so
// "forget this" leaves no trace of the value in its history. Errors:
// ENOTFOUND.
func (db *DB) DeleteMemory(ctx context.Context, s memento.Scope, id string) error {
	s, err := db.scope(ctx, s)
	if err != nil {
		return err
	}
	if err := checkMemoryID(id); err != nil {
		return err
	}
	err = db.writeTx(ctx, func(tx *sql.Tx) error {
		m, err := loadMemory(ctx, tx, s, id)
		if err != nil {
			return err
		}
		if m.Mode == memento.ModeSemantic {
			if _, err := tx.ExecContext(ctx, `DELETE FROM memories WHERE tenant_id = ? AND user_id = ? AND attribute = ?
				AND mode = 'semantic' AND valid_to IS NOT NULL AND valid_to <= ?`, s.Tenant, s.User, m.Attribute, nanos(m.ValidFrom)); err != nil {
				return fmt.Errorf("delete superseded versions: %w", err)
			}
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM memories WHERE tenant_id = ? AND user_id = ? AND id = ?`, s.Tenant, s.User, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete memory %s: %w", id, err)
	}
	return nil
}

// SetMemoryMode overrides the mode of an attribute for the user ("*" for
// every attribute without an override of its own); an empty mode removes
// the override. Attribute names are stored upper-case. Errors: EINVALID.
func (db *DB) SetMemoryMode(ctx context.Context, s memento.Scope, attribute, mode string) error {
	s, err := db.scope(ctx, s)
	if err != nil {
		return err
	}
	attribute = strings.ToUpper(strings.TrimSpace(attribute))
	if attribute == "" || len(attribute) > maxIDLen {
		return memento.Errorf(memento.EINVALID, "attribute must be a name of at most %d bytes, or * for all", maxIDLen)
	}
	if mode != "" && !memento.ValidMode(mode) {
		return memento.Errorf(memento.EINVALID, "mode must be %q or %q (or empty to remove the override), got %q", memento.ModeSemantic, memento.ModeEpisodic, mode)
	}
	err = db.writeTx(ctx, func(tx *sql.Tx) error {
		if mode == "" {
			_, err := tx.ExecContext(ctx, `DELETE FROM memory_modes WHERE tenant_id = ? AND user_id = ? AND attribute = ?`, s.Tenant, s.User, attribute)
			return err
		}
		if _, err := db.ensureUser(ctx, tx, s); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO memory_modes (tenant_id, user_id, attribute, mode) VALUES (?, ?, ?, ?)
			ON CONFLICT (tenant_id, user_id, attribute) DO UPDATE SET mode = excluded.mode`, s.Tenant, s.User, attribute, mode)
		return err
	})
	if err != nil {
		return fmt.Errorf("set memory mode of %s: %w", attribute, err)
	}
	return nil
}

// MemoryModes returns the user's mode overrides by attribute.
func (db *DB) MemoryModes(ctx context.Context, s memento.Scope) (map[string]string, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	rows, err := db.reads().QueryContext(ctx, `SELECT attribute, mode FROM memory_modes WHERE tenant_id = ? AND user_id = ?`, s.Tenant, s.User)
	if err != nil {
		return nil, fmt.Errorf("read memory modes: %w", err)
	}
	defer rows.Close()
	modes := map[string]string{}
	for rows.Next() {
		var a, m string
		if err := rows.Scan(&a, &m); err != nil {
			return nil, fmt.Errorf("read memory modes: %w", err)
		}
		modes[a] = m
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read memory modes: %w", err)
	}
	return modes, nil
}

// Statements of insertMemory, prepared at Open (preparedWrites).
const (
	sqlInsertMemory = `INSERT INTO memories (tenant_id, user_id, id, kind, attribute, mode, value, valid_from, valid_to,
			sources, thread_id, run_id, created_at, updated_at, periods)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING pk`
	sqlInsertMemoryVector = `INSERT INTO memory_vectors (memory_pk, embedder, embedding) VALUES (?, ?, ?)`
	// sqlIndexMemories adds the memories of a JSON array of primary keys
	// that are current to memories_fts, as the trigger memories_fts_insert
	// did before migration 0019.
	sqlIndexMemories = `INSERT INTO memories_fts (rowid, value, attribute, scope)
		SELECT pk, value, attribute, 'u' || hex(tenant_id || char(31) || user_id) || '0' FROM memories
		WHERE pk IN (SELECT value FROM json_each(?)) AND valid_to IS NULL`
)

// Memories in the full-text index.
//
// memories_fts indexes the current memories. FTS5 holds the terms of the
// rows a transaction adds and writes them as a new segment of the index
// whenever a statement opens a statement savepoint, which SQLite does for
// every statement that fires a trigger or returns rows. Until migration
// 0019 a trigger indexed each memory as it was inserted, so a write that
// inserted ten memories among its other statements (their vectors, the
// run, the closes) left ten one-row segments, which the writer then wrote
// and merged (ftsmerge.go). A write now collects the memories it inserts
// (unindexed) and indexes them with one statement after the rest: one
// segment a write. Updates and deletes still go through their triggers.

// unindexed are the primary keys of the memories a write inserted and has
// not added to memories_fts yet.
type unindexed struct{ pks []int64 }

// add notes an inserted memory.
func (u *unindexed) add(pk int64) { u.pks = append(u.pks, pk) }

// index adds the noted memories that are still current to memories_fts,
// with one statement, which a write runs after its other statements. A
// memory that a later run of the same batch closed is left out: its
// close's trigger deleted it from the index before it was there, which
// FTS5 takes as a no-op (the index's row count and averages stay as they
// were).
func (u *unindexed) index(ctx context.Context, tx execQuerier) error {
	if len(u.pks) == 0 {
		return nil
	}
	pks, err := json.Marshal(u.pks)
	if err != nil {
		return fmt.Errorf("index memories: %w", err)
	}
	if _, err := tx.ExecContext(ctx, sqlIndexMemories, string(pks)); err != nil {
		return fmt.Errorf("index %d memories for search: %w", len(u.pks), err)
	}
	u.pks = u.pks[:0]
	return nil
}

// insertMemory inserts m for the user, with its embedding if it has one,
// and notes it in ix: the caller indexes it (ix.index).
func insertMemory(ctx context.Context, tx execQuerier, s memento.Scope, m memento.Memory, now time.Time, ix *unindexed) error {
	sources := m.Sources
	if sources == nil {
		sources = []string{}
	}
	src, err := json.Marshal(sources)
	if err != nil {
		return fmt.Errorf("encode sources of memory %s: %w", m.ID, err)
	}
	var to any
	if m.ValidTo != nil {
		to = nanos(*m.ValidTo)
	}
	created := m.CreatedAt
	if created.IsZero() {
		created = now
	}
	updated := m.UpdatedAt
	if updated.IsZero() {
		updated = now
	}
	var pk int64
	err = tx.QueryRowContext(ctx, sqlInsertMemory,
		s.Tenant, s.User, m.ID, memento.KindOf(m.Mode), strings.ToUpper(m.Attribute), m.Mode, m.Value, nanos(m.ValidFrom), to,
		string(src), m.Thread, m.RunID, nanos(created), nanos(updated), periodsColumn(m.Value, m.ValidFrom)).Scan(&pk)
	if err != nil {
		if isUniqueViolation(err) {
			return memento.WrapError(memento.ECONFLICT, err, "memory %q conflicts with a stored one (same id, or a second current value of %s)", m.ID, m.Attribute)
		}
		return fmt.Errorf("insert memory %s: %w", m.ID, err)
	}
	if m.Vector != nil && m.Embedder != "" {
		if _, err := tx.ExecContext(ctx, sqlInsertMemoryVector,
			pk, m.Embedder, memVectorBytes(m.Vector)); err != nil {
			return fmt.Errorf("insert vector of memory %s: %w", m.ID, err)
		}
	}
	if m.ValidTo == nil {
		ix.add(pk)
	}
	return nil
}

// isUniqueViolation reports whether err is SQLite's UNIQUE constraint
// failure.
func isUniqueViolation(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// checkMemoryWrite validates a pipeline write before anything is stored.
func checkMemoryWrite(w memento.MemoryWrite) error {
	if w.Message.ID == "" {
		return memento.Errorf(memento.EINVALID, "the write names no message")
	}
	for i, m := range w.Insert {
		if err := memento.CheckID(fmt.Sprintf("insert[%d]: memory id", i), m.ID); err != nil {
			return err
		}
		if err := m.CheckTimes(fmt.Sprintf("insert[%d]: memory", i)); err != nil {
			return err
		}
		switch {
		case !memento.ValidMode(m.Mode):
			return memento.Errorf(memento.EINVALID, "insert[%d]: mode must be %q or %q, got %q", i, memento.ModeSemantic, memento.ModeEpisodic, m.Mode)
		case strings.TrimSpace(m.Attribute) == "":
			return memento.Errorf(memento.EINVALID, "insert[%d]: attribute is required", i)
		case strings.TrimSpace(m.Value) == "":
			return memento.Errorf(memento.EINVALID, "insert[%d]: value must not be empty", i)
		case m.ValidFrom.IsZero():
			return memento.Errorf(memento.EINVALID, "insert[%d]: validFrom is required", i)
		}
	}
	return nil
}

// Statements of WriteMemories, prepared at Open (preparedWrites).
const (
	sqlMessageOfRun = `SELECT pk, thread_id, at FROM messages WHERE tenant_id = ? AND user_id = ? AND id = ?`
	sqlRunCount     = `SELECT count(*) FROM memory_runs WHERE tenant_id = ? AND user_id = ? AND message_id = ?`
	sqlCurrentValue = `SELECT id, value FROM memories WHERE tenant_id = ? AND user_id = ? AND attribute = ?
				AND mode = 'semantic' AND valid_to IS NULL`
	sqlCloseMemory = `UPDATE memories SET valid_to = max(valid_from, ?), updated_at = ?
				WHERE tenant_id = ? AND user_id = ? AND id = ? AND valid_to IS NULL`
	sqlInsertRun = `INSERT INTO memory_runs (tenant_id, user_id, message_id, thread_id, outcome, report, finished_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`
	sqlUpsertMessageVector = `INSERT INTO message_vectors (message_pk, embedder, embedding) VALUES (?, ?, ?)
				ON CONFLICT (message_pk) DO UPDATE SET embedder = excluded.embedder, embedding = excluded.embedding`
	sqlDeleteCheckpoint = `DELETE FROM graph_checkpoints WHERE tenant_id = ? AND user_id = ? AND key = ?`
)

// WriteMemories stores everything one pipeline run wrote in one
// transaction: it checks that every base value is still current (else
// ECONFLICT, and nothing is written), closes the superseded values at the
// message's time, inserts the new memories, records the run, stores the
// message's embedding and deletes the run's graph checkpoint. A message
// whose run is recorded already is left alone and false is returned, which
// makes a repeated run write nothing. Errors: ECONFLICT, EINVALID,
// ENOTFOUND when the message is gone (its user was forgotten).
func (db *DB) WriteMemories(ctx context.Context, s memento.Scope, w memento.MemoryWrite) (bool, error) {
	written, err := db.WriteMemoryBatch(ctx, s, []memento.MemoryWrite{w})
	if err != nil {
		return false, err
	}
	return written[0], nil
}

// WriteMemoryBatch applies ws in order in one transaction, each as
// WriteMemories applies one, all or nothing. Errors: ECONFLICT, EINVALID,
// ENOTFOUND.
func (db *DB) WriteMemoryBatch(ctx context.Context, s memento.Scope, ws []memento.MemoryWrite) ([]bool, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	reports := make([]string, len(ws))
	for i, w := range ws {
		if err := checkMemoryWrite(w); err != nil {
			return nil, err
		}
		report, err := json.Marshal(w.Run)
		if err != nil {
			return nil, fmt.Errorf("write memories of %s: encode run: %w", w.Message.ID, err)
		}
		reports[i] = string(report)
	}
	written := make([]bool, len(ws))
	if len(ws) == 0 {
		return written, nil
	}
	err = db.groupTx(ctx, func(ctx context.Context, sqlTx *sql.Tx) error {
		tx := db.prepared(sqlTx)
		var ix unindexed
		for i, w := range ws {
			var err error
			if written[i], err = db.writeMemories(ctx, tx, s, w, reports[i], &ix); err != nil {
				return fmt.Errorf("message %s: %w", w.Message.ID, err)
			}
		}
		return ix.index(ctx, tx)
	})
	if err != nil {
		if len(ws) == 1 {
			return nil, fmt.Errorf("write memories of %w", err)
		}
		return nil, fmt.Errorf("write memories of %d messages: %w", len(ws), err)
	}
	return written, nil
}

// writeMemories applies w in tx and reports whether it wrote it. The
// memories it inserts wait in ix to be indexed for search.
func (db *DB) writeMemories(ctx context.Context, tx stmtTx, s memento.Scope, w memento.MemoryWrite, report string, ix *unindexed) (bool, error) {
	var msgPK int64
	var thread string
	var at int64
	err := tx.QueryRowContext(ctx, sqlMessageOfRun, s.Tenant, s.User, w.Message.ID).Scan(&msgPK, &thread, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return false, memento.Errorf(memento.ENOTFOUND, "message %q not found", w.Message.ID)
	} else if err != nil {
		return false, fmt.Errorf("look up message: %w", err)
	}
	var n int
	if err := tx.QueryRowContext(ctx, sqlRunCount, s.Tenant, s.User, w.Message.ID).Scan(&n); err != nil {
		return false, fmt.Errorf("look up run: %w", err)
	}
	if n > 0 {
		return false, nil // processed before: a repeat changes nothing
	}
	for attr, base := range w.Base {
		var cur memento.MemoryBase
		err := tx.QueryRowContext(ctx, sqlCurrentValue, s.Tenant, s.User, strings.ToUpper(attr)).Scan(&cur.ID, &cur.Value)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return false, fmt.Errorf("read current %s: %w", attr, err)
		}
		if cur != base {
			return false, memento.Errorf(memento.ECONFLICT, "the current value of %s changed while the message was processed", attr)
		}
	}
	now := db.now()
	closeAt := fromNanos(at)
	for _, c := range w.Close {
		res, err := tx.ExecContext(ctx, sqlCloseMemory, nanos(closeAt), nanos(now), s.Tenant, s.User, c.ID)
		if err != nil {
			return false, fmt.Errorf("close memory %s: %w", c.ID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return false, err
		} else if n != 1 {
			return false, memento.Errorf(memento.ECONFLICT, "memory %q of %s is no longer current", c.ID, c.Attribute)
		}
	}
	for _, m := range w.Insert {
		if m.Thread == "" {
			m.Thread = thread
		}
		if err := insertMemory(ctx, tx, s, m, now, ix); err != nil {
			return false, err
		}
	}
	if _, err := tx.ExecContext(ctx, sqlInsertRun, s.Tenant, s.User, w.Message.ID, thread, w.Run.Outcome, report, nanos(now)); err != nil {
		return false, fmt.Errorf("record run: %w", err)
	}
	if w.Vector != nil {
		if _, err := tx.ExecContext(ctx, sqlUpsertMessageVector, msgPK, w.Embedder, memVectorBytes(w.Vector)); err != nil {
			return false, fmt.Errorf("store message vector: %w", err)
		}
	}
	if w.Checkpoint != "" {
		if _, err := tx.ExecContext(ctx, sqlDeleteCheckpoint, s.Tenant, s.User, w.Checkpoint); err != nil {
			return false, fmt.Errorf("delete checkpoint: %w", err)
		}
	}
	return true, nil
}
