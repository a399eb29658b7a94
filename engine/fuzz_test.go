package engine

import (
	"net/url"
	"strings"
	"testing"

	"github.com/memento-ai/memento"
)

// FuzzCheckURL feeds the check of the model servers' URLs (--llm-url,
// --embed-url) any text: it refuses with EINVALID naming the setting, or
// the URL is http(s) with a host.
func FuzzCheckURL(f *testing.F) {
	for _, seed := range []string{"http://127.0.0.1:11434/v1", "https://api.openai.com/v1", "localhost:8080", "ftp://h", "http://", "", "http://[::1", "HTTP://H"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		err := CheckHTTPURL("--llm-url", raw)
		if err != nil {
			if memento.ErrorCode(err) != memento.EINVALID || !strings.Contains(memento.ErrorMessage(err), "--llm-url") {
				t.Fatalf("CheckHTTPURL(%q) = %v, want EINVALID naming --llm-url", raw, err)
			}
			return
		}
		u, perr := url.Parse(raw)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			t.Fatalf("CheckHTTPURL accepted %q", raw)
		}
	})
}

// FuzzCheckStoreURL feeds the --db check any text: it refuses with
// EINVALID naming --db and never shows a password, or the value is an
// SQLite path or a PostgreSQL URL with a host whose Memento parameters
// were taken out of the URL pgx connects with.
func FuzzCheckStoreURL(f *testing.F) {
	for _, seed := range []string{
		"./memento.db", "/var/lib/memento/memento.db", "file:memento.db", "",
		"postgres://postgres@127.0.0.1:5432/test?sslmode=disable",
		"postgresql://u:secret@db.example.com/memento?search_path=tenant_a&pool_max_conns=8",
		"postgres:///nohost", "postgres://u:secret@h/db?pool_max_conns=0", "postgres://h/db?search_path=bad-name",
		"POSTGRES://h/db", "mysql://h/db", "postgres://u:p@[::1", "postgres://%zz",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		err := CheckStoreURL(dsn)
		if err != nil {
			if memento.ErrorCode(err) != memento.EINVALID || !strings.Contains(memento.ErrorMessage(err), "--db") {
				t.Fatalf("CheckStoreURL(%q) = %v, want EINVALID naming --db", dsn, err)
			}
			if u, perr := url.Parse(dsn); perr == nil && u.User != nil {
				if p, ok := u.User.Password(); ok && len(p) > 3 && strings.Contains(memento.ErrorMessage(err), ":"+p+"@") {
					t.Fatalf("CheckStoreURL(%q) shows the password: %v", dsn, err)
				}
			}
			return
		}
		if StoreKind(dsn) == KindSQLite {
			if strings.TrimSpace(dsn) == "" {
				t.Fatalf("CheckStoreURL accepted an empty value")
			}
			return
		}
		conn, opts, perr := PostgresOptions(dsn)
		if perr != nil {
			t.Fatalf("CheckStoreURL accepted %q, which postgresOptions refuses: %v", dsn, perr)
		}
		u, perr := url.Parse(conn)
		if perr != nil {
			t.Fatalf("the connection URL %q of %q does not parse: %v", conn, dsn, perr)
		}
		if u.Query().Has("search_path") || u.Query().Has("pool_max_conns") {
			t.Fatalf("the connection URL %q still carries Memento's parameters", conn)
		}
		if opts.MaxConns < 0 || opts.MaxConns > 10000 {
			t.Fatalf("pool size %d from %q", opts.MaxConns, dsn)
		}
	})
}
