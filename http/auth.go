package http

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/memento-ai/memento"
)

// Authentication. A request names its key in "Authorization: Bearer KEY";
// the key's hash is looked up in Server.Keys on every request, so a key
// revoked with `memento keys revoke` stops working at once, in every
// process that shares the store.
//
// The server is in one of two modes:
//
//   - Open mode (no key was ever created and the server listens on
//     loopback only): requests need no key and name their tenant in
//     X-Memento-Tenant, for local development, as before keys existed.
//   - Keyed mode (a key exists, or the server listens on another address,
//     Server.RequireKeys): every request needs a key except /healthz, CORS
//     preflights, and the web page's static assets and key prompt, which
//     hold no data. The tenant is the key's, and X-Memento-Tenant naming
//     another is refused; a key scoped to a user reaches only that user;
//     read keys cannot change data; admin keys also manage keys.
//
// The user a request is about is found the same way for every route, so a
// route added later is covered without this file knowing it: the {user}
// wildcard of the route's pattern, the user query parameter, and the
// top-level "user" field of a JSON body (POST /v1/chat's) when the path
// names none. Every refusal answers in the one error shape (401
// EUNAUTHORIZED, 403 EFORBIDDEN, 429 ERATELIMITED with Retry-After) and
// writes an audit line: the key's id (never the key), the route and the
// reason.

// authenticator is the server's authentication and per-key rate limits.
type authenticator struct {
	keys     memento.KeyStore
	required atomic.Bool
	// hasKeys latches once a key is seen to exist: keys are never
	// deleted, so the store need not be asked again.
	hasKeys atomic.Bool

	limit rate.Limit
	burst int
	mu    sync.Mutex
	// limiters are the token buckets by key id; there are as many as
	// keys that made a request, which an operator creates by hand.
	limiters map[string]*rate.Limiter

	mux    *http.ServeMux
	mounts []string
	log    *slog.Logger

	refused *prometheus.CounterVec
}

func newAuthenticator(s *Server) *authenticator {
	a := &authenticator{
		keys:     s.Keys,
		limiters: map[string]*rate.Limiter{},
		mux:      s.mux,
		log:      s.Logger,
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "memento_http_refused_total", Help: "Requests refused by authentication or rate limits, by reason (unauthorized, forbidden, rate_limited).",
		}, []string{"reason"}),
	}
	a.required.Store(s.RequireKeys)
	if s.KeyRate > 0 {
		a.limit = rate.Limit(s.KeyRate)
		a.burst = max(s.KeyBurst, 1)
	}
	for p := range s.Mounts {
		a.mounts = append(a.mounts, p)
	}
	return a
}

// publicRoutes are the patterns served without a key: they hold no data.
// The web page's static assets must load before the page can ask for a
// key, since a <script> or stylesheet link cannot send one.
var publicRoutes = map[string]bool{
	"GET /healthz":      true,
	"GET /readyz":       true,
	"GET /static/":      true,
	"GET /favicon.ico":  true,
	"GET /auth/key.js":  true,
	"HEAD /healthz":     true,
	"HEAD /readyz":      true,
	"HEAD /static/":     true,
	"HEAD /favicon.ico": true,
}

// userQueryPages are the web page's routes whose user comes from ?user=
// with a default; a user-scoped key gets its own user there instead of the
// default.
var userQueryPages = map[string]bool{
	"GET /{$}":             true,
	"GET /ui/threads":      true,
	"GET /ui/conversation": true,
}

// adminRoutes need an admin key: the metrics name every tenant.
var adminRoutes = map[string]bool{
	"GET /metrics": true,
}

