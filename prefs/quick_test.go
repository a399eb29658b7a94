package prefs

import (
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestQuickCPU(t *testing.T) {
	v := clustered(42, 10000, 256, 50, 0.04, 0.05)
	for _, w := range []int{1, 2} {
		c0, t0 := cpuTime(), time.Now()
		reps := 3
		for range reps {
			dbscan(v, DefaultEps, DefaultMinPts, dbscanOptions{bruteForceBelow: 64, workers: w})
		}
		t.Logf("workers=%d wall %v cpu %v per op", w, time.Since(t0)/time.Duration(reps), (cpuTime()-c0)/time.Duration(reps))
	}
	c0 := cpuTime()
	ix := newPairIndex(v, 1-DefaultEps, false, 1)
	t.Logf("index cpu %v", cpuTime()-c0)
	var c atomic.Int64
	c0 = cpuTime()
	ix.forEachCandidate(1, func(i, j int32) { c.Add(1) })
	t.Logf("scan cpu %v candidates %d", cpuTime()-c0, c.Load())
}
