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

// Bulk writes many rows in one transaction, for loading synthetic data
// (memento bench) or large imports. It trusts its caller: ids must be
// unique, messages must carry their thread and sequence number, and
// nothing is validated, deduplicated or enqueued, which makes it many
// times faster than the service methods. Rows are the same rows the
// service methods write, so everything reads them back as usual.
//
// Rows are buffered per table and written bulkRows at a time with
// multi-row statements. That matters most for the full-text indexes:
// SQLite opens a statement savepoint for each statement that fires a
// trigger or inserts several rows, at which FTS5 writes the terms it holds
// as a segment, so one row per statement would write a tiny index segment
// (and a statement journal) per row. Buffers are written in dependency
// order (messages, memories, the memories' index entries, runs, events,
// preferences) whenever one fills, before any user or thread, and at the
// end of the call.
type Bulk struct {
	ctx   context.Context
	tx    *sql.Tx
	now   int64
	stmts map[string]*sql.Stmt
	rows  int

	// nextPK and nextMemPK are the last primary keys of messages and
	// memories; Bulk assigns the keys itself so vectors can refer to
	// rows written in the same statement.
	nextPK, nextMemPK int64
	bufs              []*rowBuf
	messages, msgVecs *rowBuf
	memories, memVecs *rowBuf
	memIndex          *rowBuf // memories_fts: the current memories (migration 0019)
	runs, events      *rowBuf
	prefs             *rowBuf
}

// rowBuf holds the arguments of rows of one table not written yet.
type rowBuf struct {
	name   string
	insert string // "INSERT INTO t (a, b)"
	cols   int
	args   []any
	// entries marks a full-text index's entries, which Rows does not
	// count: they index rows counted already.
	entries bool
}

func (r *rowBuf) add(args ...any) { r.args = append(r.args, args...) }
func (r *rowBuf) len() int        { return len(r.args) / r.cols }

// bulkRows is how many rows one multi-row statement writes at most: under
// SQLite's limit of 32,766 parameters for every table here.
const bulkRows = 500

// bulkCacheKiB is the writer's page cache during a bulk transaction, and
// writerCacheSize the cache_size it returns to after (SQLite's default:
// 2,000 KiB).
const (
	bulkCacheKiB    = 256 << 10
	writerCacheSize = -2000
)

