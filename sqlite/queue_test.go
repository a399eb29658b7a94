package sqlite_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
	"github.com/memento-ai/memento/storetest"
)

// startQueue starts db's queue and stops it when the test ends.
func startQueue(t *testing.T, db *sqlite.DB) {
	t.Helper()
	if err := db.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := db.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
}

// enqueue stores one message in a fresh thread with one job of kind.
func enqueue(t *testing.T, db *sqlite.DB, s memento.Scope, kind string) memento.Message {
	t.Helper()
	res, err := db.AppendMessages(context.Background(), s, "t-"+kind, []memento.Message{{Role: memento.RoleUser, Text: "hi"}}, messageJobs(kind, s))
	if err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	return res.Messages[0]
}

// onlyJob returns the only job of kind, failing the test if there is not
// exactly one.
func onlyJob(t *testing.T, db *sqlite.DB, kind string) memento.Job {
	t.Helper()
	jobs, err := db.Jobs(context.Background(), memento.JobFilter{Kind: kind})
	if err != nil {
		t.Fatalf("Jobs: %v", err)
	}
	if len(jobs) != 1 {
		t.Fatalf("jobs of kind %s = %+v, want one", kind, jobs)
	}
	return jobs[0]
}

func TestQueueRunsJobs(t *testing.T) {
	t.Parallel()
	db := sqlitetest.Open(t)
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	got := make(chan memento.MessageJob, 1)
	db.Handle("extract", func(ctx context.Context, kind string, payload json.RawMessage) error {
		if kind != "extract" {
			t.Errorf("handler got kind %q", kind)
		}
		var p memento.MessageJob
		if err := json.Unmarshal(payload, &p); err != nil {
			return err
		}
		got <- p
		return nil
	}, memento.JobOptions{})

	// Enqueued before Start: the job waits in the table.
	m := enqueue(t, db, s, "extract")
	if j := onlyJob(t, db, "extract"); j.State != memento.JobPending || j.Attempt != 0 || j.MaxAttempts != sqlite.DefaultMaxAttempts {
		t.Errorf("job before Start = %+v, want pending, attempt 0 of %d", j, sqlite.DefaultMaxAttempts)
	}
	if n, _ := db.Unfinished(context.Background()); n != 1 {
		t.Errorf("Unfinished before Start = %d, want 1", n)
	}

	startQueue(t, db)
	select {
	case p := <-got:
		want := memento.MessageJob{Tenant: s.Tenant, User: s.User, Thread: m.Thread, Message: m.ID, Seq: 1}
		if p != want {
			t.Errorf("payload = %+v, want %+v", p, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the job did not run")
	}
	sqlitetest.WaitForJobs(t, db, 5*time.Second)
	j := onlyJob(t, db, "extract")
	if j.State != memento.JobCompleted || j.Attempt != 1 || j.FinalizedAt == nil || len(j.Errors) != 0 {
		t.Errorf("job after run = %+v, want completed at the first attempt", j)
	}
}

// TestQueueRecordsACompletionAtOnce: see storetest.CompletionAtOnce.
func TestQueueRecordsACompletionAtOnce(t *testing.T) {
	t.Parallel()
	storetest.CompletionAtOnce(t, sqlitetest.OpenWith(t, sqlite.Options{Workers: 1}))
}

func TestQueueRetriesThenSucceeds(t *testing.T) {
	t.Parallel()
	db := sqlitetest.Open(t)
	var calls atomic.Int32
	db.Handle("flaky", func(ctx context.Context, kind string, payload json.RawMessage) error {
		if calls.Add(1) < 3 {
			return errors.New("model server busy")
		}
		return nil
	}, memento.JobOptions{})
	enqueue(t, db, memento.Scope{User: "ann"}, "flaky")
	startQueue(t, db)
	sqlitetest.WaitForJobs(t, db, 5*time.Second)

	j := onlyJob(t, db, "flaky")
	if j.State != memento.JobCompleted || j.Attempt != 3 {
		t.Errorf("job = %+v, want completed at attempt 3", j)
	}
	if len(j.Errors) != 2 || j.Errors[0] != "model server busy" {
		t.Errorf("errors = %q, want the two failures", j.Errors)
	}
}

func TestQueueFailsAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	db := sqlitetest.Open(t)
	var calls atomic.Int32
	db.Handle("doomed", func(ctx context.Context, kind string, payload json.RawMessage) error {
		return errors.New("bad payload " + string(rune('0'+calls.Add(1))))
	}, memento.JobOptions{MaxAttempts: 3})
	enqueue(t, db, memento.Scope{User: "ann"}, "doomed")
	startQueue(t, db)
	sqlitetest.WaitForJobs(t, db, 5*time.Second)

	if got := calls.Load(); got != 3 {
		t.Errorf("handler ran %d times, want 3", got)
	}
	failed, err := db.Jobs(context.Background(), memento.JobFilter{State: memento.JobFailed})
	if err != nil {
		t.Fatalf("Jobs: %v", err)
	}
	if len(failed) != 1 {
		t.Fatalf("failed jobs = %+v, want one", failed)
	}
	j := failed[0]
	if j.Kind != "doomed" || j.Attempt != 3 || j.MaxAttempts != 3 || j.FinalizedAt == nil {
		t.Errorf("failed job = %+v, want doomed after 3 of 3 attempts", j)
	}
	if want := []string{"bad payload 1", "bad payload 2", "bad payload 3"}; strings.Join(j.Errors, "|") != strings.Join(want, "|") {
		t.Errorf("errors = %q, want %q", j.Errors, want)
	}
	completed, _ := db.Jobs(context.Background(), memento.JobFilter{State: memento.JobCompleted})
	if len(completed) != 0 {
		t.Errorf("completed jobs = %+v, want none", completed)
	}
}

func TestQueueJobTimeoutCancelsContext(t *testing.T) {
	t.Parallel()
	db := sqlitetest.Open(t)
	db.Handle("slow", func(ctx context.Context, kind string, payload json.RawMessage) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Second):
			return errors.New("the context was not cancelled")
		}
	}, memento.JobOptions{Timeout: 50 * time.Millisecond, MaxAttempts: 1})
	enqueue(t, db, memento.Scope{User: "ann"}, "slow")
	start := time.Now()
	startQueue(t, db)
	sqlitetest.WaitForJobs(t, db, 5*time.Second)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("a job with a 50ms timeout took %s to fail", took)
	}
	j := onlyJob(t, db, "slow")
	if j.State != memento.JobFailed || len(j.Errors) != 1 || !strings.Contains(j.Errors[0], "deadline exceeded") {
		t.Errorf("job = %+v, want failed with a deadline error", j)
	}
}

