package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/memento-ai/memento"
)

// TestResult is a test statistic with its degrees of freedom (0 for a
// test that has none) and its p-value. For two-sample tests the p-value is
// two-sided.
type TestResult struct {
	Test      string  `json:"test"`
	Statistic float64 `json:"statistic"`
	DF        float64 `json:"df,omitempty"`
	P         float64 `json:"p"`
	// Method says how the p-value was computed where there is a choice
	// (exact or normal approximation, corrections applied).
	Method string `json:"method,omitempty"`
}

// studentP is the two-sided p-value of t on df degrees of freedom.
func studentP(t, df float64) float64 {
	d := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	return 2 * d.Survival(math.Abs(t))
}

func twoSamples(name string, x, y []float64) error {
	if len(x) < 2 || len(y) < 2 {
		return memento.Errorf(memento.EINVALID, "%s needs at least two values in each group, got %d and %d", name, len(x), len(y))
	}
	return finite(name, x, y)
}

// StudentT is Student's two-sample t-test with pooled variance, the test
// of mean(x) - mean(y) when both groups share one variance.
func StudentT(x, y []float64) (TestResult, error) {
	if err := twoSamples("Student's t-test", x, y); err != nil {
		return TestResult{}, err
	}
	n1, n2 := float64(len(x)), float64(len(y))
	df := n1 + n2 - 2
	sp2 := ((n1-1)*Variance(x) + (n2-1)*Variance(y)) / df
	se := math.Sqrt(sp2 * (1/n1 + 1/n2))
	if se == 0 {
		return TestResult{}, memento.Errorf(memento.EINVALID, "Student's t-test: both groups have no variance")
	}
	t := (Mean(x) - Mean(y)) / se
	return TestResult{Test: "student-t", Statistic: t, DF: df, P: studentP(t, df)}, nil
}

// WelchT is Welch's two-sample t-test, which does not assume equal
// variances; its degrees of freedom are Welch-Satterthwaite's.
func WelchT(x, y []float64) (TestResult, error) {
	if err := twoSamples("Welch's t-test", x, y); err != nil {
		return TestResult{}, err
	}
	n1, n2 := float64(len(x)), float64(len(y))
	a, b := Variance(x)/n1, Variance(y)/n2
	if a+b == 0 {
		return TestResult{}, memento.Errorf(memento.EINVALID, "Welch's t-test: both groups have no variance")
	}
	t := (Mean(x) - Mean(y)) / math.Sqrt(a+b)
	df := (a + b) * (a + b) / (a*a/(n1-1) + b*b/(n2-1))
	return TestResult{Test: "welch-t", Statistic: t, DF: df, P: studentP(t, df)}, nil
}

// exactMWMax bounds the group sizes for which MannWhitneyU counts the
// exact null distribution, as R's wilcox.test does (below 50 each).
const exactMWMax = 50

// MannWhitneyU is the Wilcoxon rank-sum (Mann-Whitney) test. The
// statistic is W = U of x: the rank sum of x minus n1(n1+1)/2, the count
// of pairs with x above y (ties half). Without ties and with both groups
// under 50 the p-value is exact; otherwise it is the normal approximation
// with the tie correction of the variance and a continuity correction.
func MannWhitneyU(x, y []float64) (TestResult, error) {
	if len(x) < 1 || len(y) < 1 {
		return TestResult{}, memento.Errorf(memento.EINVALID, "the Mann-Whitney U test needs at least one value in each group, got %d and %d", len(x), len(y))
	}
	if err := finite("the Mann-Whitney U test", x, y); err != nil {
		return TestResult{}, err
	}
	all := append(append([]float64{}, x...), y...)
	r, ties := ranks(all)
	n1, n2 := len(x), len(y)
	var rx float64
	for i := range n1 {
		rx += r[i]
	}
	w := rx - float64(n1*(n1+1))/2
	if ties == 0 && n1 < exactMWMax && n2 < exactMWMax {
		return TestResult{Test: "mann-whitney-u", Statistic: w, P: exactMWP(int(math.Round(w)), n1, n2), Method: "exact"}, nil
	}
	fn1, fn2 := float64(n1), float64(n2)
	n := fn1 + fn2
	z := w - fn1*fn2/2
	sigma := math.Sqrt(fn1 * fn2 / 12 * ((n + 1) - ties/(n*(n-1))))
	if sigma == 0 {
		return TestResult{Test: "mann-whitney-u", Statistic: w, P: 1, Method: "every value tied"}, nil
	}
	cc := 0.5
	if z < 0 {
		cc = -0.5
	} else if z == 0 {
		cc = 0
	}
	z = (z - cc) / sigma
	p := 2 * distuv.UnitNormal.Survival(math.Abs(z))
	return TestResult{Test: "mann-whitney-u", Statistic: w, P: math.Min(1, p), Method: "normal approximation with tie and continuity corrections"}, nil
}

