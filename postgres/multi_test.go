package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/postgres"
	"github.com/memento-ai/memento/recall"
)

// openPair opens two stores on one schema, as two `memento serve`
// processes on one database are.
func openPair(t *testing.T) (*postgres.DB, *postgres.DB) {
	t.Helper()
	a, schema := openSchema(t, postgres.Options{})
	b, err := postgres.Open(context.Background(), testURL(t), postgres.Options{Schema: schema, MaxConns: 8,
		PollInterval: 50 * time.Millisecond, RetryDelay: func(int) time.Duration { return 10 * time.Millisecond }})
	if err != nil {
		t.Fatalf("open the second store: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return a, b
}

// TestJobsRunOnceAcrossProcesses enqueues jobs through two stores on one
// database, runs a queue on each, and checks that every job ran exactly
// once, none is left unfinished, and both queues took part.
func TestJobsRunOnceAcrossProcesses(t *testing.T) {
	a, b := openPair(t)
	const n = 300
	var mu sync.Mutex
	runs := map[string]int{}
	by := map[string]int{}
	for name, db := range map[string]*postgres.DB{"a": a, "b": b} {
		db.Handle("remember", func(ctx context.Context, kind string, payload json.RawMessage) error {
			var p memento.MessageJob
			if err := json.Unmarshal(payload, &p); err != nil {
				return err
			}
			time.Sleep(time.Millisecond) // a little work, so both queues get some
			mu.Lock()
			runs[p.Message]++
			by[name]++
			mu.Unlock()
			return nil
		}, memento.JobOptions{})
	}
	ctx := t.Context()
	for i := range n {
		db := a
		if i%2 == 1 {
			db = b
		}
		s := memento.Scope{User: fmt.Sprintf("u%d", i%7)}
		if _, err := db.AppendMessages(ctx, s, "t1", []memento.Message{{ID: fmt.Sprintf("m%03d", i), Role: memento.RoleUser, Text: "hello"}},
			func(m memento.Message) []memento.JobRequest {
				return []memento.JobRequest{{Kind: "remember", Payload: memento.MessageJob{User: s.User, Thread: m.Thread, Message: m.ID, Seq: m.Seq}}}
			}); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	for _, db := range []*postgres.DB{a, b} {
		if err := db.Start(context.Background()); err != nil {
			t.Fatalf("Start: %v", err)
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		left, err := a.Unfinished(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs still unfinished after 60s", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(runs) != n {
		t.Errorf("%d messages' jobs ran, want %d", len(runs), n)
	}
	for id, k := range runs {
		if k != 1 {
			t.Errorf("the job of %s ran %d times, want once", id, k)
		}
	}
	if by["a"] == 0 || by["b"] == 0 {
		t.Errorf("jobs run by process: %v; want both to take part", by)
	}
	t.Logf("jobs run by process: %v", by)
	jobs, err := b.Jobs(ctx, memento.JobFilter{Kind: "remember", State: memento.JobCompleted})
	if err != nil || len(jobs) != n {
		t.Errorf("%d completed jobs (%v), want %d", len(jobs), err, n)
	}
}

// TestTurnsOnOneThreadAcrossProcesses saves 32 turns on one thread at
// once through two stores: every message is stored once, numbered without
// gap, each turn's two messages together and in order.
func TestTurnsOnOneThreadAcrossProcesses(t *testing.T) {
	a, b := openPair(t)
	const n = 32
	s := memento.Scope{User: "ann"}
	var wg sync.WaitGroup
	for i := range n {
		db := a
		if i%2 == 1 {
			db = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := db.SaveTurn(context.Background(), memento.Turn{Scope: s, Thread: "t1",
				Messages: []memento.Message{
					{ID: fmt.Sprintf("u%02d", i), Role: memento.RoleUser, Text: fmt.Sprintf("q%02d", i)},
					{ID: fmt.Sprintf("a%02d", i), Role: memento.RoleAssistant, Text: fmt.Sprintf("r%02d", i)},
				},
				State: memento.ThreadState{Context: memento.NewActiveContext()}})
			if err != nil {
				t.Errorf("turn %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	msgs, err := a.Messages(t.Context(), s, "t1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2*n {
		t.Fatalf("%d messages, want %d", len(msgs), 2*n)
	}
	for i, m := range msgs {
		if m.Seq != int64(i+1) {
			t.Errorf("message %d has seq %d", i, m.Seq)
		}
		if i%2 == 1 && (msgs[i-1].Role != memento.RoleUser || m.Role != memento.RoleAssistant || msgs[i-1].ID[1:] != m.ID[1:]) {
			t.Errorf("messages %d, %d = %s, %s: not one turn in order", i-1, i, msgs[i-1].ID, m.ID)
		}
	}
}

// TestRecallSeesOtherProcessWrites writes through one store and reads
// the change log through the other: the write is there at once.
func TestRecallSeesOtherProcessWrites(t *testing.T) {
	a, b := openPair(t)
	ctx := t.Context()
	s := memento.Scope{User: "ann"}
	first, err := b.RecallDocs(ctx, s, -1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		res, err := a.AppendMessages(ctx, s, "t1", []memento.Message{{Role: memento.RoleUser, Text: fmt.Sprintf("I love heist film number %d", i)}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		m := res.Messages[0]
		if _, err := a.WriteMemories(ctx, s, memento.MemoryWrite{Message: m, Insert: []memento.Memory{{ID: fmt.Sprintf("ep%d", i), Mode: memento.ModeEpisodic,
			Attribute: "LIKES", Value: fmt.Sprintf("heist film %d", i), ValidFrom: m.At}}, Run: memento.MemoryRun{Message: m.ID, Outcome: memento.RunStored}}); err != nil {
			t.Fatal(err)
		}
		got, err := b.RecallDocs(ctx, s, first.Through)
		if err != nil {
			t.Fatal(err)
		}
		ids := map[string]bool{}
		for _, d := range got.Docs {
			ids[d.Candidate.ID] = true
		}
		if !ids[m.ID] || !ids[fmt.Sprintf("ep%d", i)] {
			t.Fatalf("write %d through one process is not in the other's change read: %v", i, ids)
		}
		first = got
		cands, err := b.MemoryCandidates(ctx, s, memento.CandidateQuery{Query: fmt.Sprintf("heist %d", i), Keyword: 5})
		if err != nil || len(cands) == 0 {
			t.Fatalf("keyword candidates on the other process = %v, %v", cands, err)
		}
	}
}

// TestWarmIndexSeesOtherProcessWrites keeps recall's warm index over one
// store and writes through the other: each memory written on the second
// process is a keyword candidate of the first's index at the next recall,
// with no wait (the index reads the change log before every recall).
func TestWarmIndexSeesOtherProcessWrites(t *testing.T) {
	a, b := openPair(t)
	ctx := t.Context()
	s := memento.Scope{User: "ann"}
	index := recall.NewIndex(b, 64<<20)
	for i := range 10 {
		res, err := a.AppendMessages(ctx, s, "t1", []memento.Message{{Role: memento.RoleUser, Text: fmt.Sprintf("I loved film%d", i)}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		m := res.Messages[0]
		id := fmt.Sprintf("ep%d", i)
		if _, err := a.WriteMemories(ctx, s, memento.MemoryWrite{Message: m, Insert: []memento.Memory{{ID: id, Mode: memento.ModeEpisodic,
			Attribute: "LIKES", Value: fmt.Sprintf("loved film%d", i), ValidFrom: m.At}}, Run: memento.MemoryRun{Message: m.ID, Outcome: memento.RunStored}}); err != nil {
			t.Fatal(err)
		}
		got, err := index.MemoryCandidates(ctx, s, memento.CandidateQuery{Query: fmt.Sprintf("film%d", i), Keyword: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || got[0].ID != id {
			t.Fatalf("the other process's index ranks %+v for film%d, want %s first", got, i, id)
		}
	}
}

// TestOpenMigratesOnce opens several stores on one fresh schema at once,
// as servers starting together do, then once more: the migrations run
// once (the advisory lock makes the others wait), and every store works.
func TestOpenMigratesOnce(t *testing.T) {
	first, schema := openSchema(t, postgres.Options{})
	first.Close()
	url := testURL(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := postgres.Open(context.Background(), url, postgres.Options{Schema: schema + "_b", MaxConns: 2})
			if err != nil {
				errs <- err
				return
			}
			defer db.Close()
			if _, err := db.EnsureUser(context.Background(), memento.Scope{User: "ann"}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("open at once: %v", err)
	}
	t.Cleanup(func() {
		if db, err := postgres.Open(context.Background(), url, postgres.Options{Schema: schema + "_b"}); err == nil {
			db.Pool().Exec(context.Background(), `DROP SCHEMA `+schema+`_b CASCADE`) //nolint:errcheck
			db.Close()
		}
	})
	again, err := postgres.Open(context.Background(), url, postgres.Options{Schema: schema + "_b", MaxConns: 2})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer again.Close()
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("the migration files: %v, %v", files, err)
	}
	var n int
	if err := again.Pool().QueryRow(context.Background(), `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != len(files) {
		t.Errorf("schema_migrations holds %d rows (%v), want %d: each migration once", n, err, len(files))
	}
}

// TestQueueRescuesJobsOfDeadProcess leaves a job running under a queue
// process that no longer exists (as a server killed mid-job leaves it),
// and checks that a queue starting on the database runs it again at once,
// with the death recorded among its errors, instead of after River's
// rescue delay.
func TestQueueRescuesJobsOfDeadProcess(t *testing.T) {
	db, _ := openSchema(t, postgres.Options{QueueLease: time.Second})
	ctx := t.Context()
	s := memento.Scope{User: "ann"}
	if _, err := db.AppendMessages(ctx, s, "t1", []memento.Message{{ID: "m1", Role: memento.RoleUser, Text: "hello"}},
		func(m memento.Message) []memento.JobRequest {
			return []memento.JobRequest{{Kind: "remember", Payload: memento.MessageJob{User: s.User, Message: m.ID}}}
		}); err != nil {
		t.Fatal(err)
	}
	// What a process that died while running the job leaves behind.
	if _, err := db.Pool().Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now(),
		attempted_by = ARRAY['memento-1-dead'] WHERE kind = 'remember'`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool().Exec(ctx, `INSERT INTO queue_processes (id, pid, host, heartbeat_at, lease_ms)
		VALUES ('memento-1-dead', 1, 'gone', now() - interval '1 hour', 1000)`); err != nil {
		t.Fatal(err)
	}
	ran := make(chan string, 2)
	db.Handle("remember", func(ctx context.Context, kind string, payload json.RawMessage) error {
		ran <- string(payload)
		return nil
	}, memento.JobOptions{})
	start := time.Now()
	if err := db.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ran:
	case <-time.After(20 * time.Second):
		t.Fatal("the dead process's job was not run again")
	}
	t.Logf("rescued and run in %v", time.Since(start))
	var job memento.Job
	deadline := time.Now().Add(10 * time.Second)
	for {
		jobs, err := db.Jobs(ctx, memento.JobFilter{Kind: "remember"})
		if err != nil || len(jobs) != 1 {
			t.Fatalf("jobs = %+v, %v", jobs, err)
		}
		if job = jobs[0]; job.State == memento.JobCompleted || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if job.State != memento.JobCompleted || len(job.Errors) != 1 || !strings.Contains(job.Errors[0], "memento-1-dead died") {
		t.Errorf("rescued job = %+v; want completed, with the death of its process among its errors", job)
	}
	var procs int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM queue_processes WHERE id = 'memento-1-dead'`).Scan(&procs); err != nil || procs != 0 {
		t.Errorf("the dead process is still registered (%d, %v)", procs, err)
	}
}

// TestQueueLeavesLiveProcessJobs runs a job for longer than several
// leases on one process while another process's queue renews its own
// lease (and rescues) all along: the job is not taken from the live
// process, and runs once.
func TestQueueLeavesLiveProcessJobs(t *testing.T) {
	a, schema := openSchema(t, postgres.Options{QueueLease: 300 * time.Millisecond})
	b, err := postgres.Open(context.Background(), testURL(t), postgres.Options{Schema: schema, MaxConns: 4, QueueLease: 300 * time.Millisecond,
		PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var mu sync.Mutex
	runs := 0
	slow := func(ctx context.Context, kind string, payload json.RawMessage) error {
		mu.Lock()
		runs++
		mu.Unlock()
		select {
		case <-time.After(1500 * time.Millisecond):
		case <-ctx.Done():
		}
		return nil
	}
	a.Handle("slow", slow, memento.JobOptions{Timeout: time.Minute})
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := memento.Scope{User: "ann"}
	if _, err := a.AppendMessages(t.Context(), s, "t1", []memento.Message{{Role: memento.RoleUser, Text: "hello"}},
		func(memento.Message) []memento.JobRequest { return []memento.JobRequest{{Kind: "slow", Payload: "x"}} }); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // a takes the job
	b.Handle("slow", slow, memento.JobOptions{Timeout: time.Minute})
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if n, err := a.Unfinished(t.Context()); err != nil {
			t.Fatal(err)
		} else if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slow job did not finish")
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if runs != 1 {
		t.Errorf("the job ran %d times, want once (a live process's job was rescued)", runs)
	}
}

// TestConcurrentUsersShareTheIndex has many users write texts with the
// same words at once through two stores, so their transactions contend
// for the keyword index's shared counters: every write lands (a deadlock
// between them is retried), and the counters agree with the index.
func TestConcurrentUsersShareTheIndex(t *testing.T) {
	a, b := openPair(t)
	words := []string{"heist", "noir", "western", "space", "comedy", "drama", "war", "crime"}
	var wg sync.WaitGroup
	for u := range 8 {
		db := a
		if u%2 == 1 {
			db = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := memento.Scope{User: fmt.Sprintf("u%d", u)}
			for i := range 25 {
				// Words in another order for each user, several messages a call.
				var msgs []memento.Message
				for k := range 3 {
					text := ""
					for j := range 4 {
						text += words[(u*3+i+k*5+j*7)%len(words)] + " "
					}
					msgs = append(msgs, memento.Message{Role: memento.RoleUser, Text: text})
				}
				if _, err := db.AppendMessages(context.Background(), s, "t1", msgs, nil); err != nil {
					t.Errorf("user %d append %d: %v", u, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	checkCounters := func(want int64) {
		t.Helper()
		var bad int
		if err := a.Pool().QueryRow(t.Context(), `SELECT count(*) FROM (
				SELECT term, count(*) AS n FROM message_terms GROUP BY term) AS real
			FULL JOIN (SELECT term, sum(docs) AS n FROM term_stats WHERE kind = 'message' GROUP BY term) AS counted USING (term)
			WHERE coalesce(real.n, 0) <> coalesce(counted.n, 0)`).Scan(&bad); err != nil || bad != 0 {
			t.Errorf("%d terms whose counter disagrees with the index (%v)", bad, err)
		}
		var docs, rows int64
		if err := a.Pool().QueryRow(t.Context(), `SELECT (SELECT sum(docs) FROM search_stats WHERE kind = 'message'), (SELECT count(*) FROM message_search)`).Scan(&docs, &rows); err != nil || docs != rows || rows != want {
			t.Errorf("search_stats counts %d documents, the index holds %d, want %d (%v)", docs, rows, want, err)
		}
	}
	checkCounters(8 * 25 * 3)
	// Forgetting users takes their documents out of the counters too.
	for u := range 3 {
		if err := b.DeleteUser(t.Context(), memento.Scope{User: fmt.Sprintf("u%d", u)}); err != nil {
			t.Fatal(err)
		}
	}
	checkCounters(5 * 25 * 3)
}
