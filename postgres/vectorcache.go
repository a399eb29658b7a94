package postgres

import (
	"context"
	"fmt"

	"github.com/memento-ai/memento"
)

// CachedVectors returns the vector stored for each key under embedder, nil
// where none is (memento.VectorCache). Errors: EINVALID.
func (db *DB) CachedVectors(ctx context.Context, embedder string, keys []memento.TextKey) ([][]float32, error) {
	answer, err := memento.NewCachedAnswer(embedder, keys)
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return answer.Vectors(), nil
	}
	rows, err := db.pool.Query(ctx, `SELECT text_key, vector FROM vector_cache
		WHERE embedder = $1 AND text_key = ANY($2)`, embedder, keyBytes(keys))
	if err != nil {
		return nil, fmt.Errorf("read cached vectors: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var key, vec []byte
		if err := rows.Scan(&key, &vec); err != nil {
			return nil, fmt.Errorf("read cached vectors: %w", err)
		}
		answer.Place(key, vectorFrom(vec))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read cached vectors: %w", err)
	}
	return answer.Vectors(), nil
}

// CacheVectors stores one vector per key under embedder, replacing a
// stored one, in one statement (memento.VectorCache). Errors: EINVALID.
func (db *DB) CacheVectors(ctx context.Context, embedder string, keys []memento.TextKey, vectors [][]float32) error {
	if err := memento.CheckCacheVectors(embedder, keys, vectors); err != nil {
		return err
	}
	if len(keys) == 0 {
		return nil
	}
	// One row per key: a key given twice would make ON CONFLICT update a
	// row the statement itself inserted, which PostgreSQL refuses. The
	// last vector given for a key wins.
	last := make(map[memento.TextKey]int, len(keys))
	for i, k := range keys {
		last[k] = i
	}
	ks := make([][]byte, 0, len(last))
	vs := make([][]byte, 0, len(last))
	for i, k := range keys {
		if last[k] != i {
			continue
		}
		ks = append(ks, k[:])
		vs = append(vs, vectorBytes(vectors[i]))
	}
	if _, err := db.pool.Exec(ctx, `INSERT INTO vector_cache (embedder, text_key, vector)
		SELECT $1, k, v FROM unnest($2::bytea[], $3::bytea[]) AS u(k, v)
		ON CONFLICT (embedder, text_key) DO UPDATE SET vector = excluded.vector`, embedder, ks, vs); err != nil {
		return fmt.Errorf("cache vectors: %w", err)
	}
	return nil
}

// PruneVectors deletes the vectors whose key is not in keep
// (memento.VectorCache).
func (db *DB) PruneVectors(ctx context.Context, keep []memento.TextKey) (int64, error) {
	tag, err := db.pool.Exec(ctx, `DELETE FROM vector_cache v
		WHERE NOT EXISTS (SELECT 1 FROM unnest($1::bytea[]) AS k(key) WHERE k.key = v.text_key)`, keyBytes(keep))
	if err != nil {
		return 0, fmt.Errorf("prune cached vectors: %w", err)
	}
	return tag.RowsAffected(), nil
}

// keyBytes returns keys as byte slices, for a bytea array.
func keyBytes(keys []memento.TextKey) [][]byte {
	out := make([][]byte, len(keys))
	for i := range keys {
		out[i] = keys[i][:]
	}
	return out
}