func TestQueueLeavesUnhandledKinds(t *testing.T) {
	t.Parallel()
	db := sqlitetest.Open(t)
	db.Handle("known", func(context.Context, string, json.RawMessage) error { return nil }, memento.JobOptions{})
	s := memento.Scope{User: "ann"}
	enqueue(t, db, s, "known")
	enqueue(t, db, s, "other")
	startQueue(t, db)
	deadline := time.Now().Add(5 * time.Second)
	for onlyJob(t, db, "known").State != memento.JobCompleted {
		if time.Now().After(deadline) {
			t.Fatal("the known job did not complete")
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // a few polls
	if j := onlyJob(t, db, "other"); j.State != memento.JobPending || j.Attempt != 0 {
		t.Errorf("unhandled job = %+v, want pending and never attempted", j)
	}
	if n, _ := db.Unfinished(context.Background()); n != 1 {
		t.Errorf("Unfinished = %d, want 1", n)
	}
}

func TestQueueStartStop(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	wantCode(t, db.Start(ctx), memento.EINVALID) // nothing to handle
	db.Handle("ping", func(context.Context, string, json.RawMessage) error { return nil }, memento.JobOptions{})
	if err := db.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	wantCode(t, db.Start(ctx), memento.ECONFLICT)
	if err := db.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := db.Stop(ctx); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	// Started again, it still works jobs.
	startQueue(t, db)
	enqueue(t, db, memento.Scope{User: "ann"}, "ping")
	sqlitetest.WaitForJobs(t, db, 5*time.Second)
}

func TestQueueStopWaitsForRunningJobs(t *testing.T) {
	t.Parallel()
	db := sqlitetest.Open(t)
	started := make(chan struct{})
	var finished atomic.Bool
	db.Handle("busy", func(ctx context.Context, kind string, payload json.RawMessage) error {
		close(started)
		time.Sleep(100 * time.Millisecond)
		finished.Store(true)
		return nil
	}, memento.JobOptions{})
	enqueue(t, db, memento.Scope{User: "ann"}, "busy")
	if err := db.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	<-started
	if err := db.Stop(context.Background()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if !finished.Load() {
		t.Error("Stop returned before the running job finished")
	}
	if j := onlyJob(t, db, "busy"); j.State != memento.JobCompleted {
		t.Errorf("job = %+v, want completed", j)
	}
}

func TestJobsFilter(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{User: "ann"}
	enqueue(t, db, s, "a")
	enqueue(t, db, s, "b")
	enqueue(t, db, s, "b")

	all, err := db.Jobs(ctx, memento.JobFilter{})
	if err != nil {
		t.Fatalf("Jobs: %v", err)
	}
	if len(all) != 3 || all[0].ID < all[1].ID || all[1].ID < all[2].ID {
		t.Errorf("Jobs = %+v, want 3, newest first", all)
	}
	for _, j := range all {
		if j.CreatedAt.IsZero() || time.Since(j.CreatedAt) > time.Minute {
			t.Errorf("job %d created at %v", j.ID, j.CreatedAt)
		}
	}
	tests := []struct {
		f    memento.JobFilter
		want int
	}{
		{memento.JobFilter{Kind: "b"}, 2},
		{memento.JobFilter{Kind: "b", Limit: 1}, 1},
		{memento.JobFilter{State: memento.JobPending}, 3},
		{memento.JobFilter{State: memento.JobPending, Kind: "a"}, 1},
		{memento.JobFilter{State: memento.JobFailed}, 0},
		{memento.JobFilter{Kind: "zzz"}, 0},
	}
	for _, tt := range tests {
		jobs, err := db.Jobs(ctx, tt.f)
		if err != nil {
			t.Fatalf("Jobs(%+v): %v", tt.f, err)
		}
		if len(jobs) != tt.want {
			t.Errorf("Jobs(%+v) = %d jobs, want %d", tt.f, len(jobs), tt.want)
		}
	}
	_, err = db.Jobs(ctx, memento.JobFilter{State: "stuck"})
	wantCode(t, err, memento.EINVALID)
}

func TestJobRequestMaxAttempts(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	db.Handle("kind-default", func(context.Context, string, json.RawMessage) error { return nil }, memento.JobOptions{MaxAttempts: 7})
	s := memento.Scope{User: "ann"}
	_, err := db.AppendMessages(ctx, s, "t", []memento.Message{{Role: memento.RoleUser, Text: "x"}}, func(memento.Message) []memento.JobRequest {
		return []memento.JobRequest{
			{Kind: "own", Payload: 1, MaxAttempts: 2},
			{Kind: "kind-default", Payload: 2},
			{Kind: "store-default", Payload: 3},
		}
	})
	if err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	for kind, want := range map[string]int{"own": 2, "kind-default": 7, "store-default": sqlite.DefaultMaxAttempts} {
		if got := onlyJob(t, db, kind).MaxAttempts; got != want {
			t.Errorf("%s: max attempts = %d, want %d", kind, got, want)
		}
	}
}

func TestDeleteUserCascades(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	ann := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	bob := memento.Scope{Tenant: memento.DefaultTenant, User: "bob"}
	for _, s := range []memento.Scope{ann, bob} {
		if _, err := db.AppendMessages(ctx, s, "t1", []memento.Message{{Role: memento.RoleUser, Text: "I like noir"}}, messageJobs("extract", s)); err != nil {
			t.Fatalf("AppendMessages: %v", err)
		}
		if _, err := db.AppendSummary(ctx, s, memento.Summary{Thread: "t1", Text: "likes noir", FromSeq: 1, ToSeq: 1}); err != nil {
			t.Fatalf("AppendSummary: %v", err)
		}
		if _, err := db.AddEvents(ctx, s, []memento.Event{{Type: memento.EventLiked, TitleID: "ml:1"}}, func(memento.Event) []memento.JobRequest {
			return []memento.JobRequest{{Kind: "learn", Payload: memento.MessageJob{Tenant: s.Tenant, User: s.User}}}
		}); err != nil {
			t.Fatalf("AddEvents: %v", err)
		}
	}
	if got := countJobs(t, db); got != 4 {
		t.Fatalf("jobs before delete = %d, want 4", got)
	}

	if err := db.DeleteUser(ctx, ann); err != nil {
		t.Fatalf("DeleteUser: %v", err)
	}

	if _, err := db.Messages(ctx, ann, "t1", 0, 0); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("Messages of a deleted user: %v, want ENOTFOUND", err)
	}
	if th, _ := db.Threads(ctx, ann); len(th) != 0 {
		t.Errorf("threads of a deleted user = %+v", th)
	}
	if ev, _ := db.Events(ctx, ann); len(ev) != 0 {
		t.Errorf("events of a deleted user = %+v", ev)
	}
	if sums, _ := db.Summaries(ctx, ann, "t1"); len(sums) != 0 {
		t.Errorf("summaries of a deleted user = %+v", sums)
	}
	if st, _ := db.ThreadState(ctx, ann, "t1"); st.LastSeq != 0 {
		t.Errorf("thread state of a deleted user = %+v", st)
	}
	jobs, err := db.Jobs(ctx, memento.JobFilter{})
	if err != nil {
		t.Fatalf("Jobs: %v", err)
	}
	if len(jobs) != 2 {
		t.Errorf("jobs after delete = %d, want bob's 2", len(jobs))
	}
	for _, j := range jobs {
		var p memento.MessageJob
		if err := json.Unmarshal(j.Payload, &p); err != nil || p.User != "bob" {
			t.Errorf("job %d left with payload %s", j.ID, j.Payload)
		}
	}

	// Bob keeps everything.
	if msgs, err := db.Messages(ctx, bob, "t1", 0, 0); err != nil || len(msgs) != 1 {
		t.Errorf("bob's messages = %+v, %v", msgs, err)
	}
	if ev, _ := db.Events(ctx, bob); len(ev) != 1 {
		t.Errorf("bob's events = %+v", ev)
	}

	wantCode(t, db.DeleteUser(ctx, ann), memento.ENOTFOUND)
	// The user can start over.
	appendTexts(t, db, ann, "t1", "hello again")
}

func TestQueueListsRetryingJobs(t *testing.T) {
	// River keeps a job due for a retry soon (before its scheduler's next
	// run, 5s) "available" and one due later "retryable"; both are
	// retrying to memento.
	for _, delay := range []time.Duration{3 * time.Second, time.Hour} {
		t.Run(delay.String(), func(t *testing.T) {
			t.Parallel()
			opts := sqlitetest.Options()
			opts.RetryDelay = func(int) time.Duration { return delay }
			db := sqlitetest.OpenWith(t, opts)
			failed := make(chan struct{}, 1)
			db.Handle("later", func(context.Context, string, json.RawMessage) error {
				failed <- struct{}{}
				return errors.New("not yet")
			}, memento.JobOptions{})
			enqueue(t, db, memento.Scope{User: "ann"}, "later")
			startQueue(t, db)
			<-failed
			deadline := time.Now().Add(5 * time.Second)
			var j memento.Job
			for j = onlyJob(t, db, "later"); j.State != memento.JobRetrying; j = onlyJob(t, db, "later") {
				if time.Now().After(deadline) {
					t.Fatalf("job = %+v, want retrying", j)
				}
				time.Sleep(5 * time.Millisecond)
			}
			if j.Attempt != 1 || len(j.Errors) != 1 || j.Errors[0] != "not yet" || j.FinalizedAt != nil {
				t.Errorf("job = %+v, want attempt 1 with its error", j)
			}
			if n, _ := db.Unfinished(context.Background()); n != 1 {
				t.Errorf("Unfinished = %d, want 1", n)
			}
			retrying, err := db.Jobs(context.Background(), memento.JobFilter{State: memento.JobRetrying})
			if err != nil || len(retrying) != 1 {
				t.Errorf("Jobs(retrying) = %+v, %v; want the job", retrying, err)
			}
		})
	}
}

func TestQueueStopsWithItsContext(t *testing.T) {
	db := sqlitetest.Open(t)
	db.Handle("ping", func(context.Context, string, json.RawMessage) error { return nil }, memento.JobOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	if err := db.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	cancel()
	// Once stopped by its context, the queue can be started again.
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := db.Start(context.Background())
		if err == nil {
			break
		}
		wantCode(t, err, memento.ECONFLICT)
		if time.Now().After(deadline) {
			t.Fatal("the queue did not stop when its context was cancelled")
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Cleanup(func() { db.Stop(context.Background()) })
	enqueue(t, db, memento.Scope{User: "ann"}, "ping")
	sqlitetest.WaitForJobs(t, db, 5*time.Second)
}

// testLease is the queue lease of leaseOptions: short, so that a job lost
// without a lock file is rescued within seconds instead of the default's
// 18s, yet long enough that a live queue renews it in time on a loaded
// machine under the race detector.
const testLease = 3 * time.Second

// leaseOptions are test options with the short testLease and the default
// poll interval, so that two queues on one file leave the writer free
// enough for their renewals.
func leaseOptions() sqlite.Options {
	opts := sqlitetest.Options()
	opts.QueueLease = testLease
	opts.PollInterval = 0
	return opts
}

// waitFor polls cond until it holds, failing the test with what after
// a generous deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// jobsOf returns the jobs of kind, oldest first.
func jobsOf(t *testing.T, db *sqlite.DB, kind string) []memento.Job {
	t.Helper()
	jobs, err := db.Jobs(context.Background(), memento.JobFilter{Kind: kind})
	if err != nil {
		t.Fatalf("Jobs: %v", err)
	}
	slices.Reverse(jobs)
	return jobs
}

// Kinds of the jobs TestQueueKillHelperProcess leaves running when it is
// killed: three that have attempts left and one on its last attempt.
const (
	killedKind     = "blocks"
	killedLastKind = "blocks-last"
	killedJobs     = 3
)

// TestQueueKillHelperProcess is not a test: run by
// TestQueueRescuesJobsOfDeadProcess in a child process, it starts a queue
// whose handlers block, enqueues jobs, and acknowledges each job once its
// handler runs, until it is killed.
func TestQueueKillHelperProcess(t *testing.T) {
	// The child's store comes at the path KillChild gave it, opened again
	// with a short lease.
	db := sqlitetest.OpenPath(t, sqlitetest.ChildStore(t).Path(), leaseOptions())
	block := func(ctx context.Context, kind string, payload json.RawMessage) error {
		var p memento.MessageJob
		if err := json.Unmarshal(payload, &p); err != nil {
			return err
		}
		sqlitetest.Ack(kind + " " + p.Message)
		<-ctx.Done()
		return ctx.Err()
	}
	db.Handle(killedKind, block, memento.JobOptions{})
	db.Handle(killedLastKind, block, memento.JobOptions{MaxAttempts: 1})
	s := memento.Scope{User: "ann"}
	ctx := context.Background()
	for i := range killedJobs {
		if _, err := db.AppendMessages(ctx, s, "t1", []memento.Message{{Role: memento.RoleUser, Text: fmt.Sprintf("message %d", i)}}, messageJobs(killedKind, s)); err != nil {
			t.Fatalf("AppendMessages: %v", err)
		}
	}
	if _, err := db.AppendMessages(ctx, s, "t2", []memento.Message{{Role: memento.RoleUser, Text: "last"}}, messageJobs(killedLastKind, s)); err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	if err := db.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	// Killed while its jobs run; a parent that died first leaves it to
	// give up on its own.
	time.Sleep(2 * time.Minute)
	t.Fatal("the parent did not kill this child")
}

func TestQueueRescuesJobsOfDeadProcess(t *testing.T) {
	t.Parallel()
	// The dead process's lock file tells the next queue at once that it
	// died; without it (a platform without flock), its lease runs out
	// within 1.2 leases of the kill (testLease).
	for _, withLock := range []bool{true, false} {
		name := map[bool]string{true: "lock", false: "lease only"}[withLock]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "kill.db")
			sqlitetest.KillChild(t, "TestQueueKillHelperProcess", path, killedJobs+1)
			locks, err := filepath.Glob(path + "-queue-*.lock")
			if err != nil {
				t.Fatal(err)
			}
			if runtime.GOOS != "windows" && len(locks) != 1 {
				t.Fatalf("lock files after the kill = %q, want the dead process's", locks)
			}
			if !withLock {
				for _, l := range locks {
					if err := os.Remove(l); err != nil {
						t.Fatal(err)
					}
				}
			}

			db := sqlitetest.OpenPath(t, path, leaseOptions())
			for _, kind := range []string{killedKind, killedLastKind} {
				for _, j := range jobsOf(t, db, kind) {
					if j.State != memento.JobRunning || j.Worker == "" {
						t.Fatalf("job after the kill = %+v, want running, held by the dead process", j)
					}
				}
			}
			var ran atomic.Int32
			db.Handle(killedKind, func(context.Context, string, json.RawMessage) error {
				ran.Add(1)
				return nil
			}, memento.JobOptions{})
			startQueue(t, db)
			sqlitetest.WaitForJobs(t, db, 30*time.Second)

			if got := ran.Load(); got != killedJobs {
				t.Errorf("rescued jobs ran %d times, want %d", got, killedJobs)
			}
			for _, j := range jobsOf(t, db, killedKind) {
				if j.State != memento.JobCompleted || j.Attempt != 2 || len(j.Errors) != 1 || !strings.Contains(j.Errors[0], "process died") {
					t.Errorf("rescued job = %+v, want completed at attempt 2 after a \"process died\" error", j)
				}
			}
			last := jobsOf(t, db, killedLastKind)
			if len(last) != 1 {
				t.Fatalf("jobs on their last attempt = %+v, want one", last)
			}
			if j := last[0]; j.State != memento.JobFailed || j.Reason != memento.JobOutOfAttempts || !strings.Contains(j.LastError, "process died") {
				t.Errorf("job that died on its last attempt = %+v, want failed, out of attempts, \"process died\"", j)
			}
			for _, l := range locks {
				if _, err := os.Stat(l); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the dead process's lock file %s is still there (%v)", l, err)
				}
			}
		})
	}
}

