package experiment

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// WriteText prints a simulation's figures per arm and session.
func (r *SimResult) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Simulation: %d users per arm, %d sessions, seed %d, change rate %.2f (%.1f s)\n", r.Users, r.Sessions, r.Seed, r.ChangeRate, r.TookSeconds)
	fmt.Fprintf(&b, "Taste changes: %d liked→disliked, %d disliked→liked, %d platform, %d genres added\n",
		r.Changes.LikedToDisliked, r.Changes.DislikedToLiked, r.Changes.Platform, r.Changes.Added)
	for _, a := range r.Arms {
		fmt.Fprintf(&b, "\n%s (%s)\n  %-8s %8s %8s %10s %8s %8s\n", a.Name, a.Mode, "session", "stale", "beliefs", "ctx tokens", "hit@10", "ndcg@10")
		for _, s := range a.Sessions {
			fmt.Fprintf(&b, "  %-8d %8.3f %8.2f %10.1f %8.3f %8.3f\n", s.Session, s.StaleShare, s.Beliefs, s.ContextTokens, s.HitRate, s.NDCG)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Simulation plot files.
const (
	PlotSimStale  = "sim-stale.png"
	PlotSimTokens = "sim-tokens.png"
	PlotSimHit    = "sim-hitrate.png"
	PlotSimNDCG   = "sim-ndcg.png"
)

// PlotSimulation draws each measure against the sessions, one line per
// arm, into dir.
func PlotSimulation(r *SimResult, dir string) ([]string, error) {
	charts := []struct {
		file, title, y string
		v              func(SimSession) float64
	}{
		{PlotSimStale, "Stale beliefs: share contradicting the current taste", "share", func(s SimSession) float64 { return s.StaleShare }},
		{PlotSimTokens, "Context tokens per turn", "tokens", func(s SimSession) float64 { return s.ContextTokens }},
		{PlotSimHit, "Recommendation hit rate@10 against the current taste", "hit rate", func(s SimSession) float64 { return s.HitRate }},
		{PlotSimNDCG, "NDCG@10 against the current taste", "NDCG@10", func(s SimSession) float64 { return s.NDCG }},
	}
	var files []string
	for _, c := range charts {
		p := plot.New()
		p.Title.Text = c.title
		p.X.Label.Text = "session"
		p.Y.Label.Text = c.y
		p.Y.Min = 0
		for i, a := range r.Arms {
			pts := make(plotter.XYs, len(a.Sessions))
			for j, s := range a.Sessions {
				pts[j] = plotter.XY{X: float64(s.Session), Y: c.v(s)}
			}
			line, err := plotter.NewLine(pts)
			if err != nil {
				return nil, fmt.Errorf("plot %s: %w", c.file, err)
			}
			line.Color = armColors[i%len(armColors)]
			line.Width = vg.Points(2)
			p.Add(line)
			p.Legend.Add(a.Name, line)
		}
		// Bottom right: the measures start at zero or stay near the top.
		p.Legend.Top = false
		p.Legend.YOffs = vg.Points(12)
		path := filepath.Join(dir, c.file)
		if err := ensureDir(dir); err != nil {
			return nil, err
		}
		if err := p.Save(16*vg.Centimeter, 9*vg.Centimeter, path); err != nil {
			return nil, fmt.Errorf("plot %s: %w", path, err)
		}
		files = append(files, path)
	}
	return files, nil
}
