package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memento-ai/memento"
)

var (
	_ memento.ProfileService      = (*DB)(nil)
	_ memento.ProfileModelService = (*DB)(nil)
)

// profileKeyName is what a profile key may be called (as in package
// sqlite): a letter, then letters, digits, '_', '-' or '.', at most 64.
var profileKeyName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,63}$`)

// MaxProfileValueBytes bounds the JSON value of one user-set profile key.
const MaxProfileValueBytes = 64 << 10

func checkProfileKey(key string) error {
	if !profileKeyName.MatchString(key) {
		return memento.Errorf(memento.EINVALID, "profile key %q must start with a letter and hold at most 64 letters, digits, '_', '-' or '.'", key)
	}
	return nil
}

// Profile returns the user's profile, or an empty one at version 0.
// Errors: EINVALID.
func (db *DB) Profile(ctx context.Context, s memento.Scope) (*memento.Profile, error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	var p *memento.Profile
	err = db.readTx(ctx, func(tx pgx.Tx) error {
		var err error
		p, err = readProfile(ctx, tx, s)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read profile of %s: %w", s.User, err)
	}
	return p, nil
}

// readProfile reads the user's profile in one round trip.
func readProfile(ctx context.Context, tx pgx.Tx, s memento.Scope) (*memento.Profile, error) {
	b := &pgx.Batch{}
	queueProfileRead(b, s)
	var p *memento.Profile
	err := sendBatch(ctx, tx, b, func(br pgx.BatchResults) (err error) {
		p, err = readQueuedProfile(br, s)
		return err
	})
	return p, err
}

// queueProfileRead queues the reads of the user's profile in b, alone or
// after the statements that change it; readQueuedProfile reads their
// answers.
func queueProfileRead(b *pgx.Batch, s memento.Scope) {
	b.Queue(`SELECT version, updated_at FROM profiles WHERE tenant_id = $1 AND user_id = $2`, s.Tenant, s.User)
	b.Queue(`SELECT key, value, source, evidence, updated_at FROM profile_keys
		WHERE tenant_id = $1 AND user_id = $2 ORDER BY key`, s.Tenant, s.User)
}

func readQueuedProfile(br pgx.BatchResults, s memento.Scope) (*memento.Profile, error) {
	p := &memento.Profile{Tenant: s.Tenant, User: s.User, Keys: map[string]memento.ProfileEntry{}}
	var updated int64
	switch err := br.QueryRow().Scan(&p.Version, &updated); {
	case errors.Is(err, pgx.ErrNoRows):
		// No profile has no keys either (their foreign key): the
		// second read answers none.
	case err != nil:
		return nil, err
	default:
		p.UpdatedAt = fromNanos(updated)
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	var key, value, source string
	var evidence []byte
	var at int64
	_, err = pgx.ForEachRow(rows, []any{&key, &value, &source, &evidence, &at}, func() error {
		entry := memento.ProfileEntry{Value: json.RawMessage(value), Source: source, UpdatedAt: fromNanos(at)}
		if err := json.Unmarshal(evidence, &entry.Evidence); err != nil {
			return fmt.Errorf("decode evidence of key %s: %w", key, err)
		}
		if entry.Evidence == nil {
			entry.Evidence = []string{}
		}
		p.Keys[key] = entry
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// profileChanges is a change of a user's profile: its version bumped from
// cur, keys written and keys deleted, sent with the profile's read back
// in one round trip (send), whatever the number of keys.
type profileChanges struct {
	cur                             int64
	now                             time.Time
	keys, values, sources, evidence []string
	ats                             []int64
	remove                          []string
}

// put writes key with a value already compact (compactJSON).
func (c *profileChanges) put(key string, value json.RawMessage, source string, evidence []string, at time.Time) error {
	ev, err := json.Marshal(evidence)
	if err != nil {
		return fmt.Errorf("encode evidence of %s: %w", key, err)
	}
	c.keys = append(c.keys, key)
	c.values = append(c.values, string(value))
	c.sources = append(c.sources, source)
	c.evidence = append(c.evidence, string(ev))
	c.ats = append(c.ats, nanos(at))
	return nil
}

func (c *profileChanges) delete(key string) { c.remove = append(c.remove, key) }

// putProfileKeysSQL writes keys from arrays: key, value, source, evidence
// (JSON text) and updated_at.
const putProfileKeysSQL = `INSERT INTO profile_keys (tenant_id, user_id, key, value, source, evidence, updated_at)
	SELECT $1, $2, key, value, source, evidence::jsonb, updated_at
	FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[]) AS x(key, value, source, evidence, updated_at)
	ON CONFLICT (tenant_id, user_id, key) DO UPDATE SET value = excluded.value, source = excluded.source,
		evidence = excluded.evidence, updated_at = excluded.updated_at`

// queue queues the changes' statements in b; read reads their answers.
func (c *profileChanges) queue(b *pgx.Batch, s memento.Scope) {
	b.Queue(`INSERT INTO profiles (tenant_id, user_id, version, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (tenant_id, user_id) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at`,
		s.Tenant, s.User, c.cur+1, nanos(c.now))
	if len(c.keys) > 0 {
		b.Queue(putProfileKeysSQL, s.Tenant, s.User, c.keys, c.values, c.sources, c.evidence, c.ats)
	}
	if len(c.remove) > 0 {
		b.Queue(`DELETE FROM profile_keys WHERE tenant_id = $1 AND user_id = $2 AND key = ANY($3)`, s.Tenant, s.User, c.remove)
	}
}

func (c *profileChanges) read(br pgx.BatchResults) error {
	if _, err := br.Exec(); err != nil {
		return fmt.Errorf("bump profile version: %w", err)
	}
	if len(c.keys) > 0 {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("write keys %v: %w", c.keys, err)
		}
	}
	if len(c.remove) > 0 {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("delete keys %v: %w", c.remove, err)
		}
	}
	return nil
}

// send applies the changes in tx and reads the profile back, in one round
// trip.
func (c *profileChanges) send(ctx context.Context, tx pgx.Tx, s memento.Scope) (*memento.Profile, error) {
	b := &pgx.Batch{}
	c.queue(b, s)
	queueProfileRead(b, s)
	var p *memento.Profile
	err := sendBatch(ctx, tx, b, func(br pgx.BatchResults) (err error) {
		if err := c.read(br); err != nil {
			return err
		}
		p, err = readQueuedProfile(br, s)
		return err
	})
	return p, err
}

// SaveLearned replaces the learned keys of the profile with keys, leaving
// user-set keys alone; the version grows by one when anything changed.
// Errors: EINVALID.
func (db *DB) SaveLearned(ctx context.Context, s memento.Scope, keys map[string]memento.ProfileEntry) (*memento.Profile, error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if err := checkProfileKey(k); err != nil {
			return nil, err
		}
		if !json.Valid(keys[k].Value) {
			return nil, memento.Errorf(memento.EINVALID, "profile key %s: value is not valid JSON", k)
		}
	}
	var out *memento.Profile
	err = db.userTx(ctx, s, func(tx pgx.Tx) error {
		// As on SQLite: a user forgotten while the keys were learned is
		// not brought back. The user and the profile are read in one
		// round trip, the changes written and the profile read back in
		// another.
		b := &pgx.Batch{}
		b.Queue(`SELECT EXISTS (SELECT 1 FROM users WHERE tenant_id = $1 AND id = $2)`, s.Tenant, s.User)
		queueProfileRead(b, s)
		var exists bool
		var cur *memento.Profile
		if err := sendBatch(ctx, tx, b, func(br pgx.BatchResults) (err error) {
			if err := br.QueryRow().Scan(&exists); err != nil {
				return fmt.Errorf("look up user %s: %w", s.User, err)
			}
			cur, err = readQueuedProfile(br, s)
			return err
		}); err != nil {
			return err
		}
		if !exists {
			return memento.Errorf(memento.ENOTFOUND, "user %q does not exist (forgotten since its profile was learned)", s.User)
		}
		c := &profileChanges{cur: cur.Version, now: db.now()}
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			e := keys[k]
			old, ok := cur.Keys[k]
			if ok && old.Source == memento.ProfileUser {
				continue
			}
			evidence := e.Evidence
			if evidence == nil {
				evidence = []string{}
			}
			if ok && bytes.Equal(compactJSON(old.Value), compactJSON(e.Value)) && slices.Equal(old.Evidence, evidence) {
				continue
			}
			if err := c.put(k, compactJSON(e.Value), memento.ProfileLearned, evidence, c.now); err != nil {
				return err
			}
		}
		for _, k := range slices.Sorted(maps.Keys(cur.Keys)) {
			if _, keep := keys[k]; keep || cur.Keys[k].Source != memento.ProfileLearned {
				continue
			}
			c.delete(k)
		}
		if len(c.keys) == 0 && len(c.remove) == 0 {
			out = cur
			return nil
		}
		out, err = c.send(ctx, tx, s)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("save learned profile of %s: %w", s.User, err)
	}
	return out, nil
}

// UpdateProfile changes the user-set keys of the profile. Errors:
// EINVALID, ECONFLICT when IfVersion is stale.
func (db *DB) UpdateProfile(ctx context.Context, s memento.Scope, u memento.ProfileUpdate) (*memento.Profile, error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	for _, k := range slices.Sorted(maps.Keys(u.Set)) {
		if err := checkProfileKey(k); err != nil {
			return nil, err
		}
		v := u.Set[k]
		switch {
		case !json.Valid(v):
			return nil, memento.Errorf(memento.EINVALID, "profile key %s: value is not valid JSON", k)
		case len(v) > MaxProfileValueBytes:
			return nil, memento.Errorf(memento.EINVALID, "profile key %s: value is %d bytes, over the limit of %d", k, len(v), MaxProfileValueBytes)
		case string(compactJSON(v)) == "null":
			return nil, memento.Errorf(memento.EINVALID, "profile key %s: value must not be null; delete the key instead", k)
		}
	}
	for _, k := range u.Delete {
		if err := checkProfileKey(k); err != nil {
			return nil, err
		}
		if _, both := u.Set[k]; both {
			return nil, memento.Errorf(memento.EINVALID, "profile key %s is both set and deleted", k)
		}
	}
	var out *memento.Profile
	err = db.userTx(ctx, s, func(tx pgx.Tx) error {
		if _, err := db.ensureUser(ctx, tx, s); err != nil {
			return err
		}
		cur, err := readProfile(ctx, tx, s)
		if err != nil {
			return err
		}
		if u.IfVersion != nil && *u.IfVersion != cur.Version {
			return memento.Errorf(memento.ECONFLICT, "the profile of %s is at version %d, not %d: read it again and retry", s.User, cur.Version, *u.IfVersion)
		}
		c := &profileChanges{cur: cur.Version, now: db.now()}
		for _, k := range slices.Sorted(maps.Keys(u.Set)) {
			if err := c.put(k, compactJSON(u.Set[k]), memento.ProfileUser, []string{}, c.now); err != nil {
				return err
			}
		}
		for _, k := range u.Delete {
			c.delete(k)
		}
		if u.Replace {
			for k, e := range cur.Keys {
				if _, set := u.Set[k]; !set && e.Source == memento.ProfileUser {
					c.delete(k)
				}
			}
		}
		out, err = c.send(ctx, tx, s)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("update profile of %s: %w", s.User, err)
	}
	return out, nil
}

// RestoreProfile writes p as the user's profile as it is (keys, sources,
// evidence, times, version), replacing whatever the user had. Errors:
// EINVALID.
func (db *DB) RestoreProfile(ctx context.Context, s memento.Scope, p *memento.Profile) error {
	s, err := checkScope(s)
	if err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(p.Keys)) {
		if err := checkProfileKey(k); err != nil {
			return err
		}
		e := p.Keys[k]
		if !json.Valid(e.Value) {
			return memento.Errorf(memento.EINVALID, "profile key %s: value is not valid JSON", k)
		}
		if e.Source != memento.ProfileLearned && e.Source != memento.ProfileUser {
			return memento.Errorf(memento.EINVALID, "profile key %s: source must be %q or %q, got %q", k, memento.ProfileLearned, memento.ProfileUser, e.Source)
		}
	}
	err = db.userTx(ctx, s, func(tx pgx.Tx) error {
		if _, err := db.ensureUser(ctx, tx, s); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM profiles WHERE tenant_id = $1 AND user_id = $2`, s.Tenant, s.User); err != nil {
			return fmt.Errorf("delete old profile: %w", err)
		}
		updated := p.UpdatedAt
		if updated.IsZero() {
			updated = db.now()
		}
		if _, err := tx.Exec(ctx, `INSERT INTO profiles (tenant_id, user_id, version, updated_at) VALUES ($1, $2, $3, $4)`,
			s.Tenant, s.User, p.Version, nanos(updated)); err != nil {
			return fmt.Errorf("insert profile: %w", err)
		}
		c := &profileChanges{}
		for _, k := range slices.Sorted(maps.Keys(p.Keys)) {
			e := p.Keys[k]
			at := e.UpdatedAt
			if at.IsZero() {
				at = updated
			}
			evidence := e.Evidence
			if evidence == nil {
				evidence = []string{}
			}
			if err := c.put(k, compactJSON(e.Value), e.Source, evidence, at); err != nil {
				return err
			}
		}
		if len(c.keys) == 0 {
			return nil
		}
		if _, err := tx.Exec(ctx, putProfileKeysSQL, s.Tenant, s.User, c.keys, c.values, c.sources, c.evidence, c.ats); err != nil {
			return fmt.Errorf("write keys: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("restore profile of %s: %w", s.User, err)
	}
	return nil
}

