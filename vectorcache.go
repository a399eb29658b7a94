package memento

import (
	"context"
	"crypto/sha256"
)

// TextKey is the SHA-256 of a text: what a VectorCache keeps the text's
// vector by, so that the cache holds no text and a changed text is a new
// key.
type TextKey [sha256.Size]byte

// KeyOf returns the key of text.
func KeyOf(text string) TextKey { return sha256.Sum256([]byte(text)) }

// VectorCache keeps vectors an embedder made for shared texts (the
// catalog's titles), by the embedder's ID and the text's key, so that a
// restarted server, or a second one on the same store, reads them instead
// of embedding the catalog again: with an embedding server, 36,000 texts
// of its time and its price at every start. It is not tenant-scoped and
// must never hold a user's texts: nothing deletes them with the user.
// A cache write need not survive a crash; a lost vector is embedded again.
type VectorCache interface {
	// CachedVectors returns the vector stored for each key under
	// embedder, nil where none is. Errors: EINVALID for an empty
	// embedder.
	CachedVectors(ctx context.Context, embedder string, keys []TextKey) ([][]float32, error)
	// CacheVectors stores one vector per key under embedder, replacing a
	// stored one. Errors: EINVALID for an empty embedder, as many keys as
	// vectors, or an empty vector.
	CacheVectors(ctx context.Context, embedder string, keys []TextKey, vectors [][]float32) error
	// PruneVectors deletes the vectors, of every embedder, whose key is
	// not in keep (the texts of the titles now in the catalog), and
	// returns how many went.
	PruneVectors(ctx context.Context, keep []TextKey) (int64, error)
}

// CheckCacheVectors validates the arguments of VectorCache.CacheVectors.
func CheckCacheVectors(embedder string, keys []TextKey, vectors [][]float32) error {
	if embedder == "" {
		return Errorf(EINVALID, "the embedder's id is required")
	}
	if len(keys) != len(vectors) {
		return Errorf(EINVALID, "%d keys for %d vectors", len(keys), len(vectors))
	}
	for i, v := range vectors {
		if len(v) == 0 {
			return Errorf(EINVALID, "vectors[%d] is empty", i)
		}
	}
	return nil
}

// CachedAnswer gathers a store's answer to VectorCache.CachedVectors: the
// vector of each key asked for, in the order asked (a key asked twice
// gets its vector twice), from stored rows in any order.
type CachedAnswer struct {
	at      map[TextKey][]int
	vectors [][]float32
}

// NewCachedAnswer returns the answer to keys before any row is placed:
// nil for each. Errors: EINVALID for an empty embedder.
func NewCachedAnswer(embedder string, keys []TextKey) (*CachedAnswer, error) {
	if embedder == "" {
		return nil, Errorf(EINVALID, "the embedder's id is required")
	}
	a := &CachedAnswer{at: make(map[TextKey][]int, len(keys)), vectors: make([][]float32, len(keys))}
	for i, k := range keys {
		a.at[k] = append(a.at[k], i)
	}
	return a, nil
}

// Place gives v to every place key (a stored key's bytes) was asked for;
// bytes of another length are no key.
func (a *CachedAnswer) Place(key []byte, v []float32) {
	var k TextKey
	if len(key) != len(k) {
		return
	}
	copy(k[:], key)
	for _, i := range a.at[k] {
		a.vectors[i] = v
	}
}

// Vectors returns the answer.
func (a *CachedAnswer) Vectors() [][]float32 { return a.vectors }
