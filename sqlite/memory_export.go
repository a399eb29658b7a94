package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memento-ai/memento"
)

// ExportUser reads everything the store keeps about a user into one
// document, from one snapshot: threads with their state, messages and
// summaries, events, memories (superseded ones included), pipeline runs and
// mode overrides. Embeddings are left out; ImportUser's caller embeds
// again. Errors: ENOTFOUND for an unknown user.
func (db *DB) ExportUser(ctx context.Context, s memento.Scope) (*memento.UserExport, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	doc := &memento.UserExport{Format: memento.UserExportFormat, Tenant: s.Tenant, User: s.User, ExportedAt: db.now()}
	err = db.readTx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE tenant_id = ? AND id = ?`, s.Tenant, s.User).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return memento.Errorf(memento.ENOTFOUND, "user %q not found", s.User)
		}
		var err error
		if doc.Threads, err = exportThreads(ctx, tx, s); err != nil {
			return fmt.Errorf("threads: %w", err)
		}
		if doc.Events, err = exportEvents(ctx, tx, s); err != nil {
			return fmt.Errorf("events: %w", err)
		}
		if doc.Memories, err = exportMemories(ctx, tx, s); err != nil {
			return fmt.Errorf("memories: %w", err)
		}
		if doc.Runs, err = listRuns(ctx, tx, s, -1, false); err != nil {
			return fmt.Errorf("runs: %w", err)
		}
		doc.Modes = map[string]string{}
		rows, err := tx.QueryContext(ctx, `SELECT attribute, mode FROM memory_modes WHERE tenant_id = ? AND user_id = ?`, s.Tenant, s.User)
		if err != nil {
			return fmt.Errorf("modes: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var a, m string
			if err := rows.Scan(&a, &m); err != nil {
				return err
			}
			doc.Modes[a] = m
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("export user %s/%s: %w", s.Tenant, s.User, err)
	}
	return doc, nil
}

func exportThreads(ctx context.Context, tx *sql.Tx, s memento.Scope) ([]memento.ThreadExport, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, created_at, updated_at, context, last_shown, shown FROM threads
		WHERE tenant_id = ? AND user_id = ? ORDER BY created_at, id`, s.Tenant, s.User)
	if err != nil {
		return nil, err
	}
	threads := []memento.ThreadExport{}
	for rows.Next() {
		t := memento.ThreadExport{Thread: memento.Thread{Tenant: s.Tenant, User: s.User}}
		var created, updated int64
		var ac, shown, all string
		if err := rows.Scan(&t.Thread.ID, &created, &updated, &ac, &shown, &all); err != nil {
			rows.Close()
			return nil, err
		}
		t.Thread.CreatedAt, t.Thread.UpdatedAt = fromNanos(created), fromNanos(updated)
		if err := json.Unmarshal([]byte(ac), &t.ActiveContext); err != nil {
			rows.Close()
			return nil, fmt.Errorf("decode active context of %s: %w", t.Thread.ID, err)
		}
		t.ActiveContext.Normalize()
		if err := json.Unmarshal([]byte(shown), &t.LastShown); err != nil {
			rows.Close()
			return nil, fmt.Errorf("decode last shown of %s: %w", t.Thread.ID, err)
		}
		if t.LastShown == nil {
			t.LastShown = []string{}
		}
		if err := json.Unmarshal([]byte(all), &t.Shown); err != nil {
			rows.Close()
			return nil, fmt.Errorf("decode shown titles of %s: %w", t.Thread.ID, err)
		}
		threads = append(threads, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range threads {
		id := threads[i].Thread.ID
		mrows, err := tx.QueryContext(ctx, `SELECT `+messageColumns+` FROM messages
			WHERE tenant_id = ? AND user_id = ? AND thread_id = ? ORDER BY seq`, s.Tenant, s.User, id)
		if err != nil {
			return nil, err
		}
		threads[i].Messages = []memento.Message{}
		for mrows.Next() {
			m, err := scanMessage(mrows)
			if err != nil {
				mrows.Close()
				return nil, err
			}
			threads[i].Messages = append(threads[i].Messages, m)
		}
		mrows.Close()
		if err := mrows.Err(); err != nil {
			return nil, err
		}
		srows, err := tx.QueryContext(ctx, `SELECT `+summaryColumns+` FROM summaries
			WHERE tenant_id = ? AND user_id = ? AND thread_id = ? ORDER BY id`, s.Tenant, s.User, id)
		if err != nil {
			return nil, err
		}
		threads[i].Summaries = []memento.Summary{}
		for srows.Next() {
			sum, err := scanSummary(srows)
			if err != nil {
				srows.Close()
				return nil, err
			}
			threads[i].Summaries = append(threads[i].Summaries, sum)
		}
		srows.Close()
		if err := srows.Err(); err != nil {
			return nil, err
		}
		arows, err := tx.QueryContext(ctx, `SELECT m.id, m.seq, a.answer FROM turn_answers a JOIN messages m ON m.pk = a.message_pk
			WHERE m.tenant_id = ? AND m.user_id = ? AND m.thread_id = ? ORDER BY m.seq`, s.Tenant, s.User, id)
		if err != nil {
			return nil, err
		}
		for arows.Next() {
			var a memento.TurnAnswer
			var answer string
			if err := arows.Scan(&a.Message, &a.Seq, &answer); err != nil {
				arows.Close()
				return nil, err
			}
			a.Answer = json.RawMessage(answer)
			threads[i].Answers = append(threads[i].Answers, a)
		}
		arows.Close()
		if err := arows.Err(); err != nil {
			return nil, err
		}
	}
	return threads, nil
}

func exportEvents(ctx context.Context, tx *sql.Tx, s memento.Scope) ([]memento.Event, error) {
	return readEvents(ctx, tx, s, `SELECT `+eventColumns+` FROM events
		WHERE tenant_id = ? AND user_id = ? ORDER BY at, pk`, s.Tenant, s.User)
}

func exportMemories(ctx context.Context, tx *sql.Tx, s memento.Scope) ([]memento.Memory, error) {
	rows, err := tx.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories
		WHERE tenant_id = ? AND user_id = ? ORDER BY valid_from, pk`, s.Tenant, s.User)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []memento.Memory{}
	for rows.Next() {
		m, err := scanMemoryRow(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// ImportUser stores an export document under the scope's user (whatever
// user the document names), in one transaction, creating the user. Rows
// whose ids are stored already are skipped, so importing twice changes
// nothing; a thread that exists keeps its state, and imported messages go
// after its newest. No background jobs are enqueued: the document carries
// the memories and runs. Embeddings are not part of the document; embed
// afterwards (see MissingVectors). Errors: EINVALID.
func (db *DB) ImportUser(ctx context.Context, s memento.Scope, doc *memento.UserExport) (*memento.ImportResult, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	if doc == nil {
		return nil, memento.Errorf(memento.EINVALID, "the import document is empty")
	}
	if err := doc.CheckFormat(); err != nil {
		return nil, err
	}
	for i, t := range doc.Threads {
		if err := checkThread(t.Thread.ID); err != nil {
			return nil, memento.Errorf(memento.EINVALID, "threads[%d]: %s", i, memento.ErrorMessage(err))
		}
		if err := checkMessages(t.Messages); err != nil {
			return nil, memento.Errorf(memento.EINVALID, "threads[%d]: %s", i, memento.ErrorMessage(err))
		}
		for j, m := range t.Messages {
			if m.ID == "" {
				return nil, memento.Errorf(memento.EINVALID, "threads[%d].messages[%d].id is required", i, j)
			}
		}
		for j, a := range t.Answers {
			if a.Message == "" || !json.Valid(a.Answer) || len(a.Answer) == 0 || a.Answer[0] != '{' {
				return nil, memento.Errorf(memento.EINVALID, "threads[%d].answers[%d] needs the message it came with and an answer that is a JSON object", i, j)
			}
		}
	}
	if err := checkEvents(doc.Events); err != nil {
		return nil, err
	}
	for i, m := range doc.Memories {
		if err := checkMemoryWrite(memento.MemoryWrite{Message: memento.Message{ID: "import"}, Insert: []memento.Memory{m}}); err != nil {
			return nil, memento.Errorf(memento.EINVALID, "memories[%d]: %s", i, strings.TrimPrefix(memento.ErrorMessage(err), "insert[0]: "))
		}
	}
	for a, m := range doc.Modes {
		if !memento.ValidMode(m) || strings.TrimSpace(a) == "" {
			return nil, memento.Errorf(memento.EINVALID, "modes: %q: %q is not a mode", a, m)
		}
	}
	res := &memento.ImportResult{}
	err = db.writeTx(ctx, func(tx *sql.Tx) error {
		*res = memento.ImportResult{}
		if _, err := db.ensureUser(ctx, tx, s); err != nil {
			return err
		}
		now := db.now()
		for _, t := range doc.Threads {
			created, err := importThread(ctx, tx, s, t, now)
			if err != nil {
				return err
			}
			if created {
				res.Threads++
			}
			if len(t.Messages) > 0 {
				_, inserted, err := db.insertMessages(ctx, tx, s, t.Thread.ID, t.Messages)
				if err != nil {
					return err
				}
				for _, ok := range inserted {
					if ok {
						res.Messages++
					} else {
						res.Skipped++
					}
				}
				if created && !t.Thread.UpdatedAt.IsZero() {
					// A restored thread keeps the time it was last used.
					if _, err := tx.ExecContext(ctx, `UPDATE threads SET updated_at = ? WHERE tenant_id = ? AND user_id = ? AND id = ?`,
						nanos(t.Thread.UpdatedAt), s.Tenant, s.User, t.Thread.ID); err != nil {
						return fmt.Errorf("import thread %s: %w", t.Thread.ID, err)
					}
				}
			}
			for _, a := range t.Answers {
				// An answer is kept with its assistant message, which must be
				// in the thread; one stored already stays as it is.
				r, err := tx.ExecContext(ctx, `INSERT INTO turn_answers (message_pk, answer)
					SELECT pk, ? FROM messages WHERE tenant_id = ? AND user_id = ? AND thread_id = ? AND id = ?
					ON CONFLICT DO NOTHING`, string(a.Answer), s.Tenant, s.User, t.Thread.ID, a.Message)
				if err != nil {
					return fmt.Errorf("import the answer of message %s: %w", a.Message, err)
				}
				if n, _ := r.RowsAffected(); n > 0 {
					res.Answers++
				} else {
					res.Skipped++
				}
			}
			for _, sum := range t.Summaries {
				ok, err := importSummary(ctx, tx, s, t.Thread.ID, sum, now)
				if err != nil {
					return err
				}
				if ok {
					res.Summaries++
				} else {
					res.Skipped++
				}
			}
		}
		for _, e := range doc.Events {
			if e.At.IsZero() {
				e.At = now
			}
			r, err := tx.ExecContext(ctx, `INSERT INTO events (tenant_id, user_id, id, type, title_id, value, at, created_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, user_id, id) DO NOTHING`,
				s.Tenant, s.User, e.ID, string(e.Type), e.TitleID, e.Value, nanos(e.At.UTC()), nanos(now))
			if err != nil {
				return fmt.Errorf("import event %s: %w", e.ID, err)
			}
			if n, _ := r.RowsAffected(); n > 0 {
				res.Events++
			} else {
				res.Skipped++
			}
		}
		var ix unindexed
		for _, m := range doc.Memories {
			m.Vector, m.Embedder = nil, ""
			if err := insertMemory(ctx, tx, s, m, now, &ix); memento.ErrorCode(err) == memento.ECONFLICT {
				res.Skipped++ // stored already, or another value is current
				continue
			} else if err != nil {
				return err
			}
			res.Memories++
		}
		if err := ix.index(ctx, tx); err != nil {
			return fmt.Errorf("import memories: %w", err)
		}
		for _, r := range doc.Runs {
			report, err := json.Marshal(r)
			if err != nil {
				return fmt.Errorf("encode run %s: %w", r.Message, err)
			}
			finished := r.FinishedAt
			if finished.IsZero() {
				finished = now
			}
			x, err := tx.ExecContext(ctx, `INSERT INTO memory_runs (tenant_id, user_id, message_id, thread_id, outcome, report, finished_at)
				SELECT ?, ?, ?, thread_id, ?, ?, ? FROM messages WHERE tenant_id = ? AND user_id = ? AND id = ?
				ON CONFLICT DO NOTHING`, s.Tenant, s.User, r.Message, r.Outcome, string(report), nanos(finished), s.Tenant, s.User, r.Message)
			if err != nil {
				return fmt.Errorf("import run %s: %w", r.Message, err)
			}
			if n, _ := x.RowsAffected(); n > 0 {
				res.Runs++
			} else {
				res.Skipped++
			}
		}
		for a, m := range doc.Modes {
			if _, err := tx.ExecContext(ctx, `INSERT INTO memory_modes (tenant_id, user_id, attribute, mode) VALUES (?, ?, ?, ?)
				ON CONFLICT (tenant_id, user_id, attribute) DO UPDATE SET mode = excluded.mode`,
				s.Tenant, s.User, strings.ToUpper(strings.TrimSpace(a)), m); err != nil {
				return fmt.Errorf("import mode of %s: %w", a, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("import user %s/%s: %w", s.Tenant, s.User, err)
	}
	return res, nil
}

// importThread creates the thread with the exported state unless it
// exists, and reports whether it created it.
func importThread(ctx context.Context, tx *sql.Tx, s memento.Scope, t memento.ThreadExport, now time.Time) (bool, error) {
	ac := t.ActiveContext.Clone()
	acJSON, err := json.Marshal(ac)
	if err != nil {
		return false, err
	}
	shown := t.LastShown
	if shown == nil {
		shown = []string{}
	}
	shownJSON, err := json.Marshal(shown)
	if err != nil {
		return false, err
	}
	all := t.Shown
	if all == nil {
		all = shown // a document from before ThreadState.Shown
	}
	if len(all) > memento.MaxShownRemembered {
		all = all[:memento.MaxShownRemembered]
	}
	allJSON, err := json.Marshal(all)
	if err != nil {
		return false, err
	}
	created, updated := now.UnixNano(), now.UnixNano()
	if !t.Thread.CreatedAt.IsZero() {
		created = nanos(t.Thread.CreatedAt)
	}
	if !t.Thread.UpdatedAt.IsZero() {
		updated = nanos(t.Thread.UpdatedAt)
	}
	r, err := tx.ExecContext(ctx, `INSERT INTO threads (tenant_id, user_id, id, created_at, updated_at, context, last_shown, shown)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, s.Tenant, s.User, t.Thread.ID, created, updated, string(acJSON), string(shownJSON), string(allJSON))
	if err != nil {
		return false, fmt.Errorf("import thread %s: %w", t.Thread.ID, err)
	}
	n, err := r.RowsAffected()
	return n > 0, err
}

