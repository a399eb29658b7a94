package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/memento-ai/memento"
)

// ThreadState returns the thread's state. A thread that does not exist yet
// has an empty state (a new active context, nothing shown) and no error.
func (db *DB) ThreadState(ctx context.Context, s memento.Scope, thread string) (*memento.ThreadState, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	if err := checkThread(thread); err != nil {
		return nil, err
	}
	st := &memento.ThreadState{
		Thread:    memento.Thread{Tenant: s.Tenant, User: s.User, ID: thread},
		Context:   memento.NewActiveContext(),
		LastShown: []string{},
		Shown:     []string{},
	}
	var created, updated int64
	var contextJSON, shownJSON, allShownJSON string
	err = db.readPoolRow(ctx, `SELECT created_at, updated_at, last_seq, context, last_shown, shown FROM threads
		WHERE tenant_id = ? AND user_id = ? AND id = ?`, s.Tenant, s.User, thread).
		Scan(&created, &updated, &st.LastSeq, &contextJSON, &shownJSON, &allShownJSON)
	if errors.Is(err, sql.ErrNoRows) {
		return st, nil
	} else if err != nil {
		return nil, fmt.Errorf("read state of thread %s: %w", thread, err)
	}
	st.Thread.CreatedAt, st.Thread.UpdatedAt = fromNanos(created), fromNanos(updated)
	if err := json.Unmarshal([]byte(contextJSON), &st.Context); err != nil {
		return nil, fmt.Errorf("decode active context of thread %s: %w", thread, err)
	}
	st.Context.Normalize()
	if err := json.Unmarshal([]byte(shownJSON), &st.LastShown); err != nil {
		return nil, fmt.Errorf("decode last shown of thread %s: %w", thread, err)
	}
	if st.LastShown == nil {
		st.LastShown = []string{}
	}
	if err := json.Unmarshal([]byte(allShownJSON), &st.Shown); err != nil {
		return nil, fmt.Errorf("decode shown titles of thread %s: %w", thread, err)
	}
	if st.Shown == nil {
		st.Shown = []string{}
	}
	return st, nil
}

