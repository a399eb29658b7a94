package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/internal/jobctx"
	"github.com/memento-ai/memento/internal/task"
)

// Compile-time checks that *DB provides every service it promises.
var (
	_ memento.UserService   = (*DB)(nil)
	_ memento.MessageLog    = (*DB)(nil)
	_ memento.ThreadService = (*DB)(nil)
	_ memento.EventService  = (*DB)(nil)
	_ memento.TitleService  = (*DB)(nil)
	_ memento.Queue         = (*DB)(nil)
	_ memento.Pinger        = (*DB)(nil)
)

// Defaults of Options. They are exported so that callers building flags or
// documentation can show them.
const (
	DefaultSynchronous  = "FULL"
	DefaultBusyTimeout  = 10 * time.Second
	DefaultReadConns    = 4
	DefaultMaxAttempts  = 5
	DefaultJobTimeout   = 30 * time.Second
	DefaultPollInterval = 50 * time.Millisecond
	DefaultQueueLease   = 15 * time.Second
	// DefaultWorkers is more than the CPUs of a small machine: a job of
	// the memory pipeline spends most of its time waiting, for its commit
	// (which group commit shares among the runs waiting together) or for
	// a remote model, so a few workers would leave both idle.
	DefaultWorkers = 16
)

// Options tune a DB. The zero value is valid: every field falls back to the
// default named in its comment.
type Options struct {
	// Synchronous is SQLite's synchronous setting for the writes somebody
	// waits on, one of "FULL" (the default), "NORMAL" or "EXTRA". FULL
	// syncs the WAL after every such commit before its caller is answered
	// (off the writer, logsync.go), so an acknowledged write survives a
	// power loss; NORMAL survives a crash of the process (even
	// SIGKILL) but may lose the last commits on power loss. The writes of
	// background jobs always commit at NORMAL: a power loss may take them,
	// with their jobs' completion, and the jobs run again (durability.go).
	// See the package documentation for figures.
	Synchronous string
	// BusyTimeout is how long a connection waits for a lock held by another
	// connection (or process) before failing with SQLITE_BUSY. Default 10s.
	BusyTimeout time.Duration
	// ReadConns is the size of the read-only pool that serves reads while
	// the single writer connection is busy. Default 4.
	ReadConns int
	// MaxAttempts is how many times a job runs before it is failed, unless
	// the JobRequest or the kind's JobOptions says otherwise. Default 5.
	MaxAttempts int
	// JobTimeout bounds one attempt of a job, unless the kind's JobOptions
	// says otherwise. Default 30s.
	JobTimeout time.Duration
	// RetryDelay returns how long to wait before retrying a job whose
	// attempt number attempt (1 for the first run) failed. Nil keeps River's
	// default backoff of attempt^4 seconds (1s, 16s, 81s, ...); tests set a
	// few milliseconds.
	RetryDelay func(attempt int) time.Duration
	// PollInterval is how often a started queue looks for new jobs, and so
	// the longest a freshly enqueued job waits before it starts. Default
	// 50ms.
	PollInterval time.Duration
	// Workers is how many jobs a started queue runs at once. Default 16.
	Workers int
	// QueueLease is how long a started queue's heartbeat vouches for the
	// jobs it runs where it has no process lock (queue_lease.go; on Unix
	// the lock says at once whether it lives); past it, another queue on
	// the file rescues them as lost with a process that died. Default 15s.
	QueueLease time.Duration
	// CheckpointPages is how many pages of committed writes the
	// write-ahead log may hold before the background checkpointer copies
	// them into the database file with a PASSIVE checkpoint, which waits
	// for nobody and blocks nobody. Default 1000 (4 MB of 4 KiB pages,
	// SQLite's own threshold). A negative value turns the background
	// checkpointer off and leaves checkpoints to SQLite, which runs them
	// inside the commit that crosses 1000 pages (the behaviour before the
	// checkpointer; kept for comparison).
	CheckpointPages int
	// CheckpointIdle is how long the log must see no write before the
	// checkpointer copies what is left into the database and, if the log
	// file is longer than ten times CheckpointPages pages (a burst, a bulk
	// load), truncates it to zero bytes. Default 1s.
	CheckpointIdle time.Duration
	// Logger receives the queue's and the store's diagnostics. Default
	// slog.Default().
	Logger *slog.Logger
	// Clock stamps created and updated times and the time of messages and
	// events given without one. Default memento.SystemClock.
	Clock memento.Clock
	// Intake acknowledges appends from a second file beside the store,
	// with a writer of its own, instead of from the store's one writer
	// (intake.go): a shorter acknowledgement while the background jobs
	// keep the writer busy, for a longer time until the messages'
	// memories exist (docs/BENCHMARKS.md). Ignored for a memory database.
	Intake bool
	// IntakePath puts the intake's file somewhere other than beside the
	// store, and turns the intake on: on a device of its own, or one whose
	// cache survives a power loss, its syncs need not wait for what the
	// store writes to its disk, and those syncs are what an acknowledgement
	// waits for. A directory holds the file under the store's name with
	// "-intake". Every process on the store must give the same place; the
	// store records it beside itself (intakeplace.go), so that a later
	// start, with the intake or without it, finds what the intake holds.
	IntakePath string
}

