package openai

import (
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TaskUsage counts one task's work. Calls are task invocations (a repair is
// part of its call, not a call of its own); Errors are calls that returned
// an error; Repairs are repair requests sent after unusable output; Retries
// are requests sent again after a transient failure. Token counts add up
// every request the server answered, repairs included.
type TaskUsage struct {
	Calls            int64 `json:"calls"`
	Errors           int64 `json:"errors"`
	Repairs          int64 `json:"repairs"`
	Retries          int64 `json:"retries"`
	PromptTokens     int64 `json:"promptTokens"`
	CompletionTokens int64 `json:"completionTokens"`
}

// accounting keeps the counters behind Usage and, when a registerer was
// given, mirrors them as Prometheus metrics.
type accounting struct {
	mu    sync.Mutex
	tasks map[Task]*TaskUsage

	calls, errors, repairs, retries *prometheus.CounterVec
	tokens                          *prometheus.CounterVec
	latency                         *prometheus.HistogramVec
}

func newAccounting(reg prometheus.Registerer) (*accounting, error) {
	a := &accounting{
		tasks: map[Task]*TaskUsage{},
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "memento", Subsystem: "openai", Name: "calls_total",
			Help: "Language-model task calls sent to the OpenAI-compatible server, by task.",
		}, []string{"task"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "memento", Subsystem: "openai", Name: "errors_total",
			Help: "Language-model task calls that failed, by task.",
		}, []string{"task"}),
		repairs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "memento", Subsystem: "openai", Name: "repairs_total",
			Help: "Repair requests sent after unusable model output, by task.",
		}, []string{"task"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "memento", Subsystem: "openai", Name: "retries_total",
			Help: "Requests retried after a rate limit, server error or network failure, by task.",
		}, []string{"task"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "memento", Subsystem: "openai", Name: "tokens_total",
			Help: "Tokens the server reported, by task and kind (prompt or completion).",
		}, []string{"task", "kind"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "memento", Subsystem: "openai", Name: "request_duration_seconds",
			Help:    "Duration of single HTTP requests to the server, by task.",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 12),
		}, []string{"task"}),
	}
	if reg == nil {
		return a, nil
	}
	// A second model or an embedder on the same registry shares the
	// collectors registered first instead of failing.
	var err error
	a.calls, err = register(reg, a.calls)
	if err == nil {
		a.errors, err = register(reg, a.errors)
	}
	if err == nil {
		a.repairs, err = register(reg, a.repairs)
	}
	if err == nil {
		a.retries, err = register(reg, a.retries)
	}
	if err == nil {
		a.tokens, err = register(reg, a.tokens)
	}
	if err == nil {
		a.latency, err = register(reg, a.latency)
	}
	if err != nil {
		return nil, fmt.Errorf("register openai metrics: %w", err)
	}
	return a, nil
}

func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}

// task returns the counters of t; a.mu is held.
func (a *accounting) task(t Task) *TaskUsage {
	u := a.tasks[t]
	if u == nil {
		u = &TaskUsage{}
		a.tasks[t] = u
	}
	return u
}

func (a *accounting) call(t Task) {
	a.mu.Lock()
	a.task(t).Calls++
	a.mu.Unlock()
	a.calls.WithLabelValues(string(t)).Inc()
}

func (a *accounting) failed(t Task) {
	a.mu.Lock()
	a.task(t).Errors++
	a.mu.Unlock()
	a.errors.WithLabelValues(string(t)).Inc()
}

func (a *accounting) repair(t Task) {
	a.mu.Lock()
	a.task(t).Repairs++
	a.mu.Unlock()
	a.repairs.WithLabelValues(string(t)).Inc()
}

func (a *accounting) retry(t Task) {
	a.mu.Lock()
	a.task(t).Retries++
	a.mu.Unlock()
	a.retries.WithLabelValues(string(t)).Inc()
}

func (a *accounting) tokensUsed(t Task, prompt, completion int64) {
	a.mu.Lock()
	u := a.task(t)
	u.PromptTokens += prompt
	u.CompletionTokens += completion
	a.mu.Unlock()
	a.tokens.WithLabelValues(string(t), "prompt").Add(float64(max(prompt, 0)))
	a.tokens.WithLabelValues(string(t), "completion").Add(float64(max(completion, 0)))
}

func (a *accounting) observe(t Task, d time.Duration) {
	a.latency.WithLabelValues(string(t)).Observe(d.Seconds())
}

// snapshot copies the counters.
func (a *accounting) snapshot() map[Task]TaskUsage {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[Task]TaskUsage, len(a.tasks))
	for t, u := range maps.All(a.tasks) {
		out[t] = *u
	}
	return out
}
