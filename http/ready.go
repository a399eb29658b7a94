package http

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/memento-ai/memento"
)

// Health and readiness.
//
// /healthz says whether the server is up: 200 while it answers and its
// dependencies (the store) do, 503 naming a dependency that does not.
// /readyz says whether it is ready for traffic: it also answers 503 while
// start-up work is still running (Warm), such as the title vectors every
// chat turn's ranking needs. A server listens before that work ends, so
// that health checks and the web page answer at once, but a request it
// serves meanwhile shares the processors with the work: in one round of
// `memento torture load --url` with 64 clients begun 0.8 s before the
// embedded catalog's vectors were ready, appends took up to 161 ms in the
// load's first second against 39 ms at most afterwards
// (docs/BENCHMARKS.md). A load balancer, an
// orchestrator's readiness probe or a script that sends a burst polls
// /readyz; a liveness probe polls /healthz, which stays 200 while the work
// runs, so that a slow start is not taken for a dead server.

// healthOutput is the body of /healthz and of a ready /readyz.
type healthOutput struct {
	Body struct {
		Status string            `json:"status" example:"ok" doc:"ok, warming (start-up work still running; /readyz answers 503) or lagging (memory formation past --max-queue-lag); ready on /readyz"`
		Checks map[string]string `json:"checks" doc:"Each dependency's and each start-up task's state: ok, unavailable, warming, or the queue's lag"`
	}
}

// warmups is the start-up work still running.
type warmups struct {
	mu      sync.Mutex
	running map[int]warmup // by the number Warm gave it
	next    int
	// started is when the first task of the running ones began, for the
	// log line saying the server is ready.
	started time.Time
}

// warmup is one task of start-up work: its name and when it began.
type warmup struct {
	name  string
	since time.Time
}

// Warm records that the server is still doing the start-up work name:
// until done is called, /healthz reports name as "warming" and /readyz
// answers 503. Register the work before Open, so that no request finds the
// server ready before it began. done may be called more than once and
// from any goroutine; a failed warm-up calls it too, since the server
// serves without it (slowly) rather than not at all.
func (s *Server) Warm(name string) (done func()) {
	w := &s.warm
	w.mu.Lock()
	if w.running == nil {
		w.running = map[int]warmup{}
	}
	if len(w.running) == 0 {
		w.started = time.Now()
	}
	id := w.next
	w.next++
	w.running[id] = warmup{name: name, since: time.Now()}
	w.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			w.mu.Lock()
			delete(w.running, id)
			last := len(w.running) == 0
			took := time.Since(w.started)
			w.mu.Unlock()
			if last && s.Logger != nil {
				s.Logger.Info("memento ready", "warmed", name, "took", took.Round(time.Millisecond))
			}
		})
	}
}

// warming returns the names of the start-up work still running, sorted,
// each with how long its longest-running task has run.
func (w *warmups) warming() (names []string, ages []time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	since := map[string]time.Time{}
	for _, t := range w.running {
		if at, ok := since[t.name]; !ok || t.since.Before(at) {
			since[t.name] = t.since
		}
	}
	for name := range since {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		ages = append(ages, time.Since(since[name]))
	}
	return names, ages
}

// check pings every dependency and lists the start-up work still running:
// the checks /healthz and /readyz report, and the error of the first
// dependency down.
func (s *Server) check(ctx context.Context) (checks map[string]string, warming []string, ages []time.Duration, failed error) {
	checks = map[string]string{}
	for name, p := range s.Health {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := p.Ping(pctx)
		cancel()
		if err != nil {
			checks[name] = "unavailable"
			failed = memento.WrapError(memento.EUNAVAILABLE, err, "%s is unavailable", name)
			s.Logger.WarnContext(ctx, "health check failed", "dependency", name, "err", err)
			continue
		}
		checks[name] = "ok"
	}
	warming, ages = s.warm.warming()
	for _, name := range warming {
		checks[name] = "warming"
	}
	return checks, warming, ages, failed
}

func (s *Server) registerHealth() {
	huma.Register(s.api, huma.Operation{
		OperationID: "healthz", Method: http.MethodGet, Path: "/healthz",
		Summary: "Report whether the server and its dependencies are up", Tags: []string{"system"},
		Description: "200 while the server answers and its dependencies do, with status warming while start-up work runs (see /readyz) and lagging while memory formation is past --max-queue-lag; 503 naming a dependency that is down.",
		Errors:      []int{http.StatusServiceUnavailable},
	}, func(ctx context.Context, _ *struct{}) (*healthOutput, error) {
		out := &healthOutput{}
		checks, warming, _, failed := s.check(ctx)
		if failed != nil {
			return nil, Error(ctx, s.Logger, failed)
		}
		out.Body.Status, out.Body.Checks = "ok", checks
		if len(warming) > 0 {
			out.Body.Status = "warming"
		}
		if check, ok := s.lagCheck(ctx); ok {
			out.Body.Checks["queue"] = check
			if check != "ok" {
				out.Body.Status = "lagging"
			}
		}
		return out, nil
	})
	huma.Register(s.api, huma.Operation{
		OperationID: "readyz", Method: http.MethodGet, Path: "/readyz",
		Summary: "Report whether the server is ready for traffic", Tags: []string{"system"},
		Description: "200 with status ready once the server's start-up work has ended (the title vectors chat turns rank with) and its dependencies answer; until then 503 with Retry-After, naming what is still warming or down. A lagging queue does not make the server unready: other servers would not drain it.",
		Errors:      []int{http.StatusServiceUnavailable},
	}, func(ctx context.Context, _ *struct{}) (*healthOutput, error) {
		checks, warming, ages, failed := s.check(ctx)
		if failed == nil && len(warming) > 0 {
			parts := make([]string, len(warming))
			for i, name := range warming {
				parts[i] = name + " for " + ages[i].Round(time.Millisecond).String()
			}
			failed = memento.Errorf(memento.EUNAVAILABLE, "the server is still warming up (%s): retry after 1 s", strings.Join(parts, ", "))
		}
		if failed != nil {
			return nil, huma.ErrorWithHeaders(Error(ctx, s.Logger, failed), http.Header{"Retry-After": {"1"}})
		}
		out := &healthOutput{}
		out.Body.Status, out.Body.Checks = "ready", checks
		return out, nil
	})
}
