package postgres

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memento-ai/memento"
)

// shardValue is the memory every writer of these tests indexes: its terms
// are in every writer's document.
const shardValue = "likes slow science fiction films"

// indexOne inserts a current memory of s with shardValue in tx.
func indexOne(ctx context.Context, tx pgx.Tx, s memento.Scope, id string) error {
	now := time.Now().UTC()
	return insertMemory(ctx, tx, s, memento.Memory{ID: id, Mode: memento.ModeSemantic, Attribute: "LIKES",
		Value: shardValue, ValidFrom: now}, now)
}

// termDocs returns how many documents of the memory index hold term, by
// the counters, and over how many shards they are spread.
func termDocs(t *testing.T, db *DB, term string) (docs, shards int64) {
	t.Helper()
	if err := db.pool.QueryRow(context.Background(), `SELECT coalesce(sum(docs), 0), count(DISTINCT shard) FILTER (WHERE docs <> 0)
		FROM term_stats WHERE kind = 'memory' AND term = $1`, term).Scan(&docs, &shards); err != nil {
		t.Fatal(err)
	}
	return docs, shards
}

// TestWritersCountIntoShardsOfTheirOwn opens twenty write transactions of
// twenty users at once, each indexing a document with the same terms and
// then waiting for all the others to have done so before it commits. A
// transaction holds the counter rows it wrote until it commits, so two
// writers on one shard would wait for each other for good: with the
// transaction's id modulo 16 (migration 0001) two of twenty always share
// one. Each must have counted into a shard of its own, and the counts
// must add up.
func TestWritersCountIntoShardsOfTheirOwn(t *testing.T) {
	const writers = 20
	db := openInternalWith(t, Options{MaxConns: writers + 4})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	scopes := make([]memento.Scope, writers)
	for i := range scopes {
		scopes[i] = memento.Scope{Tenant: memento.DefaultTenant, User: fmt.Sprintf("u%02d", i)}
		if _, err := db.EnsureUser(ctx, scopes[i]); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	wrote := map[int]bool{}
	all := make(chan struct{})
	release := make(chan struct{})
	errs := make(chan error, writers)
	for i, s := range scopes {
		go func() {
			errs <- db.userTx(ctx, s, func(tx pgx.Tx) error {
				if err := indexOne(ctx, tx, s, fmt.Sprintf("mem_%02d", i)); err != nil {
					return err
				}
				mu.Lock()
				wrote[i] = true
				if len(wrote) == writers {
					close(all)
				}
				mu.Unlock()
				select {
				case <-release:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			})
		}()
	}
	select {
	case <-all:
	case <-time.After(10 * time.Second):
		mu.Lock()
		n := len(wrote)
		mu.Unlock()
		t.Errorf("after 10 s only %d of %d writers had indexed their document: the others wait for another transaction's counters", n, writers)
		cancel()
	}
	close(release)
	for range writers {
		if err := <-errs; err != nil && !t.Failed() {
			t.Errorf("writer: %v", err)
		}
	}
	if t.Failed() {
		return
	}
	terms, _, _ := indexTerms(weightedText{shardValue, 1}, weightedText{"LIKES", 0.5})
	for _, term := range terms {
		docs, shards := termDocs(t, db, term)
		if docs != writers || shards != writers {
			t.Errorf("term %q: %d documents counted over %d shards, want %d over %d", term, docs, shards, writers, writers)
		}
	}
	var docs int64
	if err := db.pool.QueryRow(ctx, `SELECT sum(docs) FROM search_stats WHERE kind = 'memory'`).Scan(&docs); err != nil {
		t.Fatal(err)
	}
	if docs != writers {
		t.Errorf("search_stats counts %d memory documents, want %d", docs, writers)
	}
}

// TestWriterSharesAShardWhenAllAreHeld holds every shard's lock from
// another connection: a writer then counts into the shard its id names,
// as before migration 0013, and its counts still add up, the document
// removed as well as added.
func TestWriterSharesAShardWhenAllAreHeld(t *testing.T) {
	ctx := context.Background()
	db := openInternal(t)
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	if _, err := db.EnsureUser(ctx, s); err != nil {
		t.Fatal(err)
	}
	holder, err := db.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Release()
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_lock(1835363699, s) FROM generate_series(0, 63) AS s`); err != nil {
		t.Fatal(err)
	}
	defer holder.Exec(ctx, `SELECT pg_advisory_unlock_all()`) //nolint:errcheck
	if err := db.userTx(ctx, s, func(tx pgx.Tx) error { return indexOne(ctx, tx, s, "mem_1") }); err != nil {
		t.Fatal(err)
	}
	terms, _, _ := indexTerms(weightedText{shardValue, 1}, weightedText{"LIKES", 0.5})
	if docs, _ := termDocs(t, db, terms[0]); docs != 1 {
		t.Fatalf("term %q counted in %d documents, want 1", terms[0], docs)
	}
	if err := db.userTx(ctx, s, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE memories SET valid_to = valid_from WHERE tenant_id = $1 AND user_id = $2 AND id = 'mem_1'`, s.Tenant, s.User)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if docs, _ := termDocs(t, db, terms[0]); docs != 0 {
		t.Errorf("term %q counted in %d documents after the memory was closed, want 0", terms[0], docs)
	}
	var n, tokens int64
	if err := db.pool.QueryRow(ctx, `SELECT sum(docs), sum(tokens) FROM search_stats WHERE kind = 'memory'`).Scan(&n, &tokens); err != nil {
		t.Fatal(err)
	}
	if n != 0 || tokens != 0 {
		t.Errorf("search_stats counts %d documents and %d tokens after the memory was closed, want 0 and 0", n, tokens)
	}
}
