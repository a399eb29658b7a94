package sqlite

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/fulltext"
)

// readQuery runs a read query in tx through the statement prepared for it
// on the read pool, or, the first time, unprepared (see txStmt).
func (db *DB) readQuery(ctx context.Context, tx *sql.Tx, query string, args ...any) (*sql.Rows, error) {
	if st := db.txStmt(ctx, tx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return tx.QueryContext(ctx, query, args...)
}

// txStmt returns the read pool's statement of query bound to tx, or nil
// when it is not prepared yet. A statement is never prepared on the pool
// while tx holds one of its connections: preparing takes a connection of
// its own, and as many transactions as the pool has connections, each
// waiting for one more, would wait for ever (they did, for the first
// concurrent chats after a restart). The query is noted instead, and
// readTx prepares it once the transaction has given its connection back.
// Binding a pool statement to tx prepares it, if needed, on tx's own
// connection.
func (db *DB) txStmt(ctx context.Context, tx *sql.Tx, query string) *sql.Stmt {
	if st, ok := db.readStmts.Load(query); ok {
		return tx.StmtContext(ctx, st.(*sql.Stmt))
	}
	db.unprepared.Store(query, struct{}{})
	return nil
}

// readTxQueries is a read transaction whose queries go through the read
// pool's statements (readQuery, readRow), for the helpers that also run in
// write transactions (which pass db.prepared(tx)).
type readTxQueries struct {
	db *DB
	tx *sql.Tx
}

func (r readTxQueries) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return r.db.readQuery(ctx, r.tx, query, args...)
}

func (r readTxQueries) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return r.db.readRow(ctx, r.tx, query, args...)
}

// ExecContext runs query in the transaction; a read transaction has no
// use for it but the helpers' interface (execQuerier) asks for it.
func (r readTxQueries) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return r.tx.ExecContext(ctx, query, args...)
}

// poolReads runs queries outside a transaction on the read pool through
// the statements prepared for them (readStmt): the background jobs read
// a user's backlog, events, preferences and checkpoints for every batch,
// and parsing those queries again each time took about 3 % of the queue's
// processor time (memento bench --queue-profile at 1.1 M memories). A statement that does not prepare runs unprepared, and
// fails there as it would have.
type poolReads struct{ db *DB }

// reads returns the read pool through its prepared statements. The query
// text must be one of a bounded set (constant, or built from a few
// variants): each text keeps a statement for the life of the DB.
func (db *DB) reads() poolReads { return poolReads{db} }

func (r poolReads) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st, err := r.db.readStmt(ctx, query); err == nil {
		return st.QueryContext(ctx, args...)
	}
	return r.db.read.QueryContext(ctx, query, args...)
}

func (r poolReads) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return r.db.readPoolRow(ctx, query, args...)
}

// prepareNoted prepares on the read pool the queries that transactions
// ran unprepared (txStmt). It must be called holding no read connection.
func (db *DB) prepareNoted(ctx context.Context) {
	db.unprepared.Range(func(k, _ any) bool {
		db.unprepared.Delete(k)
		if _, err := db.readStmt(ctx, k.(string)); err != nil && ctx.Err() == nil {
			db.logger.Debug("prepare read statement", "err", err)
		}
		return true
	})
}

// readStmt returns the statement of query prepared on the read pool. It
// takes a connection of the pool when the statement is new, so it must
// not be called inside a read transaction (use txStmt there).
func (db *DB) readStmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := db.readStmts.Load(query); ok {
		return st.(*sql.Stmt), nil
	}
	prepared, err := db.read.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	st, loaded := db.readStmts.LoadOrStore(query, prepared)
	if loaded {
		prepared.Close()
	}
	return st.(*sql.Stmt), nil
}

// recallTerms returns the query's topic words (fulltext.QueryWords) as
// quoted FTS5 strings.
func recallTerms(text string) []string {
	words := fulltext.QueryWords(text)
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = `"` + w + `"`
	}
	return out
}

