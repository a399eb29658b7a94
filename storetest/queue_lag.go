package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

// JobCounter is a store whose queue reports its lag and counts its jobs
// by kind and state (`memento jobs stats`, the server's backpressure and
// metrics).
type JobCounter interface {
	memento.LagReporter
	// JobStats counts every kind's jobs by state, with the queue's lag.
	JobStats(ctx context.Context) (*memento.JobStats, error)
}

// testQueueLag enqueues jobs of several kinds and reads the queue's lag
// and counts: while they wait, while one runs, and once they have ended
// (completed, failed for good, or left for a process that handles their
// kind).
func testQueueLag(t *testing.T, open Opener) {
	st := open(t)
	jc, ok := st.(JobCounter)
	if !ok {
		t.Skip("the store does not implement storetest.JobCounter (QueueLag, JobStats)")
	}
	ctx := t.Context()
	lag, err := jc.QueueLag(ctx)
	if err != nil {
		t.Fatalf("QueueLag: %v", err)
	}
	if lag.Waiting != 0 || lag.OldestSeconds != 0 || len(lag.Kinds) != 0 || lag.At.IsZero() {
		t.Fatalf("an empty queue lags: %+v", lag)
	}
	if stats, err := jc.JobStats(ctx); err != nil || len(stats.Kinds) != 0 || stats.Waiting != 0 {
		t.Fatalf("JobStats of an empty queue = %+v, %v", stats, err)
	}
	before := time.Now()
	kinds := []string{"lag-a", "lag-a", "lag-b", "lag-none", "lag-slow", "lag-broken"}
	for i, kind := range kinds {
		m := msgID("m"+string(rune('a'+i)), memento.RoleUser, "message for "+kind, i)
		if _, err := st.AppendMessages(ctx, ann, "t1", []memento.Message{m}, func(memento.Message) []memento.JobRequest {
			return []memento.JobRequest{{Kind: kind, Payload: "x"}}
		}); err != nil {
			t.Fatalf("AppendMessages: %v", err)
		}
	}
	// Once the messages are readable: a store may acknowledge an append
	// before its jobs are enqueued (SQLite's intake), and it counts them
	// as its own kind of lag until then.
	if _, err := st.Messages(ctx, ann, "t1", 0, 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	lag, err = jc.QueueLag(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byKind := func(ls []memento.QueueLag) map[string]memento.QueueLag {
		out := map[string]memento.QueueLag{}
		for _, l := range ls {
			out[l.Kind] = l
		}
		return out
	}
	lags := byKind(lag.Kinds)
	if lag.Waiting != 6 || len(lag.Kinds) != 5 || lag.Kinds[0].Kind != "lag-a" || lags["lag-a"].Waiting != 2 || lags["lag-b"].Waiting != 1 || lags["lag-a"].Running != 0 {
		t.Fatalf("QueueLag = %+v, want 6 jobs of 5 kinds waiting, by kind, 2 of lag-a", lag)
	}
	if a := lags["lag-a"]; a.Oldest.Before(before.Add(-time.Second)) || a.OldestSeconds < 0.01 || a.OldestSeconds > time.Since(before).Seconds()+1 {
		t.Errorf("lag-a's oldest job: enqueued %s, %.3f s old; enqueued after %s", a.Oldest, a.OldestSeconds, before)
	}
	if lag.OldestSeconds < lags["lag-broken"].OldestSeconds || lag.OldestSeconds < lags["lag-a"].OldestSeconds {
		t.Errorf("the total's oldest %.3f s is below a kind's: %+v", lag.OldestSeconds, lag.Kinds)
	}
	if stats, err := jc.JobStats(ctx); err != nil || len(stats.Kinds) != 5 || stats.Kinds[0].Kind != "lag-a" || stats.Kinds[0].Pending != 2 ||
		stats.Kinds[0].Waiting != 2 || stats.Waiting != 6 {
		t.Errorf("JobStats of waiting jobs = %+v, %v; want lag-a first with 2 pending and waiting", stats, err)
	}

	release := make(chan struct{})
	started := make(chan struct{}, 1)
	succeed := func(context.Context, string, json.RawMessage) error { return nil }
	st.Handle("lag-a", succeed, memento.JobOptions{})
	st.Handle("lag-b", succeed, memento.JobOptions{})
	st.Handle("lag-slow", func(ctx context.Context, _ string, _ json.RawMessage) error {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}, memento.JobOptions{Timeout: 20 * time.Second})
	st.Handle("lag-broken", func(context.Context, string, json.RawMessage) error {
		return memento.Errorf(memento.EINVALID, "the payload can never work")
	}, memento.JobOptions{})
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
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		close(release)
		t.Fatal("the slow job did not start")
	}
	waitFor(t, "every job but the slow one and the unhandled one to end", 20*time.Second, func() bool {
		l, err := jc.QueueLag(ctx)
		return err == nil && l.Waiting == 2
	})
	lag, _ = jc.QueueLag(ctx)
	lags = byKind(lag.Kinds)
	if len(lag.Kinds) != 2 || lags["lag-slow"].Running != 1 || lags["lag-slow"].Waiting != 1 || lags["lag-none"].Waiting != 1 || lags["lag-none"].Running != 0 {
		t.Errorf("QueueLag with one job running = %+v; want the slow job running and the unhandled one waiting", lag)
	}
	if stats, err := jc.JobStats(ctx); err != nil {
		t.Errorf("JobStats: %v", err)
	} else if k := statsOf(stats, "lag-slow"); k.Running != 1 || k.Waiting != 1 {
		t.Errorf("JobStats of the running kind = %+v", k)
	}
	close(release)
	waitFor(t, "the slow job to end", 20*time.Second, func() bool {
		l, err := jc.QueueLag(ctx)
		return err == nil && l.Waiting == 1
	})
	stats, err := jc.JobStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]memento.JobKindStats{
		"lag-a":      {Kind: "lag-a", Completed: 2},
		"lag-b":      {Kind: "lag-b", Completed: 1},
		"lag-broken": {Kind: "lag-broken", Failed: 1},
		"lag-none":   {Kind: "lag-none", Pending: 1, Waiting: 1},
		"lag-slow":   {Kind: "lag-slow", Completed: 1},
	}
	if len(stats.Kinds) != len(want) || stats.Waiting != 1 {
		t.Errorf("JobStats after the jobs ended = %+v; want 5 kinds, 1 job waiting", stats)
	}
	for kind, w := range want {
		got := statsOf(stats, kind)
		got.OldestSeconds = 0
		if got != w {
			t.Errorf("JobStats of %s = %+v, want %+v", kind, got, w)
		}
	}
	if k := statsOf(stats, "lag-none"); k.OldestSeconds <= 0 || stats.OldestSeconds < k.OldestSeconds {
		t.Errorf("the unhandled job's age = %.3f s (total %.3f s); want it counted", k.OldestSeconds, stats.OldestSeconds)
	}
}

// statsOf returns the counts of kind in stats.
func statsOf(stats *memento.JobStats, kind string) memento.JobKindStats {
	for _, k := range stats.Kinds {
		if k.Kind == kind {
			return k
		}
	}
	return memento.JobKindStats{}
}
