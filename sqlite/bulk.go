package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/memento-ai/memento"
)

// Bulk writes many rows in one transaction with prepared statements, for
// loading synthetic data (memento bench) or large imports. It trusts its
// caller: ids must be unique, messages must carry their thread and
// sequence number, and nothing is validated, deduplicated or enqueued, so
// it is several times faster than the service methods. Rows are the same
// rows the service methods write, so everything reads them back as usual.
type Bulk struct {
	ctx   context.Context
	tx    *sql.Tx
	now   int64
	stmts map[string]*sql.Stmt
	rows  int

	// Messages and memories are buffered and written bulkRows at a time
	// with multi-row statements: their full-text triggers make SQLite
	// open a statement savepoint per statement, at which FTS5 flushes
	// its pending terms, so one row per statement would write a tiny
	// index segment (and a statement journal) per row.
	nextPK    int64
	nextMemPK int64
	messages  []bulkMessage
	memories  []memento.Memory
	memScope  []memento.Scope
}

type bulkMessage struct {
	s        memento.Scope
	m        memento.Message
	pk       int64
	vector   []float32
	embedder string
}

// bulkRows is how many messages or memories one multi-row statement
// writes: under SQLite's limit of 32,766 parameters.
const bulkRows = 500

// bulkCacheKiB is the writer's page cache during a Bulk call, as SQLite's
// negative cache_size in KiB: 128 MiB.
const bulkCacheKiB = -131072

