package eval

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// checkPNG fails unless path holds a decodable PNG image of a sensible size.
func checkPNG(tb testing.TB, path string) {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("read chart: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		tb.Fatalf("%s is not a PNG: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() < 200 || b.Dy() < 100 {
		tb.Fatalf("%s is %dx%d pixels; want a readable chart", path, b.Dx(), b.Dy())
	}
}

func TestCharts(t *testing.T) {
	dir := t.TempDir()
	t.Run("bar", func(t *testing.T) {
		path := filepath.Join(dir, "nested", "bar.png")
		if err := BarChart(path, "Follow-ups", []string{"rejection compliance", "criteria capture"}, []float64{0.95, 0.8}); err != nil {
			t.Fatal(err)
		}
		checkPNG(t, path)
	})
	t.Run("line", func(t *testing.T) {
		path := filepath.Join(dir, "line.png")
		series := map[string][]XY{
			"memento": {{1, 0.3}, {2, 0.5}, {3, 0.7}},
			"bm25":    {{1, 0.2}, {2, 0.3}, {3, 0.4}},
		}
		if err := LineChart(path, "recall@k", "k", "recall", series); err != nil {
			t.Fatal(err)
		}
		checkPNG(t, path)
	})
	t.Run("histogram", func(t *testing.T) {
		path := filepath.Join(dir, "hist.png")
		if err := Histogram(path, "latency", "ms", []float64{1, 1.5, 2, 2, 2.5, 9}, 0); err != nil {
			t.Fatal(err)
		}
		checkPNG(t, path)
	})
}

func TestChartErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		draw func() error
	}{
		{"bar without values", func() error { return BarChart(filepath.Join(dir, "a.png"), "t", nil, nil) }},
		{"bar labels and values differ", func() error { return BarChart(filepath.Join(dir, "b.png"), "t", []string{"a"}, []float64{1, 2}) }},
		{"line without series", func() error { return LineChart(filepath.Join(dir, "c.png"), "t", "x", "y", nil) }},
		{"line with empty series", func() error {
			return LineChart(filepath.Join(dir, "d.png"), "t", "x", "y", map[string][]XY{"a": nil})
		}},
		{"histogram without values", func() error { return Histogram(filepath.Join(dir, "e.png"), "t", "ms", nil, 5) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.draw(); err == nil {
				t.Fatal("want an error")
			}
		})
	}
}

func TestFormatValue(t *testing.T) {
	tests := []struct {
		v    float64
		want string
	}{
		{0, "0"}, {0.75, "0.75"}, {1, "1"}, {0.1234, "0.123"}, {42.25, "42.2"}, {1234.5, "1234"},
	}
	for _, tt := range tests {
		if got := formatValue(tt.v); got != tt.want {
			t.Errorf("formatValue(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestGroupedAndEvaluationCharts(t *testing.T) {
	dir := t.TempDir()
	if err := GroupedBarChart(filepath.Join(dir, "g.png"), "t", []string{"hit", "ndcg"}, map[string][]float64{"a": {0.5, 0.3}, "b": {0.4, 0.2}}); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, filepath.Join(dir, "g.png"))
	if err := GroupedBarChart(filepath.Join(dir, "bad.png"), "t", []string{"hit"}, map[string][]float64{"a": {0.5, 0.3}}); err == nil {
		t.Error("a series longer than the groups should fail")
	}
	f, err := PlotFollowup(dir, &FollowupResult{Dialogues: 20, RejectTurns: 10, RejectCompliance: 0.9, CriteriaTurns: 8, CriteriaCapture: 0.75})
	if err != nil {
		t.Fatal(err)
	}
	checkPNG(t, f)
	f, err = PlotMovieLens(dir, &MovieLensResult{Users: 300, K: 10, Hit: 0.4, NDCG: 0.2, Baselines: map[string]Metrics{"popularity": {Hit: 0.3, NDCG: 0.15}}})
	if err != nil {
		t.Fatal(err)
	}
	checkPNG(t, f)
}
