package postgres

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memento-ai/memento"
)

const memoryColumns = `id, kind, attribute, mode, value, valid_from, valid_to, sources, thread_id, run_id, created_at, updated_at`

// prefixed puts p before every column of a column list.
func prefixed(p, cols string) string {
	parts := strings.Split(cols, ", ")
	for i := range parts {
		parts[i] = p + parts[i]
	}
	return strings.Join(parts, ", ")
}

func scanMemoryRow(r pgx.Row, extra ...any) (memento.Memory, error) {
	var m memento.Memory
	var from, created, updated int64
	var to *int64
	var sources []byte
	dest := append([]any{&m.ID, &m.Kind, &m.Attribute, &m.Mode, &m.Value, &from, &to, &sources, &m.Thread, &m.RunID, &created, &updated}, extra...)
	if err := r.Scan(dest...); err != nil {
		return m, err
	}
	m.ValidFrom, m.CreatedAt, m.UpdatedAt = fromNanos(from), fromNanos(created), fromNanos(updated)
	if to != nil {
		t := fromNanos(*to)
		m.ValidTo = &t
	}
	if err := json.Unmarshal(sources, &m.Sources); err != nil {
		return m, fmt.Errorf("decode sources of memory %s: %w", m.ID, err)
	}
	if m.Sources == nil {
		m.Sources = []string{}
	}
	return m, nil
}

