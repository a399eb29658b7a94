// Package eval measures Memento on real data sets, with baselines measured
// in the same run, and writes machine-readable results.
//
// Each evaluation reads a data set, drives Memento's public pieces (the
// agent, the store, recall) exactly as a user would, and scores what came
// back. Nothing here is tuned to the visible files; the scoring rules are
// documented on each result type.
package eval
