package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/internal/prefrows"
)

var _ memento.PreferenceService = (*DB)(nil)

// prefClusterStale is how long a pending clustering job may stay pending
// before a change enqueues another one: a job that ran out of attempts
// must not stop a user's clusters from ever being refreshed again.
const prefClusterStale = 10 * time.Minute

// maxConceptLen bounds a preference concept.
const maxConceptLen = 200

// prefColumns are the columns scanPreference reads, in order, from a query
// over preferences p.
const prefColumns = `p.id, p.concept, p.kind, p.weight, p.evidence, p.sources, p.embedder, p.vector,
	p.first_seen, p.last_seen,
	(SELECT min(m.cluster_id) FROM preference_cluster_members m
	 WHERE m.tenant_id = p.tenant_id AND m.user_id = p.user_id AND m.preference_id = p.id)`

// prefRowColumns are prefColumns without the cluster id (NULL), which
// costs a look-up of the memberships per row.
const prefRowColumns = `p.id, p.concept, p.kind, p.weight, p.evidence, p.sources, p.embedder, p.vector,
	p.first_seen, p.last_seen, NULL`

// scanPreference reads one row of prefColumns.
func scanPreference(sc interface{ Scan(...any) error }) (memento.Preference, error) {
	var p memento.Preference
	var sources string
	var blob []byte
	var first, last int64
	var cluster sql.NullString
	if err := sc.Scan(&p.ID, &p.Concept, &p.Kind, &p.Weight, &p.Evidence, &sources, &p.Embedder, &blob, &first, &last, &cluster); err != nil {
		return p, err
	}
	if err := json.Unmarshal([]byte(sources), &p.Sources); err != nil {
		return p, fmt.Errorf("decode sources of preference %s: %w", p.ID, err)
	}
	if p.Sources == nil {
		p.Sources = []string{}
	}
	p.Vector = decodePrefVector(blob)
	p.FirstSeen, p.LastSeen = fromNanos(first), fromNanos(last)
	if cluster.Valid {
		c := cluster.String
		p.Cluster = &c
	}
	return p, nil
}

