package http_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/memento-ai/memento"
	mhttp "github.com/memento-ai/memento/http"
)

// TestReadiness checks /readyz against the server's start-up work: 503
// with Retry-After naming the work while any of it runs (two tasks of one
// name included), 200 once all of it ended, while /healthz stays 200 and
// says warming; and 503 naming a dependency that is down.
func TestReadiness(t *testing.T) {
	var srv *mhttp.Server
	ts := testServer(t, func(s *mhttp.Server) { srv = s })
	first, second := srv.Warm("titles"), srv.Warm("titles")

	unready := func(what string) {
		t.Helper()
		resp, err := http.Get(ts.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "1" {
			t.Errorf("%s: /readyz = %d, Retry-After %q; want 503 and 1", what, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		code, body := get(t, ts.URL+"/readyz")
		errCode, msg := errorOf(body)
		if code != 503 || errCode != memento.EUNAVAILABLE || !strings.Contains(msg, "titles") {
			t.Errorf("%s: /readyz = %d %v, want 503 EUNAVAILABLE naming titles", what, code, body)
		}
		code, body = get(t, ts.URL+"/healthz")
		checks, _ := body["checks"].(map[string]any)
		if code != 200 || body["status"] != "warming" || checks["titles"] != "warming" {
			t.Errorf("%s: /healthz = %d %v, want 200, warming, titles warming", what, code, body)
		}
	}
	unready("both warming")
	first()
	first() // a second call changes nothing
	unready("one of two warming")
	second()

	code, body := get(t, ts.URL+"/readyz")
	if code != 200 || body["status"] != "ready" {
		t.Errorf("/readyz once warm = %d %v, want 200 ready", code, body)
	}
	if checks, _ := body["checks"].(map[string]any); checks["titles"] != nil {
		t.Errorf("/readyz once warm still lists titles: %v", body)
	}
	if code, body := get(t, ts.URL+"/healthz"); code != 200 || body["status"] != "ok" {
		t.Errorf("/healthz once warm = %d %v, want 200 ok", code, body)
	}

	down := testServer(t, func(s *mhttp.Server) { s.Health = map[string]memento.Pinger{"store": downPinger{}} })
	code, body = get(t, down.URL+"/readyz")
	if _, msg := errorOf(body); code != 503 || !strings.Contains(msg, "store") {
		t.Errorf("/readyz with a dead store = %d %v, want 503 naming the store", code, body)
	}

	code, body = get(t, ts.URL+"/openapi.json")
	if paths, _ := body["paths"].(map[string]any); code != 200 || paths["/readyz"] == nil {
		t.Errorf("the OpenAPI document lacks /readyz")
	}
}

// TestReadinessConcurrent starts and ends warm-ups while requests read
// /readyz and /healthz (run with -race): every answer is one of the two
// states, and the server is ready once every task ended.
func TestReadinessConcurrent(t *testing.T) {
	var srv *mhttp.Server
	ts := testServer(t, func(s *mhttp.Server) { srv = s })
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 20 {
				done := srv.Warm([]string{"titles", "index"}[i%2])
				resp, err := http.Get(ts.URL + "/readyz")
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode != 503 {
					t.Errorf("/readyz while this goroutine's task runs = %d, want 503", resp.StatusCode)
				}
				done()
			}
		})
		wg.Go(func() {
			for range 20 {
				resp, err := http.Get(ts.URL + "/healthz")
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Errorf("/healthz = %d, want 200 throughout", resp.StatusCode)
				}
			}
		})
	}
	wg.Wait()
	if code, body := get(t, ts.URL+"/readyz"); code != 200 {
		t.Errorf("/readyz after every task ended = %d %v", code, body)
	}
}
