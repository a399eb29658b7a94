package stats

import (
	"math"
	"testing"

	"github.com/memento-ai/memento"
)

// Reference data sets. Each test below cites where its expected values
// were published; every value is checked to the digits printed there (at
// least three significant digits).

// sleep is R's datasets::sleep (Cushny and Peebles 1905, as used by
// Student 1908): extra hours of sleep with drug 1 and with drug 2.
var (
	sleep1 = []float64{0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0}
	sleep2 = []float64{1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4}
)

// mtcarsMPG is mpg of R's datasets::mtcars (Henderson and Velleman 1981).
var mtcarsMPG = []float64{21.0, 21.0, 22.8, 21.4, 18.7, 18.1, 14.3, 24.4, 22.8, 19.2, 17.8, 16.4, 17.3, 15.2, 10.4, 10.4,
	14.7, 32.4, 30.4, 33.9, 21.5, 15.5, 15.2, 13.3, 19.2, 27.3, 26.0, 30.4, 15.8, 19.7, 15.0, 21.4}

// insectSprays is R's datasets::InsectSprays (Beall 1942): insect counts
// for sprays A to F.
var insectSprays = [][]float64{
	{10, 7, 20, 14, 14, 12, 10, 23, 17, 20, 14, 13},
	{11, 17, 21, 11, 16, 14, 17, 17, 19, 21, 7, 13},
	{0, 1, 7, 2, 3, 1, 2, 1, 3, 0, 1, 4},
	{3, 5, 12, 6, 4, 3, 5, 5, 5, 5, 2, 4},
	{3, 5, 3, 5, 3, 6, 1, 1, 3, 2, 6, 4},
	{11, 9, 15, 22, 15, 16, 13, 10, 26, 26, 24, 13},
}

// near reports whether got equals want to the given relative tolerance
// (an absolute one for values near zero).
func near(got, want, tol float64) bool {
	if want == 0 {
		return math.Abs(got) <= tol
	}
	return math.Abs(got-want) <= tol*math.Abs(want)
}

func check(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if !near(got, want, tol) {
		t.Errorf("%s = %.7g, want %.7g (±%g relative)", name, got, want, tol)
	}
}

func TestDescribe(t *testing.T) {
	// R: summary(mtcars$mpg) prints Min 10.40, 1st Qu. 15.43, Median
	// 19.20, Mean 20.09, 3rd Qu. 22.80, Max 33.90; sd(mtcars$mpg) is
	// 6.026948.
	s, err := Describe(mtcarsMPG)
	if err != nil {
		t.Fatal(err)
	}
	if s.N != 32 {
		t.Errorf("n = %d, want 32", s.N)
	}
	check(t, "mean", s.Mean, 20.090625, 1e-9)
	check(t, "sd", s.SD, 6.026948, 1e-6)
	check(t, "median", s.Median, 19.2, 1e-9)
	check(t, "q1", s.Q1, 15.425, 1e-9)
	check(t, "q3", s.Q3, 22.8, 1e-9)
	check(t, "min", s.Min, 10.4, 0)
	check(t, "max", s.Max, 33.9, 0)
	// t.test(mtcars$mpg)$conf.int: 17.91768 22.26357.
	check(t, "ci low", s.CILow, 17.91768, 1e-6)
	check(t, "ci high", s.CIHigh, 22.26357, 1e-6)

	if _, err := Describe(nil); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("Describe(nil) err = %v, want EINVALID", err)
	}
}

func TestMeanVarianceNIST(t *testing.T) {
	// NIST StRD univariate summary statistics, data set NumAcc3 (lower
	// difficulty, 1001 values: 1000000.2, then 1000000.1 and 1000000.3
	// alternating): certified mean 1000000.2, certified standard deviation
	// 0.1. Naive one-pass formulas lose every digit here.
	x := []float64{1000000.2}
	for i := 0; i < 500; i++ {
		x = append(x, 1000000.1, 1000000.3)
	}
	check(t, "mean", Mean(x), 1000000.2, 1e-13)
	check(t, "sd", math.Sqrt(Variance(x)), 0.1, 1e-8)
}

func TestStudentAndWelch(t *testing.T) {
	// R documentation of t.test, example t.test(extra ~ group, data =
	// sleep): Welch t = -1.8608, df = 17.776, p-value = 0.07939; with
	// var.equal = TRUE: t = -1.8608, df = 18, p-value = 0.07919.
	st, err := StudentT(sleep1, sleep2)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "student t", st.Statistic, -1.8608, 1e-4)
	check(t, "student df", st.DF, 18, 0)
	check(t, "student p", st.P, 0.07919, 1e-3)
	w, err := WelchT(sleep1, sleep2)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "welch t", w.Statistic, -1.8608, 1e-4)
	check(t, "welch df", w.DF, 17.776, 1e-4)
	check(t, "welch p", w.P, 0.07939, 1e-3)

	if _, err := StudentT([]float64{1}, sleep2); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("one value: err = %v, want EINVALID", err)
	}
	if _, err := WelchT([]float64{2, 2}, []float64{3, 3}); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("no variance: err = %v, want EINVALID", err)
	}
}

