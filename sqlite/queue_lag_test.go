package sqlite_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

func TestQueueLagAndStats(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{Tenant: "t", User: "u"}
	lag, err := db.QueueLag(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if lag.Waiting != 0 || lag.OldestSeconds != 0 || len(lag.Kinds) != 0 {
		t.Fatalf("an empty queue lags: %+v", lag)
	}
	before := time.Now()
	enqueue(t, db, s, "lag-a")
	enqueue(t, db, s, "lag-a")
	enqueue(t, db, s, "lag-b")
	time.Sleep(20 * time.Millisecond)
	lag, err = db.QueueLag(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if lag.Waiting != 3 || len(lag.Kinds) != 2 || lag.Kinds[0].Kind != "lag-a" || lag.Kinds[0].Waiting != 2 || lag.Kinds[1].Waiting != 1 {
		t.Fatalf("QueueLag = %+v, want 2 lag-a and 1 lag-b waiting", lag)
	}
	if a := lag.Kinds[0]; a.Oldest.Before(before.Add(-time.Second)) || a.OldestSeconds < 0.01 || a.OldestSeconds > time.Since(before).Seconds()+1 {
		t.Errorf("lag-a's oldest job: enqueued %s, %.3f s old; enqueued after %s", a.Oldest, a.OldestSeconds, before)
	}
	if lag.OldestSeconds < lag.Kinds[1].OldestSeconds {
		t.Errorf("the total's oldest %.3f s is below a kind's %.3f s", lag.OldestSeconds, lag.Kinds[1].OldestSeconds)
	}

	// Once the jobs end, nothing waits; the stats still count them.
	done := make(chan struct{}, 3)
	handler := func(context.Context, string, json.RawMessage) error { done <- struct{}{}; return nil }
	db.Handle("lag-a", handler, memento.JobOptions{})
	db.Handle("lag-b", handler, memento.JobOptions{})
	startQueue(t, db)
	waitFor(t, "the jobs to end", func() bool {
		l, err := db.QueueLag(ctx)
		return err == nil && l.Waiting == 0
	})
	st, err := db.JobStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Kinds) != 2 || st.Kinds[0].Completed != 2 || st.Kinds[1].Completed != 1 || st.Waiting != 0 || st.Kinds[0].Waiting != 0 {
		t.Errorf("JobStats after the jobs ended = %+v", st)
	}
}
