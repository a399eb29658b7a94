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
	"github.com/memento-ai/memento/graph"
)

var _ memento.TitleService = (*DB)(nil)

// Checkpointer returns a durable graph.Checkpointer for the runs of one
// user, storing checkpoints in graph_checkpoints (deleted with the user;
// WriteMemories deletes a run's checkpoint with its results). A run
// resumed on another process finds the checkpoint of the first.
func (db *DB) Checkpointer(s memento.Scope) graph.Checkpointer {
	if s.Tenant == "" {
		s.Tenant = memento.DefaultTenant
	}
	return &checkpointer{db: db, s: s}
}

type checkpointer struct {
	db *DB
	s  memento.Scope
}

// Load returns the checkpoint saved under key.
func (c *checkpointer) Load(ctx context.Context, key string) (*graph.Checkpoint, bool, error) {
	var cp graph.Checkpoint
	var state, trace string
	var saved int64
	err := c.db.pool.QueryRow(ctx, `SELECT graph, next, state, trace, done, saved_at FROM graph_checkpoints
		WHERE tenant_id = $1 AND user_id = $2 AND key = $3`, c.s.Tenant, c.s.User, key).
		Scan(&cp.Graph, &cp.Next, &state, &trace, &cp.Done, &saved)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, fmt.Errorf("load checkpoint %s: %w", key, err)
	}
	cp.State = json.RawMessage(state)
	if err := json.Unmarshal([]byte(trace), &cp.Trace); err != nil {
		return nil, false, fmt.Errorf("load checkpoint %s: decode trace: %w", key, err)
	}
	cp.SavedAt = fromNanos(saved)
	return &cp, true, nil
}

// Save stores cp under key, replacing an earlier checkpoint. The user must
// exist. Errors: EINVALID for an overlong key.
func (c *checkpointer) Save(ctx context.Context, key string, cp graph.Checkpoint) error {
	if len(key) > 4*memento.MaxIDLen {
		return memento.Errorf(memento.EINVALID, "checkpoint key is %d bytes, over the limit of %d", len(key), 4*memento.MaxIDLen)
	}
	trace, err := json.Marshal(cp.Trace)
	if err != nil {
		return fmt.Errorf("save checkpoint %s: encode trace: %w", key, err)
	}
	state := string(cp.State)
	if strings.TrimSpace(state) == "" {
		state = "null"
	}
	_, err = c.db.pool.Exec(ctx, `INSERT INTO graph_checkpoints (tenant_id, user_id, key, graph, next, state, trace, done, saved_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (tenant_id, user_id, key) DO UPDATE SET graph = excluded.graph, next = excluded.next,
			state = excluded.state, trace = excluded.trace, done = excluded.done, saved_at = excluded.saved_at`,
		c.s.Tenant, c.s.User, key, cp.Graph, cp.Next, state, string(trace), cp.Done, nanos(cp.SavedAt))
	if err != nil {
		return fmt.Errorf("save checkpoint %s: %w", key, err)
	}
	return nil
}

// Delete forgets the checkpoint under key.
func (c *checkpointer) Delete(ctx context.Context, key string) error {
	if _, err := c.db.pool.Exec(ctx, `DELETE FROM graph_checkpoints WHERE tenant_id = $1 AND user_id = $2 AND key = $3`, c.s.Tenant, c.s.User, key); err != nil {
		return fmt.Errorf("delete checkpoint %s: %w", key, err)
	}
	return nil
}

// VectorText is a text to embed for recall (memento.VectorText).
type VectorText = memento.VectorText

