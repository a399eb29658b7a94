package engine_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memento-ai/memento/postgres"
	"github.com/memento-ai/memento/postgres/pgtest"
)

// metricValues reads the gauges' and counters' values of reg by name, and
// marks each histogram present with its count of observations.
func metricValues(t *testing.T, reg prometheus.Gatherer) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			switch {
			case m.GetGauge() != nil:
				out[f.GetName()] = m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				out[f.GetName()] = m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				out[f.GetName()] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

// TestSchedulingLatencyMetric checks that /metrics carries the Go
// runtime's scheduling latencies, the sign of saturated processors.
func TestSchedulingLatencyMetric(t *testing.T) {
	e := openEngine(t, filepath.Join(t.TempDir(), "m.db"))
	if _, ok := metricValues(t, e.Registry)["go_sched_latencies_seconds"]; !ok {
		t.Error("/metrics has no go_sched_latencies_seconds")
	}
}

// TestPostgresPoolMetrics checks the connection pool's figures: its size
// as the URL sets it, and a wait for a connection while every one is
// taken.
func TestPostgresPoolMetrics(t *testing.T) {
	ctx := context.Background()
	e := openEngine(t, pgtest.SchemaURL(t)+"&pool_max_conns=3")
	pool := e.Store.(*postgres.DB).Pool()
	got := metricValues(t, e.Registry)
	if got["memento_postgres_pool_max_conns"] != 3 {
		t.Fatalf("memento_postgres_pool_max_conns = %v, want 3 (pool_max_conns)", got["memento_postgres_pool_max_conns"])
	}
	var held []interface{ Release() }
	for range 3 {
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	const wait = 100 * time.Millisecond
	acquired := make(chan error, 1)
	go func() {
		c, err := pool.Acquire(ctx)
		if err == nil {
			c.Release()
		}
		acquired <- err
	}()
	time.Sleep(wait)
	if got := metricValues(t, e.Registry)["memento_postgres_pool_acquired_conns"]; got != 3 {
		t.Errorf("memento_postgres_pool_acquired_conns = %v with every connection taken, want 3", got)
	}
	for _, c := range held {
		c.Release()
	}
	if err := <-acquired; err != nil {
		t.Fatal(err)
	}
	after := metricValues(t, e.Registry)
	if after["memento_postgres_pool_empty_acquires_total"] < 1 || after["memento_postgres_pool_empty_acquire_wait_seconds_total"] < wait.Seconds()/2 {
		t.Errorf("after a wait of %s for a connection: %v empty acquires, %v s waited; want at least 1 and about %s",
			wait, after["memento_postgres_pool_empty_acquires_total"], after["memento_postgres_pool_empty_acquire_wait_seconds_total"], wait)
	}
}
