package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/graph"
)

// MemoryRun returns the record of the pipeline run over a message.
// Errors: ENOTFOUND when the message has not been processed.
func (db *DB) MemoryRun(ctx context.Context, s memento.Scope, message string) (*memento.MemoryRun, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	var report string
	err = db.reads().QueryRowContext(ctx, `SELECT report FROM memory_runs WHERE tenant_id = ? AND user_id = ? AND message_id = ?`,
		s.Tenant, s.User, message).Scan(&report)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, memento.Errorf(memento.ENOTFOUND, "no run over message %q: it was not processed (yet)", message)
	} else if err != nil {
		return nil, fmt.Errorf("read run of %s: %w", message, err)
	}
	var r memento.MemoryRun
	if err := json.Unmarshal([]byte(report), &r); err != nil {
		return nil, fmt.Errorf("decode run of %s: %w", message, err)
	}
	return &r, nil
}

// MemoryRuns lists the user's pipeline runs, newest first, at most limit
// of them (0: all).
func (db *DB) MemoryRuns(ctx context.Context, s memento.Scope, limit int) ([]memento.MemoryRun, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	if limit < 0 {
		return nil, memento.Errorf(memento.EINVALID, "limit must not be negative, got %d", limit)
	}
	if limit == 0 {
		limit = -1
	}
	var runs []memento.MemoryRun
	err = db.readTx(ctx, func(tx *sql.Tx) error {
		var err error
		runs, err = listRuns(ctx, tx, s, limit, true)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return runs, nil
}

// listRuns reads the user's runs, newest first or oldest first.
func listRuns(ctx context.Context, tx *sql.Tx, s memento.Scope, limit int, newestFirst bool) ([]memento.MemoryRun, error) {
	order := `finished_at, message_id`
	if newestFirst {
		order = `finished_at DESC, message_id DESC`
	}
	rows, err := tx.QueryContext(ctx, `SELECT report FROM memory_runs WHERE tenant_id = ? AND user_id = ?
		ORDER BY `+order+` LIMIT ?`, s.Tenant, s.User, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	runs := []memento.MemoryRun{}
	for rows.Next() {
		var report string
		if err := rows.Scan(&report); err != nil {
			return nil, err
		}
		var r memento.MemoryRun
		if err := json.Unmarshal([]byte(report), &r); err != nil {
			return nil, fmt.Errorf("decode run: %w", err)
		}
		runs = append(runs, r)
	}
	return runs, rows.Err()
}

// MemoryProcessed reports whether the message's pipeline run is recorded.
func (db *DB) MemoryProcessed(ctx context.Context, s memento.Scope, message string) (bool, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return false, err
	}
	var n int
	if err := db.reads().QueryRowContext(ctx, `SELECT count(*) FROM memory_runs WHERE tenant_id = ? AND user_id = ? AND message_id = ?`,
		s.Tenant, s.User, message).Scan(&n); err != nil {
		return false, fmt.Errorf("look up run of %s: %w", message, err)
	}
	return n > 0, nil
}

// EarlierUnprocessed lists the user's messages from the user (not the
// assistant) that came before the given message, by time and then by
// arrival, and have no recorded run: at most limit, oldest first. The
// pipeline processes them first, so semantic values change in the order
// things were said. Errors: ENOTFOUND for an unknown message.
func (db *DB) EarlierUnprocessed(ctx context.Context, s memento.Scope, message string, limit int) ([]memento.Message, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, memento.Errorf(memento.EINVALID, "limit must be positive, got %d", limit)
	}
	var out []memento.Message
	err = db.readTx(ctx, func(tx *sql.Tx) error {
		var pk, at int64
		err := tx.QueryRowContext(ctx, `SELECT pk, at FROM messages WHERE tenant_id = ? AND user_id = ? AND id = ?`,
			s.Tenant, s.User, message).Scan(&pk, &at)
		if errors.Is(err, sql.ErrNoRows) {
			return memento.Errorf(memento.ENOTFOUND, "message %q not found", message)
		} else if err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+prefixed("m.", messageColumns)+` FROM messages AS m
			WHERE m.tenant_id = ? AND m.user_id = ? AND m.role = 'user' AND (m.at < ? OR (m.at = ? AND m.pk < ?))
			  AND NOT EXISTS (SELECT 1 FROM memory_runs AS r
			                  WHERE r.tenant_id = m.tenant_id AND r.user_id = m.user_id AND r.message_id = m.id)
			ORDER BY m.at, m.pk LIMIT ?`, s.Tenant, s.User, at, at, pk, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		out = []memento.Message{}
		for rows.Next() {
			m, err := scanMessage(rows)
			if err != nil {
				return err
			}
			out = append(out, m)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("earlier unprocessed messages before %s: %w", message, err)
	}
	return out, nil
}

// Checkpointer returns a durable graph.Checkpointer for the runs of one
// user, storing checkpoints in the graph_checkpoints table (deleted with
// the user). Keys are the graph's (graph name, a slash, run id).
func (db *DB) Checkpointer(s memento.Scope) graph.Checkpointer {
	if s.Tenant == "" {
		s.Tenant = memento.DefaultTenant
	}
	return &checkpointer{db: db, s: s}
}

// checkpointer is the graph.Checkpointer of one user's runs.
type checkpointer struct {
	db *DB
	s  memento.Scope
}

// Load returns the checkpoint saved under key.
func (c *checkpointer) Load(ctx context.Context, key string) (*graph.Checkpoint, bool, error) {
	if err := c.db.intake.settle(ctx, c.s); err != nil {
		return nil, false, err
	}
	var cp graph.Checkpoint
	var state, trace string
	var done int
	var saved int64
	err := c.db.reads().QueryRowContext(ctx, `SELECT graph, next, state, trace, done, saved_at FROM graph_checkpoints
		WHERE tenant_id = ? AND user_id = ? AND key = ?`, c.s.Tenant, c.s.User, key).
		Scan(&cp.Graph, &cp.Next, &state, &trace, &done, &saved)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, fmt.Errorf("load checkpoint %s: %w", key, err)
	}
	cp.State = json.RawMessage(state)
	if err := json.Unmarshal([]byte(trace), &cp.Trace); err != nil {
		return nil, false, fmt.Errorf("load checkpoint %s: decode trace: %w", key, err)
	}
	cp.Done, cp.SavedAt = done != 0, fromNanos(saved)
	return &cp, true, nil
}

// Save stores cp under key, replacing an earlier checkpoint. The user
// must exist (the run's message belongs to it).
func (c *checkpointer) Save(ctx context.Context, key string, cp graph.Checkpoint) error {
	if len(key) > 4*maxIDLen {
		return memento.Errorf(memento.EINVALID, "checkpoint key is %d bytes, over the limit of %d", len(key), 4*maxIDLen)
	}
	if err := c.db.intake.settle(ctx, c.s); err != nil {
		return err
	}
	trace, err := json.Marshal(cp.Trace)
	if err != nil {
		return fmt.Errorf("save checkpoint %s: encode trace: %w", key, err)
	}
	state := string(cp.State)
	if strings.TrimSpace(state) == "" {
		state = "null"
	}
	done := 0
	if cp.Done {
		done = 1
	}
	err = c.db.groupTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO graph_checkpoints (tenant_id, user_id, key, graph, next, state, trace, done, saved_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (tenant_id, user_id, key) DO UPDATE SET graph = excluded.graph, next = excluded.next,
				state = excluded.state, trace = excluded.trace, done = excluded.done, saved_at = excluded.saved_at`,
			c.s.Tenant, c.s.User, key, cp.Graph, cp.Next, state, string(trace), done, nanos(cp.SavedAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("save checkpoint %s: %w", key, err)
	}
	return nil
}

// Delete forgets the checkpoint under key.
func (c *checkpointer) Delete(ctx context.Context, key string) error {
	if err := c.db.intake.settle(ctx, c.s); err != nil {
		return err
	}
	err := c.db.groupTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM graph_checkpoints WHERE tenant_id = ? AND user_id = ? AND key = ?`, c.s.Tenant, c.s.User, key)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete checkpoint %s: %w", key, err)
	}
	return nil
}

// VectorText is a text to embed for recall (memento.VectorText).
type VectorText = memento.VectorText

// MissingVectors lists the user's current memories and messages that have
// no embedding by the named embedder (none yet, or one by another
// embedder), at most limit of each, so a backfill can embed them.
func (db *DB) MissingVectors(ctx context.Context, s memento.Scope, embedder string, limit int) (memories, messages []VectorText, err error) {
	s, err = db.scope(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	if limit <= 0 {
		return nil, nil, memento.Errorf(memento.EINVALID, "limit must be positive, got %d", limit)
	}
	err = db.readTx(ctx, func(tx *sql.Tx) error {
		memories, err = vectorTexts(ctx, tx, `SELECT m.id, m.value FROM memories AS m LEFT JOIN memory_vectors AS v ON v.memory_pk = m.pk
			WHERE m.tenant_id = ? AND m.user_id = ? AND m.valid_to IS NULL AND (v.embedder IS NULL OR v.embedder <> ?) ORDER BY m.pk LIMIT ?`, s.Tenant, s.User, embedder, limit)
		if err != nil {
			return err
		}
		messages, err = vectorTexts(ctx, tx, `SELECT m.id, m.text FROM messages AS m LEFT JOIN message_vectors AS v ON v.message_pk = m.pk
			WHERE m.tenant_id = ? AND m.user_id = ? AND (v.embedder IS NULL OR v.embedder <> ?) ORDER BY m.pk LIMIT ?`, s.Tenant, s.User, embedder, limit)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("list texts without vectors: %w", err)
	}
	return memories, messages, nil
}

func vectorTexts(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]VectorText, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []VectorText{}
	for rows.Next() {
		var t VectorText
		if err := rows.Scan(&t.ID, &t.Text); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// PutVectors stores embeddings by the named embedder: of memories (by
// memory id) and of messages (by message id). Unknown ids are skipped.
func (db *DB) PutVectors(ctx context.Context, s memento.Scope, embedder string, memories, messages map[string][]float32) error {
	s, err := db.scope(ctx, s)
	if err != nil {
		return err
	}
	if embedder == "" {
		return memento.Errorf(memento.EINVALID, "embedder id is required")
	}
	err = db.writeTx(ctx, func(tx *sql.Tx) error {
		for id, v := range memories {
			if _, err := db.prepared(tx).ExecContext(ctx, `INSERT INTO memory_vectors (memory_pk, embedder, embedding)
				SELECT pk, ?, ? FROM memories WHERE tenant_id = ? AND user_id = ? AND id = ?
				ON CONFLICT (memory_pk) DO UPDATE SET embedder = excluded.embedder, embedding = excluded.embedding`,
				embedder, memVectorBytes(v), s.Tenant, s.User, id); err != nil {
				return fmt.Errorf("store vector of memory %s: %w", id, err)
			}
		}
		for id, v := range messages {
			if _, err := db.prepared(tx).ExecContext(ctx, `INSERT INTO message_vectors (message_pk, embedder, embedding)
				SELECT pk, ?, ? FROM messages WHERE tenant_id = ? AND user_id = ? AND id = ?
				ON CONFLICT (message_pk) DO UPDATE SET embedder = excluded.embedder, embedding = excluded.embedding`,
				embedder, memVectorBytes(v), s.Tenant, s.User, id); err != nil {
				return fmt.Errorf("store vector of message %s: %w", id, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store vectors: %w", err)
	}
	return nil
}
