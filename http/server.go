package http

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/memento-ai/memento"
)

// MaxBodyBytes bounds every request body; larger ones get 413.
const MaxBodyBytes = 1 << 20

// Defaults of the server's limits (Server fields left zero take them).
// The write timeout is above two model calls at the OpenAI client's own
// 60-second timeout, so that a slow turn is answered rather than cut.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 150 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
	DefaultMaxConns          = 1024
)

// maxHeaderBytes bounds a request's headers (Go's default is 1 MiB, which
// times the connection cap is a gigabyte of headers).
const maxHeaderBytes = 64 << 10

// Server is the HTTP surface of Memento. Set its dependencies, then call
// Open; Close stops it.
type Server struct {
	// Addr is the address to listen on, such as "127.0.0.1:8080". Port 0
	// picks a free port; URL reports the one chosen.
	Addr    string
	Version string
	Logger  *slog.Logger

	// Catalog answers catalog searches.
	Catalog memento.Catalog
	// Health is pinged by /healthz and /readyz, keyed by dependency name.
	Health map[string]memento.Pinger
	// Registry holds the metrics /metrics serves. Nil makes a new one.
	Registry *prometheus.Registry

	// Routes, when set, registers more operations on the API (later
	// surfaces use it to add theirs without this file knowing them).
	Routes []func(api huma.API, s *Server)
	// Mounts are plain handlers by pattern ("/mcp"), for surfaces that are
	// not REST operations; they run behind the same guard and
	// authentication as the API.
	Mounts map[string]http.Handler

	// Lag, when set, reads how far background memory formation trails
	// the message log: served in /metrics and /healthz, and, with MaxLag
	// above zero, appends are refused with 503 and Retry-After while the
	// oldest unfinished job is older than MaxLag (backpressure.go).
	Lag    memento.LagReporter
	MaxLag time.Duration
	// LagKinds are job kinds /metrics reports the lag of from the start,
	// at 0 while none of them waits (the workers' kinds); any other kind
	// is reported once a job of it has been seen waiting.
	LagKinds []string
	// Writer, when set, reads what the store's one writer did (SQLite):
	// /metrics serves the syncs of its logs (syncmetrics.go).
	Writer memento.WriterReporter

	// Keys, when set, are the API keys requests authenticate with
	// (auth.go); admin keys manage them at /v1/keys. RequireKeys makes
	// every request need a key even while none exists; Open sets it when
	// the address is not loopback (and refuses to listen without a key).
	Keys        memento.KeyStore
	RequireKeys bool
	// KeyRate is each key's rate limit in requests a second (a token
	// bucket holding KeyBurst); zero is no limit.
	KeyRate  float64
	KeyBurst int

	// AllowedOrigins are the origins (scheme://host[:port]) of web pages
	// other than the server's own that may call it; they get CORS
	// headers. Any other Origin is refused (guard.go).
	AllowedOrigins []string
	// AllowedHosts are the names requests may carry in Host besides
	// loopback names and the listen address, against DNS rebinding: "name"
	// on any port, "name:port" on that port, "*" any Host at all.
	AllowedHosts []string

	// Timeouts of http.Server, and the cap on connections open at once
	// (beyond it, new ones wait in the kernel's backlog). Zero takes the
	// Default* value; ReadHeaderTimeout is never above ReadTimeout.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	MaxConns          int

	mux      *http.ServeMux
	lag      *lagCache
	guard    *guard
	auth     *authenticator
	api      huma.API
	ln       net.Listener
	server   *http.Server
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	// appendWrite is where appends' writes spent their time in the
	// store, by phase (memento.WriteTimes), for stores that measure it.
	appendWrite *prometheus.HistogramVec
	conns       prometheus.Gauge
	// warm is the start-up work still running (Warm; ready.go).
	warm warmups
}

// Handler builds the routes and returns the server's handler, without
// listening. Tests use it with httptest.
func (s *Server) Handler() http.Handler {
	if s.mux == nil {
		s.build()
	}
	return s.instrument(s.guard.wrap(s.auth.wrap(s.backpressure(s.mux))))
}

// API returns the huma API, for tests and for the OpenAPI document.
func (s *Server) API() huma.API {
	if s.mux == nil {
		s.build()
	}
	return s.api
}

func (s *Server) build() {
	installErrors()
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	if s.Registry == nil {
		s.Registry = prometheus.NewRegistry()
	}
	s.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "memento_http_requests_total", Help: "HTTP requests by route and status.",
	}, []string{"route", "status"})
	s.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "memento_http_request_seconds", Help: "HTTP request latency by route.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
	}, []string{"route"})
	s.conns = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "memento_http_open_connections", Help: "HTTP connections open now (at most the connection cap).",
	})
	s.appendWrite = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "memento_append_write_seconds",
		Help:    "Where an append's write spent its time in the store, by phase: waited (SQLite: for the store's one writer to take it; PostgreSQL: for a pooled connection and the user's lock), wrote (its group commit; PostgreSQL: its statements and commit), synced (SQLite: the log's sync after the commit; 0 on PostgreSQL, whose commit waits for its log).",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
	}, []string{"phase"})
	s.Registry.MustRegister(s.requests, s.latency, s.conns, s.appendWrite)
	s.guard = newGuard(s)
	if s.Lag != nil {
		s.lag = &lagCache{src: s.Lag}
		s.Registry.MustRegister(newLagCollector(s.lag, s.LagKinds))
	}
	if s.Writer != nil {
		s.Registry.MustRegister(newSyncCollector(s.Writer))
	}

	s.mux = http.NewServeMux()
	cfg := huma.DefaultConfig("Memento", s.Version)
	cfg.Info.Description = "Memory for conversational agents: thread context, summaries, attribute memory, profiles and preference vectors."
	cfg.DocsPath = ""     // the docs renderer loads scripts from a CDN; the document itself is enough
	cfg.SchemasPath = ""  // schemas are inline in /openapi.json
	cfg.CreateHooks = nil // no $schema links in response bodies: the JSON shapes are contracts
	cfg.OpenAPIPath = "/openapi"
	cfg.RejectUnknownQueryParameters = true
	// A body field a client leaves out takes its zero value: new fields
	// never break old clients. Handlers validate what they need.
	cfg.FieldsOptionalByDefault = true
	s.api = humago.New(s.mux, cfg)

	s.auth = newAuthenticator(s)
	s.Registry.MustRegister(s.auth.refused)
	s.registerHealth()
	s.registerCatalog()
	s.registerAuth()
	for _, r := range s.Routes {
		r(s.api, s)
	}
	for pattern, h := range s.Mounts {
		s.mux.Handle(pattern, h)
	}
	s.mux.Handle("GET /metrics", promhttp.HandlerFor(s.Registry, promhttp.HandlerOpts{}))
	s.mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, s.Logger, memento.Errorf(memento.ENOTFOUND, "no route for %s %s", r.Method, r.URL.Path))
	})
}

