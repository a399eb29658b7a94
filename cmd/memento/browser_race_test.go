//go:build race

package main

// slowdown stretches the browser test's waits: under the race detector the
// server (catalog load, ranking, background jobs) runs several times slower.
const slowdown = 5
