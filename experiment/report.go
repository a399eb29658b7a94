package experiment

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/memento-ai/memento/stats"
)

// WriteText prints the report for a person: every statistic, in the order
// a results section reports them.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	f := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	f("Study %s: %d enrolled, %d completed\n", r.Study, r.Enrolled, r.Completed)
	f("Instrument: %s (%d items, %d-%d, reverse-scored: %s; score = %s)\n  %s\n",
		r.Instrument.ID, len(r.Instrument.Items), r.Instrument.Scale.Min, r.Instrument.Scale.Max,
		strings.Join(r.Instrument.Reversed, ", "), r.Instrument.Score, r.Instrument.Citation)
	f("\nDescriptives (score)\n")
	for _, a := range r.Arms {
		if a.Score == nil {
			f("  %-12s n = 0\n", a.Name)
			continue
		}
		s := a.Score
		f("  %-12s n = %d  mean = %.3f  sd = %.3f  se = %.3f  95%% CI [%.3f, %.3f]  median = %.3f  IQR [%.3f, %.3f]  range [%.3f, %.3f]\n",
			a.Name, s.N, s.Mean, s.SD, s.SE, s.CILow, s.CIHigh, s.Median, s.Q1, s.Q3, s.Min, s.Max)
	}
	f("\nGroups\n")
	for _, a := range r.Arms {
		var g []string
		keys := make([]string, 0, len(a.Gender))
		for k := range a.Gender {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			g = append(g, fmt.Sprintf("%s %d", k, a.Gender[k]))
		}
		age, fam := "-", "-"
		if a.Age != nil {
			age = fmt.Sprintf("%.1f (sd %.1f)", a.Age.Mean, a.Age.SD)
		}
		if a.Familiarity != nil {
			fam = fmt.Sprintf("%.2f (sd %.2f)", a.Familiarity.Mean, a.Familiarity.SD)
		}
		f("  %-12s mode %-9s age %s  familiarity %s  gender: %s\n", a.Name, a.Mode, age, fam, strings.Join(g, ", "))
	}
	f("\nComparability of the arms\n")
	f("  gender (chi-squared homogeneity):   %s\n", testText(r.Comparability.Gender))
	f("  age (Kruskal-Wallis):               %s\n", testText(r.Comparability.Age))
	f("  familiarity (Kruskal-Wallis):       %s\n", testText(r.Comparability.Familiarity))
	f("\nAssumptions\n")
	for _, a := range r.Arms {
		f("  normality of %-12s (Shapiro-Wilk): %s\n", a.Name, testText(r.Assumptions.Normality[a.Name]))
	}
	f("  equal variances (Bartlett):         %s\n", testText(r.Assumptions.Variances))
	for _, c := range r.Comparisons {
		f("\n%s vs %s (difference of means %.3f)\n", c.A, c.B, c.MeanDiff)
		f("  Student's t:     %s\n", testText(c.Student))
		f("  Welch's t:       %s\n", testText(c.Welch))
		f("  Mann-Whitney U:  %s\n", testText(c.MannWhitney))
		verdict := "not significant"
		if c.Significant {
			verdict = "significant"
		}
		f("  chosen: %s (%s at α = %.2g): %s\n", c.Chosen, verdict, r.Alpha, c.Reason)
		if e := c.Effect; e != nil {
			f("  Cohen's d = %.3f (%s), Hedges's g = %.3f, %.0f%% CI [%.3f, %.3f]\n", e.D, e.Size, e.G, e.Level*100, e.Low, e.High)
		}
		if p := c.Power; p != nil {
			f("  power analysis: %d participants per arm (%d in all; n = %.2f) to detect |d| = %.3f with %.0f%% power at α = %.2g\n",
				p.PerGroup, p.Total, p.N, p.Effect, p.Target*100, p.Alpha)
		}
	}
	if len(r.Arms) > 0 {
		f("\nItem means (scored)\n  %-6s", "item")
		for _, a := range r.Arms {
			f(" %12s", a.Name)
		}
		f("\n")
		for i, id := range r.Instrument.Items {
			mark := ""
			for _, rv := range r.Instrument.Reversed {
				if rv == id {
					mark = " (R)"
				}
			}
			f("  %-6s", id)
			for _, a := range r.Arms {
				f(" %12.3f", a.ItemMeans[i])
			}
			f("%s\n", mark)
		}
	}
	if len(r.Notes) > 0 {
		f("\nNot computed\n")
		for _, n := range r.Notes {
			f("  %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func testText(t *stats.TestResult) string {
	if t == nil {
		return "not computed"
	}
	s := fmt.Sprintf("%s = %.4f", statName(t.Test), t.Statistic)
	if t.DF != 0 {
		s += fmt.Sprintf(", df = %.4g", t.DF)
	}
	s += fmt.Sprintf(", p = %.4g", t.P)
	if t.Method != "" {
		s += " (" + t.Method + ")"
	}
	return s
}

func statName(test string) string {
	switch test {
	case "student-t", "welch-t":
		return "t"
	case "mann-whitney-u":
		return "U"
	case "shapiro-wilk":
		return "W"
	case "bartlett":
		return "K²"
	case "kruskal-wallis":
		return "H"
	case "chi-squared":
		return "χ²"
	}
	return test
}
