package http

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memento-ai/memento"
)

// Backpressure. Every message appended queues jobs that form its memories;
// when they trail the log by more than Server.MaxLag, new messages are
// refused with 503 and Retry-After instead of letting the backlog (and
// the time until what a user says is remembered) grow without bound.
// Nothing already accepted is affected: the refusal comes before the
// append, so a client that retries loses nothing. Turns (POST /v1/chat)
// are still answered: a conversation goes on while memory catches up.
//
// The lag is read at most once every lagCacheTTL, however many requests
// ask, and shows in /metrics and /healthz.

// lagCacheTTL is how long a reading of the queue's lag is reused.
const lagCacheTTL = time.Second

// lagCache holds the latest reading of the queue's lag.
type lagCache struct {
	src memento.LagReporter
	mu  sync.Mutex
	at  time.Time
	val *memento.QueueLags
	err error
}

// read returns a reading at most lagCacheTTL old.
func (c *lagCache) read(ctx context.Context) (*memento.QueueLags, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at.IsZero() && time.Since(c.at) < lagCacheTTL {
		return c.val, c.err
	}
	c.val, c.err = c.src.QueueLag(ctx)
	c.at = time.Now()
	return c.val, c.err
}

// ingestPath reports whether a request appends messages (or imports a
// user's memories), the writes that queue background work.
func ingestPath(r *http.Request) bool {
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/v1/users/") {
		return false
	}
	p := r.URL.Path
	return strings.HasSuffix(p, "/messages") && strings.Contains(p, "/threads/") || strings.HasSuffix(p, "/import")
}

// backpressure refuses appends while the queue's oldest unfinished job is
// older than MaxLag.
func (s *Server) backpressure(next http.Handler) http.Handler {
	if s.lag == nil || s.MaxLag <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !ingestPath(r) {
			next.ServeHTTP(w, r)
			return
		}
		lag, err := s.lag.read(r.Context())
		if err != nil {
			// An unreadable lag refuses nothing: the append's own write
			// reports a store that is down.
			s.Logger.WarnContext(r.Context(), "read the queue's lag", "err", err)
			next.ServeHTTP(w, r)
			return
		}
		behind := time.Duration(lag.OldestSeconds * float64(time.Second))
		if behind <= s.MaxLag {
			next.ServeHTTP(w, r)
			return
		}
		// Ask the client back after a share of the excess, at least a
		// second and at most a minute: a backlog drains at its own pace.
		wait := min(max(time.Second, (behind-s.MaxLag)/4), time.Minute)
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		s.Logger.WarnContext(r.Context(), "append refused: memory formation lags",
			"oldest", behind.Round(time.Millisecond).String(), "bound", s.MaxLag.String(), "waiting", lag.Waiting)
		writeError(w, r, s.Logger, memento.Errorf(memento.EUNAVAILABLE,
			"memory formation is %s behind (bound %s, %d jobs waiting): retry after %d s",
			behind.Round(time.Second), s.MaxLag, lag.Waiting, int(math.Ceil(wait.Seconds()))))
	})
}

// lagCollector serves the queue's lag as metrics. The kinds it is given,
// and any kind that has had jobs waiting, stay in them, at 0 while none
// waits, so that a drained queue reads as 0 rather than as no data.
type lagCollector struct {
	cache   *lagCache
	waiting *prometheus.Desc
	oldest  *prometheus.Desc
	running *prometheus.Desc

	mu   sync.Mutex
	seen map[string]bool // the kinds reported so far
}

func newLagCollector(c *lagCache, kinds []string) *lagCollector {
	seen := make(map[string]bool, len(kinds))
	for _, k := range kinds {
		seen[k] = true
	}
	return &lagCollector{
		cache: c,
		seen:  seen,
		waiting: prometheus.NewDesc("memento_queue_waiting_jobs",
			"Background jobs not ended (pending, retrying or running), by kind.", []string{"kind"}, nil),
		running: prometheus.NewDesc("memento_queue_running_jobs",
			"Background jobs running now, by kind.", []string{"kind"}, nil),
		oldest: prometheus.NewDesc("memento_queue_oldest_waiting_seconds",
			"Age of the oldest job not ended, by kind: how far memory formation trails the message log.", []string{"kind"}, nil),
	}
}

func (c *lagCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.waiting
	ch <- c.running
	ch <- c.oldest
}

func (c *lagCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	lag, err := c.cache.read(ctx)
	if err != nil {
		return
	}
	kinds := make([]memento.QueueLag, 0, len(lag.Kinds))
	c.mu.Lock()
	now := make(map[string]bool, len(lag.Kinds))
	for _, k := range lag.Kinds {
		now[k.Kind], c.seen[k.Kind] = true, true
		kinds = append(kinds, k)
	}
	for kind := range c.seen {
		if !now[kind] {
			kinds = append(kinds, memento.QueueLag{Kind: kind})
		}
	}
	c.mu.Unlock()
	for _, k := range kinds {
		ch <- prometheus.MustNewConstMetric(c.waiting, prometheus.GaugeValue, float64(k.Waiting), k.Kind)
		ch <- prometheus.MustNewConstMetric(c.running, prometheus.GaugeValue, float64(k.Running), k.Kind)
		ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, k.OldestSeconds, k.Kind)
	}
}

// lagCheck is /healthz's word on the queue: "ok", or how far it lags past
// the bound. A lagging queue does not fail the check: restarting the
// server would not drain it faster, and an orchestrator acting on a
// failed check would restart it.
func (s *Server) lagCheck(ctx context.Context) (string, bool) {
	if s.lag == nil {
		return "", false
	}
	lag, err := s.lag.read(ctx)
	if err != nil {
		return "", false
	}
	if s.MaxLag > 0 && lag.OldestSeconds > s.MaxLag.Seconds() {
		return fmt.Sprintf("lagging: the oldest of %d waiting jobs is %.0f s old (bound %s); appends are refused with 503 until it drains",
			lag.Waiting, lag.OldestSeconds, s.MaxLag), true
	}
	return "ok", true
}
