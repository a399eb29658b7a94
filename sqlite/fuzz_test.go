package sqlite

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memento-ai/memento"
)

// openFuzz opens a store for a fuzz target, with synchronous NORMAL: targets run
// thousands of transactions and durability is not what they check.
func openFuzz(tb testing.TB) *DB {
	tb.Helper()
	db, err := Open(context.Background(), filepath.Join(tb.TempDir(), "fuzz.db"), Options{Logger: quiet, Synchronous: "NORMAL"})
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// fuzzDoc is a small export document with a thread, messages, an event
// and a memory, in the shape GET .../export produces.
const fuzzDoc = `{"format":"memento.user/v1","tenant":"default","user":"ann","exportedAt":"2025-05-03T10:00:00Z",
"threads":[{"thread":{"id":"t1","createdAt":"2025-05-01T20:00:00Z","updatedAt":"2025-05-02T20:00:00Z"},
 "activeContext":{},"lastShown":[],
 "messages":[{"id":"m1","role":"user","text":"I love sci-fi films, and my sister is called Maya","at":"2025-05-01T20:00:00Z"},
  {"id":"m2","role":"assistant","text":"Noted! Here are some sci-fi films: \"Arrival\" (2016) OR NEAR(a b)","at":"2025-05-01T20:00:01Z"}],
 "summaries":[]}],
"events":[{"id":"e1","type":"liked","title":"ml:1","at":"2025-05-01T20:00:00Z"}],
"memories":[{"id":"mem1","kind":"attribute","attribute":"LIKES","mode":"semantic","value":"sci-fi films","validFrom":"2025-05-01T20:00:00Z","validTo":null,"sources":["m1"]},
 {"id":"mem2","kind":"episode","attribute":"FAMILY","mode":"episodic","value":"sister Maya","validFrom":"2025-05-01T20:00:00Z","validTo":null,"sources":["m1"]}],
"runs":[],"modes":{"GENRE":"episodic"}}`

// FuzzKeywordQuery runs the FTS5 queries built from user text (recall's
// scopedMatch over memories_fts and message_search, and SearchMessages'
// ftsQuery over message_search's text column) against a real store: whatever the text and
// the user id, no query may fail, since a syntax error would turn a
// user's words into a 500.
func FuzzKeywordQuery(f *testing.F) {
	db := openFuzz(f)
	ctx := context.Background()
	var doc memento.UserExport
	if err := json.Unmarshal([]byte(fuzzDoc), &doc); err != nil {
		f.Fatal(err)
	}
	if _, err := db.ImportUser(ctx, memento.Scope{User: "ann"}, &doc); err != nil {
		f.Fatal(err)
	}
	for _, seed := range [][2]string{
		{"ann", "sci-fi films"}, {"ann", "what is my sister called?"}, {"ann", `"Arrival" OR NEAR(a b)`},
		{"ann", `scope:x AND NOT * ^ - + ( ) {LIKES} : "`}, {"ann", "films*"}, {"ann", "AND OR NOT NEAR"},
		{"bob", "sci-fi"}, {"ann@example.com", "in June 2023"}, {"turn:t1#3", "D1:3 Melanie's pottery"},
		{"ann", "日本語のテキスト 映画"}, {"ann", "naïve café résumé"}, {"ann", "\x00\"\x1f"}, {"ann", "what did I say on 13 October 9999?"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, user, query string) {
		s := memento.Scope{User: user}
		if memento.CheckID("user id", user) != nil {
			if _, err := db.SearchMessages(ctx, s, query, 5); memento.ErrorCode(err) != memento.EINVALID {
				t.Fatalf("SearchMessages for user %q = %v, want EINVALID", user, err)
			}
			return
		}
		s.Tenant = memento.DefaultTenant
		if _, err := db.SearchMessages(ctx, s, query, 5); err != nil {
			t.Fatalf("SearchMessages(%q): %v", query, err)
		}
		if match := ftsQuery(query); match != "" {
			var n int
			if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM message_search WHERE message_search MATCH ?`, "text : ("+match+")").Scan(&n); err != nil {
				t.Fatalf("MATCH %q (from %q): %v", match, query, err)
			}
		}
		for _, table := range []string{"memories_fts", "message_search"} {
			for _, term := range recallTerms(query) {
				var n int
				if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM `+table+` WHERE `+table+` MATCH ?`, scopeToken(s)+" AND "+term).Scan(&n); err != nil {
					t.Fatalf("%s MATCH %q (from %q, user %q): %v", table, term, query, user, err)
				}
			}
		}
		mems, err := db.MemoryCandidates(ctx, s, memento.CandidateQuery{Query: query, Keyword: 10, Recent: 1})
		if err != nil {
			t.Fatalf("MemoryCandidates(%q): %v", query, err)
		}
		msgs, err := db.MessageCandidates(ctx, s, memento.CandidateQuery{Query: query, Keyword: 10, Neighbors: 1})
		if err != nil {
			t.Fatalf("MessageCandidates(%q): %v", query, err)
		}
		// Scoping holds whatever the query: only ann has rows.
		if user != "ann" && (len(mems) > 0 || len(msgs) > 0) {
			t.Fatalf("user %q got %d memories and %d messages of another user", user, len(mems), len(msgs))
		}
	})
}

