package http_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/catalog"
	mhttp "github.com/memento-ai/memento/http"
)

func testServer(t *testing.T, extra ...func(s *mhttp.Server)) *httptest.Server {
	t.Helper()
	var titles []memento.Title
	for i := 0; i < 20; i++ {
		g := "Comedy"
		if i%4 == 0 {
			g = "Drama"
		}
		titles = append(titles, memento.Title{ID: fmt.Sprintf("t%02d", i), Title: fmt.Sprintf("Film %d", i), Type: "movie", Year: 2000 + i, Genres: []string{g}, Cast: []string{"Ann Lee"}})
	}
	s := &mhttp.Server{Catalog: catalog.New(titles), Version: "test", Health: map[string]memento.Pinger{}}
	for _, f := range extra {
		f(s)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts
}

func get(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("GET %s: body is not a JSON object: %s", url, b)
	}
	return resp.StatusCode, body
}

func TestCatalogSearch(t *testing.T) {
	ts := testServer(t)
	code, body := get(t, ts.URL+"/v1/catalog/search?genres=Comedy&minYear=2010&size=3")
	if code != 200 {
		t.Fatalf("status %d: %v", code, body)
	}
	titles := body["titles"].([]any)
	if len(titles) != 3 || body["total"].(float64) != 8 || body["last"] != false || body["page"].(float64) != 1 || body["size"].(float64) != 3 {
		t.Fatalf("body = %v", body)
	}
	first := titles[0].(map[string]any)
	for _, k := range []string{"id", "title", "type", "year", "genres", "cast"} {
		if _, ok := first[k]; !ok {
			t.Errorf("title lacks %q: %v", k, first)
		}
	}
	if first["year"].(float64) != 2019 {
		t.Errorf("first title = %v, want the newest (2019)", first)
	}
}

func TestErrors(t *testing.T) {
	ts := testServer(t)
	tests := []struct {
		path   string
		status int
		code   string
		msg    string
	}{
		{"/v1/catalog/search?minYear=abc", 400, "EINVALID", `minYear must be a year between 1870 and 2100, got "abc"`},
		{"/v1/catalog/search?maxYear=3000", 400, "EINVALID", "maxYear must be a year"},
		{"/v1/catalog/search?colour=red", 400, "EINVALID", `query parameter "colour" is not known`},
		{"/v1/catalog/search?size=500", 400, "EINVALID", "size must be"},
		{"/v1/catalog/search?page=0", 400, "EINVALID", "page must be"},
		{"/v1/catalog/search?minYear=2015&maxYear=2010", 400, "EINVALID", "2015"},
		{"/v1/catalog/search?adult=maybe", 400, "EINVALID", "adult must be"},
		{"/v1/catalog/titles/nope", 404, "ENOTFOUND", ""},
		{"/v1/nothing-here", 404, "ENOTFOUND", "no route"},
	}
	for _, tt := range tests {
		code, body := get(t, ts.URL+tt.path)
		e, ok := body["error"].(map[string]any)
		if code != tt.status || !ok || e["code"] != tt.code || !strings.Contains(fmt.Sprint(e["message"]), tt.msg) {
			t.Errorf("GET %s = %d %v, want %d %s containing %q", tt.path, code, body, tt.status, tt.code, tt.msg)
		}
		if len(body) != 1 {
			t.Errorf("GET %s: error body has extra fields: %v", tt.path, body)
		}
	}
}

func TestBodyTooLarge(t *testing.T) {
	ts := testServer(t)
	big := strings.NewReader(`{"user":"u","thread":"t","message":"` + strings.Repeat("x", mhttp.MaxBodyBytes) + `"}`)
	resp, err := http.Post(ts.URL+"/v1/catalog/search", "application/json", big)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("status = %d, want 413", resp.StatusCode)
	}
}

func TestStatusFor(t *testing.T) {
	for code, want := range map[string]int{
		memento.EINVALID: 400, memento.ENOTFOUND: 404, memento.ECONFLICT: 409, memento.ETOOLARGE: 413,
		memento.EUNAUTHORIZED: 401, memento.EUNAVAILABLE: 503, memento.EINTERNAL: 500, "EWHAT": 500,
	} {
		if got := mhttp.StatusFor(code); got != want {
			t.Errorf("StatusFor(%s) = %d, want %d", code, got, want)
		}
	}
}

type downPinger struct{}

func (downPinger) Ping(context.Context) error { return errors.New("connection refused to 10.1.2.3") }

func TestHealthMetricsOpenAPI(t *testing.T) {
	ts := testServer(t)
	if code, body := get(t, ts.URL+"/healthz"); code != 200 || body["status"] != "ok" {
		t.Errorf("healthz = %d %v", code, body)
	}
	code, body := get(t, ts.URL+"/openapi.json")
	if code != 200 || body["openapi"] == nil {
		t.Fatalf("openapi = %d", code)
	}
	paths := body["paths"].(map[string]any)
	for _, p := range []string{"/v1/catalog/search", "/v1/catalog/titles/{id}", "/healthz"} {
		if paths[p] == nil {
			t.Errorf("OpenAPI document lacks %s", p)
		}
	}
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "memento_http_requests_total") {
		t.Errorf("metrics lack the request counter:\n%s", b)
	}

	down := testServer(t, func(s *mhttp.Server) { s.Health = map[string]memento.Pinger{"store": downPinger{}} })
	code, body = get(t, down.URL+"/healthz")
	if code != 503 || strings.Contains(fmt.Sprint(body), "10.1.2.3") {
		t.Errorf("healthz with a dead store = %d %v, want 503 without internal detail", code, body)
	}
}
