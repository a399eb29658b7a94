package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/memento-ai/memento"
)

// checkEvents validates events before anything is written, naming the
// index of the first bad one; Value follows memento.Event's contract.
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
// is already stored for the user is skipped. Errors: EINVALID.
func (db *DB) AddEvents(ctx context.Context, s memento.Scope, events []memento.Event, jobsFor func(memento.Event) []memento.JobRequest) (int, error) {
	s, err := checkScope(s)
	if err != nil {
		return 0, err
	}
	if err := checkEvents(events); err != nil {
		return 0, err
	}
	var inserted int
	err = db.userTx(ctx, s, func(tx pgx.Tx) error {
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
// new one, in tx: the events in one statement, whatever their number, in
// their order. It returns how many were new.
func (db *DB) insertEvents(ctx context.Context, tx pgx.Tx, s memento.Scope, events []memento.Event, jobsFor func(memento.Event) []memento.JobRequest) (int, error) {
	if len(events) == 0 {
		return 0, db.insertJobs(ctx, tx, s, nil)
	}
	now := db.now()
	events = slices.Clone(events)
	ids, types, titles := make([]string, len(events)), make([]string, len(events)), make([]string, len(events))
	values, ats := make([]*float64, len(events)), make([]int64, len(events))
	for i := range events {
		e := &events[i]
		if e.ID == "" {
			e.ID = newID("evt_")
		}
		if e.At.IsZero() {
			e.At = now
		}
		ids[i], types[i], titles[i], values[i], ats[i] = e.ID, string(e.Type), e.TitleID, e.Value, nanos(e.At)
	}
	// An id stored already, or given twice, is inserted once: its first
	// event, as one statement an event would.
	rows, err := tx.Query(ctx, `INSERT INTO events (tenant_id, user_id, id, type, title_id, value, at, created_at)
		SELECT $1, $2, id, type, title_id, value, at, $8
		FROM unnest($3::text[], $4::text[], $5::text[], $6::float8[], $7::bigint[]) WITH ORDINALITY AS x(id, type, title_id, value, at, n)
		ORDER BY n
		ON CONFLICT (tenant_id, user_id, id) DO NOTHING RETURNING id`,
		s.Tenant, s.User, ids, types, titles, values, ats, nanos(now))
	if err != nil {
		return 0, fmt.Errorf("insert %d events: %w", len(events), err)
	}
	added, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, fmt.Errorf("insert %d events: %w", len(events), err)
	}
	isNew := make(map[string]bool, len(added))
	for _, id := range added {
		isNew[id] = true
	}
	var jobs []memento.JobRequest
	for _, e := range events {
		if !isNew[e.ID] {
			continue
		}
		delete(isNew, e.ID) // the first of an id given twice
		e.Tenant, e.User, e.At, e.CreatedAt = s.Tenant, s.User, e.At.UTC(), now
		if jobsFor != nil {
			jobs = append(jobs, jobsFor(e)...)
		}
	}
	if err := db.insertJobs(ctx, tx, s, jobs); err != nil {
		return 0, err
	}
	return len(added), nil
}

// Events lists a user's events in the order they happened.
func (db *DB) Events(ctx context.Context, s memento.Scope) ([]memento.Event, error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	rows, err := db.pool.Query(ctx, `SELECT `+eventColumns+` FROM events
		WHERE tenant_id = $1 AND user_id = $2 ORDER BY at, pk`, s.Tenant, s.User)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	out, err := collect(rows, eventOf(s))
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	return out, nil
}

// UserEventsSince returns the user's events with a mark above mark (0 for
// every event) in the order they happened, with the largest mark of the
// user's events, their number and when the user was created, all read in
// one snapshot: what an incremental profile recompute reads
// (profile.UserEventsSince). A user who does not exist has no events and
// a zero Created.
//
// Marks are drawn before commit, so an event of the user whose
// transaction commits after this read may carry a mark below the one
// returned. It is not lost: the next read counts it in Total, which the
// events its caller holds then fall short of, and the caller reads every
// event again. (Two events of the user at the same instant whose writes
// commit in the other order than their row numbers are folded in the
// order of their commits until the caller's next full read; the full read
// orders them by row, and its check counts the difference.)
func (db *DB) UserEventsSince(ctx context.Context, s memento.Scope, mark int64) (*memento.UserEvents, error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	mark = max(mark, 0)
	var out *memento.UserEvents
	err = db.readTx(ctx, func(tx pgx.Tx) error {
		out = &memento.UserEvents{Events: []memento.Event{}}
		var created int64
		switch err := tx.QueryRow(ctx, `SELECT created_at FROM users WHERE tenant_id = $1 AND id = $2`, s.Tenant, s.User).Scan(&created); {
		case errors.Is(err, pgx.ErrNoRows):
			return nil
		case err != nil:
			return err
		}
		out.Created = fromNanos(created)
		if err := tx.QueryRow(ctx, `SELECT count(*), coalesce(max(mark), 0) FROM events WHERE tenant_id = $1 AND user_id = $2`,
			s.Tenant, s.User).Scan(&out.Total, &out.Mark); err != nil {
			return err
		}
		if out.Mark <= mark {
			return nil
		}
		// The user's index serves the read; mark + 0 keeps the planner
		// off events_by_mark, whose range from a mark of 0 (or an old one)
		// is every event of the tenant since.
		rows, err := tx.Query(ctx, `SELECT `+eventColumns+` FROM events
			WHERE tenant_id = $1 AND user_id = $2 AND mark + 0 > $3 ORDER BY at, pk`, s.Tenant, s.User, mark)
		if err != nil {
			return err
		}
		out.Events, err = collect(rows, eventOf(s))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read events of %s since %d: %w", s.User, mark, err)
	}
	return out, nil
}

// eventColumns are the columns eventOf scans, in its order.
const eventColumns = `id, type, title_id, value, at, created_at`

// eventOf scans a row of eventColumns as an event of s's user.
func eventOf(s memento.Scope) func(pgx.Rows) (memento.Event, error) {
	return func(r pgx.Rows) (memento.Event, error) {
		e := memento.Event{Tenant: s.Tenant, User: s.User}
		var typ string
		var at, created int64
		err := r.Scan(&e.ID, &typ, &e.TitleID, &e.Value, &at, &created)
		e.Type, e.At, e.CreatedAt = memento.EventType(typ), fromNanos(at), fromNanos(created)
		return e, err
	}
}