// importSummary adds a summary unless the thread has one with the same
// range and text.
func importSummary(ctx context.Context, tx *sql.Tx, s memento.Scope, thread string, sum memento.Summary, now time.Time) (bool, error) {
	if strings.TrimSpace(sum.Text) == "" || sum.ToSeq < sum.FromSeq {
		return false, memento.Errorf(memento.EINVALID, "a summary of thread %q has no text or a backwards range", thread)
	}
	var id int64
	err := tx.QueryRowContext(ctx, `SELECT id FROM summaries WHERE tenant_id = ? AND user_id = ? AND thread_id = ?
		AND from_seq = ? AND to_seq = ? AND text = ?`, s.Tenant, s.User, thread, sum.FromSeq, sum.ToSeq, sum.Text).Scan(&id)
	if err == nil {
		return false, nil
	} else if !errors.Is(err, sql.ErrNoRows) {
		return false, err
	}
	sources := sum.Sources
	if sources == nil {
		sources = []string{}
	}
	src, err := json.Marshal(sources)
	if err != nil {
		return false, err
	}
	created := now.UnixNano()
	if !sum.CreatedAt.IsZero() {
		created = nanos(sum.CreatedAt)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO summaries (tenant_id, user_id, thread_id, text, from_seq, to_seq, sources, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, s.Tenant, s.User, thread, sum.Text, sum.FromSeq, sum.ToSeq, string(src), created)
	if err != nil {
		return false, fmt.Errorf("import summary of %s: %w", thread, err)
	}
	return true, nil
}
