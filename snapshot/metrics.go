package snapshot

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the snapshot metrics /metrics serves.
type Metrics struct {
	// Writes counts document and model writes by result ("ok", "error").
	Writes *prometheus.CounterVec
	// WriteSeconds is the latency of one write.
	WriteSeconds prometheus.Histogram
	// Pending is the number of users whose changes are not written yet.
	Pending prometheus.Gauge
	// LastSuccess is the Unix time of the last successful write.
	LastSuccess prometheus.Gauge
	// Restores counts first-access restores by result ("restored",
	// "absent": no snapshot, a new user; "error").
	Restores *prometheus.CounterVec
}

// NewMetrics creates the metrics and registers them with reg (nil: not
// registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Writes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "memento_snapshot_writes_total", Help: "Snapshot writes (user documents and models) by result.",
		}, []string{"result"}),
		WriteSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "memento_snapshot_write_seconds", Help: "Latency of one snapshot write.",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}),
		Pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "memento_snapshot_pending_users", Help: "Users whose changes are not in the snapshot yet.",
		}),
		LastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "memento_snapshot_last_success_timestamp_seconds", Help: "Unix time of the last successful snapshot write.",
		}),
		Restores: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "memento_snapshot_restores_total", Help: "Restores of users unknown to the local store, by result.",
		}, []string{"result"}),
	}
	m.Writes.WithLabelValues("ok")
	m.Writes.WithLabelValues("error")
	for _, r := range []string{"restored", "absent", "error"} {
		m.Restores.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(m.Writes, m.WriteSeconds, m.Pending, m.LastSuccess, m.Restores)
	}
	return m
}
