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
	// Health is pinged by /healthz, keyed by dependency name.
	Health map[string]memento.Pinger
	// Registry holds the metrics /metrics serves. Nil makes a new one.
	Registry *prometheus.Registry

	// Routes, when set, registers more operations on the API (later
	// surfaces use it to add theirs without this file knowing them).
	Routes []func(api huma.API, s *Server)

	mux      *http.ServeMux
	api      huma.API
	ln       net.Listener
	server   *http.Server
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

// Handler builds the routes and returns the server's handler, without
// listening. Tests use it with httptest.
func (s *Server) Handler() http.Handler {
	if s.mux == nil {
		s.build()
	}
	return s.instrument(s.mux)
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
	s.Registry.MustRegister(s.requests, s.latency)

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

	s.registerHealth()
	s.registerCatalog()
	for _, r := range s.Routes {
		r(s.api, s)
	}
	s.mux.Handle("GET /metrics", promhttp.HandlerFor(s.Registry, promhttp.HandlerOpts{}))
	s.mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, s.Logger, memento.Errorf(memento.ENOTFOUND, "no route for %s %s", r.Method, r.URL.Path))
	})
}

// instrument counts requests and bounds bodies.
func (s *Server) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if r.ContentLength > MaxBodyBytes {
			writeError(w, r, s.Logger, memento.Errorf(memento.ETOOLARGE, "request body is %d bytes, over the limit of %d", r.ContentLength, MaxBodyBytes))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		// The API speaks JSON only; curl's default form type is taken to
		// mean JSON rather than refused.
		if ct := r.Header.Get("Content-Type"); r.ContentLength != 0 && (ct == "" || ct == "application/x-www-form-urlencoded") {
			r.Header.Set("Content-Type", "application/json")
		}
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
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return memento.WrapError(memento.EINVALID, err, "cannot listen on %s: %v", s.Addr, err)
	}
	s.ln = ln
	s.server = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := s.server.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.Logger.Error("http server stopped", "err", err)
		}
	}()
	return nil
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

type healthOutput struct {
	Body struct {
		Status string            `json:"status" example:"ok"`
		Checks map[string]string `json:"checks"`
	}
}

func (s *Server) registerHealth() {
	huma.Register(s.api, huma.Operation{
		OperationID: "healthz", Method: http.MethodGet, Path: "/healthz",
		Summary: "Report whether the server and its dependencies are up", Tags: []string{"system"},
		Errors: []int{http.StatusServiceUnavailable},
	}, func(ctx context.Context, _ *struct{}) (*healthOutput, error) {
		out := &healthOutput{}
		out.Body.Status = "ok"
		out.Body.Checks = map[string]string{}
		var failed error
		for name, p := range s.Health {
			pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			err := p.Ping(pctx)
			cancel()
			if err != nil {
				out.Body.Checks[name] = "unavailable"
				failed = memento.WrapError(memento.EUNAVAILABLE, err, "%s is unavailable", name)
				s.Logger.WarnContext(ctx, "health check failed", "dependency", name, "err", err)
				continue
			}
			out.Body.Checks[name] = "ok"
		}
		if failed != nil {
			return nil, Error(ctx, s.Logger, failed)
		}
		return out, nil
	})
}