// SaveTurn stores a turn atomically: the user and thread if new, the turn's
// messages (skipping ids already stored, like AppendMessages), the thread's
// new active context and last shown titles, and the jobs t.JobsFor returns
// for the newly stored messages. A repeated turn whose messages are all
// stored already enqueues no jobs. It returns the turn's messages as stored.
// With t.CheckSeq it stores nothing unless the thread is still at
// t.BaseSeq. Errors: EINVALID, ECONFLICT.
func (db *DB) SaveTurn(ctx context.Context, t memento.Turn) ([]memento.Message, error) {
	s, err := checkScope(t.Scope)
	if err != nil {
		return nil, err
	}
	if err := checkThread(t.Thread); err != nil {
		return nil, err
	}
	if err := checkMessages(t.Messages); err != nil {
		return nil, err
	}
	if err := checkEvents(t.Events); err != nil {
		return nil, fmt.Errorf("save turn in thread %s: %w", t.Thread, err)
	}
	ac := t.State.Context.Clone()
	contextJSON, err := json.Marshal(ac)
	if err != nil {
		return nil, fmt.Errorf("save turn in thread %s: encode active context: %w", t.Thread, err)
	}
	shown := t.State.LastShown
	if shown == nil {
		shown = []string{}
	}
	shownJSON, err := json.Marshal(shown)
	if err != nil {
		return nil, fmt.Errorf("save turn in thread %s: encode last shown: %w", t.Thread, err)
	}
	all := t.State.Shown
	if all == nil {
		all = shown
	}
	allShownJSON, err := json.Marshal(all[:min(len(all), memento.MaxShownRemembered)])
	if err != nil {
		return nil, fmt.Errorf("save turn in thread %s: encode shown titles: %w", t.Thread, err)
	}
	if in := db.intake; in != nil {
		// The turn numbers its messages after the thread's newest in
		// the store: the thread's appends wait, and those acknowledged
		// before reach the store first (intake.go).
		unlock := in.lockThread(s, t.Thread)
		defer unlock()
		if err := in.settle(ctx, s); err != nil {
			return nil, fmt.Errorf("save turn in thread %s: %w", t.Thread, err)
		}
	}
	var out []memento.Message
	// The caller waits for the turn's answer: the turn's write goes before
	// the background writes waiting for the writer (after the appends'
	// acknowledgements), and shares their commit.
	err = db.turnTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := db.ensureUser(ctx, tx, s); err != nil {
			return err
		}
		if err := db.ensureThread(ctx, tx, s, t.Thread); err != nil {
			return err
		}
		if t.CheckSeq {
			var seq int64
			if err := db.prepared(tx).QueryRowContext(ctx, sqlThreadSeq, s.Tenant, s.User, t.Thread).Scan(&seq); err != nil {
				return fmt.Errorf("read thread: %w", err)
			}
			if seq != t.BaseSeq {
				return memento.Errorf(memento.ECONFLICT, "thread %q moved on while the turn ran: its newest message is %d, the turn began at %d", t.Thread, seq, t.BaseSeq)
			}
		}
		stored, inserted, err := db.insertMessages(ctx, tx, s, t.Thread, t.Messages)
		if err != nil {
			return err
		}
		if _, err := db.prepared(tx).ExecContext(ctx, `UPDATE threads SET context = ?, last_shown = ?, shown = ?, updated_at = ?
			WHERE tenant_id = ? AND user_id = ? AND id = ?`,
			string(contextJSON), string(shownJSON), string(allShownJSON), nanos(db.now()), s.Tenant, s.User, t.Thread); err != nil {
			return fmt.Errorf("update thread state: %w", err)
		}
		var fresh []memento.Message
		for i, m := range stored {
			if inserted[i] {
				fresh = append(fresh, m)
			}
		}
		if len(t.Answer) > 0 && len(stored) > 0 && inserted[len(stored)-1] {
			last := stored[len(stored)-1]
			if _, err := db.prepared(tx).ExecContext(ctx, `INSERT INTO turn_answers (message_pk, answer)
				SELECT pk, ? FROM messages WHERE tenant_id = ? AND user_id = ? AND id = ?`,
				string(t.Answer), s.Tenant, s.User, last.ID); err != nil {
				return fmt.Errorf("store the answer: %w", err)
			}
		}
		if len(t.Events) > 0 {
			if _, err := db.insertEvents(ctx, tx, s, t.Events, t.EventJobs); err != nil {
				return err
			}
		}
		if t.JobsFor != nil && len(fresh) > 0 {
			if err := db.insertJobs(ctx, tx, s, t.JobsFor(fresh)); err != nil {
				return err
			}
		}
		out = stored
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("save turn in thread %s: %w", t.Thread, err)
	}
	return out, nil
}

// Answers returns the newest limit stored answers of a thread, oldest
// first (limit <= 0: all of them). An unknown thread has none.
func (db *DB) Answers(ctx context.Context, s memento.Scope, thread string, limit int) ([]memento.TurnAnswer, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	if err := checkThread(thread); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = -1
	}
	rows, err := db.reads().QueryContext(ctx, `SELECT id, seq, answer FROM (
			SELECT m.id, m.seq, a.answer FROM turn_answers a JOIN messages m ON m.pk = a.message_pk
			WHERE m.tenant_id = ? AND m.user_id = ? AND m.thread_id = ?
			ORDER BY m.seq DESC LIMIT ?)
		ORDER BY seq`, s.Tenant, s.User, thread, limit)
	if err != nil {
		return nil, fmt.Errorf("answers of thread %s: %w", thread, err)
	}
	defer rows.Close()
	out := []memento.TurnAnswer{}
	for rows.Next() {
		var a memento.TurnAnswer
		var text string
		if err := rows.Scan(&a.Message, &a.Seq, &text); err != nil {
			return nil, fmt.Errorf("answers of thread %s: %w", thread, err)
		}
		a.Answer = json.RawMessage(text)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("answers of thread %s: %w", thread, err)
	}
	return out, nil
}