// scopedMatch returns the FTS5 query of the user's rows matching any
// discriminating word of q in table (memories_fts or message_search):
// words matching more than memento.MaxTermMatches rows are left out, counting at
// most that many. It returns "" when no word is left.
func scopedMatch(ctx context.Context, db *DB, tx *sql.Tx, table string, s memento.Scope, query string) (string, error) {
	terms := recallTerms(query)
	if len(terms) == 0 {
		return "", nil
	}
	scope := scopeToken(s)
	var kept []string
	for _, t := range terms {
		rows, err := db.readQuery(ctx, tx, `SELECT count(*) FROM (SELECT 1 FROM `+table+` WHERE `+table+` MATCH ? LIMIT ?)`,
			scope+" AND "+t, memento.MaxTermMatches+1)
		if err != nil {
			return "", err
		}
		var n int
		if rows.Next() {
			err = rows.Scan(&n)
		}
		rows.Close()
		if err != nil {
			return "", err
		}
		if n > 0 && n <= memento.MaxTermMatches {
			kept = append(kept, t)
		}
	}
	if len(kept) == 0 {
		return "", nil
	}
	return scope + " AND (" + strings.Join(kept, " OR ") + ")", nil
}

// periods returns the time ranges (in stored nanoseconds) the keyword
// matches are taken from: all time, and the query's period when it has
// one.
func periods(q memento.CandidateQuery) [][2]int64 {
	out := [][2]int64{allTime}
	if !q.From.IsZero() || !q.To.IsZero() {
		p := allTime
		if !q.From.IsZero() {
			p[0] = nanos(q.From)
		}
		if !q.To.IsZero() {
			p[1] = nanos(q.To)
		}
		out = append(out, p)
	}
	return out
}

// scopeToken is the FTS5 filter on the scope column of recall's keyword
// indexes that matches one user's rows (see migration 0002).
func scopeToken(s memento.Scope) string {
	return `scope:"` + scopeColumn(s) + `"`
}

// scopeColumn is the scope column of a user's rows in recall's keyword
// indexes: 'u' || hex(tenant || char(31) || user) || '0' in SQL, one token
// of letters and digits.
func scopeColumn(s memento.Scope) string {
	return "u" + strings.ToUpper(hex.EncodeToString([]byte(s.Tenant+"\x1f"+s.User))) + "0"
}

// allTime is the period of a query without a date.
var allTime = [2]int64{math.MinInt64, math.MaxInt64}

// memoryKeywordSQL ranks the user's current memories by BM25 within
// memories_fts and reads the columns and vectors of the best only. A
// period needs the rows' times, so it joins before ranking.
func memoryKeywordSQL(p [2]int64) string {
	inner := `SELECT rowid AS pk, bm25(memories_fts, 1.0, 0.5, 0.0) AS rank FROM memories_fts
		WHERE memories_fts MATCH ? ORDER BY rank LIMIT ?`
	if p != allTime {
		// Rows are mostly stored in time order, so the period's rows lie
		// in a small range of rowids, which FTS5 seeks to; the join then
		// keeps those of the period.
		inner = `SELECT k.pk AS pk, bm25(memories_fts, 1.0, 0.5, 0.0) AS rank
			FROM memories_fts CROSS JOIN memories AS k ON k.pk = memories_fts.rowid
			WHERE memories_fts MATCH ? AND memories_fts.rowid BETWEEN ? AND ?
			  AND k.valid_from >= ? AND k.valid_from < ?
			ORDER BY rank, k.valid_from DESC LIMIT ?`
	}
	return `SELECT ` + memoryCandidateColumns + `, top.rank FROM (` + inner + `) AS top
		CROSS JOIN memories AS m ON m.pk = top.pk
		LEFT JOIN memory_vectors AS v ON v.memory_pk = m.pk
		ORDER BY top.rank`
}

