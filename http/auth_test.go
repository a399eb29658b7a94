package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/engine"
	"github.com/memento-ai/memento/engine/enginetest"
	mhttp "github.com/memento-ai/memento/http"
	"github.com/memento-ai/memento/internal/logtest"
)

// echoRoutes are routes that say what the handler saw: the tenant, the
// principal and the user, for every way a request names a user.
func echoRoutes(api huma.API, _ *mhttp.Server) {
	type out struct {
		Body struct {
			Tenant string            `json:"tenant"`
			User   string            `json:"user"`
			Key    string            `json:"key"`
			Work   string            `json:"work"`
			P      memento.Principal `json:"p"`
		}
	}
	echo := func(ctx context.Context, tenant, user string) (*out, error) {
		o := &out{}
		o.Body.Tenant, o.Body.User = tenant, user
		p, _ := memento.PrincipalFrom(ctx)
		o.Body.Key, o.Body.P = p.KeyID, p
		o.Body.Work, _ = memento.TenantFrom(ctx)
		return o, nil
	}
	huma.Register(api, huma.Operation{OperationID: "echoPath", Method: http.MethodGet, Path: "/v1/users/{user}/echo"},
		func(ctx context.Context, in *struct {
			mhttp.TenantHeader
			User string `path:"user"`
		}) (*out, error) {
			return echo(ctx, in.Tenant, in.User)
		})
	huma.Register(api, huma.Operation{OperationID: "echoQuery", Method: http.MethodGet, Path: "/v1/echo"},
		func(ctx context.Context, in *struct {
			mhttp.TenantHeader
			User string `query:"user"`
		}) (*out, error) {
			return echo(ctx, in.Tenant, in.User)
		})
	huma.Register(api, huma.Operation{OperationID: "echoBody", Method: http.MethodPost, Path: "/v1/echo"},
		func(ctx context.Context, in *struct {
			mhttp.TenantHeader
			Body struct {
				User string `json:"user"`
			}
		}) (*out, error) {
			return echo(ctx, in.Tenant, in.Body.User)
		})
}

type authFixture struct {
	t    *testing.T
	db   engine.Store
	url  string
	logs *logtest.Buffer
}

func newAuthServer(t *testing.T, extra ...func(s *mhttp.Server)) *authFixture {
	t.Helper()
	db := enginetest.Open(t)
	logs := &logtest.Buffer{}
	ts := testServer(t, append([]func(s *mhttp.Server){func(s *mhttp.Server) {
		s.Keys = db
		s.Logger = slog.New(slog.NewJSONHandler(logs, nil))
		s.Routes = append(s.Routes, echoRoutes)
	}}, extra...)...)
	return &authFixture{t: t, db: db, url: ts.URL, logs: logs}
}

// key creates a key in the fixture's store and returns it and its id.
func (f *authFixture) key(tenant, user string, role memento.KeyRole) (string, string) {
	f.t.Helper()
	k, key, hash, err := memento.NewAPIKey(tenant, user, role, time.Now())
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.db.CreateKey(context.Background(), k, hash); err != nil {
		f.t.Fatal(err)
	}
	return key, k.ID
}

type answer struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func (a answer) code() string {
	e, _ := a.body["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func (f *authFixture) do(method, path, key, body string, hdr ...string) answer {
	f.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "X-Body" {
			rd = strings.NewReader(hdr[i+1])
		}
	}
	req, _ := http.NewRequest(method, f.url+path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] != "X-Body" {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, header: resp.Header, raw: string(b)}
	_ = json.Unmarshal(b, &a.body)
	return a
}

func TestOpenModeNeedsNoKey(t *testing.T) {
	f := newAuthServer(t)
	a := f.do("GET", "/v1/users/ann/echo", "", "", "X-Memento-Tenant", "lab")
	if a.status != 200 || a.body["tenant"] != "lab" || a.body["work"] != "lab" || a.body["p"].(map[string]any)["Open"] != true {
		t.Fatalf("open mode: %d %s; want 200 in tenant lab with an open principal", a.status, a.raw)
	}
	// A key is checked even in open mode: a client that sends one learns
	// that it is wrong.
	if a := f.do("GET", "/v1/users/ann/echo", memento.KeyPrefix+strings.Repeat("A", 43), ""); a.status != 401 || a.code() != memento.EUNAUTHORIZED {
		t.Errorf("unknown key in open mode = %d %s, want 401", a.status, a.raw)
	}
}