// compactJSON returns v without insignificant space; invalid JSON is
// returned as it is.
func compactJSON(v json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return v
	}
	return b.Bytes()
}

// ProfileModel returns the named model of a tenant, or nil when there is
// none.
func (db *DB) ProfileModel(ctx context.Context, tenant, name string) (*memento.ProfileModel, error) {
	if tenant == "" {
		tenant = memento.DefaultTenant
	}
	m := &memento.ProfileModel{Tenant: tenant, Name: name}
	err := db.pool.QueryRow(ctx, `SELECT version, events_mark, data FROM profile_models WHERE tenant_id = $1 AND name = $2`,
		tenant, name).Scan(&m.Version, &m.EventsMark, &m.Data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("read model %s/%s: %w", tenant, name, err)
	}
	return m, nil
}

// ProfileModelVersion returns the version of the named model, 0 when
// there is none.
func (db *DB) ProfileModelVersion(ctx context.Context, tenant, name string) (int64, error) {
	if tenant == "" {
		tenant = memento.DefaultTenant
	}
	var v int64
	err := db.pool.QueryRow(ctx, `SELECT version FROM profile_models WHERE tenant_id = $1 AND name = $2`, tenant, name).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	} else if err != nil {
		return 0, fmt.Errorf("read model version %s/%s: %w", tenant, name, err)
	}
	return v, nil
}

// SaveProfileModel stores a model and returns its new version (the
// previous plus one, or m.Version with keepVersion). Two processes saving
// one model at once are serialised by the row's lock. Errors: EINVALID.
func (db *DB) SaveProfileModel(ctx context.Context, m memento.ProfileModel, keepVersion bool) (int64, error) {
	if m.Tenant == "" {
		m.Tenant = memento.DefaultTenant
	}
	if m.Name == "" {
		return 0, memento.Errorf(memento.EINVALID, "model name is required")
	}
	var version int64
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		now := nanos(db.now())
		if _, err := tx.Exec(ctx, `INSERT INTO tenants (id, created_at) VALUES ($1, $2) ON CONFLICT DO NOTHING`, m.Tenant, now); err != nil {
			return fmt.Errorf("insert tenant: %w", err)
		}
		version = m.Version
		if !keepVersion {
			version = 1
		}
		data := m.Data
		if data == nil {
			data = []byte{}
		}
		return tx.QueryRow(ctx, `INSERT INTO profile_models (tenant_id, name, version, events_mark, data, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (tenant_id, name) DO UPDATE SET
				version = CASE WHEN $7 THEN excluded.version ELSE profile_models.version + 1 END,
				events_mark = excluded.events_mark, data = excluded.data, updated_at = excluded.updated_at
			RETURNING version`, m.Tenant, m.Name, version, m.EventsMark, data, now, keepVersion).Scan(&version)
	})
	if err != nil {
		return 0, fmt.Errorf("save model %s/%s: %w", m.Tenant, m.Name, err)
	}
	return version, nil
}

