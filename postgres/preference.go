package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/internal/prefrows"
)

var _ memento.PreferenceService = (*DB)(nil)

// prefClusterStale is how long a pending clustering job may stay pending
// before a change enqueues another one (as in package sqlite).
const prefClusterStale = 10 * time.Minute

// maxConceptLen bounds a preference concept.
const maxConceptLen = 200

const prefColumns = `p.id, p.concept, p.kind, p.weight, p.evidence, p.sources, p.embedder, p.vector,
	p.first_seen, p.last_seen,
	(SELECT min(m.cluster_id COLLATE "C") FROM preference_cluster_members m
	 WHERE m.tenant_id = p.tenant_id AND m.user_id = p.user_id AND m.preference_id = p.id)`

// prefRowColumns are prefColumns without the cluster id (NULL), which
// costs a look-up of the memberships per row.
const prefRowColumns = `p.id, p.concept, p.kind, p.weight, p.evidence, p.sources, p.embedder, p.vector,
	p.first_seen, p.last_seen, NULL::text`

func scanPreference(r pgx.Row) (memento.Preference, error) {
	var p memento.Preference
	var sources, blob []byte
	var first, last int64
	if err := r.Scan(&p.ID, &p.Concept, &p.Kind, &p.Weight, &p.Evidence, &sources, &p.Embedder, &blob, &first, &last, &p.Cluster); err != nil {
		return p, err
	}
	if err := json.Unmarshal(sources, &p.Sources); err != nil {
		return p, fmt.Errorf("decode sources of preference %s: %w", p.ID, err)
	}
	if p.Sources == nil {
		p.Sources = []string{}
	}
	p.Vector = vectorFrom(blob)
	if p.Vector == nil && len(blob) == 0 {
		p.Vector = []float32{}
	}
	p.FirstSeen, p.LastSeen = fromNanos(first), fromNanos(last)
	return p, nil
}

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

// WritePreferences applies new evidence from one source in one
// transaction: the source is recorded (nothing happens if it was applied
// before), w.Merge sees the user's preferences of w.Embedder, and its
// changes are written; a change bumps the user's version and requests
// clustering. The user's lock (userTx) makes the read-merge-write atomic
// across processes. Errors: EINVALID.
func (db *DB) WritePreferences(ctx context.Context, s memento.Scope, w memento.PreferenceWrite) (*memento.PreferenceWriteResult, error) {
	res, err := db.WritePreferenceBatch(ctx, s, []memento.PreferenceWrite{w})
	if err != nil {
		return nil, err
	}
	return &res[0], nil
}

