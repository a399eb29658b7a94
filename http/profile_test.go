package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/memento-ai/memento"

	"github.com/memento-ai/memento/engine/enginetest"
	mhttp "github.com/memento-ai/memento/http"
	"github.com/memento-ai/memento/profile"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// call sends a request and decodes the JSON answer.
func call(t *testing.T, method, url, body string, header map[string]string) (int, http.Header, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, b)
	}
	return resp.StatusCode, resp.Header, out
}

func errorOf(body map[string]any) (string, string) {
	e, _ := body["error"].(map[string]any)
	code, _ := e["code"].(string)
	msg, _ := e["message"].(string)
	return code, msg
}

func TestEventsAndProfile(t *testing.T) {
	db := enginetest.Open(t)
	w := &profile.Worker{Events: db, Profiles: db, Models: db}
	w.Register(db)
	if err := db.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Stop(context.Background()) })
	ts := testServer(t, func(s *mhttp.Server) {
		s.Routes = append(s.Routes, mhttp.RegisterProfile(mhttp.ProfileRoutes{Events: db, Profiles: db, EventJobs: profile.EventJobs}))
	})
	u := ts.URL + "/v1/users/ann"

	code, _, body := call(t, "POST", u+"/events", `[{"id":"e1","type":"liked","title":"t01"},{"id":"e2","type":"rated","title":"t02","value":4.5,"at":"2025-01-02T20:00:00Z"}]`, nil)
	if code != 202 || body["inserted"] != 2.0 || body["received"] != 2.0 {
		t.Fatalf("POST events = %d %v", code, body)
	}
	code, _, body = call(t, "POST", u+"/events", `{"id":"e1","type":"liked","title":"t01"}`, nil)
	if code != 202 || body["inserted"] != 0.0 || body["duplicates"] != 1.0 {
		t.Errorf("repeated event = %d %v, want a duplicate", code, body)
	}

	bad := []struct{ body, code, msg string }{
		{`[{"type":"liked","title":"wiki:Nope"}]`, "EINVALID", `events[0].title "wiki:Nope" is not in the catalog`},
		{`{"type":"rated","title":"t01","value":9}`, "EINVALID", `events[0].value must be a rating from 0.5 to 5, got 9`},
		{`{"type":"loved","title":"t01"}`, "EINVALID", `events[0].type must be one of watched, rated, liked, disliked, watchlisted, skipped, abandoned, finished, got "loved"`},
		{`{"type":"liked","title":"t01"`, "EINVALID", `body: unexpected end of JSON input, got {"type":"liked","title":"t01"`},
		{`[{"type":"liked","name":"t01"}]`, "EINVALID", `events[0]: unknown field "name"`},
	}
	for _, b := range bad {
		code, _, body := call(t, "POST", u+"/events", b.body, nil)
		gotCode, msg := errorOf(body)
		if code != 400 || gotCode != b.code || msg != b.msg {
			t.Errorf("POST %s = %d %s %q, want 400 %s %q", b.body, code, gotCode, msg, b.code, b.msg)
		}
	}

	sqlitetest.WaitForJobs(t, db, 10*time.Second)
	code, hdr, body := call(t, "GET", u+"/profile", "", nil)
	if code != 200 {
		t.Fatalf("GET profile = %d %v", code, body)
	}
	version := body["version"].(float64)
	if hdr.Get("ETag") != `"`+strings.TrimSuffix(strings.TrimSuffix(jsonNumber(version), ".0"), ".")+`"` {
		t.Errorf("ETag %q for version %v", hdr.Get("ETag"), version)
	}
	keys := body["keys"].(map[string]any)
	seen := keys["seen"].(map[string]any)
	if seen["source"] != "learned" || len(seen["evidence"].([]any)) != 2 {
		t.Errorf("seen = %v", seen)
	}

	// PATCH with the current ETag sets a user key; the old ETag is stale.
	etag := hdr.Get("ETag")
	code, hdr2, body := call(t, "PATCH", u+"/profile", `{"keys":{"platform":"Netflix","era":{"from":1990,"to":2000,"median":1995}}}`, map[string]string{"If-Match": etag})
	if code != 200 || body["keys"].(map[string]any)["platform"].(map[string]any)["source"] != "user" {
		t.Fatalf("PATCH = %d %v", code, body)
	}
	code, _, body = call(t, "PATCH", u+"/profile", `{"keys":{"platform":"Hulu"}}`, map[string]string{"If-Match": etag})
	if c, msg := errorOf(body); code != 409 || c != "ECONFLICT" || !strings.Contains(msg, "read it again and retry") {
		t.Errorf("stale PATCH = %d %v, want 409 ECONFLICT", code, body)
	}
	code, _, body = call(t, "PATCH", u+"/profile", `{"keys":{"era":{"from":2000,"to":1990,"median":1995}}}`, nil)
	if c, _ := errorOf(body); code != 400 || c != "EINVALID" {
		t.Errorf("bad era = %d %v, want 400", code, body)
	}
	code, _, body = call(t, "PATCH", u+"/profile", `{"keys":{"platform":"Hulu"}}`, map[string]string{"If-Match": "yesterday"})
	if c, _ := errorOf(body); code != 400 || c != "EINVALID" {
		t.Errorf("bad If-Match = %d %v, want 400", code, body)
	}

	// PUT replaces the user's keys: platform goes, era comes back learned
	// or absent, learned keys stay.
	code, _, body = call(t, "PUT", u+"/profile", `{"keys":{"rewatcher":true}}`, map[string]string{"If-Match": hdr2.Get("ETag")})
	if code != 200 {
		t.Fatalf("PUT = %d %v", code, body)
	}
	keys = body["keys"].(map[string]any)
	if _, ok := keys["platform"]; ok {
		t.Errorf("PUT kept platform: %v", keys)
	}
	if keys["rewatcher"].(map[string]any)["source"] != "user" || keys["seen"] == nil {
		t.Errorf("after PUT: %v", keys)
	}
	code, _, body = call(t, "PATCH", u+"/profile", `{"keys":{"rewatcher":null}}`, nil)
	if _, ok := body["keys"].(map[string]any)["rewatcher"]; code != 200 || ok {
		t.Errorf("PATCH null = %d %v, want rewatcher gone", code, body)
	}

	code, _, body = call(t, "GET", u+"/events", "", nil)
	if code != 200 || len(body["events"].([]any)) != 2 {
		t.Errorf("GET events = %d %v", code, body)
	}
}

