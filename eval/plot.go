package eval

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The size of every chart, chosen to read well in a Markdown page.
const (
	plotWidth  = 16 * vg.Centimeter
	plotHeight = 10 * vg.Centimeter
)

// barColor is the fill of bar charts and histograms: one calm colour, so
// that charts of different evaluations look alike.
var barColor = color.RGBA{R: 0x3b, G: 0x6e, B: 0xa8, A: 0xff}

// XY is one point of a line chart.
type XY struct{ X, Y float64 }

// BarChart draws one bar per label with its value written above it and
// saves the chart to path; the format follows the extension (.png, .svg,
// .pdf). Missing folders are created. It suits a handful of scores side by
// side, such as rejection compliance and criteria capture.
func BarChart(path, title string, labels []string, values []float64) error {
	if len(labels) != len(values) {
		return fmt.Errorf("bar chart %s: %d labels for %d values", path, len(labels), len(values))
	}
	if len(values) == 0 {
		return fmt.Errorf("bar chart %s: no values", path)
	}
	p := newPlot(title, "", "")
	bars, err := plotter.NewBarChart(plotter.Values(values), vg.Points(40))
	if err != nil {
		return fmt.Errorf("bar chart %s: %w", path, err)
	}
	bars.Color = barColor
	bars.LineStyle.Width = 0
	p.Add(bars)
	p.NominalX(labels...)
	top := 0.0
	for _, v := range values {
		top = math.Max(top, v)
	}
	// Value labels sit just above each bar; the y range leaves room for
	// them.
	xys := make(plotter.XYs, len(values))
	texts := make([]string, len(values))
	for i, v := range values {
		xys[i] = plotter.XY{X: float64(i), Y: v}
		texts[i] = formatValue(v)
	}
	labelsPlot, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: texts})
	if err != nil {
		return fmt.Errorf("bar chart %s: %w", path, err)
	}
	for i := range labelsPlot.TextStyle {
		labelsPlot.TextStyle[i].XAlign = draw.XCenter
	}
	labelsPlot.Offset = vg.Point{Y: vg.Points(3)}
	p.Add(labelsPlot)
	p.X.Min, p.X.Max = -0.6, float64(len(values))-0.4
	p.Y.Min = 0
	if top > 0 {
		p.Y.Max = top * 1.15
	} else {
		p.Y.Max = 1
	}
	return save(p, path)
}

// LineChart draws one line with points per named series, in name order
// with a legend, and saves the chart to path. It suits a measure over a
// parameter, such as recall@k for k = 1..20 of a system and its baselines.
func LineChart(path, title, xlabel, ylabel string, series map[string][]XY) error {
	if len(series) == 0 {
		return fmt.Errorf("line chart %s: no series", path)
	}
	p := newPlot(title, xlabel, ylabel)
	names := make([]string, 0, len(series))
	for name := range series {
		names = append(names, name)
	}
	slices.Sort(names)
	var args []any
	for _, name := range names {
		pts := series[name]
		if len(pts) == 0 {
			continue
		}
		xys := make(plotter.XYs, len(pts))
		for i, pt := range pts {
			xys[i] = plotter.XY{X: pt.X, Y: pt.Y}
		}
		args = append(args, name, xys)
	}
	if len(args) == 0 {
		return fmt.Errorf("line chart %s: every series is empty", path)
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return fmt.Errorf("line chart %s: %w", path, err)
	}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Y.Min = math.Min(0, p.Y.Min)
	return save(p, path)
}

// Histogram draws the distribution of values in bins bars (10 when bins
// is not positive) and saves it to path. It suits latencies: xlabel names
// the unit ("ms").
func Histogram(path, title, xlabel string, values []float64, bins int) error {
	if len(values) == 0 {
		return fmt.Errorf("histogram %s: no values", path)
	}
	if bins <= 0 {
		bins = 10
	}
	p := newPlot(title, xlabel, "count")
	h, err := plotter.NewHist(plotter.Values(values), bins)
	if err != nil {
		return fmt.Errorf("histogram %s: %w", path, err)
	}
	h.FillColor = barColor
	h.LineStyle.Width = vg.Points(0.5)
	h.LineStyle.Color = color.White
	p.Add(h)
	p.Y.Min = 0
	p.Y.Tick.Marker = countTicks{}
	return save(p, path)
}