// The statements of a Bulk, by name.
var bulkSQL = map[string]string{
	"tenant": `INSERT INTO tenants (id, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING`,
	"user":   `INSERT INTO users (tenant_id, id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`,
	"thread": `INSERT INTO threads (tenant_id, user_id, id, created_at, updated_at, last_seq, context, last_shown)
		VALUES (?, ?, ?, ?, ?, ?, ?, '[]')`,
	"vector": `INSERT INTO message_vectors (message_pk, embedder, embedding) VALUES (?, ?, ?)`,
	"run": `INSERT INTO memory_runs (tenant_id, user_id, message_id, thread_id, outcome, report, finished_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`,
	"event": `INSERT INTO events (tenant_id, user_id, id, type, title_id, value, at, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
	"preference": `INSERT INTO preferences (tenant_id, user_id, id, concept, kind, weight, evidence, sources,
			embedder, dim, vector, first_seen, last_seen, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
}

// Bulk runs fn in one write transaction and commits when it returns nil;
// on an error nothing fn wrote is kept. Keep each call to some tens of
// thousands of rows: the single writer is held for its duration.
func (db *DB) Bulk(ctx context.Context, fn func(b *Bulk) error) error {
	// Each multi-row statement that fires the full-text triggers keeps a
	// statement journal; in memory rather than in a temporary file it
	// costs no system calls. The setting cannot change inside a
	// transaction, so it is set on the single writer connection before
	// and put back after.
	var temp int64
	if err := db.write.QueryRowContext(ctx, `PRAGMA temp_store`).Scan(&temp); err != nil {
		return fmt.Errorf("bulk write: %w", err)
	}
	if _, err := db.write.ExecContext(ctx, `PRAGMA temp_store = MEMORY`); err != nil {
		return fmt.Errorf("bulk write: %w", err)
	}
	defer db.write.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf(`PRAGMA temp_store = %d`, temp))
	return db.writeTx(ctx, func(tx *sql.Tx) error {
		b := &Bulk{ctx: ctx, tx: tx, now: nanos(db.now()), stmts: map[string]*sql.Stmt{}}
		defer func() {
			for _, st := range b.stmts {
				st.Close()
			}
		}()
		if err := tx.QueryRowContext(ctx, `SELECT (SELECT coalesce(max(pk), 0) FROM messages), (SELECT coalesce(max(pk), 0) FROM memories)`).Scan(&b.nextPK, &b.nextMemPK); err != nil {
			return fmt.Errorf("bulk write: %w", err)
		}
		// A transaction of tens of thousands of rows outgrows the default
		// page cache, which then spills dirty pages to the log before the
		// commit; a larger cache for the call's duration keeps them.
		var cache int64
		if err := tx.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&cache); err != nil {
			return fmt.Errorf("bulk write: %w", err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA cache_size = %d`, bulkCacheKiB)); err != nil {
			return fmt.Errorf("bulk write: %w", err)
		}
		defer tx.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf(`PRAGMA cache_size = %d`, cache))
		if err := fn(b); err != nil {
			return fmt.Errorf("bulk write: %w", err)
		}
		if err := b.flush(); err != nil {
			return fmt.Errorf("bulk write: %w", err)
		}
		return nil
	})
}

// Rows counts the rows written so far in this transaction; buffered
// messages and memories count once Flush (or the end of the call) writes
// them.
func (b *Bulk) Rows() int { return b.rows }

// Flush writes the buffered messages and memories now; Bulk does at the
// end of its call and before any row that could refer to them.
func (b *Bulk) Flush() error { return b.flush() }

// exec runs the named statement, preparing it on first use. Pending
// messages and memories are written first, so rows that refer to them
// find them.
func (b *Bulk) exec(name string, args ...any) (sql.Result, error) {
	if err := b.flush(); err != nil {
		return nil, err
	}
	return b.run(name, bulkSQL[name], 1, args...)
}

// run executes a statement, prepared once per text, that writes rows
// rows.
func (b *Bulk) run(name, query string, rows int, args ...any) (sql.Result, error) {
	st := b.stmts[query]
	if st == nil {
		var err error
		if st, err = b.tx.PrepareContext(b.ctx, query); err != nil {
			return nil, fmt.Errorf("prepare %s: %w", name, err)
		}
		b.stmts[query] = st
	}
	res, err := st.ExecContext(b.ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("insert %s: %w", name, err)
	}
	b.rows += rows
	return res, nil
}

// multiRow returns an INSERT of n rows of cols columns.
func multiRow(prefix string, cols, n int) string {
	row := "(" + strings.Repeat("?, ", cols-1) + "?)"
	var sb strings.Builder
	sb.WriteString(prefix)
	sb.WriteString(" VALUES ")
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(row)
	}
	return sb.String()
}

// flush writes the buffered messages (then their vectors) and memories.
func (b *Bulk) flush() error {
	if len(b.messages) > 0 {
		msgs := b.messages
		b.messages = b.messages[:0]
		args := make([]any, 0, 10*len(msgs))
		for _, r := range msgs {
			m := r.m
			args = append(args, r.pk, r.s.Tenant, r.s.User, m.Thread, m.ID, m.Seq, string(m.Role), m.Text, nanos(m.At.UTC()), b.now)
		}
		q := multiRow(`INSERT INTO messages (pk, tenant_id, user_id, thread_id, id, seq, role, text, at, created_at)`, 10, len(msgs))
		if _, err := b.run("messages", q, len(msgs), args...); err != nil {
			return err
		}
		args = args[:0]
		n := 0
		for _, r := range msgs {
			if r.vector != nil {
				args = append(args, r.pk, r.embedder, memVectorBytes(r.vector))
				n++
			}
		}
		if n > 0 {
			if _, err := b.run("message vectors", multiRow(`INSERT INTO message_vectors (message_pk, embedder, embedding)`, 3, n), n, args...); err != nil {
				return err
			}
		}
	}
	if len(b.memories) > 0 {
		mems, scopes := b.memories, b.memScope
		b.memories, b.memScope = b.memories[:0], b.memScope[:0]
		args := make([]any, 0, 16*len(mems))
		for i, m := range mems {
			sources := m.Sources
			if sources == nil {
				sources = []string{}
			}
			src, err := json.Marshal(sources)
			if err != nil {
				return err
			}
			var to any
			if m.ValidTo != nil {
				to = nanos(*m.ValidTo)
			}
			s := scopes[i]
			args = append(args, b.nextMemPK+int64(i)+1, s.Tenant, s.User, m.ID, memento.KindOf(m.Mode), strings.ToUpper(m.Attribute), m.Mode, m.Value,
				nanos(m.ValidFrom), to, string(src), m.Thread, m.RunID, b.now, b.now)
		}
		q := multiRow(`INSERT INTO memories (pk, tenant_id, user_id, id, kind, attribute, mode, value, valid_from, valid_to,
			sources, thread_id, run_id, created_at, updated_at)`, 15, len(mems))
		if _, err := b.run("memories", q, len(mems), args...); err != nil {
			return err
		}
		args = args[:0]
		n := 0
		for i, m := range mems {
			if m.Vector != nil {
				args = append(args, b.nextMemPK+int64(i)+1, m.Embedder, memVectorBytes(m.Vector))
				n++
			}
		}
		b.nextMemPK += int64(len(mems))
		if n > 0 {
			if _, err := b.run("memory vectors", multiRow(`INSERT INTO memory_vectors (memory_pk, embedder, embedding)`, 3, n), n, args...); err != nil {
				return err
			}
		}
	}
	return nil
}

// User adds a user (and its tenant) unless it exists.
func (b *Bulk) User(s memento.Scope) error {
	if _, err := b.exec("tenant", s.Tenant, b.now); err != nil {
		return err
	}
	_, err := b.exec("user", s.Tenant, s.User, b.now)
	return err
}

// Thread adds a thread with an empty active context whose newest message
// has sequence number lastSeq, last updated at updated.
func (b *Bulk) Thread(s memento.Scope, thread string, lastSeq int64, updated time.Time) error {
	_, err := b.exec("thread", s.Tenant, s.User, thread, b.now, nanos(updated), lastSeq, emptyContextJSON)
	return err
}

// Message adds a message to its thread (m.Thread, m.Seq and m.ID set) and,
// when vector is not nil, its embedding for recall. The thread must have
// been added before.
func (b *Bulk) Message(s memento.Scope, m memento.Message, vector []float32, embedder string) error {
	b.nextPK++
	b.messages = append(b.messages, bulkMessage{s: s, m: m, pk: b.nextPK, vector: vector, embedder: embedder})
	if len(b.messages) >= bulkRows {
		return b.flush()
	}
	return nil
}

// Memory adds a memory as the pipeline stores it (Vector and Embedder
// included).
func (b *Bulk) Memory(s memento.Scope, m memento.Memory) error {
	b.memories = append(b.memories, m)
	b.memScope = append(b.memScope, s)
	if len(b.memories) >= bulkRows {
		return b.flush()
	}
	return nil
}

// Run adds the record of a pipeline run over a message, which marks the
// message as processed.
func (b *Bulk) Run(s memento.Scope, r memento.MemoryRun) error {
	report, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = b.exec("run", s.Tenant, s.User, r.Message, r.Thread, r.Outcome, string(report), nanos(r.FinishedAt))
	return err
}

// Event adds an event.
func (b *Bulk) Event(s memento.Scope, e memento.Event) error {
	_, err := b.exec("event", s.Tenant, s.User, e.ID, string(e.Type), e.TitleID, e.Value, nanos(e.At.UTC()), b.now)
	return err
}

// Preference adds a preference memory with its vector.
func (b *Bulk) Preference(s memento.Scope, p memento.Preference) error {
	sources, err := prefSourcesJSON(p.Sources)
	if err != nil {
		return err
	}
	_, err = b.exec("preference", s.Tenant, s.User, p.ID, p.Concept, p.Kind, p.Weight, max(p.Evidence, 1), sources,
		p.Embedder, len(p.Vector), encodePrefVector(p.Vector), nanos(p.FirstSeen.UTC()), nanos(p.LastSeen.UTC()), b.now, b.now)
	return err
}
