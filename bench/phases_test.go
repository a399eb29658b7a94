package bench

import (
	"reflect"
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
	// Both waited behind a checkpoint and writes of memories; one
	// behind merges too, the other behind a commit.
	times[17] = memento.WriteTimes{Waited: 40 * time.Millisecond, Wrote: time.Millisecond, Synced: 3 * time.Millisecond,
		Behind: [3]memento.WaitPart{{What: "checkpoint", D: 25 * time.Millisecond}, {What: "WriteMemoryBatch", D: 10 * time.Millisecond}, {What: "ftsMerger.mergeOnce", D: 5 * time.Millisecond}}}
	times[150] = memento.WriteTimes{Waited: 40 * time.Millisecond, Wrote: time.Millisecond, Synced: 3 * time.Millisecond,
		Behind: [3]memento.WaitPart{{What: "WriteMemoryBatch", D: 30 * time.Millisecond}, {What: "checkpoint", D: 9 * time.Millisecond}, {What: "commit", D: time.Millisecond}}}
	for _, i := range []int{17, 150} {
		ackMs[i] = 44.5
	}
	p := ackPhases(times, ackMs)
	want := SlowestAcks{Samples: 2, TotalMs: 44.5, WaitedMs: 40, WroteMs: 1, SyncedMs: 3,
		Behind: []WaitedBehind{{"WriteMemoryBatch", 20}, {"checkpoint", 17}, {"ftsMerger.mergeOnce", 2.5}, {"commit", 0.5}}}
	if p == nil || !reflect.DeepEqual(p.Slowest, want) {
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
