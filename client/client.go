// Package client is a Go client of Memento's REST API: typed methods for
// the agent, the message log, attribute memory, the context assembler,
// events, profiles, preferences, export and forgetting, with the documents
// the server itself uses.
//
// Every method takes a context.Context first. An error the server answers
// with comes back as a *memento.Error with the server's code (ENOTFOUND,
// EFORBIDDEN, ...) and message, so callers test it with
// memento.ErrorCode(err). Requests the server refuses for now, with 429
// (a key's rate limit) or 503 (a dependency down, or memory formation
// behind), are sent again after the Retry-After the server gave, a few
// times, within the context's deadline.
//
//	c, err := client.New("http://127.0.0.1:8080", client.WithKey(os.Getenv("MEMENTO_KEY")))
//	res, err := c.AppendMessages(ctx, "ana", "t1", client.Message{Role: memento.RoleUser, Text: "I love heist films."})
//	doc, err := c.Context(ctx, "ana", client.ContextQuery{Query: "what to watch"})
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/memento-ai/memento"
)

// Defaults of the retry policy.
const (
	DefaultRetries = 3
	// DefaultMaxWait bounds one wait between attempts: a Retry-After
	// longer than it is not waited for, and the error returns at once.
	DefaultMaxWait = 30 * time.Second
	// firstBackoff is the wait before the first retry when the server
	// gave no Retry-After; it doubles with each attempt.
	firstBackoff = 250 * time.Millisecond
)

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

// Client calls one Memento server. It is safe for concurrent use.
type Client struct {
	base    *url.URL
	http    *http.Client
	key     string
	tenant  string
	retries int
	maxWait time.Duration
	agent   string
	sleep   func(ctx context.Context, d time.Duration) error
}

// Option configures a Client.
type Option func(*Client)

// WithKey sends key as "Authorization: Bearer KEY" on every request (an
// API key of `memento keys create`). An empty key sends none.
func WithKey(key string) Option { return func(c *Client) { c.key = key } }

// WithTenant names the tenant in X-Memento-Tenant, which a server in open
// mode (no keys) honours; with a key the tenant is the key's, and a
// different one is refused.
func WithTenant(tenant string) Option { return func(c *Client) { c.tenant = tenant } }

// WithHTTPClient sends requests with hc instead of a client with a
// 3-minute timeout (a chat turn with a slow model takes a while).
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.http = hc } }

// WithRetries sets how many times a request refused with 429 or 503 is
// sent again (0: never) and the longest wait between two attempts.
func WithRetries(n int, maxWait time.Duration) Option {
	return func(c *Client) { c.retries, c.maxWait = n, maxWait }
}

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option { return func(c *Client) { c.agent = ua } }

// New returns a client of the server at baseURL, such as
// "http://127.0.0.1:8080". Errors: EINVALID for a URL that is not http or
// https.
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, memento.Errorf(memento.EINVALID, "the server URL must be http://host:port or https://host, got %q", baseURL)
	}
	c := &Client{base: u, http: &http.Client{Timeout: 3 * time.Minute}, retries: DefaultRetries, maxWait: DefaultMaxWait,
		agent: "memento-go-client", sleep: sleepCtx}
	for _, o := range opts {
		o(c)
	}
	if c.retries < 0 {
		c.retries = 0
	}
	return c, nil
}

// request is one call to the API.
type request struct {
	method string
	path   string // with its segments escaped (seg)
	query  url.Values
	body   any // encoded as JSON; nil sends none
	header http.Header
	out    any // decoded from a 2xx answer with a body
}

// do sends r, retrying as the policy allows, and returns the answer's
// headers.
func (c *Client) do(ctx context.Context, r request) (http.Header, error) {
	var body []byte
	if r.body != nil {
		var err error
		if body, err = json.Marshal(r.body); err != nil {
			return nil, memento.WrapError(memento.EINVALID, err, "encode the %s %s body: %v", r.method, r.path, err)
		}
	}
	target := c.base.Scheme + "://" + c.base.Host + c.base.EscapedPath() + r.path
	if len(r.query) > 0 {
		target += "?" + r.query.Encode()
	}
	for attempt := 0; ; attempt++ {
		hdr, wait, err := c.once(ctx, r, target, body)
		if err == nil || wait < 0 || attempt >= c.retries {
			return hdr, err
		}
		if wait == 0 {
			wait = firstBackoff << attempt
			wait += time.Duration(rand.Int64N(int64(wait) / 4))
		}
		if wait > c.maxWait {
			return hdr, err
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return hdr, err
		}
		if serr := c.sleep(ctx, wait); serr != nil {
			return hdr, err
		}
	}
}