// withDefaults returns o with every zero field replaced by its default.
func (o Options) withDefaults() Options {
	if o.Synchronous == "" {
		o.Synchronous = DefaultSynchronous
	}
	o.Synchronous = strings.ToUpper(o.Synchronous)
	if o.BusyTimeout == 0 {
		o.BusyTimeout = DefaultBusyTimeout
	}
	if o.ReadConns == 0 {
		o.ReadConns = DefaultReadConns
	}
	if o.MaxAttempts == 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.JobTimeout == 0 {
		o.JobTimeout = DefaultJobTimeout
	}
	if o.PollInterval == 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.Workers == 0 {
		o.Workers = DefaultWorkers
	}
	if o.QueueLease == 0 {
		o.QueueLease = DefaultQueueLease
	}
	if o.CheckpointPages == 0 {
		o.CheckpointPages = DefaultCheckpointPages
	}
	if o.CheckpointIdle == 0 {
		o.CheckpointIdle = DefaultCheckpointIdle
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Clock == nil {
		o.Clock = memento.SystemClock{}
	}
	return o
}

// Validate reports the first option that is out of range.
func (o Options) Validate() error {
	switch strings.ToUpper(o.Synchronous) {
	case "", "FULL", "NORMAL", "EXTRA":
	default:
		return memento.Errorf(memento.EINVALID, "synchronous must be FULL, NORMAL or EXTRA, got %q", o.Synchronous)
	}
	switch {
	case o.BusyTimeout < 0:
		return memento.Errorf(memento.EINVALID, "busy timeout must not be negative, got %s", o.BusyTimeout)
	case o.ReadConns < 0:
		return memento.Errorf(memento.EINVALID, "read connections must not be negative, got %d", o.ReadConns)
	case o.MaxAttempts < 0:
		return memento.Errorf(memento.EINVALID, "max attempts must not be negative, got %d", o.MaxAttempts)
	case o.JobTimeout < 0:
		return memento.Errorf(memento.EINVALID, "job timeout must not be negative, got %s", o.JobTimeout)
	case o.PollInterval < 0:
		return memento.Errorf(memento.EINVALID, "poll interval must not be negative, got %s", o.PollInterval)
	case o.Workers < 0:
		return memento.Errorf(memento.EINVALID, "workers must not be negative, got %d", o.Workers)
	case o.QueueLease < 0:
		return memento.Errorf(memento.EINVALID, "queue lease must not be negative, got %s", o.QueueLease)
	case o.CheckpointIdle < 0:
		return memento.Errorf(memento.EINVALID, "checkpoint idle time must not be negative, got %s", o.CheckpointIdle)
	}
	return nil
}

// DB is the embedded store: one SQLite file holding users, threads,
// messages, events, titles and the job queue. It is safe for concurrent use.
type DB struct {
	path   string
	opts   Options
	clock  memento.Clock
	logger *slog.Logger

	// write is the single-connection pool every write and the queue use;
	// read is the read-only pool of every read. For ":memory:" they are the
	// same pool, since a memory database lives in one connection.
	write *sql.DB
	read  *sql.DB

	// modelPart is the largest part of a profile model saved in parts
	// (modelPartBytes; tests make it smaller).
	modelPart int

	// commits is the group committer of the writes that go through
	// groupTx (commit.go); ckpt the background checkpointer of the
	// write-ahead log (checkpoint.go), nil for a memory database or when
	// Options.CheckpointPages is negative.
	commits *committer
	ckpt    *walCheckpointer
	// writeStmts are the writes' prepared statements, by their SQL
	// text: the hot ones prepared at Open, others as they turn out to
	// be run often (commit.go).
	writeStmts *stmtCache
	// syncLevels are the writer's synchronous settings for the writes
	// waited on and for the background jobs' (durability.go).
	syncLevels *syncLevels
	// logSync syncs the log after the commits of the committer's
	// batches that are waited on (logsync.go); nil for a memory
	// database or when those batches do not wait for the disk.
	logSync *logSyncer
	// ftsMerge merges the full-text indexes' segments in the background
	// (ftsmerge.go).
	ftsMerge *ftsMerger

	// inserter is an insert-only River client, so jobs can be enqueued
	// whether or not the queue was started.
	inserter *river.Client[*sql.Tx]
	// coalesce remembers the last job of each coalescing key (queue.go).
	coalesce coalescer

	mu sync.Mutex
	// handlers are the registered job handlers, written under mu and
	// handlersMu, read under either: enqueuing reads them (maxAttempts)
	// inside a write transaction, while Start holds mu and waits for the
	// writer, so enqueuing must not take mu.
	handlersMu sync.RWMutex
	handlers   map[string]handler
	worker     *river.Client[*sql.Tx] // nil unless started
	proc       *queueProcess          // the started queue's lease; nil unless started
	// backlog is the users' backlogs' handler and locks (backlog.go).
	backlog backlogState
	// prefCache keeps the preferences the last write of each user left
	// (preference.go).
	prefCache prefCache

	// readStmts caches statements prepared on the read pool, by SQL text,
	// for the recall path (memory_recall.go), which would otherwise spend
	// a fifth of its time parsing.
	readStmts sync.Map
	// kept counts what the connections' statement caches ran (stmtconn.go).
	kept keptStats
	// unprepared notes the queries read transactions ran unprepared, for
	// readTx to prepare after the transaction (memory_recall.go txStmt).
	unprepared sync.Map

	// backfill resolves the periods of rows stored before migration 0013
	// (periods.go); nil when none were left at Open.
	backfill *task.Task
	// intake takes the appends off the writer (intake.go); nil unless
	// Options.Intake, and for a memory database.
	intake *intake
}

// Open opens (creating if needed) the store in the SQLite file at path and
// brings its schema up to date: the store's own migrations, then River's.
// A path of ":memory:" gives a private in-memory store, which suits only
// short tests; prefer a file in a temporary directory.
func Open(ctx context.Context, path string, opts Options) (*DB, error) {
	if path == "" {
		return nil, memento.Errorf(memento.EINVALID, "database path is required")
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	db := &DB{path: path, opts: opts, clock: opts.Clock, logger: opts.Logger, handlers: map[string]handler{}, modelPart: modelPartBytes}

	memory := path == ":memory:"
	if !memory {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
		db.path = abs
	}
	var intakePath string
	if !memory {
		var err error
		if intakePath, err = db.intakePath(opts.IntakePath); err != nil {
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
	}

	var err error
	db.syncLevels = newSyncLevels(db.opts.Synchronous, memory)
	db.write, err = openCached(db.dsn(true, memory), &db.kept)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// River's SQLite driver and SQLite itself want exactly one writer:
	// a second writing connection would only wait for the lock or fail
	// with SQLITE_BUSY. Keeping the connection open forever also keeps a
	// memory database alive.
	db.write.SetMaxOpenConns(1)
	db.write.SetMaxIdleConns(1)
	db.write.SetConnMaxLifetime(0)
	db.write.SetConnMaxIdleTime(0)

	if err := db.migrate(ctx); err != nil {
		db.write.Close()
		return nil, err
	}
	if err := db.prepareWrites(ctx); err != nil {
		db.write.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if !memory && db.syncLevels.switches() {
		db.logSync = newLogSyncer(db.path)
	}
	var pages *logPages
	if !memory {
		pages = openLogPages(db.path)
	}
	db.commits = newCommitter(db.pinBatch, func(ctx context.Context) {
		db.boundWAL(ctx)
		db.writeStmts.prepareWanted(ctx)
	}, db.logSync, pages)

	if memory {
		db.read = db.write
	} else {
		db.read, err = openCached(db.dsn(false, false), &db.kept)
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("open %s for reading: %w", path, err)
		}
		db.read.SetMaxOpenConns(opts.ReadConns)
		db.read.SetMaxIdleConns(opts.ReadConns)
		if err := db.read.PingContext(ctx); err != nil {
			db.Close()
			return nil, fmt.Errorf("open %s for reading: %w", path, err)
		}
		if opts.CheckpointPages > 0 {
			if err := db.startCheckpointer(); err != nil {
				db.Close()
				return nil, fmt.Errorf("open %s: %w", path, err)
			}
		}
	}

	db.inserter, err = river.NewClient(riversqlite.New(db.write), &river.Config{
		Logger:      db.logger,
		MaxAttempts: opts.MaxAttempts,
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: create job inserter: %w", path, err)
	}
	if err := db.startBackfill(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// Last: its writes go through the committer, which reads what Open
	// set up (the checkpointer).
	db.startFTSMerger()
	if !memory && (opts.Intake || opts.IntakePath != "") {
		if db.intake, err = db.openIntakeAt(ctx, intakePath); err != nil {
			db.Close()
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
	} else if !memory {
		if err := db.drainIntake(ctx); err != nil {
			db.Close()
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
	}
	return db, nil
}

// dsn returns the data source name of the writer or of the readers.
func (db *DB) dsn(writer, memory bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(db.opts.BusyTimeout.Milliseconds(), 10)+")")
	q.Add("_pragma", "foreign_keys(1)")
	if writer {
		if !memory {
			q.Add("_pragma", "journal_mode(WAL)")
			if db.opts.CheckpointPages > 0 {
				// The background checkpointer checkpoints instead of
				// the commit that crosses the threshold; when the log
				// restarts, a file longer than the limit is cut back
				// (checkpoint.go).
				q.Add("_pragma", "wal_autocheckpoint(0)")
				q.Add("_pragma", "journal_size_limit("+strconv.FormatInt(db.walLimit(), 10)+")")
			}
		}
		// The writes nobody waits on commit at this level; the others
		// switch to Options.Synchronous (durability.go).
		q.Add("_pragma", "synchronous("+newSyncLevels(db.opts.Synchronous, memory).lazy+")")
		// Statement journals in memory: every request of a group commit
		// runs in a savepoint, which journals each page it changes, and
		// SQLite would spill a journal past 64 KiB to a temporary file
		// (a pwrite per page; a tenth of an append's CPU).
		q.Add("_pragma", "temp_store(MEMORY)")
		q.Set("_txlock", "immediate")
	} else {
		q.Set("mode", "ro")
	}
	if memory {
		return ":memory:?" + q.Encode()
	}
	// A file: URI lets SQLite see mode=ro; the path is escaped so that a
	// '?' or '#' in it cannot start the query.
	return "file:" + (&url.URL{Path: db.path}).EscapedPath() + "?" + q.Encode()
}

// Path returns the absolute path of the database file, or ":memory:".
func (db *DB) Path() string { return db.path }

// Close stops the queue if it runs (giving running jobs 10 seconds), lets
// the writes already sent commit, stops the checkpointer and closes the
// database. The DB must not be used afterwards: writes fail with
// EUNAVAILABLE.
func (db *DB) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var errs []error
	db.backfill.Stop()
	if err := db.Stop(ctx); err != nil {
		errs = append(errs, err)
	}
	if db.intake != nil {
		// Before the committer: the mover writes what it can through
		// it.
		db.intake.close()
	}
	if db.ftsMerge != nil {
		db.ftsMerge.close()
	}
	if db.commits != nil {
		db.commits.close()
	}
	if db.logSync != nil {
		// After the committer: its last batches' answers wait for the
		// last sync.
		db.logSync.close()
	}
	if db.ckpt != nil {
		if err := db.ckpt.stop(); err != nil {
			errs = append(errs, err)
		}
	}
	db.writeStmts.close()
	if db.read != nil && db.read != db.write {
		if err := db.read.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close readers: %w", err))
		}
	}
	if db.write != nil {
		if err := db.write.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close writer: %w", err))
		}
	}
	// Last: closing a descriptor of a file releases the process's SQLite
	// locks on it (walCheckpointer.closeFiles).
	if db.ckpt != nil {
		db.ckpt.closeFiles()
	}
	if db.commits != nil {
		db.commits.closeFiles()
	}
	return errors.Join(errs...)
}

// Ping reports whether the database answers. Errors: EUNAVAILABLE.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	if err := db.read.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		return memento.WrapError(memento.EUNAVAILABLE, err, "The database cannot be reached.")
	}
	return nil
}

// writeTx runs fn in a write transaction of its own (BEGIN IMMEDIATE on
// the single writer connection) and commits it when fn returns nil. The
// writes of the pipeline and the message log go through groupTx instead,
// which shares commits among concurrent writers.
func (db *DB) writeTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return db.writeTxAt(ctx, true, fn)
}

