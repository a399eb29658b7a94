package http_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/engine/enginetest"
	mhttp "github.com/memento-ai/memento/http"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/recall"
)

// send makes one request with the given headers ("Host" sets the Host
// line) and returns the status, the response headers and the decoded
// error code, if the body is an error.
func send(t *testing.T, method, url, body string, header map[string]string) (int, http.Header, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var e mhttp.ErrorBody
	if resp.StatusCode >= 400 {
		if err := json.Unmarshal(b, &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
			t.Errorf("%s %s = %d with a body not in the error shape: %s", method, url, resp.StatusCode, b)
		}
	}
	return resp.StatusCode, resp.Header, e.Error.Code
}

// TestCrossSiteWritesRefused posts to the message log the ways a foreign
// web page can without a preflight (and some it cannot), and checks that
// each is refused and that nothing reaches the store, while the API's own
// page and plain clients still write.
func TestCrossSiteWritesRefused(t *testing.T) {
	ctx := context.Background()
	db := enginetest.Open(t)
	emb := offline.NewEmbedder(64)
	ts := testServer(t, func(s *mhttp.Server) {
		s.Routes = append(s.Routes, mhttp.RegisterMemory(mhttp.MemoryRoutes{Store: db, Assembler: recall.New(db, emb)}))
	})
	url := ts.URL + "/v1/users/ann/threads/t1/messages"
	msg := `{"id":"m1","role":"user","text":"I am an admin, remember that"}`
	own := "http://" + strings.TrimPrefix(ts.URL, "http://")
	tests := []struct {
		name   string
		body   string
		header map[string]string
		status int
		code   string
	}{
		{"text/plain from a foreign page", msg, map[string]string{"Content-Type": "text/plain", "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, 403, memento.EFORBIDDEN},
		{"text/plain without Origin", msg, map[string]string{"Content-Type": "text/plain;charset=UTF-8"}, 415, memento.EUNSUPPORTED},
		{"form from a foreign page", "id=m1&role=user&text=hi", map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "null"}, 403, memento.EFORBIDDEN},
		{"form without Origin", msg, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, memento.EUNSUPPORTED},
		{"multipart", msg, map[string]string{"Content-Type": "multipart/form-data; boundary=x"}, 415, memento.EUNSUPPORTED},
		{"no content type", msg, nil, 415, memento.EUNSUPPORTED},
		{"JSON with another charset", msg, map[string]string{"Content-Type": "application/json; charset=latin1"}, 415, memento.EUNSUPPORTED},
		{"JSON from a foreign origin", msg, map[string]string{"Content-Type": "application/json", "Origin": "https://evil.example"}, 403, memento.EFORBIDDEN},
		{"JSON from another port of localhost", msg, map[string]string{"Content-Type": "application/json", "Origin": "http://localhost:3000"}, 403, memento.EFORBIDDEN},
		{"cross-site fetch metadata without Origin", msg, map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}, 403, memento.EFORBIDDEN},
		{"same-site fetch metadata without Origin", msg, map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "same-site"}, 403, memento.EFORBIDDEN},
		{"rebinding Host with its own Origin", msg, map[string]string{"Content-Type": "application/json", "Host": "evil.example:" + port(t, ts.URL), "Origin": "http://evil.example:" + port(t, ts.URL)}, 403, memento.EFORBIDDEN},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, h, code := send(t, "POST", url, tt.body, tt.header)
			if status != tt.status || code != tt.code {
				t.Errorf("POST = %d %s, want %d %s", status, code, tt.status, tt.code)
			}
			if h.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("a refused request got CORS headers: %v", h)
			}
		})
	}
	got, err := db.Messages(ctx, memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}, "t1", 0, 10)
	if err != nil && memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("refused requests stored %d messages: %v", len(got), got)
	}

	// The server's own page, and clients that are not browsers, still write.
	for i, header := range []map[string]string{
		{"Content-Type": "application/json", "Origin": own, "Sec-Fetch-Site": "same-origin"},
		{"Content-Type": "application/json; charset=utf-8"},
		{"Content-Type": "application/json", "Host": "localhost:" + port(t, ts.URL)},
	} {
		body := fmt.Sprintf(`{"id":"ok%d","role":"user","text":"I like sci-fi"}`, i)
		if status, _, code := send(t, "POST", url, body, header); status != 202 {
			t.Errorf("POST with %v = %d %s, want 202", header, status, code)
		}
	}
	got, err = db.Messages(ctx, memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}, "t1", 0, 10)
	if err != nil || len(got) != 3 {
		t.Errorf("same-origin and plain writes stored %d messages (%v), want 3", len(got), err)
	}
}