// Bulk runs fn in one write transaction and commits when it returns nil;
// on an error nothing fn wrote is kept. Keep each call to some tens of
// thousands of rows: the single writer is held for its duration.
func (db *DB) Bulk(ctx context.Context, fn func(b *Bulk) error) error {
	// The commit does not wait for the disk (synchronous NORMAL,
	// durability.go: a crash of the process loses nothing, a power loss
	// may lose the last bulk transactions but never corrupts). The
	// writer keeps statement journals in memory already (temp_store).
	// What the intake holds goes first, so that the bulk rows and the
	// appends acknowledged before them number a thread's messages in
	// that order.
	if err := db.intake.settleAll(ctx); err != nil {
		return err
	}
	db.settleWAL(ctx)
	// A bulk transaction changes more pages than the writer's page cache
	// holds (2 MB), and each page it evicts and changes again is read
	// back and written to the log once more: a larger cache for the
	// transaction's length made a build of 400,000 memories 24 % faster
	// (140 s to 107 s). The cache goes back to its size after the commit.
	defer func() {
		if _, err := db.write.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf(`PRAGMA cache_size = %d`, writerCacheSize)); err != nil {
			db.logger.Warn("sqlite: reset the writer's page cache after a bulk write", "err", err)
		}
	}()
	return db.writeTxAt(ctx, false, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA cache_size = %d`, -bulkCacheKiB)); err != nil {
			return fmt.Errorf("bulk write: %w", err)
		}
		b := newBulk(ctx, tx, nanos(db.now()))
		defer func() {
			for _, st := range b.stmts {
				st.Close()
			}
		}()
		if err := tx.QueryRowContext(ctx, `SELECT (SELECT coalesce(max(pk), 0) FROM messages), (SELECT coalesce(max(pk), 0) FROM memories)`).
			Scan(&b.nextPK, &b.nextMemPK); err != nil {
			return fmt.Errorf("bulk write: %w", err)
		}
		head, err := recallChangeHead(ctx, tx)
		if err != nil {
			return fmt.Errorf("bulk write: %w", err)
		}
		if err := fn(b); err != nil {
			return fmt.Errorf("bulk write: %w", err)
		}
		if err := b.flush(); err != nil {
			return fmt.Errorf("bulk write: %w", err)
		}
		// The triggers logged every row for recall's warm indexes; so many
		// changes are read again in full, not replayed.
		if err := truncateRecallChanges(ctx, tx, head); err != nil {
			return fmt.Errorf("bulk write: %w", err)
		}
		return nil
	})
}

func newBulk(ctx context.Context, tx *sql.Tx, now int64) *Bulk {
	b := &Bulk{ctx: ctx, tx: tx, now: now, stmts: map[string]*sql.Stmt{}}
	buf := func(name, insert string, cols int) *rowBuf {
		r := &rowBuf{name: name, insert: insert, cols: cols}
		b.bufs = append(b.bufs, r)
		return r
	}
	// In dependency order: vectors after their rows, runs after their
	// messages.
	b.messages = buf("messages", `INSERT INTO messages (pk, tenant_id, user_id, thread_id, id, seq, role, text, at, created_at, periods)`, 11)
	b.msgVecs = buf("message vectors", `INSERT INTO message_vectors (message_pk, embedder, embedding)`, 3)
	b.memories = buf("memories", `INSERT INTO memories (pk, tenant_id, user_id, id, kind, attribute, mode, value, valid_from, valid_to,
		sources, thread_id, run_id, created_at, updated_at, periods)`, 16)
	b.memVecs = buf("memory vectors", `INSERT INTO memory_vectors (memory_pk, embedder, embedding)`, 3)
	b.memIndex = buf("memory index", `INSERT INTO memories_fts (rowid, value, attribute, scope)`, 4)
	b.memIndex.entries = true
	b.runs = buf("runs", `INSERT INTO memory_runs (tenant_id, user_id, message_id, thread_id, outcome, report, finished_at)`, 7)
	b.events = buf("events", `INSERT INTO events (tenant_id, user_id, id, type, title_id, value, at, created_at)`, 8)
	b.prefs = buf("preferences", `INSERT INTO preferences (tenant_id, user_id, id, concept, kind, weight, evidence, sources,
		embedder, dim, vector, first_seen, last_seen, created_at, updated_at)`, 15)
	return b
}

// Rows counts the rows written so far in this transaction; buffered rows
// count once Flush (or the end of the call) writes them.
func (b *Bulk) Rows() int { return b.rows }

// Flush writes the buffered rows now.
func (b *Bulk) Flush() error { return b.flush() }

// flush writes every buffer, in dependency order.
func (b *Bulk) flush() error {
	for _, r := range b.bufs {
		if err := b.write(r); err != nil {
			return err
		}
	}
	return nil
}

// write writes a buffer's rows in statements of up to bulkRows rows.
func (b *Bulk) write(r *rowBuf) error {
	args := r.args
	for len(args) > 0 {
		n := min(len(args)/r.cols, bulkRows)
		rows := n
		if r.entries {
			rows = 0
		}
		if err := b.run(r.name, multiRow(r.insert, r.cols, n), rows, args[:n*r.cols]...); err != nil {
			return err
		}
		args = args[n*r.cols:]
	}
	clear(r.args)
	r.args = r.args[:0]
	return nil
}

// full writes the buffers when r holds a statement's worth of rows.
func (b *Bulk) full(r *rowBuf) error {
	if r.len() >= bulkRows {
		return b.flush()
	}
	return nil
}

// run executes a statement, prepared once per text, that writes rows
// rows.
func (b *Bulk) run(name, query string, rows int, args ...any) error {
	st := b.stmts[query]
	if st == nil {
		var err error
		if st, err = b.tx.PrepareContext(b.ctx, query); err != nil {
			return fmt.Errorf("prepare %s: %w", name, err)
		}
		b.stmts[query] = st
	}
	if _, err := st.ExecContext(b.ctx, args...); err != nil {
		return fmt.Errorf("insert %s: %w", name, err)
	}
	b.rows += rows
	return nil
}

// multiRow returns an INSERT of n rows of cols columns.
func multiRow(insert string, cols, n int) string {
	row := "(" + strings.Repeat("?, ", cols-1) + "?)"
	var sb strings.Builder
	sb.Grow(len(insert) + 8 + n*(len(row)+2))
	sb.WriteString(insert)
	sb.WriteString(" VALUES ")
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(row)
	}
	return sb.String()
}

// User adds a user (and its tenant) unless it exists.
func (b *Bulk) User(s memento.Scope) error {
	if err := b.flush(); err != nil {
		return err
	}
	if err := b.run("tenant", `INSERT INTO tenants (id, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING`, 1, s.Tenant, b.now); err != nil {
		return err
	}
	return b.run("user", `INSERT INTO users (tenant_id, id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, 1, s.Tenant, s.User, b.now)
}

// Thread adds a thread with an empty active context whose newest message
// has sequence number lastSeq, last updated at updated.
func (b *Bulk) Thread(s memento.Scope, thread string, lastSeq int64, updated time.Time) error {
	if err := b.flush(); err != nil {
		return err
	}
	return b.run("thread", `INSERT INTO threads (tenant_id, user_id, id, created_at, updated_at, last_seq, context, last_shown)
		VALUES (?, ?, ?, ?, ?, ?, ?, '[]')`, 1, s.Tenant, s.User, thread, b.now, nanos(updated), lastSeq, emptyContextJSON)
}

// Message adds a message to its thread (m.Thread, m.Seq and m.ID set) and,
// when vector is not nil, its embedding for recall. The user and the
// thread must have been added before.
func (b *Bulk) Message(s memento.Scope, m memento.Message, vector []float32, embedder string) error {
	b.nextPK++
	b.messages.add(b.nextPK, s.Tenant, s.User, m.Thread, m.ID, m.Seq, string(m.Role), m.Text, nanos(m.At.UTC()), b.now,
		periodsColumn(m.Text, m.At))
	if vector != nil {
		b.msgVecs.add(b.nextPK, embedder, memVectorBytes(vector))
	}
	return b.full(b.messages)
}

// Memory adds a memory as the pipeline stores it, with its embedding when
// m.Vector is set.
func (b *Bulk) Memory(s memento.Scope, m memento.Memory) error {
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
	b.nextMemPK++
	b.memories.add(b.nextMemPK, s.Tenant, s.User, m.ID, memento.KindOf(m.Mode), strings.ToUpper(m.Attribute), m.Mode, m.Value,
		nanos(m.ValidFrom), to, string(src), m.Thread, m.RunID, b.now, b.now, periodsColumn(m.Value, m.ValidFrom))
	if m.Vector != nil {
		b.memVecs.add(b.nextMemPK, m.Embedder, memVectorBytes(m.Vector))
	}
	if m.ValidTo == nil {
		b.memIndex.add(b.nextMemPK, m.Value, strings.ToUpper(m.Attribute), scopeColumn(s))
	}
	return b.full(b.memories)
}

// Run adds the record of a pipeline run over a message, which marks the
// message as processed.
func (b *Bulk) Run(s memento.Scope, r memento.MemoryRun) error {
	report, err := json.Marshal(r)
	if err != nil {
		return err
	}
	b.runs.add(s.Tenant, s.User, r.Message, r.Thread, r.Outcome, string(report), nanos(r.FinishedAt))
	return b.full(b.runs)
}

// Event adds an event.
func (b *Bulk) Event(s memento.Scope, e memento.Event) error {
	b.events.add(s.Tenant, s.User, e.ID, string(e.Type), e.TitleID, e.Value, nanos(e.At.UTC()), b.now)
	return b.full(b.events)
}

// Preference adds a preference memory with its vector.
func (b *Bulk) Preference(s memento.Scope, p memento.Preference) error {
	sources, err := prefSourcesJSON(p.Sources)
	if err != nil {
		return err
	}
	b.prefs.add(s.Tenant, s.User, p.ID, p.Concept, p.Kind, p.Weight, max(p.Evidence, 1), sources,
		p.Embedder, len(p.Vector), encodePrefVector(p.Vector), nanos(p.FirstSeen.UTC()), nanos(p.LastSeen.UTC()), b.now, b.now)
	return b.full(b.prefs)
}