// MissingVectors lists the user's current memories and messages without an
// embedding by the named embedder, at most limit of each. Errors: EINVALID.
func (db *DB) MissingVectors(ctx context.Context, s memento.Scope, embedder string, limit int) (memories, messages []VectorText, err error) {
	s, err = checkScope(s)
	if err != nil {
		return nil, nil, err
	}
	if limit <= 0 {
		return nil, nil, memento.Errorf(memento.EINVALID, "limit must be positive, got %d", limit)
	}
	scan := func(r pgx.Rows) (VectorText, error) {
		var t VectorText
		err := r.Scan(&t.ID, &t.Text)
		return t, err
	}
	err = db.readTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT m.id, m.value FROM memories AS m LEFT JOIN memory_vectors AS v ON v.memory_pk = m.pk
			WHERE m.tenant_id = $1 AND m.user_id = $2 AND m.valid_to IS NULL AND (v.embedder IS NULL OR v.embedder <> $3) ORDER BY m.pk LIMIT $4`,
			s.Tenant, s.User, embedder, limit)
		if err != nil {
			return err
		}
		if memories, err = collect(rows, scan); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, `SELECT m.id, m.text FROM messages AS m LEFT JOIN message_vectors AS v ON v.message_pk = m.pk
			WHERE m.tenant_id = $1 AND m.user_id = $2 AND (v.embedder IS NULL OR v.embedder <> $3) ORDER BY m.pk LIMIT $4`,
			s.Tenant, s.User, embedder, limit)
		if err != nil {
			return err
		}
		messages, err = collect(rows, scan)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("list texts without vectors: %w", err)
	}
	return memories, messages, nil
}

// PutVectors stores embeddings by the named embedder, of memories and of
// messages by id; unknown ids are skipped. Errors: EINVALID.
func (db *DB) PutVectors(ctx context.Context, s memento.Scope, embedder string, memories, messages map[string][]float32) error {
	s, err := checkScope(s)
	if err != nil {
		return err
	}
	if embedder == "" {
		return memento.Errorf(memento.EINVALID, "embedder id is required")
	}
	err = db.userTx(ctx, s, func(tx pgx.Tx) error {
		for id, v := range memories {
			if _, err := tx.Exec(ctx, `INSERT INTO memory_vectors (memory_pk, embedder, embedding)
				SELECT pk, $1, $2 FROM memories WHERE tenant_id = $3 AND user_id = $4 AND id = $5
				ON CONFLICT (memory_pk) DO UPDATE SET embedder = excluded.embedder, embedding = excluded.embedding`,
				embedder, vectorBytes(v), s.Tenant, s.User, id); err != nil {
				return fmt.Errorf("store vector of memory %s: %w", id, err)
			}
		}
		for id, v := range messages {
			if _, err := tx.Exec(ctx, `INSERT INTO message_vectors (message_pk, embedder, embedding)
				SELECT pk, $1, $2 FROM messages WHERE tenant_id = $3 AND user_id = $4 AND id = $5
				ON CONFLICT (message_pk) DO UPDATE SET embedder = excluded.embedder, embedding = excluded.embedding`,
				embedder, vectorBytes(v), s.Tenant, s.User, id); err != nil {
				return fmt.Errorf("store vector of message %s: %w", id, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store vectors: %w", err)
	}
	return nil
}

// UserExists reports whether the store knows the user. Errors: EINVALID.
func (db *DB) UserExists(ctx context.Context, s memento.Scope) (bool, error) {
	s, err := checkScope(s)
	if err != nil {
		return false, err
	}
	var ok bool
	if err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE tenant_id = $1 AND id = $2)`, s.Tenant, s.User).Scan(&ok); err != nil {
		return false, fmt.Errorf("look up user %s: %w", s.User, err)
	}
	return ok, nil
}

// Users lists the ids of a tenant's users in order.
func (db *DB) Users(ctx context.Context, tenant string) ([]string, error) {
	if tenant == "" {
		tenant = memento.DefaultTenant
	}
	rows, err := db.pool.Query(ctx, `SELECT id FROM users WHERE tenant_id = $1 ORDER BY id COLLATE "C"`, tenant)
	if err != nil {
		return nil, fmt.Errorf("list users of %s: %w", tenant, err)
	}
	out, err := collect(rows, func(r pgx.Rows) (string, error) {
		var id string
		err := r.Scan(&id)
		return id, err
	})
	if err != nil {
		return nil, fmt.Errorf("list users of %s: %w", tenant, err)
	}
	return out, nil
}

// PutTitles inserts or updates titles in one transaction; with replace,
// every other title is removed first. Errors: EINVALID.
func (db *DB) PutTitles(ctx context.Context, titles []memento.Title, replace bool) (int, error) {
	for i, t := range titles {
		if t.ID == "" {
			return 0, memento.Errorf(memento.EINVALID, "titles[%d].id is required", i)
		}
		if strings.TrimSpace(t.Title) == "" {
			return 0, memento.Errorf(memento.EINVALID, "titles[%d].title is required", i)
		}
	}
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if replace {
			if _, err := tx.Exec(ctx, `DELETE FROM titles`); err != nil {
				return fmt.Errorf("clear titles: %w", err)
			}
		}
		batch := &pgx.Batch{}
		for _, t := range titles {
			genres, cast := t.Genres, t.Cast
			if genres == nil {
				genres = []string{}
			}
			if cast == nil {
				cast = []string{}
			}
			g, _ := json.Marshal(genres)
			c, _ := json.Marshal(cast)
			batch.Queue(`INSERT INTO titles (id, title, type, year, end_year, genres, cast_members, overview, runtime_minutes, is_adult, href, notability)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
				ON CONFLICT (id) DO UPDATE SET title = excluded.title, type = excluded.type, year = excluded.year,
					end_year = excluded.end_year, genres = excluded.genres, cast_members = excluded.cast_members,
					overview = excluded.overview, runtime_minutes = excluded.runtime_minutes,
					is_adult = excluded.is_adult, href = excluded.href, notability = excluded.notability`,
				t.ID, t.Title, t.Type, t.Year, t.EndYear, string(g), string(c), t.Overview, t.RuntimeMinutes, t.IsAdult, t.Href, min(max(t.Notability, 0), 1))
		}
		return tx.SendBatch(ctx, batch).Close()
	})
	if err != nil {
		return 0, fmt.Errorf("put titles: %w", err)
	}
	return len(titles), nil
}

