package prefs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/llm/offline"
)

// mapCache is a memento.VectorCache in memory that counts its calls, and
// fails every call while fail is set.
type mapCache struct {
	mu      sync.Mutex
	vectors map[string]map[memento.TextKey][]float32
	reads   int
	fail    error
}

func newMapCache() *mapCache {
	return &mapCache{vectors: map[string]map[memento.TextKey][]float32{}}
}

func (c *mapCache) CachedVectors(_ context.Context, embedder string, keys []memento.TextKey) ([][]float32, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	if c.fail != nil {
		return nil, c.fail
	}
	out := make([][]float32, len(keys))
	for i, k := range keys {
		if v, ok := c.vectors[embedder][k]; ok {
			out[i] = append([]float32(nil), v...)
		}
	}
	return out, nil
}

func (c *mapCache) CacheVectors(_ context.Context, embedder string, keys []memento.TextKey, vectors [][]float32) error {
	if err := memento.CheckCacheVectors(embedder, keys, vectors); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail != nil {
		return c.fail
	}
	if c.vectors[embedder] == nil {
		c.vectors[embedder] = map[memento.TextKey][]float32{}
	}
	for i, k := range keys {
		c.vectors[embedder][k] = append([]float32(nil), vectors[i]...)
	}
	return nil
}

func (c *mapCache) PruneVectors(_ context.Context, keep []memento.TextKey) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := map[memento.TextKey]bool{}
	for _, k := range keep {
		kept[k] = true
	}
	var n int64
	for _, vs := range c.vectors {
		for k := range vs {
			if !kept[k] {
				delete(vs, k)
				n++
			}
		}
	}
	return n, nil
}

// embedders returns the ids the cache holds vectors under, with how many.
func (c *mapCache) embedders() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for id, vs := range c.vectors {
		out[id] = len(vs)
	}
	return out
}

// countingEmbedder is the offline embedder counting the texts it embeds.
// With learns, it knows its dimension (and names it in its id) only
// after its first call, as the openai embedder without a configured one.
type countingEmbedder struct {
	inner  *offline.Embedder
	learns bool
	texts  atomic.Int64
	known  atomic.Bool
}

func (e *countingEmbedder) ID() string { return fmt.Sprintf("counting/%d", e.Dim()) }

func (e *countingEmbedder) Dim() int {
	if e.learns && !e.known.Load() {
		return 0
	}
	return e.inner.Dim()
}

func (e *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.texts.Add(int64(len(texts)))
	e.known.Store(true)
	return e.inner.Embed(ctx, texts)
}

// cacheCatalog is a catalog of n titles over several batches of the
// embedder, with texts of their own.
func cacheCatalog(n int) []memento.Title {
	genres := []string{"Crime", "Horror", "Comedy", "Drama", "Science Fiction"}
	words := []string{"heist", "vault", "ghost", "house", "farm", "sisters", "robot", "planet", "wedding", "detective"}
	out := make([]memento.Title, n)
	for i := range out {
		out[i] = memento.Title{
			ID:       fmt.Sprintf("t%d", i),
			Title:    fmt.Sprintf("Title %d", i),
			Genres:   []string{genres[i%len(genres)]},
			Overview: fmt.Sprintf("A story of a %s and a %s, number %d.", words[i%len(words)], words[(i/7)%len(words)], i),
		}
	}
	return out
}

// vectorsOf warms ts and returns its vectors of the whole catalog.
func vectorsOf(t *testing.T, ts *TitleSpace, catalog []memento.Title) [][]float32 {
	t.Helper()
	ctx := context.Background()
	if err := ts.Warm(ctx); err != nil {
		t.Fatalf("Warm: %v", err)
	}
	vs, err := ts.Vectors(ctx, catalog)
	if err != nil {
		t.Fatalf("Vectors: %v", err)
	}
	return vs
}