// encodePrefVector stores a vector as little-endian float32 values.
func encodePrefVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// decodePrefVector reads a vector stored by encodePrefVector. A blob that
// is not whole float32 values is no vector, rather than a shorter one that
// would be compared with vectors of another length.
func decodePrefVector(b []byte) []float32 {
	if len(b)%4 != 0 {
		return nil
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// checkPreference validates a preference a merge or a patch wants stored.
func checkPreference(p memento.Preference) error {
	switch {
	case strings.TrimSpace(p.Concept) == "":
		return memento.Errorf(memento.EINVALID, "preference concept must not be empty")
	case len(p.Concept) > maxConceptLen:
		return memento.Errorf(memento.EINVALID, "preference concept must be at most %d bytes, got %d", maxConceptLen, len(p.Concept))
	case p.Kind != memento.KindTaste && p.Kind != memento.KindFact:
		return memento.Errorf(memento.EINVALID, "preference kind must be %q or %q, got %q", memento.KindTaste, memento.KindFact, p.Kind)
	case math.IsNaN(p.Weight) || math.IsInf(p.Weight, 0):
		return memento.Errorf(memento.EINVALID, "preference weight must be a finite number")
	case len(p.Vector) == 0 || p.Embedder == "":
		return memento.Errorf(memento.EINVALID, "preference %q needs a vector and the id of its embedder", p.Concept)
	}
	return nil
}

// prefSourcesJSON encodes sources, keeping the newest MaxPreferenceSources.
func prefSourcesJSON(sources []string) (string, error) {
	if len(sources) > memento.MaxPreferenceSources {
		sources = sources[len(sources)-memento.MaxPreferenceSources:]
	}
	if sources == nil {
		sources = []string{}
	}
	b, err := json.Marshal(sources)
	return string(b), err
}

// WritePreferences applies new evidence from one source in one write
// transaction: it records the source (doing nothing if it was applied
// before), hands the user's preferences of w.Embedder to w.Merge, and
// writes the changes it returns. A write that changes something bumps the
// user's version and requests clustering. It goes through group commit,
// so concurrent writes share a commit: Merge may run more than once and
// must only compute. Errors: EINVALID.
func (db *DB) WritePreferences(ctx context.Context, s memento.Scope, w memento.PreferenceWrite) (*memento.PreferenceWriteResult, error) {
	res, err := db.WritePreferenceBatch(ctx, s, []memento.PreferenceWrite{w})
	if err != nil {
		return nil, err
	}
	return &res[0], nil
}

// WritePreferenceBatch applies ws in order in one write transaction, each
// as WritePreferences applies one: the Merge of each sees the preferences
// as the writes before it left them. Errors: EINVALID.
func (db *DB) WritePreferenceBatch(ctx context.Context, s memento.Scope, ws []memento.PreferenceWrite) ([]memento.PreferenceWriteResult, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	for _, w := range ws {
		if w.Merge == nil {
			return nil, memento.Errorf(memento.EINVALID, "a preference write needs a merge function")
		}
		if len(w.Source) > maxIDLen {
			return nil, memento.Errorf(memento.EINVALID, "preference source id must be at most %d bytes", maxIDLen)
		}
	}
	if len(ws) == 0 {
		return []memento.PreferenceWriteResult{}, nil
	}
	var res []memento.PreferenceWriteResult
	var seen map[string]cachedPrefs
	err = db.groupTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res = make([]memento.PreferenceWriteResult, len(ws))
		if _, err := db.ensureUser(ctx, tx, s); err != nil {
			return err
		}
		// The writes of a batch share one read of the preferences,
		// brought up to date with the rows each write changed.
		current := map[string][]memento.Preference{}
		for i, w := range ws {
			cur, ok := current[w.Embedder]
			if !ok {
				var err error
				if cur, err = db.currentPreferences(ctx, tx, s, w.Embedder); err != nil {
					return err
				}
			}
			changed, err := db.writePreferencesTx(ctx, tx, s, w, cur, &res[i])
			if err != nil {
				return err
			}
			if cur, err = db.refreshPreferences(ctx, tx, s, w.Embedder, cur, changed); err != nil {
				return err
			}
			current[w.Embedder] = cur
		}
		// What the transaction leaves is what the next write of the user
		// reads, once it has committed.
		seen = map[string]cachedPrefs{}
		stamp, err := readPreferenceStamp(ctx, db.prepared(tx), s)
		if err != nil {
			return err
		}
		for embedder, cur := range current {
			seen[embedder] = cachedPrefs{prefs: cur, stamp: stamp}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("write preferences of %s/%s: %w", s.Tenant, s.User, err)
	}
	for embedder, c := range seen {
		db.prefCache.put(prefKey{s, embedder}, c)
	}
	return res, nil
}

// The preference cache. A write of a user's preferences hands all of
// them, vectors included, to its merge, and on SQLite it does so on the
// one writer, where a read of a hundred vectors costs more than the write.
// So the store keeps what the last write of each user left, and a write
// reads only the user's preference version and when the user was created
// (preferenceStamp): when they are those of the cache, the cached rows are
// the stored ones. Every change of a preference row bumps the version in
// its transaction (bumpPreferenceVersion: writes, deletions, a restore);
// the rows go only with the user (or the tenant), and a user created again
// starts over from version 1 with another creation time. Cluster
// membership, which the merge does not read, is left out of the cached
// rows. (The cache compared every row's id and update time before: a
// fifth of the preference writes' time on the writer, for users of
// hundreds of preferences.)

// prefKey names a user's preferences of one embedder.
type prefKey struct {
	s        memento.Scope
	embedder string
}

// cachedPrefs is a user's preferences of one embedder as a committed
// write left them, with their update times.
type cachedPrefs struct {
	prefs []memento.Preference
	stamp preferenceStamp
}

// preferenceStamp says which state of a user's preferences a read saw:
// the user's preference version and the user's creation time.
type preferenceStamp struct {
	version, born int64
}

// prefCacheSize bounds the users the cache holds; past it, it starts
// over.
const prefCacheSize = 4096

// prefCache is the cache of the users' preferences.
type prefCache struct {
	mu sync.Mutex
	m  map[prefKey]cachedPrefs
}

func (c *prefCache) get(k prefKey) (cachedPrefs, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *prefCache) put(k prefKey, v cachedPrefs) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= prefCacheSize {
		c.m = map[prefKey]cachedPrefs{}
	}
	c.m[k] = v
}

// readPreferenceStamp reads the stamp of the user's preferences; a user
// with no preference write yet has version 0.
func readPreferenceStamp(ctx context.Context, tx stmtTx, s memento.Scope) (preferenceStamp, error) {
	var st preferenceStamp
	var version sql.NullInt64
	err := tx.QueryRowContext(ctx, `SELECT u.created_at, ps.version FROM users u
		LEFT JOIN preference_state ps ON ps.tenant_id = u.tenant_id AND ps.user_id = u.id
		WHERE u.tenant_id = ? AND u.id = ?`, s.Tenant, s.User).Scan(&st.born, &version)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return st, fmt.Errorf("read preference version: %w", err)
	}
	st.version = version.Int64
	return st, nil
}

