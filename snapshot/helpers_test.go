package snapshot_test

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/memento-ai/memento/internal/logtest"
)

// value reads a counter or gauge.
func value(m prometheus.Metric) float64 {
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		return -1
	}
	if out.Counter != nil {
		return out.Counter.GetValue()
	}
	return out.Gauge.GetValue()
}

func newLogger(w *logtest.Buffer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }
