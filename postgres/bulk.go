package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memento-ai/memento"
)

// Bulk writes many rows in one transaction, for loading synthetic data
// (memento bench) or copying a store (memento migrate), with the methods
// of sqlite.Bulk. It trusts its caller as that one does: ids must be
// unique, messages must carry their thread and sequence number, and
// nothing is validated, deduplicated or enqueued. Rows are the rows the
// service methods write, keyword index and change log included (the
// triggers run, and a message logs itself as an append's does), so
// everything reads them back as usual; a recall index
// that finds more than a few thousand changes of a user reads the user
// again in full.
//
// Statements are queued and sent bulkRows at a time in one round trip (a
// pgx batch), in the order they were added; each message or memory is one
// statement with its keyword index and embedding.
type Bulk struct {
	ctx   context.Context
	tx    pgx.Tx
	now   int64
	batch *pgx.Batch
	rows  int
	users map[memento.Scope]bool
}

// bulkRows is how many statements one round trip sends.
const bulkRows = 500

// Bulk runs fn in one transaction and commits when it returns nil; on an
// error nothing fn wrote is kept. Each user added is locked as the service
// methods lock it, so no other write of theirs interleaves.
func (db *DB) Bulk(ctx context.Context, fn func(b *Bulk) error) error {
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		// The keyword index's counters are left to the end (see
		// search_stats_count in migration 0001); the deletion triggers
		// of migration 0015 leave them too, and the load's statements do
		// not count their rows (migration 0016).
		if _, err := tx.Exec(ctx, `SELECT set_config('memento.bulk', 'on', true)`); err != nil {
			return err
		}
		b := &Bulk{ctx: ctx, tx: tx, now: nanos(db.now()), batch: &pgx.Batch{}, users: map[memento.Scope]bool{}}
		if err := fn(b); err != nil {
			return err
		}
		if err := b.Flush(); err != nil {
			return err
		}
		return countBulkRows(ctx, tx)
	})
	if err != nil {
		return fmt.Errorf("bulk write: %w", err)
	}
	return nil
}

