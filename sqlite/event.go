package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/memento-ai/memento"
)

// checkEvents validates events before anything is written, naming the index
// of the first bad event. Value must follow the contract of memento.Event:
// a rating from 0.5 to 5 for rated, an optional fraction from 0 to 1 for
// abandoned, and nothing for the other types.
func checkEvents(events []memento.Event) error {
	for i, e := range events {
		switch {
		case !e.Type.Valid():
			return memento.Errorf(memento.EINVALID, "events[%d].type must be one of %v, got %q", i, memento.EventTypes, e.Type)
		case e.TitleID == "":
			return memento.Errorf(memento.EINVALID, "events[%d].title is required", i)
		}
		if err := memento.CheckID(fmt.Sprintf("events[%d].title", i), e.TitleID); err != nil {
			return err
		}
		if err := memento.CheckOptionalID(fmt.Sprintf("events[%d].id", i), e.ID); err != nil {
			return err
		}
		if err := memento.CheckTime(fmt.Sprintf("events[%d].at", i), e.At); err != nil {
			return err
		}
		switch e.Type {
		case memento.EventRated:
			if e.Value == nil || *e.Value < 0.5 || *e.Value > 5 {
				return memento.Errorf(memento.EINVALID, "events[%d].value must be a rating from 0.5 to 5 for %q", i, e.Type)
			}
		case memento.EventAbandoned:
			if e.Value != nil && (*e.Value < 0 || *e.Value > 1) {
				return memento.Errorf(memento.EINVALID, "events[%d].value must be the fraction watched, from 0 to 1, for %q", i, e.Type)
			}
		default:
			if e.Value != nil {
				return memento.Errorf(memento.EINVALID, "events[%d].value must be empty for %q", i, e.Type)
			}
		}
	}
	return nil
}

// AddEvents stores events, creating the user as needed, and in the same
// transaction the jobs jobsFor returns for each new one. An event whose id
// is already stored for the user is skipped and gets no jobs. Events without
// an id get a generated "evt_" id; events without a time get the current
// time. The write goes through group commit, so jobsFor may be called again
// for the same event and must hold no state. Errors: EINVALID.
func (db *DB) AddEvents(ctx context.Context, s memento.Scope, events []memento.Event, jobsFor func(memento.Event) []memento.JobRequest) (int, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return 0, err
	}
	if err := checkEvents(events); err != nil {
		return 0, err
	}
	var inserted int
	err = db.groupTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := db.ensureUser(ctx, tx, s); err != nil {
			return err
		}
		var err error
		inserted, err = db.insertEvents(ctx, tx, s, events, jobsFor)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("add events: %w", err)
	}
	return inserted, nil
}