func TestKeyedModeNeedsAKey(t *testing.T) {
	f := newAuthServer(t)
	key, id := f.key("acme", "", memento.KeyWrite)

	for _, tc := range []struct{ name, key string }{
		{"no key", ""},
		{"not a memento key", "sk-123"},
		{"unknown key", memento.KeyPrefix + strings.Repeat("B", 43)},
	} {
		a := f.do("GET", "/v1/users/ann/echo", tc.key, "")
		if a.status != 401 || a.code() != memento.EUNAUTHORIZED || a.header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: %d %s (WWW-Authenticate %q), want 401 EUNAUTHORIZED", tc.name, a.status, a.raw, a.header.Get("WWW-Authenticate"))
		}
		if strings.Contains(a.raw, "ann") {
			t.Errorf("%s: the refusal shows data: %s", tc.name, a.raw)
		}
	}
	if a := f.do("GET", "/v1/users/ann/echo", "", "", "Authorization", "Basic Zm9vOmJhcg=="); a.status != 401 {
		t.Errorf("basic auth = %d, want 401", a.status)
	}
	if a := f.do("GET", "/healthz", "", ""); a.status != 200 {
		t.Errorf("/healthz without a key = %d, want 200", a.status)
	}
	if a := f.do("GET", "/readyz", "", ""); a.status != 200 {
		t.Errorf("/readyz without a key = %d, want 200", a.status)
	}
	if a := f.do("GET", "/metrics", key, ""); a.status != 403 {
		t.Errorf("/metrics with a write key = %d, want 403 (admin only)", a.status)
	}

	a := f.do("GET", "/v1/users/ann/echo", key, "")
	if a.status != 200 || a.body["tenant"] != "acme" || a.body["key"] != id || a.body["work"] != "acme" {
		t.Fatalf("with the key: %d %s; want 200 in tenant acme", a.status, a.raw)
	}
	// The key's own tenant may be named; another is refused.
	if a := f.do("GET", "/v1/users/ann/echo", key, "", "X-Memento-Tenant", "acme"); a.status != 200 {
		t.Errorf("X-Memento-Tenant naming the key's tenant = %d %s, want 200", a.status, a.raw)
	}
	if a := f.do("GET", "/v1/users/ann/echo", key, "", "X-Memento-Tenant", "globex"); a.status != 403 || a.code() != memento.EFORBIDDEN {
		t.Errorf("X-Memento-Tenant naming another tenant = %d %s, want 403 EFORBIDDEN", a.status, a.raw)
	}

	if err := f.db.RevokeKey(context.Background(), "", id); err != nil {
		t.Fatal(err)
	}
	if a := f.do("GET", "/v1/users/ann/echo", key, ""); a.status != 401 || !strings.Contains(a.raw, id) {
		t.Errorf("revoked key = %d %s, want 401 naming the key id", a.status, a.raw)
	}
	// Every refusal is in the audit log, with the key's id, never the key.
	logs := f.logs.String()
	if !strings.Contains(logs, `"msg":"request refused"`) || !strings.Contains(logs, `"key":"`+id+`"`) || !strings.Contains(logs, `"route":"GET /v1/users/{user}/echo"`) {
		t.Errorf("audit log lacks the refusals:\n%s", logs)
	}
	if strings.Contains(logs, key) || strings.Contains(logs, key[3:]) {
		t.Error("the audit log holds the key itself")
	}
	if n := strings.Count(logs, `"msg":"request refused"`); n < 7 {
		t.Errorf("audit log has %d refusals, want one per refused request (at least 7):\n%s", n, logs)
	}
}

