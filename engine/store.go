package engine

import (
	"context"
	"log/slog"
	"net/url"
	"strconv"
	"strings"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/experiment"
	mhttp "github.com/memento-ai/memento/http"
	"github.com/memento-ai/memento/mcp"
	"github.com/memento-ai/memento/pipeline"
	"github.com/memento-ai/memento/postgres"
	"github.com/memento-ai/memento/profile"
	"github.com/memento-ai/memento/recall"
	"github.com/memento-ai/memento/snapshot"
	"github.com/memento-ai/memento/sqlite"
)

// Store is everything the engine keeps: the root package's services and
// what the components built on them read and write. *sqlite.DB and
// *postgres.DB are both one, and the conformance suite (storetest) holds
// both to the same behaviour.
type Store interface {
	memento.UserService
	memento.MessageLog
	memento.ThreadService
	memento.EventService
	memento.TitleService
	memento.MemoryService
	memento.MemoryWriter
	memento.RecallStore
	memento.RecallCorpus
	memento.PreferenceService
	memento.ProfileService
	memento.ProfileModelService
	memento.Queue
	memento.KeyStore
	memento.LagReporter
	memento.UserExporter
	memento.UserImporter
	memento.VectorStore
	memento.RecallChangePruner
	memento.Pinger

	pipeline.Store
	pipeline.Ordered
	agent.AttributeMemories
	profile.MessageReader
	profile.Restorer
	profile.EventsSince
	snapshot.Users
	snapshot.ChangeSource
	recall.AssemblerStore
	mhttp.MemoryStore
	mcp.Store

	// Experiments keeps the studies of `memento experiment`.
	Experiments() experiment.Store
	// MemoryProcessed reports whether the message's pipeline run is
	// recorded.
	MemoryProcessed(ctx context.Context, s memento.Scope, message string) (bool, error)
	// JobStats counts the jobs by kind and state, with the queue's lag.
	JobStats(ctx context.Context) (*memento.JobStats, error)
	// Close closes the store; the queue must have stopped.
	Close() error
}

// Kinds of store, as StoreKind names them.
const (
	KindSQLite   = "sqlite"
	KindPostgres = "postgres"
)

// StoreKind says which store a --db value names: a postgres:// or
// postgresql:// URL is PostgreSQL, anything else the path of an SQLite
// file.
func StoreKind(dsn string) string {
	if i := strings.Index(dsn, "://"); i > 0 {
		switch strings.ToLower(dsn[:i]) {
		case "postgres", "postgresql":
			return KindPostgres
		}
	}
	return KindSQLite
}

// CheckStoreURL checks a --db value without opening it: an SQLite path
// that is not empty, or a PostgreSQL URL that parses, with a host, and
// whose Memento parameters (search_path, pool_max_conns) hold sensible
// values. Errors: EINVALID naming the setting.
func CheckStoreURL(dsn string) error {
	if strings.TrimSpace(dsn) == "" {
		return memento.Errorf(memento.EINVALID, "--db (MEMENTO_DB) must name an SQLite file or a postgres:// URL, got an empty value")
	}
	if StoreKind(dsn) == KindSQLite {
		if i := strings.Index(dsn, "://"); i > 0 && !strings.HasPrefix(strings.ToLower(dsn), "file:") {
			return memento.Errorf(memento.EINVALID, "--db (MEMENTO_DB) %s: the scheme %q is not a store; give an SQLite file path or a postgres:// URL", RedactURL(dsn), dsn[:i])
		}
		return nil
	}
	_, _, err := PostgresOptions(dsn)
	return err
}

// PostgresOptions splits a PostgreSQL URL into the URL pgx connects with
// and the store's options that the URL carries: search_path (the schema
// that holds Memento's and River's tables, created if missing) and
// pool_max_conns (the pool's size). Errors: EINVALID.
func PostgresOptions(dsn string) (string, postgres.Options, error) {
	var opts postgres.Options
	u, err := url.Parse(dsn)
	if err != nil {
		return "", opts, memento.Errorf(memento.EINVALID, "--db (MEMENTO_DB) is not a valid PostgreSQL URL: %s", strings.ReplaceAll(err.Error(), dsn, RedactURL(dsn)))
	}
	if u.Host == "" && u.Query().Get("host") == "" {
		return "", opts, memento.Errorf(memento.EINVALID, "--db (MEMENTO_DB) %s names no host; write postgres://user@host:5432/database", RedactURL(dsn))
	}
	q := u.Query()
	for _, k := range []string{"search_path", "pool_max_conns"} {
		if q.Has(k) && strings.TrimSpace(q.Get(k)) == "" {
			return "", opts, memento.Errorf(memento.EINVALID, "--db (MEMENTO_DB) %s is given without a value; give one or leave the parameter out", k)
		}
	}
	if v := q.Get("search_path"); v != "" {
		if err := (postgres.Options{Schema: v}).Validate(); err != nil {
			return "", opts, memento.Errorf(memento.EINVALID, "--db (MEMENTO_DB) search_path: %s", memento.ErrorMessage(err))
		}
		opts.Schema = v
		q.Del("search_path")
	}
	if v := q.Get("pool_max_conns"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10000 {
			return "", opts, memento.Errorf(memento.EINVALID, "--db (MEMENTO_DB) pool_max_conns must be a whole number from 1 to 10000, got %q", v)
		}
		opts.MaxConns = n
		q.Del("pool_max_conns")
	}
	u.RawQuery = q.Encode()
	return u.String(), opts, nil
}

// RedactURL hides the password of a URL, for messages and logs.
func RedactURL(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return dsn
	}
	return u.Redacted()
}

// StoreOptions are what Open passes to the store beyond its URL.
type StoreOptions struct {
	// Workers is how many background jobs the store's queue runs at once.
	Workers int
	Logger  *slog.Logger
	// Intake and IntakePath are sqlite.Options.Intake and .IntakePath for
	// an SQLite store.
	Intake     bool
	IntakePath string
}

// OpenStore opens (and migrates) the store dsn names: PostgreSQL for a
// postgres:// or postgresql:// URL, else an SQLite file.
func OpenStore(ctx context.Context, dsn string, opts StoreOptions) (Store, error) {
	if err := CheckStoreURL(dsn); err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if StoreKind(dsn) == KindSQLite {
		db, err := sqlite.Open(ctx, dsn, sqlite.Options{Logger: opts.Logger, Workers: opts.Workers, Intake: opts.Intake, IntakePath: opts.IntakePath})
		if err != nil {
			return nil, err
		}
		return db, nil
	}
	conn, po, err := PostgresOptions(dsn)
	if err != nil {
		return nil, err
	}
	po.Workers, po.Logger = opts.Workers, opts.Logger
	db, err := postgres.Open(ctx, conn, po)
	if err != nil {
		return nil, err
	}
	return db, nil
}

var (
	_ Store = (*sqlite.DB)(nil)
	_ Store = (*postgres.DB)(nil)
)