// The events mark. Every event row takes a mark from one sequence, after
// taking its tenant's events lock in shared mode, held to commit (the
// events_mark trigger of migration 0005, which every write path runs).
// committedMark reads the largest mark of a tenant while holding that lock
// exclusively, so no event with a mark at or below it is still uncommitted
// (or ever will be): the marks are in commit order as far as their readers
// can tell, and a range scan above a mark misses nothing. Writers share
// the lock and never wait for one another; the reader waits only for the
// event transactions already under way, for one statement.

// eventsMarkLock is the class of the tenants' events locks (two-integer
// advisory locks, keyed by hashtext of the tenant): "meme" in ASCII, as in
// migration 0005.
const eventsMarkLock int32 = 0x6d656d65

// EventsMark returns a number that grows whenever an event is added to
// the tenant (the largest event mark), 0 when it has none. It does not
// wait for event transactions under way: a model saved at a mark read by
// EachUserEvents had every event up to that mark, so comparing the two
// for equality is exact without it.
func (db *DB) EventsMark(ctx context.Context, tenant string) (int64, error) {
	if tenant == "" {
		tenant = memento.DefaultTenant
	}
	var mark int64
	if err := db.pool.QueryRow(ctx, `SELECT coalesce(max(mark), 0) FROM events WHERE tenant_id = $1`, tenant).Scan(&mark); err != nil {
		return 0, fmt.Errorf("events mark of %s: %w", tenant, err)
	}
	return mark, nil
}