// Analyze updates the query planner's statistics of the store's tables
// (PostgreSQL's ANALYZE of each table of the store's schema), as a bulk
// load should be followed by: the statistics are those of before the
// load until autovacuum analyses the tables, and the plans they make for
// tables grown a hundredfold read an index of a user's current memories
// in full to find one memory by its id. ANALYZE reads a sample of each
// table (30,000 rows at the default statistics target), so its time
// grows slowly with the store: 3 s at 0.2 M memories on this machine.
func (db *DB) Analyze(ctx context.Context) error {
	rows, err := db.pool.Query(ctx, `SELECT quote_ident(relname) FROM pg_class
		WHERE relnamespace = current_schema()::regnamespace AND relkind IN ('r', 'p') ORDER BY relname`)
	if err != nil {
		return fmt.Errorf("analyze: list the tables: %w", err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("analyze: list the tables: %w", err)
	}
	if len(tables) == 0 {
		return nil
	}
	if _, err := db.pool.Exec(ctx, `ANALYZE `+strings.Join(tables, ", ")); err != nil {
		return fmt.Errorf("analyze: %w", err)
	}
	return nil
}

// countBulkRows adds the keyword index rows this transaction wrote (their
// xmin is its id) to the corpus counters, once.
func countBulkRows(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, `SELECT set_config('memento.bulk', 'off', true)`); err != nil {
		return err
	}
	for _, kind := range []string{"memory", "message"} {
		if _, err := tx.Exec(ctx, `UPDATE search_stats SET docs = docs + x.n, tokens = tokens + x.t
			FROM (SELECT count(*) AS n, coalesce(sum(len), 0) AS t FROM `+kind+`_search
				WHERE xmin::text = (txid_current() % 4294967296)::text) AS x
			WHERE kind = $1 AND shard = search_shard()`, kind); err != nil {
			return fmt.Errorf("count %s index rows: %w", kind, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO term_stats (kind, term, shard, docs)
			SELECT $1, term, search_shard(), count(*) FROM `+kind+`_terms
			WHERE xmin::text = (txid_current() % 4294967296)::text GROUP BY term ORDER BY term
			ON CONFLICT (kind, term, shard) DO UPDATE SET docs = term_stats.docs + excluded.docs`, kind); err != nil {
			return fmt.Errorf("count %s index terms: %w", kind, err)
		}
	}
	return nil
}

// Rows counts the statements written so far; queued ones count once
// Flush (or the end of the call) sends them.
func (b *Bulk) Rows() int { return b.rows }

// Flush sends the queued statements now.
func (b *Bulk) Flush() error {
	n := b.batch.Len()
	if n == 0 {
		return nil
	}
	res := b.tx.SendBatch(b.ctx, b.batch)
	b.batch = &pgx.Batch{}
	for i := 0; i < n; i++ {
		if _, err := res.Exec(); err != nil {
			res.Close()
			return err
		}
	}
	if err := res.Close(); err != nil {
		return err
	}
	b.rows += n
	return nil
}

func (b *Bulk) queue(query string, args ...any) error {
	b.batch.Queue(query, args...)
	if b.batch.Len() >= bulkRows {
		return b.Flush()
	}
	return nil
}

// User adds a user (and its tenant) unless it exists.
func (b *Bulk) User(s memento.Scope) error {
	if s.Tenant == "" {
		s.Tenant = memento.DefaultTenant
	}
	if !b.users[s] {
		b.users[s] = true
		if err := b.queue(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, userKey(s)); err != nil {
			return err
		}
	}
	if err := b.queue(`INSERT INTO tenants (id, created_at) VALUES ($1, $2) ON CONFLICT DO NOTHING`, s.Tenant, b.now); err != nil {
		return err
	}
	return b.queue(`INSERT INTO users (tenant_id, id, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, s.Tenant, s.User, b.now)
}

// Thread adds a thread with an empty active context whose newest message
// has sequence number lastSeq, last updated at updated.
func (b *Bulk) Thread(s memento.Scope, thread string, lastSeq int64, updated time.Time) error {
	return b.queue(`INSERT INTO threads (tenant_id, user_id, id, created_at, updated_at, last_seq, context)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, scopeTenant(s), s.User, thread, b.now, nanos(updated), lastSeq, emptyContextJSON)
}

// Message adds a message to its thread (m.Thread, m.Seq and m.ID set),
// indexed for keyword search, with its embedding when vector is set.
func (b *Bulk) Message(s memento.Scope, m memento.Message, vector []float32, embedder string) error {
	terms, freqs, n := indexTerms(weightedText{m.Text, 1})
	vec := ""
	label, confidence := emotionColumns(m.Emotion)
	args := []any{scopeTenant(s), s.User, m.Thread, m.ID, m.Seq, string(m.Role), m.Text, nanos(m.At.UTC()), b.now, n, terms, freqs, label, confidence,
		periodsColumn(m.Text, m.At)}
	if vector != nil {
		vec = `, v AS (INSERT INTO message_vectors (message_pk, embedder, embedding) SELECT pk, $16, $17 FROM m)`
		args = append(args, embedder, vectorBytes(vector))
	}
	return b.queue(`WITH m AS (
			INSERT INTO messages (tenant_id, user_id, thread_id, id, seq, role, text, at, created_at, emotion, emotion_confidence, periods)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $13, $14, $15) RETURNING pk),
		d AS (INSERT INTO message_search (pk, tenant_id, user_id, len) SELECT pk, $1, $2, $10 FROM m),
		r AS (INSERT INTO recall_changes (tenant_id, user_id, kind, pk) SELECT $1, $2, 'message', pk FROM m)`+vec+`
		INSERT INTO message_terms (pk, tenant_id, user_id, term, freq, len)
		SELECT m.pk, $1, $2, x.t, x.f, $10 FROM m, unnest($11::text[], $12::float8[]) AS x(t, f)`, args...)
}

// Memory adds a memory as the pipeline stores it (a current one indexed
// for keyword search), with its embedding when m.Vector is set.
func (b *Bulk) Memory(s memento.Scope, m memento.Memory) error {
	sources := m.Sources
	if sources == nil {
		sources = []string{}
	}
	src, err := json.Marshal(sources)
	if err != nil {
		return err
	}
	var to *int64
	if m.ValidTo != nil {
		v := nanos(*m.ValidTo)
		to = &v
	}
	attribute := strings.ToUpper(m.Attribute)
	args := []any{scopeTenant(s), s.User, m.ID, memento.KindOf(m.Mode), attribute, m.Mode, m.Value, nanos(m.ValidFrom), to,
		string(src), m.Thread, m.RunID, b.now, periodsColumn(m.Value, m.ValidFrom)}
	index := ""
	if m.ValidTo == nil {
		terms, freqs, n := indexTerms(weightedText{m.Value, 1}, weightedText{attribute, 0.5})
		args = append(args, n, terms, freqs)
		index = `, d AS (INSERT INTO memory_search (pk, tenant_id, user_id, len) SELECT pk, $1, $2, $15 FROM m),
		t AS (INSERT INTO memory_terms (pk, tenant_id, user_id, term, freq, len)
			SELECT m.pk, $1, $2, x.t, x.f, $15 FROM m, unnest($16::text[], $17::float8[]) AS x(t, f))`
	}
	final := `SELECT 1`
	if m.Vector != nil && m.Embedder != "" {
		args = append(args, m.Embedder, vectorBytes(m.Vector))
		final = fmt.Sprintf(`INSERT INTO memory_vectors (memory_pk, embedder, embedding) SELECT pk, $%d, $%d FROM m`, len(args)-1, len(args))
	}
	return b.queue(`WITH m AS (
			INSERT INTO memories (tenant_id, user_id, id, kind, attribute, mode, value, valid_from, valid_to,
				sources, thread_id, run_id, created_at, updated_at, periods)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13, $14) RETURNING pk)`+index+`
		`+final, args...)
}

// Run adds the record of a pipeline run over a message, which marks the
// message as processed.
func (b *Bulk) Run(s memento.Scope, r memento.MemoryRun) error {
	report, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return b.queue(`INSERT INTO memory_runs (tenant_id, user_id, message_id, thread_id, outcome, report, finished_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, scopeTenant(s), s.User, r.Message, r.Thread, r.Outcome, string(report), nanos(r.FinishedAt))
}

// Event adds an event.
func (b *Bulk) Event(s memento.Scope, e memento.Event) error {
	return b.queue(`INSERT INTO events (tenant_id, user_id, id, type, title_id, value, at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, scopeTenant(s), s.User, e.ID, string(e.Type), e.TitleID, e.Value, nanos(e.At.UTC()), b.now)
}

// Preference adds a preference memory with its vector.
func (b *Bulk) Preference(s memento.Scope, p memento.Preference) error {
	sources, err := prefSourcesJSON(p.Sources)
	if err != nil {
		return err
	}
	return b.queue(`INSERT INTO preferences (tenant_id, user_id, id, concept, kind, weight, evidence, sources,
			embedder, dim, vector, first_seen, last_seen, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14)`,
		scopeTenant(s), s.User, p.ID, p.Concept, p.Kind, p.Weight, max(p.Evidence, 1), sources,
		p.Embedder, len(p.Vector), vectorBytes(p.Vector), nanos(p.FirstSeen.UTC()), nanos(p.LastSeen.UTC()), b.now)
}

// scopeTenant is s's tenant, the default one when empty.
func scopeTenant(s memento.Scope) string {
	if s.Tenant == "" {
		return memento.DefaultTenant
	}
	return s.Tenant
}
