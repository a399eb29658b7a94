package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/fulltext"
	"github.com/memento-ai/memento/internal/task"
)

// periodsColumn resolves what a text said at a time tells of time
// (fulltext.When) into the form the periods column of messages and
// memories keeps (memento.FormatPeriods; migration 0013). Every write of a
// message's text or a memory's value sets it, so recall reads the times
// with the row instead of reading its text again.
func periodsColumn(text string, at time.Time) string {
	periods, tells := fulltext.When(text, at.UTC())
	return memento.FormatPeriods(asPeriods(periods), tells)
}

// asPeriods converts the toolkit's periods to the domain's.
func asPeriods(ps []fulltext.Period) []memento.Period {
	if len(ps) == 0 {
		return nil
	}
	out := make([]memento.Period, len(ps))
	for i, p := range ps {
		out[i] = memento.Period(p)
	}
	return out
}

// readPeriods sets a candidate's Periods and TellsTime from its periods
// column. A row stored before migration 0013 and not back-filled yet
// (NULL) is resolved from its text and time now, as its write would have.
func readPeriods(c *memento.RecallCandidate, col sql.NullString) error {
	if !col.Valid {
		periods, tells := fulltext.When(c.Text, c.At.UTC())
		c.Periods, c.TellsTime = asPeriods(periods), tells
		return nil
	}
	var err error
	c.Periods, c.TellsTime, err = memento.ParsePeriods(col.String)
	return err
}

// backfillBatch is how many rows one back-fill transaction resolves, so
// the single writer is never held for long.
const backfillBatch = 500

// BackfillPeriods resolves and stores the periods of every message and
// memory stored before migration 0013 (those whose periods column is
// NULL), in transactions of backfillBatch rows, and returns how many rows
// it resolved. Open starts it in the background when such rows exist;
// until it is done, readers resolve those rows as they read them. Running
// it again, or in two processes at once, only repeats work.
func (db *DB) BackfillPeriods(ctx context.Context) (int, error) {
	total := 0
	for _, t := range []struct{ table, text, at string }{{"messages", "text", "at"}, {"memories", "value", "valid_from"}} {
		for {
			n := 0
			err := db.writeTx(ctx, func(tx *sql.Tx) error {
				rows, err := db.prepared(tx).QueryContext(ctx, `SELECT pk, `+t.text+`, `+t.at+` FROM `+t.table+`
					WHERE periods IS NULL ORDER BY pk LIMIT ?`, backfillBatch)
				if err != nil {
					return err
				}
				type row struct {
					pk      int64
					periods string
				}
				var todo []row
				for rows.Next() {
					var r row
					var text string
					var at int64
					if err := rows.Scan(&r.pk, &text, &at); err != nil {
						rows.Close()
						return err
					}
					r.periods = periodsColumn(text, fromNanos(at))
					todo = append(todo, r)
				}
				rows.Close()
				if err := rows.Err(); err != nil {
					return err
				}
				for _, r := range todo {
					if _, err := db.prepared(tx).ExecContext(ctx, `UPDATE `+t.table+` SET periods = ? WHERE pk = ?`, r.periods, r.pk); err != nil {
						return err
					}
				}
				n = len(todo)
				return nil
			})
			if err != nil {
				return total, fmt.Errorf("back-fill periods of %s: %w", t.table, err)
			}
			total += n
			if n < backfillBatch {
				break
			}
		}
	}
	return total, nil
}

// startBackfill starts BackfillPeriods in the background when any row
// still lacks its periods (one look at each partial index of migration
// 0013, so a store without such rows pays nothing more).
func (db *DB) startBackfill(ctx context.Context) error {
	var pending bool
	err := db.write.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM messages WHERE periods IS NULL)
		OR EXISTS (SELECT 1 FROM memories WHERE periods IS NULL)`).Scan(&pending)
	if err != nil {
		return fmt.Errorf("look for rows without periods: %w", err)
	}
	if !pending {
		return nil
	}
	db.backfill = task.Start(func(ctx context.Context) {
		start := time.Now()
		n, err := db.BackfillPeriods(ctx)
		if err != nil && ctx.Err() == nil {
			db.logger.Warn("sqlite: back-fill of periods stopped; readers resolve the rest as they read them", "rows", n, "err", err)
			return
		}
		db.logger.Info("sqlite: periods back-filled", "rows", n, "took", time.Since(start).Round(time.Millisecond))
	})
	return nil
}
