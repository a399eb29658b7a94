package experiment

import "github.com/memento-ai/memento/stats"

// withP is a test result with the given p-value.
func withP(p float64) *stats.TestResult { return &stats.TestResult{P: p} }
