package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/client"
	"github.com/memento-ai/memento/engine"
	"github.com/memento-ai/memento/engine/enginetest"
	mhttp "github.com/memento-ai/memento/http"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/pipeline"
	"github.com/memento-ai/memento/prefs"
	"github.com/memento-ai/memento/profile"
	"github.com/memento-ai/memento/recall"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

var titles = []memento.Title{
	{ID: "heat", Title: "Heat", Type: "movie", Year: 1995, Genres: []string{"Crime", "Thriller"}},
	{ID: "ronin", Title: "Ronin", Type: "movie", Year: 1998, Genres: []string{"Crime", "Thriller"}},
	{ID: "thief", Title: "Thief", Type: "movie", Year: 1981, Genres: []string{"Crime", "Thriller"}},
	{ID: "up", Title: "Up", Type: "movie", Year: 2009, Genres: []string{"Animation", "Comedy"}},
	{ID: "elf", Title: "Elf", Type: "movie", Year: 2003, Genres: []string{"Comedy"}},
}

// server is the real HTTP server over a real store with its background
// jobs running: the routes of cmd/memento's serve, wired the same way.
type server struct {
	db  engine.Store
	srv *mhttp.Server
	ts  *httptest.Server
}

func newServer(t *testing.T, configure func(*mhttp.Server), wrap func(http.Handler) http.Handler) *server {
	t.Helper()
	db := enginetest.Open(t)
	emb := offline.NewEmbedder(64)
	cat := catalog.New(titles)
	model := offline.New(offline.Options{People: cat, Genres: cat.Genres()})
	p, err := pipeline.New(model, db, pipeline.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	db.Handle(memento.JobRemember, (&pipeline.Worker{Pipeline: p, Ordered: db}).Handle, memento.JobOptions{})
	db.Handle(memento.JobSummarise, (&agent.SummaryWorker{Threads: db, Messages: db, Model: model}).Handle, memento.JobOptions{})
	(&profile.Worker{Events: db, Profiles: db, Models: db, Messages: db, Resolve: cat.ResolveTitle, Catalog: cat}).Register(db)
	ps := &prefs.Service{Store: db, Messages: db, Model: model, Embedder: emb, Catalog: cat}
	ps.Register(db, memento.JobOptions{})
	if err := db.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Stop(context.Background()) })
	msgJobs := func(s memento.Scope, thread string, m memento.Message) []memento.JobRequest {
		jobs := prefs.MessageJobs(s, thread, m)
		return append(jobs, memento.JobRequest{Kind: memento.JobRemember, Payload: memento.MessageJob{Tenant: s.Tenant, User: s.User, Thread: thread, Message: m.ID, Seq: m.Seq}})
	}
	asm := recall.New(db, emb, &prefs.Recaller{Prefs: ps})
	ag := &agent.Agent{Catalog: cat, Threads: db, Model: model, Resolve: cat.ResolveTitle,
		Jobs: func(s memento.Scope, thread string, stored []memento.Message) []memento.JobRequest {
			jobs := agent.DefaultJobs(s, thread, stored)
			for _, m := range stored {
				jobs = append(jobs, msgJobs(s, thread, m)...)
			}
			return jobs
		}}
	eventJobs := func(s memento.Scope) func(memento.Event) []memento.JobRequest {
		learn := profile.EventJobs(s)
		return func(e memento.Event) []memento.JobRequest { return append(learn(e), prefs.EventJobs(s, e)...) }
	}
	srv := &mhttp.Server{
		Catalog: cat,
		Routes: []func(huma.API, *mhttp.Server){
			mhttp.RegisterChat(ag, db, db),
			mhttp.RegisterProfile(mhttp.ProfileRoutes{Events: db, Profiles: db, EventJobs: eventJobs}),
			mhttp.RegisterPreferences(ps),
			mhttp.RegisterMemory(mhttp.MemoryRoutes{Store: db, Assembler: asm, JobsFor: msgJobs,
				Sections: []memento.UserSection{profile.Section{Store: db}, prefs.Section{Store: db}}}),
		},
	}
	if configure != nil {
		configure(srv)
	}
	h := srv.Handler()
	if wrap != nil {
		h = wrap(h)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return &server{db: db, srv: srv, ts: ts}
}

func newClient(t *testing.T, url string, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// wantCode fails unless err is a *memento.Error with code.
func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	var e *memento.Error
	if !errors.As(err, &e) || e.Code != code || e.Message == "" {
		t.Errorf("%s: error %v (%T), want a *memento.Error %s with a message", what, err, err, code)
	}
}

