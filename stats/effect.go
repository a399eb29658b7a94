package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/memento-ai/memento"
)

// Effect is a standardised mean difference with its confidence interval.
type Effect struct {
	// D is Cohen's d: (mean(x) - mean(y)) over the pooled standard
	// deviation (n-1 weighted).
	D float64 `json:"d"`
	// G is Hedges's g, d with the small-sample bias correction
	// J = 1 - 3/(4(n1+n2) - 9).
	G float64 `json:"g"`
	// SE is d's large-sample standard error (Hedges and Olkin 1985):
	// √((n1+n2)/(n1 n2) + d²/(2(n1+n2))).
	SE float64 `json:"se"`
	// Level is the confidence level of [Low, High] (0.95).
	Level float64 `json:"level"`
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
	// Size names d by Cohen's (1988) conventions: negligible below 0.2,
	// small, medium from 0.5, large from 0.8 (in absolute value).
	Size string `json:"size"`
}

// CohensD is the standardised mean difference of x and y with its
// normal-theory confidence interval at level (0.95 when 0).
func CohensD(x, y []float64, level float64) (Effect, error) {
	if err := twoSamples("Cohen's d", x, y); err != nil {
		return Effect{}, err
	}
	if level == 0 {
		level = 0.95
	}
	if level <= 0 || level >= 1 {
		return Effect{}, memento.Errorf(memento.EINVALID, "Cohen's d: the confidence level must be between 0 and 1, got %g", level)
	}
	n1, n2 := float64(len(x)), float64(len(y))
	sp := math.Sqrt(((n1-1)*Variance(x) + (n2-1)*Variance(y)) / (n1 + n2 - 2))
	if sp == 0 {
		return Effect{}, memento.Errorf(memento.EINVALID, "Cohen's d: both groups have no variance")
	}
	return EffectFromSummary(Mean(x)-Mean(y), sp, n1, n2, level), nil
}

// EffectFromSummary is Cohen's d from a mean difference, a pooled standard
// deviation and the group sizes, as a meta-analysis computes it from
// published summaries.
func EffectFromSummary(diff, pooledSD, n1, n2, level float64) Effect {
	d := diff / pooledSD
	se := math.Sqrt((n1+n2)/(n1*n2) + d*d/(2*(n1+n2)))
	z := distuv.UnitNormal.Quantile(1 - (1-level)/2)
	e := Effect{D: d, G: d * (1 - 3/(4*(n1+n2)-9)), SE: se, Level: level, Low: d - z*se, High: d + z*se}
	switch a := math.Abs(d); {
	case a < 0.2:
		e.Size = "negligible"
	case a < 0.5:
		e.Size = "small"
	case a < 0.8:
		e.Size = "medium"
	default:
		e.Size = "large"
	}
	return e
}

// TPower is the power of a two-sided two-sample t-test at significance
// alpha with n per group for a true standardised difference d: the chance
// that the noncentral t (df 2n-2, noncentrality d√(n/2)) exceeds the
// critical value. Like R's power.t.test (strict = FALSE) it counts the
// tail on the side of the effect only, which the other tail barely adds
// to.
func TPower(d, n, alpha float64) float64 {
	df := 2*n - 2
	crit := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - alpha/2)
	nct := distuv.NoncentralT{Nu: df, Mu: math.Abs(d) * math.Sqrt(n/2)}
	return 1 - nct.CDF(crit)
}

// Power is the result of a sample-size calculation.
type Power struct {
	Effect float64 `json:"effect"` // |d| assumed
	Alpha  float64 `json:"alpha"`
	Target float64 `json:"power"`
	// N is the (fractional) sample size per group that reaches the
	// target power; PerGroup rounds it up, Total is both groups.
	N        float64 `json:"n"`
	PerGroup int     `json:"perGroup"`
	Total    int     `json:"total"`
}

// maxPowerN bounds the sample-size search: an effect needing more than
// this per group is reported as EINVALID (it is, for a study, no effect).
const maxPowerN = 1e7

// SampleSize is the number of participants per group a two-sided
// two-sample t-test needs to detect a standardised difference d with the
// given power at significance alpha (TPower solved for n by bisection).
func SampleSize(d, power, alpha float64) (Power, error) {
	d = math.Abs(d)
	if !(alpha > 0 && alpha < 1) || !(power > 0 && power < 1) {
		return Power{}, memento.Errorf(memento.EINVALID, "sample size: power and alpha must be between 0 and 1, got %g and %g", power, alpha)
	}
	if d == 0 || math.IsNaN(d) || math.IsInf(d, 0) {
		return Power{}, memento.Errorf(memento.EINVALID, "sample size: the effect must be a finite number other than 0, got %g", d)
	}
	lo, hi := 2.0, 4.0
	if TPower(d, lo, alpha) >= power {
		return Power{Effect: d, Alpha: alpha, Target: power, N: lo, PerGroup: 2, Total: 4}, nil
	}
	for TPower(d, hi, alpha) < power {
		lo, hi = hi, hi*2
		if hi > maxPowerN {
			return Power{}, memento.Errorf(memento.EINVALID, "sample size: an effect of %.3g needs more than %g participants per group", d, maxPowerN)
		}
	}
	for hi-lo > 1e-7*hi {
		mid := (lo + hi) / 2
		if TPower(d, mid, alpha) < power {
			lo = mid
		} else {
			hi = mid
		}
	}
	n := (lo + hi) / 2
	per := int(math.Ceil(n - 1e-9))
	return Power{Effect: d, Alpha: alpha, Target: power, N: n, PerGroup: per, Total: 2 * per}, nil
}
