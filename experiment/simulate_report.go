package experiment

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// WriteText prints a simulation's figures per arm and session, the
// quality by kind of request, the paired comparisons and what the context
// documents held.
func (r *SimResult) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Simulation: %d users per arm, %d sessions %.0f days apart, seed %d, change rate %.2f (%.1f s)\n",
		r.Users, r.Sessions, r.SessionGapDays, r.Seed, r.ChangeRate, r.TookSeconds)
	c := r.Changes
	fmt.Fprintf(&b, "Taste changes: %d liked→disliked, %d disliked→liked, %d platform, %d genres added, %d people added, %d people dropped\n",
		c.LikedToDisliked, c.DislikedToLiked, c.Platform, c.Added, c.PersonAdded, c.PersonDropped)
	fmt.Fprintf(&b, "Requests: %s\n", kindCounts(r.Requests))
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "Note: %s\n", n)
	}
	for _, a := range r.Arms {
		fmt.Fprintf(&b, "\n%s (%s)\n  %-7s %6s %7s %7s %7s %6s %7s %6s %6s %6s\n", a.Name, armLabel(a),
			"session", "stale", "beliefs", "stored", "context", "hit", "ndcg10", "good", "dislk", "seen")
		for _, s := range a.Sessions {
			fmt.Fprintf(&b, "  %-7d %6.3f %7.2f %7.1f %7.1f %6.3f %7.3f %6.3f %6.3f %6.3f\n", s.Session, s.StaleShare, s.Beliefs,
				s.StoredTokens, s.ContextTokens, s.HitRate, s.NDCG, s.Good, s.Disliked, s.Seen)
		}
		fmt.Fprintf(&b, "  by request (all sessions):")
		for _, k := range sortedKeys(a.ByRequest) {
			q := a.ByRequest[k]
			fmt.Fprintf(&b, " %s ndcg %.3f good %.3f (%d lists);", k, q.NDCG, q.Good, q.Lists)
		}
		if f := a.FollowUps; f.Lists > 0 {
			fmt.Fprintf(&b, "\n  follow-ups: %d lists, hit %.3f ndcg %.3f good %.3f disliked %.3f seen %.3f", f.Lists, f.HitRate, f.NDCG, f.Good, f.Disliked, f.Seen)
		}
		fmt.Fprintf(&b, "\n  context of the last session's requests holds per request:")
		for _, k := range sortedKeys(a.Final.ContextHolds) {
			fmt.Fprintf(&b, " %s %.2f", k, a.Final.ContextHolds[k])
		}
		b.WriteString("\n")
	}
	if len(r.Paired) > 0 {
		b.WriteString("\nPaired, user by user over the first lists of all sessions (arm − reference: mean [95% CI]):\n")
		for _, p := range r.Paired {
			fmt.Fprintf(&b, "  %-18s − %-10s %-10s %+.4f [%+.4f, %+.4f]  n = %d\n", p.Arm, p.Against, p.Measure, p.Mean, p.CILow, p.CIHigh, p.N)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// armLabel describes an arm's settings briefly.
func armLabel(a SimArm) string {
	parts := []string{a.Mode}
	if a.Decay != "" {
		parts = append(parts, "decay "+a.Decay)
	}
	if a.Frozen {
		parts = append(parts, "frozen")
	}
	if a.Baseline {
		parts = append(parts, "baseline")
	}
	return strings.Join(parts, ", ")
}

func kindCounts(m map[string]int) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Simulation plot files.
const (
	PlotSimStale    = "sim-stale.png"
	PlotSimTokens   = "sim-tokens.png"
	PlotSimStored   = "sim-stored.png"
	PlotSimHit      = "sim-hitrate.png"
	PlotSimNDCG     = "sim-ndcg.png"
	PlotSimGood     = "sim-good.png"
	PlotSimDisliked = "sim-disliked.png"
	PlotSimSeen     = "sim-seen.png"
)

// PlotSimulation draws each measure against the sessions, one line per
// arm, into dir.
func PlotSimulation(r *SimResult, dir string) ([]string, error) {
	charts := []struct {
		file, title, y string
		v              func(SimSession) float64
	}{
		{PlotSimStale, "Stale beliefs: share contradicting the current taste", "share", func(s SimSession) float64 { return s.StaleShare }},
		{PlotSimTokens, "Context document per request (tokens)", "tokens", func(s SimSession) float64 { return s.ContextTokens }},
		{PlotSimStored, "Memory held per user (tokens of current memories)", "tokens", func(s SimSession) float64 { return s.StoredTokens }},
		{PlotSimHit, "Hit rate@10: a title the user would rate highly now", "hit rate", func(s SimSession) float64 { return s.HitRate }},
		{PlotSimNDCG, "NDCG@10, graded by the user's current ratings", "NDCG@10", func(s SimSession) float64 { return s.NDCG }},
		{PlotSimGood, "Good@10: share of the ten rated highly now", "share", func(s SimSession) float64 { return s.Good }},
		{PlotSimDisliked, "Disliked@10: share of the ten the user dislikes now", "share", func(s SimSession) float64 { return s.Disliked }},
		{PlotSimSeen, "Seen@10: share of the ten already seen", "share", func(s SimSession) float64 { return s.Seen }},
	}
	if err := ensureDir(dir); err != nil {
		return nil, err
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
			if a.Baseline {
				// Baselines are dashed: they are there to be beaten.
				line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			}
			p.Add(line)
			p.Legend.Add(a.Name, line)
		}
		p.Legend.Top = false
		p.Legend.YOffs = vg.Points(12)
		path := filepath.Join(dir, c.file)
		if err := p.Save(16*vg.Centimeter, 9*vg.Centimeter, path); err != nil {
			return nil, fmt.Errorf("plot %s: %w", path, err)
		}
		files = append(files, path)
	}
	return files, nil
}