// currentPreferences returns the user's preferences of embedder as stored
// in tx: the cached ones when the stamp says they are current, else read
// in full.
func (db *DB) currentPreferences(ctx context.Context, tx *sql.Tx, s memento.Scope, embedder string) ([]memento.Preference, error) {
	if c, ok := db.prefCache.get(prefKey{s, embedder}); ok {
		stamp, err := readPreferenceStamp(ctx, db.prepared(tx), s)
		if err != nil {
			return nil, err
		}
		if stamp == c.stamp {
			return slices.Clone(c.prefs), nil
		}
	}
	cur, err := db.queryPreferences(ctx, db.prepared(tx), `WHERE p.tenant_id = ? AND p.user_id = ? AND p.embedder = ?`, s.Tenant, s.User, embedder)
	if err != nil {
		return nil, err
	}
	for i := range cur {
		cur[i].Cluster = nil
	}
	return cur, nil
}

// writePreferencesTx applies w in tx, for a user that exists, over the
// user's preferences of w.Embedder as stored (current), reports what it
// did in res and returns the ids of the rows it changed.
func (db *DB) writePreferencesTx(ctx context.Context, tx *sql.Tx, s memento.Scope, w memento.PreferenceWrite, current []memento.Preference, res *memento.PreferenceWriteResult) ([]string, error) {
	now := db.now()
	if w.Source != "" {
		r, err := db.prepared(tx).ExecContext(ctx, `INSERT INTO preference_sources (tenant_id, user_id, source_id, applied_at)
			VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`, s.Tenant, s.User, w.Source, nanos(now))
		if err != nil {
			return nil, fmt.Errorf("record source: %w", err)
		}
		if n, err := r.RowsAffected(); err != nil {
			return nil, err
		} else if n == 0 {
			return nil, nil // applied before
		}
	}
	res.Applied = true
	// Merge gets a copy: what it does to the slice must not change the
	// batch's view of the rows.
	changes, err := w.Merge(slices.Clone(current))
	if err != nil {
		return nil, err
	}
	if changes.Empty() {
		return nil, nil
	}
	// The version first: the rows are written at the version they make.
	version, err := db.bumpPreferenceVersion(ctx, tx, s, now)
	if err != nil {
		return nil, err
	}
	var changed []string
	for _, p := range changes.Insert {
		p.ID = newID("pref_")
		if err := db.insertPreference(ctx, tx, s, p, version, now); err != nil {
			return nil, err
		}
		p.Cluster = nil
		res.Inserted = append(res.Inserted, p)
		changed = append(changed, p.ID)
	}
	for _, p := range changes.Update {
		if err := db.updatePreference(ctx, tx, s, p, version, now); err != nil {
			return nil, err
		}
		res.Updated = append(res.Updated, p)
		changed = append(changed, p.ID)
	}
	return changed, nil
}

