package sqlite

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
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
	list, err := keyList(keys)
	if err != nil {
		return nil, err
	}
	rows, err := db.read.QueryContext(ctx, `SELECT text_key, vector FROM vector_cache
		WHERE embedder = ? AND text_key IN (SELECT unhex(value) FROM json_each(?))`, embedder, list)
	if err != nil {
		return nil, fmt.Errorf("read cached vectors: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var key, vec []byte
		if err := rows.Scan(&key, &vec); err != nil {
			return nil, fmt.Errorf("read cached vectors: %w", err)
		}
		answer.Place(key, memVectorFrom(vec))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read cached vectors: %w", err)
	}
	return answer.Vectors(), nil
}

// CacheVectors stores one vector per key under embedder, replacing a
// stored one, in one transaction that does not wait for the disk: a cache
// lost in a crash is embedded again (memento.VectorCache). Errors:
// EINVALID.
func (db *DB) CacheVectors(ctx context.Context, embedder string, keys []memento.TextKey, vectors [][]float32) error {
	if err := memento.CheckCacheVectors(embedder, keys, vectors); err != nil {
		return err
	}
	if len(keys) == 0 {
		return nil
	}
	err := db.writeTxAt(ctx, false, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO vector_cache (embedder, text_key, vector) VALUES (?, ?, ?)
			ON CONFLICT (embedder, text_key) DO UPDATE SET vector = excluded.vector`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for i, k := range keys {
			if _, err := stmt.ExecContext(ctx, embedder, k[:], memVectorBytes(vectors[i])); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("cache vectors: %w", err)
	}
	return nil
}

// PruneVectors deletes the vectors whose key is not in keep, in one
// transaction that does not wait for the disk (memento.VectorCache).
func (db *DB) PruneVectors(ctx context.Context, keep []memento.TextKey) (int64, error) {
	list, err := keyList(keep)
	if err != nil {
		return 0, err
	}
	var n int64
	err = db.writeTxAt(ctx, false, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM vector_cache WHERE text_key NOT IN (SELECT unhex(value) FROM json_each(?))`, list)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune cached vectors: %w", err)
	}
	return n, nil
}

// keyList encodes keys as a JSON array of hex strings, for json_each.
func keyList(keys []memento.TextKey) (string, error) {
	hexes := make([]string, len(keys))
	for i, k := range keys {
		hexes[i] = hex.EncodeToString(k[:])
	}
	b, err := json.Marshal(hexes)
	return string(b), err
}
