package http_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/engine/enginetest"
	mhttp "github.com/memento-ai/memento/http"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/recall"
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

// TestChunkedBodyTooLarge sends bodies without a Content-Length: one over
// MaxBodyBytes must be refused with 413 ETOOLARGE in the error shape (it
// was a 500 with net/http's own message), one under it must be served.
func TestChunkedBodyTooLarge(t *testing.T) {
	db := enginetest.Open(t)
	ts := testServer(t, func(s *mhttp.Server) {
		s.Routes = append(s.Routes, mhttp.RegisterMemory(mhttp.MemoryRoutes{Store: db, Assembler: recall.New(db, offline.NewEmbedder(64))}))
	})
	url := ts.URL + "/v1/users/ann/threads/t1/messages"
	tests := []struct {
		name   string
		text   int
		status int
		code   string
	}{
		{"over the limit", mhttp.MaxBodyBytes + 10<<10, 413, memento.ETOOLARGE},
		{"under the limit", 10 << 10, 202, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := io.MultiReader(strings.NewReader(`{"id":"`+strings.Fields(tt.name)[0]+`","role":"user","text":"`), strings.NewReader(strings.Repeat("x", tt.text)), strings.NewReader(`"}`))
			req, _ := http.NewRequest("POST", url, body)
			req.Header.Set("Content-Type", "application/json")
			req.TransferEncoding = []string{"chunked"}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var out mhttp.ErrorBody
			b, _ := io.ReadAll(resp.Body)
			_ = json.Unmarshal(b, &out)
			if resp.StatusCode != tt.status || out.Error.Code != tt.code {
				t.Errorf("status %d %s (%s), want %d %s", resp.StatusCode, out.Error.Code, b, tt.status, tt.code)
			}
			if tt.code != "" && !strings.Contains(out.Error.Message, fmt.Sprint(mhttp.MaxBodyBytes)) {
				t.Errorf("message %q does not give the limit", out.Error.Message)
			}
		})
	}
}

// openServer starts a real listening server (timeouts and the connection
// cap live in Open, not in Handler).
func openServer(t *testing.T, s *mhttp.Server) string {
	t.Helper()
	s.Addr = "127.0.0.1:0"
	s.Health = map[string]memento.Pinger{}
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Close(ctx)
	})
	return strings.TrimPrefix(s.URL(), "http://")
}

// TestSlowLorisCutOff drips a request one byte at a time, slower than it
// can finish within the read timeout, in its headers and in its body. The
// server must close the connection before the request is complete.
func TestSlowLorisCutOff(t *testing.T) {
	addr := openServer(t, &mhttp.Server{ReadTimeout: 300 * time.Millisecond})
	const bodyLen = 200 // 20 s of dripping at one byte per 100 ms
	tests := []struct {
		name       string
		head, drip string
	}{
		{"headers", "GET /healthz HTTP/1.1\r\nHost: localhost\r\n", "X-Slow: " + strings.Repeat("a", bodyLen) + "\r\n\r\n"},
		{"body", "POST /v1/catalog/search HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: " + fmt.Sprint(bodyLen) + "\r\n\r\n", strings.Repeat(" ", bodyLen)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, tt.head); err != nil {
				t.Fatal(err)
			}
			var sent atomic.Int64
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				tick := time.NewTicker(100 * time.Millisecond)
				defer tick.Stop()
				for i := 0; i < len(tt.drip); i++ {
					select {
					case <-stop:
						return
					case <-tick.C:
					}
					if _, err := conn.Write([]byte{tt.drip[i]}); err != nil {
						return
					}
					sent.Add(1)
				}
			}()
			// A guard against a server that never cuts: far longer than
			// the read timeout, far shorter than the whole drip.
			conn.SetReadDeadline(time.Now().Add(15 * time.Second))
			got, err := io.ReadAll(conn)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("the connection was still open after 15 s of dripping (%d bytes sent)", sent.Load())
			}
			if n := sent.Load(); n >= int64(len(tt.drip)) {
				t.Fatalf("the whole request was dripped in (%d bytes) before the server closed", n)
			}
			// What the server says, if anything, must not be a success.
			if strings.HasPrefix(string(got), "HTTP/1.1 2") {
				t.Errorf("the server answered the slow request: %q", got)
			}
			if tt.name == "body" && !strings.HasPrefix(string(got), "HTTP/1.1 408") {
				t.Errorf("a body cut by the read timeout got %q, want a 408", got)
			}
		})
	}
}

// TestConnectionCap opens more connections than the cap, each with a
// request the handler holds until the test lets it go, and checks that at
// most the cap are ever served at once and that all are served in the end.
func TestConnectionCap(t *testing.T) {
	const max, clients = 2, 6
	var inflight, peak atomic.Int64
	entered := make(chan struct{}, clients)
	release := make(chan struct{})
	block := func(api huma.API, s *mhttp.Server) {
		huma.Register(api, huma.Operation{OperationID: "block", Method: http.MethodGet, Path: "/v1/test/block"},
			func(ctx context.Context, _ *struct{}) (*struct{}, error) {
				n := inflight.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				entered <- struct{}{}
				<-release
				inflight.Add(-1)
				return nil, nil
			})
	}
	addr := openServer(t, &mhttp.Server{MaxConns: max, Routes: []func(huma.API, *mhttp.Server){block}})

	statuses := make(chan int, clients)
	for i := 0; i < clients; i++ {
		go func() {
			// No keep-alive: a finished request gives its connection back.
			c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			resp, err := c.Get("http://" + addr + "/v1/test/block")
			if err != nil {
				statuses <- 0
				return
			}
			resp.Body.Close()
			statuses <- resp.StatusCode
		}()
	}
	// Hold every request that gets in; let one go only when another has
	// entered, so that without the cap all of them would be in at once.
	for i := 0; i < max; i++ {
		<-entered
	}
	for i := max; i < clients; i++ {
		release <- struct{}{}
		<-entered
	}
	for i := 0; i < max; i++ {
		release <- struct{}{}
	}
	for i := 0; i < clients; i++ {
		if s := <-statuses; s != http.StatusNoContent && s != http.StatusOK {
			t.Errorf("a client got status %d", s)
		}
	}
	if p := peak.Load(); p != max {
		t.Errorf("%d requests were served at once, want the cap, %d", p, max)
	}
}

func TestBadLimitsRefused(t *testing.T) {
	for _, s := range []*mhttp.Server{{ReadTimeout: -time.Second}, {IdleTimeout: -1}, {MaxConns: -1}} {
		s.Addr = "127.0.0.1:0"
		if err := s.Open(); memento.ErrorCode(err) != memento.EINVALID {
			s.Close(context.Background())
			t.Errorf("Open with %+v = %v, want EINVALID", s, err)
		}
	}
}