// insertEvents stores events of a user that exists, and the jobs of each
// new one, in tx. It returns how many were new.
func (db *DB) insertEvents(ctx context.Context, tx *sql.Tx, s memento.Scope, events []memento.Event, jobsFor func(memento.Event) []memento.JobRequest) (int, error) {
	inserted := 0
	now := db.now()
	var jobs []memento.JobRequest
	for _, e := range events {
		if e.ID == "" {
			e.ID = newID("evt_")
		}
		if e.At.IsZero() {
			e.At = now
		}
		e.Tenant, e.User, e.At, e.CreatedAt = s.Tenant, s.User, e.At.UTC(), now
		res, err := db.prepared(tx).ExecContext(ctx, `INSERT INTO events (tenant_id, user_id, id, type, title_id, value, at, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, user_id, id) DO NOTHING`,
			e.Tenant, e.User, e.ID, string(e.Type), e.TitleID, e.Value, nanos(e.At), nanos(e.CreatedAt))
		if err != nil {
			return 0, fmt.Errorf("insert event %s: %w", e.ID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return 0, err
		} else if n == 0 {
			continue // stored before
		}
		inserted++
		if jobsFor != nil {
			jobs = append(jobs, jobsFor(e)...)
		}
	}
	if err := db.insertJobs(ctx, tx, s, jobs); err != nil {
		return 0, err
	}
	return inserted, nil
}

// Events lists a user's events in the order they happened (by time, then
// in the order they were stored).
func (db *DB) Events(ctx context.Context, s memento.Scope) ([]memento.Event, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	events, err := readEvents(ctx, db.reads(), s, `SELECT `+eventColumns+` FROM events
		WHERE tenant_id = ? AND user_id = ? ORDER BY at, pk`, s.Tenant, s.User)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	return events, nil
}

// eventColumns are the columns readEvents scans, in its order.
const eventColumns = `id, type, title_id, value, at, created_at`

// readEvents returns the events a query of eventColumns selects, as the
// events of s's user.
func readEvents(ctx context.Context, q querier, s memento.Scope, query string, args ...any) ([]memento.Event, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	events := []memento.Event{}
	for rows.Next() {
		e := memento.Event{Tenant: s.Tenant, User: s.User}
		var typ string
		var value sql.NullFloat64
		var at, created int64
		if err := rows.Scan(&e.ID, &typ, &e.TitleID, &value, &at, &created); err != nil {
			return nil, err
		}
		e.Type, e.At, e.CreatedAt = memento.EventType(typ), fromNanos(at), fromNanos(created)
		if value.Valid {
			v := value.Float64
			e.Value = &v
		}
		events = append(events, e)
	}
	return events, rows.Err()
}

// userEventsScan is the most events added to the whole store since a mark
// that UserEventsSince reads through, in the order they were added, to
// find a user's; past it, it reads the user's own events instead.
const userEventsScan = 8192

// UserEventsSince returns the user's events added after mark (an events
// mark; 0 for every event) in the order they happened, with the mark they
// were read at, the number of the user's events and when the user was
// created: what an incremental profile recompute reads
// (profile.UserEventsSince). A user who does not exist has no events and
// a zero Created.
//
// The mark is the largest event row number. Row numbers freed by a
// forgotten user's events may be used again, for events below a mark a
// caller already read up to: Total tells the caller so, as the events it
// holds and those returned fall short of it.
func (db *DB) UserEventsSince(ctx context.Context, s memento.Scope, mark int64) (*memento.UserEvents, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	mark = max(mark, 0)
	out := &memento.UserEvents{Events: []memento.Event{}}
	err = db.readTx(ctx, func(tx *sql.Tx) error {
		var created int64
		switch err := tx.QueryRowContext(ctx, `SELECT created_at FROM users WHERE tenant_id = ? AND id = ?`, s.Tenant, s.User).Scan(&created); {
		case errors.Is(err, sql.ErrNoRows):
			return nil
		case err != nil:
			return err
		}
		out.Created = fromNanos(created)
		// pk is the rowid, so the largest is the table's last row.
		var top sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT max(pk) FROM events`).Scan(&top); err != nil {
			return err
		}
		out.Mark = top.Int64
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM events WHERE tenant_id = ? AND user_id = ?`, s.Tenant, s.User).Scan(&out.Total); err != nil {
			return err
		}
		if out.Mark <= mark || out.Total == 0 {
			return nil
		}
		// A few events added since the mark are a range scan of the rowids
		// from it; many, or all, are read by the user's index (+pk keeps
		// the planner off events_by_tenant, whose range from the mark would
		// be every event of the tenant since).
		query := `SELECT ` + eventColumns + ` FROM events
			WHERE tenant_id = ? AND user_id = ? AND +pk > ? ORDER BY at, pk`
		args := []any{s.Tenant, s.User, mark}
		scan := mark > 0 && out.Mark-mark <= userEventsScan
		if scan {
			query = `SELECT ` + eventColumns + ` FROM events NOT INDEXED
				WHERE pk > ? AND tenant_id = ? AND user_id = ? ORDER BY pk`
			args = []any{mark, s.Tenant, s.User}
		}
		var err error
		if out.Events, err = readEvents(ctx, tx, s, query, args...); err != nil {
			return err
		}
		if scan { // in the order they were added: put them in time order
			slices.SortStableFunc(out.Events, func(a, b memento.Event) int { return a.At.Compare(b.At) })
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read events of %s since %d: %w", s.User, mark, err)
	}
	return out, nil
}
