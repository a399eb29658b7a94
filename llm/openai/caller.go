package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/memento-ai/memento"
)

// Backoff bounds. The ceiling of attempt n is backoffBase·2ⁿ, capped at
// backoffMax; a server asking to wait longer than maxRetryAfter is not
// waited for.
const (
	backoffBase   = 500 * time.Millisecond
	backoffMax    = 20 * time.Second
	maxRetryAfter = 2 * time.Minute
)

// caller sends requests to the server: it bounds the requests in flight,
// times each one out, retries transient failures with backoff, and counts.
// A Model and its Embedder share one.
type caller struct {
	cfg    Config
	client oai.Client
	// sem bounds the requests of turns and jobSem those of background
	// work (memento.IsBackground): two budgets, so jobs never take every
	// slot a person's turn needs.
	sem    chan struct{}
	jobSem chan struct{}
	acct   *accounting
	sleep  func(ctx context.Context, d time.Duration) error
	jitter func(time.Duration) time.Duration
	clock  memento.Clock
	log    *slog.Logger
}

func newCaller(cfg Config, o options) (*caller, error) {
	acct, err := newAccounting(o.registerer)
	if err != nil {
		return nil, err
	}
	opts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL),
		option.WithHTTPClient(o.httpClient),
		// Retries are ours, so they are counted, bounded and testable.
		option.WithMaxRetries(0),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	} else {
		// Local servers need no key. Setting a placeholder keeps the SDK
		// from sending OPENAI_API_KEY from the environment to a server that
		// was never meant to see it.
		opts = append(opts, option.WithAPIKey("none"))
	}
	return &caller{
		cfg:    cfg,
		client: oai.NewClient(opts...),
		sem:    make(chan struct{}, cfg.Concurrency),
		jobSem: make(chan struct{}, cfg.JobConcurrency),
		acct:   acct,
		sleep:  o.sleep,
		jitter: o.jitter,
		clock:  o.clock,
		log:    o.logger,
	}, nil
}

// requestError is one failed HTTP request as the server or the network
// reported it.
type requestError struct {
	Status     int    // 0 when no response arrived
	Message    string // the server's message, or what went wrong on the way
	RetryAfter time.Duration
	Err        error
}

func (e *requestError) Error() string {
	if e.Status == 0 {
		return "request failed: " + e.Message
	}
	return fmt.Sprintf("HTTP %d: %s", e.Status, e.Message)
}

func (e *requestError) Unwrap() error { return e.Err }

// retryable reports whether sending the request again may succeed: the
// network failed, the request timed out, the server is rate limiting or
// failing.
func (e *requestError) retryable() bool {
	return e.Status == 0 || e.Status == http.StatusRequestTimeout ||
		e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// capture records the raw response of one attempt, whatever the SDK makes
// of it: servers that are not OpenAI answer errors in their own formats.
type capture struct {
	status int
	header http.Header
	body   []byte
}

func (c *capture) middleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if res != nil {
		c.status, c.header = res.StatusCode, res.Header
		if res.StatusCode >= 400 && res.Body != nil {
			b, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
			_ = res.Body.Close()
			c.body = b
			res.Body = io.NopCloser(bytes.NewReader(b))
		}
	}
	return res, err
}

// send runs one request through attempt, which must pass the given options
// to the SDK call. Transient failures are retried up to Config.MaxRetries
// times. The error is a *memento.Error (EUNAVAILABLE or EUPSTREAM, see
// appError) wrapping the last *requestError.
func (c *caller) send(ctx context.Context, task Task, attempt func(ctx context.Context, opts ...option.RequestOption) error) error {
	for n := 0; ; n++ {
		rerr, err := c.once(ctx, task, attempt)
		if err != nil {
			return err
		}
		if rerr == nil {
			return nil
		}
		if !rerr.retryable() || n >= c.cfg.MaxRetries {
			return c.appError(task, rerr)
		}
		wait := rerr.RetryAfter
		if wait > maxRetryAfter {
			return c.appError(task, rerr)
		}
		if wait <= 0 {
			ceiling := backoffBase << n
			if ceiling > backoffMax || ceiling <= 0 {
				ceiling = backoffMax
			}
			wait = c.jitter(ceiling)
		}
		c.acct.retry(task)
		c.log.LogAttrs(ctx, slog.LevelWarn, "retrying language model request",
			slog.String("task", string(task)), slog.Int("attempt", n+1), slog.Duration("wait", wait), slog.String("error", rerr.Error()))
		if err := c.sleep(ctx, wait); err != nil {
			return canceled(task, err)
		}
	}
}

