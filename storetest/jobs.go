package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

// testJobsInTransaction checks that jobs exist exactly when their data
// does: a write that fails leaves neither, one that succeeds both, with
// the payload jobsFor gave and the stored message's id and seq.
func testJobsInTransaction(t *testing.T, open Opener) {
	st := open(t)
	ctx := t.Context()
	res, err := st.AppendMessages(ctx, ann, "t1", []memento.Message{msgID("m1", memento.RoleUser, "one", 0), msgID("m2", memento.RoleUser, "two", 1)},
		func(m memento.Message) []memento.JobRequest {
			return []memento.JobRequest{
				{Kind: "remember", Payload: memento.MessageJob{Tenant: ann.Tenant, User: ann.User, Thread: m.Thread, Message: m.ID, Seq: m.Seq}},
				{Kind: "preferences", Payload: memento.MessageJob{Tenant: ann.Tenant, User: ann.User, Thread: m.Thread, Message: m.ID, Seq: m.Seq}, MaxAttempts: 2},
			}
		})
	if err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	remember := jobsOf(t, st, "remember")
	if len(remember) != 2 {
		t.Fatalf("%d remember jobs, want 2", len(remember))
	}
	// Newest first.
	if p := payloadOf(t, remember[0]); p.Message != "m2" || p.Seq != 2 || p.Thread != "t1" || p.User != "ann" {
		t.Errorf("newest remember job payload = %+v, want m2 at seq 2 of t1", p)
	}
	if remember[0].ID <= remember[1].ID {
		t.Errorf("job ids %d, %d: want newest first", remember[0].ID, remember[1].ID)
	}
	for _, j := range remember {
		if j.State != memento.JobPending || j.Attempt != 0 || j.CreatedAt.IsZero() || j.Errors == nil {
			t.Errorf("new job = %+v, want pending, attempt 0, a creation time, no errors", j)
		}
	}
	if prefs := jobsOf(t, st, "preferences"); len(prefs) != 2 || prefs[0].MaxAttempts != 2 {
		t.Errorf("preference jobs = %+v, want 2 with MaxAttempts 2", prefs)
	}
	if n, err := st.Unfinished(ctx); err != nil || n != 4 {
		t.Errorf("Unfinished = %d, %v; want 4", n, err)
	}
	pending, err := st.Jobs(ctx, memento.JobFilter{State: memento.JobPending, Limit: 3})
	if err != nil || len(pending) != 3 {
		t.Errorf("Jobs(pending, limit 3) = %d jobs, %v", len(pending), err)
	}
	_, err = st.Jobs(ctx, memento.JobFilter{State: "sleeping"})
	wantCode(t, "Jobs of an unknown state", err, memento.EINVALID)
	_ = res

	// A turn refused by CheckSeq leaves no job; a failing batch neither.
	_, err = st.SaveTurn(ctx, memento.Turn{Scope: ann, Thread: "t1", CheckSeq: true, BaseSeq: 0,
		Messages: []memento.Message{msg(memento.RoleUser, "late")},
		JobsFor: func([]memento.Message) []memento.JobRequest {
			return []memento.JobRequest{{Kind: "remember", Payload: "late"}}
		}})
	wantCode(t, "a stale turn", err, memento.ECONFLICT)
	_, err = st.AddEvents(ctx, ann, []memento.Event{{Type: memento.EventWatched, TitleID: "x"}, {Type: "bogus", TitleID: "y"}},
		func(memento.Event) []memento.JobRequest {
			return []memento.JobRequest{{Kind: "remember", Payload: "event"}}
		})
	wantCode(t, "a batch with a bad event", err, memento.EINVALID)
	if n := len(jobsOf(t, st, "remember")); n != 2 {
		t.Errorf("%d remember jobs after refused writes, want 2", n)
	}
	if ev, _ := st.Events(ctx, ann); len(ev) != 0 {
		t.Errorf("a refused batch stored events: %+v", ev)
	}
}