// writeTxAt is writeTx, committed without waiting for the disk unless
// durable (durability.go).
func (db *DB) writeTxAt(ctx context.Context, durable bool, fn func(tx *sql.Tx) error) error {
	db.boundWAL(ctx)
	pinned, err := db.pinWriter(ctx, durable)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer pinned.release()
	tx, err := pinned.conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// readTx runs fn in a read transaction, so that its queries see one
// snapshot of the database.
func (db *DB) readTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	foreground(ctx)
	tx, err := db.read.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin read: %w", err)
	}
	err = func() error {
		defer tx.Rollback()
		return fn(tx)
	}()
	// The connection is back in the pool: now statements the transaction
	// ran unprepared can be prepared without waiting on ourselves.
	db.prepareNoted(ctx)
	return err
}

// now returns the clock's time in UTC.
func (db *DB) now() time.Time { return db.clock.Now().UTC() }

// Timestamps are stored as INTEGER nanoseconds since the Unix epoch, UTC.
// They sort as they should, compare exactly and need no parsing.

// nanos encodes t for the database.
func nanos(t time.Time) int64 { return t.UnixNano() }

// fromNanos decodes a stored timestamp.
func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

// newID returns prefix followed by 16 random bytes in hex.
func newID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return prefix + hex.EncodeToString(b[:])
}

