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

// ThreadState returns the thread's state. A thread that does not exist yet
// has an empty state (a new active context, nothing shown) and no error.
func (db *DB) ThreadState(ctx context.Context, s memento.Scope, thread string) (*memento.ThreadState, error) {
	s, err := checkScope(s)
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
	var contextJSON, shownJSON, allShownJSON []byte
	err = db.pool.QueryRow(ctx, `SELECT created_at, updated_at, last_seq, context, last_shown, shown FROM threads
		WHERE tenant_id = $1 AND user_id = $2 AND id = $3`, s.Tenant, s.User, thread).
		Scan(&created, &updated, &st.LastSeq, &contextJSON, &shownJSON, &allShownJSON)
	if errors.Is(err, pgx.ErrNoRows) {
		return st, nil
	} else if err != nil {
		return nil, fmt.Errorf("read state of thread %s: %w", thread, err)
	}
	st.Thread.CreatedAt, st.Thread.UpdatedAt = fromNanos(created), fromNanos(updated)
	if err := json.Unmarshal(contextJSON, &st.Context); err != nil {
		return nil, fmt.Errorf("decode active context of thread %s: %w", thread, err)
	}
	st.Context.Normalize()
	if err := json.Unmarshal(shownJSON, &st.LastShown); err != nil {
		return nil, fmt.Errorf("decode last shown of thread %s: %w", thread, err)
	}
	if st.LastShown == nil {
		st.LastShown = []string{}
	}
	if err := json.Unmarshal(allShownJSON, &st.Shown); err != nil {
		return nil, fmt.Errorf("decode shown titles of thread %s: %w", thread, err)
	}
	if st.Shown == nil {
		st.Shown = []string{}
	}
	return st, nil
}

// SaveTurn stores a turn atomically: the user and thread if new, the
// turn's messages (skipping ids already stored), the thread's new state,
// the answer, the turn's events and the jobs of the new messages. The
// transaction holds the user's lock from its start (userTx), so two turns
// on one thread, from this process or another, are serialised: both land,
// one after the other, each message once. With t.CheckSeq it stores
// nothing unless the thread is still at t.BaseSeq. Errors: EINVALID,
// ECONFLICT.
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
	contextJSON, err := json.Marshal(t.State.Context.Clone())
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
	var out []memento.Message
	err = db.userTx(ctx, s, func(tx pgx.Tx) error {
		var check func(int64) error
		if t.CheckSeq {
			check = func(seq int64) error {
				if seq != t.BaseSeq {
					return memento.Errorf(memento.ECONFLICT, "thread %q moved on while the turn ran: its newest message is %d, the turn began at %d", t.Thread, seq, t.BaseSeq)
				}
				return nil
			}
		}
		stored, inserted, err := db.insertMessages(ctx, tx, s, t.Thread, t.Messages, check, nil)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE threads SET context = $1, last_shown = $2, shown = $3, updated_at = $4
			WHERE tenant_id = $5 AND user_id = $6 AND id = $7`,
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
			if !json.Valid(t.Answer) {
				return memento.Errorf(memento.EINVALID, "the turn's answer is not JSON")
			}
			last := stored[len(stored)-1]
			if _, err := tx.Exec(ctx, `INSERT INTO turn_answers (message_pk, answer)
				SELECT pk, $1 FROM messages WHERE tenant_id = $2 AND user_id = $3 AND id = $4`,
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

// SetThreadContext replaces the active context of an existing thread.
// Errors: ENOTFOUND for an unknown thread, EINVALID.
func (db *DB) SetThreadContext(ctx context.Context, s memento.Scope, thread string, ac memento.ActiveContext) error {
	s, err := checkScope(s)
	if err != nil {
		return err
	}
	if err := checkThread(thread); err != nil {
		return err
	}
	if err := checkContext(ac); err != nil {
		return err
	}
	b, err := json.Marshal(ac.Clone())
	if err != nil {
		return fmt.Errorf("set context of thread %s: %w", thread, err)
	}
	return db.userTx(ctx, s, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE threads SET context = $1, updated_at = $2 WHERE tenant_id = $3 AND user_id = $4 AND id = $5`,
			string(b), nanos(db.now()), s.Tenant, s.User, thread)
		if err != nil {
			return fmt.Errorf("set context of thread %s: %w", thread, err)
		}
		if tag.RowsAffected() == 0 {
			return memento.Errorf(memento.ENOTFOUND, "thread %q of user %q not found", thread, s.User)
		}
		return nil
	})
}

// checkContext validates a context a user sets.
func checkContext(ac memento.ActiveContext) error {
	for name, y := range map[string]*int{"minYear": ac.MinYear, "maxYear": ac.MaxYear} {
		if y != nil && (*y < memento.MinYear || *y > memento.MaxYear) {
			return memento.Errorf(memento.EINVALID, "%s must be a year between %d and %d, got %d", name, memento.MinYear, memento.MaxYear, *y)
		}
	}
	if ac.MinYear != nil && ac.MaxYear != nil && *ac.MinYear > *ac.MaxYear {
		return memento.Errorf(memento.EINVALID, "minYear %d is after maxYear %d", *ac.MinYear, *ac.MaxYear)
	}
	if ac.Count < 0 || ac.Count > memento.MaxPageSize {
		return memento.Errorf(memento.EINVALID, "count must be between 1 and %d, got %d", memento.MaxPageSize, ac.Count)
	}
	for i, id := range ac.ExcludedTitleIDs {
		if err := memento.CheckID(fmt.Sprintf("excludedTitleIds[%d]", i), id); err != nil {
			return err
		}
	}
	return nil
}

