package bench

import (
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

func TestAckPhases(t *testing.T) {
	if p := ackPhases(make([]memento.WriteTimes, 3), []float64{1, 2, 3}); p != nil {
		t.Errorf("a store that measured nothing gave %+v, want nil", p)
	}
	// 200 acknowledgements: the two slowest waited, the others wrote.
	times := make([]memento.WriteTimes, 200)
	ackMs := make([]float64, 200)
	for i := range times {
		times[i] = memento.WriteTimes{Wrote: time.Millisecond, Synced: time.Millisecond / 2}
		ackMs[i] = 1.6
	}
	for _, i := range []int{17, 150} {
		times[i] = memento.WriteTimes{Waited: 40 * time.Millisecond, Wrote: time.Millisecond, Synced: 3 * time.Millisecond}
		ackMs[i] = 44.5
	}
	p := ackPhases(times, ackMs)
	want := SlowestAcks{Samples: 2, TotalMs: 44.5, WaitedMs: 40, WroteMs: 1, SyncedMs: 3}
	if p == nil || p.Slowest != want {
		t.Fatalf("slowest = %+v, want %+v", p, want)
	}
	if p.Waited.Samples != 200 || p.Waited.MaxMs != 40 || p.Wrote.P50Ms != 1 || p.Synced.P50Ms != 0.5 {
		t.Errorf("phases = %+v", p)
	}
}

func TestSchedulingSince(t *testing.T) {
	before := readSched()
	done := make(chan struct{})
	for range 100 {
		go func() { done <- struct{}{} }()
		<-done
	}
	sc := before.since()
	if sc == nil || sc.Wakeups == 0 || sc.P50Ms > sc.P99Ms || sc.P99Ms > sc.P999Ms {
		t.Errorf("scheduling = %+v; want the wakeups of the goroutines just run", sc)
	}
}