// wrap puts authentication in front of next (the server's mux).
func (a *authenticator) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pattern := a.mux.Handler(r)
		route := pattern
		if route == "" {
			route = "unmatched"
		}
		serve := func(p memento.Principal, tenant string) {
			ctx := memento.WithTenant(memento.WithPrincipal(r.Context(), p), tenant)
			r2 := r.WithContext(ctx)
			rec := &refusalRecorder{ResponseWriter: w}
			next.ServeHTTP(rec, r2)
			// The metrics read the pattern the mux matched from r.
			r.Pattern = r2.Pattern
			if rec.status == http.StatusUnauthorized || rec.status == http.StatusForbidden || rec.status == http.StatusTooManyRequests {
				// A route refused it itself (an admin route, a per-user
				// check of its own): audited like the refusals above.
				a.audit(r, route, p.KeyID, rec.status, codeFor(rec.status), rec.message(), "route")
			}
		}
		if r.Method == http.MethodOptions || publicRoutes[pattern] || pattern == "GET "+keyScriptPath {
			serve(memento.Principal{Open: true}, headerTenant(r))
			return
		}
		p, err := a.authenticate(r)
		if err != nil {
			a.refuse(w, r, route, "", err)
			return
		}
		if p.Open {
			serve(p, headerTenant(r))
			return
		}
		if err := a.allow(w, p); err != nil {
			a.refuse(w, r, route, p.KeyID, err)
			return
		}
		if err := a.authorize(w, r, pattern, p); err != nil {
			a.refuse(w, r, route, p.KeyID, err)
			return
		}
		// Handlers read the tenant from X-Memento-Tenant; with a key it is
		// the key's, whatever the request said.
		r.Header.Set("X-Memento-Tenant", p.Tenant)
		serve(p, p.Tenant)
	})
}

// headerTenant is the tenant an open request names.
func headerTenant(r *http.Request) string {
	if t := r.Header.Get("X-Memento-Tenant"); t != "" {
		return t
	}
	return memento.DefaultTenant
}

// RequestTenant is the tenant a request acts for: its key's, or in open
// mode the one X-Memento-Tenant names (the default tenant without it).
// Routes outside the huma API (the web page) read it.
func RequestTenant(r *http.Request) string {
	if t, ok := memento.TenantFrom(r.Context()); ok {
		return t
	}
	return headerTenant(r)
}

// errNeedKey is the answer to a request without a key where one is needed.
func errNeedKey() error {
	return memento.Errorf(memento.EUNAUTHORIZED, "this server needs an API key: send Authorization: Bearer KEY (an operator creates one with `memento keys create --tenant T`)")
}

// authenticate finds the request's principal: its key's, or an open one.
func (a *authenticator) authenticate(r *http.Request) (memento.Principal, error) {
	ctx := r.Context()
	h := r.Header.Get("Authorization")
	if h == "" {
		if a.required.Load() {
			return memento.Principal{}, errNeedKey()
		}
		keyed, err := a.keyed(ctx)
		if err != nil {
			return memento.Principal{}, err
		}
		if keyed {
			return memento.Principal{}, errNeedKey()
		}
		return memento.Principal{Open: true}, nil
	}
	scheme, token, _ := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if !strings.EqualFold(scheme, "Bearer") || token == "" {
		return memento.Principal{}, memento.Errorf(memento.EUNAUTHORIZED, "the Authorization header must be Bearer KEY, got scheme %s", quoteShort(scheme))
	}
	if !memento.LooksLikeAPIKey(token) {
		return memento.Principal{}, memento.Errorf(memento.EUNAUTHORIZED, "the bearer token is not a Memento API key (keys begin with %q)", memento.KeyPrefix)
	}
	if a.keys == nil {
		return memento.Principal{}, memento.Errorf(memento.EUNAUTHORIZED, "this server has no key store, so no key is valid")
	}
	k, err := a.keys.KeyByHash(ctx, memento.HashAPIKey(token))
	if memento.ErrorCode(err) == memento.ENOTFOUND {
		return memento.Principal{}, memento.Errorf(memento.EUNAUTHORIZED, "the API key is not known to this server")
	}
	if err != nil {
		return memento.Principal{}, memento.WrapError(memento.EUNAVAILABLE, err, "the API key could not be checked: the store is unavailable")
	}
	if k.RevokedAt != nil {
		return memento.Principal{KeyID: k.ID}, memento.Errorf(memento.EUNAUTHORIZED, "API key %s was revoked", k.ID)
	}
	a.hasKeys.Store(true)
	return k.Principal(), nil
}

// keyed reports whether a key exists, so that every request needs one.
func (a *authenticator) keyed(ctx context.Context) (bool, error) {
	if a.hasKeys.Load() {
		return true, nil
	}
	if a.keys == nil {
		return false, nil
	}
	has, err := a.keys.HasKeys(ctx)
	if err != nil {
		return false, memento.WrapError(memento.EUNAVAILABLE, err, "the server could not tell whether it needs an API key: the store is unavailable")
	}
	if has {
		a.hasKeys.Store(true)
	}
	return has, nil
}

// rateLimited is a refusal by the rate limit, with when to retry.
type rateLimited struct {
	err        *memento.Error
	retryAfter time.Duration
}