// exactMWP is the exact two-sided p-value of U = u for group sizes m and
// n without ties: twice the smaller tail of the null distribution, whose
// counts follow the recurrence f(u; m, n) = f(u-n; m-1, n) + f(u; m, n-1).
func exactMWP(u, m, n int) float64 {
	// counts[j][k] is the number of arrangements of j x-values among
	// j+n' values giving U = k, built up one y-value at a time.
	max := m * n
	// dp over (i x-values, j y-values): c[i][k] for the current j.
	prev := make([][]float64, m+1)
	for i := range prev {
		prev[i] = make([]float64, max+1)
	}
	// j = 0: only U = 0, one arrangement for every i.
	for i := 0; i <= m; i++ {
		prev[i][0] = 1
	}
	for j := 1; j <= n; j++ {
		cur := make([][]float64, m+1)
		for i := range cur {
			cur[i] = make([]float64, max+1)
		}
		cur[0][0] = 1
		for i := 1; i <= m; i++ {
			for k := 0; k <= i*j; k++ {
				// The largest value is an x (it beats all j y's) or a y.
				v := prev[i][k]
				if k >= j {
					v += cur[i-1][k-j]
				}
				cur[i][k] = v
			}
		}
		prev = cur
	}
	dist := prev[m]
	var total, lower, upper float64
	for k, c := range dist {
		total += c
		if k <= u {
			lower += c
		}
		if k >= u {
			upper += c
		}
	}
	return math.Min(1, 2*math.Min(lower, upper)/total)
}

// KruskalWallis is the Kruskal-Wallis rank-sum test that the groups come
// from one distribution, with the correction for ties; the statistic is
// referred to chi-squared on k-1 degrees of freedom.
func KruskalWallis(groups ...[]float64) (TestResult, error) {
	k := 0
	var all []float64
	for _, g := range groups {
		if len(g) > 0 {
			k++
		}
		all = append(all, g...)
	}
	if k < 2 {
		return TestResult{}, memento.Errorf(memento.EINVALID, "the Kruskal-Wallis test needs at least two non-empty groups, got %d", k)
	}
	if err := finite("the Kruskal-Wallis test", groups...); err != nil {
		return TestResult{}, err
	}
	r, ties := ranks(all)
	n := float64(len(all))
	var h float64
	off := 0
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		var s float64
		for i := range g {
			s += r[off+i]
		}
		off += len(g)
		h += s * s / float64(len(g))
	}
	h = 12/(n*(n+1))*h - 3*(n+1)
	if c := 1 - ties/(n*n*n-n); c > 0 {
		h /= c
	} else {
		return TestResult{Test: "kruskal-wallis", Statistic: 0, DF: float64(k - 1), P: 1, Method: "every value tied"}, nil
	}
	df := float64(k - 1)
	return TestResult{Test: "kruskal-wallis", Statistic: h, DF: df, P: distuv.ChiSquared{K: df}.Survival(h), Method: "chi-squared approximation, tie-corrected"}, nil
}