// TestClientAgainstServer drives every part of the API through the
// client against the real server: messages, the pipeline's memories,
// context, edits, chat, events, profile, preferences, export, import and
// forgetting, and the errors come back with their codes.
func TestClientAgainstServer(t *testing.T) {
	s := newServer(t, nil, nil)
	c := newClient(t, s.ts.URL)
	ctx := t.Context()
	const user = "ana"

	if err := c.Health(ctx); err != nil {
		t.Fatalf("health: %v", err)
	}
	res, err := c.AppendMessages(ctx, user, "t1",
		client.Message{ID: "m1", Role: memento.RoleUser, Text: "I love crime thrillers like Heat."},
		client.Message{ID: "m2", Role: memento.RoleUser, Text: "I watch everything on Netflix."})
	if err != nil || res.Inserted != 2 || len(res.Messages) != 2 || res.Messages[0].ID != "m1" {
		t.Fatalf("append = %+v, %v", res, err)
	}
	if res, err = c.AppendMessages(ctx, user, "t1", client.Message{ID: "m1", Role: memento.RoleUser, Text: "I love crime thrillers like Heat."}); err != nil || res.Duplicates != 1 {
		t.Errorf("append again = %+v, %v; want a duplicate", res, err)
	}
	_, err = c.AppendMessages(ctx, user, "t1", client.Message{ID: "m1", Role: memento.RoleUser, Text: "Something else."})
	wantCode(t, "append a used id", err, memento.ECONFLICT)
	_, err = c.AppendMessages(ctx, user, "t1", client.Message{Role: memento.RoleUser})
	wantCode(t, "append an empty text", err, memento.EINVALID)
	sqlitetest.WaitForJobs(t, s.db, 20*time.Second)

	mems, err := c.Memories(ctx, user, client.MemoryFilter{})
	if err != nil || len(mems) < 2 {
		t.Fatalf("memories = %+v, %v", mems, err)
	}
	m := mems[0]
	if got, err := c.Memory(ctx, user, m.ID); err != nil || got.Value != m.Value {
		t.Errorf("memory %s = %+v, %v", m.ID, got, err)
	}
	_, err = c.Memory(ctx, user, "no-such-memory")
	wantCode(t, "unknown memory", err, memento.ENOTFOUND)
	if only, err := c.Memories(ctx, user, client.MemoryFilter{Attribute: m.Attribute}); err != nil || len(only) == 0 || only[0].Attribute != m.Attribute {
		t.Errorf("memories of %s = %+v, %v", m.Attribute, only, err)
	}
	upd, err := c.UpdateMemory(ctx, user, m.ID, "slow-burn crime thrillers")
	if err != nil || upd.ID != m.ID || upd.Value != "slow-burn crime thrillers" {
		t.Errorf("update = %+v, %v", upd, err)
	}
	if hist, err := c.MemoryHistory(ctx, user, m.ID); err != nil || len(hist) != 2 {
		t.Errorf("history = %+v, %v; want two versions", hist, err)
	}
	if runs, err := c.Runs(ctx, user, 0); err != nil || len(runs) < 2 {
		t.Errorf("runs = %d, %v", len(runs), err)
	}

	doc, err := c.Context(ctx, user, client.ContextQuery{Thread: "t1", Query: "crime thrillers", K: 5})
	if err != nil || doc.User != user || len(doc.Items) == 0 || doc.Text == "" {
		t.Fatalf("context = %+v, %v", doc, err)
	}
	if it := doc.Items[0]; len(it.Sources) == 0 || len(it.Scores) == 0 {
		t.Errorf("context item %+v has no sources or scores", it)
	}
	_, err = c.Context(ctx, user, client.ContextQuery{K: 1000})
	wantCode(t, "context with k=1000", err, memento.EINVALID)

	ans, err := c.Chat(ctx, agent.Request{User: user, Thread: "t2", Message: "Recommend 2 crime thrillers."})
	if err != nil || ans.Reply == "" || len(ans.Titles) != 2 || len(ans.ActiveContext.Genres) == 0 {
		t.Fatalf("chat = %+v, %v", ans, err)
	}
	_, err = c.Chat(ctx, agent.Request{User: user, Thread: "t2"})
	wantCode(t, "chat without a message", err, memento.EINVALID)
	if th, err := c.Thread(ctx, user, "t2"); err != nil || len(th.Messages) != 2 || len(th.LastShown) != 2 {
		t.Errorf("thread = %+v, %v", th, err)
	}
	if ts, err := c.Threads(ctx, user); err != nil || len(ts) != 2 {
		t.Errorf("threads = %+v, %v", ts, err)
	}

	rating := 4.5
	er, err := c.AddEvents(ctx, user, client.Event{ID: "e1", Type: memento.EventRated, TitleID: "heat", Value: &rating},
		client.Event{ID: "e2", Type: memento.EventWatched, TitleID: "ronin"})
	if err != nil || er.Inserted != 2 {
		t.Fatalf("events = %+v, %v", er, err)
	}
	_, err = c.AddEvents(ctx, user, client.Event{Type: memento.EventWatched, TitleID: "not-in-catalog"})
	wantCode(t, "event of an unknown title", err, memento.EINVALID)
	if evs, err := c.Events(ctx, user); err != nil || len(evs) != 2 {
		t.Errorf("events = %+v, %v", evs, err)
	}
	sqlitetest.WaitForJobs(t, s.db, 20*time.Second)
	if sums, err := c.Summaries(ctx, user, "t2"); err != nil || len(sums) != 1 {
		t.Errorf("summaries of t2 = %+v, %v; want the turn's", sums, err)
	}
	ac := memento.NewActiveContext()
	ac.Genres = []string{"Comedy"}
	if got, err := c.SetThreadContext(ctx, user, "t2", ac); err != nil || len(got.Genres) != 1 || got.Genres[0] != "Comedy" {
		t.Errorf("set thread context = %+v, %v", got, err)
	}
	_, err = c.SetThreadContext(ctx, user, "no-such-thread", ac)
	wantCode(t, "context of an unknown thread", err, memento.ENOTFOUND)

	prof, err := c.Profile(ctx, user)
	if err != nil {
		t.Fatal(err)
	}
	stale := prof.Version
	prof, err = c.UpdateProfile(ctx, user, client.ProfileChange{Set: map[string]any{"platforms": []string{"Netflix"}}, IfVersion: &stale})
	if err != nil || prof.Version == stale {
		t.Fatalf("update profile = %+v, %v", prof, err)
	}
	_, err = c.UpdateProfile(ctx, user, client.ProfileChange{Delete: []string{"platforms"}, IfVersion: &stale})
	wantCode(t, "profile change from a stale version", err, memento.ECONFLICT)
	if prof, err = c.ReplaceProfile(ctx, user, nil, nil); err != nil {
		t.Errorf("replace profile: %v", err)
	} else if _, ok := prof.Keys["platforms"]; ok {
		t.Errorf("replace with no keys left platforms: %+v", prof.Keys)
	}

	ps, err := c.Preferences(ctx, user)
	if err != nil || len(ps) == 0 {
		t.Fatalf("preferences = %+v, %v", ps, err)
	}
	w := -2.0
	if p, err := c.UpdatePreference(ctx, user, ps[0].ID, client.PreferencePatch{Weight: &w}); err != nil || p.Weight != w {
		t.Errorf("update preference = %+v, %v", p, err)
	}
	if _, err := c.PreferenceClusters(ctx, user); err != nil {
		t.Errorf("clusters: %v", err)
	}
	if err := c.DeletePreference(ctx, user, ps[0].ID); err != nil {
		t.Errorf("delete preference: %v", err)
	}
	wantCode(t, "delete the preference again", c.DeletePreference(ctx, user, ps[0].ID), memento.ENOTFOUND)

	exp, err := c.Export(ctx, user)
	if err != nil || len(exp.Threads) == 0 || len(exp.Memories) == 0 || len(exp.Events) != 2 {
		t.Fatalf("export = %+v, %v", exp, err)
	}
	if err := c.DeleteMemory(ctx, user, m.ID); err != nil {
		t.Errorf("delete memory: %v", err)
	}
	wantCode(t, "delete the memory again", c.DeleteMemory(ctx, user, m.ID), memento.ENOTFOUND)

	// The export is a whole copy: imported under another user it brings
	// the messages and memories back.
	imp, err := c.Import(ctx, "ana-copy", exp)
	if err != nil || imp.Messages == 0 || imp.Memories == 0 {
		t.Fatalf("import: %+v, %v", imp, err)
	}
	if got, err := c.Memories(ctx, "ana-copy", client.MemoryFilter{}); err != nil || len(got) == 0 {
		t.Errorf("imported memories = %d, %v", len(got), err)
	}

	if err := c.Forget(ctx, user); err != nil {
		t.Fatalf("forget: %v", err)
	}
	_, err = c.Export(ctx, user)
	wantCode(t, "export after forget", err, memento.ENOTFOUND)
	wantCode(t, "forget again", c.Forget(ctx, user), memento.ENOTFOUND)
	if mems, err := c.Memories(ctx, user, client.MemoryFilter{All: true}); err != nil || len(mems) != 0 {
		t.Errorf("memories after forget = %+v, %v", mems, err)
	}
	wantCode(t, "an empty user", c.Forget(ctx, ""), memento.EINVALID)
}