func TestUserScopedKey(t *testing.T) {
	f := newAuthServer(t)
	alice, _ := f.key("acme", "alice", memento.KeyWrite)
	for _, tc := range []struct {
		method, path, body string
		want               int
	}{
		{"GET", "/v1/users/alice/echo", "", 200},
		{"GET", "/v1/users/bob/echo", "", 403},
		{"GET", "/v1/users/b%6Fb/echo", "", 403},
		{"GET", "/v1/echo?user=alice", "", 200},
		{"GET", "/v1/echo?user=bob", "", 403},
		{"GET", "/v1/echo?user=alice&user=bob", "", 403},
		{"POST", "/v1/echo", `{"user":"alice"}`, 200},
		{"POST", "/v1/echo", `{"user":"bob"}`, 403},
		{"POST", "/v1/echo", `{"user":""}`, 403},
		{"GET", "/v1/users/alice/echo?user=bob", "", 403},
	} {
		a := f.do(tc.method, tc.path, alice, tc.body)
		if a.status != tc.want {
			t.Errorf("%s %s %s = %d %s, want %d", tc.method, tc.path, tc.body, a.status, a.raw, tc.want)
		}
		if tc.want == 403 && (a.code() != memento.EFORBIDDEN || strings.Contains(a.raw, `"tenant"`)) {
			t.Errorf("%s %s: refusal %s is not a plain EFORBIDDEN", tc.method, tc.path, a.raw)
		}
		if tc.want == 200 && a.body["user"] != "alice" {
			t.Errorf("%s %s: handler saw user %v, want alice", tc.method, tc.path, a.body["user"])
		}
	}
}

// TestUserScopedKeyForm holds a multipart form's "user" field (the speech
// turn's) to the key's user, before the route's handler runs.
func TestUserScopedKeyForm(t *testing.T) {
	reached := make(chan string, 4)
	f := newAuthServer(t, func(s *mhttp.Server) {
		s.Mounts = map[string]http.Handler{"POST " + mhttp.AudioPath: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			reached <- r.FormValue("user")
			w.WriteHeader(204)
		})}
	})
	alice, _ := f.key("acme", "alice", memento.KeyWrite)
	for _, tc := range []struct {
		user string
		want int
	}{{"alice", 204}, {"bob", 403}} {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		mw.WriteField("user", tc.user)
		mw.WriteField("thread", "t1")
		fw, _ := mw.CreateFormFile("audio", "a.webm")
		fw.Write([]byte("not really audio"))
		mw.Close()
		a := f.do("POST", mhttp.AudioPath, alice, "", "Content-Type", mw.FormDataContentType(), "X-Body", body.String())
		if a.status != tc.want {
			t.Errorf("form with user %s = %d %s, want %d", tc.user, a.status, a.raw, tc.want)
		}
	}
	close(reached)
	var got []string
	for u := range reached {
		got = append(got, u)
	}
	if len(got) != 1 || got[0] != "alice" {
		t.Errorf("the handler was reached for %q, want only alice", got)
	}
}

func TestReadKeyCannotWrite(t *testing.T) {
	f := newAuthServer(t)
	read, _ := f.key("acme", "", memento.KeyRead)
	if a := f.do("GET", "/v1/echo?user=x", read, ""); a.status != 200 {
		t.Errorf("read key GET = %d %s, want 200", a.status, a.raw)
	}
	for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		if a := f.do(m, "/v1/echo", read, `{"user":"x"}`); a.status != 403 || a.code() != memento.EFORBIDDEN {
			t.Errorf("read key %s = %d %s, want 403", m, a.status, a.raw)
		}
	}
}