// Threads lists a user's threads, most recently updated first. A user
// without threads (or unknown) has none.
func (db *DB) Threads(ctx context.Context, s memento.Scope) ([]memento.Thread, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	rows, err := db.reads().QueryContext(ctx, `SELECT id, created_at, updated_at FROM threads
		WHERE tenant_id = ? AND user_id = ? ORDER BY updated_at DESC, id`, s.Tenant, s.User)
	if err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	defer rows.Close()
	threads := []memento.Thread{}
	for rows.Next() {
		th := memento.Thread{Tenant: s.Tenant, User: s.User}
		var created, updated int64
		if err := rows.Scan(&th.ID, &created, &updated); err != nil {
			return nil, fmt.Errorf("list threads: %w", err)
		}
		th.CreatedAt, th.UpdatedAt = fromNanos(created), fromNanos(updated)
		threads = append(threads, th)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	return threads, nil
}

// AppendSummary adds a summary to the thread's list and returns it with its
// id and creation time. Errors: ENOTFOUND for an unknown thread, EINVALID
// for empty text or a sequence range that runs backwards.
func (db *DB) AppendSummary(ctx context.Context, s memento.Scope, sum memento.Summary) (*memento.Summary, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	if err := checkThread(sum.Thread); err != nil {
		return nil, err
	}
	if strings.TrimSpace(sum.Text) == "" {
		return nil, memento.Errorf(memento.EINVALID, "summary text must not be empty")
	}
	if sum.FromSeq < 0 || sum.ToSeq < sum.FromSeq {
		return nil, memento.Errorf(memento.EINVALID, "summary must cover seq %d to %d, which is not a range", sum.FromSeq, sum.ToSeq)
	}
	if sum.Sources == nil {
		sum.Sources = []string{}
	}
	sources, err := json.Marshal(sum.Sources)
	if err != nil {
		return nil, fmt.Errorf("append summary to thread %s: encode sources: %w", sum.Thread, err)
	}
	sum.CreatedAt = db.now()
	err = db.groupTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if ok, err := threadExists(ctx, db.prepared(tx), s, sum.Thread); err != nil {
			return err
		} else if !ok {
			return memento.Errorf(memento.ENOTFOUND, "thread %q not found", sum.Thread)
		}
		return db.prepared(tx).QueryRowContext(ctx, `INSERT INTO summaries (tenant_id, user_id, thread_id, text, from_seq, to_seq, sources, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			s.Tenant, s.User, sum.Thread, sum.Text, sum.FromSeq, sum.ToSeq, string(sources), nanos(sum.CreatedAt)).Scan(&sum.ID)
	})
	if err != nil {
		return nil, fmt.Errorf("append summary to thread %s: %w", sum.Thread, err)
	}
	return &sum, nil
}

// summaryColumns are the columns scanSummary reads, in its order.
const summaryColumns = `id, thread_id, text, from_seq, to_seq, sources, created_at`

// scanSummary reads one summary selected with summaryColumns.
func scanSummary(r rowScanner) (memento.Summary, error) {
	var sum memento.Summary
	var sources string
	var created int64
	if err := r.Scan(&sum.ID, &sum.Thread, &sum.Text, &sum.FromSeq, &sum.ToSeq, &sources, &created); err != nil {
		return sum, err
	}
	sum.CreatedAt = fromNanos(created)
	if err := json.Unmarshal([]byte(sources), &sum.Sources); err != nil {
		return sum, fmt.Errorf("decode sources of summary %d: %w", sum.ID, err)
	}
	if sum.Sources == nil {
		sum.Sources = []string{}
	}
	return sum, nil
}

// LatestSummary returns the newest summary of the thread, or nil when there
// is none (including when the thread does not exist).
func (db *DB) LatestSummary(ctx context.Context, s memento.Scope, thread string) (*memento.Summary, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	sum, err := scanSummary(db.readPoolRow(ctx, `SELECT `+summaryColumns+` FROM summaries
		WHERE tenant_id = ? AND user_id = ? AND thread_id = ? ORDER BY id DESC LIMIT 1`, s.Tenant, s.User, thread))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("latest summary of thread %s: %w", thread, err)
	}
	return &sum, nil
}

// Summaries lists a thread's summaries, oldest first.
func (db *DB) Summaries(ctx context.Context, s memento.Scope, thread string) ([]memento.Summary, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	rows, err := db.reads().QueryContext(ctx, `SELECT `+summaryColumns+` FROM summaries
		WHERE tenant_id = ? AND user_id = ? AND thread_id = ? ORDER BY id`, s.Tenant, s.User, thread)
	if err != nil {
		return nil, fmt.Errorf("list summaries of thread %s: %w", thread, err)
	}
	defer rows.Close()
	sums := []memento.Summary{}
	for rows.Next() {
		sum, err := scanSummary(rows)
		if err != nil {
			return nil, fmt.Errorf("list summaries of thread %s: %w", thread, err)
		}
		sums = append(sums, sum)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list summaries of thread %s: %w", thread, err)
	}
	return sums, nil
}
