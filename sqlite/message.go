package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memento-ai/memento"
)

// checkMessages validates msgs before anything is written, naming the index
// of the first bad message.
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

// AppendMessages stores msgs in the thread, creating the user and the thread
// as needed, and with them the jobs jobsFor returns for each newly stored
// message. A message whose id is already stored for the user is left as it
// is and gets no jobs. Messages without an id get a generated "msg_" id
// and messages without a time get the current time. It returns once the
// messages are committed, which with synchronous=FULL means synced to
// disk: in the store's file, in one transaction with their jobs, or with
// Options.Intake in the intake (intake.go), from where they reach the
// store's file before any read of the user sees it. Errors: EINVALID,
// ECONFLICT for an id stored with another message.
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
	if db.intake != nil {
		res, err := db.intake.append(ctx, s, thread, msgs, jobsFor)
		if err != nil {
			return nil, fmt.Errorf("append messages to thread %s: %w", thread, err)
		}
		return res, nil
	}
	res := &memento.AppendResult{Messages: make([]memento.Message, 0, len(msgs))}
	// The caller waits for the acknowledgement: the append goes before
	// the background writes waiting for the writer.
	err = db.urgentTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res.Messages = res.Messages[:0]
		res.Inserted, res.Duplicates = 0, 0
		if _, err := db.ensureUser(ctx, tx, s); err != nil {
			return err
		}
		if err := db.ensureThread(ctx, tx, s, thread); err != nil {
			return err
		}
		stored, inserted, err := db.insertMessages(ctx, tx, s, thread, msgs)
		if err != nil {
			return err
		}
		var jobs []memento.JobRequest
		for i, m := range stored {
			if !inserted[i] {
				res.Duplicates++
				continue
			}
			res.Inserted++
			if jobsFor != nil {
				jobs = append(jobs, jobsFor(m)...)
			}
		}
		res.Messages = stored
		return db.insertJobs(ctx, tx, s, jobs)
	})
	if err != nil {
		return nil, fmt.Errorf("append messages to thread %s: %w", thread, err)
	}
	return res, nil
}

