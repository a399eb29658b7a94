package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"time"

	"github.com/memento-ai/memento"
)

// Compile-time checks that *DB keeps profiles and their models.
var (
	_ memento.ProfileService      = (*DB)(nil)
	_ memento.ProfileModelService = (*DB)(nil)
)

// profileKeyName is what a profile key may be called: a letter, then
// letters, digits, '_', '-' or '.', at most 64 in all.
var profileKeyName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,63}$`)

// MaxProfileValueBytes bounds the JSON value of one user-set profile key.
const MaxProfileValueBytes = 64 << 10

// CheckProfileKey validates the name of a profile key.
func CheckProfileKey(key string) error {
	if !profileKeyName.MatchString(key) {
		return memento.Errorf(memento.EINVALID, "profile key %q must start with a letter and hold at most 64 letters, digits, '_', '-' or '.'", key)
	}
	return nil
}

// Profile returns the user's profile, or an empty one at version 0 when the
// user has none (or is unknown). Errors: EINVALID.
func (db *DB) Profile(ctx context.Context, s memento.Scope) (*memento.Profile, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	var p *memento.Profile
	err = db.readTx(ctx, func(tx *sql.Tx) error {
		var err error
		p, err = readProfile(ctx, readTxQueries{db, tx}, s)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read profile of %s: %w", s.User, err)
	}
	return p, nil
}

// readProfile reads the profile of s in tx.
func readProfile(ctx context.Context, tx execQuerier, s memento.Scope) (*memento.Profile, error) {
	p := &memento.Profile{Tenant: s.Tenant, User: s.User, Keys: map[string]memento.ProfileEntry{}}
	var updated int64
	err := tx.QueryRowContext(ctx, `SELECT version, updated_at FROM profiles WHERE tenant_id = ? AND user_id = ?`,
		s.Tenant, s.User).Scan(&p.Version, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return p, nil
	} else if err != nil {
		return nil, err
	}
	p.UpdatedAt = fromNanos(updated)
	rows, err := tx.QueryContext(ctx, `SELECT key, value, source, evidence, updated_at FROM profile_keys
		WHERE tenant_id = ? AND user_id = ? ORDER BY key`, s.Tenant, s.User)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var key, value, evidence string
		var e memento.ProfileEntry
		var at int64
		if err := rows.Scan(&key, &value, &e.Source, &evidence, &at); err != nil {
			return nil, err
		}
		e.Value, e.UpdatedAt = json.RawMessage(value), fromNanos(at)
		if err := json.Unmarshal([]byte(evidence), &e.Evidence); err != nil {
			return nil, fmt.Errorf("decode evidence of key %s: %w", key, err)
		}
		if e.Evidence == nil {
			e.Evidence = []string{}
		}
		p.Keys[key] = e
	}
	return p, rows.Err()
}

// SaveLearned replaces the learned keys of the user's profile with keys: it
// writes the keys whose value or evidence changed, removes learned keys not
// in keys, and leaves alone every key the user set, whether or not keys
// names it. The version grows by one when anything changed. The user is
// created as needed. It goes through group commit: a batch of a user's
// backlog saves the profile its events changed, and such saves share their
// commits. Errors: EINVALID.
func (db *DB) SaveLearned(ctx context.Context, s memento.Scope, keys map[string]memento.ProfileEntry) (*memento.Profile, error) {
	return db.SaveLearnedOver(ctx, s, keys, nil)
}

// SaveLearnedOver is SaveLearned for a caller that has read the user's
// profile (pre, which may be stale by now; nil reads it): the profile is
// read, and the changes worked out, before the write, off the one writer
// (a profile's evidence lists run to hundreds of event ids), and the write
// checks that the profile is still the one read (its version and update
// time: every change moves both) and works them out again only when it
// is not. A profile's learner reads the profile anyway, to tell whether
// its save changed it.
func (db *DB) SaveLearnedOver(ctx context.Context, s memento.Scope, keys map[string]memento.ProfileEntry, pre *memento.Profile) (*memento.Profile, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if err := CheckProfileKey(k); err != nil {
			return nil, err
		}
		if !json.Valid(keys[k].Value) {
			return nil, memento.Errorf(memento.EINVALID, "profile key %s: value is not valid JSON", k)
		}
	}
	if pre == nil || pre.Tenant != s.Tenant || pre.User != s.User {
		if pre, err = db.Profile(ctx, s); err != nil {
			return nil, fmt.Errorf("save learned profile of %s: %w", s.User, err)
		}
	}
	return db.saveLearned(ctx, s, keys, pre)
}

// saveLearned is SaveLearned over pre, the profile as read before the
// write.
func (db *DB) saveLearned(ctx context.Context, s memento.Scope, keys map[string]memento.ProfileEntry, pre *memento.Profile) (*memento.Profile, error) {
	prePlan := planLearned(pre, keys)
	var out *memento.Profile
	err := db.groupTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		// Learned keys come from the user's events, so the user exists
		// unless they were forgotten while the keys were learned: then
		// nothing is written, or the user would come back.
		var n int
		if err := db.prepared(tx).QueryRowContext(ctx, `SELECT count(*) FROM users WHERE tenant_id = ? AND id = ?`, s.Tenant, s.User).Scan(&n); err != nil {
			return fmt.Errorf("look up user %s: %w", s.User, err)
		}
		if n == 0 {
			return memento.Errorf(memento.ENOTFOUND, "user %q does not exist (forgotten since its profile was learned)", s.User)
		}
		cur, plan := pre, prePlan
		if same, err := profileIsAt(ctx, db.prepared(tx), s, pre); err != nil {
			return err
		} else if !same {
			if cur, err = readProfile(ctx, db.prepared(tx), s); err != nil {
				return err
			}
			plan = planLearned(cur, keys)
		}
		if len(plan.put) == 0 && len(plan.remove) == 0 {
			out = cur
			return nil
		}
		now := db.now()
		if err := bumpProfile(ctx, db.prepared(tx), s, cur.Version, now); err != nil {
			return err
		}
		for _, k := range plan.put {
			if err := putProfileKey(ctx, db.prepared(tx), s, k, keys[k].Value, memento.ProfileLearned, learnedEvidence(keys[k]), now); err != nil {
				return err
			}
		}
		for _, k := range plan.remove {
			if _, err := db.prepared(tx).ExecContext(ctx, `DELETE FROM profile_keys WHERE tenant_id = ? AND user_id = ? AND key = ?`,
				s.Tenant, s.User, k); err != nil {
				return fmt.Errorf("delete key %s: %w", k, err)
			}
		}
		out = plan.applied(cur, keys, now)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("save learned profile of %s: %w", s.User, err)
	}
	return out, nil
}

// learnedPlan is what SaveLearned changes in a profile: the learned keys
// to write (new, or with another value or evidence) and the learned keys
// to remove, each sorted.
type learnedPlan struct {
	put, remove []string
}

// planLearned works out the changes that replace cur's learned keys with
// keys, leaving alone every key the user set.
func planLearned(cur *memento.Profile, keys map[string]memento.ProfileEntry) learnedPlan {
	var p learnedPlan
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		e := keys[k]
		old, ok := cur.Keys[k]
		if ok && old.Source == memento.ProfileUser {
			continue // the user's word stands
		}
		if ok && bytes.Equal(compactJSON(old.Value), compactJSON(e.Value)) && slices.Equal(old.Evidence, learnedEvidence(e)) {
			continue
		}
		p.put = append(p.put, k)
	}
	for _, k := range slices.Sorted(maps.Keys(cur.Keys)) {
		if _, keep := keys[k]; keep || cur.Keys[k].Source != memento.ProfileLearned {
			continue
		}
		p.remove = append(p.remove, k)
	}
	return p
}

// applied returns cur with the plan's changes made at now, as reading it
// back would return it.
func (p learnedPlan) applied(cur *memento.Profile, keys map[string]memento.ProfileEntry, now time.Time) *memento.Profile {
	at := fromNanos(now.UnixNano())
	out := &memento.Profile{Tenant: cur.Tenant, User: cur.User, Version: cur.Version + 1, UpdatedAt: at,
		Keys: make(map[string]memento.ProfileEntry, len(cur.Keys)+len(p.put))}
	for k, e := range cur.Keys {
		out.Keys[k] = e
	}
	for _, k := range p.remove {
		delete(out.Keys, k)
	}
	for _, k := range p.put {
		out.Keys[k] = memento.ProfileEntry{Value: compactJSON(keys[k].Value), Source: memento.ProfileLearned,
			Evidence: slices.Clone(learnedEvidence(keys[k])), UpdatedAt: at}
	}
	return out
}

// learnedEvidence is the evidence SaveLearned stores for e: none is an
// empty list.
func learnedEvidence(e memento.ProfileEntry) []string {
	if e.Evidence == nil {
		return []string{}
	}
	return e.Evidence
}

// profileIsAt reports whether the profile of s in tx is still the one
// read as p: the same version and update time, or still none.
func profileIsAt(ctx context.Context, tx execQuerier, s memento.Scope, p *memento.Profile) (bool, error) {
	var version, updated int64
	err := tx.QueryRowContext(ctx, `SELECT version, updated_at FROM profiles WHERE tenant_id = ? AND user_id = ?`,
		s.Tenant, s.User).Scan(&version, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return p.Version == 0 && p.UpdatedAt.IsZero() && len(p.Keys) == 0, nil
	} else if err != nil {
		return false, fmt.Errorf("read profile version: %w", err)
	}
	return version == p.Version && fromNanos(updated).Equal(p.UpdatedAt), nil
}

// UpdateProfile changes the user-set keys of the profile: Set keys are
// written with source "user" (taking a learned key over), Delete keys are
// removed whoever set them, and with Replace every other user-set key is
// removed. A stale IfVersion fails with ECONFLICT and changes nothing.
// Errors: EINVALID, ECONFLICT.
func (db *DB) UpdateProfile(ctx context.Context, s memento.Scope, u memento.ProfileUpdate) (*memento.Profile, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	for _, k := range slices.Sorted(maps.Keys(u.Set)) {
		if err := CheckProfileKey(k); err != nil {
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
		if err := CheckProfileKey(k); err != nil {
			return nil, err
		}
		if _, both := u.Set[k]; both {
			return nil, memento.Errorf(memento.EINVALID, "profile key %s is both set and deleted", k)
		}
	}
	var out *memento.Profile
	err = db.writeTx(ctx, func(tx *sql.Tx) error {
		if _, err := db.ensureUser(ctx, tx, s); err != nil {
			return err
		}
		cur, err := readProfile(ctx, db.prepared(tx), s)
		if err != nil {
			return err
		}
		if u.IfVersion != nil && *u.IfVersion != cur.Version {
			return memento.Errorf(memento.ECONFLICT, "the profile of %s is at version %d, not %d: read it again and retry", s.User, cur.Version, *u.IfVersion)
		}
		now := db.now()
		if err := bumpProfile(ctx, db.prepared(tx), s, cur.Version, now); err != nil {
			return err
		}
		for _, k := range slices.Sorted(maps.Keys(u.Set)) {
			if err := putProfileKey(ctx, db.prepared(tx), s, k, compactJSON(u.Set[k]), memento.ProfileUser, []string{}, now); err != nil {
				return err
			}
		}
		remove := slices.Clone(u.Delete)
		if u.Replace {
			for k, e := range cur.Keys {
				if _, set := u.Set[k]; !set && e.Source == memento.ProfileUser {
					remove = append(remove, k)
				}
			}
		}
		for _, k := range remove {
			if _, err := db.prepared(tx).ExecContext(ctx, `DELETE FROM profile_keys WHERE tenant_id = ? AND user_id = ? AND key = ?`,
				s.Tenant, s.User, k); err != nil {
				return fmt.Errorf("delete key %s: %w", k, err)
			}
		}
		out, err = readProfile(ctx, db.prepared(tx), s)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("update profile of %s: %w", s.User, err)
	}
	return out, nil
}

// RestoreProfile writes p as the user's profile, keys, sources, evidence,
// times and version as they are, replacing whatever the user had. It is how
// a snapshot comes back. Errors: EINVALID.
func (db *DB) RestoreProfile(ctx context.Context, s memento.Scope, p *memento.Profile) error {
	s, err := db.scope(ctx, s)
	if err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(p.Keys)) {
		if err := CheckProfileKey(k); err != nil {
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
	err = db.writeTx(ctx, func(tx *sql.Tx) error {
		if _, err := db.ensureUser(ctx, tx, s); err != nil {
			return err
		}
		if _, err := db.prepared(tx).ExecContext(ctx, `DELETE FROM profiles WHERE tenant_id = ? AND user_id = ?`, s.Tenant, s.User); err != nil {
			return fmt.Errorf("delete old profile: %w", err)
		}
		updated := p.UpdatedAt
		if updated.IsZero() {
			updated = db.now()
		}
		if _, err := db.prepared(tx).ExecContext(ctx, `INSERT INTO profiles (tenant_id, user_id, version, updated_at) VALUES (?, ?, ?, ?)`,
			s.Tenant, s.User, p.Version, nanos(updated)); err != nil {
			return fmt.Errorf("insert profile: %w", err)
		}
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
			if err := putProfileKey(ctx, db.prepared(tx), s, k, compactJSON(e.Value), e.Source, evidence, at); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("restore profile of %s: %w", s.User, err)
	}
	return nil
}

// bumpProfile creates the profile row at version 1, or moves an existing
// one from version cur to cur+1.
func bumpProfile(ctx context.Context, tx execQuerier, s memento.Scope, cur int64, now time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO profiles (tenant_id, user_id, version, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (tenant_id, user_id) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at`,
		s.Tenant, s.User, cur+1, now.UnixNano())
	if err != nil {
		return fmt.Errorf("bump profile version: %w", err)
	}
	return nil
}

