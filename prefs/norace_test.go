//go:build !race

package prefs

// raceEnabled is true when the tests run under the race detector.
const raceEnabled = false
