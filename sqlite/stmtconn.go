package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"reflect"
	"strings"
	"sync/atomic"

	sqlitedrv "modernc.org/sqlite"
)

// A connection that keeps the statements it runs often.
//
// Every query handed to a connection as text (tx.ExecContext(ctx, "…"),
// River's own queries, the reads that are not prepared by hand) is parsed
// by SQLite again each time: the driver prepares it, runs it once and
// finalizes it. River's fetches, completions and inserts run on the one
// writer this way, and parsing took 6 % of the processor time in the
// queue's profile at 1.1 M memories (0.6 % with the kept statements). stmtConn keeps, per connection,
// the statements it has seen stmtConnLearnAfter times, and runs them again
// without parsing. A kept statement serves one call at a time: a query
// whose rows are still open when the same text runs again (a nested read)
// runs the second one the ordinary way.
//
// database/sql never uses a connection from two goroutines at once, and
// closes rows under the connection's lock, so stmtConn needs no lock of
// its own.

// Bounds of a connection's kept statements: at most stmtConnMax (texts
// built with a variable number of parameters must not fill memory), and a
// text is kept once it has run stmtConnLearnAfter times.
const (
	stmtConnMax        = 256
	stmtConnLearnAfter = 2
)

// keptStats counts the calls a pool's connections ran from kept
// statements (hits) and the statements they kept.
type keptStats struct {
	hits, kept atomic.Int64
}

// openCached opens dsn with the connections' statement caches, counting
// in stats.
func openCached(dsn string, stats *keptStats) (*sql.DB, error) {
	base, err := sqlitedrv.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(stmtConnector{base, stats}), nil
}

// stmtConnector opens stmtConns.
type stmtConnector struct {
	base  driver.Connector
	stats *keptStats
}

func (c stmtConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return newStmtConn(conn, c.stats)
}

func (c stmtConnector) Driver() driver.Driver { return c.base.Driver() }

// driverConn is what every connection the SQLite driver opens implements,
// and what stmtConn forwards.
type driverConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// stmtConn is a driver connection with its kept statements.
type stmtConn struct {
	driverConn
	stmts map[string]*keptStmt
	seen  map[string]int // texts run but not kept, with their count
	stats *keptStats
}

// keptStmt is a statement a connection keeps, and whether rows of it are
// open.
type keptStmt struct {
	stmt interface {
		driver.Stmt
		driver.StmtExecContext
		driver.StmtQueryContext
	}
	busy bool
}

func newStmtConn(c driver.Conn, stats *keptStats) (*stmtConn, error) {
	dc, ok := c.(driverConn)
	if !ok {
		c.Close()
		return nil, errors.New("sqlite: the driver's connection lacks an interface the statement cache forwards")
	}
	return &stmtConn{driverConn: dc, stmts: map[string]*keptStmt{}, seen: map[string]int{}, stats: stats}, nil
}

// Unwrap returns the driver's connection (sqlite.Limit and the like look
// through wrappers with it).
func (c *stmtConn) Unwrap() driver.Conn { return c.driverConn }

// kept returns the statement kept for query, free to run, or nil: then
// the query runs the ordinary way, and counts towards being kept.
func (c *stmtConn) kept(ctx context.Context, query string) *keptStmt {
	if ks := c.stmts[query]; ks != nil {
		if ks.busy {
			return nil
		}
		c.stats.hits.Add(1)
		return ks
	}
	if len(c.stmts) >= stmtConnMax || !keepable(query) {
		return nil
	}
	if c.seen[query]++; c.seen[query] < stmtConnLearnAfter {
		if len(c.seen) > stmtConnMax {
			// One-off texts fill the counts: start them over.
			clear(c.seen)
		}
		return nil
	}
	delete(c.seen, query)
	st, err := c.driverConn.PrepareContext(ctx, query)
	if err != nil {
		return nil // it fails again, the ordinary way, with its error
	}
	s, ok := st.(interface {
		driver.Stmt
		driver.StmtExecContext
		driver.StmtQueryContext
	})
	if !ok {
		st.Close()
		return nil
	}
	ks := &keptStmt{stmt: s}
	c.stmts[query] = ks
	c.stats.kept.Add(1)
	return ks
}

// keepable reports whether query is a statement that does all its work
// when it runs: a query or a change of rows (SELECT, INSERT, UPDATE,
// DELETE, REPLACE, WITH). Some PRAGMAs take effect while SQLite compiles
// them, so a kept "PRAGMA synchronous = FULL" would run again without
// setting anything; they, and whatever else, are parsed every time.
func keepable(query string) bool {
	q := query
	for {
		q = strings.TrimLeft(q, " \t\r\n(")
		switch {
		case strings.HasPrefix(q, "--"): // sqlc names River's queries so
			_, rest, ok := strings.Cut(q, "\n")
			if !ok {
				return false
			}
			q = rest
			continue
		case strings.HasPrefix(q, "/*"):
			_, rest, ok := strings.Cut(q[2:], "*/")
			if !ok {
				return false
			}
			q = rest
			continue
		}
		break
	}
	for _, kw := range [...]string{"SELECT", "INSERT", "UPDATE", "DELETE", "REPLACE", "WITH"} {
		if len(q) > len(kw) && strings.EqualFold(q[:len(kw)], kw) {
			switch q[len(kw)] {
			case ' ', '\t', '\r', '\n', '(':
				return true
			}
		}
	}
	return false
}

func (c *stmtConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if ks := c.kept(ctx, query); ks != nil {
		return ks.stmt.ExecContext(ctx, args)
	}
	return c.driverConn.ExecContext(ctx, query, args)
}

func (c *stmtConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	ks := c.kept(ctx, query)
	if ks == nil {
		return c.driverConn.QueryContext(ctx, query, args)
	}
	rows, err := ks.stmt.QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	ks.busy = true
	return &keptRows{Rows: rows, ks: ks}, nil
}

// Close closes the kept statements, then the connection.
func (c *stmtConn) Close() error {
	for q, ks := range c.stmts {
		ks.stmt.Close()
		delete(c.stmts, q)
	}
	return c.driverConn.Close()
}

// keptRows are the rows of a kept statement, which is free again once
// they close.
type keptRows struct {
	driver.Rows
	ks *keptStmt
}

func (r *keptRows) Close() error {
	err := r.Rows.Close()
	r.ks.busy = false
	return err
}

// The column types the driver's rows describe (sql.Rows.ColumnTypes).

func (r *keptRows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

func (r *keptRows) ColumnTypeScanType(i int) reflect.Type {
	if t, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return t.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}

func (r *keptRows) ColumnTypeNullable(i int) (nullable, ok bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeNullable); ok {
		return t.ColumnTypeNullable(i)
	}
	return false, false
}