func jsonNumber(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

func TestSnapshotMiddleware(t *testing.T) {
	db := enginetest.Open(t)
	var mu sync.Mutex
	var ensured, changed []string
	fail := false
	hooks := mhttp.SnapshotHooks{
		Ensure: func(_ context.Context, s memento.Scope) error {
			mu.Lock()
			defer mu.Unlock()
			ensured = append(ensured, s.Tenant+"/"+s.User)
			if fail {
				return memento.Errorf(memento.EUNAVAILABLE, "user %q is not in the local store and the snapshot store cannot restore it", s.User)
			}
			return nil
		},
		Changed: func(s memento.Scope) {
			mu.Lock()
			defer mu.Unlock()
			changed = append(changed, s.User)
		},
	}
	ts := testServer(t, func(s *mhttp.Server) {
		s.Routes = append([]func(api huma.API, s *mhttp.Server){mhttp.RegisterSnapshots(hooks)},
			mhttp.RegisterProfile(mhttp.ProfileRoutes{Events: db, Profiles: db}))
	})
	call(t, "GET", ts.URL+"/v1/users/ann/profile", "", map[string]string{"X-Memento-Tenant": "acme"})
	call(t, "POST", ts.URL+"/v1/users/bob/events", `{"type":"liked","title":"t01"}`, nil)
	call(t, "POST", ts.URL+"/v1/users/cy/events", `{"type":"liked","title":"nope"}`, nil)
	call(t, "GET", ts.URL+"/v1/catalog/search?genres=Comedy", "", nil)
	// Changed runs after the response is sent.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := len(changed)
		mu.Unlock()
		if n > 0 {
			break
		}
	}
	mu.Lock()
	if got := strings.Join(ensured, ","); got != "acme/ann,default/bob,default/cy" {
		t.Errorf("ensured %s", got)
	}
	if got := strings.Join(changed, ","); got != "bob" {
		t.Errorf("changed %s, want only the successful write", got)
	}
	fail = true
	mu.Unlock()
	code, _, body := call(t, "GET", ts.URL+"/v1/users/dee/profile", "", nil)
	if c, msg := errorOf(body); code != 503 || c != "EUNAVAILABLE" || !strings.Contains(msg, `user "dee"`) {
		t.Errorf("restore failure = %d %v, want 503", code, body)
	}
}
