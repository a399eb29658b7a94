package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/memento-ai/memento"
)

// EnsureUser creates the user (and the tenant) if it does not exist and
// returns it. Errors: EINVALID for an empty id.
func (db *DB) EnsureUser(ctx context.Context, s memento.Scope) (*memento.User, error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	var u *memento.User
	err = db.userTx(ctx, s, func(tx pgx.Tx) error {
		var err error
		u, err = db.ensureUser(ctx, tx, s)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("ensure user %s/%s: %w", s.Tenant, s.User, err)
	}
	return u, nil
}

// ensureUser inserts the tenant and the user unless they exist, and
// returns the stored user.
func (db *DB) ensureUser(ctx context.Context, tx pgx.Tx, s memento.Scope) (*memento.User, error) {
	b := &pgx.Batch{}
	queueEnsureUser(b, s, nanos(db.now()))
	var created int64
	if err := sendBatch(ctx, tx, b, func(br pgx.BatchResults) (err error) {
		created, err = readEnsureUser(br)
		return err
	}); err != nil {
		return nil, err
	}
	return &memento.User{Tenant: s.Tenant, ID: s.User, CreatedAt: fromNanos(created)}, nil
}

// queueEnsureUser queues ensureUser's statements in b, one round trip
// alone or shared with others; readEnsureUser reads their answers: the
// user's creation time as stored.
func queueEnsureUser(b *pgx.Batch, s memento.Scope, now int64) {
	b.Queue(insertTenantSQL, s.Tenant, now)
	b.Queue(insertUserSQL, s.Tenant, s.User, now)
}

func readEnsureUser(br pgx.BatchResults) (int64, error) {
	if _, err := br.Exec(); err != nil {
		return 0, fmt.Errorf("insert tenant: %w", err)
	}
	var created int64
	if err := br.QueryRow().Scan(&created); err != nil {
		return 0, fmt.Errorf("insert user: %w", err)
	}
	return created, nil
}

// openThreadSQL makes the tenant, the user and the thread exist and
// returns the thread's newest sequence number, its row locked: one
// statement where it took four. What a statement's parts insert, its
// other parts do not see (they share a snapshot), so the number is the
// new thread's (0) when the thread is inserted, and read FOR UPDATE
// otherwise; the foreign keys are checked at the statement's end, when
// the tenant and the user it inserted are there.
const openThreadSQL = `WITH t AS (INSERT INTO tenants (id, created_at) VALUES ($1, $4) ON CONFLICT DO NOTHING),
	u AS (INSERT INTO users (tenant_id, id, created_at) VALUES ($1, $2, $4) ON CONFLICT DO NOTHING),
	n AS (INSERT INTO threads (tenant_id, user_id, id, created_at, updated_at, context)
		VALUES ($1, $2, $3, $4, $4, $5) ON CONFLICT DO NOTHING RETURNING last_seq)
	SELECT coalesce((SELECT last_seq FROM n),
		(SELECT last_seq FROM threads WHERE tenant_id = $1 AND user_id = $2 AND id = $3 FOR UPDATE))`

const insertTenantSQL = `INSERT INTO tenants (id, created_at) VALUES ($1, $2) ON CONFLICT DO NOTHING`

// insertUserSQL inserts a user unless it exists and returns its creation
// time as stored.
const insertUserSQL = `WITH ins AS (
		INSERT INTO users (tenant_id, id, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING created_at)
	SELECT created_at FROM ins UNION ALL SELECT created_at FROM users WHERE tenant_id = $1 AND id = $2 LIMIT 1`

// DeleteUser forgets everything about a user: deleting the user row
// cascades to everything the user owns, and the user's jobs (whose args
// name the tenant and user) are deleted too, except those running now,
// found through the index on those two args (migration 0006) rather than
// by reading every job, and so are the jobs of the user's backlog.
// Errors: ENOTFOUND.
func (db *DB) DeleteUser(ctx context.Context, s memento.Scope) error {
	s, err := checkScope(s)
	if err != nil {
		return err
	}
	err = db.userTx(ctx, s, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM users WHERE tenant_id = $1 AND id = $2`, s.Tenant, s.User)
		if err != nil {
			return fmt.Errorf("delete user row: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return memento.Errorf(memento.ENOTFOUND, "user %q not found", s.User)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM river_job
			WHERE args ->> 'tenant' = $1 AND args ->> 'user' = $2 AND state <> 'running'`, s.Tenant, s.User); err != nil {
			return fmt.Errorf("delete jobs: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM backlog WHERE tenant_id = $1 AND user_id = $2`, s.Tenant, s.User); err != nil {
			return fmt.Errorf("delete backlog: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM backlog_users WHERE tenant_id = $1 AND user_id = $2`, s.Tenant, s.User); err != nil {
			return fmt.Errorf("delete backlog: %w", err)
		}
		// A thread lease names the user too; a turn that still holds one
		// finds its row gone at release, which is harmless.
		if _, err := tx.Exec(ctx, `DELETE FROM thread_locks WHERE tenant_id = $1 AND user_id = $2`, s.Tenant, s.User); err != nil {
			return fmt.Errorf("delete thread leases: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete user %s/%s: %w", s.Tenant, s.User, err)
	}
	return nil
}

// checkMessages validates msgs before anything is written, naming the
// index of the first bad message.
func checkMessages(msgs []memento.Message) error {
	for i, m := range msgs {
		if !m.Role.Valid() {
			return memento.Errorf(memento.EINVALID, "messages[%d].role must be %q or %q, got %q", i, memento.RoleUser, memento.RoleAssistant, m.Role)
		}
		if strings.TrimSpace(m.Text) == "" {
			return memento.Errorf(memento.EINVALID, "messages[%d].text must not be empty", i)
		}
		if err := memento.CheckOptionalID(fmt.Sprintf("messages[%d].id", i), m.ID); err != nil {
			return err
		}
		if err := memento.CheckTime(fmt.Sprintf("messages[%d].at", i), m.At); err != nil {
			return err
		}
		if e := m.Emotion; e != nil {
			if !memento.ValidEmotion(e.Label) {
				return memento.Errorf(memento.EINVALID, "messages[%d].emotion.label must be one of %s, got %q", i, strings.Join(memento.EmotionLabels, ", "), e.Label)
			}
			if !(e.Confidence >= 0 && e.Confidence <= 1) {
				return memento.Errorf(memento.EINVALID, "messages[%d].emotion.confidence must be between 0 and 1, got %v", i, e.Confidence)
			}
		}
	}
	return nil
}

// AppendMessages stores msgs in the thread, creating the user and the
// thread as needed, and in the same transaction the jobs jobsFor returns
// for each newly stored message. A message whose id is already stored for
// the user is left as it is and gets no jobs. It returns once the
// transaction is committed. Errors: EINVALID, ECONFLICT (an id already
// used by another message).
func (db *DB) AppendMessages(ctx context.Context, s memento.Scope, thread string, msgs []memento.Message, jobsFor func(memento.Message) []memento.JobRequest) (*memento.AppendResult, error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	if err := checkThread(thread); err != nil {
		return nil, err
	}
	if err := checkMessages(msgs); err != nil {
		return nil, err
	}
	res := &memento.AppendResult{}
	err = db.userTx(ctx, s, func(tx pgx.Tx) error {
		*res = memento.AppendResult{Messages: make([]memento.Message, 0, len(msgs))}
		// The new messages' jobs go in the round trip of their insert.
		var jobs *queuedJobs
		more := func(added []memento.Message, b *pgx.Batch) (func(pgx.BatchResults) error, error) {
			var reqs []memento.JobRequest
			for _, m := range added {
				if jobsFor != nil {
					reqs = append(reqs, jobsFor(m)...)
				}
			}
			var err error
			if jobs, err = db.queueJobs(ctx, tx, s, reqs, b); err != nil {
				return nil, err
			}
			return jobs.read, nil
		}
		stored, inserted, err := db.insertMessages(ctx, tx, s, thread, msgs, nil, more)
		if err != nil {
			return err
		}
		for i := range stored {
			if inserted[i] {
				res.Inserted++
			} else {
				res.Duplicates++
			}
		}
		res.Messages = stored
		if jobs == nil {
			return nil // nothing new
		}
		return jobs.finish(ctx, tx)
	})
	if err != nil {
		return nil, fmt.Errorf("append messages to thread %s: %w", thread, err)
	}
	return res, nil
}

// emptyContextJSON is the stored form of a new thread's active context.
var emptyContextJSON = func() string {
	b, _ := json.Marshal(memento.NewActiveContext())
	return string(b)
}()

// messageColumns are the columns scanMessage reads, in its order.
const messageColumns = `tenant_id, user_id, thread_id, id, seq, role, text, at, created_at, emotion, emotion_confidence`

// scanMessage reads one message selected with messageColumns, then extra.
func scanMessage(r pgx.Row, extra ...any) (memento.Message, error) {
	var m memento.Message
	var role string
	var at, created int64
	var label *string
	var confidence *float64
	dest := append([]any{&m.Tenant, &m.User, &m.Thread, &m.ID, &m.Seq, &role, &m.Text, &at, &created, &label, &confidence}, extra...)
	if err := r.Scan(dest...); err != nil {
		return m, err
	}
	m.Role, m.At, m.CreatedAt = memento.Role(role), fromNanos(at), fromNanos(created)
	if label != nil {
		m.Emotion = &memento.Emotion{Label: *label}
		if confidence != nil {
			m.Emotion.Confidence = *confidence
		}
	}
	return m, nil
}

// emotionColumns are the stored form of a message's emotion: NULLs for
// none.
func emotionColumns(e *memento.Emotion) (label *string, confidence *float64) {
	if e == nil {
		return nil, nil
	}
	return &e.Label, &e.Confidence
}

// insertMessages stores msgs in the thread, in order, after its newest
// message, creating the tenant, user and thread as needed, and indexes
// them for keyword search. check, when set, is called with the thread's
// newest sequence number before anything is inserted (SaveTurn's
// CheckSeq). It returns every message as stored (existing ones as first
// stored) and which of them it inserted.
//
// The caller holds the user's lock (userTx), so the thread's last_seq
// cannot move under it; the row is still read FOR UPDATE, so a writer that
// bypassed the lock would wait rather than collide. The rows that make the
// thread exist, its head and the messages already stored under the ids
// given are read in one round trip (a batch), and the new messages, each
// with its keyword index in one statement, the index's counters in one
// more and the thread's new head in a second: an acknowledgement waits
// for few round trips to the server.
// more, when set, is given the new messages (none are) and may queue
// statements of its own in the second round trip, returning what reads
// their answers.
func (db *DB) insertMessages(ctx context.Context, tx pgx.Tx, s memento.Scope, thread string, msgs []memento.Message, check func(seq int64) error,
	more func(added []memento.Message, b *pgx.Batch) (func(pgx.BatchResults) error, error)) ([]memento.Message, []bool, error) {
	now := db.now()
	var ids []string
	for _, m := range msgs {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	b := &pgx.Batch{}
	b.Queue(openThreadSQL, s.Tenant, s.User, thread, nanos(now), emptyContextJSON)
	if len(ids) > 0 {
		b.Queue(`SELECT `+messageColumns+` FROM messages WHERE tenant_id = $1 AND user_id = $2 AND id = ANY($3)`, s.Tenant, s.User, ids)
	}
	res := tx.SendBatch(ctx, b)
	var seq int64
	existing := map[string]memento.Message{}
	err := func() error {
		if err := res.QueryRow().Scan(&seq); err != nil {
			return fmt.Errorf("open thread: %w", err)
		}
		if len(ids) == 0 {
			return nil
		}
		rows, err := res.Query()
		if err != nil {
			return fmt.Errorf("look up messages: %w", err)
		}
		found, err := collect(rows, func(r pgx.Rows) (memento.Message, error) { return scanMessage(r) })
		if err != nil {
			return fmt.Errorf("look up messages: %w", err)
		}
		for _, m := range found {
			existing[m.ID] = m
		}
		return nil
	}()
	if cerr := res.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return nil, nil, err
	}
	if check != nil {
		if err := check(seq); err != nil {
			return nil, nil, err
		}
	}
	stored := make([]memento.Message, 0, len(msgs))
	inserted := make([]bool, 0, len(msgs))
	// The new messages and the thread's new head go in one round trip
	// (a batch): the head depends only on the numbers given here.
	ins := &pgx.Batch{}
	counts := newSearchCounts("message")
	var added []memento.Message
	for _, m := range msgs {
		if m.ID != "" {
			if old, ok := existing[m.ID]; ok {
				// The same message again is a retry, answered with what
				// was stored; another message under its id would be
				// lost, so it is refused.
				if old.Thread != thread || old.Role != m.Role || old.Text != m.Text {
					return nil, nil, memento.Errorf(memento.ECONFLICT,
						"message id %q is already used by another message (thread %q, %s, %d bytes of text)", m.ID, old.Thread, old.Role, len(old.Text))
				}
				stored = append(stored, old)
				inserted = append(inserted, false)
				continue
			}
		} else {
			m.ID = newID("msg_")
		}
		if m.At.IsZero() {
			m.At = now
		}
		seq++
		m.Tenant, m.User, m.Thread, m.Seq = s.Tenant, s.User, thread, seq
		m.At, m.CreatedAt = m.At.UTC(), now
		terms, freqs, n := indexTerms(weightedText{m.Text, 1})
		counts.add(terms, n)
		label, confidence := emotionColumns(m.Emotion)
		ins.Queue(`WITH m AS (
				INSERT INTO messages (tenant_id, user_id, thread_id, id, seq, role, text, at, created_at, emotion, emotion_confidence, periods)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $13, $14, $15) RETURNING pk),
			d AS (INSERT INTO message_search (pk, tenant_id, user_id, len) SELECT pk, $1, $2, $10 FROM m),
			r AS (INSERT INTO recall_changes (tenant_id, user_id, kind, pk) SELECT $1, $2, 'message', pk FROM m)
			INSERT INTO message_terms (pk, tenant_id, user_id, term, freq, len)
			SELECT m.pk, $1, $2, x.t, x.f, $10 FROM m, unnest($11::text[], $12::float8[]) AS x(t, f)`,
			m.Tenant, m.User, m.Thread, m.ID, m.Seq, string(m.Role), m.Text, nanos(m.At), nanos(m.CreatedAt), n, terms, freqs, label, confidence,
			periodsColumn(m.Text, m.At))
		existing[m.ID] = m
		added = append(added, m)
		stored = append(stored, m)
		inserted = append(inserted, true)
	}
	if len(added) == 0 {
		return stored, inserted, nil
	}
	// The new messages are counted in the keyword index in one statement,
	// once a term however many hold it (migration 0016).
	counts.queue(ins)
	ins.Queue(`UPDATE threads SET last_seq = $1, updated_at = $2 WHERE tenant_id = $3 AND user_id = $4 AND id = $5`,
		seq, nanos(now), s.Tenant, s.User, thread)
	var readMore func(pgx.BatchResults) error
	if more != nil {
		var err error
		if readMore, err = more(added, ins); err != nil {
			return nil, nil, err
		}
	}
	res = tx.SendBatch(ctx, ins)
	err = func() error {
		for _, m := range added {
			if _, err := res.Exec(); err != nil {
				if isUniqueViolation(err) {
					return memento.WrapError(memento.ECONFLICT, err, "message id %q is given twice", m.ID)
				}
				return fmt.Errorf("insert message %s: %w", m.ID, err)
			}
		}
		if err := counts.read(res); err != nil {
			return err
		}
		if _, err := res.Exec(); err != nil {
			return fmt.Errorf("update thread: %w", err)
		}
		if readMore != nil {
			return readMore(res)
		}
		return nil
	}()
	if cerr := res.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return nil, nil, err
	}
	return stored, inserted, nil
}

// Messages lists a thread's messages with Seq > afterSeq in order, at
// most limit of them (0: no limit). Errors: ENOTFOUND for an unknown
// thread, EINVALID for a negative limit.
func (db *DB) Messages(ctx context.Context, s memento.Scope, thread string, afterSeq int64, limit int) ([]memento.Message, error) {
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
	var msgs []memento.Message
	err = db.readTx(ctx, func(tx pgx.Tx) error {
		if ok, err := threadExists(ctx, tx, s, thread); err != nil {
			return err
		} else if !ok {
			return memento.Errorf(memento.ENOTFOUND, "thread %q not found", thread)
		}
		rows, err := tx.Query(ctx, `SELECT `+messageColumns+` FROM messages
			WHERE tenant_id = $1 AND user_id = $2 AND thread_id = $3 AND seq > $4 ORDER BY seq LIMIT $5`,
			s.Tenant, s.User, thread, afterSeq, lim)
		if err != nil {
			return err
		}
		msgs, err = collect(rows, func(r pgx.Rows) (memento.Message, error) { return scanMessage(r) })
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list messages of thread %s: %w", thread, err)
	}
	return msgs, nil
}

// MessageByID returns one of the user's messages by its id. Errors:
// ENOTFOUND.
func (db *DB) MessageByID(ctx context.Context, s memento.Scope, id string) (*memento.Message, error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	m, err := scanMessage(db.pool.QueryRow(ctx, `SELECT `+messageColumns+` FROM messages WHERE tenant_id = $1 AND user_id = $2 AND id = $3`, s.Tenant, s.User, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, memento.Errorf(memento.ENOTFOUND, "message %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("read message %s: %w", id, err)
	}
	return &m, nil
}

// threadExists reports whether the user has the thread.
func threadExists(ctx context.Context, q querier, s memento.Scope, thread string) (bool, error) {
	var ok bool
	err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM threads WHERE tenant_id = $1 AND user_id = $2 AND id = $3)`,
		s.Tenant, s.User, thread).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("look up thread: %w", err)
	}
	return ok, nil
}

// collect reads every row with scan into a non-nil slice and closes rows.
func collect[T any](rows pgx.Rows, scan func(pgx.Rows) (T, error)) ([]T, error) {
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
