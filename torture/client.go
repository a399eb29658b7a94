package torture

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client speaks to one Memento server through its public HTTP API. Every
// request is bounded by Timeout, so a server that hangs shows up as
// timeouts in a report instead of hanging the test.
type Client struct {
	// Base is the server's URL, such as http://127.0.0.1:8080.
	Base string
	// Timeout bounds each request; 0 means 30 seconds.
	Timeout time.Duration
	// HTTP is the client used; nil means one made for Base.
	HTTP *http.Client
}

// NewClient returns a client of the server at base with the given request
// timeout. Its transport keeps enough idle connections for many
// concurrent callers, so a load test measures the server rather than
// connection set-up.
func NewClient(base string, timeout time.Duration) *Client {
	tr := &http.Transport{
		Proxy:               nil, // loopback only: never through a proxy
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        512,
		MaxIdleConnsPerHost: 512,
		IdleConnTimeout:     30 * time.Second,
	}
	return &Client{Base: strings.TrimRight(base, "/"), Timeout: timeout, HTTP: &http.Client{Transport: tr}}
}

// Close releases the client's idle connections.
func (c *Client) Close() {
	if c.HTTP != nil {
		c.HTTP.CloseIdleConnections()
	}
}

// Status classes a request can end in besides an HTTP status.
const (
	// StatusTimeout is a request that got no answer within the timeout.
	StatusTimeout = "timeout"
	// StatusNetwork is a request that failed below HTTP (refused, reset).
	StatusNetwork = "network"
)

// Result is how one request ended.
type Result struct {
	// Code is the HTTP status, or 0 when there was none.
	Code int
	// Class is the status as a report counts it: "200", "502", "timeout"
	// or "network".
	Class string
	// Latency is the time from sending to the end of the body.
	Latency time.Duration
	// Body is the answer's body (up to 4 MiB).
	Body []byte
	// Err is the transport error, if any.
	Err error
}

// OK reports whether the server answered 2xx.
func (r Result) OK() bool { return r.Code >= 200 && r.Code < 300 }

func (c *Client) timeout() time.Duration {
	if c.Timeout <= 0 {
		return 30 * time.Second
	}
	return c.Timeout
}