// vectorBytes encodes a vector as little-endian float32s, as package
// sqlite stores it; nil stays nil.
func vectorBytes(v []float32) []byte {
	if v == nil {
		return nil
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func vectorFrom(b []byte) []float32 {
	if len(b) == 0 || len(b)%4 != 0 {
		return nil
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func checkMemoryID(id string) error {
	if strings.TrimSpace(id) == "" {
		return memento.Errorf(memento.EINVALID, "memory id is required")
	}
	return memento.CheckID("memory id", id)
}

// Memories lists a user's memories matching f: semantic values before
// episodes, by attribute, each oldest first. Errors: EINVALID.
func (db *DB) Memories(ctx context.Context, s memento.Scope, f memento.MemoryFilter) ([]memento.Memory, error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	where := []string{"tenant_id = $1", "user_id = $2"}
	args := []any{s.Tenant, s.User}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if f.Mode != "" {
		add("mode = $%d", f.Mode)
	}
	if !f.All {
		where = append(where, "valid_to IS NULL")
	}
	if f.Kind != "" {
		add("kind = $%d", f.Kind)
	}
	if f.Attribute != "" {
		add("attribute = upper($%d)", f.Attribute)
	}
	if f.Thread != "" {
		add("thread_id = $%d", f.Thread)
	}
	var lim any
	if f.Limit > 0 {
		lim = f.Limit
	}
	args = append(args, lim)
	rows, err := db.pool.Query(ctx, `SELECT `+memoryColumns+` FROM memories WHERE `+strings.Join(where, " AND ")+
		fmt.Sprintf(` ORDER BY mode DESC, attribute COLLATE "C", valid_from, pk LIMIT $%d`, len(args)), args...)
	if err != nil {
		return nil, fmt.Errorf("list memories: %w", err)
	}
	out, err := collect(rows, func(r pgx.Rows) (memento.Memory, error) { return scanMemoryRow(r) })
	if err != nil {
		return nil, fmt.Errorf("list memories: %w", err)
	}
	return out, nil
}

// Memory returns one memory with its embedding. Errors: ENOTFOUND.
func (db *DB) Memory(ctx context.Context, s memento.Scope, id string) (*memento.Memory, error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	if err := checkMemoryID(id); err != nil {
		return nil, err
	}
	m, err := loadMemory(ctx, db.pool, s, id, false)
	if err != nil {
		return nil, fmt.Errorf("read memory %s: %w", id, err)
	}
	return &m, nil
}

// loadMemory reads a memory (FOR UPDATE of its row when lock is set); a
// missing one is ENOTFOUND.
func loadMemory(ctx context.Context, q querier, s memento.Scope, id string, lock bool) (memento.Memory, error) {
	var embedder string
	var emb []byte
	forUpdate := ""
	if lock {
		forUpdate = " FOR UPDATE OF m"
	}
	m, err := scanMemoryRow(q.QueryRow(ctx, `SELECT `+prefixed("m.", memoryColumns)+`, coalesce(v.embedder, ''), v.embedding
		FROM memories AS m LEFT JOIN memory_vectors AS v ON v.memory_pk = m.pk
		WHERE m.tenant_id = $1 AND m.user_id = $2 AND m.id = $3`+forUpdate, s.Tenant, s.User, id), &embedder, &emb)
	if errors.Is(err, pgx.ErrNoRows) {
		return m, memento.Errorf(memento.ENOTFOUND, "memory %q not found", id)
	} else if err != nil {
		return m, err
	}
	m.Embedder, m.Vector = embedder, vectorFrom(emb)
	return m, nil
}

// MemoryHistory returns every version of the memory's attribute value,
// newest first (an episode alone). Errors: ENOTFOUND.
func (db *DB) MemoryHistory(ctx context.Context, s memento.Scope, id string) ([]memento.Memory, error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	if err := checkMemoryID(id); err != nil {
		return nil, err
	}
	var out []memento.Memory
	err = db.readTx(ctx, func(tx pgx.Tx) error {
		m, err := loadMemory(ctx, tx, s, id, false)
		if err != nil {
			return err
		}
		m.Vector, m.Embedder = nil, ""
		if m.Mode != memento.ModeSemantic {
			out = []memento.Memory{m}
			return nil
		}
		rows, err := tx.Query(ctx, `SELECT `+memoryColumns+` FROM memories
			WHERE tenant_id = $1 AND user_id = $2 AND attribute = $3 AND mode = 'semantic'
			ORDER BY valid_from DESC, pk DESC`, s.Tenant, s.User, m.Attribute)
		if err != nil {
			return err
		}
		out, err = collect(rows, func(r pgx.Rows) (memento.Memory, error) { return scanMemoryRow(r) })
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("history of memory %s: %w", id, err)
	}
	return out, nil
}

// UpdateMemory changes a memory's value. A current semantic value keeps
// its id and its validity starts now; the old value is kept as a closed
// version. The embedding is cleared, since it described the old value.
// Errors: ENOTFOUND, EINVALID, ECONFLICT for a superseded semantic value.
func (db *DB) UpdateMemory(ctx context.Context, s memento.Scope, id string, u memento.MemoryUpdate) (*memento.Memory, error) {
	s, err := checkScope(s)
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
	err = db.userTx(ctx, s, func(tx pgx.Tx) error {
		m, err := loadMemory(ctx, tx, s, id, true)
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
			old.Vector, old.Embedder = nil, ""
			if _, err := tx.Exec(ctx, `UPDATE memories SET value = $1, valid_from = $2, updated_at = $2, periods = $6
				WHERE tenant_id = $3 AND user_id = $4 AND id = $5`, value, nanos(now), s.Tenant, s.User, id, periodsColumn(value, now)); err != nil {
				return fmt.Errorf("update memory: %w", err)
			}
			if err := insertMemory(ctx, tx, s, old, now); err != nil {
				return err
			}
			m.Value, m.ValidFrom = value, now
		} else {
			if _, err := tx.Exec(ctx, `UPDATE memories SET value = $1, updated_at = $2, periods = $6
				WHERE tenant_id = $3 AND user_id = $4 AND id = $5`, value, nanos(now), s.Tenant, s.User, id, periodsColumn(value, m.ValidFrom)); err != nil {
				return fmt.Errorf("update memory: %w", err)
			}
			m.Value = value
		}
		var pk int64
		if err := tx.QueryRow(ctx, `SELECT pk FROM memories WHERE tenant_id = $1 AND user_id = $2 AND id = $3`, s.Tenant, s.User, id).Scan(&pk); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM memory_vectors WHERE memory_pk = $1`, pk); err != nil {
			return fmt.Errorf("drop the old vector: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM memory_search WHERE pk = $1`, pk); err != nil {
			return fmt.Errorf("unindex the old value: %w", err)
		}
		if err := indexMemory(ctx, tx, s, pk, m.Attribute, m.Value); err != nil {
			return err
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

// DeleteMemory forgets a memory and, for a semantic value, the versions
// of its attribute it superseded. Errors: ENOTFOUND.
func (db *DB) DeleteMemory(ctx context.Context, s memento.Scope, id string) error {
	s, err := checkScope(s)
	if err != nil {
		return err
	}
	if err := checkMemoryID(id); err != nil {
		return err
	}
	err = db.userTx(ctx, s, func(tx pgx.Tx) error {
		m, err := loadMemory(ctx, tx, s, id, true)
		if err != nil {
			return err
		}
		if m.Mode == memento.ModeSemantic {
			if _, err := tx.Exec(ctx, `DELETE FROM memories WHERE tenant_id = $1 AND user_id = $2 AND attribute = $3
				AND mode = 'semantic' AND valid_to IS NOT NULL AND valid_to <= $4`, s.Tenant, s.User, m.Attribute, nanos(m.ValidFrom)); err != nil {
				return fmt.Errorf("delete superseded versions: %w", err)
			}
		}
		_, err = tx.Exec(ctx, `DELETE FROM memories WHERE tenant_id = $1 AND user_id = $2 AND id = $3`, s.Tenant, s.User, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete memory %s: %w", id, err)
	}
	return nil
}

// SetMemoryMode overrides the mode of an attribute for the user ("*" for
// every attribute); an empty mode removes the override. Errors: EINVALID.
func (db *DB) SetMemoryMode(ctx context.Context, s memento.Scope, attribute, mode string) error {
	s, err := checkScope(s)
	if err != nil {
		return err
	}
	attribute = strings.ToUpper(strings.TrimSpace(attribute))
	if attribute == "" || len(attribute) > memento.MaxIDLen {
		return memento.Errorf(memento.EINVALID, "attribute must be a name of at most %d bytes, or * for all", memento.MaxIDLen)
	}
	if mode != "" && !memento.ValidMode(mode) {
		return memento.Errorf(memento.EINVALID, "mode must be %q or %q (or empty to remove the override), got %q", memento.ModeSemantic, memento.ModeEpisodic, mode)
	}
	err = db.userTx(ctx, s, func(tx pgx.Tx) error {
		if mode == "" {
			_, err := tx.Exec(ctx, `DELETE FROM memory_modes WHERE tenant_id = $1 AND user_id = $2 AND attribute = $3`, s.Tenant, s.User, attribute)
			return err
		}
		if _, err := db.ensureUser(ctx, tx, s); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO memory_modes (tenant_id, user_id, attribute, mode) VALUES ($1, $2, $3, $4)
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
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	rows, err := db.pool.Query(ctx, `SELECT attribute, mode FROM memory_modes WHERE tenant_id = $1 AND user_id = $2`, s.Tenant, s.User)
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

// insertMemory inserts m for the user, with its embedding if it has one,
// and indexes a current memory for keyword search, in one statement
// (memoryRows) and its count in the same round trip. A conflict
// (ECONFLICT) leaves the transaction usable, for the caller that skips it
// (ImportUser): the statement runs in a savepoint.
func insertMemory(ctx context.Context, tx pgx.Tx, s memento.Scope, m memento.Memory, now time.Time) error {
	counts := newSearchCounts("memory")
	rows := newMemoryRows(s, now, counts)
	if err := rows.add(m, nil); err != nil {
		return err
	}
	sp, err := tx.Begin(ctx)
	if err != nil {
		return err
	}
	if err := sendCounted(ctx, sp, counts, rows.queue, rows.read); err != nil {
		_ = sp.Rollback(ctx)
		return err
	}
	return sp.Commit(ctx)
}

// memoryInsertError names the memory whose insert failed; a unique
// violation is ECONFLICT.
func memoryInsertError(m memento.Memory, err error) error {
	if isUniqueViolation(err) {
		return memento.WrapError(memento.ECONFLICT, err, "memory %q conflicts with a stored one (same id, or a second current value of %s)", m.ID, m.Attribute)
	}
	return fmt.Errorf("insert memory %s: %w", m.ID, err)
}

// memoryRows is memories to insert in one statement, as columns: a batch
// of writes sends all its memories at once, whatever their number, with
// their embeddings and, for those left current, their keyword index
// entries. The entries are added to counts, whose statement the caller
// queues after the insert.
type memoryRows struct {
	s      memento.Scope
	now    time.Time
	counts *searchCounts

	ids, kinds, attributes, modes, values, sources, threads, runs, periods []string
	from, created, updated                                                 []int64
	to                                                                     []*int64
	// The embeddings and the index entries, each row naming its memory.
	vectorOf, embedders []string
	vectors             [][]byte
	docOf               []string
	docLens             []int32
	termOf, terms       []string
	freqs               []float64
	termLens            []int32
}

func newMemoryRows(s memento.Scope, now time.Time, counts *searchCounts) *memoryRows {
	return &memoryRows{s: s, now: now, counts: counts}
}

// add adds m, stored closed at closedAt (nanoseconds) when that is not
// nil: a memory a later write of the batch supersedes is inserted as
// that write leaves it, never indexed.
func (r *memoryRows) add(m memento.Memory, closedAt *int64) error {
	sources := m.Sources
	if sources == nil {
		sources = []string{}
	}
	src, err := json.Marshal(sources)
	if err != nil {
		return fmt.Errorf("encode sources of memory %s: %w", m.ID, err)
	}
	created, updated := m.CreatedAt, m.UpdatedAt
	if created.IsZero() {
		created = r.now
	}
	if updated.IsZero() {
		updated = r.now
	}
	var to *int64
	switch {
	case closedAt != nil:
		// As a close sets it: never before the memory's start.
		v := max(nanos(m.ValidFrom), *closedAt)
		to, updated = &v, r.now
	case m.ValidTo != nil:
		v := nanos(*m.ValidTo)
		to = &v
	}
	attribute := strings.ToUpper(m.Attribute)
	r.ids = append(r.ids, m.ID)
	r.kinds = append(r.kinds, memento.KindOf(m.Mode))
	r.attributes = append(r.attributes, attribute)
	r.modes = append(r.modes, m.Mode)
	r.values = append(r.values, m.Value)
	r.from = append(r.from, nanos(m.ValidFrom))
	r.to = append(r.to, to)
	r.sources = append(r.sources, string(src))
	r.threads = append(r.threads, m.Thread)
	r.runs = append(r.runs, m.RunID)
	r.created = append(r.created, nanos(created))
	r.updated = append(r.updated, nanos(updated))
	r.periods = append(r.periods, periodsColumn(m.Value, m.ValidFrom))
	if m.Vector != nil && m.Embedder != "" {
		r.vectorOf = append(r.vectorOf, m.ID)
		r.embedders = append(r.embedders, m.Embedder)
		r.vectors = append(r.vectors, vectorBytes(m.Vector))
	}
	if to == nil {
		terms, freqs, n := indexTerms(weightedText{m.Value, 1}, weightedText{attribute, 0.5})
		r.counts.add(terms, n)
		r.docOf = append(r.docOf, m.ID)
		r.docLens = append(r.docLens, int32(n))
		for i, t := range terms {
			r.termOf = append(r.termOf, m.ID)
			r.terms = append(r.terms, t)
			r.freqs = append(r.freqs, freqs[i])
			r.termLens = append(r.termLens, int32(n))
		}
	}
	return nil
}

// queue queues the insert of every memory added, in the order added (their
// pks follow it), if there is any.
func (r *memoryRows) queue(b *pgx.Batch) {
	if len(r.ids) == 0 {
		return
	}
	b.Queue(`WITH m AS (
			INSERT INTO memories (tenant_id, user_id, id, kind, attribute, mode, value, valid_from, valid_to,
				sources, thread_id, run_id, created_at, updated_at, periods)
			SELECT $1, $2, id, kind, attribute, mode, value, valid_from, valid_to, sources::jsonb, thread_id, run_id, created_at, updated_at, periods
			FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::bigint[], $10::text[],
				$11::text[], $12::text[], $13::bigint[], $14::bigint[], $15::text[]) WITH ORDINALITY
				AS x(id, kind, attribute, mode, value, valid_from, valid_to, sources, thread_id, run_id, created_at, updated_at, periods, n)
			ORDER BY n
			RETURNING pk, id),
		v AS (INSERT INTO memory_vectors (memory_pk, embedder, embedding)
			SELECT m.pk, x.embedder, x.embedding FROM m JOIN unnest($16::text[], $17::text[], $18::bytea[]) AS x(id, embedder, embedding) ON x.id = m.id),
		d AS (INSERT INTO memory_search (pk, tenant_id, user_id, len)
			SELECT m.pk, $1, $2, x.len FROM m JOIN unnest($19::text[], $20::int[]) AS x(id, len) ON x.id = m.id)
		INSERT INTO memory_terms (pk, tenant_id, user_id, term, freq, len)
		SELECT m.pk, $1, $2, x.term, x.freq, x.len FROM m JOIN unnest($21::text[], $22::text[], $23::float8[], $24::int[]) AS x(id, term, freq, len) ON x.id = m.id`,
		r.s.Tenant, r.s.User, r.ids, r.kinds, r.attributes, r.modes, r.values, r.from, r.to, r.sources,
		r.threads, r.runs, r.created, r.updated, r.periods,
		r.vectorOf, r.embedders, r.vectors, r.docOf, r.docLens, r.termOf, r.terms, r.freqs, r.termLens)
}

// read reads the answer of the insert queue queued, naming the memory when
// there is one.
func (r *memoryRows) read(br pgx.BatchResults) error {
	if len(r.ids) == 0 {
		return nil
	}
	_, err := br.Exec()
	switch {
	case err == nil:
		return nil
	case len(r.ids) == 1:
		return memoryInsertError(memento.Memory{ID: r.ids[0], Attribute: r.attributes[0]}, err)
	case isUniqueViolation(err):
		return memento.WrapError(memento.ECONFLICT, err, "one of %d memories conflicts with a stored one (same id, or a second current value of its attribute)", len(r.ids))
	}
	return fmt.Errorf("insert %d memories: %w", len(r.ids), err)
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

// WriteMemories stores everything one pipeline run wrote in one
// transaction, as package sqlite does: base values checked (ECONFLICT),
// superseded values closed at the message's time, new memories inserted,
// the run recorded, the message's embedding stored and the run's graph
// checkpoint deleted. A message whose run is recorded already is left
// alone and false is returned. Errors: ECONFLICT, EINVALID, ENOTFOUND
// when the message is gone.
func (db *DB) WriteMemories(ctx context.Context, s memento.Scope, w memento.MemoryWrite) (bool, error) {
	written, err := db.WriteMemoryBatch(ctx, s, []memento.MemoryWrite{w})
	if err != nil {
		return false, err
	}
	return written[0], nil
}

// WriteMemoryBatch applies ws in order in one transaction under the
// user's lock, each as WriteMemories applies one, all or nothing. Errors:
// ECONFLICT, EINVALID, ENOTFOUND.
func (db *DB) WriteMemoryBatch(ctx context.Context, s memento.Scope, ws []memento.MemoryWrite) ([]bool, error) {
	s, err := checkScope(s)
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
	err = db.userTx(ctx, s, func(tx pgx.Tx) error {
		clear(written)
		return db.writeMemories(ctx, tx, s, ws, reports, written)
	})
	if err != nil {
		if len(ws) == 1 {
			return nil, fmt.Errorf("write memories of %w", err)
		}
		return nil, fmt.Errorf("write memories of %d messages: %w", len(ws), err)
	}
	return written, nil
}

// batchMessage is what a write of a batch needs of its message.
type batchMessage struct {
	pk, at int64
	thread string
	done   bool // its run is stored
}

// writeMemories applies ws in order in tx and sets which it wrote, in
// three round trips whatever the number of writes: the messages and
// whether their runs are stored; the current values of the attributes the
// writes were computed from or set (when there are any), against which
// each write's base is checked after the writes before it, as the store
// would read them; then the whole batch as a few statements, each over
// every write (batchPlan).
func (db *DB) writeMemories(ctx context.Context, tx pgx.Tx, s memento.Scope, ws []memento.MemoryWrite, reports []string, written []bool) error {
	ids := make([]string, len(ws))
	var attrs []string
	for i, w := range ws {
		ids[i] = w.Message.ID
		for attr := range w.Base {
			attrs = append(attrs, strings.ToUpper(attr))
		}
		for _, m := range w.Insert {
			if currentSemantic(m) {
				attrs = append(attrs, strings.ToUpper(m.Attribute))
			}
		}
	}
	rows, err := tx.Query(ctx, `SELECT m.id, m.pk, m.thread_id, m.at,
			EXISTS (SELECT 1 FROM memory_runs r WHERE r.tenant_id = m.tenant_id AND r.user_id = m.user_id AND r.message_id = m.id)
		FROM messages m WHERE m.tenant_id = $1 AND m.user_id = $2 AND m.id = ANY($3)`, s.Tenant, s.User, ids)
	if err != nil {
		return fmt.Errorf("look up messages: %w", err)
	}
	msgs := map[string]*batchMessage{}
	var id string
	var m batchMessage
	if _, err := pgx.ForEachRow(rows, []any{&id, &m.pk, &m.thread, &m.at, &m.done}, func() error {
		found := m
		msgs[id] = &found
		return nil
	}); err != nil {
		return fmt.Errorf("look up messages: %w", err)
	}
	current := map[string]memento.MemoryBase{}
	if len(attrs) > 0 {
		rows, err := tx.Query(ctx, `SELECT attribute, id, value FROM memories WHERE tenant_id = $1 AND user_id = $2
			AND attribute = ANY($3) AND mode = 'semantic' AND valid_to IS NULL`, s.Tenant, s.User, attrs)
		if err != nil {
			return fmt.Errorf("read current values: %w", err)
		}
		var attr string
		var cur memento.MemoryBase
		if _, err := pgx.ForEachRow(rows, []any{&attr, &cur.ID, &cur.Value}, func() error {
			current[attr] = cur
			return nil
		}); err != nil {
			return fmt.Errorf("read current values: %w", err)
		}
	}
	plan := newBatchPlan(s, db.now())
	for i, w := range ws {
		msg := msgs[w.Message.ID]
		if msg == nil {
			return fmt.Errorf("message %s: %w", w.Message.ID, memento.Errorf(memento.ENOTFOUND, "message %q not found", w.Message.ID))
		}
		if msg.done {
			continue
		}
		for attr, base := range w.Base {
			if current[strings.ToUpper(attr)] != base {
				return fmt.Errorf("message %s: %w", w.Message.ID, memento.Errorf(memento.ECONFLICT, "the current value of %s changed while the message was processed", attr))
			}
		}
		// What the write leaves current, for the bases of the writes
		// after it and for the check that no attribute gets a second
		// current value; its run is stored, so a second write of the
		// message is a repeat.
		for _, c := range w.Close {
			for attr, cur := range current {
				if cur.ID == c.ID {
					delete(current, attr)
				}
			}
		}
		for _, m := range w.Insert {
			if !currentSemantic(m) {
				continue
			}
			attr := strings.ToUpper(m.Attribute)
			if _, ok := current[attr]; ok {
				return fmt.Errorf("message %s: %w", w.Message.ID, memento.Errorf(memento.ECONFLICT, "memory %q conflicts with a stored one (a second current value of %s)", m.ID, m.Attribute))
			}
			current[attr] = memento.MemoryBase{ID: m.ID, Value: m.Value}
		}
		msg.done = true
		if err := plan.add(w, msg, reports[i]); err != nil {
			return fmt.Errorf("message %s: %w", w.Message.ID, err)
		}
		written[i] = true
	}
	return plan.send(ctx, tx)
}

// currentSemantic reports whether m is a current semantic value, of which
// an attribute has at most one.
func currentSemantic(m memento.Memory) bool {
	return m.Mode == memento.ModeSemantic && m.ValidTo == nil
}

// batchPlan is a batch of memory writes as a few statements, each over
// every write, in place of a few statements a write: the closes of
// memories stored before the batch, the batch's memories, their count in
// the keyword index, the runs, the messages' vectors, and the deletion of
// the runs' checkpoints. Applied in that order they leave what applying
// the writes one after the other leaves, because the plan settles in Go
// what the order decided: a memory the batch inserts and a later write
// closes is inserted closed, and a close that would find its memory
// closed already fails here with the error the store would give
// (writeMemories checks the one current value of an attribute the same
// way). Every close still checks in the store that its memory was
// current.
type batchPlan struct {
	s      memento.Scope
	now    time.Time
	counts *searchCounts

	// closes are the closes of memories stored before the batch, in the
	// order of the writes, with the message that closes each.
	closes []planClose
	// inserts are the batch's memories and the time each is closed at,
	// if a later write of the batch closes it.
	inserts  []memento.Memory
	closedAt []*int64
	// open is the batch's memories still current, by id (an index in
	// inserts); closed the ids the batch has closed or inserted closed.
	open   map[string]int
	closed map[string]bool

	runs                          []string // message ids
	runThreads, outcomes, reports []string
	vectorPKs                     []int64
	embedders                     []string
	vectors                       [][]byte
	checkpoints                   []string
}

// planClose is the close of a memory stored before the batch.
type planClose struct {
	memento.Supersession
	message string
	at      int64
}

func newBatchPlan(s memento.Scope, now time.Time) *batchPlan {
	return &batchPlan{s: s, now: now, counts: newSearchCounts("memory"), open: map[string]int{}, closed: map[string]bool{}}
}

// add plans w, whose message is msg and run's report report.
func (p *batchPlan) add(w memento.MemoryWrite, msg *batchMessage, report string) error {
	for _, c := range w.Close {
		if i, ok := p.open[c.ID]; ok {
			at := msg.at
			p.closedAt[i] = &at
			delete(p.open, c.ID)
			p.closed[c.ID] = true
			continue
		}
		if p.closed[c.ID] {
			return memento.Errorf(memento.ECONFLICT, "memory %q of %s is no longer current", c.ID, c.Attribute)
		}
		p.closed[c.ID] = true
		p.closes = append(p.closes, planClose{Supersession: c, message: w.Message.ID, at: msg.at})
	}
	for _, m := range w.Insert {
		if m.Thread == "" {
			m.Thread = msg.thread
		}
		if _, ok := p.open[m.ID]; ok || p.closed[m.ID] {
			return memento.Errorf(memento.ECONFLICT, "memory %q conflicts with a stored one (same id)", m.ID)
		}
		if m.ValidTo == nil {
			p.open[m.ID] = len(p.inserts)
		} else {
			p.closed[m.ID] = true
		}
		p.inserts = append(p.inserts, m)
		p.closedAt = append(p.closedAt, nil)
	}
	p.runs = append(p.runs, w.Message.ID)
	p.runThreads = append(p.runThreads, msg.thread)
	p.outcomes = append(p.outcomes, w.Run.Outcome)
	p.reports = append(p.reports, report)
	if w.Vector != nil {
		p.vectorPKs = append(p.vectorPKs, msg.pk)
		p.embedders = append(p.embedders, w.Embedder)
		p.vectors = append(p.vectors, vectorBytes(w.Vector))
	}
	if w.Checkpoint != "" {
		p.checkpoints = append(p.checkpoints, w.Checkpoint)
	}
	return nil
}

// send applies the plan in tx in one round trip, if it has any write.
func (p *batchPlan) send(ctx context.Context, tx pgx.Tx) error {
	if len(p.runs) == 0 {
		return nil
	}
	rows := newMemoryRows(p.s, p.now, p.counts)
	for i, m := range p.inserts {
		if err := rows.add(m, p.closedAt[i]); err != nil {
			return err
		}
	}
	b := &pgx.Batch{}
	s, now := p.s, nanos(p.now)
	if len(p.closes) > 0 {
		ids := make([]string, len(p.closes))
		ats := make([]int64, len(p.closes))
		for i, c := range p.closes {
			ids[i], ats[i] = c.ID, c.at
		}
		b.Queue(`UPDATE memories AS m SET valid_to = greatest(m.valid_from, c.at), updated_at = $3
			FROM unnest($4::text[], $5::bigint[]) AS c(id, at)
			WHERE m.tenant_id = $1 AND m.user_id = $2 AND m.id = c.id AND m.valid_to IS NULL
			RETURNING m.id`, s.Tenant, s.User, now, ids, ats)
	}
	rows.queue(b)
	p.counts.queue(b)
	b.Queue(`INSERT INTO memory_runs (tenant_id, user_id, message_id, thread_id, outcome, report, finished_at)
		SELECT $1, $2, message_id, thread_id, outcome, report::jsonb, $3
		FROM unnest($4::text[], $5::text[], $6::text[], $7::text[]) AS x(message_id, thread_id, outcome, report)`,
		s.Tenant, s.User, now, p.runs, p.runThreads, p.outcomes, p.reports)
	if len(p.vectorPKs) > 0 {
		b.Queue(`INSERT INTO message_vectors (message_pk, embedder, embedding)
			SELECT * FROM unnest($1::bigint[], $2::text[], $3::bytea[])
			ON CONFLICT (message_pk) DO UPDATE SET embedder = excluded.embedder, embedding = excluded.embedding`,
			p.vectorPKs, p.embedders, p.vectors)
	}
	if len(p.checkpoints) > 0 {
		b.Queue(`DELETE FROM graph_checkpoints WHERE tenant_id = $1 AND user_id = $2 AND key = ANY($3)`, s.Tenant, s.User, p.checkpoints)
	}
	// The first error answers: the statements after it fail with it.
	return sendBatch(ctx, tx, b, func(br pgx.BatchResults) error {
		if len(p.closes) > 0 {
			if err := p.readCloses(br); err != nil {
				return err
			}
		}
		if err := rows.read(br); err != nil {
			return err
		}
		if err := p.counts.read(br); err != nil {
			return err
		}
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("record runs: %w", err)
		}
		if len(p.vectorPKs) > 0 {
			if _, err := br.Exec(); err != nil {
				return fmt.Errorf("store message vectors: %w", err)
			}
		}
		if len(p.checkpoints) > 0 {
			if _, err := br.Exec(); err != nil {
				return fmt.Errorf("delete checkpoints: %w", err)
			}
		}
		return nil
	})
}

// readCloses reads which memories the closes closed: one that was no
// longer current fails the batch, named with the first write that closes
// it.
func (p *batchPlan) readCloses(br pgx.BatchResults) error {
	rows, err := br.Query()
	if err != nil {
		return fmt.Errorf("close memories: %w", err)
	}
	done := make(map[string]bool, len(p.closes))
	var id string
	if _, err := pgx.ForEachRow(rows, []any{&id}, func() error {
		done[id] = true
		return nil
	}); err != nil {
		return fmt.Errorf("close memories: %w", err)
	}
	for _, c := range p.closes {
		if !done[c.ID] {
			return fmt.Errorf("message %s: %w", c.message, memento.Errorf(memento.ECONFLICT, "memory %q of %s is no longer current", c.ID, c.Attribute))
		}
	}
	return nil
}

// MemoryRun returns the trace of the pipeline run over a message.
// Errors: ENOTFOUND.
func (db *DB) MemoryRun(ctx context.Context, s memento.Scope, message string) (*memento.MemoryRun, error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	var report []byte
	err = db.pool.QueryRow(ctx, `SELECT report FROM memory_runs WHERE tenant_id = $1 AND user_id = $2 AND message_id = $3`,
		s.Tenant, s.User, message).Scan(&report)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, memento.Errorf(memento.ENOTFOUND, "no run over message %q: it was not processed (yet)", message)
	} else if err != nil {
		return nil, fmt.Errorf("read run of %s: %w", message, err)
	}
	var r memento.MemoryRun
	if err := json.Unmarshal(report, &r); err != nil {
		return nil, fmt.Errorf("decode run of %s: %w", message, err)
	}
	return &r, nil
}

// RunsAndCheckpoints reports which of messages have their pipeline runs
// recorded and which of keys have a graph checkpoint saved, in one round
// trip (pipeline.RunLookup): a batch of a user's backlog asks it once for
// all its messages instead of twice a message.
func (db *DB) RunsAndCheckpoints(ctx context.Context, s memento.Scope, messages, keys []string) (recorded, saved map[string]bool, err error) {
	s, err = checkScope(s)
	if err != nil {
		return nil, nil, err
	}
	rows, err := db.pool.Query(ctx, `SELECT true, message_id FROM memory_runs WHERE tenant_id = $1 AND user_id = $2 AND message_id = ANY($3)
		UNION ALL
		SELECT false, key FROM graph_checkpoints WHERE tenant_id = $1 AND user_id = $2 AND key = ANY($4)`,
		s.Tenant, s.User, messages, keys)
	if err != nil {
		return nil, nil, fmt.Errorf("look up runs and checkpoints: %w", err)
	}
	recorded, saved = map[string]bool{}, map[string]bool{}
	var run bool
	var id string
	if _, err := pgx.ForEachRow(rows, []any{&run, &id}, func() error {
		if run {
			recorded[id] = true
		} else {
			saved[id] = true
		}
		return nil
	}); err != nil {
		return nil, nil, fmt.Errorf("look up runs and checkpoints: %w", err)
	}
	return recorded, saved, nil
}

// MemoryRuns lists the user's runs, newest first, at most limit (0: all).
// Errors: EINVALID for a negative limit.
func (db *DB) MemoryRuns(ctx context.Context, s memento.Scope, limit int) ([]memento.MemoryRun, error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	if limit < 0 {
		return nil, memento.Errorf(memento.EINVALID, "limit must not be negative, got %d", limit)
	}
	var lim any
	if limit > 0 {
		lim = limit
	}
	rows, err := db.pool.Query(ctx, `SELECT report FROM memory_runs WHERE tenant_id = $1 AND user_id = $2
		ORDER BY finished_at DESC, message_id DESC LIMIT $3`, s.Tenant, s.User, lim)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	out, err := collect(rows, scanRun)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}
