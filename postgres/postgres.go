package postgres

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/internal/jobctx"
	"github.com/memento-ai/memento/internal/riverup"
	"github.com/memento-ai/memento/internal/task"
)

var (
	_ memento.UserService       = (*DB)(nil)
	_ memento.MessageLog        = (*DB)(nil)
	_ memento.ThreadService     = (*DB)(nil)
	_ memento.EventService      = (*DB)(nil)
	_ memento.MemoryService     = (*DB)(nil)
	_ memento.MemoryWriter      = (*DB)(nil)
	_ memento.MemoryBatchWriter = (*DB)(nil)
	_ memento.RecallStore       = (*DB)(nil)
	_ memento.RecallCorpus      = (*DB)(nil)
	_ memento.Queue             = (*DB)(nil)
	_ memento.Pinger            = (*DB)(nil)
)

// Defaults of Options.
const (
	DefaultMaxConns     = 16
	DefaultMaxAttempts  = 5
	DefaultJobTimeout   = 30 * time.Second
	DefaultPollInterval = time.Second
	DefaultWorkers      = 16
)

// Options configure a store. Zero values take the defaults.
type Options struct {
	// Schema is the PostgreSQL schema that holds the store's tables and
	// River's; it is created if missing. Empty uses the connection's
	// search_path (normally "public"). Tests give each store a schema of
	// its own.
	Schema string
	// MaxConns bounds the connection pool of this process. Default 16.
	MaxConns int
	// MaxAttempts is how many times a job runs before it is failed, unless
	// the JobRequest or the kind's JobOptions says otherwise. Default 5.
	MaxAttempts int
	// JobTimeout bounds one attempt of a job unless the kind's JobOptions
	// says otherwise. Default 30s.
	JobTimeout time.Duration
	// RetryDelay returns how long to wait before retrying a job whose
	// attempt number attempt failed. Nil keeps River's backoff.
	RetryDelay func(attempt int) time.Duration
	// PollInterval is how often a started queue polls for jobs besides
	// River's LISTEN/NOTIFY wake-ups, which make a job inserted by any
	// process start at once. Default 1s.
	PollInterval time.Duration
	// Workers is how many jobs a started queue of this process runs at
	// once. Default 16.
	Workers int
	// QueueLease is how long a started queue's heartbeat vouches for it:
	// the jobs of a process that has not renewed it for that long are
	// made available to the others (lease.go). Default 15s.
	QueueLease time.Duration
	// Logger receives the queue's and the store's diagnostics. Default
	// slog.Default().
	Logger *slog.Logger
	// Clock stamps created and updated times and the times of messages and
	// events given without one. Default memento.SystemClock.
	Clock memento.Clock
}

