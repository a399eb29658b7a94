package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Which commits wait for the disk.
//
// With synchronous=FULL every COMMIT waits for an fsync of the write-ahead
// log (a median of 1-4 ms on the development machine, tens of ms at the
// tail), and the one writer does nothing else meanwhile. An
// acknowledgement must wait for it: the caller was told its write is
// kept. The writes of background jobs need not: a job's results are
// derived from data already committed (the message that brought the job),
// and the job's own completion (the backlog rows deleted, River's job
// completed) is committed after its results. SQLite's log keeps commits in
// order and a recovery keeps a prefix of it (each frame's checksum chains
// to the ones before), so a power loss takes at most the last commits that
// nobody has waited for: a job's results can be lost only with its
// completion, and the job then runs again, as after a crash mid-batch
// (idempotent by message id). The first commit that waits for the disk
// after them syncs them too.
//
// So the writer's connection runs with synchronous=NORMAL (no sync at a
// commit) and switches to the configured level (Options.Synchronous, FULL
// by default) for each transaction that someone waits on: every writeTx,
// and a group commit whose requests are not all jobs' unless the log
// syncer makes it durable after its commit (logsync.go: then it commits
// at NORMAL too, and a batch of jobs' writes takes the writes waited on
// that arrive while it runs). The setting cannot change inside
// a transaction, so the transaction pins the writer's one connection,
// sets the level, runs and commits, and sets NORMAL back. River's own
// transactions (fetching, completing and rescuing jobs) run at NORMAL
// too: a completion lost to a power loss leaves the job to be rescued and
// run again.
//
// A job's writes are told apart by their context (jobctx, set by the
// queue's workers). With Options.Synchronous NORMAL, and for a memory
// database, nothing switches.

// lazyLevel is the synchronous setting of writes nobody waits on.
const lazyLevel = "NORMAL"

// syncLevels are the writer's two synchronous settings and the one its
// connection has now. now is read and changed only by a holder of the
// writer's connection (pinWriter), which the pool of one connection
// serialises.
type syncLevels struct {
	durable, lazy string // equal: nothing switches
	now           string
}

// switches reports whether the writer changes its setting between the
// writes nobody waits on and the others.
func (l *syncLevels) switches() bool { return l != nil && l.durable != l.lazy }

// newSyncLevels returns the levels of a writer whose configured setting is
// synchronous (FULL, NORMAL or EXTRA).
func newSyncLevels(synchronous string, memory bool) *syncLevels {
	durable := strings.ToUpper(synchronous)
	lazy := lazyLevel
	if memory || durable == lazyLevel {
		lazy = durable
	}
	return &syncLevels{durable: durable, lazy: lazy, now: lazy}
}

// pinnedWriter is the writer's connection held for one transaction at a
// synchronous level.
type pinnedWriter struct {
	conn    *sql.Conn
	levels  *syncLevels
	durable bool
	// deferred marks a transaction that is waited on but runs at the
	// lazy level: the log syncer makes its commit durable (logsync.go).
	deferred bool
}

// pinWriter takes the writer's one connection and sets its synchronous
// level for a transaction that is waited on (durable) or not. Release it
// with release once the transaction has ended.
func (db *DB) pinWriter(ctx context.Context, durable bool) (*pinnedWriter, error) {
	conn, err := db.write.Conn(ctx)
	if err != nil {
		return nil, err
	}
	p := &pinnedWriter{conn: conn, levels: db.syncLevels, durable: durable}
	want := p.levels.lazy
	if durable {
		want = p.levels.durable
	}
	if err := p.set(ctx, want); err != nil {
		conn.Close()
		return nil, err
	}
	return p, nil
}

// pinBatch is pinWriter for a batch of the committer. With a log syncer,
// a batch that is waited on runs at the lazy level too, and its requests
// are answered once the syncer has synced the log after its commit.
func (db *DB) pinBatch(ctx context.Context, durable bool) (*pinnedWriter, error) {
	if !durable || db.logSync == nil {
		return db.pinWriter(ctx, durable)
	}
	p, err := db.pinWriter(ctx, false)
	if err != nil {
		return nil, err
	}
	p.durable, p.deferred = true, true
	return p, nil
}

// set sets the connection's synchronous level to want unless it has it.
func (p *pinnedWriter) set(ctx context.Context, want string) error {
	if p.levels.now == want {
		return nil
	}
	if _, err := p.conn.ExecContext(ctx, `PRAGMA synchronous = `+want); err != nil {
		return fmt.Errorf("set synchronous %s: %w", want, err)
	}
	p.levels.now = want
	return nil
}

// release gives the connection back, at the level of the writes nobody
// waits on (River's own transactions run there meanwhile).
func (p *pinnedWriter) release() {
	if err := p.set(context.Background(), p.levels.lazy); err != nil {
		// The level is unknown: the next holder sets its own.
		p.levels.now = ""
	}
	p.conn.Close()
}