func TestQueueDoesNotStealLiveJobs(t *testing.T) {
	t.Parallel()
	// A's process lock says it lives; without its lock file, its renewed
	// lease does.
	for _, withLock := range []bool{true, false} {
		name := map[bool]string{true: "lock", false: "lease only"}[withLock]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testQueueDoesNotStealLiveJobs(t, withLock)
		})
	}
}

func testQueueDoesNotStealLiveJobs(t *testing.T, withLock bool) {
	path := filepath.Join(t.TempDir(), "shared.db")
	a := sqlitetest.OpenPath(t, path, leaseOptions())
	running, release := make(chan struct{}), make(chan struct{})
	var ranA, ranB atomic.Int32
	a.Handle("long", func(ctx context.Context, kind string, payload json.RawMessage) error {
		ranA.Add(1)
		close(running)
		<-release
		return nil
	}, memento.JobOptions{})
	enqueue(t, a, memento.Scope{User: "ann"}, "long")
	startQueue(t, a)
	<-running
	if !withLock {
		locks, _ := filepath.Glob(path + "-queue-*.lock")
		for _, l := range locks {
			if err := os.Remove(l); err != nil {
				t.Fatal(err)
			}
		}
	}

	b := sqlitetest.OpenPath(t, path, leaseOptions())
	b.Handle("long", func(context.Context, string, json.RawMessage) error {
		ranB.Add(1)
		return nil
	}, memento.JobOptions{})
	startQueue(t, b)
	// More than two leases pass while A's job runs: A keeps renewing its
	// lease, so neither B's queue nor an explicit rescue takes the job.
	time.Sleep(5 * testLease / 2)
	n, err := b.RescueJobs(context.Background())
	if err != nil {
		t.Fatalf("RescueJobs: %v", err)
	}
	if n != 0 {
		t.Errorf("RescueJobs rescued %d jobs of a live process, want 0", n)
	}
	if j := onlyJob(t, b, "long"); j.State != memento.JobRunning || j.Attempt != 1 || len(j.Errors) != 0 {
		t.Errorf("live job seen from B = %+v, want running at attempt 1, no errors", j)
	}
	close(release)
	sqlitetest.WaitForJobs(t, b, 30*time.Second)
	if j := onlyJob(t, b, "long"); j.State != memento.JobCompleted || j.Attempt != 1 {
		t.Errorf("job = %+v, want completed by A at attempt 1", j)
	}
	if ranA.Load() != 1 || ranB.Load() != 0 {
		t.Errorf("A ran the job %d times and B %d; want 1 and 0", ranA.Load(), ranB.Load())
	}
}

func TestQueuePermanentErrorsFailAtOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		err       error
		wantState string
		wantCalls int32
	}{
		{"invalid", fmt.Errorf("extract: %w", memento.Errorf(memento.EINVALID, "concept must be at most 200 bytes")), memento.JobFailed, 1},
		{"too large", memento.Errorf(memento.ETOOLARGE, "message is over its limit"), memento.JobFailed, 1},
		{"unavailable", memento.Errorf(memento.EUNAVAILABLE, "model server down"), memento.JobFailed, 3},
		{"plain", errors.New("disk hiccup"), memento.JobFailed, 3},
		{"invalid after timeout", fmt.Errorf("%w: %w", memento.Errorf(memento.EINVALID, "x"), context.DeadlineExceeded), memento.JobFailed, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db := sqlitetest.Open(t)
			var calls atomic.Int32
			db.Handle("job", func(context.Context, string, json.RawMessage) error {
				calls.Add(1)
				return tt.err
			}, memento.JobOptions{MaxAttempts: 3})
			enqueue(t, db, memento.Scope{User: "ann"}, "job")
			startQueue(t, db)
			sqlitetest.WaitForJobs(t, db, 30*time.Second)
			if got := calls.Load(); got != tt.wantCalls {
				t.Errorf("handler ran %d times, want %d", got, tt.wantCalls)
			}
			failed, err := db.Jobs(context.Background(), memento.JobFilter{State: memento.JobFailed})
			if err != nil || len(failed) != 1 {
				t.Fatalf("failed jobs = %+v, %v; want the job", failed, err)
			}
			j := failed[0]
			wantReason := memento.JobOutOfAttempts
			if tt.wantCalls == 1 {
				wantReason = memento.JobPermanent
			}
			if j.Reason != wantReason || j.Attempt != int(tt.wantCalls) || j.LastError != tt.err.Error() || len(j.Errors) != int(tt.wantCalls) {
				t.Errorf("failed job = %+v, want reason %s after %d attempts with error %q", j, wantReason, tt.wantCalls, tt.err)
			}
		})
	}
}