// schemaName is what Options.Schema may be: River's rule for schema names.
var schemaName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]{0,40}$`)

func (o Options) withDefaults() Options {
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.JobTimeout <= 0 {
		o.JobTimeout = DefaultJobTimeout
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.QueueLease <= 0 {
		o.QueueLease = DefaultQueueLease
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Clock == nil {
		o.Clock = memento.SystemClock{}
	}
	return o
}

// Validate checks the options. Errors: EINVALID.
func (o Options) Validate() error {
	if o.Schema != "" && !schemaName.MatchString(o.Schema) {
		return memento.Errorf(memento.EINVALID, "schema %q must be letters, digits and underscores, starting with a letter, at most 41 bytes", o.Schema)
	}
	if o.MaxConns < 0 || o.Workers < 0 || o.MaxAttempts < 0 {
		return memento.Errorf(memento.EINVALID, "pool size, workers and attempts must not be negative")
	}
	return nil
}

// DB is the PostgreSQL store. It is safe for concurrent use, and any
// number of processes may share one database.
type DB struct {
	pool     *pgxpool.Pool
	opts     Options
	logger   *slog.Logger
	clock    memento.Clock
	inserter *river.Client[pgx.Tx]

	mu       sync.Mutex
	handlers map[string]handler
	worker   *river.Client[pgx.Tx]
	proc     *queueProcess
	// backlog is the users' backlogs' handler and locks (backlog.go).
	backlog backlogState

	// backfill resolves the periods of rows stored before migration 0007
	// (periods.go); nil when none were left at Open.
	backfill *task.Task
}

// Open connects to the database at url (postgres://...), creates the
// schema if needed, applies the store's migrations and River's, and
// returns the store. Errors: EINVALID for bad options or URL,
// EUNAVAILABLE when the server cannot be reached.
func Open(ctx context.Context, url string, opts Options) (*DB, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, memento.WrapError(memento.EINVALID, err, "postgres URL: %v", err)
	}
	cfg.MaxConns = int32(opts.MaxConns)
	if opts.Schema != "" {
		cfg.ConnConfig.RuntimeParams["search_path"] = opts.Schema
	}
	if opts.Schema != "" {
		// The schema must exist before a connection uses it.
		conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig.Copy())
		if err != nil {
			return nil, memento.WrapError(memento.EUNAVAILABLE, err, "connect to postgres: %v", err)
		}
		_, err = conn.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{opts.Schema}.Sanitize())
		conn.Close(ctx)
		if err != nil && !isUniqueViolation(err) {
			return nil, fmt.Errorf("create schema %s: %w", opts.Schema, err)
		}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, memento.WrapError(memento.EUNAVAILABLE, err, "connect to postgres: %v", err)
	}
	db := &DB{pool: pool, opts: opts, logger: opts.Logger, clock: opts.Clock, handlers: map[string]handler{}}
	if err := db.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	db.inserter, err = river.NewClient(riverpgxv5.New(pool), &river.Config{Logger: opts.Logger, Schema: opts.Schema, MaxAttempts: opts.MaxAttempts})
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres store: job inserter: %w", err)
	}
	if err := db.startBackfill(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres store: %w", err)
	}
	db.warnWithoutAutovacuum(ctx)
	return db, nil
}

// warnWithoutAutovacuum logs a warning when the server's autovacuum is
// off: the backlog's rows, added and deleted with every message, then
// stay in its table as dead rows that every read of it skips, and the
// planner keeps the statistics of the tables' first rows (the store
// analyses its tables itself only when asked, Analyze: after a bench's
// bulk build and after a migration into it).
func (db *DB) warnWithoutAutovacuum(ctx context.Context) {
	var on string
	if err := db.pool.QueryRow(ctx, `SELECT current_setting('autovacuum')`).Scan(&on); err != nil || on == "on" {
		return
	}
	db.logger.WarnContext(ctx, "postgres: autovacuum is off on this server; the store's tables are neither vacuumed nor analysed, and reads of the job backlog slow down as it churns (turn autovacuum on, or run VACUUM ANALYZE regularly)",
		"autovacuum", on)
}

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one embedded SQL file, NNNN_what.sql.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in the order of their
// numbers.
func migrations() ([]migration, error) {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	return readMigrations(sub)
}

// readMigrations reads the NNNN_what.sql files of fsys, sorted by number.
// Numbers need not be consecutive: engineers working apart take numbers
// ahead, and a gap only means that number is not used (yet). Two files of
// one number are refused, since only the first would ever be applied.
func readMigrations(fsys fs.FS) ([]migration, error) {
	entries, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	seen := map[int]string{}
	for _, base := range entries {
		v, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must start with a positive number", base)
		}
		if other, ok := seen[v]; ok {
			return nil, fmt.Errorf("migrations %s and %s have the same number", other, base)
		}
		seen[v] = base
		b, err := fs.ReadFile(fsys, base)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: base, sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// migrationLock is the advisory lock key that serialises migrations of
// processes starting at once on one database.
const migrationLock = 0x6d656d656e746f // "memento"

// migrate applies River's migrations, then the store's not yet recorded
// in schema_migrations, each in its own transaction. River's come first
// because the store's may index River's tables (0006). Processes opening
// one database at once take turns through an advisory lock.
func (db *DB) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return fmt.Errorf("read migrations: %w", err)
	}
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return memento.WrapError(memento.EUNAVAILABLE, err, "connect to postgres: %v", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(migrationLock)); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	defer conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, int64(migrationLock)) //nolint:errcheck
	migrator, err := rivermigrate.New(riverpgxv5.New(db.pool), &rivermigrate.Config{Logger: db.logger, Schema: db.opts.Schema})
	if err != nil {
		return fmt.Errorf("migrate job queue: %w", err)
	}
	if err := riverup.Up(ctx, migrator); err != nil {
		return err
	}
	return applyMigrations(ctx, conn.Conn(), ms)
}

// applyMigrations applies, in the order given, each migration whose
// number schema_migrations does not hold, and records it. A migration
// numbered below one applied earlier (a gap filled later) is applied all
// the same.
func applyMigrations(ctx context.Context, conn *pgx.Conn, ms []migration) error {
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, m := range ms {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM schema_migrations WHERE version = $1`, m.version).Scan(&n); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if n > 0 {
			continue
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`, m.version, m.name, nanos(time.Now()))
			return err
		})
		if err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
	}
	return nil
}

// Close stops the queue if it runs and closes the connection pool.
func (db *DB) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db.backfill.Stop()
	err := db.Stop(ctx)
	db.pool.Close()
	return err
}

// Pool returns the store's connection pool, for tools and tests.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// Ping reports whether the database answers. Errors: EUNAVAILABLE.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.pool.Ping(ctx); err != nil {
		return memento.WrapError(memento.EUNAVAILABLE, err, "postgres does not answer: %v", err)
	}
	return nil
}

// userTx runs fn in a read-write transaction that first takes the
// advisory lock of the user s, held until the transaction ends. Every
// write of a user's data goes through it, which gives three things: the
// user's writes are serialised (a thread's sequence numbers are read and
// advanced by one transaction at a time, so concurrent turns on a thread
// both land, in order), their changes enter the recall change log in
// commit order (recall.go), and since the lock is each transaction's first,
// two of them never wait for each other's row locks in opposite orders.
//
// Writers of different users share only the keyword index's counters
// (search_stats, term_stats), and those only when more transactions write
// at once than there are shards of them: each takes a shard no other
// transaction under way holds (search_shard, migration 0013). A job's
// transaction writes them only as it commits (migration 0015). Sharing
// one, they lock its rows in term order within a statement but not
// across statements; a deadlock among them (PostgreSQL ends one of the
// transactions) or a serialization failure runs the whole transaction
// again, up to txAttempts times. fn must therefore reset what it reports
// at its start, as every caller does.
//
// A background job's transaction (jobctx) commits without waiting for
// its log records to reach the disk (synchronous_commit off, set in the
// same statement as the lock): its results derive from committed data and
// its completion commits after them, and PostgreSQL's log replays a
// prefix of the commits, so a crash that takes them takes the completion
// too and the job runs again. Every other transaction waits, as before.
//
// BEGIN and the lock go to the server as one simple query, in one round
// trip (beginUser), where they were two: under load each round trip is a
// wake-up of the request's goroutine that may wait for a processor.
func (db *DB) userTx(ctx context.Context, s memento.Scope, fn func(tx pgx.Tx) error) error {
	begin := pgx.TxOptions{BeginQuery: beginUser(userKey(s), jobctx.Is(ctx))}
	foreground(ctx)
	times := memento.WriteTimesFrom(ctx)
	start := time.Now()
	var locked time.Time
	var err error
	for attempt := 1; attempt <= txAttempts; attempt++ {
		// A BEGIN whose lock fails leaves its connection in a failed
		// transaction, which the pool closes rather than hands out.
		err = pgx.BeginTxFunc(ctx, db.pool, begin, func(tx pgx.Tx) error {
			locked = time.Now()
			return fn(tx)
		})
		if !retryable(err) || ctx.Err() != nil {
			if times != nil && err == nil {
				// Waited: a connection, BEGIN and the user's lock (the
				// earlier runs of a retried transaction too); Wrote: the
				// statements and the commit, which waits for the log's
				// flush itself.
				end := time.Now()
				times.Waited, times.Wrote, times.Synced = locked.Sub(start), end.Sub(locked), 0
			}
			return err
		}
		db.logger.Debug("postgres: transaction retried", "attempt", attempt, "err", err)
	}
	return err
}

// txAttempts bounds the runs of a transaction that deadlocked.
const txAttempts = 4

// retryable reports whether err is a deadlock or a serialization failure,
// after which the transaction can simply run again.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}

// readTx runs fn in a read-only transaction with one snapshot of the
// database (REPEATABLE READ).
func (db *DB) readTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	foreground(ctx)
	return pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
}

// userKey names a user for its advisory lock.
func userKey(s memento.Scope) string { return s.Tenant + "\x1f" + s.User }

// beginUser is the simple query that begins a user's transaction and takes
// the user's advisory lock (of hashtextextended(key, 0), as the statements
// that take it with key as a parameter do), and for a background job's
// transaction turns off its wait for the log's flush and has its changes
// of the keyword index's counters added up and applied at its commit
// (memento.search_fold, migration 0015). A simple query takes no
// parameters, so the key is spelled in hex, which needs no quoting.
func beginUser(key string, job bool) string {
	lock := "BEGIN; SELECT pg_advisory_xact_lock(hashtextextended(convert_from(decode('" + hex.EncodeToString([]byte(key)) + "', 'hex'), 'UTF8'), 0))"
	if job {
		lock += ", set_config('synchronous_commit', 'off', true), set_config('memento.search_fold', 'on', true)"
	}
	return lock
}

// sendBatch sends b in tx, one round trip, and reads its answers with
// read; the first error answers, the batch's own included.
func sendBatch(ctx context.Context, tx pgx.Tx, b *pgx.Batch, read func(pgx.BatchResults) error) error {
	br := tx.SendBatch(ctx, b)
	err := read(br)
	if cerr := br.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return err
}

// now returns the clock's time in UTC.
func (db *DB) now() time.Time { return db.clock.Now().UTC() }

// nanos encodes t for the database: nanoseconds since the Unix epoch.
func nanos(t time.Time) int64 { return t.UnixNano() }

// fromNanos decodes a stored timestamp.
func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

// newID returns prefix followed by 16 random bytes in hex.
func newID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// checkScope validates s and fills in the default tenant.
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

// checkThread validates a thread id.
func checkThread(thread string) error { return memento.CheckID("thread id", thread) }

// isUniqueViolation reports whether err is PostgreSQL's unique_violation.
func isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// foreground tells the background's processors (memento.Foreground) that
// a request is served, when ctx is not a background job's.
func foreground(ctx context.Context) {
	if !jobctx.Is(ctx) {
		memento.Foreground(ctx)
	}
}
