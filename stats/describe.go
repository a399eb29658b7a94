package stats

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/memento-ai/memento"
)

// Summary describes one sample.
type Summary struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	SD     float64 `json:"sd"` // sample standard deviation (n-1)
	SE     float64 `json:"se"` // standard error of the mean
	Median float64 `json:"median"`
	Q1     float64 `json:"q1"` // quartiles by linear interpolation (R's type 7)
	Q3     float64 `json:"q3"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// CILow and CIHigh bound the mean's 95 % confidence interval (t).
	CILow  float64 `json:"ciLow"`
	CIHigh float64 `json:"ciHigh"`
}

// Describe summarises x. An empty sample is EINVALID; a sample of one has
// no standard deviation (NaN is not JSON, so SD, SE and the interval are 0).
func Describe(x []float64) (Summary, error) {
	if len(x) == 0 {
		return Summary{}, memento.Errorf(memento.EINVALID, "describe: the sample is empty")
	}
	s := slices.Clone(x)
	slices.Sort(s)
	out := Summary{N: len(s), Mean: Mean(s), Min: s[0], Max: s[len(s)-1],
		Median: Quantile(s, 0.5), Q1: Quantile(s, 0.25), Q3: Quantile(s, 0.75)}
	out.CILow, out.CIHigh = out.Mean, out.Mean
	if len(s) > 1 {
		out.SD = math.Sqrt(Variance(s))
		out.SE = out.SD / math.Sqrt(float64(len(s)))
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(s) - 1)}.Quantile(0.975)
		out.CILow, out.CIHigh = out.Mean-t*out.SE, out.Mean+t*out.SE
	}
	return out, nil
}

// Mean is the arithmetic mean of x (NaN for none).
func Mean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	// Two passes: the correction term removes most of the rounding error
	// of the first sum (the NIST StRD data sets test exactly this).
	var sum float64
	for _, v := range x {
		sum += v
	}
	m := sum / float64(len(x))
	var c float64
	for _, v := range x {
		c += v - m
	}
	return m + c/float64(len(x))
}

// Variance is the sample variance of x, with n-1 in the denominator (NaN
// for fewer than two values).
func Variance(x []float64) float64 {
	if len(x) < 2 {
		return math.NaN()
	}
	m := Mean(x)
	var ss, c float64
	for _, v := range x {
		d := v - m
		ss += d * d
		c += d
	}
	n := float64(len(x))
	return (ss - c*c/n) / (n - 1)
}

// Quantile is the p-quantile of a sorted sample by linear interpolation
// between order statistics (Hyndman and Fan's type 7, R's default).
func Quantile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	h := (float64(len(sorted)) - 1) * p
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-lo)*(sorted[i+1]-sorted[i])
}

// ranks gives the mid-ranks (1-based, ties averaged) of the values of
// all, and the tie correction sum Σ(t³ - t) over groups of t tied values.
func ranks(all []float64) (r []float64, ties float64) {
	idx := make([]int, len(all))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case all[a] < all[b]:
			return -1
		case all[a] > all[b]:
			return 1
		}
		return 0
	})
	r = make([]float64, len(all))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && all[idx[j+1]] == all[idx[i]] {
			j++
		}
		mid := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			r[idx[k]] = mid
		}
		if t := float64(j - i + 1); t > 1 {
			ties += t*t*t - t
		}
		i = j + 1
	}
	return r, ties
}

func finite(name string, xs ...[]float64) error {
	for _, x := range xs {
		for _, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return memento.Errorf(memento.EINVALID, "%s: the data hold a value that is not a finite number", name)
			}
		}
	}
	return nil
}
