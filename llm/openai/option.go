package openai

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memento-ai/memento"
)

// Option adjusts a Model or an Embedder beyond its Config: where metrics
// go, and the dependencies tests replace (HTTP client, sleep, jitter, clock).
type Option func(*options)

type options struct {
	registerer prometheus.Registerer
	httpClient *http.Client
	sleep      func(ctx context.Context, d time.Duration) error
	jitter     func(ceiling time.Duration) time.Duration
	clock      memento.Clock
	logger     *slog.Logger
	embedBatch int
	genres     []string
}

func buildOptions(opts []Option) options {
	o := options{
		httpClient: &http.Client{},
		sleep:      sleepContext,
		jitter:     fullJitter,
		clock:      memento.SystemClock{},
		logger:     slog.New(slog.DiscardHandler),
		embedBatch: DefaultEmbedBatch,
	}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithRegisterer registers the provider's Prometheus metrics with reg.
// Without it no metric is registered; Usage counts either way.
func WithRegisterer(reg prometheus.Registerer) Option {
	return func(o *options) { o.registerer = reg }
}

// WithHTTPClient sends requests through c, for a proxy or custom TLS. Its
// Timeout should be zero: Config.Timeout bounds each request.
func WithHTTPClient(c *http.Client) Option {
	return func(o *options) {
		if c != nil {
			o.httpClient = c
		}
	}
}

// WithSleep replaces how the provider waits between retries. Tests pass a
// function that records the wait and returns at once.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(o *options) {
		if sleep != nil {
			o.sleep = sleep
		}
	}
}

// WithJitter replaces the random part of the backoff: given the ceiling of
// an attempt's backoff, it returns the wait, which full jitter draws
// uniformly from [0, ceiling].
func WithJitter(jitter func(ceiling time.Duration) time.Duration) Option {
	return func(o *options) {
		if jitter != nil {
			o.jitter = jitter
		}
	}
}

// WithClock sets the clock an HTTP-date Retry-After is measured against.
func WithClock(c memento.Clock) Option {
	return func(o *options) {
		if c != nil {
			o.clock = c
		}
	}
}

// WithLogger logs retries, fallbacks and repairs to l.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}

// WithEmbedBatch sets how many texts one embeddings request carries; the
// default is DefaultEmbedBatch.
func WithEmbedBatch(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.embedBatch = n
		}
	}
}

// WithGenres gives the catalog's genre vocabulary to UnderstandRequest: the
// prompt lists it, strict output can only choose from it (up to 200
// genres), and any other genre the model names is dropped.
func WithGenres(genres []string) Option {
	return func(o *options) { o.genres = genres }
}

// sleepContext waits for d or until ctx is done.
func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fullJitter draws the wait uniformly from [0, ceiling], which spreads
// clients that failed together better than any fixed schedule.
func fullJitter(ceiling time.Duration) time.Duration {
	if ceiling <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(ceiling) + 1))
}