func memoryKeywordArgs(match string, p [2]int64, rows [2]int64, limit int) []any {
	if p != allTime {
		return []any{match, rows[0], rows[1], p[0], p[1], limit}
	}
	return []any{match, limit}
}

// messageKeywordSQL is memoryKeywordSQL for messages. A thread to leave
// out is filtered after ranking, from twice as many matches.
func messageKeywordSQL(p [2]int64) string {
	inner := `SELECT rowid AS pk, bm25(message_search, 1.0, 0.0) AS rank FROM message_search
		WHERE message_search MATCH ? ORDER BY rank LIMIT ?`
	if p != allTime {
		inner = `SELECT k.pk AS pk, bm25(message_search, 1.0, 0.0) AS rank
			FROM message_search CROSS JOIN messages AS k ON k.pk = message_search.rowid
			WHERE message_search MATCH ? AND message_search.rowid BETWEEN ? AND ?
			  AND k.at >= ? AND k.at < ?
			ORDER BY rank, k.at DESC LIMIT ?`
	}
	return `SELECT ` + messageCandidateColumns + `, top.rank FROM (` + inner + `) AS top
		CROSS JOIN messages AS m ON m.pk = top.pk
		LEFT JOIN message_vectors AS v ON v.message_pk = m.pk
		WHERE m.thread_id <> ?
		ORDER BY top.rank LIMIT ?`
}

func messageKeywordArgs(match string, p [2]int64, rows [2]int64, q memento.CandidateQuery) []any {
	limit := q.Keyword
	if q.ExcludeThread != "" {
		limit *= 2
	}
	if p != allTime {
		return []any{match, rows[0], rows[1], p[0], p[1], limit, q.ExcludeThread, q.Keyword}
	}
	return []any{match, limit, q.ExcludeThread, q.Keyword}
}

// rowSpan returns the smallest and largest rowid of the user's rows in
// the period p, by query (which reads an index on time); an empty period
// gives an empty span.
func rowSpan(ctx context.Context, tx *sql.Tx, query string, s memento.Scope, p [2]int64) ([2]int64, error) {
	if p == allTime {
		return [2]int64{math.MinInt64, math.MaxInt64}, nil
	}
	var lo, hi sql.NullInt64
	if err := tx.QueryRowContext(ctx, query, s.Tenant, s.User, p[0], p[1]).Scan(&lo, &hi); err != nil {
		return [2]int64{}, err
	}
	if !lo.Valid {
		return [2]int64{1, 0}, nil
	}
	return [2]int64{lo.Int64, hi.Int64}, nil
}

// memoryCandidateColumns are read by scanMemoryCandidate, prefixed "m.".
const memoryCandidateColumns = `m.id, m.kind, m.attribute, m.value, m.valid_from, m.sources, m.thread_id, coalesce(v.embedder, ''), v.embedding, m.periods`

func scanMemoryCandidate(r rowScanner, extra ...any) (memento.RecallCandidate, error) {
	var c memento.RecallCandidate
	var from int64
	var sources string
	var emb []byte
	var periods sql.NullString
	dest := append([]any{&c.ID, &c.Kind, &c.Attribute, &c.Text, &from, &sources, &c.Thread, &c.Embedder, &emb, &periods}, extra...)
	if err := r.Scan(dest...); err != nil {
		return c, err
	}
	c.At, c.Vector = fromNanos(from), memVectorFrom(emb)
	if err := json.Unmarshal([]byte(sources), &c.Sources); err != nil {
		return c, fmt.Errorf("decode sources of memory %s: %w", c.ID, err)
	}
	if err := readPeriods(&c, periods); err != nil {
		return c, fmt.Errorf("memory %s: %w", c.ID, err)
	}
	return c, nil
}