// FuzzImportUser feeds export documents to ImportUser. A document is
// either refused as a whole with EINVALID or ECONFLICT (nothing stored), or stored so
// that its export holds the same texts at the same times (no time wraps
// around) and can be imported again.
func FuzzImportUser(f *testing.F) {
	db := openFuzz(f)
	ctx := context.Background()
	f.Add([]byte(fuzzDoc))
	f.Add([]byte(`{"format":"memento.user/v1","threads":[{"thread":{"id":"t"},"messages":[{"id":"m","role":"user","text":"x","at":"9999-12-31T00:00:00Z"}]}]}`))
	f.Add([]byte(`{"format":"memento.user/v1","threads":[{"thread":{"id":"t"},"messages":[{"id":"m","role":"user","text":"x"},{"id":"m","role":"user","text":"y"}]},{"thread":{"id":"u"},"messages":[{"id":"m","role":"user","text":"z"}]}]}`))
	f.Add([]byte(`{"format":"memento.user/v1","memories":[{"id":"a","attribute":"LIKES","mode":"semantic","value":"v","validFrom":"1677-01-01T00:00:00Z"}]}`))
	f.Add([]byte(`{"format":"memento.user/v1","events":[{"id":"e\u0000","type":"rated","title":"ml:1","value":4.5}]}`))
	f.Add([]byte(`{"format":"memento.user/v1","modes":{"":"semantic"}}`))
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, data []byte) {
		var doc memento.UserExport
		if json.Unmarshal(data, &doc) != nil {
			return // the transports refuse what is not JSON of the shape
		}
		s := memento.Scope{Tenant: memento.DefaultTenant, User: fmt.Sprintf("imp%d", n.Add(1))}
		_, err := db.ImportUser(ctx, s, &doc)
		if err != nil {
			// ECONFLICT: a message id used twice with different text
			// or thread.
			if code := memento.ErrorCode(err); code != memento.EINVALID && code != memento.ECONFLICT {
				t.Fatalf("ImportUser = %v (%s), want EINVALID, ECONFLICT or success", err, code)
			}
			if ok, _ := db.UserExists(ctx, s); ok {
				t.Fatalf("a refused import left user %s behind: %v", s.User, err)
			}
			return
		}
		out, err := db.ExportUser(ctx, s)
		if err != nil {
			t.Fatalf("ExportUser after import: %v", err)
		}
		in := map[string]memento.Message{}
		for _, th := range doc.Threads {
			for _, m := range th.Messages {
				if _, ok := in[m.ID]; !ok {
					m.Thread = th.Thread.ID
					in[m.ID] = m
				}
			}
		}
		for _, th := range out.Threads {
			for _, m := range th.Messages {
				src, ok := in[m.ID]
				switch {
				case !ok:
					t.Fatalf("exported message %q is not in the document", m.ID)
				case src.Text != m.Text || src.Thread != th.Thread.ID:
					t.Fatalf("message %q stored as %q in %q, imported as %q in %q", m.ID, m.Text, th.Thread.ID, src.Text, src.Thread)
				case !src.At.IsZero() && !src.At.Equal(m.At):
					t.Fatalf("message %q at %v reads back at %v", m.ID, src.At, m.At)
				}
			}
		}
		mems := map[string]memento.Memory{}
		for _, m := range doc.Memories {
			mems[m.ID] = m
		}
		for _, m := range out.Memories {
			src, ok := mems[m.ID]
			if !ok {
				t.Fatalf("exported memory %q is not in the document", m.ID)
			}
			if !src.ValidFrom.Equal(m.ValidFrom) {
				t.Fatalf("memory %q valid from %v reads back from %v", m.ID, src.ValidFrom, m.ValidFrom)
			}
		}
		if err := out.CheckFormat(); err != nil {
			t.Fatalf("the export of an import fails its own check: %v", err)
		}
		again := memento.Scope{Tenant: memento.DefaultTenant, User: s.User + "-again"}
		if _, err := db.ImportUser(ctx, again, out); err != nil {
			t.Fatalf("the export of an import cannot be imported: %v", err)
		}
	})
}

