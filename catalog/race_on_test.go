//go:build race

package catalog

// raceEnabled reports whether the tests run under the race detector, which
// makes the catalog rebuild too slow for a test run.
const raceEnabled = true