// instrument counts requests, those the guard refuses included.
func (s *Server) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		route := r.Pattern
		if route == "" {
			route = "unmatched"
		}
		s.requests.WithLabelValues(route, fmt.Sprint(rec.status)).Inc()
		s.latency.WithLabelValues(route).Observe(time.Since(start).Seconds())
	})
}

// Open starts listening and serving in the background.
func (s *Server) Open() error {
	h := s.Handler()
	if s.guard.err != nil {
		return s.guard.err
	}
	limits, err := s.limits()
	if err != nil {
		return err
	}
	if err := s.checkKeysForAddr(context.Background()); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return memento.WrapError(memento.EINVALID, err, "cannot listen on %s: %v", s.Addr, err)
	}
	// The guard learns the address actually bound (":8080" is every
	// interface, "localhost:8080" an IP) before the first request.
	if host, _, err := net.SplitHostPort(ln.Addr().String()); err == nil {
		s.guard.setListenHost(host)
	}
	lim := newLimitListener(ln, limits.MaxConns)
	lim.opened, lim.closed = s.conns.Inc, s.conns.Dec
	s.ln = lim
	s.server = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: limits.ReadHeaderTimeout,
		ReadTimeout:       limits.ReadTimeout,
		WriteTimeout:      limits.WriteTimeout,
		IdleTimeout:       limits.IdleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		// net/http reports accept and protocol errors on this log.
		ErrorLog: slog.NewLogLogger(s.Logger.Handler(), slog.LevelWarn),
	}
	go func() {
		if err := s.server.Serve(lim); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.Logger.Error("http server stopped", "err", err)
		}
	}()
	return nil
}

// serverLimits are a Server's timeouts and connection cap.
type serverLimits struct {
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	MaxConns                                                  int
}

// limits returns the server's timeouts and connection cap with defaults
// filled in, or an error naming a bad one.
func (s *Server) limits() (serverLimits, error) {
	l := serverLimits{ReadHeaderTimeout: s.ReadHeaderTimeout, ReadTimeout: s.ReadTimeout, WriteTimeout: s.WriteTimeout, IdleTimeout: s.IdleTimeout, MaxConns: s.MaxConns}
	for _, d := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"read timeout", &l.ReadTimeout, DefaultReadTimeout},
		{"read header timeout", &l.ReadHeaderTimeout, DefaultReadHeaderTimeout},
		{"write timeout", &l.WriteTimeout, DefaultWriteTimeout},
		{"idle timeout", &l.IdleTimeout, DefaultIdleTimeout},
	} {
		if *d.v < 0 {
			return l, memento.Errorf(memento.EINVALID, "the HTTP %s must not be negative, got %s", d.name, *d.v)
		}
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	// The read timeout covers the headers too; a longer header timeout
	// would let a client drip headers past it.
	l.ReadHeaderTimeout = min(l.ReadHeaderTimeout, l.ReadTimeout)
	if l.MaxConns < 0 {
		return l, memento.Errorf(memento.EINVALID, "the HTTP connection cap must not be negative, got %d", l.MaxConns)
	}
	if l.MaxConns == 0 {
		l.MaxConns = DefaultMaxConns
	}
	return l, nil
}

// URL is the base URL the server listens on.
func (s *Server) URL() string {
	if s.ln == nil {
		return ""
	}
	return "http://" + s.ln.Addr().String()
}

// Close stops accepting requests and waits for running ones, up to ctx.
func (s *Server) Close(ctx context.Context) error {
	if s.server == nil {
		return nil
	}
	return s.server.Shutdown(ctx)
}

// statusRecorder keeps the status for the metrics. It deliberately has no
// Unwrap or SetReadDeadline: huma sets a 5-second read deadline before
// reading a body, but the guard has read it already, and a deadline set
// after the body's end would fire on net/http's background read and
// cancel the request's context mid-turn. Without them huma's deadline is
// a no-op and the server's ReadTimeout bounds the body.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// Flush lets streamed responses (server-sent events) through the recorder.
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// observeWrite records the phases of an append's write, when the store
// measured them.
func (s *Server) observeWrite(t memento.WriteTimes) {
	if t == (memento.WriteTimes{}) {
		return
	}
	s.appendWrite.WithLabelValues("waited").Observe(t.Waited.Seconds())
	s.appendWrite.WithLabelValues("wrote").Observe(t.Wrote.Seconds())
	s.appendWrite.WithLabelValues("synced").Observe(t.Synced.Seconds())
}