// FuzzVectorDecode checks the decoders of stored embeddings: a blob of
// whole float32 values decodes to a vector that encodes back to the same
// bytes, bit for bit (NaN payloads included); any other blob decodes to
// no vector rather than a shortened one.
func FuzzVectorDecode(f *testing.F) {
	f.Add(memVectorBytes([]float32{0.5, -1, float32(math.Inf(1))}))
	f.Add(encodePrefVector([]float32{1, 2, 3, 4}))
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3})
	f.Add([]byte{0, 0, 0xc0, 0x7f, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		v := memVectorFrom(b)
		if len(b) == 0 || len(b)%4 != 0 {
			if v != nil {
				t.Fatalf("memVectorFrom(%d bytes) = %d values, want none", len(b), len(v))
			}
		} else if got := memVectorBytes(v); !bytes.Equal(got, b) {
			t.Fatalf("memVectorBytes(memVectorFrom(%x)) = %x", b, got)
		}
		p := decodePrefVector(b)
		if len(b)%4 != 0 {
			if p != nil {
				t.Fatalf("decodePrefVector(%d bytes) = %d values, want none", len(b), len(p))
			}
		} else if got := encodePrefVector(p); !bytes.Equal(got, b) {
			t.Fatalf("encodePrefVector(decodePrefVector(%x)) = %x", b, got)
		}
	})
}

// FuzzReadWALIndex feeds readWALIndex arbitrary -shm contents: it must
// accept only a header with SQLite's version and two equal copies, and
// report a backlog no larger than the log.
func FuzzReadWALIndex(f *testing.F) {
	valid := make([]byte, 136)
	putHeader := func(b []byte, change, frames, backfill uint32) {
		for _, off := range []int{0, 48} {
			ne := binary.NativeEndian
			ne.PutUint32(b[off:], walIndexVersion)
			ne.PutUint32(b[off+8:], change)
			b[off+12] = 1
			ne.PutUint32(b[off+16:], frames)
		}
		binary.NativeEndian.PutUint32(b[96:], backfill)
	}
	putHeader(valid, 7, 100, 40)
	f.Add(valid)
	torn := bytes.Clone(valid)
	torn[60] ^= 1
	f.Add(torn)
	ahead := bytes.Clone(valid)
	putHeader(ahead, 1, 10, 20)
	f.Add(ahead)
	f.Add(valid[:100])
	f.Add([]byte{})
	path := filepath.Join(f.TempDir(), "db-shm")
	file, err := os.Create(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { file.Close() })
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := file.Truncate(0); err != nil {
			t.Fatal(err)
		}
		if _, err := file.WriteAt(b, 0); err != nil {
			t.Fatal(err)
		}
		h, ok := readWALIndex(file)
		if !ok {
			if h != (walIndex{}) {
				t.Fatalf("readWALIndex failed but returned %+v", h)
			}
			return
		}
		ne := binary.NativeEndian
		switch {
		case len(b) < 136:
			t.Fatalf("readWALIndex accepted %d bytes, shorter than the header", len(b))
		case ne.Uint32(b) != walIndexVersion || !bytes.Equal(b[:48], b[48:96]):
			t.Fatalf("readWALIndex accepted a header of another version or with differing copies: %x", b[:96])
		case h.frames != ne.Uint32(b[16:]) || h.backfill != ne.Uint32(b[96:]) || h.change != ne.Uint32(b[8:]):
			t.Fatalf("readWALIndex = %+v, not the header's fields", h)
		case h.backlog() > h.frames:
			t.Fatalf("backlog %d is over the %d frames of the log", h.backlog(), h.frames)
		}
	})
}

// FuzzDSN checks that the data source names built from a --db path (a
// file: URI with SQLite's parameters) name that same path whatever it
// holds: a '?' or '#' in a file name must not start the query.
func FuzzDSN(f *testing.F) {
	for _, p := range []string{"/var/lib/memento/memento.db", "./memento.db", "/tmp/a?mode=rw#x.db", "/tmp/100% real.db", "/tmp/é/ü.db", `C:\data\m.db`, "/tmp/a&b=c;d.db"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, path string) {
		db := &DB{path: path, opts: Options{}.withDefaults()}
		for _, writer := range []bool{true, false} {
			dsn := db.dsn(writer, false)
			rest, ok := strings.CutPrefix(dsn, "file:")
			if !ok {
				t.Fatalf("dsn %q is not a file: URI", dsn)
			}
			p, query, ok := strings.Cut(rest, "?")
			if !ok {
				t.Fatalf("dsn %q has no parameters", dsn)
			}
			got, err := url.PathUnescape(p)
			if err != nil || got != path {
				t.Fatalf("dsn %q names path %q (err %v), want %q", dsn, got, err, path)
			}
			v, err := url.ParseQuery(query)
			if err != nil {
				t.Fatalf("dsn %q: parameters: %v", dsn, err)
			}
			if ro := v.Get("mode") == "ro"; ro == writer {
				t.Fatalf("dsn %q: writer %v with mode %q", dsn, writer, v.Get("mode"))
			}
		}
	})
}
