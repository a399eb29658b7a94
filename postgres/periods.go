package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/fulltext"
	"github.com/memento-ai/memento/internal/task"
)

// periodsColumn resolves what a text said at a time tells of time
// (fulltext.When) into the form the periods column of messages and
// memories keeps (memento.FormatPeriods; migration 0007). Every write of a
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
// column. A row stored before migration 0007 and not back-filled yet (nil)
// is resolved from its text and time now, as its write would have.
func readPeriods(c *memento.RecallCandidate, col *string) error {
	if col == nil {
		periods, tells := fulltext.When(c.Text, c.At.UTC())
		c.Periods, c.TellsTime = asPeriods(periods), tells
		return nil
	}
	var err error
	c.Periods, c.TellsTime, err = memento.ParsePeriods(*col)
	return err
}

// backfillBatch is how many rows one back-fill transaction resolves.
const backfillBatch = 500

// BackfillPeriods resolves and stores the periods of every message and
// memory stored before migration 0007 (periods NULL), in transactions of
// backfillBatch rows, and returns how many rows it resolved. Open starts
// it in the background when such rows exist; until it is done, readers
// resolve those rows as they read them. Processes running it at once
// share the rows (SKIP LOCKED).
//
// It does not take the users' advisory locks, so the change-log rows its
// updates add may draw their seq out of a user's commit order. That is
// harmless: it stores exactly what readers already resolve from the row,
// so an index that misses the change holds the same periods.
func (db *DB) BackfillPeriods(ctx context.Context) (int, error) {
	total := 0
	for _, t := range []struct{ table, text, at string }{{"messages", "text", "at"}, {"memories", "value", "valid_from"}} {
		for {
			n := 0
			err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
				rows, err := tx.Query(ctx, `SELECT pk, `+t.text+`, `+t.at+` FROM `+t.table+`
					WHERE periods IS NULL ORDER BY pk LIMIT $1 FOR UPDATE SKIP LOCKED`, backfillBatch)
				if err != nil {
					return err
				}
				var pks []int64
				var cols []string
				for rows.Next() {
					var pk, at int64
					var text string
					if err := rows.Scan(&pk, &text, &at); err != nil {
						rows.Close()
						return err
					}
					pks, cols = append(pks, pk), append(cols, periodsColumn(text, fromNanos(at)))
				}
				rows.Close()
				if err := rows.Err(); err != nil {
					return err
				}
				n = len(pks)
				if n == 0 {
					return nil
				}
				_, err = tx.Exec(ctx, `UPDATE `+t.table+` AS x SET periods = u.periods
					FROM unnest($1::bigint[], $2::text[]) AS u(pk, periods) WHERE x.pk = u.pk`, pks, cols)
				return err
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
// 0007, so a store without such rows pays nothing more).
func (db *DB) startBackfill(ctx context.Context) error {
	var pending bool
	err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM messages WHERE periods IS NULL)
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
			db.logger.Warn("postgres: back-fill of periods stopped; readers resolve the rest as they read them", "rows", n, "err", err)
			return
		}
		db.logger.Info("postgres: periods back-filled", "rows", n, "took", time.Since(start).Round(time.Millisecond))
	})
	return nil
}