func (e *rateLimited) Error() string { return e.err.Error() }
func (e *rateLimited) Unwrap() error { return e.err }

// allow takes a token from the key's bucket, or says when one will be
// there.
func (a *authenticator) allow(w http.ResponseWriter, p memento.Principal) error {
	if a.limit <= 0 {
		return nil
	}
	a.mu.Lock()
	lim := a.limiters[p.KeyID]
	if lim == nil {
		lim = rate.NewLimiter(a.limit, a.burst)
		a.limiters[p.KeyID] = lim
	}
	a.mu.Unlock()
	now := time.Now()
	res := lim.ReserveN(now, 1)
	if !res.OK() {
		return memento.Errorf(memento.ERATELIMITED, "key %s may not send requests", p.KeyID)
	}
	d := res.DelayFrom(now)
	if d == 0 {
		return nil
	}
	// Refused requests do not spend the tokens a retry will need.
	res.CancelAt(now)
	return &rateLimited{
		err:        memento.Errorf(memento.ERATELIMITED, "key %s is over its rate limit of %g requests a second (burst %d); retry after %s", p.KeyID, float64(a.limit), a.burst, retrySeconds(d)),
		retryAfter: d,
	}
}

// retrySeconds is d rounded up to whole seconds, as Retry-After takes it.
func retrySeconds(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds())))) + "s"
}

// authorize checks what a keyed request may do: reach the user it names,
// write, manage the server.
func (a *authenticator) authorize(w http.ResponseWriter, r *http.Request, pattern string, p memento.Principal) error {
	if t := r.Header.Get("X-Memento-Tenant"); t != "" && t != p.Tenant {
		return memento.Errorf(memento.EFORBIDDEN, "this key belongs to tenant %q; X-Memento-Tenant may not name another", p.Tenant)
	}
	if adminRoutes[pattern] && p.Role != memento.KeyAdmin {
		return memento.Errorf(memento.EFORBIDDEN, "%s needs an admin key", r.URL.Path)
	}
	mounted := a.mounted(pattern)
	if changesState(r.Method) && !p.CanWrite() && !mounted {
		// A mounted surface (MCP) sends reads and writes alike as POST;
		// it checks Principal.CanWrite per operation itself.
		return memento.Errorf(memento.EFORBIDDEN, "key %s is a read key and may not change data", p.KeyID)
	}
	if p.User == "" {
		return nil
	}
	if userQueryPages[pattern] && r.URL.Query().Get("user") == "" {
		q := r.URL.Query()
		q.Set("user", p.User)
		r.URL.RawQuery = q.Encode()
	}
	if userQueryPages[pattern] {
		// The key prompt puts the user in the address, so the page does
		// not switch to another user it remembers.
		w.Header().Set("X-Memento-Key-User", p.User)
	}
	users, err := requestUsers(r, pattern)
	if err != nil {
		return err
	}
	for _, u := range users {
		// An empty user is refused too: no route may read it as "every
		// user" for a key that reaches one.
		if u != p.User {
			return memento.Errorf(memento.EFORBIDDEN, "this key reaches only user %q", p.User)
		}
	}
	return nil
}

// mounted reports whether pattern is one of Server.Mounts.
func (a *authenticator) mounted(pattern string) bool {
	for _, m := range a.mounts {
		if pattern == m {
			return true
		}
	}
	return false
}

