package sqlite_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

func TestAppendMessagesValidates(t *testing.T) {
	db := sqlitetest.Open(t)
	ok := memento.Message{Role: memento.RoleUser, Text: "fine"}
	tests := []struct {
		name    string
		scope   memento.Scope
		thread  string
		msgs    []memento.Message
		code    string
		message string
	}{
		{"bad role", memento.Scope{User: "u"}, "t", []memento.Message{ok, ok, {Role: "bot", Text: "hi"}},
			memento.EINVALID, `messages[2].role must be "user" or "assistant", got "bot"`},
		{"empty text", memento.Scope{User: "u"}, "t", []memento.Message{ok, {Role: memento.RoleAssistant, Text: " \n"}},
			memento.EINVALID, "messages[1].text must not be empty"},
		{"long id", memento.Scope{User: "u"}, "t", []memento.Message{{ID: strings.Repeat("x", 300), Role: memento.RoleUser, Text: "x"}},
			memento.EINVALID, "messages[0].id must be at most 256 bytes"},
		{"no user", memento.Scope{}, "t", []memento.Message{ok}, memento.EINVALID, "user id is required"},
		{"no thread", memento.Scope{User: "u"}, "", []memento.Message{ok}, memento.EINVALID, "thread id is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := db.AppendMessages(context.Background(), tt.scope, tt.thread, tt.msgs, nil)
			wantCode(t, err, tt.code)
			if got := memento.ErrorMessage(err); got != tt.message {
				t.Errorf("message = %q, want %q", got, tt.message)
			}
		})
	}
	// Nothing was written by the rejected calls.
	threads, err := db.Threads(context.Background(), memento.Scope{User: "u"})
	if err != nil {
		t.Fatalf("Threads: %v", err)
	}
	if len(threads) != 0 {
		t.Errorf("rejected appends created threads: %+v", threads)
	}
}

func TestAppendMessagesStoresInOrder(t *testing.T) {
	ctx := context.Background()
	db := openClocked(t)
	s := memento.Scope{User: "ann"}
	at := time.Date(2024, 5, 6, 7, 8, 9, 10, time.FixedZone("X", 3600))

	res, err := db.AppendMessages(ctx, s, "t1", []memento.Message{
		{ID: "c1", Role: memento.RoleUser, Text: "Something funny", At: at},
		{Role: memento.RoleAssistant, Text: "Try Airplane!"},
	}, nil)
	if err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	if res.Inserted != 2 || res.Duplicates != 0 {
		t.Errorf("inserted, duplicates = %d, %d; want 2, 0", res.Inserted, res.Duplicates)
	}
	gen := res.Messages[1].ID
	if !strings.HasPrefix(gen, "msg_") || len(gen) != len("msg_")+32 {
		t.Errorf("generated id = %q, want msg_ and 32 hex digits", gen)
	}
	if res.Messages[1].At.IsZero() {
		t.Error("a message without a time got none")
	}
	res2 := appendTexts(t, db, s, "t1", "Older please")

	got, err := db.Messages(ctx, s, "t1", 0, 0)
	if err != nil {
		t.Fatalf("Messages: %v", err)
	}
	want := append(res.Messages, res2.Messages...)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Messages (-want +got):\n%s", diff)
	}
	for i, m := range got {
		if m.Seq != int64(i+1) {
			t.Errorf("messages[%d].Seq = %d, want %d", i, m.Seq, i+1)
		}
	}
	if !got[0].At.Equal(at) {
		t.Errorf("At = %v, want %v", got[0].At, at)
	}

	page, err := db.Messages(ctx, s, "t1", 1, 1)
	if err != nil {
		t.Fatalf("Messages after 1: %v", err)
	}
	if len(page) != 1 || page[0].Seq != 2 {
		t.Errorf("Messages(after 1, limit 1) = %+v, want seq 2 only", page)
	}

	st, err := db.ThreadState(ctx, s, "t1")
	if err != nil {
		t.Fatalf("ThreadState: %v", err)
	}
	if st.LastSeq != 3 {
		t.Errorf("LastSeq = %d, want 3", st.LastSeq)
	}

	_, err = db.Messages(ctx, s, "nope", 0, 0)
	wantCode(t, err, memento.ENOTFOUND)
}

func TestAppendMessagesIsIdempotent(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{User: "ann"}
	msgs := []memento.Message{
		{ID: "m1", Role: memento.RoleUser, Text: "I loved Heat"},
		{ID: "m2", Role: memento.RoleAssistant, Text: "Noted"},
	}
	first, err := db.AppendMessages(ctx, s, "t1", msgs, messageJobs("extract", s))
	if err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	if got := countJobs(t, db); got != 2 {
		t.Fatalf("jobs after first append = %d, want 2", got)
	}
	before, _ := db.ThreadState(ctx, s, "t1")

	again, err := db.AppendMessages(ctx, s, "t1", msgs, messageJobs("extract", s))
	if err != nil {
		t.Fatalf("repeated AppendMessages: %v", err)
	}
	if again.Inserted != 0 || again.Duplicates != 2 {
		t.Errorf("repeat inserted, duplicates = %d, %d; want 0, 2", again.Inserted, again.Duplicates)
	}
	if diff := cmp.Diff(first.Messages, again.Messages); diff != "" {
		t.Errorf("repeat returned other messages (-first +repeat):\n%s", diff)
	}
	if got := countJobs(t, db); got != 2 {
		t.Errorf("jobs after repeat = %d, want still 2", got)
	}
	after, _ := db.ThreadState(ctx, s, "t1")
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("a repeat changed the thread (-before +after):\n%s", diff)
	}

	// A batch mixing an old and a new id stores only the new one.
	mixed, err := db.AppendMessages(ctx, s, "t1", []memento.Message{msgs[1], {ID: "m3", Role: memento.RoleUser, Text: "More"}}, messageJobs("extract", s))
	if err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	if mixed.Inserted != 1 || mixed.Duplicates != 1 || mixed.Messages[1].Seq != 3 {
		t.Errorf("mixed batch = %+v, want m2 kept and m3 stored as seq 3", mixed)
	}
	if got := countJobs(t, db); got != 3 {
		t.Errorf("jobs after mixed batch = %d, want 3", got)
	}
}