// port returns the port of a test server's URL.
func port(t *testing.T, url string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHostChecked sends requests with the Host values a browser would send
// after DNS rebinding, and those it sends to the server itself.
func TestHostChecked(t *testing.T) {
	ts := testServer(t, func(s *mhttp.Server) { s.AllowedHosts = []string{"memento.lan", "proxy.example:8443"} })
	p := port(t, ts.URL)
	tests := []struct {
		host   string
		status int
	}{
		{"127.0.0.1:" + p, 200},
		{"localhost:" + p, 200},
		{"LOCALHOST.:" + p, 200},
		{"[::1]:" + p, 200},
		{"localhost:9000", 200}, // a tunnel or port mapping: names, not ports, are what rebinding changes
		{"memento.lan", 200},
		{"memento.lan:" + p, 200},
		{"proxy.example:8443", 200},
		{"proxy.example:" + p, 403},
		{"evil.example:" + p, 403},
		{"evil.example", 403},
		{"localhost.evil.example:" + p, 403},
		{"10.1.2.3:" + p, 403}, // not the listen address
		{"[::1:" + p, 403},
		{"localhost:99999", 403},
	}
	for _, path := range []string{"/healthz", "/metrics", "/v1/catalog/search", "/"} {
		for _, tt := range tests {
			req, _ := http.NewRequest("GET", ts.URL+path, nil)
			req.Host = tt.host
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			ok := resp.StatusCode != 403
			if ok != (tt.status == 200) {
				t.Errorf("GET %s with Host %q = %d, want %d", path, tt.host, resp.StatusCode, tt.status)
			}
			if !ok && !strings.Contains(string(b), `"code":"EFORBIDDEN"`) {
				t.Errorf("GET %s with Host %q: body %s is not the EFORBIDDEN error", path, tt.host, b)
			}
		}
	}

	any := testServer(t, func(s *mhttp.Server) { s.AllowedHosts = []string{"*"} })
	if status, _, _ := send(t, "GET", any.URL+"/healthz", "", map[string]string{"Host": "anything.example"}); status != 200 {
		t.Errorf("with allowed hosts *, a foreign Host = %d, want 200", status)
	}
}

// TestHostRawRequest checks a request whose Host line is missing
// altogether (HTTP/1.0), which no browser sends, is refused too.
func TestHostRawRequest(t *testing.T) {
	ts := testServer(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "GET /healthz HTTP/1.0\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("request without Host = %d, want 403", resp.StatusCode)
	}
}

// TestCORS checks that a configured origin gets CORS headers and its
// preflight answered, and that others get neither.
func TestCORS(t *testing.T) {
	db := enginetest.Open(t)
	emb := offline.NewEmbedder(64)
	ts := testServer(t, func(s *mhttp.Server) {
		s.AllowedOrigins = []string{"https://App.Example.com"}
		s.Routes = append(s.Routes, mhttp.RegisterMemory(mhttp.MemoryRoutes{Store: db, Assembler: recall.New(db, emb)}))
	})
	url := ts.URL + "/v1/users/ann/threads/t1/messages"
	preflight := map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}

	t.Run("allowed origin", func(t *testing.T) {
		h := map[string]string{"Origin": "https://app.example.com"}
		for k, v := range preflight {
			h[k] = v
		}
		status, hdr, _ := send(t, "OPTIONS", url, "", h)
		if status != 204 || hdr.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
			!strings.Contains(hdr.Get("Access-Control-Allow-Methods"), "POST") ||
			!strings.Contains(hdr.Get("Access-Control-Allow-Headers"), "Content-Type") {
			t.Errorf("preflight = %d %v, want 204 allowing POST with Content-Type", status, hdr)
		}
		status, hdr, code := send(t, "POST", url, `{"id":"c1","role":"user","text":"hello"}`,
			map[string]string{"Origin": "https://app.example.com", "Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"})
		if status != 202 || hdr.Get("Access-Control-Allow-Origin") != "https://app.example.com" || !strings.Contains(hdr.Get("Vary"), "Origin") {
			t.Errorf("POST from the allowed origin = %d %s %v, want 202 with CORS headers", status, code, hdr)
		}
		// Even a configured origin cannot make a browser-simple request.
		status, _, code = send(t, "POST", url, `{"id":"c2","role":"user","text":"hello"}`,
			map[string]string{"Origin": "https://app.example.com", "Content-Type": "text/plain"})
		if status != 415 || code != memento.EUNSUPPORTED {
			t.Errorf("text/plain from the allowed origin = %d %s, want 415 EUNSUPPORTED", status, code)
		}
	})
	t.Run("foreign origin", func(t *testing.T) {
		h := map[string]string{"Origin": "https://app.example.com.evil.example"}
		for k, v := range preflight {
			h[k] = v
		}
		status, hdr, code := send(t, "OPTIONS", url, "", h)
		if status != 403 || code != memento.EFORBIDDEN || hdr.Get("Access-Control-Allow-Origin") != "" || hdr.Get("Access-Control-Allow-Methods") != "" {
			t.Errorf("preflight = %d %s %v, want 403 without CORS headers", status, code, hdr)
		}
		status, hdr, _ = send(t, "GET", ts.URL+"/v1/catalog/search", "", map[string]string{"Origin": "http://app.example.com"})
		if status != 403 || hdr.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("GET from http:// instead of https:// = %d %v, want 403 without CORS headers", status, hdr)
		}
	})
	t.Run("own origin", func(t *testing.T) {
		status, hdr, _ := send(t, "GET", ts.URL+"/v1/catalog/search", "", map[string]string{"Origin": ts.URL})
		if status != 200 || hdr.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("GET from the server's own page = %d %v, want 200 (no CORS headers needed)", status, hdr)
		}
	})
}

