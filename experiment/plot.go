package experiment

import (
	"fmt"
	"image/color"
	"math/rand/v2"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// armColors tell the arms apart in every chart.
var armColors = []color.RGBA{
	{R: 0x3b, G: 0x6e, B: 0xa8, A: 0xff},
	{R: 0xd9, G: 0x7a, B: 0x2b, A: 0xff},
	{R: 0x4c, G: 0x9a, B: 0x5b, A: 0xff},
	{R: 0x9a, G: 0x4c, B: 0x8f, A: 0xff},
}

// Plot files Plot writes.
const (
	PlotScores = "scores.png"
	PlotItems  = "items.png"
)

// Plot draws the report into dir: scores.png (each arm's score
// distribution as a box plot with every participant as a jittered point)
// and items.png (each item's mean scored value per arm). It returns the
// files written.
func Plot(r *Report, dir string) ([]string, error) {
	if err := ensureDir(dir); err != nil {
		return nil, err
	}
	scores := filepath.Join(dir, PlotScores)
	if err := plotScores(r, scores); err != nil {
		return nil, fmt.Errorf("plot %s: %w", scores, err)
	}
	items := filepath.Join(dir, PlotItems)
	if err := plotItems(r, items); err != nil {
		return nil, fmt.Errorf("plot %s: %w", items, err)
	}
	return []string{scores, items}, nil
}

func plotScores(r *Report, path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: %s score per arm", r.Study, r.Instrument.ID)
	p.Y.Label.Text = "score"
	// The jitter is seeded so the same data draw the same chart.
	rnd := rand.New(rand.NewPCG(1, 2))
	var names []string
	for i, a := range r.Arms {
		names = append(names, fmt.Sprintf("%s (n = %d)", a.Name, a.N))
		var vals plotter.Values
		for _, ps := range r.Participants {
			if ps.Arm == a.Name {
				vals = append(vals, ps.Score)
			}
		}
		if len(vals) == 0 {
			continue
		}
		c := armColors[i%len(armColors)]
		box, err := plotter.NewBoxPlot(vg.Points(50), float64(i), vals)
		if err != nil {
			return err
		}
		box.FillColor = color.NRGBA{R: c.R, G: c.G, B: c.B, A: 0x40}
		p.Add(box)
		pts := make(plotter.XYs, len(vals))
		for j, v := range vals {
			pts[j] = plotter.XY{X: float64(i) + (rnd.Float64()-0.5)*0.3, Y: v}
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		sc.GlyphStyle.Color = c
		sc.GlyphStyle.Radius = vg.Points(2.5)
		sc.GlyphStyle.Shape = draw.CircleGlyph{}
		p.Add(sc)
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(r.Arms))-0.4
	p.Y.Min, p.Y.Max = float64(r.Instrument.Scale.Min), float64(r.Instrument.Scale.Max)
	return p.Save(16*vg.Centimeter, 10*vg.Centimeter, path)
}

func plotItems(r *Report, path string) error {
	p := plot.New()
	p.Title.Text = "Mean scored value per item (reverse items mirrored)"
	p.Y.Label.Text = "mean"
	w := vg.Points(float64(36 / max(1, len(r.Arms))))
	for i, a := range r.Arms {
		bars, err := plotter.NewBarChart(plotter.Values(a.ItemMeans), w)
		if err != nil {
			return err
		}
		bars.Color = armColors[i%len(armColors)]
		bars.LineStyle.Width = 0
		bars.Offset = w * vg.Length(float64(i)-float64(len(r.Arms)-1)/2)
		p.Add(bars)
		p.Legend.Add(a.Name, bars)
	}
	var labels []string
	for _, id := range r.Instrument.Items {
		l := id
		for _, rv := range r.Instrument.Reversed {
			if rv == id {
				l += " (R)"
			}
		}
		labels = append(labels, l)
	}
	p.NominalX(labels...)
	p.Legend.Top = true
	// The room above the scale keeps the legend off the bars.
	p.Y.Min, p.Y.Max = float64(r.Instrument.Scale.Min)-1, float64(r.Instrument.Scale.Max)+1
	if p.Y.Min < 0 {
		p.Y.Min = 0
	}
	return p.Save(24*vg.Centimeter, 10*vg.Centimeter, path)
}

func ensureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}
