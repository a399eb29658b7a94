package postgres

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memento-ai/memento"
)

var _ memento.ThreadLocker = (*DB)(nil)

// Thread leases: how long one lasts without renewal, how often its holder
// renews it, and the bounds of the wait between tries of a busy thread.
const (
	threadLease      = 15 * time.Second
	threadLeaseRenew = 5 * time.Second
	threadPollMin    = 2 * time.Millisecond
	threadPollMax    = 50 * time.Millisecond
)

// LockThread takes the thread's lease (a row of thread_locks), waiting
// while another holder has it, and renews it until unlock is called. No
// connection is held while the turn runs, so turns waiting for threads
// never take the pool from the turns that hold them. Errors: EINVALID,
// EUNAVAILABLE when ctx ends first.
func (db *DB) LockThread(ctx context.Context, s memento.Scope, thread string) (func(), error) {
	s, err := checkScope(s)
	if err != nil {
		return nil, err
	}
	if err := memento.CheckID("thread id", thread); err != nil {
		return nil, err
	}
	var b [12]byte
	_, _ = crand.Read(b[:])
	owner := hex.EncodeToString(b[:])
	wait := threadPollMin
	for {
		got, err := db.tryThreadLease(ctx, s, thread, owner)
		if err != nil {
			if ctx.Err() != nil {
				return nil, memento.WrapError(memento.EUNAVAILABLE, ctx.Err(), "gave up waiting for the thread's previous turn to finish")
			}
			return nil, fmt.Errorf("lock thread %s: %w", thread, err)
		}
		if got {
			break
		}
		// A jittered, growing wait: holders end in milliseconds when the
		// model is offline, in seconds when it is a server.
		t := time.NewTimer(wait/2 + rand.N(wait))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, memento.WrapError(memento.EUNAVAILABLE, ctx.Err(), "gave up waiting for the thread's previous turn to finish")
		case <-t.C:
		}
		wait = min(2*wait, threadPollMax)
	}
	renewCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(threadLeaseRenew)
		defer tick.Stop()
		for {
			select {
			case <-renewCtx.Done():
				return
			case <-tick.C:
				if _, err := db.pool.Exec(renewCtx, `UPDATE thread_locks SET expires_at = clock_timestamp() + make_interval(secs => $5)
					WHERE tenant_id = $1 AND user_id = $2 AND thread_id = $3 AND owner = $4`,
					s.Tenant, s.User, thread, owner, threadLease.Seconds()); err != nil && renewCtx.Err() == nil {
					db.logger.Warn("renew thread lease", "tenant", s.Tenant, "user", s.User, "thread", thread, "err", err)
				}
			}
		}
	}()
	return func() {
		stop()
		<-done
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, err := db.pool.Exec(rctx, `DELETE FROM thread_locks WHERE tenant_id = $1 AND user_id = $2 AND thread_id = $3 AND owner = $4`,
			s.Tenant, s.User, thread, owner); err != nil {
			// The lease lapses on its own.
			db.logger.Warn("release thread lease", "tenant", s.Tenant, "user", s.User, "thread", thread, "err", err)
		}
	}, nil
}

// tryThreadLease takes the thread's lease when nobody holds it or its
// holder's lease has lapsed.
func (db *DB) tryThreadLease(ctx context.Context, s memento.Scope, thread, owner string) (bool, error) {
	var got string
	err := db.pool.QueryRow(ctx, `INSERT INTO thread_locks (tenant_id, user_id, thread_id, owner, expires_at)
		VALUES ($1, $2, $3, $4, clock_timestamp() + make_interval(secs => $5))
		ON CONFLICT (tenant_id, user_id, thread_id) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
			WHERE thread_locks.expires_at < clock_timestamp()
		RETURNING owner`, s.Tenant, s.User, thread, owner, threadLease.Seconds()).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return got == owner, nil
}
