package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memento-ai/memento"
)

// ExportUser reads everything the store keeps about a user into one
// document, from one snapshot, as package sqlite does: threads with their
// state (every title shown included), messages, summaries and stored
// answers, events, memories (superseded ones included), runs and mode
// overrides. Embeddings are left out. Errors:
// ENOTFOUND for an unknown user.
func (db *DB) ExportUser(ctx context.Context, s memento.Scope) (*memento.UserExport, error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	doc := &memento.UserExport{Format: memento.UserExportFormat, Tenant: s.Tenant, User: s.User, ExportedAt: db.now()}
	err = db.readTx(ctx, func(tx pgx.Tx) error {
		var ok bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE tenant_id = $1 AND id = $2)`, s.Tenant, s.User).Scan(&ok); err != nil {
			return err
		}
		if !ok {
			return memento.Errorf(memento.ENOTFOUND, "user %q not found", s.User)
		}
		var err error
		if doc.Threads, err = exportThreads(ctx, tx, s); err != nil {
			return fmt.Errorf("threads: %w", err)
		}
		rows, err := tx.Query(ctx, `SELECT `+eventColumns+` FROM events
			WHERE tenant_id = $1 AND user_id = $2 ORDER BY at, pk`, s.Tenant, s.User)
		if err != nil {
			return fmt.Errorf("events: %w", err)
		}
		if doc.Events, err = collect(rows, eventOf(s)); err != nil {
			return fmt.Errorf("events: %w", err)
		}
		rows, err = tx.Query(ctx, `SELECT `+memoryColumns+` FROM memories WHERE tenant_id = $1 AND user_id = $2 ORDER BY valid_from, pk`, s.Tenant, s.User)
		if err != nil {
			return fmt.Errorf("memories: %w", err)
		}
		if doc.Memories, err = collect(rows, func(r pgx.Rows) (memento.Memory, error) { return scanMemoryRow(r) }); err != nil {
			return fmt.Errorf("memories: %w", err)
		}
		rows, err = tx.Query(ctx, `SELECT report FROM memory_runs WHERE tenant_id = $1 AND user_id = $2 ORDER BY finished_at, message_id`, s.Tenant, s.User)
		if err != nil {
			return fmt.Errorf("runs: %w", err)
		}
		if doc.Runs, err = collect(rows, scanRun); err != nil {
			return fmt.Errorf("runs: %w", err)
		}
		doc.Modes = map[string]string{}
		rows, err = tx.Query(ctx, `SELECT attribute, mode FROM memory_modes WHERE tenant_id = $1 AND user_id = $2`, s.Tenant, s.User)
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

// scanRun decodes one run's report.
func scanRun(r pgx.Rows) (memento.MemoryRun, error) {
	var report []byte
	var run memento.MemoryRun
	if err := r.Scan(&report); err != nil {
		return run, err
	}
	if err := json.Unmarshal(report, &run); err != nil {
		return run, fmt.Errorf("decode run: %w", err)
	}
	return run, nil
}

func exportThreads(ctx context.Context, tx pgx.Tx, s memento.Scope) ([]memento.ThreadExport, error) {
	rows, err := tx.Query(ctx, `SELECT id, created_at, updated_at, context, last_shown, shown FROM threads
		WHERE tenant_id = $1 AND user_id = $2 ORDER BY created_at, id COLLATE "C"`, s.Tenant, s.User)
	if err != nil {
		return nil, err
	}
	threads, err := collect(rows, func(r pgx.Rows) (memento.ThreadExport, error) {
		t := memento.ThreadExport{Thread: memento.Thread{Tenant: s.Tenant, User: s.User}}
		var created, updated int64
		var ac, shown, all []byte
		if err := r.Scan(&t.Thread.ID, &created, &updated, &ac, &shown, &all); err != nil {
			return t, err
		}
		t.Thread.CreatedAt, t.Thread.UpdatedAt = fromNanos(created), fromNanos(updated)
		if err := json.Unmarshal(ac, &t.ActiveContext); err != nil {
			return t, fmt.Errorf("decode active context of %s: %w", t.Thread.ID, err)
		}
		t.ActiveContext.Normalize()
		if err := json.Unmarshal(shown, &t.LastShown); err != nil {
			return t, fmt.Errorf("decode last shown of %s: %w", t.Thread.ID, err)
		}
		if t.LastShown == nil {
			t.LastShown = []string{}
		}
		if err := json.Unmarshal(all, &t.Shown); err != nil {
			return t, fmt.Errorf("decode shown titles of %s: %w", t.Thread.ID, err)
		}
		return t, nil
	})
	if err != nil {
		return nil, err
	}
	for i := range threads {
		id := threads[i].Thread.ID
		rows, err := tx.Query(ctx, `SELECT `+messageColumns+` FROM messages WHERE tenant_id = $1 AND user_id = $2 AND thread_id = $3 ORDER BY seq`, s.Tenant, s.User, id)
		if err != nil {
			return nil, err
		}
		if threads[i].Messages, err = collect(rows, func(r pgx.Rows) (memento.Message, error) { return scanMessage(r) }); err != nil {
			return nil, err
		}
		rows, err = tx.Query(ctx, `SELECT `+summaryColumns+` FROM summaries WHERE tenant_id = $1 AND user_id = $2 AND thread_id = $3 ORDER BY id`, s.Tenant, s.User, id)
		if err != nil {
			return nil, err
		}
		if threads[i].Summaries, err = collect(rows, func(r pgx.Rows) (memento.Summary, error) { return scanSummary(r) }); err != nil {
			return nil, err
		}
		rows, err = tx.Query(ctx, `SELECT m.id, m.seq, a.answer::text FROM turn_answers AS a JOIN messages AS m ON m.pk = a.message_pk
			WHERE m.tenant_id = $1 AND m.user_id = $2 AND m.thread_id = $3 ORDER BY m.seq`, s.Tenant, s.User, id)
		if err != nil {
			return nil, err
		}
		answers, err := collect(rows, func(r pgx.Rows) (memento.TurnAnswer, error) {
			var a memento.TurnAnswer
			var text string
			err := r.Scan(&a.Message, &a.Seq, &text)
			a.Answer = json.RawMessage(text)
			return a, err
		})
		if err != nil {
			return nil, err
		}
		if len(answers) > 0 {
			threads[i].Answers = answers
		}
	}
	return threads, nil
}

// ImportUser stores an export document under the scope's user (whatever
// user the document names), in one transaction, creating the user. Rows
// whose ids are stored already are skipped, so importing twice changes
// nothing; a thread that exists keeps its state, and imported messages go
// after its newest. An answer is stored with its assistant message, which
// must be in the thread. No jobs are enqueued. Errors: EINVALID, naming
// the first bad row.
func (db *DB) ImportUser(ctx context.Context, s memento.Scope, doc *memento.UserExport) (*memento.ImportResult, error) {
	s, err := checkScope(s)
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
	err = db.userTx(ctx, s, func(tx pgx.Tx) error {
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
				_, inserted, err := db.insertMessages(ctx, tx, s, t.Thread.ID, t.Messages, nil, nil)
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
					if _, err := tx.Exec(ctx, `UPDATE threads SET updated_at = $1 WHERE tenant_id = $2 AND user_id = $3 AND id = $4`,
						nanos(t.Thread.UpdatedAt), s.Tenant, s.User, t.Thread.ID); err != nil {
						return fmt.Errorf("import thread %s: %w", t.Thread.ID, err)
					}
				}
			}
			for _, a := range t.Answers {
				// One stored already stays as it is.
				tag, err := tx.Exec(ctx, `INSERT INTO turn_answers (message_pk, answer)
					SELECT pk, $1 FROM messages WHERE tenant_id = $2 AND user_id = $3 AND thread_id = $4 AND id = $5
					ON CONFLICT DO NOTHING`, string(a.Answer), s.Tenant, s.User, t.Thread.ID, a.Message)
				if err != nil {
					return fmt.Errorf("import the answer of message %s: %w", a.Message, err)
				}
				if tag.RowsAffected() > 0 {
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
			tag, err := tx.Exec(ctx, `INSERT INTO events (tenant_id, user_id, id, type, title_id, value, at, created_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (tenant_id, user_id, id) DO NOTHING`,
				s.Tenant, s.User, e.ID, string(e.Type), e.TitleID, e.Value, nanos(e.At.UTC()), nanos(now))
			if err != nil {
				return fmt.Errorf("import event %s: %w", e.ID, err)
			}
			if tag.RowsAffected() > 0 {
				res.Events++
			} else {
				res.Skipped++
			}
		}
		for _, m := range doc.Memories {
			m.Vector, m.Embedder = nil, ""
			if err := insertMemory(ctx, tx, s, m, now); memento.ErrorCode(err) == memento.ECONFLICT {
				res.Skipped++ // stored already, or another value is current
				continue
			} else if err != nil {
				return err
			}
			res.Memories++
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
			tag, err := tx.Exec(ctx, `INSERT INTO memory_runs (tenant_id, user_id, message_id, thread_id, outcome, report, finished_at)
				SELECT $1, $2, $3, thread_id, $4, $5, $6 FROM messages WHERE tenant_id = $1 AND user_id = $2 AND id = $3
				ON CONFLICT DO NOTHING`, s.Tenant, s.User, r.Message, r.Outcome, string(report), nanos(finished))
			if err != nil {
				return fmt.Errorf("import run %s: %w", r.Message, err)
			}
			if tag.RowsAffected() > 0 {
				res.Runs++
			} else {
				res.Skipped++
			}
		}
		for a, m := range doc.Modes {
			if _, err := tx.Exec(ctx, `INSERT INTO memory_modes (tenant_id, user_id, attribute, mode) VALUES ($1, $2, $3, $4)
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
func importThread(ctx context.Context, tx pgx.Tx, s memento.Scope, t memento.ThreadExport, now time.Time) (bool, error) {
	acJSON, err := json.Marshal(t.ActiveContext.Clone())
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
	created, updated := nanos(now), nanos(now)
	if !t.Thread.CreatedAt.IsZero() {
		created = nanos(t.Thread.CreatedAt)
	}
	if !t.Thread.UpdatedAt.IsZero() {
		updated = nanos(t.Thread.UpdatedAt)
	}
	tag, err := tx.Exec(ctx, `INSERT INTO threads (tenant_id, user_id, id, created_at, updated_at, context, last_shown, shown)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`, s.Tenant, s.User, t.Thread.ID, created, updated, string(acJSON), string(shownJSON), string(allJSON))
	if err != nil {
		return false, fmt.Errorf("import thread %s: %w", t.Thread.ID, err)
	}
	return tag.RowsAffected() > 0, nil
}

// importSummary adds a summary unless the thread has one with the same
// range and text.
func importSummary(ctx context.Context, tx pgx.Tx, s memento.Scope, thread string, sum memento.Summary, now time.Time) (bool, error) {
	if strings.TrimSpace(sum.Text) == "" || sum.ToSeq < sum.FromSeq {
		return false, memento.Errorf(memento.EINVALID, "a summary of thread %q has no text or a backwards range", thread)
	}
	var id int64
	err := tx.QueryRow(ctx, `SELECT id FROM summaries WHERE tenant_id = $1 AND user_id = $2 AND thread_id = $3
		AND from_seq = $4 AND to_seq = $5 AND text = $6`, s.Tenant, s.User, thread, sum.FromSeq, sum.ToSeq, sum.Text).Scan(&id)
	if err == nil {
		return false, nil
	} else if !errors.Is(err, pgx.ErrNoRows) {
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
	created := nanos(now)
	if !sum.CreatedAt.IsZero() {
		created = nanos(sum.CreatedAt)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO summaries (tenant_id, user_id, thread_id, text, from_seq, to_seq, sources, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, s.Tenant, s.User, thread, sum.Text, sum.FromSeq, sum.ToSeq, string(src), created); err != nil {
		return false, fmt.Errorf("import summary of %s: %w", thread, err)
	}
	return true, nil
}

// MemoryProcessed reports whether the message's pipeline run is recorded.
func (db *DB) MemoryProcessed(ctx context.Context, s memento.Scope, message string) (bool, error) {
	s, err := checkScope(s)
	if err != nil {
		return false, err
	}
	var ok bool
	if err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM memory_runs WHERE tenant_id = $1 AND user_id = $2 AND message_id = $3)`,
		s.Tenant, s.User, message).Scan(&ok); err != nil {
		return false, fmt.Errorf("look up run of %s: %w", message, err)
	}
	return ok, nil
}

// EarlierUnprocessed lists the user's own messages that came before the
// given one (by time, then arrival) and have no recorded run, at most
// limit, oldest first. Errors: ENOTFOUND for an unknown message, EINVALID.
func (db *DB) EarlierUnprocessed(ctx context.Context, s memento.Scope, message string, limit int) ([]memento.Message, error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, memento.Errorf(memento.EINVALID, "limit must be positive, got %d", limit)
	}
	var out []memento.Message
	err = db.readTx(ctx, func(tx pgx.Tx) error {
		var pk, at int64
		err := tx.QueryRow(ctx, `SELECT pk, at FROM messages WHERE tenant_id = $1 AND user_id = $2 AND id = $3`, s.Tenant, s.User, message).Scan(&pk, &at)
		if errors.Is(err, pgx.ErrNoRows) {
			return memento.Errorf(memento.ENOTFOUND, "message %q not found", message)
		} else if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+prefixed("m.", messageColumns)+` FROM messages AS m
			WHERE m.tenant_id = $1 AND m.user_id = $2 AND m.role = 'user' AND (m.at < $3 OR (m.at = $3 AND m.pk < $4))
			  AND NOT EXISTS (SELECT 1 FROM memory_runs AS r WHERE r.tenant_id = m.tenant_id AND r.user_id = m.user_id AND r.message_id = m.id)
			ORDER BY m.at, m.pk LIMIT $5`, s.Tenant, s.User, at, pk, limit)
		if err != nil {
			return err
		}
		out, err = collect(rows, func(r pgx.Rows) (memento.Message, error) { return scanMessage(r) })
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("earlier unprocessed messages before %s: %w", message, err)
	}
	return out, nil
}