// Statements of ensureThread and insertMessages, prepared at Open
// (preparedWrites).
const (
	sqlInsertThread = `INSERT INTO threads (tenant_id, user_id, id, created_at, updated_at, context, last_shown)
		VALUES (?, ?, ?, ?, ?, ?, '[]') ON CONFLICT DO NOTHING`
	sqlThreadSeq     = `SELECT last_seq FROM threads WHERE tenant_id = ? AND user_id = ? AND id = ?`
	sqlMessageByID   = `SELECT ` + messageColumns + ` FROM messages WHERE tenant_id = ? AND user_id = ? AND id = ?`
	sqlInsertMessage = `INSERT INTO messages (tenant_id, user_id, thread_id, id, seq, role, text, at, created_at, emotion, emotion_confidence, periods)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	sqlUpdateThreadSeq = `UPDATE threads SET last_seq = ?, updated_at = ? WHERE tenant_id = ? AND user_id = ? AND id = ?`
)

// ensureThread creates the thread with an empty state unless it exists.
func (db *DB) ensureThread(ctx context.Context, tx *sql.Tx, s memento.Scope, thread string) error {
	return db.ensureThreadAt(ctx, tx, s, thread, db.now())
}

// ensureThreadAt is ensureThread for a thread created at the time at.
func (db *DB) ensureThreadAt(ctx context.Context, tx *sql.Tx, s memento.Scope, thread string, at time.Time) error {
	now := nanos(at)
	_, err := db.prepared(tx).ExecContext(ctx, sqlInsertThread, s.Tenant, s.User, thread, now, now, emptyContextJSON)
	if err != nil {
		return fmt.Errorf("insert thread: %w", err)
	}
	return nil
}

// emptyContextJSON is the stored form of a new thread's active context.
var emptyContextJSON = func() string {
	b, _ := json.Marshal(memento.NewActiveContext())
	return string(b)
}()

// insertMessages stores msgs in the existing thread, in order, after its
// newest message. It returns every message as stored (existing ones as they
// were first stored) and which of them it inserted.
func (db *DB) insertMessages(ctx context.Context, sqlTx *sql.Tx, s memento.Scope, thread string, msgs []memento.Message) ([]memento.Message, []bool, error) {
	tx := db.prepared(sqlTx)
	var seq int64
	if err := tx.QueryRowContext(ctx, sqlThreadSeq, s.Tenant, s.User, thread).Scan(&seq); err != nil {
		return nil, nil, fmt.Errorf("read thread: %w", err)
	}
	now := db.now()
	stored := make([]memento.Message, 0, len(msgs))
	inserted := make([]bool, 0, len(msgs))
	// The new messages are written with multi-row statements: each
	// statement makes the full-text indexes flush what it added as one
	// segment, so one statement per message would write a segment (and
	// later merge it) per message.
	var fresh []memento.Message
	byID := map[string]int{} // index in stored of each id of this call
	for _, m := range msgs {
		if m.ID != "" {
			old, found, err := db.storedMessage(ctx, tx, s, m.ID, stored, byID)
			if err != nil {
				return nil, nil, err
			}
			if found {
				// The same message again is a retry, answered with what
				// was stored; another message under its id would be
				// lost, so it is refused.
				if err := checkRepeat(m, old, thread); err != nil {
					return nil, nil, err
				}
				stored = append(stored, old)
				inserted = append(inserted, false)
				continue
			}
		}
		seq++
		m = newMessage(m, s, thread, seq, now)
		byID[m.ID] = len(stored)
		stored = append(stored, m)
		inserted = append(inserted, true)
		fresh = append(fresh, m)
	}
	for len(fresh) > 0 {
		n := min(len(fresh), messageRows)
		if err := insertMessageRows(ctx, tx, fresh[:n]); err != nil {
			return nil, nil, err
		}
		fresh = fresh[n:]
	}
	if !slices.Contains(inserted, true) {
		return stored, inserted, nil // a pure repeat changes nothing
	}
	if _, err := tx.ExecContext(ctx, sqlUpdateThreadSeq,
		seq, nanos(now), s.Tenant, s.User, thread); err != nil {
		return nil, nil, fmt.Errorf("update thread: %w", err)
	}
	return stored, inserted, nil
}

// checkRepeat answers a message m whose id is stored already as old: the
// same message again is a retry, answered with what was stored; another
// message under its id would be lost, so it is refused. Errors: ECONFLICT.
func checkRepeat(m, old memento.Message, thread string) error {
	if old.Thread != thread || old.Role != m.Role || old.Text != m.Text {
		return memento.Errorf(memento.ECONFLICT,
			"message id %q is already used by another message (thread %q, %s, %d bytes of text)", m.ID, old.Thread, old.Role, len(old.Text))
	}
	return nil
}

// newMessage completes a message about to be stored as the seq-th of the
// thread at now: its scope, a generated "msg_" id unless it has one, and
// now as its time unless it has one.
func newMessage(m memento.Message, s memento.Scope, thread string, seq int64, now time.Time) memento.Message {
	if m.ID == "" {
		m.ID = newID("msg_")
	}
	if m.At.IsZero() {
		m.At = now
	}
	m.Tenant, m.User, m.Thread, m.Seq = s.Tenant, s.User, thread, seq
	m.At, m.CreatedAt = m.At.UTC(), now
	return m
}

// messageRows bounds the messages of one multi-row insert: twelve
// parameters each, under SQLite's limit of 32,766.
const messageRows = 500

// storedMessage finds the message id of the user: one stored earlier in
// this call (stored, byID), or in the store.
func (db *DB) storedMessage(ctx context.Context, tx stmtTx, s memento.Scope, id string, stored []memento.Message, byID map[string]int) (memento.Message, bool, error) {
	if i, ok := byID[id]; ok {
		return stored[i], true, nil
	}
	old, err := scanMessage(tx.QueryRowContext(ctx, sqlMessageByID, s.Tenant, s.User, id))
	if err == nil {
		return old, true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return old, false, fmt.Errorf("look up message %s: %w", id, err)
	}
	return old, false, nil
}

// insertMessageRows inserts msgs, complete with their ids and sequence
// numbers, with one statement.
func insertMessageRows(ctx context.Context, tx stmtTx, msgs []memento.Message) error {
	query := sqlInsertMessage
	if len(msgs) > 1 {
		query += strings.Repeat(", (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", len(msgs)-1)
	}
	args := make([]any, 0, 12*len(msgs))
	for _, m := range msgs {
		label, confidence := emotionColumns(m.Emotion)
		args = append(args, m.Tenant, m.User, m.Thread, m.ID, m.Seq, string(m.Role), m.Text, nanos(m.At), nanos(m.CreatedAt), label, confidence,
			periodsColumn(m.Text, m.At))
	}
	if _, err := tx.ExecContext(ctx, query, args...); err != nil {
		if len(msgs) == 1 {
			return fmt.Errorf("insert message %s: %w", msgs[0].ID, err)
		}
		return fmt.Errorf("insert %d messages (%s to %s): %w", len(msgs), msgs[0].ID, msgs[len(msgs)-1].ID, err)
	}
	return nil
}

// messageColumns are the columns scanMessage reads, in its order.
const messageColumns = `tenant_id, user_id, thread_id, id, seq, role, text, at, created_at, emotion, emotion_confidence`

// rowScanner is a *sql.Row or *sql.Rows.
type rowScanner interface {
	Scan(dest ...any) error
}

// scanMessage reads one message selected with messageColumns.
func scanMessage(r rowScanner, extra ...any) (memento.Message, error) {
	var m memento.Message
	var role string
	var at, created int64
	var label sql.NullString
	var confidence sql.NullFloat64
	dest := append([]any{&m.Tenant, &m.User, &m.Thread, &m.ID, &m.Seq, &role, &m.Text, &at, &created, &label, &confidence}, extra...)
	if err := r.Scan(dest...); err != nil {
		return m, err
	}
	m.Role, m.At, m.CreatedAt = memento.Role(role), fromNanos(at), fromNanos(created)
	if label.Valid {
		m.Emotion = &memento.Emotion{Label: label.String, Confidence: confidence.Float64}
	}
	return m, nil
}

// emotionColumns are the stored form of a message's emotion: NULLs for
// none.
func emotionColumns(e *memento.Emotion) (label, confidence any) {
	if e == nil {
		return nil, nil
	}
	return e.Label, e.Confidence
}

// Messages lists a thread's messages with Seq > afterSeq in order, at most
// limit of them (0: no limit). Errors: ENOTFOUND for an unknown thread.
func (db *DB) Messages(ctx context.Context, s memento.Scope, thread string, afterSeq int64, limit int) ([]memento.Message, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	if limit < 0 {
		return nil, memento.Errorf(memento.EINVALID, "limit must not be negative, got %d", limit)
	}
	if limit == 0 {
		limit = -1 // SQLite: no limit
	}
	var msgs []memento.Message
	err = db.readTx(ctx, func(tx *sql.Tx) error {
		if ok, err := threadExists(ctx, readTxQueries{db, tx}, s, thread); err != nil {
			return err
		} else if !ok {
			return memento.Errorf(memento.ENOTFOUND, "thread %q not found", thread)
		}
		rows, err := db.readQuery(ctx, tx, `SELECT `+messageColumns+` FROM messages
			WHERE tenant_id = ? AND user_id = ? AND thread_id = ? AND seq > ?
			ORDER BY seq LIMIT ?`, s.Tenant, s.User, thread, afterSeq, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		msgs = []memento.Message{}
		for rows.Next() {
			m, err := scanMessage(rows)
			if err != nil {
				return err
			}
			msgs = append(msgs, m)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("list messages of thread %s: %w", thread, err)
	}
	return msgs, nil
}

// threadExists reports whether the user has the thread.
func threadExists(ctx context.Context, tx interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}, s memento.Scope, thread string) (bool, error) {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM threads WHERE tenant_id = ? AND user_id = ? AND id = ?`,
		s.Tenant, s.User, thread).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("look up thread: %w", err)
	}
	return n > 0, nil
}