// committedMark returns the tenant's largest events mark once every event
// transaction that drew a mark before it has ended (see eventsMarkLock).
func (db *DB) committedMark(ctx context.Context, tenant string) (int64, error) {
	var mark int64
	var err error
	for attempt := 1; attempt <= txAttempts; attempt++ {
		err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, eventsMarkLock, tenant); err != nil {
				return fmt.Errorf("lock events: %w", err)
			}
			// READ COMMITTED: this statement's snapshot is taken after
			// the lock was granted.
			return tx.QueryRow(ctx, `SELECT coalesce(max(mark), 0) FROM events WHERE tenant_id = $1`, tenant).Scan(&mark)
		})
		if !retryable(err) || ctx.Err() != nil {
			break
		}
	}
	return mark, err
}

// EachUserEvents calls fn with the events of every user of the tenant, one
// user at a time in the order of their ids, each user's events in the
// order they happened, and returns the mark they were read at: every
// event up to it, none after it. fn must not keep events after it
// returns.
func (db *DB) EachUserEvents(ctx context.Context, tenant string, fn func(user string, events []memento.Event) error) (int64, error) {
	return db.eachUserEvents(ctx, tenant, -1, fn)
}

// EachUserEventsSince is EachUserEvents for the users who have an event
// with a mark above mark (an EventsMark), each with all of their events:
// what an incremental update of the co-occurrence model reads. The users
// are found by a range scan of the tenant's marks.
func (db *DB) EachUserEventsSince(ctx context.Context, tenant string, mark int64, fn func(user string, events []memento.Event) error) (int64, error) {
	return db.eachUserEvents(ctx, tenant, max(mark, 0), fn)
}

// eachUserEvents serves both: since < 0 reads every user.
func (db *DB) eachUserEvents(ctx context.Context, tenant string, since int64, fn func(user string, events []memento.Event) error) (int64, error) {
	if tenant == "" {
		tenant = memento.DefaultTenant
	}
	mark, err := db.committedMark(ctx, tenant)
	if err != nil {
		return 0, fmt.Errorf("read events of tenant %s: %w", tenant, err)
	}
	// Events above the mark, committed since it was read, are left for the
	// next read: it finds them above this mark.
	query, args := `SELECT user_id, id, type, title_id, value, at FROM events
		WHERE tenant_id = $1 AND mark <= $2 ORDER BY user_id COLLATE "C", at, pk`, []any{tenant, mark}
	if since >= 0 {
		query, args = `SELECT user_id, id, type, title_id, value, at FROM events
			WHERE tenant_id = $1 AND mark <= $2
			  AND user_id IN (SELECT user_id FROM events WHERE tenant_id = $1 AND mark > $3 AND mark <= $2)
			ORDER BY user_id COLLATE "C", at, pk`, []any{tenant, mark, since}
	}
	err = db.readTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		var cur string
		var batch []memento.Event
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			err := fn(cur, batch)
			batch = batch[:0]
			return err
		}
		for rows.Next() {
			var e memento.Event
			var typ string
			var at int64
			if err := rows.Scan(&e.User, &e.ID, &typ, &e.TitleID, &e.Value, &at); err != nil {
				return err
			}
			if e.User != cur {
				if err := flush(); err != nil {
					return err
				}
				cur = e.User
			}
			e.Tenant, e.Type, e.At = tenant, memento.EventType(typ), fromNanos(at)
			batch = append(batch, e)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return flush()
	})
	if err != nil {
		return 0, fmt.Errorf("read events of tenant %s: %w", tenant, err)
	}
	return mark, nil
}