func TestMannWhitneyU(t *testing.T) {
	// R documentation of wilcox.test (data from Hollander and Wolfe 1973,
	// p. 69): permeability constants x and y, wilcox.test(x, y,
	// alternative = "g") gives W = 35, p-value = 0.1272 (exact); the
	// two-sided exact p-value is twice that.
	x := []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46}
	y := []float64{1.15, 0.88, 0.90, 0.74, 1.21}
	r, err := MannWhitneyU(x, y)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "W", r.Statistic, 35, 0)
	check(t, "exact p", r.P, 2*0.1272, 1e-3)
	if r.Method != "exact" {
		t.Errorf("method = %q, want exact", r.Method)
	}
	// With ties, R (wilcox.test(extra ~ group, data = sleep)) falls back to
	// the normal approximation with continuity correction: W = 25.5,
	// p-value = 0.06933.
	r, err = MannWhitneyU(sleep1, sleep2)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "W (ties)", r.Statistic, 25.5, 0)
	check(t, "p (ties)", r.P, 0.06933, 1e-3)
	// W of y against x is n1 n2 - W, with the same two-sided p-value.
	r2, _ := MannWhitneyU(y, x)
	check(t, "W reversed", r2.Statistic, 50-35, 0)
	check(t, "p reversed", r2.P, 2*0.1272, 1e-3)
}

func TestKruskalWallis(t *testing.T) {
	// R documentation of kruskal.test (Hollander and Wolfe 1973, p. 116,
	// mucociliary efficiency): Kruskal-Wallis chi-squared = 0.77143, df =
	// 2, p-value = 0.68.
	r, err := KruskalWallis(
		[]float64{2.9, 3.0, 2.5, 2.6, 3.2},
		[]float64{3.8, 2.7, 4.0, 2.4},
		[]float64{2.8, 3.4, 3.7, 2.2, 2.0})
	if err != nil {
		t.Fatal(err)
	}
	check(t, "H", r.Statistic, 0.77143, 1e-5)
	check(t, "df", r.DF, 2, 0)
	check(t, "p", r.P, 0.68, 1e-2)
	// With ties: kruskal.test(count ~ spray, data = InsectSprays) gives
	// chi-squared = 54.691, df = 5, p-value = 1.511e-10.
	r, err = KruskalWallis(insectSprays...)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "H (ties)", r.Statistic, 54.691, 1e-5)
	check(t, "df (ties)", r.DF, 5, 0)
	check(t, "p (ties)", r.P, 1.511e-10, 1e-3)

	if _, err := KruskalWallis([]float64{1, 2}); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("one group: err = %v, want EINVALID", err)
	}
}

func TestChiSquared(t *testing.T) {
	// R documentation of chisq.test (Agresti 2007, p. 39): party
	// identification by gender, X-squared = 30.07, df = 2, p-value =
	// 2.954e-07.
	r, err := ChiSquared([][]float64{{762, 327, 468}, {484, 239, 477}})
	if err != nil {
		t.Fatal(err)
	}
	check(t, "X2", r.Statistic, 30.07, 1e-3)
	check(t, "df", r.DF, 2, 0)
	check(t, "p", r.P, 2.954e-07, 1e-3)

	// A 2×2 table gets Yates's correction: for [[10, 20], [20, 10]] every
	// expected count is 15 and |O - E| = 5, so X² = 4 × 4.5²/15 = 5.4
	// (without the correction it would be 4 × 25/15 = 6.667).
	r, err = ChiSquared([][]float64{{10, 20}, {20, 10}})
	if err != nil {
		t.Fatal(err)
	}
	check(t, "X2 yates", r.Statistic, 5.4, 1e-12)
	// A column nobody chose is dropped rather than dividing by zero.
	r, err = ChiSquared([][]float64{{762, 327, 0, 468}, {484, 239, 0, 477}})
	if err != nil {
		t.Fatal(err)
	}
	check(t, "X2 empty column", r.Statistic, 30.07, 1e-3)
	if _, err := ChiSquared([][]float64{{1, 2}}); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("one row: err = %v, want EINVALID", err)
	}
}

func TestBartlett(t *testing.T) {
	// R documentation of bartlett.test: bartlett.test(count ~ spray, data
	// = InsectSprays) gives Bartlett's K-squared = 25.96, df = 5, p-value
	// = 9.085e-05.
	r, err := Bartlett(insectSprays...)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "K2", r.Statistic, 25.96, 1e-3)
	check(t, "df", r.DF, 5, 0)
	check(t, "p", r.P, 9.085e-05, 1e-3)
}