// requestUsers lists the users a request names: the {user} wildcard of
// its route, every user query parameter, and, when the path names no
// user, a JSON body's top-level "user" field or a multipart form's "user"
// field. A route whose body or query names a user some other way must be
// added here.
func requestUsers(r *http.Request, pattern string) ([]string, error) {
	var users []string
	pathUser, inPath := pathWildcard(pattern, r.URL, "user")
	if inPath {
		users = append(users, pathUser)
	}
	users = append(users, r.URL.Query()["user"]...)
	if inPath || r.Body == nil || r.Body == http.NoBody {
		return users, nil
	}
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
	default:
		return users, nil
	}
	// The guard has read the body into memory (readBody); it is read
	// again here and put back for the handler.
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(r.Body); err != nil {
		return nil, memento.WrapError(memento.EINVALID, err, "the request body could not be read")
	}
	r.Body = readCloser{bytes.NewReader(buf.Bytes())}
	if typ, params, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err == nil && typ == "multipart/form-data" {
		// A form (POST /v1/chat/audio) names its user in a "user" field.
		form := multipart.NewReader(bytes.NewReader(buf.Bytes()), params["boundary"])
		for {
			part, err := form.NextPart()
			if err != nil {
				break
			}
			if part.FormName() == "user" {
				v, _ := io.ReadAll(io.LimitReader(part, 4*memento.MaxIDLen))
				users = append(users, strings.TrimSpace(string(v)))
			}
			part.Close()
		}
		return users, nil
	}
	var peek struct {
		User *string `json:"user"`
	}
	if json.Unmarshal(buf.Bytes(), &peek) == nil && peek.User != nil {
		users = append(users, *peek.User)
	}
	return users, nil
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// pathWildcard returns the value of wildcard {name} of pattern in u's
// path, as the mux matches it (segment by segment, unescaped).
func pathWildcard(pattern string, u *url.URL, name string) (string, bool) {
	if _, rest, ok := strings.Cut(pattern, " "); ok {
		pattern = rest
	}
	if i := strings.IndexByte(pattern, '/'); i > 0 {
		pattern = pattern[i:] // a host in the pattern
	}
	want := "{" + name + "}"
	pseg := strings.Split(pattern, "/")
	idx := -1
	for i, s := range pseg {
		if s == want || s == "{"+name+"...}" {
			idx = i
			break
		}
	}
	if idx < 0 {
		return "", false
	}
	useg := strings.Split(u.EscapedPath(), "/")
	if idx >= len(useg) {
		return "", true
	}
	v, err := url.PathUnescape(useg[idx])
	if err != nil {
		return useg[idx], true
	}
	return v, true
}

// refuse answers a refused request and writes its audit line.
func (a *authenticator) refuse(w http.ResponseWriter, r *http.Request, route, keyID string, err error) {
	code := memento.ErrorCode(err)
	a.audit(r, route, keyID, StatusFor(code), code, memento.ErrorMessage(err), "auth")
	switch code {
	case memento.EUNAUTHORIZED:
		w.Header().Set("WWW-Authenticate", `Bearer realm="memento"`)
		if route == "GET /{$}" && strings.Contains(r.Header.Get("Accept"), "text/html") {
			writeKeyPrompt(w)
			return
		}
	case memento.ERATELIMITED:
		var rl *rateLimited
		if errors.As(err, &rl) {
			w.Header().Set("Retry-After", strings.TrimSuffix(retrySeconds(rl.retryAfter), "s"))
		}
	}
	writeError(w, r, a.log, err)
}

// audit writes the audit line of a refused request and counts it.
func (a *authenticator) audit(r *http.Request, route, keyID string, status int, code, reason, by string) {
	label := map[string]string{memento.EUNAUTHORIZED: "unauthorized", memento.EFORBIDDEN: "forbidden", memento.ERATELIMITED: "rate_limited"}[code]
	if label == "" {
		return
	}
	a.refused.WithLabelValues(label).Inc()
	a.log.LogAttrs(r.Context(), slog.LevelWarn, "request refused",
		slog.String("key", keyID), slog.String("method", r.Method), slog.String("route", route),
		slog.String("path", r.URL.Path), slog.String("remote", r.RemoteAddr), slog.String("by", by),
		slog.Int("status", status), slog.String("code", code), slog.String("reason", reason))
}

// refusalRecorder notes the status a route answered and the start of an
// error body, for the audit line. Like statusRecorder (server.go) it has
// no Unwrap, and it passes Flush on for streamed answers (MCP).
type refusalRecorder struct {
	http.ResponseWriter
	status int
	head   []byte
}

func (r *refusalRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *refusalRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if r.status >= 400 && len(r.head) < 2048 {
		r.head = append(r.head, b[:min(len(b), 2048-len(r.head))]...)
	}
	return r.ResponseWriter.Write(b)
}