// putProfileKey inserts or replaces one key.
func putProfileKey(ctx context.Context, tx execQuerier, s memento.Scope, key string, value json.RawMessage, source string, evidence []string, at time.Time) error {
	ev, err := json.Marshal(evidence)
	if err != nil {
		return fmt.Errorf("encode evidence of %s: %w", key, err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO profile_keys (tenant_id, user_id, key, value, source, evidence, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (tenant_id, user_id, key) DO UPDATE SET value = excluded.value, source = excluded.source,
			evidence = excluded.evidence, updated_at = excluded.updated_at`,
		s.Tenant, s.User, key, string(compactJSON(value)), source, string(ev), at.UnixNano())
	if err != nil {
		return fmt.Errorf("write key %s: %w", key, err)
	}
	return nil
}

// compactJSON returns v without insignificant space, so that equal values
// compare equal; invalid JSON is returned as it is.
func compactJSON(v json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return v
	}
	return b.Bytes()
}

// ProfileModel returns the named model of a tenant, or nil when there is
// none. A model saved in parts is read with its parts in one snapshot.
func (db *DB) ProfileModel(ctx context.Context, tenant, name string) (*memento.ProfileModel, error) {
	if tenant == "" {
		tenant = memento.DefaultTenant
	}
	m := &memento.ProfileModel{Tenant: tenant, Name: name}
	found := false
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		var stage sql.NullString
		var parts int
		err := tx.QueryRowContext(ctx, `SELECT version, events_mark, data, stage, parts FROM profile_models WHERE tenant_id = ? AND name = ?`,
			tenant, name).Scan(&m.Version, &m.EventsMark, &m.Data, &stage, &parts)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		} else if err != nil {
			return err
		}
		found = true
		if parts == 0 {
			return nil
		}
		rows, err := tx.QueryContext(ctx, `SELECT part, data FROM profile_model_parts
			WHERE tenant_id = ? AND name = ? AND stage = ? ORDER BY part`, tenant, name, stage.String)
		if err != nil {
			return err
		}
		defer rows.Close()
		m.Data = m.Data[:0]
		n := 0
		for rows.Next() {
			var part int
			var data []byte
			if err := rows.Scan(&part, &data); err != nil {
				return err
			}
			if part != n {
				return fmt.Errorf("part %d of %d is missing", n, parts)
			}
			m.Data = append(m.Data, data...)
			n++
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if n != parts {
			return fmt.Errorf("%d of its %d parts are stored", n, parts)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read model %s/%s: %w", tenant, name, err)
	}
	if !found {
		return nil, nil
	}
	return m, nil
}

// ProfileModelVersion returns the version of the named model, 0 when there
// is none. It is cheap enough to ask before every use of a cached model.
func (db *DB) ProfileModelVersion(ctx context.Context, tenant, name string) (int64, error) {
	if tenant == "" {
		tenant = memento.DefaultTenant
	}
	var v int64
	err := db.reads().QueryRowContext(ctx, `SELECT version FROM profile_models WHERE tenant_id = ? AND name = ?`,
		tenant, name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	} else if err != nil {
		return 0, fmt.Errorf("read model version %s/%s: %w", tenant, name, err)
	}
	return v, nil
}

// modelPartBytes is the largest part of a model saved in parts: a write
// of it holds the writer about as long as a batch of the background's
// other writes (64 pages of 4 KiB).
const modelPartBytes = 256 << 10

// SaveProfileModel stores a model, replacing the previous one, and returns
// its new version. With keepVersion the given m.Version is kept (a model
// restored from a snapshot); otherwise it is the previous version plus one.
//
// The writes go through the group commit. A model larger than
// modelPartBytes (the co-occurrence model is megabytes) is written in
// parts, each a write of its own, so that no write of it holds the writer
// long while appends wait; one small write after them makes the parts
// current, and the previous model's parts are deleted after it, each part
// a write of its own. All of them are handed to the group commit at once,
// in that order (groupSeq), and the save waits for the queue once. A
// reader sees the previous model until the row's write. Parts left by a
// save that did not finish (a crash) are deleted by the next save. A
// model job's writes commit without waiting for the disk, as every job's
// do (durability.go): a model lost with a power loss is learned again by
// the next model job. Any other save is durable when it returns.
func (db *DB) SaveProfileModel(ctx context.Context, m memento.ProfileModel, keepVersion bool) (int64, error) {
	if m.Tenant == "" {
		m.Tenant = memento.DefaultTenant
	}
	if m.Name == "" {
		return 0, memento.Errorf(memento.EINVALID, "model name is required")
	}
	fail := func(err error) (int64, error) {
		return 0, fmt.Errorf("save model %s/%s: %w", m.Tenant, m.Name, err)
	}
	// The parts stored now, to delete after the new row is written: the
	// previous model's, no longer current then, and those a save that
	// did not finish left. A part current when its deletion runs stays.
	var old []modelPart
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		var err error
		old, err = modelParts(ctx, tx, m.Tenant, m.Name)
		return err
	})
	if err != nil {
		return fail(err)
	}
	var writes []func(ctx context.Context, tx *sql.Tx) error
	var stage any // NULL: the model is in its row
	inline, parts := m.Data, 0
	if size := db.modelPart; len(m.Data) > size {
		id := newID("stage_")
		stage, inline, parts = id, []byte{}, (len(m.Data)+size-1)/size
		for i := range parts {
			writes = append(writes, func(ctx context.Context, tx *sql.Tx) error {
				if _, err := db.prepared(tx).ExecContext(ctx, `INSERT INTO tenants (id, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING`,
					m.Tenant, nanos(db.now())); err != nil {
					return fmt.Errorf("insert tenant: %w", err)
				}
				_, err := db.prepared(tx).ExecContext(ctx, `INSERT INTO profile_model_parts (tenant_id, name, stage, part, data) VALUES (?, ?, ?, ?, ?)`,
					m.Tenant, m.Name, id, i, m.Data[i*size:min((i+1)*size, len(m.Data))])
				if err != nil {
					return fmt.Errorf("part %d of %d: %w", i+1, parts, err)
				}
				return nil
			})
		}
	}
	var version int64
	row := len(writes)
	writes = append(writes, func(ctx context.Context, tx *sql.Tx) error {
		now := nanos(db.now())
		if _, err := db.prepared(tx).ExecContext(ctx, `INSERT INTO tenants (id, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING`, m.Tenant, now); err != nil {
			return fmt.Errorf("insert tenant: %w", err)
		}
		if parts > 0 {
			// A part that failed, or another process's save that
			// deleted these parts as left over: then this save fails.
			var n int
			if err := db.prepared(tx).QueryRowContext(ctx, `SELECT count(*) FROM profile_model_parts WHERE tenant_id = ? AND name = ? AND stage = ?`,
				m.Tenant, m.Name, stage).Scan(&n); err != nil {
				return err
			}
			if n != parts {
				return memento.Errorf(memento.ECONFLICT, "%d of the model's %d parts were written", n, parts)
			}
		}
		if keepVersion {
			version = m.Version
		} else {
			if err := db.prepared(tx).QueryRowContext(ctx, `SELECT coalesce(max(version), 0) + 1 FROM profile_models WHERE tenant_id = ? AND name = ?`,
				m.Tenant, m.Name).Scan(&version); err != nil {
				return err
			}
		}
		_, err := db.prepared(tx).ExecContext(ctx, `INSERT INTO profile_models (tenant_id, name, version, events_mark, data, updated_at, stage, parts)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (tenant_id, name) DO UPDATE SET version = excluded.version, events_mark = excluded.events_mark,
				data = excluded.data, updated_at = excluded.updated_at, stage = excluded.stage, parts = excluded.parts`,
			m.Tenant, m.Name, version, m.EventsMark, inline, now, stage, parts)
		return err
	})
	writes = append(writes, db.dropModelParts(m.Tenant, m.Name, old)...)
	errs := db.groupSeq(ctx, writes)
	if err := errors.Join(errs[:row+1]...); err != nil {
		if id, ok := stage.(string); ok {
			// What of this save's parts was written.
			all := make([]modelPart, parts)
			for i := range all {
				all[i] = modelPart{id, i}
			}
			db.groupSeq(ctx, db.dropModelParts(m.Tenant, m.Name, all))
		}
		return fail(err)
	}
	if err := errors.Join(errs[row+1:]...); err != nil && ctx.Err() == nil {
		db.logger.Warn("sqlite: parts of an earlier model left for the next save", "tenant", m.Tenant, "model", m.Name, "err", err)
	}
	return version, nil
}

// modelPart names a part of a model saved in parts.
type modelPart struct {
	stage string
	part  int
}

// modelParts returns the stored parts of the named model, of every save.
func modelParts(ctx context.Context, tx *sql.Tx, tenant, name string) ([]modelPart, error) {
	rows, err := tx.QueryContext(ctx, `SELECT stage, part FROM profile_model_parts WHERE tenant_id = ? AND name = ?`,
		tenant, name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []modelPart
	for rows.Next() {
		var k modelPart
		if err := rows.Scan(&k.stage, &k.part); err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// dropModelParts returns the writes that delete the named model's parts
// ps, one a part, each unless the model's row points at it when it runs
// (a save, this one or another process's, may have made it current).
func (db *DB) dropModelParts(tenant, name string, ps []modelPart) []func(ctx context.Context, tx *sql.Tx) error {
	writes := make([]func(ctx context.Context, tx *sql.Tx) error, len(ps))
	for i, k := range ps {
		writes[i] = func(ctx context.Context, tx *sql.Tx) error {
			_, err := db.prepared(tx).ExecContext(ctx, `DELETE FROM profile_model_parts
				WHERE tenant_id = ? AND name = ? AND stage = ? AND part = ?
				AND stage IS NOT (SELECT stage FROM profile_models WHERE tenant_id = ? AND name = ?)`,
				tenant, name, k.stage, k.part, tenant, name)
			return err
		}
	}
	return writes
}

// EventsMark returns a number that grows whenever an event is added to the
// tenant (the largest event row number), 0 when it has none.
func (db *DB) EventsMark(ctx context.Context, tenant string) (int64, error) {
	if tenant == "" {
		tenant = memento.DefaultTenant
	}
	var mark sql.NullInt64
	if err := db.reads().QueryRowContext(ctx, `SELECT max(pk) FROM events WHERE tenant_id = ?`, tenant).Scan(&mark); err != nil {
		return 0, fmt.Errorf("events mark of %s: %w", tenant, err)
	}
	return mark.Int64, nil
}

// EachUserEvents calls fn with the events of every user of the tenant, one
// user at a time in the order of their ids, each user's events in the order
// they happened, within one read snapshot. It returns the EventsMark of
// that snapshot. fn must not keep events after it returns.
func (db *DB) EachUserEvents(ctx context.Context, tenant string, fn func(user string, events []memento.Event) error) (int64, error) {
	return db.eachUserEvents(ctx, tenant, -1, fn)
}

// EachUserEventsSince is EachUserEvents for the users who have an event
// added after mark (an EventsMark), each with all of their events: what an
// incremental update of the co-occurrence model reads.
func (db *DB) EachUserEventsSince(ctx context.Context, tenant string, mark int64, fn func(user string, events []memento.Event) error) (int64, error) {
	return db.eachUserEvents(ctx, tenant, max(mark, 0), fn)
}

// eachUserEvents serves both: since < 0 reads every user.
func (db *DB) eachUserEvents(ctx context.Context, tenant string, since int64, fn func(user string, events []memento.Event) error) (int64, error) {
	if tenant == "" {
		tenant = memento.DefaultTenant
	}
	var mark int64
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		var m sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT max(pk) FROM events WHERE tenant_id = ?`, tenant).Scan(&m); err != nil {
			return err
		}
		mark = m.Int64
		query, args := `SELECT user_id, id, type, title_id, value, at FROM events
			WHERE tenant_id = ? ORDER BY user_id, at, pk`, []any{tenant}
		if since >= 0 {
			// pk is the rowid: the users with newer events are a range scan.
			query, args = `SELECT user_id, id, type, title_id, value, at FROM events
				WHERE tenant_id = ? AND user_id IN (SELECT DISTINCT user_id FROM events WHERE pk > ? AND tenant_id = ?)
				ORDER BY user_id, at, pk`, []any{tenant, since, tenant}
		}
		rows, err := tx.QueryContext(ctx, query, args...)
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
			var value sql.NullFloat64
			var at int64
			if err := rows.Scan(&e.User, &e.ID, &typ, &e.TitleID, &value, &at); err != nil {
				return err
			}
			if e.User != cur {
				if err := flush(); err != nil {
					return err
				}
				cur = e.User
			}
			e.Tenant, e.Type, e.At = tenant, memento.EventType(typ), fromNanos(at)
			if value.Valid {
				v := value.Float64
				e.Value = &v
			}
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