// WritePreferenceBatch applies ws in order in one transaction, each as
// WritePreferences applies one: the Merge of each sees the preferences as
// the writes before it left them. Errors: EINVALID.
//
// The batch goes to the server in few round trips: the user, the
// sources of every write and the user's preferences in the first; then
// one for each write that changes something (its version bump and its
// rows, which come back as stored). A batch of a user's backlog holds a
// write for each message, most of which change nothing.
func (db *DB) WritePreferenceBatch(ctx context.Context, s memento.Scope, ws []memento.PreferenceWrite) ([]memento.PreferenceWriteResult, error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	var sources []string
	for _, w := range ws {
		if w.Merge == nil {
			return nil, memento.Errorf(memento.EINVALID, "a preference write needs a merge function")
		}
		if len(w.Source) > memento.MaxIDLen {
			return nil, memento.Errorf(memento.EINVALID, "preference source id must be at most %d bytes", memento.MaxIDLen)
		}
		if w.Source != "" {
			sources = append(sources, w.Source)
		}
	}
	if len(ws) == 0 {
		return []memento.PreferenceWriteResult{}, nil
	}
	var res []memento.PreferenceWriteResult
	err = db.userTx(ctx, s, func(tx pgx.Tx) error {
		res = make([]memento.PreferenceWriteResult, len(ws))
		now := db.now()
		// The sources not applied before come back from their insert: a
		// write whose source is not among them, or was taken by a write
		// before it in the batch, is skipped.
		b := &pgx.Batch{}
		queueEnsureUser(b, s, nanos(now))
		b.Queue(`INSERT INTO preference_sources (tenant_id, user_id, source_id, applied_at)
			SELECT $1, $2, x, $4 FROM unnest($3::text[]) AS x ON CONFLICT DO NOTHING RETURNING source_id`,
			s.Tenant, s.User, sources, nanos(now))
		// The writes of a batch share one read of the preferences of each
		// embedder, brought up to date with the rows each write changed:
		// a read sends every preference's vector over the connection.
		b.Queue(`SELECT `+prefRowColumns+` FROM preferences p WHERE p.tenant_id = $1 AND p.user_id = $2 AND p.embedder = $3
			ORDER BY p.first_seen, p.id COLLATE "C"`, s.Tenant, s.User, ws[0].Embedder)
		br := tx.SendBatch(ctx, b)
		fresh := map[string]bool{}
		var first []memento.Preference
		err := func() error {
			if _, err := readEnsureUser(br); err != nil {
				return err
			}
			rows, err := br.Query()
			if err != nil {
				return fmt.Errorf("record sources: %w", err)
			}
			var src string
			if _, err := pgx.ForEachRow(rows, []any{&src}, func() error { fresh[src] = true; return nil }); err != nil {
				return fmt.Errorf("record sources: %w", err)
			}
			if rows, err = br.Query(); err != nil {
				return fmt.Errorf("list preferences: %w", err)
			}
			first, err = collect(rows, func(r pgx.Rows) (memento.Preference, error) { return scanPreference(r) })
			if err != nil {
				return fmt.Errorf("list preferences: %w", err)
			}
			return nil
		}()
		if cerr := br.Close(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		current := map[string][]memento.Preference{ws[0].Embedder: first}
		for i, w := range ws {
			if w.Source != "" {
				if !fresh[w.Source] {
					continue // applied before
				}
				delete(fresh, w.Source)
			}
			res[i].Applied = true
			cur, ok := current[w.Embedder]
			if !ok {
				var err error
				cur, err = selectPreferences(ctx, tx, prefRowColumns, `WHERE p.tenant_id = $1 AND p.user_id = $2 AND p.embedder = $3`, s.Tenant, s.User, w.Embedder)
				if err != nil {
					return err
				}
			}
			// Merge gets a copy: what it does to the slice must not
			// change the batch's view of the rows.
			changes, err := w.Merge(slices.Clone(cur))
			if err != nil {
				return err
			}
			if changes.Empty() {
				current[w.Embedder] = cur
				continue
			}
			ids, stored, err := db.writePreferenceChanges(ctx, tx, s, changes, now, &res[i])
			if err != nil {
				return err
			}
			// The rows as a new read of the embedder's would return them.
			stored = slices.DeleteFunc(stored, func(p memento.Preference) bool { return p.Embedder != w.Embedder })
			current[w.Embedder] = prefrows.Replace(cur, ids, stored)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("write preferences of %s/%s: %w", s.Tenant, s.User, err)
	}
	return res, nil
}

// writePreferenceChanges writes one merge's changes in tx, for a user
// that exists, in one round trip: the version bump, then the rows at the
// version it made. It reports them in res and returns the ids of the rows
// it changed and the rows as stored, without their clusters.
func (db *DB) writePreferenceChanges(ctx context.Context, tx pgx.Tx, s memento.Scope, changes memento.PreferenceChanges, now time.Time, res *memento.PreferenceWriteResult) ([]string, []memento.Preference, error) {
	b := &pgx.Batch{}
	b.Queue(bumpPreferenceVersionSQL, s.Tenant, s.User)
	var ids []string
	for _, p := range changes.Insert {
		p.ID = newID("pref_")
		sql, args, err := preferenceInsert(s, p, now)
		if err != nil {
			return nil, nil, err
		}
		b.Queue(sql, args...)
		p.Cluster = nil
		res.Inserted = append(res.Inserted, p)
		ids = append(ids, p.ID)
	}
	for _, p := range changes.Update {
		sql, args, err := preferenceUpdate(s, p, now)
		if err != nil {
			return nil, nil, err
		}
		b.Queue(sql, args...)
		res.Updated = append(res.Updated, p)
		ids = append(ids, p.ID)
	}
	br := tx.SendBatch(ctx, b)
	var requested *int64
	stored := make([]memento.Preference, 0, len(ids))
	err := func() error {
		var version int64
		if err := br.QueryRow().Scan(&version, &requested); err != nil {
			return fmt.Errorf("bump preference version: %w", err)
		}
		for i, id := range ids {
			rows, err := br.Query()
			if err != nil {
				return preferenceWriteError(i < len(changes.Insert), changes, i, err)
			}
			got, err := collect(rows, func(r pgx.Rows) (memento.Preference, error) { return scanPreference(r) })
			if err != nil {
				return preferenceWriteError(i < len(changes.Insert), changes, i, err)
			}
			if len(got) == 0 {
				return memento.Errorf(memento.ENOTFOUND, "preference %q not found", id)
			}
			stored = append(stored, got...)
		}
		return nil
	}()
	if cerr := br.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return nil, nil, err
	}
	if requested == nil || now.Sub(fromNanos(*requested)) >= prefClusterStale {
		if err := db.requestPreferenceClusters(ctx, tx, s, now); err != nil {
			return nil, nil, err
		}
	}
	return ids, stored, nil
}

// preferenceWriteError names the row of changes whose write failed: the
// i-th of the inserts, or of the updates after them.
func preferenceWriteError(insert bool, changes memento.PreferenceChanges, i int, err error) error {
	if insert {
		return fmt.Errorf("insert preference %q: %w", changes.Insert[i].Concept, err)
	}
	return fmt.Errorf("update preference %s: %w", changes.Update[i-len(changes.Insert)].ID, err)
}

// preferenceVersion is the user's preference version, as the
// transaction's bump (bumpPreferenceVersion) left it: the version a row
// it writes takes. $1 and $2 are the tenant and the user.
const preferenceVersion = `(SELECT version FROM preference_state WHERE tenant_id = $1 AND user_id = $2)`

// preferenceReturning is prefRowColumns of a written row.
const preferenceReturning = ` RETURNING ` + prefRowColumns

// preferenceInsert returns the statement that writes a new preference at
// the user's preference version, returning the row as stored.
func preferenceInsert(s memento.Scope, p memento.Preference, now time.Time) (string, []any, error) {
	sources, err := checkedSources(p)
	if err != nil {
		return "", nil, err
	}
	first, last := p.FirstSeen, p.LastSeen
	if first.IsZero() {
		first = now
	}
	if last.IsZero() {
		last = first
	}
	return `INSERT INTO preferences AS p (tenant_id, user_id, id, concept, kind, weight, evidence, sources,
			embedder, dim, vector, first_seen, last_seen, created_at, updated_at, version)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14, ` + preferenceVersion + `)` + preferenceReturning,
		[]any{s.Tenant, s.User, p.ID, p.Concept, p.Kind, p.Weight, max(p.Evidence, 1), sources,
			p.Embedder, len(p.Vector), vectorBytes(p.Vector), nanos(first.UTC()), nanos(last.UTC()), nanos(now)}, nil
}

// preferenceUpdate returns the statement that rewrites a preference at
// the user's preference version, returning the row as stored (no row
// when there is none).
func preferenceUpdate(s memento.Scope, p memento.Preference, now time.Time) (string, []any, error) {
	sources, err := checkedSources(p)
	if err != nil {
		return "", nil, err
	}
	return `UPDATE preferences AS p SET concept = $4, kind = $5, weight = $6, evidence = $7, sources = $8,
			embedder = $9, dim = $10, vector = $11, first_seen = $12, last_seen = $13, updated_at = $14, version = ` + preferenceVersion + `
		WHERE p.tenant_id = $1 AND p.user_id = $2 AND p.id = $3` + preferenceReturning,
		[]any{s.Tenant, s.User, p.ID, p.Concept, p.Kind, p.Weight, max(p.Evidence, 1), sources, p.Embedder, len(p.Vector), vectorBytes(p.Vector),
			nanos(p.FirstSeen.UTC()), nanos(p.LastSeen.UTC()), nanos(now)}, nil
}

// checkedSources checks p, to be written, and encodes its sources.
func checkedSources(p memento.Preference) (string, error) {
	if err := checkPreference(p); err != nil {
		return "", err
	}
	return prefSourcesJSON(p.Sources)
}

// insertPreference writes a new preference at the user's preference
// version, which the transaction bumped before.
func insertPreference(ctx context.Context, tx pgx.Tx, s memento.Scope, p memento.Preference, now time.Time) error {
	sql, args, err := preferenceInsert(s, p, now)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, sql, args...); err != nil {
		return fmt.Errorf("insert preference %q: %w", p.Concept, err)
	}
	return nil
}

// updatePreference rewrites a preference at the user's preference
// version, which the transaction bumped before.
func updatePreference(ctx context.Context, tx pgx.Tx, s memento.Scope, p memento.Preference, now time.Time) error {
	sql, args, err := preferenceUpdate(s, p, now)
	if err != nil {
		return err
	}
	tag, err := tx.Exec(ctx, sql, args...)
	if err != nil {
		return fmt.Errorf("update preference %s: %w", p.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return memento.Errorf(memento.ENOTFOUND, "preference %q not found", p.ID)
	}
	return nil
}

// bumpPreferenceVersion counts a change to the user's preferences,
// enqueues a clustering job unless one is pending (and not stale) and
// returns the new version, at which the change writes its rows. The
// update locks the user's state row until the transaction ends, so no
// other change of the user takes a version between.
func (db *DB) bumpPreferenceVersion(ctx context.Context, tx pgx.Tx, s memento.Scope, now time.Time) (int64, error) {
	var version int64
	var requested *int64
	err := tx.QueryRow(ctx, bumpPreferenceVersionSQL, s.Tenant, s.User).Scan(&version, &requested)
	if err != nil {
		return 0, fmt.Errorf("bump preference version: %w", err)
	}
	if requested != nil && now.Sub(fromNanos(*requested)) < prefClusterStale {
		return version, nil
	}
	return version, db.requestPreferenceClusters(ctx, tx, s, now)
}

// bumpPreferenceVersionSQL is bumpPreferenceVersion's statement.
const bumpPreferenceVersionSQL = `INSERT INTO preference_state (tenant_id, user_id, version) VALUES ($1, $2, 1)
	ON CONFLICT (tenant_id, user_id) DO UPDATE SET version = preference_state.version + 1
	RETURNING version, cluster_requested_at`

func (db *DB) requestPreferenceClusters(ctx context.Context, tx pgx.Tx, s memento.Scope, now time.Time) error {
	if _, err := tx.Exec(ctx, `UPDATE preference_state SET cluster_requested_at = $1 WHERE tenant_id = $2 AND user_id = $3`,
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
func queryPreferences(ctx context.Context, q querier, where string, args ...any) ([]memento.Preference, error) {
	return selectPreferences(ctx, q, prefColumns, where, args...)
}

// selectPreferences lists preferences p matching where, oldest first,
// reading columns (prefColumns or prefRowColumns).
func selectPreferences(ctx context.Context, q querier, columns, where string, args ...any) ([]memento.Preference, error) {
	rows, err := q.Query(ctx, `SELECT `+columns+` FROM preferences p `+where+` ORDER BY p.first_seen, p.id COLLATE "C"`, args...)
	if err != nil {
		return nil, fmt.Errorf("list preferences: %w", err)
	}
	out, err := collect(rows, func(r pgx.Rows) (memento.Preference, error) { return scanPreference(r) })
	if err != nil {
		return nil, fmt.Errorf("list preferences: %w", err)
	}
	return out, nil
}

// Preferences lists all of a user's preferences, oldest first, with their
// cluster ids.
func (db *DB) Preferences(ctx context.Context, s memento.Scope) ([]memento.Preference, error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	return queryPreferences(ctx, db.pool, `WHERE p.tenant_id = $1 AND p.user_id = $2`, s.Tenant, s.User)
}

// PatchPreference edits one preference's concept (with its new vector)
// and/or weight. Errors: ENOTFOUND, EINVALID.
func (db *DB) PatchPreference(ctx context.Context, s memento.Scope, id string, p memento.PreferencePatch) (*memento.Preference, error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	if p.Weight != nil && (math.IsNaN(*p.Weight) || math.IsInf(*p.Weight, 0)) {
		return nil, memento.Errorf(memento.EINVALID, "weight must be a finite number")
	}
	var out memento.Preference
	err = db.userTx(ctx, s, func(tx pgx.Tx) error {
		cur, err := queryPreferences(ctx, tx, `WHERE p.tenant_id = $1 AND p.user_id = $2 AND p.id = $3`, s.Tenant, s.User, id)
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
		if _, err := db.bumpPreferenceVersion(ctx, tx, s, now); err != nil {
			return err
		}
		return updatePreference(ctx, tx, s, out, now)
	})
	if err != nil {
		return nil, fmt.Errorf("patch preference %s: %w", id, err)
	}
	return &out, nil
}

// DeletePreference forgets one preference (and its cluster memberships;
// a cluster left without members goes too). Errors: ENOTFOUND.
func (db *DB) DeletePreference(ctx context.Context, s memento.Scope, id string) error {
	s, err := checkScope(s)
	if err != nil {
		return err
	}
	err = db.userTx(ctx, s, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM preferences WHERE tenant_id = $1 AND user_id = $2 AND id = $3`, s.Tenant, s.User, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return memento.Errorf(memento.ENOTFOUND, "preference %q not found", id)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM preference_clusters AS c WHERE c.tenant_id = $1 AND c.user_id = $2
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

// PreferencesSince reads, in one snapshot, the user's version counters,
// the number of their preferences and those written after version (all of
// them when version is negative: rows written before the version column,
// or loaded in bulk, are at version 0), for an incremental clustering
// (prefs.PreferencesSince). The rows are read without their cluster ids.
func (db *DB) PreferencesSince(ctx context.Context, s memento.Scope, version int64) (*memento.PreferencesRead, error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	out := &memento.PreferencesRead{Changed: []memento.Preference{}}
	err = db.readTx(ctx, func(tx pgx.Tx) error {
		var since int64
		switch err := tx.QueryRow(ctx, `SELECT u.created_at, coalesce(ps.version, 0), coalesce(ps.clustered_version, 0) FROM users u
			LEFT JOIN preference_state ps ON ps.tenant_id = u.tenant_id AND ps.user_id = u.id
			WHERE u.tenant_id = $1 AND u.id = $2`, s.Tenant, s.User).Scan(&since, &out.Version.Version, &out.Version.Clustered); {
		case errors.Is(err, pgx.ErrNoRows):
			return nil
		case err != nil:
			return err
		}
		out.Version.Since = fromNanos(since)
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM preferences WHERE tenant_id = $1 AND user_id = $2`,
			s.Tenant, s.User).Scan(&out.Total); err != nil {
			return err
		}
		if version >= 0 && out.Version.Version <= version {
			return nil // nothing written since
		}
		changed, err := selectPreferences(ctx, tx, prefRowColumns, `WHERE p.tenant_id = $1 AND p.user_id = $2 AND p.version > $3`,
			s.Tenant, s.User, version)
		out.Changed = changed
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read preferences of %s since version %d: %w", s.User, version, err)
	}
	return out, nil
}

// PreferenceVersion returns the user's version counters.
func (db *DB) PreferenceVersion(ctx context.Context, s memento.Scope) (memento.PreferenceVersion, error) {
	var v memento.PreferenceVersion
	s, err := checkScope(s)
	if err != nil {
		return v, err
	}
	var since int64
	err = db.pool.QueryRow(ctx, `SELECT ps.version, ps.clustered_version, u.created_at FROM preference_state ps
		JOIN users u ON u.tenant_id = ps.tenant_id AND u.id = ps.user_id
		WHERE ps.tenant_id = $1 AND ps.user_id = $2`, s.Tenant, s.User).Scan(&v.Version, &v.Clustered, &since)
	if errors.Is(err, pgx.ErrNoRows) {
		return v, nil
	} else if err != nil {
		return v, fmt.Errorf("preference version: %w", err)
	}
	v.Since = fromNanos(since)
	return v, nil
}

// SavePreferenceClusters replaces the user's clusters with clusters
// computed from version; members that no longer exist are left out and a
// cluster left empty is not stored. If the preferences changed since
// version another clustering job is enqueued, else the pending one is
// done. Errors: EINVALID, ENOTFOUND for an unknown user.
func (db *DB) SavePreferenceClusters(ctx context.Context, s memento.Scope, version int64, clusters []memento.PreferenceCluster) error {
	s, err := checkScope(s)
	if err != nil {
		return err
	}
	for i, c := range clusters {
		if c.ID == "" || len(c.ID) > memento.MaxIDLen {
			return memento.Errorf(memento.EINVALID, "clusters[%d].id must be 1 to %d bytes", i, memento.MaxIDLen)
		}
		for j, m := range c.Members {
			if m.Stance != memento.StanceSupport && m.Stance != memento.StanceOppose {
				return memento.Errorf(memento.EINVALID, "clusters[%d].members[%d].stance must be %q or %q, got %q",
					i, j, memento.StanceSupport, memento.StanceOppose, m.Stance)
			}
		}
	}
	// Every statement goes in one round trip, each over arrays, and only
	// what changed is written: a clustering keeps most clusters as they
	// were (a cluster's id is its members'), and a member inserted costs
	// two foreign key checks. Members not listed any more go first, then
	// clusters not listed; the clusters are written (their version and
	// time change), then the members new or changed; clusters left
	// without a member are deleted last.
	ids := make([]string, len(clusters))
	descriptions := make([]string, len(clusters))
	signatures := make([]string, len(clusters))
	memberOf, members, stances := []string{}, []string{}, []string{}
	positions := []int32{}
	for i, c := range clusters {
		ids[i], descriptions[i], signatures[i] = c.ID, c.Description, c.Signature
		for pos, m := range c.Members {
			memberOf, members, stances = append(memberOf, c.ID), append(members, m.Preference), append(stances, m.Stance)
			positions = append(positions, int32(pos))
		}
	}
	err = db.userTx(ctx, s, func(tx pgx.Tx) error {
		now := db.now()
		b := &pgx.Batch{}
		b.Queue(`SELECT EXISTS (SELECT 1 FROM users WHERE tenant_id = $1 AND id = $2)`, s.Tenant, s.User)
		b.Queue(`DELETE FROM preference_cluster_members m WHERE m.tenant_id = $1 AND m.user_id = $2
			AND NOT EXISTS (SELECT 1 FROM unnest($3::text[], $4::text[]) AS n(cluster_id, preference_id)
				WHERE n.cluster_id = m.cluster_id AND n.preference_id = m.preference_id)`, s.Tenant, s.User, memberOf, members)
		b.Queue(`DELETE FROM preference_clusters WHERE tenant_id = $1 AND user_id = $2 AND id <> ALL($3::text[])`, s.Tenant, s.User, ids)
		b.Queue(`INSERT INTO preference_clusters (tenant_id, user_id, id, description, signature, version, created_at)
			SELECT $1, $2, c.id, c.description, c.signature, $6, $7
			FROM unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS c(id, description, signature, n) ORDER BY c.n
			ON CONFLICT (tenant_id, user_id, id) DO UPDATE SET description = excluded.description, signature = excluded.signature,
				version = excluded.version, created_at = excluded.created_at`,
			s.Tenant, s.User, ids, descriptions, signatures, version, nanos(now))
		// A member whose preference is gone is left out; of a preference
		// listed twice in a cluster, the first is kept.
		b.Queue(`INSERT INTO preference_cluster_members (tenant_id, user_id, cluster_id, preference_id, stance, position)
			SELECT DISTINCT ON (m.cluster_id, m.preference_id) $1, $2, m.cluster_id, m.preference_id, m.stance, m.position
			FROM unnest($3::text[], $4::text[], $5::text[], $6::int[]) WITH ORDINALITY AS m(cluster_id, preference_id, stance, position, n)
			WHERE EXISTS (SELECT 1 FROM preferences p WHERE p.tenant_id = $1 AND p.user_id = $2 AND p.id = m.preference_id)
			ORDER BY m.cluster_id, m.preference_id, m.n
			ON CONFLICT (tenant_id, user_id, cluster_id, preference_id) DO UPDATE SET stance = excluded.stance, position = excluded.position
			WHERE (preference_cluster_members.stance, preference_cluster_members.position) IS DISTINCT FROM (excluded.stance, excluded.position)`,
			s.Tenant, s.User, memberOf, members, stances, positions)
		b.Queue(`DELETE FROM preference_clusters c WHERE c.tenant_id = $1 AND c.user_id = $2
			AND NOT EXISTS (SELECT 1 FROM preference_cluster_members m
				WHERE m.tenant_id = c.tenant_id AND m.user_id = c.user_id AND m.cluster_id = c.id)`, s.Tenant, s.User)
		b.Queue(`INSERT INTO preference_state (tenant_id, user_id, clustered_version) VALUES ($1, $2, $3)
			ON CONFLICT (tenant_id, user_id) DO UPDATE SET clustered_version = greatest(preference_state.clustered_version, $3)
			RETURNING version`, s.Tenant, s.User, version)
		br := tx.SendBatch(ctx, b)
		var ok bool
		if err := br.QueryRow().Scan(&ok); err != nil {
			br.Close()
			return err
		}
		if !ok {
			br.Close()
			return memento.Errorf(memento.ENOTFOUND, "user %q not found", s.User)
		}
		for _, what := range []string{"delete old members", "delete old clusters", "write clusters", "write members", "delete empty clusters"} {
			if _, err := br.Exec(); err != nil {
				br.Close()
				return fmt.Errorf("%s: %w", what, err)
			}
		}
		var current int64
		if err := br.QueryRow().Scan(&current); err != nil {
			br.Close()
			return fmt.Errorf("record clustered version: %w", err)
		}
		if err := br.Close(); err != nil {
			return err
		}
		if current > version {
			return db.requestPreferenceClusters(ctx, tx, s, now)
		}
		_, err := tx.Exec(ctx, `UPDATE preference_state SET cluster_requested_at = NULL WHERE tenant_id = $1 AND user_id = $2`, s.Tenant, s.User)
		return err
	})
	if err != nil {
		return fmt.Errorf("save preference clusters of %s/%s: %w", s.Tenant, s.User, err)
	}
	return nil
}

// PreferenceClusters lists the user's clusters by id, each with its
// members in the order they were described.
func (db *DB) PreferenceClusters(ctx context.Context, s memento.Scope) ([]memento.PreferenceCluster, error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	out := []memento.PreferenceCluster{}
	err = db.readTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id, description, signature, version, created_at FROM preference_clusters
			WHERE tenant_id = $1 AND user_id = $2 ORDER BY id COLLATE "C"`, s.Tenant, s.User)
		if err != nil {
			return err
		}
		clusters, err := collect(rows, func(r pgx.Rows) (memento.PreferenceCluster, error) {
			var c memento.PreferenceCluster
			var created int64
			err := r.Scan(&c.ID, &c.Description, &c.Signature, &c.Version, &created)
			c.CreatedAt, c.Members = fromNanos(created), []memento.PreferenceClusterMember{}
			return c, err
		})
		if err != nil {
			return err
		}
		index := map[string]int{}
		for i, c := range clusters {
			index[c.ID] = i
		}
		out = clusters
		rows, err = tx.Query(ctx, `SELECT m.cluster_id, m.preference_id, p.concept, m.stance
			FROM preference_cluster_members m
			JOIN preferences p ON p.tenant_id = m.tenant_id AND p.user_id = m.user_id AND p.id = m.preference_id
			WHERE m.tenant_id = $1 AND m.user_id = $2 ORDER BY m.cluster_id COLLATE "C", m.position`, s.Tenant, s.User)
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
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	rows, err := db.pool.Query(ctx, `SELECT source_id FROM preference_sources
		WHERE tenant_id = $1 AND user_id = $2 ORDER BY applied_at, source_id COLLATE "C"`, s.Tenant, s.User)
	if err != nil {
		return nil, fmt.Errorf("list preference sources: %w", err)
	}
	out, err := collect(rows, func(r pgx.Rows) (string, error) {
		var id string
		err := r.Scan(&id)
		return id, err
	})
	if err != nil {
		return nil, fmt.Errorf("list preference sources: %w", err)
	}
	return out, nil
}

// RestorePreferences replaces the user's preferences (and with them their
// clusters) and applied sources, keeping the given ids, and requests
// clustering. Errors: EINVALID.
func (db *DB) RestorePreferences(ctx context.Context, s memento.Scope, prefs []memento.Preference, sources []string) error {
	s, err := checkScope(s)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for i, p := range prefs {
		if p.ID == "" || len(p.ID) > memento.MaxIDLen || seen[p.ID] {
			return memento.Errorf(memento.EINVALID, "preferences[%d].id must be a unique id of 1 to %d bytes", i, memento.MaxIDLen)
		}
		seen[p.ID] = true
		if err := checkPreference(p); err != nil {
			return err
		}
	}
	err = db.userTx(ctx, s, func(tx pgx.Tx) error {
		if _, err := db.ensureUser(ctx, tx, s); err != nil {
			return err
		}
		now := db.now()
		for _, q := range []string{`DELETE FROM preferences WHERE tenant_id = $1 AND user_id = $2`,
			`DELETE FROM preference_clusters WHERE tenant_id = $1 AND user_id = $2`,
			`DELETE FROM preference_sources WHERE tenant_id = $1 AND user_id = $2`} {
			if _, err := tx.Exec(ctx, q, s.Tenant, s.User); err != nil {
				return fmt.Errorf("clear preferences: %w", err)
			}
		}
		if _, err := db.bumpPreferenceVersion(ctx, tx, s, now); err != nil {
			return err
		}
		for _, p := range prefs {
			if err := insertPreference(ctx, tx, s, p, now); err != nil {
				return err
			}
		}
		for i, src := range sources {
			if _, err := tx.Exec(ctx, `INSERT INTO preference_sources (tenant_id, user_id, source_id, applied_at)
				VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, s.Tenant, s.User, src, nanos(now)+int64(i)); err != nil {
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