// Answers returns the newest limit stored answers of a thread, oldest
// first (limit <= 0: all of them). An unknown thread has none.
func (db *DB) Answers(ctx context.Context, s memento.Scope, thread string, limit int) ([]memento.TurnAnswer, error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	if err := checkThread(thread); err != nil {
		return nil, err
	}
	var lim any
	if limit > 0 {
		lim = limit
	}
	rows, err := db.pool.Query(ctx, `SELECT id, seq, answer FROM (
			SELECT m.id, m.seq, a.answer::text AS answer FROM turn_answers a JOIN messages m ON m.pk = a.message_pk
			WHERE m.tenant_id = $1 AND m.user_id = $2 AND m.thread_id = $3
			ORDER BY m.seq DESC LIMIT $4) AS newest
		ORDER BY seq`, s.Tenant, s.User, thread, lim)
	if err != nil {
		return nil, fmt.Errorf("answers of thread %s: %w", thread, err)
	}
	out, err := collect(rows, func(r pgx.Rows) (memento.TurnAnswer, error) {
		var a memento.TurnAnswer
		var text string
		err := r.Scan(&a.Message, &a.Seq, &text)
		a.Answer = json.RawMessage(text)
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("answers of thread %s: %w", thread, err)
	}
	return out, nil
}

// Threads lists a user's threads, most recently updated first.
func (db *DB) Threads(ctx context.Context, s memento.Scope) ([]memento.Thread, error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	rows, err := db.pool.Query(ctx, `SELECT id, created_at, updated_at FROM threads
		WHERE tenant_id = $1 AND user_id = $2 ORDER BY updated_at DESC, id`, s.Tenant, s.User)
	if err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	out, err := collect(rows, func(r pgx.Rows) (memento.Thread, error) {
		th := memento.Thread{Tenant: s.Tenant, User: s.User}
		var created, updated int64
		err := r.Scan(&th.ID, &created, &updated)
		th.CreatedAt, th.UpdatedAt = fromNanos(created), fromNanos(updated)
		return th, err
	})
	if err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	return out, nil
}

// AppendSummary adds a summary to the thread's list and returns it with
// its id and creation time. Errors: ENOTFOUND for an unknown thread,
// EINVALID for empty text or a range that runs backwards.
func (db *DB) AppendSummary(ctx context.Context, s memento.Scope, sum memento.Summary) (*memento.Summary, error) {
	s, err := checkScope(s)
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
	err = db.userTx(ctx, s, func(tx pgx.Tx) error {
		if ok, err := threadExists(ctx, tx, s, sum.Thread); err != nil {
			return err
		} else if !ok {
			return memento.Errorf(memento.ENOTFOUND, "thread %q not found", sum.Thread)
		}
		return tx.QueryRow(ctx, `INSERT INTO summaries (tenant_id, user_id, thread_id, text, from_seq, to_seq, sources, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
			s.Tenant, s.User, sum.Thread, sum.Text, sum.FromSeq, sum.ToSeq, string(sources), nanos(sum.CreatedAt)).Scan(&sum.ID)
	})
	if err != nil {
		return nil, fmt.Errorf("append summary to thread %s: %w", sum.Thread, err)
	}
	return &sum, nil
}

const summaryColumns = `id, thread_id, text, from_seq, to_seq, sources, created_at`

func scanSummary(r pgx.Row) (memento.Summary, error) {
	var sum memento.Summary
	var sources []byte
	var created int64
	if err := r.Scan(&sum.ID, &sum.Thread, &sum.Text, &sum.FromSeq, &sum.ToSeq, &sources, &created); err != nil {
		return sum, err
	}
	sum.CreatedAt = fromNanos(created)
	if err := json.Unmarshal(sources, &sum.Sources); err != nil {
		return sum, fmt.Errorf("decode sources of summary %d: %w", sum.ID, err)
	}
	if sum.Sources == nil {
		sum.Sources = []string{}
	}
	return sum, nil
}

// LatestSummary returns the newest summary of the thread, or nil when
// there is none.
func (db *DB) LatestSummary(ctx context.Context, s memento.Scope, thread string) (*memento.Summary, error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	sum, err := scanSummary(db.pool.QueryRow(ctx, `SELECT `+summaryColumns+` FROM summaries
		WHERE tenant_id = $1 AND user_id = $2 AND thread_id = $3 ORDER BY id DESC LIMIT 1`, s.Tenant, s.User, thread))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("latest summary of thread %s: %w", thread, err)
	}
	return &sum, nil
}

// Summaries lists a thread's summaries, oldest first.
func (db *DB) Summaries(ctx context.Context, s memento.Scope, thread string) ([]memento.Summary, error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	rows, err := db.pool.Query(ctx, `SELECT `+summaryColumns+` FROM summaries
		WHERE tenant_id = $1 AND user_id = $2 AND thread_id = $3 ORDER BY id`, s.Tenant, s.User, thread)
	if err != nil {
		return nil, fmt.Errorf("list summaries of thread %s: %w", thread, err)
	}
	out, err := collect(rows, func(r pgx.Rows) (memento.Summary, error) { return scanSummary(r) })
	if err != nil {
		return nil, fmt.Errorf("list summaries of thread %s: %w", thread, err)
	}
	return out, nil
}