// TestClientPathEscaping: ids with slashes, spaces and other scripts
// reach their own routes.
func TestClientPathEscaping(t *testing.T) {
	s := newServer(t, nil, nil)
	c := newClient(t, s.ts.URL)
	ctx := t.Context()
	for _, user := range []string{"ana@example.com", "a/b", "名前 x", "50%?#"} {
		if _, err := c.AppendMessages(ctx, user, "t/1", client.Message{Role: memento.RoleUser, Text: "hello"}); err != nil {
			t.Errorf("append for %q: %v", user, err)
			continue
		}
		th, err := c.Thread(ctx, user, "t/1")
		if err != nil || len(th.Messages) != 1 || th.Messages[0].User != user {
			t.Errorf("thread of %q = %+v, %v", user, th, err)
		}
	}
}

// flaky answers the first n requests with status and Retry-After, then
// passes requests on.
type flaky struct {
	n          int32
	status     int
	retryAfter string
	seen       atomic.Int32
}

func (f *flaky) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.seen.Add(1) <= f.n {
			if f.retryAfter != "" {
				w.Header().Set("Retry-After", f.retryAfter)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(f.status)
			_, _ = w.Write([]byte(`{"error":{"code":"EUNAVAILABLE","message":"memory formation is behind; retry shortly"}}`))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// sleeps records the client's waits instead of taking them.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return nil
}

func TestClientRetries(t *testing.T) {
	for _, tc := range []struct {
		name       string
		status     int
		retryAfter string
		fail       int32
		retries    int
		wantCalls  int32
		wantWaits  []time.Duration // exact waits; nil checks only the count
		wantCode   string
	}{
		{"503 with Retry-After", 503, "2", 2, 3, 3, []time.Duration{2 * time.Second, 2 * time.Second}, ""},
		{"429 with Retry-After", 429, "1", 1, 3, 2, []time.Duration{time.Second}, ""},
		{"503 without Retry-After backs off", 503, "", 2, 3, 3, nil, ""},
		{"gives up after the retries", 503, "1", 10, 2, 3, []time.Duration{time.Second, time.Second}, memento.EUNAVAILABLE},
		{"no retries", 429, "1", 1, 0, 1, []time.Duration{}, memento.EUNAVAILABLE},
		{"a Retry-After past the longest wait is not waited for", 503, "3600", 1, 3, 1, []time.Duration{}, memento.EUNAVAILABLE},
		{"400 is never retried", 400, "1", 1, 3, 1, []time.Duration{}, memento.EUNAVAILABLE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &flaky{n: tc.fail, status: tc.status, retryAfter: tc.retryAfter}
			s := newServer(t, nil, f.wrap)
			c := newClient(t, s.ts.URL, client.WithRetries(tc.retries, time.Minute))
			var sl sleeps
			client.SetSleep(c, sl.sleep)
			_, err := c.AppendMessages(t.Context(), "ana", "t", client.Message{ID: "m1", Role: memento.RoleUser, Text: "hello"})
			if tc.wantCode == "" && err != nil {
				t.Errorf("append: %v", err)
			}
			if tc.wantCode != "" {
				// The error is the server's own, decoded.
				wantCode(t, "append", err, tc.wantCode)
				if err != nil && !strings.Contains(err.Error(), "memory formation is behind") {
					t.Errorf("error %v lost the server's message", err)
				}
			}
			if got := f.seen.Load(); got != tc.wantCalls {
				t.Errorf("%d requests, want %d", got, tc.wantCalls)
			}
			if tc.wantWaits != nil && !equalDurations(sl.d, tc.wantWaits) {
				t.Errorf("waits = %v, want %v", sl.d, tc.wantWaits)
			}
			if tc.wantWaits == nil && int32(len(sl.d)) != tc.wantCalls-1 {
				t.Errorf("waits = %v, want %d", sl.d, tc.wantCalls-1)
			}
			// A retried write is stored once.
			if tc.wantCode == "" {
				msgs, err := s.db.Messages(t.Context(), memento.Scope{Tenant: memento.DefaultTenant, User: "ana"}, "t", 0, 0)
				if err != nil || len(msgs) != 1 {
					t.Errorf("messages = %v, %v; want one", msgs, err)
				}
			}
		})
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestClientKeys uses API keys against the server's real authentication:
// the key goes as a bearer token, refusals decode to EUNAUTHORIZED and
// EFORBIDDEN, and the key's rate limit answers 429 with Retry-After,
// which the client waits for.
func TestClientKeys(t *testing.T) {
	s := newServer(t, nil, nil)
	ctx := t.Context()
	newKey := func() string {
		k, key, hash, err := memento.NewAPIKey("acme", "ana", memento.KeyWrite, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := s.db.CreateKey(ctx, k, hash); err != nil {
			t.Fatal(err)
		}
		return key
	}
	key := newKey()
	open := serveAgain(t, s, 0)

	c := newClient(t, open.URL, client.WithKey(key))
	if _, err := c.AppendMessages(ctx, "ana", "t", client.Message{Role: memento.RoleUser, Text: "I love heist films."}); err != nil {
		t.Fatalf("append with the key: %v", err)
	}
	if msgs, err := s.db.Messages(ctx, memento.Scope{Tenant: "acme", User: "ana"}, "t", 0, 0); err != nil || len(msgs) != 1 {
		t.Errorf("acme/ana's messages = %v, %v: the key's tenant is the tenant", msgs, err)
	}
	_, err := c.Memories(ctx, "bob", client.MemoryFilter{})
	wantCode(t, "another user with a user key", err, memento.EFORBIDDEN)
	_, err = newClient(t, open.URL, client.WithKey(key), client.WithTenant("other")).Memories(ctx, "ana", client.MemoryFilter{})
	wantCode(t, "another tenant's header with a key", err, memento.EFORBIDDEN)
	_, err = newClient(t, open.URL).Memories(ctx, "ana", client.MemoryFilter{})
	wantCode(t, "no key", err, memento.EUNAUTHORIZED)
	_, err = newClient(t, open.URL, client.WithKey("mk_"+strings.Repeat("A", 43))).Memories(ctx, "ana", client.MemoryFilter{})
	wantCode(t, "an unknown key", err, memento.EUNAUTHORIZED)

	// One request a second per key: without retries the second request
	// is refused with 429; with them the client waits the Retry-After the
	// server gave and gets through.
	limited := serveAgain(t, s, 1)
	key = newKey()
	noRetry := newClient(t, limited.URL, client.WithKey(key), client.WithRetries(0, time.Minute))
	if _, err := noRetry.Memories(ctx, "ana", client.MemoryFilter{}); err != nil {
		t.Fatalf("first request: %v", err)
	}
	_, err = noRetry.Memories(ctx, "ana", client.MemoryFilter{})
	wantCode(t, "second request at once", err, memento.ERATELIMITED)
	if !client.IsRetryable(err) {
		t.Errorf("IsRetryable(%v) = false", err)
	}
	var sl sleeps
	retry := newClient(t, limited.URL, client.WithKey(key), client.WithRetries(3, time.Minute))
	client.SetSleep(retry, func(ctx context.Context, d time.Duration) error {
		sl.sleep(ctx, d)
		time.Sleep(d)
		return nil
	})
	for i := range 2 {
		if _, err := retry.Memories(ctx, "ana", client.MemoryFilter{}); err != nil {
			t.Fatalf("request %d with retries: %v", i, err)
		}
	}
	if len(sl.d) == 0 || sl.d[0] < time.Second {
		t.Errorf("waits = %v, want the server's Retry-After (at least 1s)", sl.d)
	}
}

// serveAgain serves s's store and routes again, with its key store and,
// when rate is above zero, that many requests a second per key.
func serveAgain(t *testing.T, s *server, rate float64) *httptest.Server {
	t.Helper()
	srv := &mhttp.Server{Catalog: s.srv.Catalog, Routes: s.srv.Routes, Keys: s.db, KeyRate: rate, KeyBurst: 1}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts
}

// TestClientReady checks Ready against a server still warming up: without
// retries the error names what is warming; with them the client waits out
// the Retry-After until the warm-up ends.
func TestClientReady(t *testing.T) {
	s := newServer(t, nil, nil)
	done := s.srv.Warm("titles")
	err := newClient(t, s.ts.URL, client.WithRetries(0, time.Minute)).Ready(t.Context())
	wantCode(t, "ready while warming", err, memento.EUNAVAILABLE)
	if err == nil || !strings.Contains(err.Error(), "titles") {
		t.Errorf("ready while warming: %v, want an error naming the titles", err)
	}
	time.AfterFunc(200*time.Millisecond, done)
	if err := newClient(t, s.ts.URL).Ready(t.Context()); err != nil {
		t.Errorf("ready once the warm-up ended: %v", err)
	}
}