// MemoryCandidates returns the user's current memories for recall: the
// q.Keyword best BM25 matches of q.Query over value and attribute, and the
// q.Recent most recently valid, each once, with their embeddings. It reads
// one snapshot. Errors: EINVALID.
func (db *DB) MemoryCandidates(ctx context.Context, s memento.Scope, q memento.CandidateQuery) ([]memento.RecallCandidate, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	if err := q.Check(); err != nil {
		return nil, err
	}
	var out []memento.RecallCandidate
	err = db.readTx(ctx, func(tx *sql.Tx) error {
		out = []memento.RecallCandidate{}
		seen := map[string]int{}
		match, err := "", error(nil)
		if q.Keyword > 0 {
			if match, err = scopedMatch(ctx, db, tx, "memories_fts", s, q.Query); err != nil {
				return err
			}
		}
		if match != "" {
			for _, p := range periods(q) {
				span, err := rowSpan(ctx, tx, `SELECT min(pk), max(pk) FROM memories
					WHERE tenant_id = ? AND user_id = ? AND valid_to IS NULL AND valid_from >= ? AND valid_from < ?`, s, p)
				if err != nil {
					return err
				}
				rows, err := db.readQuery(ctx, tx, memoryKeywordSQL(p), memoryKeywordArgs(match, p, span, q.Keyword)...)
				if err != nil {
					return err
				}
				for rows.Next() {
					var rank float64
					c, err := scanMemoryCandidate(rows, &rank)
					if err != nil {
						rows.Close()
						return err
					}
					if _, dup := seen[c.ID]; dup {
						continue
					}
					c.BM25 = -rank
					seen[c.ID] = len(out)
					out = append(out, c)
				}
				rows.Close()
				if err := rows.Err(); err != nil {
					return err
				}
			}
		}
		if q.Recent > 0 {
			rows, err := db.readQuery(ctx, tx, `SELECT `+memoryCandidateColumns+` FROM memories AS m
				LEFT JOIN memory_vectors AS v ON v.memory_pk = m.pk
				WHERE m.tenant_id = ? AND m.user_id = ? AND m.valid_to IS NULL
				ORDER BY m.valid_from DESC LIMIT ?`, s.Tenant, s.User, q.Recent)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				c, err := scanMemoryCandidate(rows)
				if err != nil {
					return err
				}
				if _, dup := seen[c.ID]; dup {
					continue
				}
				seen[c.ID] = len(out)
				out = append(out, c)
			}
			return rows.Err()
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("memory candidates: %w", err)
	}
	return out, nil
}

// messageCandidateColumns are read by scanMessageCandidate; m is messages
// and v is message_vectors (left-joined).
const messageCandidateColumns = `m.id, m.thread_id, m.seq, m.role, m.text, m.at, coalesce(v.embedder, ''), v.embedding, m.periods`

// notRejected leaves out messages the pipeline's hygiene refused as
// instructions to the system, so recall never carries them into a prompt.
const notRejected = ` AND NOT EXISTS (SELECT 1 FROM memory_runs AS r WHERE r.tenant_id = m.tenant_id AND r.user_id = m.user_id
	AND r.message_id = m.id AND r.outcome = 'rejected')`

func scanMessageCandidate(r rowScanner, extra ...any) (memento.RecallCandidate, error) {
	c := memento.RecallCandidate{Kind: memento.RecallMessage}
	var at int64
	var role string
	var emb []byte
	var periods sql.NullString
	dest := append([]any{&c.ID, &c.Thread, &c.Seq, &role, &c.Text, &at, &c.Embedder, &emb, &periods}, extra...)
	if err := r.Scan(dest...); err != nil {
		return c, err
	}
	c.Role, c.At, c.Vector = memento.Role(role), fromNanos(at), memVectorFrom(emb)
	c.Sources = []string{c.ID}
	if err := readPeriods(&c, periods); err != nil {
		return c, fmt.Errorf("message %s: %w", c.ID, err)
	}
	return c, nil
}

// MessageCandidates returns the user's messages for recall: the q.Keyword
// best BM25 matches of q.Query, the messages up to q.Neighbors positions
// before and after each match in its thread, and the q.Recent most recent
// messages, each once, with their embeddings, leaving out the messages of
// q.ExcludeThread and the messages the pipeline rejected as instructions.
// It reads one snapshot. Errors: EINVALID.
func (db *DB) MessageCandidates(ctx context.Context, s memento.Scope, q memento.CandidateQuery) ([]memento.RecallCandidate, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	if err := q.Check(); err != nil {
		return nil, err
	}
	var out []memento.RecallCandidate
	err = db.readTx(ctx, func(tx *sql.Tx) error {
		out = []memento.RecallCandidate{}
		seen := map[string]bool{}
		add := func(rows *sql.Rows, keyword, neighbor bool) error {
			defer rows.Close()
			for rows.Next() {
				var rank float64
				var c memento.RecallCandidate
				var err error
				if keyword {
					c, err = scanMessageCandidate(rows, &rank)
				} else {
					c, err = scanMessageCandidate(rows)
				}
				if err != nil {
					return err
				}
				if seen[c.ID] {
					continue
				}
				seen[c.ID] = true
				c.BM25, c.Neighbor = -rank, neighbor
				out = append(out, c)
			}
			return rows.Err()
		}
		type pos struct {
			T string `json:"t"`
			S int64  `json:"s"`
		}
		var around []pos
		match, err := "", error(nil)
		if q.Keyword > 0 {
			if match, err = scopedMatch(ctx, db, tx, "message_search", s, q.Query); err != nil {
				return err
			}
		}
		if match != "" {
			for _, p := range periods(q) {
				span, err := rowSpan(ctx, tx, `SELECT min(pk), max(pk) FROM messages
					WHERE tenant_id = ? AND user_id = ? AND at >= ? AND at < ?`, s, p)
				if err != nil {
					return err
				}
				rows, err := db.readQuery(ctx, tx, messageKeywordSQL(p), messageKeywordArgs(match, p, span, q)...)
				if err != nil {
					return err
				}
				if err := add(rows, true, false); err != nil {
					return err
				}
			}
			if q.Neighbors > 0 {
				hits := out
				if q.NeighborHits > 0 && len(hits) > q.NeighborHits {
					hits = hits[:q.NeighborHits]
				}
				for _, c := range hits {
					for d := int64(-q.Neighbors); d <= int64(q.Neighbors); d++ {
						if d != 0 && c.Seq+d > 0 {
							around = append(around, pos{T: c.Thread, S: c.Seq + d})
						}
					}
				}
			}
		}
		if len(around) > 0 {
			list, err := json.Marshal(around)
			if err != nil {
				return err
			}
			// json_each drives the join, so each neighbour is one lookup
			// in the (tenant, user, thread, seq) index.
			rows, err := db.readQuery(ctx, tx, `SELECT `+messageCandidateColumns+`
				FROM json_each(?) AS j CROSS JOIN messages AS m
				LEFT JOIN message_vectors AS v ON v.message_pk = m.pk
				WHERE m.tenant_id = ? AND m.user_id = ? AND m.thread_id = j.value ->> '$.t' AND m.seq = j.value ->> '$.s'`+notRejected,
				string(list), s.Tenant, s.User)
			if err != nil {
				return err
			}
			if err := add(rows, false, true); err != nil {
				return err
			}
		}
		if q.Recent > 0 {
			rows, err := db.readQuery(ctx, tx, `SELECT `+messageCandidateColumns+` FROM messages AS m
				LEFT JOIN message_vectors AS v ON v.message_pk = m.pk
				WHERE m.tenant_id = ? AND m.user_id = ? AND m.thread_id <> ?`+notRejected+`
				ORDER BY m.at DESC, m.pk DESC LIMIT ?`, s.Tenant, s.User, q.ExcludeThread, q.Recent)
			if err != nil {
				return err
			}
			if err := add(rows, false, false); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("message candidates: %w", err)
	}
	return out, nil
}