// testQueueRunsJobs runs the queue: jobs enqueued before Start run once
// with their payload, a failing job is retried, a permanent failure is a
// dead letter that RetryJobs runs again.
func testQueueRunsJobs(t *testing.T, open Opener) {
	st := open(t)
	ctx := t.Context()
	var mu sync.Mutex
	ran := map[string]int{}
	failFirst := map[string]bool{}
	permanent := true
	st.Handle("remember", func(ctx context.Context, kind string, payload json.RawMessage) error {
		var p memento.MessageJob
		if err := json.Unmarshal(payload, &p); err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		ran[p.Message]++
		if p.Message == "m2" && !failFirst[p.Message] {
			failFirst[p.Message] = true
			return errors.New("model timed out")
		}
		return nil
	}, memento.JobOptions{Timeout: 5 * time.Second})
	st.Handle("broken", func(ctx context.Context, kind string, payload json.RawMessage) error {
		mu.Lock()
		defer mu.Unlock()
		if permanent {
			return memento.Errorf(memento.EINVALID, "the payload can never work")
		}
		return nil
	}, memento.JobOptions{})
	if _, err := st.AppendMessages(ctx, ann, "t1", []memento.Message{msgID("m1", memento.RoleUser, "one", 0), msgID("m2", memento.RoleUser, "two", 1)},
		func(m memento.Message) []memento.JobRequest {
			reqs := jobsOfKind("remember", ann)(m)
			if m.ID == "m1" {
				reqs = append(reqs, memento.JobRequest{Kind: "broken", Payload: "x"}, memento.JobRequest{Kind: "nobody-handles", Payload: "x"})
			}
			return reqs
		}); err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	qctx, cancel := context.WithCancel(context.Background())
	if err := st.Start(qctx); err != nil {
		cancel()
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		stop, c := context.WithTimeout(context.Background(), 10*time.Second)
		defer c()
		_ = st.Stop(stop)
		cancel()
	})
	wantCode(t, "a second Start", st.Start(qctx), memento.ECONFLICT)
	waitFor(t, "the remember jobs to complete", 20*time.Second, func() bool {
		jobs := jobsOf(t, st, "remember")
		return len(jobs) == 2 && jobs[0].State == memento.JobCompleted && jobs[1].State == memento.JobCompleted
	})
	mu.Lock()
	if ran["m1"] != 1 || ran["m2"] != 2 {
		t.Errorf("runs = %v, want m1 once and m2 twice (one retry)", ran)
	}
	mu.Unlock()
	retried := jobsOf(t, st, "remember")[0]
	if retried.Attempt != 2 || len(retried.Errors) != 1 || retried.LastError == "" || retried.FinalizedAt == nil {
		t.Errorf("retried job = %+v, want attempt 2 with the first attempt's error kept", retried)
	}
	waitFor(t, "the broken job to fail", 20*time.Second, func() bool {
		jobs := jobsOf(t, st, "broken")
		return len(jobs) == 1 && jobs[0].State == memento.JobFailed
	})
	dead := jobsOf(t, st, "broken")[0]
	if dead.Reason != memento.JobPermanent || dead.Attempt != 1 {
		t.Errorf("dead letter = %+v, want failed for good at its first attempt", dead)
	}
	if jobs := jobsOf(t, st, "nobody-handles"); len(jobs) != 1 || jobs[0].State != memento.JobPending {
		t.Errorf("job of a kind without handler = %+v, want left pending for a process that handles it", jobs)
	}
	_, err := st.RetryJobs(ctx, memento.JobRetry{IDs: []int64{retried.ID}})
	wantCode(t, "RetryJobs of a completed job", err, memento.ECONFLICT)
	_, err = st.RetryJobs(ctx, memento.JobRetry{IDs: []int64{1 << 40}})
	wantCode(t, "RetryJobs of an unknown job", err, memento.ENOTFOUND)
	_, err = st.RetryJobs(ctx, memento.JobRetry{})
	wantCode(t, "RetryJobs of nothing", err, memento.EINVALID)
	mu.Lock()
	permanent = false
	mu.Unlock()
	again, err := st.RetryJobs(ctx, memento.JobRetry{Failed: true, Kind: "broken"})
	if err != nil || len(again) != 1 || again[0].ID != dead.ID {
		t.Fatalf("RetryJobs(failed broken) = %+v, %v; want the dead letter", again, err)
	}
	waitFor(t, "the retried dead letter to complete", 20*time.Second, func() bool {
		jobs := jobsOf(t, st, "broken")
		return len(jobs) == 1 && jobs[0].State == memento.JobCompleted
	})
	if j := jobsOf(t, st, "broken")[0]; !slices.Contains(j.Errors, dead.LastError) {
		t.Errorf("retried dead letter lost its errors: %+v", j)
	}
	if n, err := st.Unfinished(ctx); err != nil || n != 1 {
		t.Errorf("Unfinished = %d, %v; want 1 (the job no process handles)", n, err)
	}
}
