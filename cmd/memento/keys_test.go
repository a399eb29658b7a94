package main

import (
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/llm/budget"
	"github.com/memento-ai/memento/llm/llmtest"
)

// createKey runs `memento keys create --json` against db.
func createKey(t *testing.T, db, tenant, user, role string) (key, id string) {
	t.Helper()
	args := []string{"keys", "create", "--db", db, "--tenant", tenant, "--role", role, "--json"}
	if user != "" {
		args = append(args, "--user", user)
	}
	out, err := run(t, "", args...)
	if err != nil {
		t.Fatalf("keys create: %v", err)
	}
	var k struct{ ID, Key, Tenant, User, Role string }
	if err := json.Unmarshal([]byte(out), &k); err != nil {
		t.Fatalf("keys create printed %q: %v", out, err)
	}
	if k.Tenant != tenant || k.User != user || k.Role != role || !memento.LooksLikeAPIKey(k.Key) || k.ID == "" {
		t.Fatalf("keys create printed %+v", k)
	}
	return k.Key, k.ID
}

func TestKeysCommands(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	key, id := createKey(t, db, "acme", "alice", "read")
	_, id2 := createKey(t, db, "globex", "", "admin")

	out, err := run(t, "", "keys", "list", "--db", db)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, id) || !strings.Contains(out, id2) || strings.Contains(out, key) || strings.Contains(out, key[3:13]) {
		t.Errorf("keys list = %q; want both ids and never the key", out)
	}
	out, err = run(t, "", "keys", "list", "--db", db, "--tenant", "globex", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var listed struct{ Keys []memento.APIKey }
	if err := json.Unmarshal([]byte(out), &listed); err != nil || len(listed.Keys) != 1 || listed.Keys[0].ID != id2 {
		t.Errorf("keys list --tenant globex --json = %q (%v)", out, err)
	}
	if _, err := run(t, "", "keys", "revoke", "--db", db, id); err != nil {
		t.Fatal(err)
	}
	out, _ = run(t, "", "keys", "list", "--db", db, "--json", "--tenant", "acme")
	if !strings.Contains(out, `"revokedAt"`) {
		t.Errorf("after revoke, list = %q, want revokedAt", out)
	}
	if _, err := run(t, "", "keys", "revoke", "--db", db, "key_nope"); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("revoking an unknown key: %v, want ENOTFOUND", err)
	}
	if _, err := run(t, "", "keys", "create", "--db", db, "--role", "owner"); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("a bad role: %v, want EINVALID", err)
	}
}

func TestServeRefusesNonLoopbackWithoutKey(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	cat := tinyCatalogFile(t)
	_, err := serveWith(t, nil, "--db", db, "--catalog", cat, "--addr", "0.0.0.0:0", "--log-level", "error")
	if err == nil {
		t.Fatal("serve --addr 0.0.0.0:0 without a key started")
	}
	if msg := message(err); !strings.Contains(msg, "memento keys create") || !strings.Contains(msg, "0.0.0.0:0") {
		t.Errorf("refusal %q does not name the address and memento keys create", msg)
	}
	key, _ := createKey(t, db, "acme", "", "admin")
	s, err := serveWith(t, nil, "--db", db, "--catalog", cat, "--addr", "0.0.0.0:0", "--log-level", "error")
	if err != nil {
		t.Fatalf("serve --addr 0.0.0.0:0 with a key: %v", err)
	}
	port := s.m.URL()[strings.LastIndex(s.m.URL(), ":"):]
	for _, tc := range []struct {
		key  string
		want int
	}{{"", 401}, {key, 200}} {
		req, _ := http.NewRequest("GET", "http://127.0.0.1"+port+"/v1/catalog/search?genres=Horror", nil)
		if tc.key != "" {
			req.Header.Set("Authorization", "Bearer "+tc.key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("search with key %t = %d, want %d", tc.key != "", resp.StatusCode, tc.want)
		}
	}
}

func TestServeLimitFlags(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"--key-rate", "-1"}, "--key-rate"},
		{nil, []string{"--key-rate", "2", "--key-burst", "0"}, "--key-burst"},
		{map[string]string{"MEMENTO_KEY_RATE": "fast"}, nil, "MEMENTO_KEY_RATE"},
		{nil, []string{"--llm-tenant-tokens", "acme"}, "--llm-tenant-tokens"},
		{nil, []string{"--llm-daily-tokens", "-5"}, "--llm-daily-tokens"},
	} {
		_, err := serveWith(t, tc.env, append([]string{"--db", filepath.Join(t.TempDir(), "m.db"), "--log-level", "error"}, tc.args...)...)
		if err == nil || !strings.Contains(message(err), tc.want) {
			t.Errorf("serve %v %v: %v, want an error naming %s", tc.env, tc.args, err, tc.want)
		}
	}
}

