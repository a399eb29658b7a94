package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/engine"
	"github.com/memento-ai/memento/postgres"
	"github.com/memento-ai/memento/postgres/pgtest"
)

// openEngine opens an engine on dsn with the offline defaults and a few
// workers, closed when the test ends.
func openEngine(t *testing.T, dsn string) *engine.Engine {
	t.Helper()
	cfg := engine.DefaultConfig()
	cfg.DB = dsn
	cfg.Workers = 4
	e, err := engine.Open(context.Background(), cfg, nil)
	if err != nil {
		t.Fatalf("open %s: %v", dsn, err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	return e
}

// fill gives the engine's store users with threads, memories, events and
// a key, through the agent and the message log, and waits for every job.
func fill(t *testing.T, e *engine.Engine, tenants []string, users int) {
	t.Helper()
	ctx := context.Background()
	if err := e.StartWorkers(ctx); err != nil {
		t.Fatal(err)
	}
	ag, err := e.Agent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := e.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	heat, ok := cat.ResolveTitle("Heat")
	if !ok {
		t.Fatal("the catalog has no Heat")
	}
	lines := []string{
		"I love heist movies but I can't stand horror. Recommend 3 movies",
		"I watch everything on Netflix, mostly on weekends",
		"My favourite film is Heat. Something like it please",
	}
	for _, tenant := range tenants {
		for u := range users {
			user := fmt.Sprintf("u%02d", u)
			for i, line := range lines {
				if _, err := ag.Turn(ctx, tenant, agent.Request{User: user, Thread: fmt.Sprintf("t%d", i%2), Message: line}); err != nil {
					t.Fatalf("turn of %s/%s: %v", tenant, user, err)
				}
			}
			s := memento.Scope{Tenant: tenant, User: user}
			five := 5.0
			if _, err := e.Store.AddEvents(ctx, s, []memento.Event{{Type: memento.EventRated, TitleID: heat.ID, Value: &five}}, e.EventJobs(s)); err != nil {
				t.Fatalf("events of %s: %v", user, err)
			}
		}
	}
	k, _, hash, err := memento.NewAPIKey(tenants[0], "", memento.KeyAdmin, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Store.CreateKey(ctx, k, hash); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitForJobs(ctx, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
}

// testMigrate copies a filled SQLite store into the store dsn names and
// checks the report, the copied rows and keys, recall, and that a second
// run resumes from the checkpoint.
func testMigrate(t *testing.T, to string) *engine.Engine {
	ctx := context.Background()
	dir := t.TempDir()
	src := openEngine(t, filepath.Join(dir, "source.db"))
	fill(t, src, []string{"acme", "globex"}, 3)
	// A message stored with no jobs has no vector, as a store written by
	// another program (or `memento bench`) may hold.
	if _, err := src.Store.AppendMessages(ctx, memento.Scope{Tenant: "acme", User: "u00"}, "t9", []memento.Message{{ID: "bare", Role: memento.RoleAssistant, Text: "Heat is a heist film with Al Pacino"}}, nil); err != nil {
		t.Fatal(err)
	}
	dst := openEngine(t, to)

	checkpoint := filepath.Join(dir, "source.migrate.json")
	var progress []int
	rep, err := engine.Migrate(ctx, src, dst, engine.MigrateOptions{Checkpoint: checkpoint, RecallSample: 6, Parallel: 3, Progress: func(done, total int) {
		progress = append(progress, done)
		if total != 6 {
			t.Errorf("progress total %d, want 6 users", total)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Verified || len(rep.Mismatches) > 0 {
		t.Fatalf("migration not verified: %v\n%v", rep.Mismatches, rep.Recall.Differ)
	}
	if rep.Users != 6 || len(rep.Tenants) != 2 || rep.Keys != 1 || len(progress) != 6 {
		t.Errorf("report: %d users, tenants %v, %d keys, progress %v; want 6, 2 tenants, 1 key, 6 calls", rep.Users, rep.Tenants, rep.Keys, progress)
	}
	if rep.Source != rep.Target || rep.Source.Messages == 0 || rep.Source.Memories == 0 || rep.Source.Events < 6 {
		t.Errorf("counts: source %+v, target %+v", rep.Source, rep.Target)
	}
	if rep.Recall.Queries == 0 || rep.Recall.Identical != rep.Recall.Queries {
		t.Errorf("recall: %d of %d identical: %v", rep.Recall.Identical, rep.Recall.Queries, rep.Recall.Differ)
	}
	// A copied key works against the target, as the same principal.
	srcKeys, err := src.Store.Keys(ctx, "acme")
	if err != nil || len(srcKeys) != 1 {
		t.Fatalf("source keys %v, %v", srcKeys, err)
	}
	dstKeys, err := dst.Store.Keys(ctx, "acme")
	if err != nil || len(dstKeys) != 1 || dstKeys[0].ID != srcKeys[0].ID || dstKeys[0].Role != memento.KeyAdmin {
		t.Errorf("target keys %v, %v; want %v", dstKeys, err, srcKeys)
	}
	// Memories keep their provenance.
	mems, err := dst.Store.Memories(ctx, memento.Scope{Tenant: "globex", User: "u01"}, memento.MemoryFilter{})
	if err != nil || len(mems) == 0 {
		t.Fatalf("target memories %v, %v", mems, err)
	}
	for _, m := range mems {
		if len(m.Sources) == 0 {
			t.Errorf("memory %s lost its sources", m.ID)
		}
	}

	// The target has a vector for what the source has one for, and for
	// nothing else: the agent's replies, which the pipeline does not
	// embed, stay without, so recall ranks them alike.
	emb, err := dst.Embedder(ctx)
	if err != nil {
		t.Fatal(err)
	}
	unembedded := 0
	for _, user := range []string{"u00", "u01", "u02"} {
		s := memento.Scope{Tenant: "acme", User: user}
		srcMems, srcMsgs, err := src.Store.MissingVectors(ctx, s, emb.ID(), 1000)
		if err != nil {
			t.Fatal(err)
		}
		dstMems, dstMsgs, err := dst.Store.MissingVectors(ctx, s, emb.ID(), 1000)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(srcMems, dstMems); diff != "" {
			t.Errorf("%s: memories without a vector differ (-source +target):\n%s", user, diff)
		}
		if diff := cmp.Diff(srcMsgs, dstMsgs); diff != "" {
			t.Errorf("%s: messages without a vector differ (-source +target):\n%s", user, diff)
		}
		unembedded += len(srcMsgs)
	}
	if unembedded == 0 {
		t.Error("every message of the source has a vector: the test no longer shows that a row without one stays without")
	}

	// A second run resumes: every user is known to the checkpoint, and
	// nothing is stored twice.
	rep2, err := engine.Migrate(ctx, src, dst, engine.MigrateOptions{Checkpoint: checkpoint})
	if err != nil {
		t.Fatal(err)
	}
	if rep2.Resumed != 6 || rep2.Copied.Messages != 0 || rep2.Target != rep.Target || !rep2.Verified {
		t.Errorf("second run: resumed %d, copied %+v, target %+v (first %+v), verified %v", rep2.Resumed, rep2.Copied, rep2.Target, rep.Target, rep2.Verified)
	}
	// Without the checkpoint every user is copied again, and still
	// nothing twice: rows are skipped by id.
	rep3, err := engine.Migrate(ctx, src, dst, engine.MigrateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep3.Copied.Messages != 0 || rep3.Copied.Memories != 0 || rep3.Copied.Skipped == 0 || rep3.Target != rep.Target {
		t.Errorf("run without checkpoint: copied %+v, target %+v", rep3.Copied, rep3.Target)
	}
	// A checkpoint of another copy is refused.
	if err := os.WriteFile(checkpoint, []byte(`{"from":"x.db","to":"y.db","done":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := engine.Migrate(ctx, src, dst, engine.MigrateOptions{Checkpoint: checkpoint}); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("migrate with another copy's checkpoint = %v, want EINVALID", err)
	}
	return dst
}

func TestMigrateSQLiteToSQLite(t *testing.T) {
	testMigrate(t, filepath.Join(t.TempDir(), "target.db"))
}

// TestMigrateSQLiteToPostgres copies into a fresh schema of the database
// MEMENTO_TEST_POSTGRES names, and checks that the copy analysed the
// target's tables: the planner counts the messages copied, where a table
// never analysed counts -1 (on a server whose autovacuum is on, as it is
// not on CI's, autovacuum may have analysed it too).
func TestMigrateSQLiteToPostgres(t *testing.T) {
	dst := testMigrate(t, pgtest.SchemaURL(t))
	db, ok := dst.Store.(*postgres.DB)
	if !ok {
		t.Fatalf("the target's store is a %T, not a *postgres.DB", dst.Store)
	}
	var tuples float64
	if err := db.Pool().QueryRow(t.Context(), `SELECT reltuples FROM pg_class
		WHERE relnamespace = current_schema()::regnamespace AND relname = 'messages'`).Scan(&tuples); err != nil {
		t.Fatal(err)
	}
	if tuples <= 0 {
		t.Errorf("messages the target's planner counts after the copy = %v, want the copied rows", tuples)
	}
}

// TestMigrateRefusesABusySource checks that a source whose queue still
// holds jobs is refused, naming the way out.
func TestMigrateRefusesABusySource(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := openEngine(t, filepath.Join(dir, "source.db"))
	dst := openEngine(t, filepath.Join(dir, "target.db"))
	s := src.Scope("ann")
	// Appended without workers running: the jobs wait.
	if _, err := src.Store.AppendMessages(ctx, s, "t", []memento.Message{{Role: memento.RoleUser, Text: "I love westerns"}}, func(m memento.Message) []memento.JobRequest {
		return src.MessageJobs(s, "t", m)
	}); err != nil {
		t.Fatal(err)
	}
	_, err := engine.Migrate(ctx, src, dst, engine.MigrateOptions{})
	if memento.ErrorCode(err) != memento.EINVALID {
		t.Fatalf("migrate from a busy source = %v, want EINVALID", err)
	}
	if msg := memento.ErrorMessage(err); !strings.Contains(msg, "unfinished background jobs") || !strings.Contains(msg, "memento jobs stats") {
		t.Errorf("message %q does not say what to do", msg)
	}
}

// TestMigrateResumesAfterAStop stops a copy after its second user (as ^C
// would) and runs it again: the second run copies only the users the
// first did not finish, and the result is complete and verified.
func TestMigrateResumesAfterAStop(t *testing.T) {
	dir := t.TempDir()
	src := openEngine(t, filepath.Join(dir, "source.db"))
	fill(t, src, []string{"acme"}, 5)
	dst := openEngine(t, filepath.Join(dir, "target.db"))
	checkpoint := filepath.Join(dir, "copy.json")

	ctx, stop := context.WithCancel(context.Background())
	_, err := engine.Migrate(ctx, src, dst, engine.MigrateOptions{Checkpoint: checkpoint, Progress: func(done, total int) {
		if done == 2 {
			stop()
		}
	}})
	if err == nil {
		t.Fatal("a stopped copy reported success")
	}
	rep, err := engine.Migrate(context.Background(), src, dst, engine.MigrateOptions{Checkpoint: checkpoint, RecallSample: 5})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Resumed < 2 || rep.Resumed == 5 || !rep.Verified {
		t.Errorf("second run: %d users resumed of 5, verified %v (%v); want at least the 2 the first run finished, and the rest copied", rep.Resumed, rep.Verified, rep.Mismatches)
	}
	if rep.Target.Users != 5 || rep.Target != rep.Source {
		t.Errorf("after resuming the target holds %+v, the source %+v", rep.Target, rep.Source)
	}
}