// Do sends one request with a JSON body (nil for none) and reads the
// answer in full.
func (c *Client) Do(ctx context.Context, method, path string, body any) Result {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return Result{Class: StatusNetwork, Err: fmt.Errorf("encode %s %s: %w", method, path, err)}
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, rd)
	if err != nil {
		return Result{Class: StatusNetwork, Err: fmt.Errorf("%s %s: %w", method, path, err)}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	start := time.Now()
	resp, err := hc.Do(req)
	if err != nil {
		return Result{Class: failureClass(ctx, err), Latency: time.Since(start), Err: fmt.Errorf("%s %s: %w", method, path, err)}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	res := Result{Code: resp.StatusCode, Class: strconv.Itoa(resp.StatusCode), Latency: time.Since(start), Body: b}
	if err != nil {
		// The status arrived but the body did not: the server died or
		// hung half-way, which is not an answer.
		res.Code, res.Class, res.Err = 0, failureClass(ctx, err), fmt.Errorf("%s %s: read body: %w", method, path, err)
	}
	return res
}

// failureClass tells a timeout from another transport failure.
func failureClass(ctx context.Context, err error) string {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded || (errors.As(err, &ne) && ne.Timeout()) {
		return StatusTimeout
	}
	return StatusNetwork
}

// Message is a stored message as the API shows it.
type Message struct {
	ID   string `json:"id"`
	Seq  int64  `json:"seq"`
	Role string `json:"role"`
	Text string `json:"text"`
}

// Memory is a stored memory as the API shows it, with the fields that
// identify a duplicate.
type Memory struct {
	ID        string   `json:"id"`
	Kind      string   `json:"kind"`
	Attribute string   `json:"attribute"`
	Value     string   `json:"value"`
	Sources   []string `json:"sources"`
}

func userPath(user string) string { return "/v1/users/" + url.PathEscape(user) }

// Append posts one user message with a client id to a thread's log.
func (c *Client) Append(ctx context.Context, user, thread, id, text string) Result {
	body := map[string]string{"id": id, "role": "user", "text": text}
	return c.Do(ctx, http.MethodPost, userPath(user)+"/threads/"+url.PathEscape(thread)+"/messages", body)
}

// Chat sends one message to the agent.
func (c *Client) Chat(ctx context.Context, user, thread, text string) Result {
	return c.Do(ctx, http.MethodPost, "/v1/chat", map[string]string{"user": user, "thread": thread, "message": text})
}

// Context reads a user's memory context for a query.
func (c *Client) Context(ctx context.Context, user, thread, query string) Result {
	q := url.Values{"query": {query}}
	if thread != "" {
		q.Set("thread", thread)
	}
	return c.Do(ctx, http.MethodGet, userPath(user)+"/context?"+q.Encode(), nil)
}

// Search searches the catalog by free text.
func (c *Client) Search(ctx context.Context, text string) Result {
	return c.Do(ctx, http.MethodGet, "/v1/catalog/search?"+url.Values{"q": {text}}.Encode(), nil)
}

// decode reads a 2xx answer's JSON into v, or says why it cannot.
func decode(r Result, what string, v any) error {
	if r.Err != nil {
		return fmt.Errorf("read %s: %w", what, r.Err)
	}
	if !r.OK() {
		return fmt.Errorf("read %s: status %d: %s", what, r.Code, truncate(string(r.Body), 300))
	}
	if err := json.Unmarshal(r.Body, v); err != nil {
		return fmt.Errorf("read %s: decode: %w", what, err)
	}
	return nil
}

// Thread reads every message of a thread, in order.
func (c *Client) Thread(ctx context.Context, user, thread string) ([]Message, error) {
	var out struct {
		Messages []Message `json:"messages"`
	}
	r := c.Do(ctx, http.MethodGet, userPath(user)+"/threads/"+url.PathEscape(thread), nil)
	if r.Code == http.StatusNotFound {
		return nil, nil
	}
	if err := decode(r, "thread "+user+"/"+thread, &out); err != nil {
		return nil, err
	}
	return out.Messages, nil
}

// Memories reads every memory of a user, superseded versions included.
func (c *Client) Memories(ctx context.Context, user string) ([]Memory, error) {
	var out struct {
		Memories []Memory `json:"memories"`
	}
	r := c.Do(ctx, http.MethodGet, userPath(user)+"/memories?all=true", nil)
	if r.Code == http.StatusNotFound {
		return nil, nil
	}
	if err := decode(r, "memories of "+user, &out); err != nil {
		return nil, err
	}
	return out.Memories, nil
}

// Unfinished is how many background jobs have not ended, from the
// activity endpoint the web UI polls.
func (c *Client) Unfinished(ctx context.Context) (int, error) {
	var out struct {
		Live       bool `json:"live"`
		Unfinished int  `json:"unfinished"`
	}
	if err := decode(c.Do(ctx, http.MethodGet, "/ui/activity", nil), "job activity", &out); err != nil {
		return 0, err
	}
	if !out.Live {
		return 0, errors.New("read job activity: the server does not report its jobs")
	}
	return out.Unfinished, nil
}

// Healthy reports whether /healthz answers 200.
func (c *Client) Healthy(ctx context.Context) bool {
	return c.Do(ctx, http.MethodGet, "/healthz", nil).Code == http.StatusOK
}

// WaitReady polls /readyz while it answers 503 (a server still warming
// up, or with a dependency down) and returns how long it waited. It
// returns at once on any other answer: 200, or one that no waiting would
// change (nothing listening, another error), which the load that follows
// then reports request by request. A server without /readyz (404, one
// older than it) is asked /healthz instead. It gives up after timeout,
// with the last answer in the error.
func (c *Client) WaitReady(ctx context.Context, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	deadline := start.Add(timeout)
	for {
		r := c.Do(ctx, http.MethodGet, "/readyz", nil)
		if r.Code == http.StatusNotFound {
			r = c.Do(ctx, http.MethodGet, "/healthz", nil)
		}
		if r.Code != http.StatusServiceUnavailable {
			return time.Since(start), nil
		}
		if time.Now().After(deadline) {
			return time.Since(start), fmt.Errorf("the server at %s was not ready after %s (last answer %s: %s)", c.Base, timeout, r.Class, truncate(string(r.Body), 300))
		}
		select {
		case <-ctx.Done():
			return time.Since(start), ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// RSS reads process_resident_memory_bytes from the server's /metrics, for
// a server that is not a child of this process.
func (c *Client) RSS(ctx context.Context) (int64, error) {
	r := c.Do(ctx, http.MethodGet, "/metrics", nil)
	if !r.OK() {
		return 0, fmt.Errorf("read /metrics: status %d %v", r.Code, r.Err)
	}
	for _, line := range strings.Split(string(r.Body), "\n") {
		if v, ok := strings.CutPrefix(line, "process_resident_memory_bytes "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return 0, fmt.Errorf("read /metrics: bad resident memory %q", v)
			}
			return int64(f), nil
		}
	}
	return 0, errors.New("read /metrics: no process_resident_memory_bytes")
}

// Metrics reads the server's /metrics: each sample's value by its name
// and labels as the server wrote them (memento_queue_waiting_jobs{kind="remember"}).
func (c *Client) Metrics(ctx context.Context) (map[string]float64, error) {
	r := c.Do(ctx, http.MethodGet, "/metrics", nil)
	if !r.OK() {
		return nil, fmt.Errorf("read /metrics: status %d %v", r.Code, r.Err)
	}
	return parseMetrics(string(r.Body)), nil
}

// parseMetrics reads Prometheus's text format: one sample a line, its
// name (with labels) and its value, comments skipped; a line that does
// not parse is skipped.
func parseMetrics(text string) map[string]float64 {
	out := map[string]float64{}
	for _, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		// The value follows the last space outside the labels; a
		// timestamp, when present, would follow the value.
		name, rest := line, ""
		if i := strings.LastIndexByte(line, '}'); i >= 0 {
			name, rest = line[:i+1], line[i+1:]
		} else if i := strings.IndexByte(line, ' '); i >= 0 {
			name, rest = line[:i], line[i:]
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			continue
		}
		out[name] = v
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
