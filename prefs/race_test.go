//go:build race

package prefs

// raceEnabled is true when the tests run under the race detector, which
// makes the brute-force reference about 25 times slower; the property test
// then checks fewer and smaller data sets.
const raceEnabled = true
