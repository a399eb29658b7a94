package bench

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/memento-ai/memento/eval"
)

// Plot draws the run's latency histograms and throughput into dir as PNG
// files named bench-*.png and returns the files written.
func Plot(dir string, res *Result) ([]string, error) {
	var files []string
	scale := fmt.Sprintf("%s memories", humanCount(res.Scale.Memories))
	hists := []struct {
		file, name string
		l          *Latency
	}{
		{"bench-context-latency.png", "Context assembly", &res.ContextAssembly},
		{"bench-chat-turn-latency.png", "Chat turn (offline model)", res.ChatTurn},
		{"bench-ingest-latency.png", "Message ingest acknowledgement", &res.IngestAck},
		{"bench-catalog-latency.png", "Catalog search", &res.CatalogSearch},
	}
	for _, h := range hists {
		if h.l == nil || len(h.l.Ms) == 0 {
			continue
		}
		path := filepath.Join(dir, h.file)
		title := fmt.Sprintf("%s, %s: p50 %.2f ms, p99 %.2f ms", h.name, scale, h.l.P50Ms, h.l.P99Ms)
		// The slowest 0.5% would stretch the axis over empty bins.
		if err := eval.Histogram(path, title, "ms", clip(h.l.Ms, 99.5), 40); err != nil {
			return files, err
		}
		files = append(files, path)
	}
	labels := []string{"pipeline (direct)"}
	values := []float64{res.Pipeline.MsgsPerSec}
	if res.Queue != nil {
		labels = append(labels, "message log + queue")
		values = append(values, res.Queue.MsgsPerSec)
	}
	path := filepath.Join(dir, "bench-throughput.png")
	if err := eval.BarChart(path, fmt.Sprintf("Attribute-memory throughput, messages/s (%s)", scale), labels, values); err != nil {
		return files, err
	}
	return append(files, path), nil
}

// clip leaves out the values above the p-th percentile.
func clip(ms []float64, p float64) []float64 {
	limit := eval.Percentile(ms, p)
	out := make([]float64, 0, len(ms))
	for _, x := range ms {
		if x <= limit {
			out = append(out, x)
		}
	}
	return out
}

// humanCount writes 1100000 as "1.1M" and 12000 as "12k".
func humanCount(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%dk", n/1000)
	default:
		return fmt.Sprint(n)
	}
}

// PlotScaling draws how the latencies of several runs grow with the
// store (x: memories, in millions) into dir/bench-scaling.png and returns
// the file. Runs are taken in order of their size.
func PlotScaling(dir string, runs []*Result) (string, error) {
	if len(runs) == 0 {
		return "", fmt.Errorf("scaling chart: no runs")
	}
	sorted := slices.Clone(runs)
	slices.SortFunc(sorted, func(a, b *Result) int { return cmp.Compare(a.Scale.Memories, b.Scale.Memories) })
	series := map[string][]eval.XY{}
	add := func(name string, x, y float64) { series[name] = append(series[name], eval.XY{X: x, Y: y}) }
	for _, r := range sorted {
		x := float64(r.Scale.Memories) / 1e6
		add("context assembly p50", x, r.ContextAssembly.P50Ms)
		add("context assembly p99", x, r.ContextAssembly.P99Ms)
		if r.ChatTurn != nil {
			add("chat turn p50", x, r.ChatTurn.P50Ms)
		}
		add("ingest ack p50", x, r.IngestAck.P50Ms)
	}
	path := filepath.Join(dir, "bench-scaling.png")
	return path, eval.LineChart(path, "Latency as the store grows", "memories in the store (millions)", "ms", series)
}
