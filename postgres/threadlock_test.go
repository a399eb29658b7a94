package postgres_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

// TestThreadLockAcrossProcesses holds one thread through two stores on
// one schema: only one holder at a time, a waiter gives up with
// EUNAVAILABLE when its context ends, other threads are not held, and
// turns taken through both stores at once never overlap.
func TestThreadLockAcrossProcesses(t *testing.T) {
	a, b := openPair(t)
	ctx := t.Context()
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	unlock, err := a.LockThread(ctx, s, "t1")
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err = b.LockThread(short, s, "t1")
	cancel()
	if memento.ErrorCode(err) != memento.EUNAVAILABLE {
		t.Fatalf("a second holder of a held thread = %v, want EUNAVAILABLE once it gives up", err)
	}
	other, err := b.LockThread(ctx, s, "t2")
	if err != nil {
		t.Fatalf("another thread of the user is held too: %v", err)
	}
	other()
	unlock()
	again, err := b.LockThread(ctx, s, "t1")
	if err != nil {
		t.Fatalf("the released thread: %v", err)
	}
	again()

	// 40 holders, half through each store: never two at once.
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	for i := range 40 {
		db := a
		if i%2 == 1 {
			db = b
		}
		wg.Go(func() {
			unlock, err := db.LockThread(ctx, s, "busy")
			if err != nil {
				t.Error(err)
				return
			}
			n := inside.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(2 * time.Millisecond)
			inside.Add(-1)
			unlock()
		})
	}
	wg.Wait()
	if most.Load() != 1 {
		t.Errorf("%d holders of one thread at once, want 1", most.Load())
	}
}

// TestThreadLockOfADeadProcess checks that a lease nobody renews is taken
// over once it lapses: a process that died does not hold its thread for
// ever.
func TestThreadLockOfADeadProcess(t *testing.T) {
	a, b := openPair(t)
	ctx := t.Context()
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}
	// The dead process's lease, as it left it: lapsed a moment ago.
	if _, err := a.Pool().Exec(ctx, `INSERT INTO thread_locks (tenant_id, user_id, thread_id, owner, expires_at) VALUES ($1, $2, 't', 'dead', clock_timestamp() - interval '1 second')`, s.Tenant, s.User); err != nil {
		t.Fatal(err)
	}
	wait, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	unlock, err := b.LockThread(wait, s, "t")
	if err != nil {
		t.Fatalf("the lapsed lease of a dead process was not taken over: %v", err)
	}
	unlock()
}