func TestRateLimitPerKey(t *testing.T) {
	f := newAuthServer(t, func(s *mhttp.Server) { s.KeyRate, s.KeyBurst = 0.5, 2 })
	k1, id1 := f.key("acme", "", memento.KeyWrite)
	k2, _ := f.key("acme", "", memento.KeyWrite)
	for i := range 2 {
		if a := f.do("GET", "/v1/echo", k1, ""); a.status != 200 {
			t.Fatalf("request %d within the burst = %d %s", i+1, a.status, a.raw)
		}
	}
	a := f.do("GET", "/v1/echo", k1, "")
	if a.status != 429 || a.code() != memento.ERATELIMITED {
		t.Fatalf("request over the burst = %d %s, want 429 ERATELIMITED", a.status, a.raw)
	}
	secs, err := strconv.Atoi(a.header.Get("Retry-After"))
	if err != nil || secs < 1 || secs > 2 {
		t.Errorf("Retry-After = %q, want 1 or 2 seconds at half a request a second", a.header.Get("Retry-After"))
	}
	if !strings.Contains(f.logs.String(), `"reason":"key `+id1+` is over its rate limit`) {
		t.Errorf("no audit line for the rate limit:\n%s", f.logs.String())
	}
	// Another key has its own bucket, and healthz none.
	if a := f.do("GET", "/v1/echo", k2, ""); a.status != 200 {
		t.Errorf("another key = %d, want 200", a.status)
	}
	for range 5 {
		if a := f.do("GET", "/healthz", "", ""); a.status != 200 {
			t.Fatalf("/healthz = %d, want 200 (no limit)", a.status)
		}
	}
}

func TestKeyRoutes(t *testing.T) {
	f := newAuthServer(t)
	admin, adminID := f.key("acme", "", memento.KeyAdmin)
	write, _ := f.key("acme", "", memento.KeyWrite)
	otherAdmin, _ := f.key("globex", "", memento.KeyAdmin)

	a := f.do("POST", "/v1/keys", admin, `{"user":"alice","role":"read"}`)
	if a.status != 201 || a.body["tenant"] != "acme" || a.body["user"] != "alice" || a.body["role"] != "read" {
		t.Fatalf("create = %d %s", a.status, a.raw)
	}
	newKey, newID := a.body["key"].(string), a.body["id"].(string)
	if got := f.do("GET", "/v1/users/alice/echo", newKey, ""); got.status != 200 {
		t.Errorf("the created key = %d %s, want 200", got.status, got.raw)
	}
	if got := f.do("GET", "/v1/users/bob/echo", newKey, ""); got.status != 403 {
		t.Errorf("the created key for another user = %d, want 403", got.status)
	}

	a = f.do("GET", "/v1/keys", admin, "")
	if a.status != 200 || strings.Contains(a.raw, newKey) || strings.Contains(a.raw, "globex") || !strings.Contains(a.raw, adminID) {
		t.Errorf("list = %d %s; want acme's keys, never a key itself", a.status, a.raw)
	}
	if a := f.do("GET", "/v1/keys", write, ""); a.status != 403 {
		t.Errorf("list with a write key = %d, want 403", a.status)
	}
	// The route's own refusal is audited too.
	if logs := f.logs.String(); !strings.Contains(logs, `"route":"GET /v1/keys","path":"/v1/keys","remote"`) || !strings.Contains(logs, `"by":"route","status":403,"code":"EFORBIDDEN","reason":"managing keys needs an admin key`) {
		t.Errorf("no audit line for the route's refusal:\n%s", logs)
	}
	if a := f.do("POST", "/v1/keys", admin, `{"role":"owner"}`); a.status != 400 {
		t.Errorf("create with a bad role = %d %s, want 400", a.status, a.raw)
	}
	// Another tenant's admin cannot see or revoke the key.
	if a := f.do("DELETE", "/v1/keys/"+newID, otherAdmin, ""); a.status != 404 {
		t.Errorf("revoke by another tenant's admin = %d, want 404", a.status)
	}
	if a := f.do("DELETE", "/v1/keys/"+newID, admin, ""); a.status != 204 {
		t.Errorf("revoke = %d %s, want 204", a.status, a.raw)
	}
	if a := f.do("GET", "/v1/users/alice/echo", newKey, ""); a.status != 401 {
		t.Errorf("revoked key = %d, want 401", a.status)
	}
}

func TestKeyRoutesNeedAKeyInOpenMode(t *testing.T) {
	f := newAuthServer(t)
	if a := f.do("POST", "/v1/keys", "", `{}`); a.status != 403 || !strings.Contains(a.raw, "memento keys create") {
		t.Errorf("create key in open mode = %d %s, want 403 naming memento keys create", a.status, a.raw)
	}
}