// matrixClient sends requests to a served Memento with a key.
type matrixClient struct {
	t   *testing.T
	url string
}

type matrixAnswer struct {
	status int
	body   string
	header http.Header
}

func (c matrixClient) do(method, path, key, body string, hdr ...string) matrixAnswer {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.url+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return matrixAnswer{status: resp.StatusCode, body: string(b), header: resp.Header}
}

// route is one operation of the served API, from its OpenAPI document,
// or one of the routes outside it (the web page, metrics, MCP).
type route struct {
	method, path string
	// namesUser is set when the route names a user: a {user} path
	// parameter, a user query parameter or a "user" body field.
	namesUser, userQuery, userBody bool
	public                         bool
	// body is a request body the route accepts, built from its schema;
	// form lists the fields of a multipart form instead.
	body string
	form []string
}

func (r route) String() string { return r.method + " " + r.path }

// apiRoutes enumerates every operation of the OpenAPI document, so that a
// route added later is in the matrix without this test knowing it.
func apiRoutes(t *testing.T, doc []byte) []route {
	t.Helper()
	var d struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Name string `json:"name"`
				In   string `json:"in"`
			} `json:"parameters"`
			RequestBody struct {
				Content map[string]struct {
					Schema json.RawMessage `json:"schema"`
				} `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatalf("OpenAPI document: %v", err)
	}
	type schema struct {
		Ref        string                     `json:"$ref"`
		Type       any                        `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Items      json.RawMessage            `json:"items"`
		Required   []string                   `json:"required"`
		Enum       []any                      `json:"enum"`
	}
	resolve := func(raw json.RawMessage) schema {
		var s schema
		_ = json.Unmarshal(raw, &s)
		if s.Ref != "" {
			_ = json.Unmarshal(d.Components.Schemas[strings.TrimPrefix(s.Ref, "#/components/schemas/")], &s)
		}
		return s
	}
	// example builds a value of a schema, with known fields filled in as
	// a real client would (the user is replaced per request).
	known := map[string]any{"user": "{{user}}", "thread": "t1", "message": "hello", "text": "hello", "role": "user",
		"type": "liked", "title": "heat", "mode": "semantic", "value": "x", "attribute": "LIKES"}
	var example func(raw json.RawMessage, name string, depth int) any
	example = func(raw json.RawMessage, name string, depth int) any {
		sc := resolve(raw)
		if len(sc.Enum) > 0 {
			return sc.Enum[0]
		}
		if v, ok := known[name]; ok && depth > 0 {
			return v
		}
		typ, _ := sc.Type.(string)
		if l, ok := sc.Type.([]any); ok && len(l) > 0 {
			typ, _ = l[0].(string)
		}
		switch {
		case typ == "array" && depth < 4:
			return []any{example(sc.Items, "", depth+1)}
		case typ == "object" || sc.Properties != nil:
			obj := map[string]any{}
			for p, praw := range sc.Properties {
				if _, ok := known[p]; ok || slices.Contains(sc.Required, p) {
					if depth < 4 {
						obj[p] = example(praw, p, depth+1)
					}
				}
			}
			return obj
		case typ == "string":
			return "x"
		case typ == "integer" || typ == "number":
			return 1
		case typ == "boolean":
			return true
		}
		return map[string]any{}
	}
	hasUserProp := func(raw json.RawMessage) bool {
		var s struct {
			Ref        string                     `json:"$ref"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		_ = json.Unmarshal(raw, &s)
		if s.Ref != "" {
			_ = json.Unmarshal(d.Components.Schemas[strings.TrimPrefix(s.Ref, "#/components/schemas/")], &s)
		}
		_, ok := s.Properties["user"]
		return ok
	}
	var out []route
	for p, ops := range d.Paths {
		for method, op := range ops {
			r := route{method: strings.ToUpper(method), path: p, public: p == "/healthz" || p == "/readyz"}
			for _, prm := range op.Parameters {
				if prm.Name == "user" {
					r.namesUser = true
					r.userQuery = r.userQuery || prm.In == "query"
				}
			}
			for ct, c := range op.RequestBody.Content {
				if hasUserProp(c.Schema) {
					r.namesUser, r.userBody = true, true
				}
				if ct == "multipart/form-data" {
					for p := range resolve(c.Schema).Properties {
						r.form = append(r.form, p)
					}
					sort.Strings(r.form)
					continue
				}
				b, _ := json.Marshal(example(c.Schema, "", 0))
				r.body = string(b)
			}
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// TestCrossTenantAndUserMatrix holds every route to the key rules: for
// every operation of the API (enumerated from its OpenAPI document) and
// the routes outside it, a key of tenant A or of user alice gets 401, 403
// or 404 for tenant B's or user bob's data, never the data; requests
// without a key get 401; read keys cannot write; and afterwards tenant
// B's bob still has everything he had.
func TestCrossTenantAndUserMatrix(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "m.db")
	cat := tinyCatalogFile(t)
	adminB, _ := createKey(t, db, "B", "", "admin")
	adminA, _ := createKey(t, db, "A", "", "admin")
	writeA, _ := createKey(t, db, "A", "", "write")
	readA, _ := createKey(t, db, "A", "", "read")
	alice, _ := createKey(t, db, "A", "alice", "write")
	adminD, _ := createKey(t, db, memento.DefaultTenant, "", "admin")
	s, err := serveWith(t, nil, "--db", db, "--catalog", cat, "--log-level", "error", "--key-rate", "0")
	if err != nil {
		t.Fatalf("serve: %v", err)
	}
	c := matrixClient{t: t, url: s.m.URL()}

	// Tenant B's bob and tenant A's bob each say something only they said.
	// The default tenant's bob too: a route that ignores the key's tenant
	// and reads the default one shows his.
	const markB, markA, markD = "zanzibarquux", "quetzalfrob", "xylophonewombat"
	seed := func(key, mark string) {
		t.Helper()
		for _, r := range []struct{ method, path, body string }{
			{"POST", "/v1/users/bob/threads/t1/messages", `[{"role":"user","text":"I love westerns and my dog is called ` + mark + `"},{"role":"user","text":"I hate horror films"}]`},
			{"POST", "/v1/chat", `{"user":"bob","thread":"t1","message":"Recommend 2 crime movies like ` + mark + `"}`},
			{"POST", "/v1/users/bob/events", `[{"type":"watched","title":"heat"},{"type":"liked","title":"heat"}]`},
		} {
			if a := c.do(r.method, r.path, key, r.body); a.status >= 300 {
				t.Fatalf("seed %s %s = %d %s", r.method, r.path, a.status, a.body)
			}
		}
	}
	seed(adminB, markB)
	seed(adminD, markD)
	seed(writeA, markA)
	if err := s.m.app.WaitForJobs(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	exportB := c.do("GET", "/v1/users/bob/export", adminB, "")
	if exportB.status != 200 || !strings.Contains(exportB.body, markB) {
		t.Fatalf("tenant B's export = %d %s", exportB.status, exportB.body)
	}
	ids := map[string]string{"thread": "t1", "attribute": "LIKES"}
	var mems struct {
		Memories []struct{ ID string } `json:"memories"`
	}
	json.Unmarshal([]byte(c.do("GET", "/v1/users/bob/memories", adminB, "").body), &mems)
	if len(mems.Memories) > 0 {
		ids["memories"] = mems.Memories[0].ID
	}
	var prefs struct {
		Preferences []struct{ ID string } `json:"preferences"`
	}
	json.Unmarshal([]byte(c.do("GET", "/v1/users/bob/preferences", adminB, "").body), &prefs)
	if len(prefs.Preferences) > 0 {
		ids["preferences"] = prefs.Preferences[0].ID
	}
	var thread struct {
		Messages []struct{ ID string } `json:"messages"`
	}
	json.Unmarshal([]byte(c.do("GET", "/v1/users/bob/threads/t1", adminB, "").body), &thread)
	if len(thread.Messages) > 0 {
		ids["message"] = thread.Messages[0].ID
	}
	var keys struct {
		Keys []struct{ ID string } `json:"keys"`
	}
	json.Unmarshal([]byte(c.do("GET", "/v1/keys", adminB, "").body), &keys)
	ids["keys"] = keys.Keys[0].ID

	doc := c.do("GET", "/openapi.json", adminB, "")
	if doc.status != 200 {
		t.Fatalf("GET /openapi.json = %d", doc.status)
	}
	routes := apiRoutes(t, []byte(doc.body))
	if len(routes) < 30 {
		t.Fatalf("only %d routes in the OpenAPI document", len(routes))
	}
	routes = append(routes,
		route{method: "GET", path: "/", namesUser: true, userQuery: true},
		route{method: "GET", path: "/ui/threads", namesUser: true, userQuery: true},
		route{method: "GET", path: "/ui/conversation?thread=t1", namesUser: true, userQuery: true},
		route{method: "GET", path: "/ui/activity"},
		route{method: "GET", path: "/metrics"},
		route{method: "POST", path: "/mcp"},
	)

	wildcard := regexp.MustCompile(`\{([a-zA-Z]+)\}`)
	// target is the request of r aimed at user, and its Content-Type
	// header when it is not JSON.
	target := func(r route, user string) (path, body string, ct []string) {
		path = wildcard.ReplaceAllStringFunc(r.path, func(w string) string {
			name := w[1 : len(w)-1]
			if name == "user" {
				return url.PathEscape(user)
			}
			if name == "id" {
				for _, coll := range []string{"memories", "preferences", "keys"} {
					if strings.Contains(r.path, "/"+coll+"/") && ids[coll] != "" {
						return ids[coll]
					}
				}
			}
			if v := ids[name]; v != "" {
				return v
			}
			return "x"
		})
		if r.userQuery {
			sep := "?"
			if strings.Contains(path, "?") {
				sep = "&"
			}
			path += sep + "user=" + url.QueryEscape(user)
		}
		// Bodies the schema does not say enough about (routes that decode
		// their own body).
		overrides := map[string]string{
			"POST /v1/users/{user}/threads/{thread}/messages": `[{"role":"user","text":"hello"}]`,
			"POST /v1/users/{user}/events":                    `[{"type":"liked","title":"heat"}]`,
			"POST /v1/users/{user}/import":                    `{"format":"memento.user/v1","user":"bob"}`,
			"PATCH /v1/users/{user}/preferences/{id}":         `{"weight":0.5}`,
		}
		switch {
		case len(r.form) > 0:
			var b strings.Builder
			mw := multipart.NewWriter(&b)
			for _, f := range r.form {
				switch f {
				case "user":
					mw.WriteField(f, user)
				case "audio":
					w, _ := mw.CreateFormFile(f, "a.webm")
					w.Write([]byte("RIFF....WAVE"))
				default:
					mw.WriteField(f, "t1")
				}
			}
			mw.Close()
			body, ct = b.String(), []string{"Content-Type", mw.FormDataContentType()}
		case overrides[r.String()] != "":
			body = overrides[r.String()]
		case r.path == "/mcp":
			body = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
		case r.path == "/v1/keys" && r.method == "POST":
			body = `{"role":"read"}`
		case r.body != "":
			u, _ := json.Marshal(user)
			body = strings.ReplaceAll(r.body, `"{{user}}"`, string(u))
		case r.method == "POST" || r.method == "PUT" || r.method == "PATCH":
			body = `{}`
		}
		return path, body, ct
	}
	leaks := func(a matrixAnswer, marks ...string) bool {
		for _, m := range marks {
			if strings.Contains(strings.ToLower(a.body), m) {
				return true
			}
		}
		return false
	}

	for _, r := range routes {
		// No key: 401 everywhere but /healthz, with nothing of anyone.
		if !r.public {
			path, body, ct := target(r, "bob")
			if a := c.do(r.method, path, "", body, ct...); a.status != 401 || leaks(a, markA, markB, markD) {
				t.Errorf("%s without a key = %d %.200s, want 401", r, a.status, a.body)
			}
		}
		// Tenant A's key naming tenant B in the header: 403.
		if !r.public {
			path, body, ct := target(r, "bob")
			if a := c.do(r.method, path, writeA, body, append(ct, "X-Memento-Tenant", "B")...); a.status != 403 || leaks(a, markA, markB, markD) {
				t.Errorf("%s with tenant A's key and X-Memento-Tenant: B = %d %.200s, want 403", r, a.status, a.body)
			}
		}
		// alice's key naming bob: 403 on every route that names a user.
		if r.namesUser {
			path, body, ct := target(r, "bob")
			if a := c.do(r.method, path, alice, body, ct...); a.status != 403 || leaks(a, markA, markB, markD) {
				t.Errorf("%s with alice's key for bob = %d %.200s, want 403", r, a.status, a.body)
			}
		}
		// A read key never writes (MCP checks per tool, behind its mount).
		if r.method != "GET" && r.method != "HEAD" && r.path != "/mcp" && !r.public {
			path, body, ct := target(r, "bob")
			if a := c.do(r.method, path, readA, body, ct...); a.status != 403 {
				t.Errorf("%s with a read key = %d %.200s, want 403", r, a.status, a.body)
			}
		}
	}
	// Tenant A's keys aimed at tenant B's bob act in tenant A, where
	// there is no bob of B: the answers carry nothing of B, whatever
	// they are, and no server error. Destructive routes run last, so that
	// each earlier request finds A's own bob as it was.
	order := slices.Clone(routes)
	sort.SliceStable(order, func(i, j int) bool { return order[i].method != "DELETE" && order[j].method == "DELETE" })
	for _, key := range []string{adminA, writeA} {
		for _, r := range order {
			path, body, ct := target(r, "bob")
			a := c.do(r.method, path, key, body, ct...)
			// 503 is a dependency this test does not configure (the
			// transcription server); 500 would be a fault.
			if leaks(a, markB, markD) || a.status == http.StatusInternalServerError {
				t.Errorf("%s with tenant A's key = %d %.300s: tenant B's data or a server error", r, a.status, a.body)
			}
			if a.status == 400 && body != "" {
				t.Logf("%s %s: 400 %.200s", r, body, a.body)
			}
		}
	}
	if err := s.m.app.WaitForJobs(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	after := c.do("GET", "/v1/users/bob/export", adminB, "")
	if after.status != 200 || !strings.Contains(after.body, markB) {
		t.Fatalf("tenant B's bob after the matrix = %d %.300s, want his data intact", after.status, after.body)
	}
	var before, now memento.UserExport
	json.Unmarshal([]byte(exportB.body), &before)
	json.Unmarshal([]byte(after.body), &now)
	if len(now.Threads) != len(before.Threads) || len(now.Events) != len(before.Events) || len(now.Memories) < len(before.Memories) {
		t.Errorf("tenant B's bob changed: threads %d→%d, events %d→%d, memories %d→%d",
			len(before.Threads), len(now.Threads), len(before.Events), len(now.Events), len(before.Memories), len(now.Memories))
	}
	if a := c.do("GET", "/v1/keys", adminB, ""); !strings.Contains(a.body, ids["keys"]) || strings.Contains(a.body, `"revokedAt"`) {
		t.Errorf("tenant B's keys after the matrix: %s", a.body)
	}
	t.Logf("%d routes in the matrix", len(routes))
}

// TestBudgetFallbackInRunTrace serves with an OpenAI-compatible model and
// a daily budget of one call's tokens: past it, the pipeline's steps are
// done by the offline model, and the run trace says so.
func TestBudgetFallbackInRunTrace(t *testing.T) {
	ctx := context.Background()
	srv := llmtest.New(t)
	srv.AnswerAll(llmtest.Answers(), 8)
	env := map[string]string{"MEMENTO_LLM_BASE_URL": srv.URL, "MEMENTO_LLM_MODEL": "fake-model", "MEMENTO_EMBED_MODEL": "fake-embed"}
	s, err := serveWith(t, env, "--db", filepath.Join(t.TempDir(), "m.db"), "--catalog", tinyCatalogFile(t), "--log-level", "error",
		"--llm-daily-tokens", "1", "--llm-tenant-tokens", "rich=0")
	if err != nil {
		t.Fatalf("serve: %v", err)
	}
	c := matrixClient{t: t, url: s.m.URL()}
	for _, tenant := range []string{"poor", "rich"} {
		if a := c.do("POST", "/v1/users/ana/threads/t1/messages", "", `[{"id":"m1","role":"user","text":"I love westerns and I watch on Netflix"}]`, "X-Memento-Tenant", tenant); a.status != 202 {
			t.Fatalf("append for %s = %d %s", tenant, a.status, a.body)
		}
	}
	if err := s.m.app.WaitForJobs(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	notes := func(tenant string) []string {
		a := c.do("GET", "/v1/users/ana/runs/m1", "", "", "X-Memento-Tenant", tenant)
		if a.status != 200 {
			t.Fatalf("run trace of %s = %d %s", tenant, a.status, a.body)
		}
		var run struct {
			Steps []memento.RunStep `json:"steps"`
		}
		if err := json.Unmarshal([]byte(a.body), &run); err != nil || len(run.Steps) == 0 {
			t.Fatalf("run trace of %s: %v %s", tenant, err, a.body)
		}
		var out []string
		for _, st := range run.Steps {
			out = append(out, st.Notes...)
		}
		return out
	}
	poor := notes("poor")
	found := false
	for _, n := range poor {
		if strings.Contains(n, `Tenant "poor" has used its daily language-model budget`) {
			found = true
		}
	}
	if !found {
		t.Errorf("the over-budget tenant's run trace notes = %q, want the budget note (%s)", poor, budget.Note("poor", "…", 1))
	}
	for _, n := range notes("rich") {
		if strings.Contains(n, "budget") {
			t.Errorf("the tenant without a budget has a budget note: %q", n)
		}
	}
	// The agent's turn goes on past the budget too, and says so.
	turn := c.do("POST", "/v1/chat", "", `{"user":"ana","thread":"t2","message":"Recommend 2 crime movies"}`, "X-Memento-Tenant", "poor")
	var answer struct {
		Reply  string   `json:"reply"`
		Titles []any    `json:"titles"`
		Notes  []string `json:"notes"`
	}
	json.Unmarshal([]byte(turn.body), &answer)
	if turn.status != 200 || answer.Reply == "" || !slices.ContainsFunc(answer.Notes, func(n string) bool { return strings.Contains(n, "daily language-model budget") }) {
		t.Errorf("chat past the budget = %d %s; want an answer noting the budget", turn.status, turn.body)
	}
	a := c.do("GET", "/metrics", "", "")
	for _, want := range []string{`memento_llm_tenant_calls_total{tenant="poor"}`, `memento_llm_tenant_calls_total{tenant="rich"}`, `memento_llm_budget_fallbacks_total{tenant="poor"}`, `memento_llm_tenant_tokens_total{kind="prompt",tenant="rich"}`} {
		if !strings.Contains(a.body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestBrowserAsksForAKey drives the web page of a server that needs a
// key: the page asks for it, refuses a wrong one, opens with the right one
// (scoped to user ana), chats with it, and opens again after a reload from
// the key kept in the tab.
func TestBrowserAsksForAKey(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	exe := chromium(t)
	db := filepath.Join(t.TempDir(), "m.db")
	key, _ := createKey(t, db, "acme", "ana", "write")
	s, err := serveWith(t, nil, "--db", db, "--catalog", tinyCatalogFile(t), "--log-level", "error")
	if err != nil {
		t.Fatalf("serve: %v", err)
	}
	ctx := browser(t, exe, 60*time.Second*slowdown)
	console := watchConsole(ctx)
	defer console.check(t)
	base := s.m.URL()

	// The tab remembers another user from before; a key for ana opens ana.
	do(t, ctx, "open the page", chromedp.Navigate(base+"/favicon.ico"), chromedp.Evaluate[chromedp.Void](`localStorage.setItem('memento.user', 'someone-else')`),
		chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#key-form")))
	do(t, ctx, "a wrong key", chromedp.SendKeys(chromedp.CSS("#key-input"), memento.KeyPrefix+strings.Repeat("x", 43)), chromedp.Click(chromedp.CSS("#key-form button")))
	waitFor(t, ctx, "the refusal", `document.querySelector('#key-error').textContent.includes('not accepted')`, 10*time.Second)
	do(t, ctx, "the right key", chromedp.SetValue(chromedp.CSS("#key-input"), key), chromedp.Click(chromedp.CSS("#key-form button")))
	waitFor(t, ctx, "the page script", `!!document.body && document.body.dataset.ready === 'true'`, 10*time.Second)
	if got := jsEval[string](t, ctx, `document.body.dataset.user + ' ' + document.querySelector('#user-id').value`); got != "ana ana" {
		t.Errorf("the page opened for user %q, want the key's user ana", got)
	}
	sendMessage(t, ctx, "Recommend 2 crime movies", false)

	// The turn was stored in the key's tenant, for its user.
	c := matrixClient{t: t, url: base}
	if a := c.do("GET", "/v1/users/ana/threads", key, ""); a.status != 200 || !strings.Contains(a.body, `"id"`) {
		t.Errorf("ana's threads in acme = %d %s, want the thread the page made", a.status, a.body)
	}
	if a := c.do("GET", "/v1/users/ana/threads", "", "", "X-Memento-Tenant", "acme"); a.status != 401 {
		t.Errorf("without the key = %d, want 401", a.status)
	}

	do(t, ctx, "reload", chromedp.Reload())
	waitFor(t, ctx, "the page after a reload, with the kept key", `!!document.body && document.body.dataset.ready === 'true' && document.querySelectorAll('.turn-agent').length >= 1`, 10*time.Second)
}