// TestTitleSpaceCache is a restart with the title vectors in a cache: the
// second space embeds no title and ranks with the same vectors as one
// that embedded them all; a title whose text changed is embedded again.
func TestTitleSpaceCache(t *testing.T) {
	catalog := cacheCatalog(3*embedBatch + 17)
	cache := newMapCache()

	plain := &countingEmbedder{inner: offline.NewEmbedder(64)}
	want := vectorsOf(t, NewTitleSpace(plain, catalog), catalog)

	first := &countingEmbedder{inner: offline.NewEmbedder(64)}
	a := NewTitleSpace(first, catalog)
	a.Cache = cache
	if got := vectorsOf(t, a, catalog); !cmp.Equal(got, want) {
		t.Errorf("vectors through an empty cache differ from those embedded without one")
	}
	if first.texts.Load() == 0 || cache.embedders()["counting/64"] != len(catalog) {
		t.Fatalf("first start: %d texts embedded, cache holds %v; want every title cached", first.texts.Load(), cache.embedders())
	}

	second := &countingEmbedder{inner: offline.NewEmbedder(64)}
	b := NewTitleSpace(second, catalog)
	b.Cache = cache
	got := vectorsOf(t, b, catalog)
	if n := second.texts.Load(); n != 0 {
		t.Errorf("restart embedded %d texts, want 0: every title is cached", n)
	}
	if fromCache, embedded := b.Counts(); fromCache < int64(len(catalog)) || embedded != 0 {
		t.Errorf("Counts after the restart = %d from the cache, %d embedded; want at least %d and 0", fromCache, embedded, len(catalog))
	}
	if !cmp.Equal(got, want) {
		t.Errorf("vectors read from the cache differ from those embedded")
	}

	// A title whose text changed is a new key: it alone is embedded.
	changed := append([]memento.Title(nil), catalog...)
	changed[5].Overview = "A different story altogether."
	third := &countingEmbedder{inner: offline.NewEmbedder(64)}
	c := NewTitleSpace(third, changed)
	c.Cache = cache
	vectorsOf(t, c, changed)
	if n := third.texts.Load(); n != 1 {
		t.Errorf("after one title's text changed, %d texts embedded; want 1", n)
	}

	// Another embedder (here another dimension) does not read these.
	other := &countingEmbedder{inner: offline.NewEmbedder(32)}
	d := NewTitleSpace(other, catalog)
	d.Cache = cache
	vectorsOf(t, d, catalog)
	if other.texts.Load() < int64(len(catalog)) {
		t.Errorf("an embedder of another id embedded %d texts, want every title", other.texts.Load())
	}
}

// TestTitleSpaceCacheLearnsDimension checks an embedder that names its
// dimension only after its first answer: the vectors are cached under the
// id with the dimension, and a restart embeds the one text that tells it.
func TestTitleSpaceCacheLearnsDimension(t *testing.T) {
	catalog := cacheCatalog(2*embedBatch + 3)
	cache := newMapCache()
	first := &countingEmbedder{inner: offline.NewEmbedder(64), learns: true}
	a := NewTitleSpace(first, catalog)
	a.Cache = cache
	vectorsOf(t, a, catalog)
	if got := cache.embedders(); !cmp.Equal(got, map[string]int{"counting/64": len(catalog)}) {
		t.Errorf("cache holds %v, want every title under counting/64", got)
	}
	second := &countingEmbedder{inner: offline.NewEmbedder(64), learns: true}
	b := NewTitleSpace(second, catalog)
	b.Cache = cache
	vectorsOf(t, b, catalog)
	if n := second.texts.Load(); n != 1 {
		t.Errorf("restart embedded %d texts, want 1 (to learn the dimension)", n)
	}
}

// TestTitleSpaceCacheFails checks that a cache that fails costs time, not
// answers: every title is embedded, the vectors are right, and the
// failure is logged once.
func TestTitleSpaceCacheFails(t *testing.T) {
	catalog := cacheCatalog(2*embedBatch + 3)
	want := vectorsOf(t, NewTitleSpace(offline.NewEmbedder(64), catalog), catalog)
	cache := newMapCache()
	cache.fail = errors.New("disk full")
	var log bytes.Buffer
	emb := &countingEmbedder{inner: offline.NewEmbedder(64)}
	ts := NewTitleSpace(emb, catalog)
	ts.Cache, ts.Logger = cache, slog.New(slog.NewTextHandler(&log, nil))
	if got := vectorsOf(t, ts, catalog); !cmp.Equal(got, want) {
		t.Errorf("vectors with a failing cache differ from those embedded without one")
	}
	if emb.texts.Load() < int64(len(catalog)) {
		t.Errorf("%d texts embedded, want every title", emb.texts.Load())
	}
	if n := strings.Count(log.String(), "cache failed"); n != 1 || !strings.Contains(log.String(), "disk full") {
		t.Errorf("log has %d failures, want the first one with its cause:\n%s", n, log.String())
	}
	if cache.reads < 2 {
		t.Errorf("the cache was read %d times; want it tried for every batch", cache.reads)
	}
}

// TestTitleSpaceCacheConcurrent warms two spaces on one cache at once,
// as two servers starting on one store, while each ranks titles.
func TestTitleSpaceCacheConcurrent(t *testing.T) {
	catalog := cacheCatalog(2*embedBatch + 3)
	want := vectorsOf(t, NewTitleSpace(offline.NewEmbedder(64), catalog), catalog)
	cache := newMapCache()
	spaces := []*TitleSpace{
		NewTitleSpace(offline.NewEmbedder(64), catalog),
		NewTitleSpace(offline.NewEmbedder(64), catalog),
	}
	var wg sync.WaitGroup
	errs := make([]error, 2*len(spaces))
	for i, ts := range spaces {
		ts.Cache = cache
		wg.Go(func() { errs[2*i] = ts.Warm(context.Background()) })
		wg.Go(func() { _, errs[2*i+1] = ts.Vectors(context.Background(), catalog[:40]) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for i, ts := range spaces {
		got, err := ts.Vectors(context.Background(), catalog)
		if err != nil || !cmp.Equal(got, want) {
			t.Errorf("space %d: vectors differ from those embedded without a cache (%v)", i, err)
		}
	}
}