func TestShapiroWilk(t *testing.T) {
	for _, c := range []struct {
		name string
		x    []float64
		w, p float64
	}{
		// Shapiro and Wilk (1965, Biometrika 52, p. 605): weights of 11
		// men; W = 0.79 in the paper, and R's shapiro.test gives W =
		// 0.78881, p-value = 0.006704 (the n <= 11 branch).
		{"weights n=11", []float64{148, 154, 158, 160, 161, 162, 166, 170, 182, 195, 236}, 0.78881, 0.006704},
		// R: shapiro.test(sleep$extra[sleep$group == 1]) W = 0.92581,
		// p-value = 0.4079; group 2: W = 0.9193, p-value = 0.3511.
		{"sleep 1", sleep1, 0.92581, 0.4079},
		{"sleep 2", sleep2, 0.9193, 0.3511},
		// R: shapiro.test(mtcars$mpg) W = 0.94756, p-value = 0.1229 (the
		// n >= 12 branch).
		{"mtcars mpg", mtcarsMPG, 0.94756, 0.1229},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := ShapiroWilk(c.x)
			if err != nil {
				t.Fatal(err)
			}
			check(t, "W", r.Statistic, c.w, 5e-5)
			check(t, "p", r.P, c.p, 1e-3)
		})
	}
	// n = 3 has an exact distribution: P(W <= w) = 6/π (asin √w - asin
	// √(3/4)); the equally spaced sample {1, 2, 3} has W = 1, p = 1.
	r, err := ShapiroWilk([]float64{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	check(t, "W n=3", r.Statistic, 1, 1e-12)
	check(t, "p n=3", r.P, 1, 1e-12)
	for _, bad := range [][]float64{{1, 2}, {4, 4, 4, 4}} {
		if _, err := ShapiroWilk(bad); memento.ErrorCode(err) != memento.EINVALID {
			t.Errorf("ShapiroWilk(%v) err = %v, want EINVALID", bad, err)
		}
	}
}

func TestCohensD(t *testing.T) {
	// Borenstein, Hedges, Higgins and Rothstein (2009), Introduction to
	// Meta-Analysis, section 4.2 worked example: means 103 and 100, SDs 5.5
	// and 4.5, 50 per group: S_within = 5.0249, d = 0.5970, V_d = 0.0418,
	// SE_d = 0.2044; J = 0.9923, g = 0.5924.
	sw := math.Sqrt((49*5.5*5.5 + 49*4.5*4.5) / 98)
	check(t, "S_within", sw, 5.0249, 1e-4)
	e := EffectFromSummary(3, sw, 50, 50, 0.95)
	check(t, "d", e.D, 0.5970, 1e-4)
	check(t, "V_d", e.SE*e.SE, 0.0418, 1e-3)
	check(t, "SE_d", e.SE, 0.2044, 1e-3)
	check(t, "g", e.G, 0.5924, 1e-3)
	check(t, "low", e.Low, 0.5970-1.959964*0.2044, 1e-3)
	check(t, "high", e.High, 0.5970+1.959964*0.2044, 1e-3)
	if e.Size != "medium" {
		t.Errorf("size = %q, want medium", e.Size)
	}

	// From raw data d equals t·√(1/n1 + 1/n2): for sleep, -1.8608·√0.2.
	e, err := CohensD(sleep1, sleep2, 0)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "d sleep", e.D, -1.8608*math.Sqrt(0.2), 1e-4)
	if e.Low >= e.D || e.High <= e.D {
		t.Errorf("interval [%g, %g] does not hold d = %g", e.Low, e.High, e.D)
	}
}

func TestPower(t *testing.T) {
	// R documentation of power.t.test: power.t.test(n = 20, delta = 1)
	// gives power = 0.8689528; power.t.test(power = .90, delta = 1) gives
	// n = 22.02110.
	check(t, "power n=20", TPower(1, 20, 0.05), 0.8689528, 1e-6)
	p, err := SampleSize(1, 0.90, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "n", p.N, 22.02110, 1e-5)
	if p.PerGroup != 23 || p.Total != 46 {
		t.Errorf("per group %d, total %d; want 23 and 46", p.PerGroup, p.Total)
	}
	// Cohen (1988), Statistical Power Analysis, Table 2.4.1: d = 0.5 at
	// α = .05 two-sided and power .80 needs 64 per group
	// (power.t.test(power = .8, delta = .5): n = 63.76576).
	p, err = SampleSize(0.5, 0.80, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "n d=0.5", p.N, 63.76576, 1e-5)
	if p.PerGroup != 64 {
		t.Errorf("per group = %d, want 64", p.PerGroup)
	}
	if _, err := SampleSize(0, 0.8, 0.05); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("d = 0: err = %v, want EINVALID", err)
	}
	if _, err := SampleSize(0.5, 1.2, 0.05); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("power 1.2: err = %v, want EINVALID", err)
	}
}
