package stats

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/memento-ai/memento"
)

// Shapiro-Wilk sample sizes Royston's approximation covers.
const (
	swMinN = 3
	swMaxN = 5000
)

// poly evaluates c[0] + c[1] x + c[2] x² + ...
func poly(c []float64, x float64) float64 {
	var v float64
	for i := len(c) - 1; i >= 0; i-- {
		v = v*x + c[i]
	}
	return v
}

// Royston's (1992, 1995) polynomial approximations: the two largest
// coefficients in 1/√n, and the normalising transformation of W in n (4 to
// 11) or log n (12 and more).
var (
	swAn      = []float64{0, 0.221157, -0.147981, -2.071190, 4.434685, -2.706056}
	swAn1     = []float64{0, 0.042981, -0.293762, -1.752461, 5.682633, -3.582633}
	swGamma   = []float64{-2.273, 0.459}
	swMuSmall = []float64{0.5440, -0.39978, 0.025054, -6.714e-4}
	swSdSmall = []float64{1.3822, -0.77857, 0.062767, -0.0020322}
	swMuLarge = []float64{-1.5861, -0.31082, -0.083751, 0.0038915}
	swSdLarge = []float64{-0.4803, -0.082676, 0.0030302}
)

// ShapiroWilk is the Shapiro-Wilk test of normality with Royston's
// algorithm (Royston 1992, "Approximating the Shapiro-Wilk W-test for
// non-normality", Statistics and Computing 2:117-119; Royston 1995,
// Algorithm AS R94, Applied Statistics 44:547-551), the one R's
// shapiro.test uses: the coefficients come from normal scores with
// polynomial corrections for the two largest, and W is mapped to a normal
// deviate whose upper tail is the p-value. For n = 3 the p-value is exact.
// It takes 3 to 5000 values, not all equal.
func ShapiroWilk(x []float64) (TestResult, error) {
	n := len(x)
	if n < swMinN || n > swMaxN {
		return TestResult{}, memento.Errorf(memento.EINVALID, "the Shapiro-Wilk test takes %d to %d values, got %d", swMinN, swMaxN, n)
	}
	if err := finite("the Shapiro-Wilk test", x); err != nil {
		return TestResult{}, err
	}
	s := slices.Clone(x)
	slices.Sort(s)
	if s[n-1]-s[0] < 1e-19*math.Max(1, math.Abs(s[0])) {
		return TestResult{}, memento.Errorf(memento.EINVALID, "the Shapiro-Wilk test: every value is the same")
	}
	a := swCoefficients(n)
	mean := Mean(s)
	var num, ss float64
	for i, v := range s {
		num += a[i] * v
		d := v - mean
		ss += d * d
	}
	w := num * num / ss
	if w > 1 {
		w = 1
	}
	res := TestResult{Test: "shapiro-wilk", Statistic: w, Method: "Royston (1995) AS R94"}
	fn := float64(n)
	switch {
	case n == 3:
		// The exact distribution: W is uniform in angle between 3/4 and 1.
		res.P = math.Max(0, 6/math.Pi*(math.Asin(math.Sqrt(w))-math.Asin(math.Sqrt(0.75))))
		res.Method = "exact (n = 3)"
	case n <= 11:
		g := poly(swGamma, fn)
		m, sd := poly(swMuSmall, fn), math.Exp(poly(swSdSmall, fn))
		y := 1 - w
		if y <= 0 || g-math.Log(y) <= 0 {
			res.P = 1
			break
		}
		z := (-math.Log(g-math.Log(y)) - m) / sd
		res.P = distuv.UnitNormal.Survival(z)
	default:
		ln := math.Log(fn)
		m, sd := poly(swMuLarge, ln), math.Exp(poly(swSdLarge, ln))
		if w >= 1 {
			res.P = 1
			break
		}
		z := (math.Log(1-w) - m) / sd
		res.P = distuv.UnitNormal.Survival(z)
	}
	return res, nil
}

// swCoefficients are the n coefficients a_i of W for sorted data, from
// Blom-type normal scores m_i = Φ⁻¹((i - 3/8)/(n + 1/4)).
func swCoefficients(n int) []float64 {
	a := make([]float64, n)
	if n == 3 {
		a[0], a[2] = -math.Sqrt(0.5), math.Sqrt(0.5)
		return a
	}
	fn := float64(n)
	m := make([]float64, n)
	var mm float64
	for i := range m {
		m[i] = distuv.UnitNormal.Quantile((float64(i+1) - 0.375) / (fn + 0.25))
		mm += m[i] * m[i]
	}
	u := 1 / math.Sqrt(fn)
	an := m[n-1]/math.Sqrt(mm) + poly(swAn, u)
	var phi float64
	if n > 5 {
		an1 := m[n-2]/math.Sqrt(mm) + poly(swAn1, u)
		phi = (mm - 2*m[n-1]*m[n-1] - 2*m[n-2]*m[n-2]) / (1 - 2*an*an - 2*an1*an1)
		a[n-2], a[1] = an1, -an1
	} else {
		phi = (mm - 2*m[n-1]*m[n-1]) / (1 - 2*an*an)
	}
	a[n-1], a[0] = an, -an
	lo, hi := 1, n-1
	if n > 5 {
		lo, hi = 2, n-2
	}
	for i := lo; i < hi; i++ {
		a[i] = m[i] / math.Sqrt(phi)
	}
	return a
}
