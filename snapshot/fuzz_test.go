package snapshot_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/snapshot"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// FuzzParseURL feeds the --snapshot URL parser any text: it refuses with
// EINVALID, or names an absolute, clean directory or a bucket with a
// prefix without slashes at its ends, and keeps the URL as given.
func FuzzParseURL(f *testing.F) {
	for _, seed := range []string{
		"file:///var/lib/memento/snapshots", "file://localhost/tmp/s", "s3://memento/prod/eu", "s3://bucket",
		"file://host/x", "file:relative/dir", "s3://key:secret@bucket/p", "s3:///nobucket", "http://x/y", "",
		"file:///tmp/../etc/./x/", "s3://b//a//", "file:///%2e%2e/x", "s3://b/%00", ":", "file:///tmp/a?x=1#f",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		loc, err := snapshot.ParseURL(raw)
		if err != nil {
			if memento.ErrorCode(err) != memento.EINVALID || !strings.Contains(memento.ErrorMessage(err), "snapshot URL") {
				t.Fatalf("ParseURL(%q) = %v, want EINVALID naming the URL", raw, err)
			}
			return
		}
		if loc.String() != raw {
			t.Fatalf("ParseURL(%q).String() = %q", raw, loc.String())
		}
		switch loc.Scheme {
		case "file":
			if !filepath.IsAbs(loc.Dir) || filepath.Clean(loc.Dir) != loc.Dir || loc.Bucket != "" {
				t.Fatalf("ParseURL(%q) = %+v: the directory is not absolute and clean", raw, loc)
			}
		case "s3":
			if loc.Bucket == "" || strings.HasPrefix(loc.Prefix, "/") || strings.HasSuffix(loc.Prefix, "/") || loc.Dir != "" {
				t.Fatalf("ParseURL(%q) = %+v: bad bucket or prefix", raw, loc)
			}
		default:
			t.Fatalf("ParseURL(%q) = scheme %q", raw, loc.Scheme)
		}
	})
}

// FuzzUserKey checks the object keys made of user and tenant ids: any id
// gives a key of safe characters under its tenant's prefix that cannot
// leave it, and the user id reads back from the key.
func FuzzUserKey(f *testing.F) {
	for _, seed := range [][2]string{{"default", "ann"}, {"acme", "ann@example.com"}, {"", "../../etc/passwd"}, {"a/b", "turn:t1#3"},
		{"t", "José 用户"}, {"t", "%2F"}, {"t", "a.json"}, {"t", "\x00\xff"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, tenant, user string) {
		if user == "" {
			return
		}
		key := snapshot.UserKey(memento.Scope{Tenant: tenant, User: user})
		if !strings.HasPrefix(key, snapshot.UsersPrefix(tenant)) || !strings.HasSuffix(key, ".json") {
			t.Fatalf("UserKey(%q, %q) = %q, not under %q", tenant, user, key, snapshot.UsersPrefix(tenant))
		}
		for _, part := range strings.Split(key, "/") {
			if part == "" || part == "." || part == ".." {
				t.Fatalf("UserKey(%q, %q) = %q holds the path element %q", tenant, user, key, part)
			}
		}
		for _, c := range key {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_%/.", c)) {
				t.Fatalf("UserKey(%q, %q) = %q holds %q", tenant, user, key, c)
			}
		}
		if got, ok := snapshot.UserFromKey(key); !ok || got != user {
			t.Fatalf("UserFromKey(%q) = %q, %v; want %q", key, got, ok, user)
		}
	})
}

// FuzzPull restores users from snapshot documents of any content: a
// document is refused with EINVALID or ECONFLICT and leaves no user
// behind, or it is restored, and the restored user's own document passes
// the format check a later restore makes.
func FuzzPull(f *testing.F) {
	ctx := context.Background()
	db := sqlitetest.Open(f)
	st, err := snapshot.OpenFile(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	snap := &snapshot.Snapshots{Store: st, Local: db}
	for _, seed := range []string{
		`{"format":"memento.user/v1","tenant":"default","user":"ann","exportedAt":"2025-05-03T10:00:00Z","threads":[{"thread":{"id":"t1"},"activeContext":{},"lastShown":[],"messages":[{"id":"m1","role":"user","text":"I love sci-fi","at":"2025-05-01T20:00:00Z"}],"summaries":[]}],"events":[],"memories":[{"id":"mem1","kind":"attribute","attribute":"LIKES","mode":"semantic","value":"sci-fi","validFrom":"2025-05-01T20:00:00Z","validTo":null,"sources":["m1"]}],"runs":[],"modes":{}}`,
		`{"format":"memento.user/v1","threads":[{"thread":{"id":"t1"},"messages":[{"id":"m1","role":"user","text":"x","at":"9999-12-31T00:00:00Z"}]}]}`,
		`{"format":"memento.user/v0"}`, `{"format":"memento.user/v1","threads":[{"thread":{"id":"t\u0000"}}]}`, `not json`, `{}`,
	} {
		f.Add([]byte(seed))
	}
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, data []byte) {
		s := memento.Scope{Tenant: memento.DefaultTenant, User: fmt.Sprintf("pull%d", n.Add(1))}
		if err := st.Put(ctx, snapshot.UserKey(s), data); err != nil {
			t.Fatal(err)
		}
		restored, err := snap.Pull(ctx, s, false)
		exists, xerr := db.UserExists(ctx, s)
		if xerr != nil {
			t.Fatal(xerr)
		}
		if err != nil {
			if c := memento.ErrorCode(err); c != memento.EINVALID && c != memento.ECONFLICT {
				t.Fatalf("Pull = %v (%s), want EINVALID, ECONFLICT or success", err, c)
			}
			if exists {
				t.Fatalf("a refused snapshot left user %s behind: %v", s.User, err)
			}
			return
		}
		if !restored || !exists {
			t.Fatalf("Pull = %v with user present %v; want the user restored", restored, exists)
		}
		doc, err := snap.Document(ctx, s)
		if err != nil {
			t.Fatalf("Document of a restored user: %v", err)
		}
		if err := doc.CheckFormat(); err != nil {
			t.Fatalf("the document of a restored user fails the format check: %v", err)
		}
	})
}