func (r *refusalRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// message is the error message of the recorded body, if it is one.
func (r *refusalRecorder) message() string {
	var b ErrorBody
	if json.Unmarshal(r.head, &b) == nil && b.Error.Message != "" {
		return b.Error.Message
	}
	return http.StatusText(r.status)
}

// keyScriptPath serves the key prompt's script.
const keyScriptPath = "/auth/key.js"

// writeKeyPrompt answers the web page's address, when a key is needed and
// the browser's navigation carried none, with a page that asks for the key
// (or finds it in the browser session), fetches the real page with it and
// puts it in place. The page's own script then sends the key with every
// call it makes.
func writeKeyPrompt(w http.ResponseWriter) {
	setPageHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write([]byte(keyPromptHTML))
}

const keyPromptHTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Memento: API key needed</title>
<script src="` + keyScriptPath + `" defer></script>
</head>
<body>
<main id="key-prompt">
<h1>This Memento needs an API key</h1>
<p>Ask the operator for a key (<code>memento keys create --tenant T --user U</code>). It is kept in this browser tab only, until the tab is closed.</p>
<form id="key-form" method="post">
<label for="key-input">API key</label>
<input id="key-input" type="password" autocomplete="off" spellcheck="false" required placeholder="mk_…">
<button type="submit">Open</button>
</form>
<p id="key-error" role="alert"></p>
</main>
</body>
</html>
`

// keyScript is the key prompt's behaviour: it is served from the origin,
// as the page's policy allows no inline script.
const keyScript = `// The key prompt of Memento's web page (http/auth.go).
'use strict';
const KEY = 'memento.key';

async function openPage(key) {
  const res = await fetch(location.href, { headers: { Accept: 'text/html', Authorization: 'Bearer ' + key } });
  if (!res.ok) {
    let message = res.statusText;
    try { message = (await res.json()).error.message; } catch { /* the prompt again, or not JSON */ }
    if (res.status === 401) message = 'That key is not accepted: ' + (message || 'unauthorized');
    throw new Error(message);
  }
  const user = res.headers.get('X-Memento-Key-User');
  if (user) {
    const url = new URL(location.href);
    url.searchParams.set('user', user);
    history.replaceState(null, '', url);
  }
  const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
  document.documentElement.replaceWith(document.adoptNode(doc.documentElement));
  // Scripts parsed by DOMParser do not run; fresh copies do.
  for (const old of document.querySelectorAll('script')) {
    const s = document.createElement('script');
    for (const a of old.attributes) s.setAttribute(a.name, a.value);
    old.replaceWith(s);
  }
}

async function tryKey(key) {
  try {
    await openPage(key);
    try { sessionStorage.setItem(KEY, key); } catch { /* storage off */ }
  } catch (e) {
    try { sessionStorage.removeItem(KEY); } catch { /* storage off */ }
    const err = document.getElementById('key-error');
    if (err) err.textContent = e.message;
  }
}

document.getElementById('key-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const key = document.getElementById('key-input').value.trim();
  if (key) tryKey(key);
});
let stored = null;
try { stored = sessionStorage.getItem(KEY); } catch { /* storage off */ }
if (stored) tryKey(stored);
`

// registerAuth adds the key prompt's script and, with a key store, the key
// routes.
func (s *Server) registerAuth() {
	s.mux.HandleFunc("GET "+keyScriptPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write([]byte(keyScript))
	})
	if s.Keys != nil {
		// The document says how to authenticate; the empty alternative is
		// open mode, where no key is needed.
		doc := s.api.OpenAPI()
		if doc.Components.SecuritySchemes == nil {
			doc.Components.SecuritySchemes = map[string]*huma.SecurityScheme{}
		}
		doc.Components.SecuritySchemes["apiKey"] = &huma.SecurityScheme{
			Type: "http", Scheme: "bearer", BearerFormat: "mk_...",
			Description: "An API key from `memento keys create`, as Authorization: Bearer KEY. Needed once a key exists or the server listens beyond loopback.",
		}
		doc.Security = []map[string][]string{{"apiKey": {}}, {}}
		registerKeys(s.api, s)
	}
}

// CreatedKey is a new key as it is shown once: with its secret.
type CreatedKey struct {
	ID     string          `json:"id"`
	Key    string          `json:"key" doc:"The key itself; it is shown only now"`
	Tenant string          `json:"tenant"`
	User   string          `json:"user"`
	Role   memento.KeyRole `json:"role" enum:"admin,write,read"`
}

type createKeyInput struct {
	TenantHeader
	Body struct {
		User string          `json:"user,omitempty" doc:"The one user the key reaches; empty for every user of the tenant"`
		Role memento.KeyRole `json:"role,omitempty" enum:"admin,write,read" doc:"read, write (the default) or admin"`
	}
}

type createKeyOutput struct {
	Status int
	Body   CreatedKey
}

type listKeysOutput struct {
	Body struct {
		Keys []memento.APIKey `json:"keys"`
	}
}

type revokeKeyInput struct {
	TenantHeader
	ID string `path:"id" doc:"Key id"`
}

// adminOf returns the admin principal of ctx, or why there is none.
func adminOf(ctx context.Context) (memento.Principal, error) {
	p, _ := memento.PrincipalFrom(ctx)
	if p.KeyID == "" {
		return p, memento.Errorf(memento.EFORBIDDEN, "managing keys over the API needs an admin key; create the first one with `memento keys create --tenant T --role admin`")
	}
	if p.Role != memento.KeyAdmin {
		return p, memento.Errorf(memento.EFORBIDDEN, "managing keys needs an admin key; key %s is a %s key", p.KeyID, p.Role)
	}
	return p, nil
}

// registerKeys adds the key routes, for admin keys, each within the
// admin's tenant.
func registerKeys(api huma.API, s *Server) {
	tags := []string{"keys"}
	huma.Register(api, huma.Operation{
		OperationID: "listKeys", Method: http.MethodGet, Path: "/v1/keys",
		Summary: "List the tenant's API keys (never the keys themselves)", Tags: tags,
		Errors: []int{http.StatusUnauthorized, http.StatusForbidden},
	}, func(ctx context.Context, _ *struct{ TenantHeader }) (*listKeysOutput, error) {
		p, err := adminOf(ctx)
		if err != nil {
			return nil, Error(ctx, s.Logger, err)
		}
		ks, err := s.Keys.Keys(ctx, p.Tenant)
		if err != nil {
			return nil, Error(ctx, s.Logger, err)
		}
		out := &listKeysOutput{}
		out.Body.Keys = nonNilSlice(ks)
		return out, nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "createKey", Method: http.MethodPost, Path: "/v1/keys", DefaultStatus: http.StatusCreated,
		Summary: "Create an API key of the tenant; the answer is the only time the key is shown", Tags: tags,
		Errors: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden},
	}, func(ctx context.Context, in *createKeyInput) (*createKeyOutput, error) {
		p, err := adminOf(ctx)
		if err != nil {
			return nil, Error(ctx, s.Logger, err)
		}
		k, key, hash, err := memento.NewAPIKey(p.Tenant, in.Body.User, in.Body.Role, time.Now())
		if err != nil {
			return nil, Error(ctx, s.Logger, err)
		}
		if err := s.Keys.CreateKey(ctx, k, hash); err != nil {
			return nil, Error(ctx, s.Logger, err)
		}
		s.Logger.InfoContext(ctx, "key created", "key", k.ID, "by", p.KeyID, "tenant", k.Tenant, "user", k.User, "role", k.Role)
		return &createKeyOutput{Status: http.StatusCreated, Body: CreatedKey{ID: k.ID, Key: key, Tenant: k.Tenant, User: k.User, Role: k.Role}}, nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "revokeKey", Method: http.MethodDelete, Path: "/v1/keys/{id}", DefaultStatus: http.StatusNoContent,
		Summary: "Revoke an API key of the tenant; it stops working at once", Tags: tags,
		Errors: []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound},
	}, func(ctx context.Context, in *revokeKeyInput) (*struct{}, error) {
		p, err := adminOf(ctx)
		if err != nil {
			return nil, Error(ctx, s.Logger, err)
		}
		if err := s.Keys.RevokeKey(ctx, p.Tenant, in.ID); err != nil {
			return nil, Error(ctx, s.Logger, err)
		}
		s.Logger.InfoContext(ctx, "key revoked", "key", in.ID, "by", p.KeyID, "tenant", p.Tenant)
		return nil, nil
	})
}

// IsLoopback reports whether a listen address (host:port) accepts
// connections from this machine only: a loopback IP or "localhost". An
// empty host, an unspecified IP (0.0.0.0, ::) or any other name is not.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.Unmap().IsLoopback()
}

// checkKeysForAddr refuses to serve a non-loopback address without a key:
// anyone who reaches the port would read every user.
func (s *Server) checkKeysForAddr(ctx context.Context) error {
	if IsLoopback(s.Addr) {
		return nil
	}
	s.auth.required.Store(true)
	has := false
	if s.Keys != nil {
		var err error
		if has, err = s.Keys.HasKeys(ctx); err != nil {
			return fmt.Errorf("look for API keys: %w", err)
		}
	}
	if !has {
		return memento.Errorf(memento.EINVALID, "refusing to listen on %s, which other machines can reach, while no API key exists: anyone could read every user's memory. Create a key first with `memento keys create --tenant T --role admin`, or listen on 127.0.0.1", s.Addr)
	}
	return nil
}