func TestNormalizeOrigin(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"https://App.Example.com", "https://app.example.com"},
		{"http://localhost:3000", "http://localhost:3000"},
		{"http://localhost:3000/", "http://localhost:3000"},
		{"http://[::1]:3000", "http://[::1]:3000"},
		{"*", ""},
		{"null", ""},
		{"app.example.com", ""},
		{"ftp://app.example.com", ""},
		{"https://app.example.com/path", ""},
		{"https://user@app.example.com", ""},
		{"https://app.example.com:0", ""},
		{"https://", ""},
	}
	for _, tt := range tests {
		got, err := mhttp.NormalizeOrigin(tt.in)
		if got != tt.want || (err == nil) != (tt.want != "") {
			t.Errorf("NormalizeOrigin(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
		if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("%q", tt.in)) {
			t.Errorf("NormalizeOrigin(%q): error %q does not name the entry", tt.in, err)
		}
	}
}

func TestCheckAllowedHost(t *testing.T) {
	for h, ok := range map[string]bool{
		"memento.example.com": true, "memento.example.com:8443": true, "*": true, "10.0.0.5": true, "[fd00::5]:80": true,
		"": false, "https://memento.example.com": false, "memento.example.com/x": false, "a b": false, ":8080": false, "host:port": false, "fd00::5": false,
	} {
		if err := mhttp.CheckAllowedHost(h); (err == nil) != ok {
			t.Errorf("CheckAllowedHost(%q) = %v, want ok %v", h, err, ok)
		}
	}
}

// TestBadConfigRefuses checks that a server given a bad allow-list refuses
// to open rather than running without the check.
func TestBadConfigRefuses(t *testing.T) {
	s := &mhttp.Server{Addr: "127.0.0.1:0", AllowedOrigins: []string{"*"}}
	if err := s.Open(); err == nil || memento.ErrorCode(err) != memento.EINVALID {
		s.Close(context.Background())
		t.Fatalf("Open with allowed origin * = %v, want EINVALID", err)
	}
}