// ChiSquared is Pearson's chi-squared test of homogeneity (or
// independence) on a contingency table of counts: rows are groups,
// columns categories. Rows and columns that are all zero are dropped. A
// 2×2 table gets Yates's continuity correction, as R's chisq.test and
// SciPy's chi2_contingency do by default. Method notes expected counts
// below 5, where the approximation is poor.
func ChiSquared(table [][]float64) (TestResult, error) {
	var rows [][]float64
	cols := -1
	for _, r := range table {
		if cols >= 0 && len(r) != cols {
			return TestResult{}, memento.Errorf(memento.EINVALID, "chi-squared test: the table's rows have different lengths")
		}
		cols = len(r)
		var s float64
		for _, v := range r {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return TestResult{}, memento.Errorf(memento.EINVALID, "chi-squared test: counts must be finite and not negative")
			}
			s += v
		}
		if s > 0 {
			rows = append(rows, r)
		}
	}
	var keep []int
	for j := 0; j < cols; j++ {
		var s float64
		for _, r := range rows {
			s += r[j]
		}
		if s > 0 {
			keep = append(keep, j)
		}
	}
	if len(rows) < 2 || len(keep) < 2 {
		return TestResult{}, memento.Errorf(memento.EINVALID, "chi-squared test: the table needs at least two non-empty rows and two non-empty columns, got %d and %d", len(rows), len(keep))
	}
	rowSum := make([]float64, len(rows))
	colSum := make([]float64, len(keep))
	var total float64
	for i, r := range rows {
		for jj, j := range keep {
			rowSum[i] += r[j]
			colSum[jj] += r[j]
			total += r[j]
		}
	}
	df := float64((len(rows) - 1) * (len(keep) - 1))
	yates := df == 1
	var x2 float64
	small := 0
	for i, r := range rows {
		for jj, j := range keep {
			e := rowSum[i] * colSum[jj] / total
			if e < 5 {
				small++
			}
			d := math.Abs(r[j] - e)
			if yates {
				d = math.Max(0, d-0.5)
			}
			x2 += d * d / e
		}
	}
	method := "Pearson"
	if yates {
		method += ", Yates's continuity correction"
	}
	if small > 0 {
		method += ", expected counts below 5 in some cells: the approximation may be poor"
	}
	return TestResult{Test: "chi-squared", Statistic: x2, DF: df, P: distuv.ChiSquared{K: df}.Survival(x2), Method: method}, nil
}

// Bartlett is Bartlett's test that the groups share one variance; the
// statistic is referred to chi-squared on k-1 degrees of freedom. It is
// sensitive to non-normality, so read it with Shapiro-Wilk.
func Bartlett(groups ...[]float64) (TestResult, error) {
	if len(groups) < 2 {
		return TestResult{}, memento.Errorf(memento.EINVALID, "Bartlett's test needs at least two groups, got %d", len(groups))
	}
	if err := finite("Bartlett's test", groups...); err != nil {
		return TestResult{}, err
	}
	k := float64(len(groups))
	var nTot, pooled, sumLog, sumInv float64
	for i, g := range groups {
		if len(g) < 2 {
			return TestResult{}, memento.Errorf(memento.EINVALID, "Bartlett's test needs at least two values in each group; group %d has %d", i+1, len(g))
		}
		v := Variance(g)
		if v == 0 {
			return TestResult{}, memento.Errorf(memento.EINVALID, "Bartlett's test: group %d has no variance", i+1)
		}
		df := float64(len(g) - 1)
		nTot += df
		pooled += df * v
		sumLog += df * math.Log(v)
		sumInv += 1 / df
	}
	pooled /= nTot
	stat := (nTot*math.Log(pooled) - sumLog) / (1 + (sumInv-1/nTot)/(3*(k-1)))
	return TestResult{Test: "bartlett", Statistic: stat, DF: k - 1, P: distuv.ChiSquared{K: k - 1}.Survival(stat)}, nil
}
