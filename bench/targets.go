package bench

import "fmt"

// targetNotes says, for each target the run missed, what on the machine
// measured it met first, where the run's own figures show it: a target a
// machine cannot meet whatever the software does should say so, so that
// a reader does not take the disk or the processors for the code, nor the
// code for them. A missed target with nothing to point at has no note.
func targetNotes(res *Result) map[string]string {
	notes := map[string]string{}
	if met, ok := res.Targets["queueAtLeast1000MsgsPerS"]; ok && !met && res.Pipeline.MsgsPerSec > 0 && res.Pipeline.MsgsPerSec < 1000 {
		notes["queueAtLeast1000MsgsPerS"] = fmt.Sprintf(
			"the attribute pipeline alone, with no log or queue, ran %.0f msgs/s on this machine, and the queue runs it for every message: the processors come first",
			res.Pipeline.MsgsPerSec)
	}
	if met, ok := res.Targets["ingestAckP99Under5msWhileDraining"]; ok && !met {
		if n := ackFloorNote(res.QueueAtRate); n != "" {
			notes["ingestAckP99Under5msWhileDraining"] = n
		}
	}
	if len(notes) == 0 {
		return nil
	}
	return notes
}

// ackFloorNote names what an acknowledgement's 99th percentile under the
// steady stream cannot go below on the machine measured: the syncs of
// the log it waits for, each a flush of the disk's cache, or else the
// Go scheduler's wait for a processor, which every handover on its path
// pays. Empty when neither reaches 5 ms.
func ackFloorNote(q *RateResult) string {
	if q == nil {
		return ""
	}
	if w := q.Writer; w != nil {
		log, sync := "the store's log", w.LogSync
		if w.IntakeLogSync != nil && w.IntakeLogSync.Samples > 0 {
			log, sync = "the intake's log", w.IntakeLogSync
		}
		if sync != nil && sync.Samples > 0 && sync.P99Ms >= 5 {
			return fmt.Sprintf(
				"each acknowledgement waits for a sync of %s, and those syncs alone had a p99 of %.1f ms over the stream: the disk's flush passes 5 ms here; put the intake on a device whose flush is fast (--intake-path)",
				log, sync.P99Ms)
		}
	}
	if s := q.Scheduling; s != nil && s.P99Ms >= 5 {
		return fmt.Sprintf(
			"goroutines made runnable waited for a processor %.1f ms at the 99th percentile over the stream, and an acknowledgement is handed over more than once: the processors pass 5 ms here",
			s.P99Ms)
	}
	return ""
}
