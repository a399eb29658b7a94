package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/engine/enginetest"
	mhttp "github.com/memento-ai/memento/http"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/prefs"
)

// prefRequest sends a request and decodes any JSON answer into out.
func prefRequest(t *testing.T, method, url, body string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, url, err, b)
		}
	}
	return resp.StatusCode
}

func TestPreferenceRoutes(t *testing.T) {
	ctx := context.Background()
	db := enginetest.Open(t)
	svc := &prefs.Service{Store: db, Messages: db, Model: offline.New(offline.Options{}), Embedder: offline.NewEmbedder(0),
		Catalog: catalog.New(nil)}
	s := memento.Scope{User: "ana"}
	for i, text := range []string{"I love heist films.", "I like crime thrillers.", "I hate cilantro."} {
		if _, err := svc.LearnMessage(ctx, s, memento.Message{ID: string(rune('a' + i)), Role: memento.RoleUser, Text: text, At: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	if err := svc.Recluster(ctx, s); err != nil {
		t.Fatal(err)
	}
	ts := testServer(t, func(srv *mhttp.Server) { srv.Routes = append(srv.Routes, mhttp.RegisterPreferences(svc)) })

	var list []map[string]any
	if code := prefRequest(t, "GET", ts.URL+"/v1/users/ana/preferences", "", &list); code != 200 || len(list) != 3 {
		t.Fatalf("GET preferences = %d %v", code, list)
	}
	for _, key := range []string{"id", "concept", "weight", "effectiveWeight", "kind", "faded", "evidence", "cluster", "sources"} {
		if _, ok := list[0][key]; !ok {
			t.Errorf("a preference lacks %q: %v", key, list[0])
		}
	}
	var heistID string
	for _, p := range list {
		if p["concept"] == "heist" {
			heistID = p["id"].(string)
			if p["weight"] != 1.0 || p["kind"] != "taste" || p["faded"] != false || p["cluster"] == nil {
				t.Errorf("heist = %v", p)
			}
		}
		if p["concept"] == "cilantro" && p["cluster"] != nil {
			t.Errorf("cilantro is in cluster %v", p["cluster"])
		}
	}

	var clusters []map[string]any
	if code := prefRequest(t, "GET", ts.URL+"/v1/users/ana/preference-clusters", "", &clusters); code != 200 || len(clusters) != 1 {
		t.Fatalf("GET preference-clusters = %d %v", code, clusters)
	}
	c := clusters[0]
	members, _ := c["members"].([]any)
	if c["description"] != "prefers heist and crime thrillers" || c["confidence"] == nil || len(members) != 2 ||
		members[0].(map[string]any)["concept"] != "heist" || members[0].(map[string]any)["stance"] != "support" {
		t.Errorf("cluster = %v", c)
	}

	var patched map[string]any
	if code := prefRequest(t, "PATCH", ts.URL+"/v1/users/ana/preferences/"+heistID, `{"weight": -0.5}`, &patched); code != 200 ||
		patched["weight"] != -0.5 || patched["effectiveWeight"] != -0.5 || patched["concept"] != "heist" {
		t.Errorf("PATCH weight = %d %v", code, patched)
	}
	if code := prefRequest(t, "PATCH", ts.URL+"/v1/users/ana/preferences/"+heistID, `{"concept": "caper films"}`, &patched); code != 200 ||
		patched["concept"] != "caper films" || patched["weight"] != -0.5 {
		t.Errorf("PATCH concept = %d %v", code, patched)
	}
	var e struct {
		Error struct{ Code, Message string }
	}
	for _, tt := range []struct {
		body, code, message string
		status              int
	}{
		{`{}`, "EINVALID", "a preference patch needs a weight or a concept", 400},
		{`{"weight": 9}`, "EINVALID", "weight must be from -3 to 3, got 9", 400},
		{`{"concept": "  "}`, "EINVALID", "concept must not be empty", 400},
		{`{"weight": "high"}`, "EINVALID", "", 400},
	} {
		if code := prefRequest(t, "PATCH", ts.URL+"/v1/users/ana/preferences/"+heistID, tt.body, &e); code != tt.status ||
			e.Error.Code != tt.code || tt.message != "" && e.Error.Message != tt.message {
			t.Errorf("PATCH %s = %d %+v, want %d %s %q", tt.body, code, e, tt.status, tt.code, tt.message)
		}
	}
	if code := prefRequest(t, "PATCH", ts.URL+"/v1/users/ana/preferences/pref_nope", `{"weight": 1}`, &e); code != 404 || e.Error.Code != "ENOTFOUND" {
		t.Errorf("PATCH unknown = %d %+v", code, e)
	}

	if code := prefRequest(t, "DELETE", ts.URL+"/v1/users/ana/preferences/"+heistID, "", nil); code != 204 {
		t.Errorf("DELETE = %d, want 204", code)
	}
	if code := prefRequest(t, "DELETE", ts.URL+"/v1/users/ana/preferences/"+heistID, "", &e); code != 404 || e.Error.Code != "ENOTFOUND" {
		t.Errorf("DELETE again = %d %+v, want 404", code, e)
	}
	list = nil
	prefRequest(t, "GET", ts.URL+"/v1/users/ana/preferences", "", &list)
	if len(list) != 2 || slices.ContainsFunc(list, func(p map[string]any) bool { return p["id"] == heistID }) {
		t.Errorf("after DELETE: %v", list)
	}
	// Another tenant and an unknown user have none.
	req, _ := http.NewRequest("GET", ts.URL+"/v1/users/ana/preferences", nil)
	req.Header.Set("X-Memento-Tenant", "other")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(bytes.TrimSpace(b)) != "[]" {
		t.Errorf("other tenant = %d %s, want 200 []", resp.StatusCode, b)
	}
	var none []any
	if code := prefRequest(t, "GET", ts.URL+"/v1/users/nobody/preference-clusters", "", &none); code != 200 || none == nil || len(none) != 0 {
		t.Errorf("clusters of an unknown user = %d %v, want 200 []", code, none)
	}
}
