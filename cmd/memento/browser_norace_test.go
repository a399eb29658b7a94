//go:build !race

package main

// slowdown stretches the browser test's waits; see browser_race_test.go.
const slowdown = 1