// maxIDLen bounds client-supplied ids so that a runaway client cannot fill
// indexes with megabyte keys.
const maxIDLen = memento.MaxIDLen

// scope is checkScope for a method that reads or changes the user's
// data: it also waits until the messages of the user acknowledged before
// the call have reached the store from the intake (intake.go).
func (db *DB) scope(ctx context.Context, s memento.Scope) (memento.Scope, error) {
	s, err := checkScope(s)
	if err != nil {
		return s, err
	}
	return s, db.intake.settle(ctx, s)
}

// checkScope validates s (memento.CheckID: an id that is not UTF-8, or
// holds control characters, would be stored and never found again) and
// fills in the default tenant.
func checkScope(s memento.Scope) (memento.Scope, error) {
	if s.Tenant == "" {
		s.Tenant = memento.DefaultTenant
	}
	if err := memento.CheckID("user id", s.User); err != nil {
		return s, err
	}
	if err := memento.CheckID("tenant id", s.Tenant); err != nil {
		return s, err
	}
	return s, nil
}

// checkThread validates a thread id (memento.CheckID).
func checkThread(thread string) error {
	return memento.CheckID("thread id", thread)
}

// foreground tells the background's processors (memento.Foreground) that
// a request is served, when ctx is not a background job's.
func foreground(ctx context.Context) {
	if !jobctx.Is(ctx) {
		memento.Foreground(ctx)
	}
}