// TestAppendRepeatsWithinOneCall checks that an id given twice in one call
// (now written with one multi-row statement) is stored once, and that a
// second, different message under the same id fails the whole call.
func TestAppendRepeatsWithinOneCall(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	s := memento.Scope{User: "ann"}
	m := memento.Message{ID: "m1", Role: memento.RoleUser, Text: "I loved Heat"}
	res, err := db.AppendMessages(ctx, s, "t1", []memento.Message{m, {Role: memento.RoleAssistant, Text: "Noted"}, m}, messageJobs("extract", s))
	if err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	if res.Inserted != 2 || res.Duplicates != 1 || res.Messages[2].Seq != 1 || res.Messages[1].Seq != 2 {
		t.Fatalf("append = %+v, want m1 (seq 1) and the answer (seq 2) stored, the repeat of m1 answered as seq 1", res)
	}
	_, err = db.AppendMessages(ctx, s, "t1", []memento.Message{
		{ID: "m9", Role: memento.RoleUser, Text: "one"}, {ID: "m9", Role: memento.RoleUser, Text: "another"},
	}, messageJobs("extract", s))
	wantCode(t, err, memento.ECONFLICT)
	page, err := db.Messages(ctx, s, "t1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 2 {
		t.Fatalf("thread holds %d messages, want the 2 of the first call (the refused call wrote nothing)", len(page))
	}
}

func TestScopesAreIsolated(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	ann := memento.Scope{User: "ann"}
	bob := memento.Scope{User: "bob"}
	otherAnn := memento.Scope{Tenant: "acme", User: "ann"}

	appendTexts(t, db, ann, "t1", "ann's secret about thrillers")
	if _, err := db.AddEvents(ctx, ann, []memento.Event{{Type: memento.EventLiked, TitleID: "ml:1"}}, nil); err != nil {
		t.Fatalf("AddEvents: %v", err)
	}
	// The same message id and thread id in another scope is another message.
	for _, s := range []memento.Scope{bob, otherAnn} {
		res, err := db.AppendMessages(ctx, s, "t1", []memento.Message{{ID: "shared", Role: memento.RoleUser, Text: "hi"}}, nil)
		if err != nil {
			t.Fatalf("AppendMessages(%v): %v", s, err)
		}
		if res.Inserted != 1 {
			t.Errorf("AppendMessages(%v) inserted %d, want 1", s, res.Inserted)
		}
	}

	for _, s := range []memento.Scope{bob, otherAnn} {
		msgs, err := db.Messages(ctx, s, "t1", 0, 0)
		if err != nil {
			t.Fatalf("Messages(%v): %v", s, err)
		}
		if len(msgs) != 1 || msgs[0].Text != "hi" {
			t.Errorf("Messages(%v) = %+v, want only their own", s, msgs)
		}
		events, err := db.Events(ctx, s)
		if err != nil {
			t.Fatalf("Events(%v): %v", s, err)
		}
		if len(events) != 0 {
			t.Errorf("Events(%v) = %+v, want none", s, events)
		}
		hits, err := db.SearchMessages(ctx, s, "secret thrillers", 10)
		if err != nil {
			t.Fatalf("SearchMessages(%v): %v", s, err)
		}
		if len(hits) != 0 {
			t.Errorf("SearchMessages(%v) found %+v, want nothing", s, hits)
		}
		threads, err := db.Threads(ctx, s)
		if err != nil {
			t.Fatalf("Threads(%v): %v", s, err)
		}
		if len(threads) != 1 || threads[0].Tenant != cmpTenant(s) || threads[0].User != s.User {
			t.Errorf("Threads(%v) = %+v, want their one thread", s, threads)
		}
	}
	_, err := db.Messages(ctx, memento.Scope{User: "carol"}, "t1", 0, 0)
	wantCode(t, err, memento.ENOTFOUND)
}

// cmpTenant is the tenant a scope stands for.
func cmpTenant(s memento.Scope) string {
	if s.Tenant == "" {
		return memento.DefaultTenant
	}
	return s.Tenant
}

func TestEnsureUser(t *testing.T) {
	ctx := context.Background()
	db := openClocked(t)
	u, err := db.EnsureUser(ctx, memento.Scope{User: "ann"})
	if err != nil {
		t.Fatalf("EnsureUser: %v", err)
	}
	if u.Tenant != memento.DefaultTenant || u.ID != "ann" || u.CreatedAt.IsZero() {
		t.Errorf("EnsureUser = %+v", u)
	}
	again, err := db.EnsureUser(ctx, memento.Scope{Tenant: memento.DefaultTenant, User: "ann"})
	if err != nil {
		t.Fatalf("EnsureUser again: %v", err)
	}
	if diff := cmp.Diff(u, again); diff != "" {
		t.Errorf("second EnsureUser differs (-first +second):\n%s", diff)
	}
	_, err = db.EnsureUser(ctx, memento.Scope{Tenant: "acme"})
	wantCode(t, err, memento.EINVALID)
}