// once sends r one time. wait says whether and when to try again: -1
// never, 0 after a backoff, more after that long (Retry-After).
func (c *Client) once(ctx context.Context, r request, u string, body []byte) (http.Header, time.Duration, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, rd)
	if err != nil {
		return nil, -1, memento.WrapError(memento.EINVALID, err, "build the request %s %s: %v", r.method, r.path, err)
	}
	for k, vs := range r.header {
		req.Header[k] = vs
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	if c.tenant != "" {
		req.Header.Set("X-Memento-Tenant", c.tenant)
	}
	if c.agent != "" {
		req.Header.Set("User-Agent", c.agent)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, -1, ctx.Err()
		}
		return nil, -1, memento.WrapError(memento.EUNAVAILABLE, err, "the Memento server at %s cannot be reached: %v", c.base.Host, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		err := decodeError(resp)
		switch resp.StatusCode {
		case http.StatusTooManyRequests, http.StatusServiceUnavailable:
			return resp.Header, retryAfter(resp.Header.Get("Retry-After"), time.Now()), err
		}
		return resp.Header, -1, err
	}
	if r.out != nil && resp.StatusCode != http.StatusNoContent {
		if err := json.NewDecoder(resp.Body).Decode(r.out); err != nil {
			return resp.Header, -1, memento.WrapError(memento.EUPSTREAM, err, "the answer to %s %s is not the JSON expected: %v", r.method, r.path, err)
		}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	return resp.Header, -1, nil
}

// decodeError reads an error answer, Memento's {"error":{"code",
// "message"}}, into a *memento.Error; another body gets the code of its
// status.
func decodeError(resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var doc struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &doc) == nil && doc.Error.Code != "" {
		return &memento.Error{Code: doc.Error.Code, Message: doc.Error.Message}
	}
	msg := strings.TrimSpace(string(data))
	if msg == "" {
		msg = resp.Status
	}
	return &memento.Error{Code: codeOf(resp.StatusCode), Message: msg}
}

// codeOf is the application code of an HTTP status whose body did not
// carry one (a proxy's answer).
func codeOf(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		return memento.EINVALID
	case http.StatusUnauthorized:
		return memento.EUNAUTHORIZED
	case http.StatusForbidden:
		return memento.EFORBIDDEN
	case http.StatusNotFound:
		return memento.ENOTFOUND
	case http.StatusConflict, http.StatusPreconditionFailed:
		return memento.ECONFLICT
	case http.StatusRequestEntityTooLarge:
		return memento.ETOOLARGE
	case http.StatusUnsupportedMediaType:
		return memento.EUNSUPPORTED
	case http.StatusNotImplemented:
		return memento.ENOTIMPLEMENTED
	case http.StatusBadGateway:
		return memento.EUPSTREAM
	case http.StatusTooManyRequests:
		return memento.ERATELIMITED
	case http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return memento.EUNAVAILABLE
	}
	if status < 500 {
		return memento.EINVALID
	}
	return memento.EINTERNAL
}

// retryAfter reads a Retry-After header, seconds or an HTTP date; 0 when
// there is none or it cannot be read.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if n, err := strconv.Atoi(h); err == nil && n >= 0 {
		return max(time.Duration(n)*time.Second, time.Millisecond)
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(t.Sub(now), time.Millisecond)
	}
	return 0
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// seg escapes one path segment (a user, thread or memory id).
func seg(s string) string { return url.PathEscape(s) }

// path joins escaped segments under /v1.
func path(segs ...string) string {
	var b strings.Builder
	b.WriteString("/v1")
	for _, s := range segs {
		b.WriteByte('/')
		b.WriteString(s)
	}
	return b.String()
}

// userPath is /v1/users/{user} followed by more segments, each escaped.
func userPath(user string, more ...string) string {
	segs := []string{"users", seg(user)}
	for _, m := range more {
		segs = append(segs, seg(m))
	}
	return path(segs...)
}

// checkUser refuses an empty user before a request is sent: the path
// would name another route.
func checkUser(user string) error {
	if user == "" {
		return memento.Errorf(memento.EINVALID, "user is required")
	}
	return nil
}

// IsRetryable reports whether err says the server refused for now, as it
// does with 429 (ERATELIMITED) and 503 (EUNAVAILABLE): what the client
// retries, and what is worth trying again after its retries ran out.
func IsRetryable(err error) bool {
	var e *memento.Error
	return errors.As(err, &e) && (e.Code == memento.EUNAVAILABLE || e.Code == memento.ERATELIMITED)
}

func (c *Client) String() string { return fmt.Sprintf("memento client of %s", c.base) }
