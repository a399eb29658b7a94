package bench

import (
	"context"
	"os"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

func TestZZBuildProfile(t *testing.T) {
	if os.Getenv("SCRATCH") == "" { t.Skip() }
	db := sqlitetest.OpenPath(t, t.TempDir()+"/b.db", sqlitetest.Options())
	cat, _ := catalog.Embedded()
	d := Deps{DB: db, Catalog: cat, Embedder: offline.NewEmbedder(256), Tenant: "default"}
	cfg := Config{Users: 500, Memories: 100, MeasuredUsers: 0}.withDefaults()
	cfg.MeasuredUsers = 0
	v := NewVocab(cat.All(), cat.Genres())
	f, _ := os.Create("/tmp/build.prof")
	pprof.StartCPUProfile(f)
	start := time.Now()
	sc, err := build(context.Background(), d, cfg, v)
	pprof.StopCPUProfile()
	if err != nil { t.Fatal(err) }
	t.Logf("%+v in %s", sc, time.Since(start))
}