// countTicks labels an axis of counts with whole numbers.
type countTicks struct{}

// Ticks returns the default ticks with whole-number labels, leaving out
// the ticks between whole numbers.
func (countTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, t := range (plot.DefaultTicks{}).Ticks(lo, hi) {
		if t.Label != "" {
			if t.Value != math.Trunc(t.Value) {
				continue
			}
			t.Label = fmt.Sprintf("%.0f", t.Value)
		}
		out = append(out, t)
	}
	return out
}

// newPlot returns an empty chart with a title, axis labels and grid lines.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.Add(plotter.NewGrid())
	return p
}

// save writes p to path, creating the folder.
func save(p *plot.Plot, path string) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("save chart %s: %w", path, err)
		}
	}
	if err := p.Save(plotWidth, plotHeight, path); err != nil {
		return fmt.Errorf("save chart %s: %w", path, err)
	}
	return nil
}

// formatValue renders a bar's value briefly: shares with three decimals,
// larger numbers with as few as they need.
func formatValue(v float64) string {
	switch {
	case math.Abs(v) < 10:
		return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".")
	case math.Abs(v) < 1000:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

// GroupedBarChart draws, for each group (such as a metric), one bar per
// series (such as a system or a baseline) side by side, with a legend and
// each bar's value, and saves the chart to path.
func GroupedBarChart(path, title string, groups []string, series map[string][]float64) error {
	if len(groups) == 0 || len(series) == 0 {
		return fmt.Errorf("grouped bar chart %s: no data", path)
	}
	names := make([]string, 0, len(series))
	for name, vs := range series {
		if len(vs) != len(groups) {
			return fmt.Errorf("grouped bar chart %s: series %q has %d values for %d groups", path, name, len(vs), len(groups))
		}
		names = append(names, name)
	}
	slices.Sort(names)
	p := newPlot(title, "", "")
	width := vg.Points(28)
	top := 0.0
	for i, name := range names {
		bars, err := plotter.NewBarChart(plotter.Values(series[name]), width)
		if err != nil {
			return fmt.Errorf("grouped bar chart %s: %w", path, err)
		}
		bars.Color = plotutil.Color(i)
		bars.LineStyle.Width = 0
		bars.Offset = width * vg.Length(2*i-len(names)+1) / 2
		p.Add(bars)
		p.Legend.Add(name, bars)
		for _, v := range series[name] {
			top = math.Max(top, v)
		}
	}
	p.NominalX(groups...)
	p.Legend.Top = true
	p.X.Min, p.X.Max = -0.6, float64(len(groups))-0.4
	p.Y.Min = 0
	if top > 0 {
		p.Y.Max = top * 1.25
	} else {
		p.Y.Max = 1
	}
	return save(p, path)
}

// PlotFollowup draws the follow-up scores into dir/followup.png and
// returns the file.
func PlotFollowup(dir string, res *FollowupResult) (string, error) {
	path := filepath.Join(dir, "followup.png")
	title := fmt.Sprintf("Follow-ups on %d IARD dialogues", res.Dialogues)
	labels := []string{
		fmt.Sprintf("rejection compliance (%d turns)", res.RejectTurns),
		fmt.Sprintf("criteria capture (%d turns)", res.CriteriaTurns),
	}
	return path, BarChart(path, title, labels, []float64{res.RejectCompliance, res.CriteriaCapture})
}

// PlotMovieLens draws hit rate and NDCG of the profile ranking and of the
// baselines into dir/movielens.png and returns the file.
func PlotMovieLens(dir string, res *MovieLensResult) (string, error) {
	path := filepath.Join(dir, "movielens.png")
	groups := []string{fmt.Sprintf("hit@%d", res.K), fmt.Sprintf("NDCG@%d", res.K)}
	series := map[string][]float64{"profile ranking": {res.Hit, res.NDCG}}
	for name, m := range res.Baselines {
		series[name] = []float64{m.Hit, m.NDCG}
	}
	title := fmt.Sprintf("MovieLens: %d users, k = %d", res.Users, res.K)
	return path, GroupedBarChart(path, title, groups, series)
}
