package bench

import (
	"strings"
	"testing"
)

// TestTargetNotes checks that a missed target names what on the machine
// came first where the run's figures show it, and only then: a slow
// pipeline for the queue's throughput, the log's syncs (the intake's when
// it has one) or the scheduler's wait for the acknowledgement while the
// queue drains.
func TestTargetNotes(t *testing.T) {
	syncs := func(p99 float64) *Latency { return &Latency{Samples: 100, P99Ms: p99} }
	run := func(pipeline float64, targets map[string]bool, q *RateResult) *Result {
		return &Result{Pipeline: Throughput{MsgsPerSec: pipeline}, Targets: targets, QueueAtRate: q}
	}
	missed := map[string]bool{"queueAtLeast1000MsgsPerS": false, "ingestAckP99Under5msWhileDraining": false}
	met := map[string]bool{"queueAtLeast1000MsgsPerS": true, "ingestAckP99Under5msWhileDraining": true}
	for _, c := range []struct {
		name string
		res  *Result
		// want maps each target to words its note must hold; a target
		// absent from want must have no note.
		want map[string][]string
	}{
		{"a slow pipeline", run(738, missed, nil),
			map[string][]string{"queueAtLeast1000MsgsPerS": {"738 msgs/s"}}},
		{"a pipeline fast enough", run(1200, missed, nil), nil},
		{"the store's log syncs slowly", run(1200, missed, &RateResult{Writer: &WriterUse{LogSync: syncs(14.8)}}),
			map[string][]string{"ingestAckP99Under5msWhileDraining": {"the store's log", "14.8 ms", "--intake-path"}}},
		{"the intake's log syncs slowly", run(1200, missed, &RateResult{Writer: &WriterUse{LogSync: syncs(1), IntakeLogSync: syncs(16.7)}}),
			map[string][]string{"ingestAckP99Under5msWhileDraining": {"the intake's log", "16.7 ms"}}},
		{"the intake's syncs are fast, the store's not", run(1200, missed, &RateResult{Writer: &WriterUse{LogSync: syncs(30), IntakeLogSync: syncs(2)}}), nil},
		{"the processors", run(1200, missed, &RateResult{Writer: &WriterUse{LogSync: syncs(2)}, Scheduling: &Scheduling{P99Ms: 7.3}}),
			map[string][]string{"ingestAckP99Under5msWhileDraining": {"processor", "7.3 ms"}}},
		{"nothing to point at", run(1200, missed, &RateResult{Writer: &WriterUse{LogSync: syncs(2)}, Scheduling: &Scheduling{P99Ms: 1}}), nil},
		{"PostgreSQL, no writer", run(1200, missed, &RateResult{Scheduling: &Scheduling{P99Ms: 0.5}}), nil},
		{"targets met on a slow machine", run(738, met, &RateResult{Writer: &WriterUse{LogSync: syncs(14.8)}, Scheduling: &Scheduling{P99Ms: 9}}), nil},
	} {
		notes := targetNotes(c.res)
		if len(notes) != len(c.want) {
			t.Errorf("%s: notes %q, want notes for %d targets", c.name, notes, len(c.want))
		}
		for target, words := range c.want {
			note, ok := notes[target]
			if !ok {
				t.Errorf("%s: no note for %s (notes %q)", c.name, target, notes)
			}
			for _, w := range words {
				if !strings.Contains(note, w) {
					t.Errorf("%s: the note for %s, %q, does not say %q", c.name, target, note, w)
				}
			}
		}
	}
}
