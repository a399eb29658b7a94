package postgres

import (
	"context"
	"testing"

	"github.com/memento-ai/memento"
)

// TestModelStoredUncompressed saves a model that compresses well and
// finds it stored as it is (migration 0014): the co-occurrence model does
// not compress, and trying cost a save most of its time.
func TestModelStoredUncompressed(t *testing.T) {
	ctx := context.Background()
	db := openInternal(t)
	data := make([]byte, 256<<10) // zeros: the best case for compression
	copy(data, "MCO1")
	if _, err := db.SaveProfileModel(ctx, memento.ProfileModel{Name: "cooccurrence", EventsMark: 1, Data: data}, false); err != nil {
		t.Fatal(err)
	}
	var stored, size int64
	if err := db.pool.QueryRow(ctx, `SELECT pg_column_size(data), length(data) FROM profile_models WHERE name = 'cooccurrence'`).Scan(&stored, &size); err != nil {
		t.Fatal(err)
	}
	if size != int64(len(data)) || stored < size {
		t.Errorf("a model of %d bytes is stored in %d bytes (length %d): compressed, want it as it is", len(data), stored, size)
	}
	m, err := db.ProfileModel(ctx, memento.DefaultTenant, "cooccurrence")
	if err != nil || m == nil || len(m.Data) != len(data) {
		t.Fatalf("ProfileModel = %v, %v; want the %d bytes saved", m, err, len(data))
	}
}