// Titles returns every stored title, ordered by id.
func (db *DB) Titles(ctx context.Context) ([]memento.Title, error) {
	rows, err := db.pool.Query(ctx, `SELECT id, title, type, year, end_year, genres, cast_members,
		overview, runtime_minutes, is_adult, href, notability FROM titles ORDER BY id COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("list titles: %w", err)
	}
	out, err := collect(rows, func(r pgx.Rows) (memento.Title, error) {
		var t memento.Title
		var genres, cast []byte
		if err := r.Scan(&t.ID, &t.Title, &t.Type, &t.Year, &t.EndYear, &genres, &cast,
			&t.Overview, &t.RuntimeMinutes, &t.IsAdult, &t.Href, &t.Notability); err != nil {
			return t, err
		}
		if err := json.Unmarshal(genres, &t.Genres); err != nil {
			return t, fmt.Errorf("decode genres of title %s: %w", t.ID, err)
		}
		if err := json.Unmarshal(cast, &t.Cast); err != nil {
			return t, fmt.Errorf("decode cast of title %s: %w", t.ID, err)
		}
		return t, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list titles: %w", err)
	}
	return out, nil
}

// CountTitles counts the stored titles.
func (db *DB) CountTitles(ctx context.Context) (int, error) {
	var n int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM titles`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count titles: %w", err)
	}
	return n, nil
}

// ChangedUsers returns the users whose data may have changed after since,
// in every tenant, each with the time of their newest change, as package
// sqlite does: a thread updated, a summary, an event or a profile change
// after it, or a background job of theirs that finished after it. It may
// list a user whose data did not change.
func (db *DB) ChangedUsers(ctx context.Context, since time.Time) (map[memento.Scope]time.Time, error) {
	t := nanos(since)
	rows, err := db.pool.Query(ctx, `SELECT tenant, usr, max(at) FROM (
		SELECT tenant_id AS tenant, user_id AS usr, updated_at AS at FROM threads WHERE updated_at > $1
		UNION ALL SELECT tenant_id, user_id, created_at FROM summaries WHERE created_at > $1
		UNION ALL SELECT tenant_id, user_id, created_at FROM events WHERE created_at > $1
		UNION ALL SELECT tenant_id, user_id, updated_at FROM profiles WHERE updated_at > $1
		UNION ALL SELECT coalesce(args ->> 'tenant', ''), args ->> 'user',
				(extract(epoch FROM finalized_at) * 1000000000)::BIGINT FROM river_job
			WHERE state = 'completed' AND finalized_at > $2 AND coalesce(args ->> 'user', '') <> ''
		) AS changes GROUP BY tenant, usr`, t, since)
	if err != nil {
		return nil, fmt.Errorf("list changed users: %w", err)
	}
	defer rows.Close()
	out := map[memento.Scope]time.Time{}
	for rows.Next() {
		var s memento.Scope
		var at int64
		if err := rows.Scan(&s.Tenant, &s.User, &at); err != nil {
			return nil, fmt.Errorf("list changed users: %w", err)
		}
		if s.Tenant == "" {
			s.Tenant = memento.DefaultTenant
		}
		if prev, ok := out[s]; !ok || fromNanos(at).After(prev) {
			out[s] = fromNanos(at)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list changed users: %w", err)
	}
	return out, nil
}

// SnapshotCursor returns how far the write-behind of a snapshot target has
// looked for changes, or the zero time when it never ran.
func (db *DB) SnapshotCursor(ctx context.Context, target string) (time.Time, error) {
	var at int64
	err := db.pool.QueryRow(ctx, `SELECT at FROM snapshot_cursors WHERE target = $1`, target).Scan(&at)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, nil
	} else if err != nil {
		return time.Time{}, fmt.Errorf("read snapshot cursor of %s: %w", target, err)
	}
	return fromNanos(at), nil
}

// SetSnapshotCursor records how far the write-behind of a snapshot target
// has written every change.
func (db *DB) SetSnapshotCursor(ctx context.Context, target string, at time.Time) error {
	if _, err := db.pool.Exec(ctx, `INSERT INTO snapshot_cursors (target, at) VALUES ($1, $2)
		ON CONFLICT (target) DO UPDATE SET at = excluded.at`, target, nanos(at)); err != nil {
		return fmt.Errorf("write snapshot cursor of %s: %w", target, err)
	}
	return nil
}

// SchemaVersion returns the number of the newest applied migration of the
// store's own schema (River's are versioned apart).
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v *int
	if err := db.pool.QueryRow(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	if v == nil {
		return 0, nil
	}
	return *v, nil
}
