package prefs

import (
	"syscall"
	"testing"
	"time"
	"runtime"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestQuickCPU(t *testing.T) {
	for _, n := range []int{1000, 10000} {
		v := clustered(42, n, 256, 50, 0.04, 0.05)
		for _, w := range []int{1, 2} {
			c0, t0 := cpuTime(), time.Now()
			reps := 3
			for range reps {
				dbscan(v, DefaultEps, DefaultMinPts, dbscanOptions{bruteForceBelow: 64, workers: w})
			}
			t.Logf("n=%d workers=%d wall %v cpu %v per op", n, w, time.Since(t0)/time.Duration(reps), (cpuTime()-c0)/time.Duration(reps))
		}
		if n == 1000 {
			c0, t0 := cpuTime(), time.Now()
			NaiveDBSCAN(v, DefaultEps, DefaultMinPts)
			t.Logf("n=%d naive wall %v cpu %v", n, time.Since(t0), cpuTime()-c0)
		}
	}
	_ = runtime.GOMAXPROCS
}