func TestPermanentJobError(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{memento.Errorf(memento.EINVALID, "bad"), true},
		{fmt.Errorf("step: %w", memento.Errorf(memento.ETOOLARGE, "big")), true},
		{memento.Errorf(memento.ENOTFOUND, "gone"), false},
		{memento.Errorf(memento.EUNAVAILABLE, "down"), false},
		{errors.New("plain"), false},
		{memento.WrapError(memento.EINVALID, context.Canceled, "cancelled"), false},
	}
	for _, tt := range tests {
		if got := memento.PermanentJobError(tt.err); got != tt.want {
			t.Errorf("PermanentJobError(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

func TestRetryJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlitetest.Open(t)
	var fixed atomic.Bool
	var calls atomic.Int32
	handler := func(context.Context, string, json.RawMessage) error {
		calls.Add(1)
		if !fixed.Load() {
			return memento.Errorf(memento.EINVALID, "concept must be at most 200 bytes")
		}
		return nil
	}
	db.Handle("ja", handler, memento.JobOptions{})
	db.Handle("jb", handler, memento.JobOptions{})
	db.Handle("ok", func(context.Context, string, json.RawMessage) error { return nil }, memento.JobOptions{})
	s := memento.Scope{User: "ann"}
	enqueue(t, db, s, "ja")
	enqueue(t, db, s, "jb")
	enqueue(t, db, s, "jb")
	enqueue(t, db, s, "ok")
	startQueue(t, db)
	sqlitetest.WaitForJobs(t, db, 30*time.Second)
	a, b, ok := onlyJob(t, db, "ja"), jobsOf(t, db, "jb"), onlyJob(t, db, "ok")

	// Refusals change nothing.
	for _, tt := range []struct {
		r    memento.JobRetry
		code string
	}{
		{memento.JobRetry{}, memento.EINVALID},
		{memento.JobRetry{IDs: []int64{a.ID}, Failed: true}, memento.EINVALID},
		{memento.JobRetry{IDs: []int64{a.ID}, Kind: "ja"}, memento.EINVALID},
		{memento.JobRetry{IDs: []int64{a.ID, 99999}}, memento.ENOTFOUND},
		{memento.JobRetry{IDs: []int64{a.ID, ok.ID}}, memento.ECONFLICT},
	} {
		_, err := db.RetryJobs(ctx, tt.r)
		wantCode(t, err, tt.code)
	}
	if j := onlyJob(t, db, "ja"); j.State != memento.JobFailed {
		t.Fatalf("job a after refused retries = %+v, want still failed", j)
	}
	if got := calls.Load(); got != 3 {
		t.Fatalf("handler ran %d times before the fix, want 3 (one attempt each)", got)
	}

	fixed.Store(true)
	// By id: one job, named twice.
	got, err := db.RetryJobs(ctx, memento.JobRetry{IDs: []int64{a.ID, a.ID}})
	if err != nil {
		t.Fatalf("RetryJobs(a): %v", err)
	}
	if len(got) != 1 || got[0].ID != a.ID || got[0].State == memento.JobFailed {
		t.Errorf("RetryJobs(a) = %+v, want job a, no longer failed", got)
	}
	waitFor(t, "job a completes", func() bool { return onlyJob(t, db, "ja").State == memento.JobCompleted })
	if j := onlyJob(t, db, "ja"); j.Attempt != 2 || len(j.Errors) != 1 {
		t.Errorf("retried job a = %+v, want completed at attempt 2, its first error kept", j)
	}
	for _, j := range jobsOf(t, db, "jb") {
		if j.State != memento.JobFailed {
			t.Errorf("job b %d = %s after retrying a, want failed", j.ID, j.State)
		}
	}

	// Every failed job of a kind.
	got, err = db.RetryJobs(ctx, memento.JobRetry{Failed: true, Kind: "jb"})
	if err != nil {
		t.Fatalf("RetryJobs(failed b): %v", err)
	}
	if len(got) != 2 || got[0].ID != b[0].ID || got[1].ID != b[1].ID {
		t.Errorf("RetryJobs(failed b) = %+v, want both b jobs, oldest first", got)
	}
	sqlitetest.WaitForJobs(t, db, 30*time.Second)
	for _, j := range jobsOf(t, db, "jb") {
		if j.State != memento.JobCompleted || j.Attempt != 2 {
			t.Errorf("retried job b = %+v, want completed at attempt 2", j)
		}
	}
	// Nothing left to retry.
	if got, err := db.RetryJobs(ctx, memento.JobRetry{Failed: true}); err != nil || len(got) != 0 {
		t.Errorf("RetryJobs(failed) with no dead letters = %+v, %v; want none", got, err)
	}
}

func TestRetryJobOutOfAttempts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := sqlitetest.Open(t)
	var fixed atomic.Bool
	db.Handle("job", func(context.Context, string, json.RawMessage) error {
		if !fixed.Load() {
			return errors.New("model server busy")
		}
		return nil
	}, memento.JobOptions{MaxAttempts: 2})
	enqueue(t, db, memento.Scope{User: "ann"}, "job")
	startQueue(t, db)
	sqlitetest.WaitForJobs(t, db, 30*time.Second)
	j := onlyJob(t, db, "job")
	if j.State != memento.JobFailed || j.Reason != memento.JobOutOfAttempts || j.Attempt != 2 {
		t.Fatalf("job = %+v, want failed out of attempts at 2 of 2", j)
	}
	fixed.Store(true)
	if _, err := db.RetryJobs(ctx, memento.JobRetry{Failed: true}); err != nil {
		t.Fatalf("RetryJobs: %v", err)
	}
	sqlitetest.WaitForJobs(t, db, 30*time.Second)
	if j := onlyJob(t, db, "job"); j.State != memento.JobCompleted || j.Attempt != 3 || j.MaxAttempts != 3 {
		t.Errorf("retried job = %+v, want completed at attempt 3 of 3 (one more attempt)", j)
	}
}