// once makes one attempt. It returns a *requestError for a failed request
// and an error only when ctx ended.
func (c *caller) once(ctx context.Context, task Task, attempt func(ctx context.Context, opts ...option.RequestOption) error) (*requestError, error) {
	sem := c.budget(ctx)
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return nil, canceled(task, ctx.Err())
	}
	defer func() { <-sem }()

	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	var rec capture
	start := c.clock.Now()
	err := attempt(actx, option.WithMiddleware(rec.middleware))
	c.acct.observe(task, c.clock.Now().Sub(start))
	if err == nil {
		return nil, nil
	}
	if ctx.Err() != nil {
		return nil, canceled(task, ctx.Err())
	}
	rerr := &requestError{Status: rec.status, Err: err}
	switch {
	case rec.status >= 400:
		rerr.Message = serverMessage(rec.body, err)
		rerr.RetryAfter = retryAfter(rec.header, c.clock.Now())
	case errors.Is(err, context.DeadlineExceeded):
		rerr.Status = 0
		rerr.Message = fmt.Sprintf("no answer within %s", c.cfg.Timeout)
	case rec.status != 0:
		// The server answered 2xx with something the SDK could not read:
		// a proxy's page or a cut connection. Worth another try.
		rerr.Status = 0
		rerr.Message = fmt.Sprintf("unreadable response (HTTP %d): %v", rec.status, err)
	default:
		rerr.Message = err.Error()
	}
	return rerr, nil
}

// budget returns the semaphore a request made with ctx takes a slot of.
func (c *caller) budget(ctx context.Context) chan struct{} {
	if memento.IsBackground(ctx) {
		return c.jobSem
	}
	return c.sem
}

// appError turns a failed request into the application error callers see.
// EUNAVAILABLE says the service cannot be used now, which waiting or
// configuration fixes: no answer (refused, reset, timed out), rate
// limits, server failures (5xx) after the retries, a refused key, a
// missing model. EUPSTREAM says the server answered and refused this very
// request (another 4xx, such as a prompt over the context length): the
// model's fault as far as the caller can tell, and never EINTERNAL, which
// would make it look like Memento's own.
func (c *caller) appError(task Task, e *requestError) error {
	var app *memento.Error
	switch {
	case e.Status == 0:
		app = memento.WrapError(memento.EUNAVAILABLE, e, "The language model server at %s cannot be reached.", hostOf(c.cfg.BaseURL))
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		app = memento.WrapError(memento.EUNAVAILABLE, e, "The language model server refused the API key; check MEMENTO_LLM_API_KEY.")
	case e.Status == http.StatusNotFound:
		app = memento.WrapError(memento.EUNAVAILABLE, e, "The language model server has no such model or endpoint; check MEMENTO_LLM_BASE_URL and the model names.")
	case e.Status == http.StatusTooManyRequests:
		app = memento.WrapError(memento.EUNAVAILABLE, e, "The language model server is rate limiting requests.")
	case e.retryable():
		app = memento.WrapError(memento.EUNAVAILABLE, e, "The language model server failed.")
	default:
		app = memento.WrapError(memento.EUPSTREAM, e, "The language model server rejected a request.")
	}
	return fmt.Errorf("openai %s: %w", task, app)
}

func canceled(task Task, err error) error {
	return fmt.Errorf("openai %s: %w", task, memento.WrapError(memento.EUNAVAILABLE, err, "The language model request was canceled."))
}

// serverMessage digs the human-readable message out of an error body in
// the formats servers use: OpenAI's {"error": {"message"}}, {"error":
// "..."} (Ollama, llama.cpp), {"detail": ...} or {"message": ...} (vLLM,
// proxies), or plain text.
func serverMessage(body []byte, err error) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Detail  json.RawMessage `json:"detail"`
		Message string          `json:"message"`
	}
	msg := ""
	if json.Unmarshal(body, &v) == nil {
		var nested struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &nested) == nil && nested.Message != "":
			msg = nested.Message
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			msg = s
		case len(v.Detail) > 0:
			if json.Unmarshal(v.Detail, &s) == nil {
				msg = s
			} else {
				msg = string(v.Detail)
			}
		case v.Message != "":
			msg = v.Message
		}
	}
	if msg == "" {
		msg = strings.TrimSpace(string(body))
	}
	if msg == "" && err != nil {
		msg = err.Error()
	}
	if len(msg) > 500 {
		msg = msg[:500] + "…"
	}
	return msg
}

// retryAfter reads how long the server asks to wait: Retry-After-Ms
// (OpenAI), or Retry-After in seconds or as an HTTP date. Zero means it did
// not say.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

func hostOf(base string) string {
	if u, err := url.Parse(base); err == nil && u.Host != "" {
		return u.Host
	}
	return base
}