// refreshPreferences returns current (the user's preferences of embedder,
// as queryPreferences orders them) with the rows of ids read again from
// tx, as a new read would return them.
func (db *DB) refreshPreferences(ctx context.Context, tx *sql.Tx, s memento.Scope, embedder string, current []memento.Preference, ids []string) ([]memento.Preference, error) {
	if len(ids) == 0 {
		return current, nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	fresh, err := db.queryPreferences(ctx, db.prepared(tx), `WHERE p.tenant_id = ? AND p.user_id = ? AND p.embedder = ? AND p.id IN (SELECT value FROM json_each(?))`,
		s.Tenant, s.User, embedder, string(list))
	if err != nil {
		return nil, err
	}
	for i := range fresh {
		fresh[i].Cluster = nil
	}
	return prefrows.Replace(current, ids, fresh), nil
}

// insertPreference writes a new preference at the user's preference
// version (as bumpPreferenceVersion returned it).
func (db *DB) insertPreference(ctx context.Context, tx *sql.Tx, s memento.Scope, p memento.Preference, version int64, now time.Time) error {
	if err := checkPreference(p); err != nil {
		return err
	}
	sources, err := prefSourcesJSON(p.Sources)
	if err != nil {
		return err
	}
	first, last := p.FirstSeen, p.LastSeen
	if first.IsZero() {
		first = now
	}
	if last.IsZero() {
		last = first
	}
	_, err = db.prepared(tx).ExecContext(ctx, `INSERT INTO preferences (tenant_id, user_id, id, concept, kind, weight, evidence, sources,
			embedder, dim, vector, first_seen, last_seen, created_at, updated_at, version)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.Tenant, s.User, p.ID, p.Concept, p.Kind, p.Weight, max(p.Evidence, 1), sources,
		p.Embedder, len(p.Vector), encodePrefVector(p.Vector), nanos(first.UTC()), nanos(last.UTC()), nanos(now), nanos(now), version)
	if err != nil {
		return fmt.Errorf("insert preference %q: %w", p.Concept, err)
	}
	return nil
}

// updatePreference rewrites a preference at the user's preference
// version (as bumpPreferenceVersion returned it).
func (db *DB) updatePreference(ctx context.Context, tx *sql.Tx, s memento.Scope, p memento.Preference, version int64, now time.Time) error {
	if err := checkPreference(p); err != nil {
		return err
	}
	sources, err := prefSourcesJSON(p.Sources)
	if err != nil {
		return err
	}
	r, err := db.prepared(tx).ExecContext(ctx, `UPDATE preferences SET concept = ?, kind = ?, weight = ?, evidence = ?, sources = ?,
			embedder = ?, dim = ?, vector = ?, first_seen = ?, last_seen = ?, updated_at = ?, version = ?
		WHERE tenant_id = ? AND user_id = ? AND id = ?`,
		p.Concept, p.Kind, p.Weight, max(p.Evidence, 1), sources, p.Embedder, len(p.Vector), encodePrefVector(p.Vector),
		nanos(p.FirstSeen.UTC()), nanos(p.LastSeen.UTC()), nanos(now), version, s.Tenant, s.User, p.ID)
	if err != nil {
		return fmt.Errorf("update preference %s: %w", p.ID, err)
	}
	if n, err := r.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return memento.Errorf(memento.ENOTFOUND, "preference %q not found", p.ID)
	}
	return nil
}

// bumpPreferenceVersion counts a change to the user's preferences,
// enqueues a clustering job unless one is pending (and not stale) and
// returns the new version, at which the change writes its rows.
func (db *DB) bumpPreferenceVersion(ctx context.Context, tx *sql.Tx, s memento.Scope, now time.Time) (int64, error) {
	var version int64
	var requested sql.NullInt64
	err := db.prepared(tx).QueryRowContext(ctx, `INSERT INTO preference_state (tenant_id, user_id, version) VALUES (?, ?, 1)
		ON CONFLICT (tenant_id, user_id) DO UPDATE SET version = version + 1
		RETURNING version, cluster_requested_at`, s.Tenant, s.User).Scan(&version, &requested)
	if err != nil {
		return 0, fmt.Errorf("bump preference version: %w", err)
	}
	if requested.Valid && now.Sub(fromNanos(requested.Int64)) < prefClusterStale {
		return version, nil // a pending job will see this change
	}
	return version, db.requestPreferenceClusters(ctx, tx, s, now)
}

// requestPreferenceClusters enqueues a clustering job in the user's
// backlog and marks it pending.
func (db *DB) requestPreferenceClusters(ctx context.Context, tx *sql.Tx, s memento.Scope, now time.Time) error {
	if _, err := db.prepared(tx).ExecContext(ctx, `UPDATE preference_state SET cluster_requested_at = ? WHERE tenant_id = ? AND user_id = ?`,
		nanos(now), s.Tenant, s.User); err != nil {
		return fmt.Errorf("mark clustering pending: %w", err)
	}
	return db.insertJobs(ctx, tx, s, []memento.JobRequest{{
		Kind:    memento.JobPreferenceClusters,
		Payload: memento.PreferenceClusterJob{Tenant: s.Tenant, User: s.User},
		// The user's own work: it runs in the user's backlog, after the
		// batch that changed the preferences.
		ByUser: true,
	}})
}

// queryPreferences lists preferences p matching where, oldest first.
func (db *DB) queryPreferences(ctx context.Context, q queryer, where string, args ...any) ([]memento.Preference, error) {
	return db.selectPreferences(ctx, q, prefColumns, where, args...)
}

// queryer runs queries: the pool, a read or a write transaction.
type queryer interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}

// selectPreferences lists preferences p matching where, oldest first,
// reading columns (prefColumns or prefRowColumns).
func (db *DB) selectPreferences(ctx context.Context, q queryer, columns, where string, args ...any) ([]memento.Preference, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+columns+` FROM preferences p `+where+` ORDER BY p.first_seen, p.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list preferences: %w", err)
	}
	defer rows.Close()
	out := []memento.Preference{}
	for rows.Next() {
		p, err := scanPreference(rows)
		if err != nil {
			return nil, fmt.Errorf("list preferences: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list preferences: %w", err)
	}
	return out, nil
}

// Preferences lists all of a user's preferences, oldest first, with their
// cluster ids. An unknown user has none.
func (db *DB) Preferences(ctx context.Context, s memento.Scope) ([]memento.Preference, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	return db.queryPreferences(ctx, db.reads(), `WHERE p.tenant_id = ? AND p.user_id = ?`, s.Tenant, s.User)
}

// PatchPreference edits one preference's concept (with its new vector)
// and/or weight; a new weight restarts the memory's age at p.At (now when
// zero). Errors: ENOTFOUND, EINVALID.
func (db *DB) PatchPreference(ctx context.Context, s memento.Scope, id string, p memento.PreferencePatch) (*memento.Preference, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	if p.Weight != nil && (math.IsNaN(*p.Weight) || math.IsInf(*p.Weight, 0)) {
		return nil, memento.Errorf(memento.EINVALID, "weight must be a finite number")
	}
	var out memento.Preference
	err = db.writeTx(ctx, func(tx *sql.Tx) error {
		cur, err := db.queryPreferences(ctx, tx, `WHERE p.tenant_id = ? AND p.user_id = ? AND p.id = ?`, s.Tenant, s.User, id)
		if err != nil {
			return err
		}
		if len(cur) == 0 {
			return memento.Errorf(memento.ENOTFOUND, "preference %q not found", id)
		}
		out = cur[0]
		now := db.now()
		if p.Concept != nil {
			out.Concept = strings.TrimSpace(*p.Concept)
			out.Vector, out.Embedder = p.Vector, p.Embedder
		}
		if p.Weight != nil {
			out.Weight = *p.Weight
			out.LastSeen = p.At
			if out.LastSeen.IsZero() {
				out.LastSeen = now
			}
		}
		if p.Concept == nil && p.Weight == nil {
			return nil
		}
		version, err := db.bumpPreferenceVersion(ctx, tx, s, now)
		if err != nil {
			return err
		}
		return db.updatePreference(ctx, tx, s, out, version, now)
	})
	if err != nil {
		return nil, fmt.Errorf("patch preference %s: %w", id, err)
	}
	return &out, nil
}

// DeletePreference forgets one preference (and its cluster memberships).
// Errors: ENOTFOUND.
func (db *DB) DeletePreference(ctx context.Context, s memento.Scope, id string) error {
	s, err := db.scope(ctx, s)
	if err != nil {
		return err
	}
	err = db.writeTx(ctx, func(tx *sql.Tx) error {
		r, err := db.prepared(tx).ExecContext(ctx, `DELETE FROM preferences WHERE tenant_id = ? AND user_id = ? AND id = ?`, s.Tenant, s.User, id)
		if err != nil {
			return err
		}
		if n, err := r.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return memento.Errorf(memento.ENOTFOUND, "preference %q not found", id)
		}
		// A cluster left without members goes too.
		if _, err := db.prepared(tx).ExecContext(ctx, `DELETE FROM preference_clusters AS c WHERE c.tenant_id = ? AND c.user_id = ?
			AND NOT EXISTS (SELECT 1 FROM preference_cluster_members m
				WHERE m.tenant_id = c.tenant_id AND m.user_id = c.user_id AND m.cluster_id = c.id)`, s.Tenant, s.User); err != nil {
			return err
		}
		_, err = db.bumpPreferenceVersion(ctx, tx, s, db.now())
		return err
	})
	if err != nil {
		return fmt.Errorf("delete preference %s: %w", id, err)
	}
	return nil
}

// PreferenceVersion returns the user's version counters.
func (db *DB) PreferenceVersion(ctx context.Context, s memento.Scope) (memento.PreferenceVersion, error) {
	var v memento.PreferenceVersion
	s, err := db.scope(ctx, s)
	if err != nil {
		return v, err
	}
	var since int64
	err = db.reads().QueryRowContext(ctx, `SELECT ps.version, ps.clustered_version, u.created_at FROM preference_state ps
		JOIN users u ON u.tenant_id = ps.tenant_id AND u.id = ps.user_id
		WHERE ps.tenant_id = ? AND ps.user_id = ?`, s.Tenant, s.User).Scan(&v.Version, &v.Clustered, &since)
	if err == sql.ErrNoRows {
		return v, nil
	} else if err != nil {
		return v, fmt.Errorf("preference version: %w", err)
	}
	v.Since = fromNanos(since)
	return v, nil
}

// PreferencesSince reads, in one snapshot, the user's version counters,
// the number of their preferences and those written after version (all of
// them when version is negative: rows written before the version column,
// or loaded in bulk, are at version 0), for an incremental clustering
// (prefs.PreferencesSince). The index on user and version serves it (a
// read of 0 takes the user's whole range); the rows are read without
// their cluster ids.
func (db *DB) PreferencesSince(ctx context.Context, s memento.Scope, version int64) (*memento.PreferencesRead, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	out := &memento.PreferencesRead{Changed: []memento.Preference{}}
	err = db.readTx(ctx, func(tx *sql.Tx) error {
		var since int64
		switch err := tx.QueryRowContext(ctx, `SELECT u.created_at, coalesce(ps.version, 0), coalesce(ps.clustered_version, 0) FROM users u
			LEFT JOIN preference_state ps ON ps.tenant_id = u.tenant_id AND ps.user_id = u.id
			WHERE u.tenant_id = ? AND u.id = ?`, s.Tenant, s.User).Scan(&since, &out.Version.Version, &out.Version.Clustered); {
		case errors.Is(err, sql.ErrNoRows):
			return nil
		case err != nil:
			return err
		}
		out.Version.Since = fromNanos(since)
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM preferences WHERE tenant_id = ? AND user_id = ?`,
			s.Tenant, s.User).Scan(&out.Total); err != nil {
			return err
		}
		if version >= 0 && out.Version.Version <= version {
			return nil // nothing written since
		}
		changed, err := db.selectPreferences(ctx, tx, prefRowColumns, `WHERE p.tenant_id = ? AND p.user_id = ? AND p.version > ?`,
			s.Tenant, s.User, version)
		out.Changed = changed
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read preferences of %s since version %d: %w", s.User, version, err)
	}
	return out, nil
}

// SavePreferenceClusters replaces the user's clusters. Members that no
// longer exist are left out, and a cluster left without members is not
// stored. If the preferences changed since version, another clustering
// job is enqueued; otherwise the pending one is marked done. Errors:
// EINVALID, ENOTFOUND for an unknown user.
func (db *DB) SavePreferenceClusters(ctx context.Context, s memento.Scope, version int64, clusters []memento.PreferenceCluster) error {
	s, err := db.scope(ctx, s)
	if err != nil {
		return err
	}
	for i, c := range clusters {
		if c.ID == "" || len(c.ID) > maxIDLen {
			return memento.Errorf(memento.EINVALID, "clusters[%d].id must be 1 to %d bytes", i, maxIDLen)
		}
		for j, m := range c.Members {
			if m.Stance != memento.StanceSupport && m.Stance != memento.StanceOppose {
				return memento.Errorf(memento.EINVALID, "clusters[%d].members[%d].stance must be %q or %q, got %q",
					i, j, memento.StanceSupport, memento.StanceOppose, m.Stance)
			}
		}
	}
	err = db.groupTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var n int
		if err := db.prepared(tx).QueryRowContext(ctx, `SELECT count(*) FROM users WHERE tenant_id = ? AND id = ?`, s.Tenant, s.User).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return memento.Errorf(memento.ENOTFOUND, "user %q not found", s.User)
		}
		now := db.now()
		// A clustering mostly finds the clusters it found before: those
		// stored as they are now keep their rows (their version and
		// time move on), the others are written anew.
		stored, err := storedClusters(ctx, db.prepared(tx), s)
		if err != nil {
			return err
		}
		kept := map[string]bool{}
		for _, c := range clusters {
			if old, ok := stored[c.ID]; ok && old.same(c) {
				kept[c.ID] = true
			}
		}
		for _, id := range slices.Sorted(maps.Keys(stored)) {
			if kept[id] {
				continue
			}
			if _, err := db.prepared(tx).ExecContext(ctx, `DELETE FROM preference_clusters WHERE tenant_id = ? AND user_id = ? AND id = ?`, s.Tenant, s.User, id); err != nil {
				return fmt.Errorf("delete old cluster %s: %w", id, err)
			}
		}
		for _, c := range clusters {
			if kept[c.ID] {
				if _, err := db.prepared(tx).ExecContext(ctx, `UPDATE preference_clusters SET version = ?, created_at = ? WHERE tenant_id = ? AND user_id = ? AND id = ?`,
					version, nanos(now), s.Tenant, s.User, c.ID); err != nil {
					return fmt.Errorf("update cluster %s: %w", c.ID, err)
				}
				continue
			}
			if _, err := db.prepared(tx).ExecContext(ctx, `INSERT INTO preference_clusters (tenant_id, user_id, id, description, signature, version, created_at)
				VALUES (?, ?, ?, ?, ?, ?, ?)`, s.Tenant, s.User, c.ID, c.Description, c.Signature, version, nanos(now)); err != nil {
				return fmt.Errorf("insert cluster %s: %w", c.ID, err)
			}
			kept := int64(0)
			for pos, m := range c.Members {
				r, err := db.prepared(tx).ExecContext(ctx, `INSERT INTO preference_cluster_members (tenant_id, user_id, cluster_id, preference_id, stance, position)
					SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM preferences WHERE tenant_id = ? AND user_id = ? AND id = ?)
					ON CONFLICT DO NOTHING`,
					s.Tenant, s.User, c.ID, m.Preference, m.Stance, pos, s.Tenant, s.User, m.Preference)
				if err != nil {
					return fmt.Errorf("insert member %s of cluster %s: %w", m.Preference, c.ID, err)
				}
				k, err := r.RowsAffected()
				if err != nil {
					return err
				}
				kept += k
			}
			if kept == 0 {
				if _, err := db.prepared(tx).ExecContext(ctx, `DELETE FROM preference_clusters WHERE tenant_id = ? AND user_id = ? AND id = ?`, s.Tenant, s.User, c.ID); err != nil {
					return err
				}
			}
		}
		var current int64
		err = db.prepared(tx).QueryRowContext(ctx, `INSERT INTO preference_state (tenant_id, user_id) VALUES (?, ?)
			ON CONFLICT (tenant_id, user_id) DO UPDATE SET clustered_version = max(clustered_version, ?)
			RETURNING version`, s.Tenant, s.User, version).Scan(&current)
		if err != nil {
			return fmt.Errorf("record clustered version: %w", err)
		}
		if current > version {
			return db.requestPreferenceClusters(ctx, tx, s, now)
		}
		_, err = db.prepared(tx).ExecContext(ctx, `UPDATE preference_state SET cluster_requested_at = NULL WHERE tenant_id = ? AND user_id = ?`, s.Tenant, s.User)
		return err
	})
	if err != nil {
		return fmt.Errorf("save preference clusters of %s/%s: %w", s.Tenant, s.User, err)
	}
	return nil
}

// storedCluster is a cluster's row and members as stored.
type storedCluster struct {
	description, signature string
	members                []storedMember
}

// storedMember is a member row of a cluster.
type storedMember struct {
	preference, stance string
	position           int
}

// same reports whether saving c would store what sc holds: the same
// description and signature, and every member in place (a member whose
// preference is gone is not stored, so c then differs).
func (sc storedCluster) same(c memento.PreferenceCluster) bool {
	if sc.description != c.Description || sc.signature != c.Signature || len(sc.members) != len(c.Members) {
		return false
	}
	for i, m := range c.Members {
		if sc.members[i] != (storedMember{preference: m.Preference, stance: m.Stance, position: i}) {
			return false
		}
	}
	return true
}

// storedClusters reads the user's clusters in tx, by id.
func storedClusters(ctx context.Context, tx execQuerier, s memento.Scope) (map[string]storedCluster, error) {
	out := map[string]storedCluster{}
	rows, err := tx.QueryContext(ctx, `SELECT id, description, signature FROM preference_clusters WHERE tenant_id = ? AND user_id = ?`, s.Tenant, s.User)
	if err != nil {
		return nil, fmt.Errorf("read clusters: %w", err)
	}
	for rows.Next() {
		var id string
		var c storedCluster
		if err := rows.Scan(&id, &c.description, &c.signature); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read clusters: %w", err)
		}
		out[id] = c
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return out, nil
	}
	rows, err = tx.QueryContext(ctx, `SELECT cluster_id, preference_id, stance, position FROM preference_cluster_members
		WHERE tenant_id = ? AND user_id = ? ORDER BY cluster_id, position`, s.Tenant, s.User)
	if err != nil {
		return nil, fmt.Errorf("read cluster members: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var m storedMember
		if err := rows.Scan(&id, &m.preference, &m.stance, &m.position); err != nil {
			return nil, fmt.Errorf("read cluster members: %w", err)
		}
		c := out[id]
		c.members = append(c.members, m)
		out[id] = c
	}
	return out, rows.Err()
}

// PreferenceClusters lists the user's clusters by id, each with its
// members in the order they were described.
func (db *DB) PreferenceClusters(ctx context.Context, s memento.Scope) ([]memento.PreferenceCluster, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	out := []memento.PreferenceCluster{}
	err = db.readTx(ctx, func(tx *sql.Tx) error {
		rows, err := db.readQuery(ctx, tx, `SELECT id, description, signature, version, created_at FROM preference_clusters
			WHERE tenant_id = ? AND user_id = ? ORDER BY id`, s.Tenant, s.User)
		if err != nil {
			return err
		}
		index := map[string]int{}
		for rows.Next() {
			var c memento.PreferenceCluster
			var created int64
			if err := rows.Scan(&c.ID, &c.Description, &c.Signature, &c.Version, &created); err != nil {
				rows.Close()
				return err
			}
			c.CreatedAt = fromNanos(created)
			c.Members = []memento.PreferenceClusterMember{}
			index[c.ID] = len(out)
			out = append(out, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = db.readQuery(ctx, tx, `SELECT m.cluster_id, m.preference_id, p.concept, m.stance
			FROM preference_cluster_members m
			JOIN preferences p ON p.tenant_id = m.tenant_id AND p.user_id = m.user_id AND p.id = m.preference_id
			WHERE m.tenant_id = ? AND m.user_id = ? ORDER BY m.cluster_id, m.position`, s.Tenant, s.User)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var cluster string
			var m memento.PreferenceClusterMember
			if err := rows.Scan(&cluster, &m.Preference, &m.Concept, &m.Stance); err != nil {
				return err
			}
			if i, ok := index[cluster]; ok {
				out[i].Members = append(out[i].Members, m)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("list preference clusters of %s/%s: %w", s.Tenant, s.User, err)
	}
	return out, nil
}

// PreferenceSources lists the ids of the messages and events applied to
// the user's preferences, in the order they were applied.
func (db *DB) PreferenceSources(ctx context.Context, s memento.Scope) ([]string, error) {
	s, err := db.scope(ctx, s)
	if err != nil {
		return nil, err
	}
	rows, err := db.reads().QueryContext(ctx, `SELECT source_id FROM preference_sources
		WHERE tenant_id = ? AND user_id = ? ORDER BY applied_at, source_id`, s.Tenant, s.User)
	if err != nil {
		return nil, fmt.Errorf("list preference sources: %w", err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("list preference sources: %w", err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list preference sources: %w", err)
	}
	return out, nil
}

// RestorePreferences replaces the user's preferences (and with them their
// clusters) and applied sources in one transaction, keeping the given ids,
// and requests clustering. Errors: EINVALID.
func (db *DB) RestorePreferences(ctx context.Context, s memento.Scope, prefs []memento.Preference, sources []string) error {
	s, err := db.scope(ctx, s)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for i, p := range prefs {
		if p.ID == "" || len(p.ID) > maxIDLen || seen[p.ID] {
			return memento.Errorf(memento.EINVALID, "preferences[%d].id must be a unique id of 1 to %d bytes", i, maxIDLen)
		}
		seen[p.ID] = true
		if err := checkPreference(p); err != nil {
			return err
		}
	}
	err = db.writeTx(ctx, func(tx *sql.Tx) error {
		if _, err := db.ensureUser(ctx, tx, s); err != nil {
			return err
		}
		now := db.now()
		for _, q := range []string{`DELETE FROM preferences WHERE tenant_id = ? AND user_id = ?`,
			`DELETE FROM preference_clusters WHERE tenant_id = ? AND user_id = ?`,
			`DELETE FROM preference_sources WHERE tenant_id = ? AND user_id = ?`} {
			if _, err := db.prepared(tx).ExecContext(ctx, q, s.Tenant, s.User); err != nil {
				return fmt.Errorf("clear preferences: %w", err)
			}
		}
		version, err := db.bumpPreferenceVersion(ctx, tx, s, now)
		if err != nil {
			return err
		}
		for _, p := range prefs {
			if err := db.insertPreference(ctx, tx, s, p, version, now); err != nil {
				return err
			}
		}
		for i, src := range sources {
			// A nanosecond apart, so they list in the order given.
			if _, err := db.prepared(tx).ExecContext(ctx, `INSERT INTO preference_sources (tenant_id, user_id, source_id, applied_at)
				VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`, s.Tenant, s.User, src, nanos(now)+int64(i)); err != nil {
				return fmt.Errorf("restore source %s: %w", src, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("restore preferences of %s/%s: %w", s.Tenant, s.User, err)
	}
	return nil
}