func TestRequireKeys(t *testing.T) {
	f := newAuthServer(t, func(s *mhttp.Server) { s.RequireKeys = true })
	if a := f.do("GET", "/v1/echo", "", ""); a.status != 401 {
		t.Errorf("no key with RequireKeys and no keys = %d, want 401", a.status)
	}
	if a := f.do("GET", "/healthz", "", ""); a.status != 200 {
		t.Errorf("/healthz = %d, want 200", a.status)
	}
}

func TestOpenRefusesNonLoopbackWithoutKeys(t *testing.T) {
	db := enginetest.Open(t)
	s := &mhttp.Server{Addr: "0.0.0.0:0", Keys: db}
	err := s.Open()
	if err == nil {
		s.Close(context.Background())
		t.Fatal("Open on 0.0.0.0 without a key succeeded")
	}
	if !strings.Contains(memento.ErrorMessage(err), "memento keys create") {
		t.Errorf("error %q does not say how to create a key", memento.ErrorMessage(err))
	}
	k, _, hash, _ := memento.NewAPIKey("acme", "", memento.KeyAdmin, time.Now())
	if err := db.CreateKey(context.Background(), k, hash); err != nil {
		t.Fatal(err)
	}
	s = &mhttp.Server{Addr: "0.0.0.0:0", Keys: db}
	if err := s.Open(); err != nil {
		t.Fatalf("Open on 0.0.0.0 with a key: %v", err)
	}
	defer s.Close(context.Background())
	port := s.URL()[strings.LastIndex(s.URL(), ":"):]
	resp, err := http.Get("http://127.0.0.1" + port + "/v1/catalog/search")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("request without a key = %d, want 401", resp.StatusCode)
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "localhost:80": true, "[::1]:8080": true, "127.1.2.3:1": true,
		"0.0.0.0:8080": false, ":8080": false, "[::]:8080": false, "10.0.0.5:80": false, "memento.example.com:80": false,
	} {
		if got := mhttp.IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestWebPageAsksForAKey(t *testing.T) {
	db := enginetest.Open(t)
	f := newAuthServer(t, func(s *mhttp.Server) {
		s.Routes = append(s.Routes, mhttp.RegisterUI(mhttp.UI{Threads: db, Messages: db, Events: db}))
	})
	f.key("acme", "", memento.KeyWrite)
	a := f.do("GET", "/", "", "", "Accept", "text/html,application/xhtml+xml")
	if a.status != 401 || !strings.Contains(a.raw, `src="/auth/key.js"`) || !strings.Contains(a.header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Errorf("GET / without a key = %d %q, want the key prompt page", a.status, a.raw)
	}
	for _, p := range []string{"/auth/key.js", "/favicon.ico"} {
		req, _ := http.NewRequest("GET", f.url+p, nil)
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode >= 400 {
			t.Errorf("GET %s without a key = %d, want it served", p, resp.StatusCode)
		}
	}
	if a := f.do("GET", "/ui/threads?user=me", "", ""); a.status != 401 {
		t.Errorf("GET /ui/threads without a key = %d, want 401", a.status)
	}
}

// BenchmarkAuth measures what a key costs a request: the same route in
// open mode and with a key (one hash and one indexed store read), and
// with a key and a rate limit.
func BenchmarkAuth(b *testing.B) {
	for _, mode := range []string{"open", "key", "key+rate"} {
		b.Run(mode, func(b *testing.B) {
			db := enginetest.Open(b)
			s := &mhttp.Server{Version: "bench", Health: map[string]memento.Pinger{}, Keys: db, Routes: []func(huma.API, *mhttp.Server){echoRoutes}}
			if mode == "key+rate" {
				s.KeyRate, s.KeyBurst = 1e9, 1e9
			}
			h := s.Handler()
			key := ""
			if mode != "open" {
				k, secret, hash, _ := memento.NewAPIKey("acme", "", memento.KeyWrite, time.Now())
				if err := db.CreateKey(context.Background(), k, hash); err != nil {
					b.Fatal(err)
				}
				key = secret
			}
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest("GET", "http://127.0.0.1/v1/users/ann/echo", nil)
				if key != "" {
					req.Header.Set("Authorization", "Bearer "+key)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
		})
	}
}
