// Package stats holds the statistics Memento's experiments report:
// descriptives, group comparability (chi-squared homogeneity,
// Kruskal-Wallis), assumption checks (Shapiro-Wilk by Royston's algorithm,
// Bartlett), two-sample comparisons (Student's t, Welch's t, Mann-Whitney
// U), the standardised mean difference (Cohen's d with a confidence
// interval) and the sample size a two-sample t-test needs for a power.
//
// Every test is written here on gonum's distributions, so each value can be
// checked against published reference values (stats_test.go cites them).
// Functions take plain float64 slices and return a result struct with the
// statistic, its degrees of freedom where there are any, and a two-sided
// p-value; they return an EINVALID memento.Error for data a test cannot be
// computed on (too few values, no variance).
package stats
