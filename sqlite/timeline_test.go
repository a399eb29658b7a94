package sqlite

import (
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

// A wait is split by the stretches of work it overlaps, by name, with
// the gaps between them the committer's and the three largest parts
// first; a wait longer than the stretches kept has an unrecorded part.
func TestTimelineBehind(t *testing.T) {
	ms := func(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }
	t0 := time.Unix(1000, 0)
	at := func(n float64) time.Time { return t0.Add(ms(n)) }
	var tl timeline
	// 0-2 a write of memories, 2-3.5 nothing, 3.5-10 a checkpoint, 10-11
	// the connection, 11-12 merges, 12-16 memories again, 16-17 commit.
	tl.add("WriteMemoryBatch", at(0), at(2))
	tl.add(spanCheckpoint, at(3.5), at(10))
	tl.add(spanConnection, at(10), at(11))
	tl.add("ftsMerger.mergeOnce", at(11), at(12))
	tl.add("WriteMemoryBatch", at(12), at(16))
	tl.add(spanCommit, at(16), at(17))

	got := tl.behind(at(1), at(17))
	want := [3]memento.WaitPart{{What: spanCheckpoint, D: ms(6.5)}, {What: "WriteMemoryBatch", D: ms(5)}, {What: spanCommitter, D: ms(1.5)}}
	if got != want {
		t.Errorf("behind 1-17 = %+v, want %+v", got, want)
	}
	// A wait within one stretch is all of it.
	if got := tl.behind(at(4), at(6)); got != [3]memento.WaitPart{{What: spanCheckpoint, D: ms(2)}} {
		t.Errorf("behind 4-6 = %+v, want the checkpoint's 2 ms alone", got)
	}
	// A wait that began after the last stretch, before the request was
	// taken, is the committer's.
	if got := tl.behind(at(17), at(18)); got != [3]memento.WaitPart{{What: spanCommitter, D: ms(1)}} {
		t.Errorf("behind 17-18 = %+v, want the committer's 1 ms", got)
	}

	// Once the ring has turned, a wait older than its oldest stretch
	// has that part unrecorded.
	var full timeline
	for i := range timelineSpans + 10 {
		full.add("AppendMessages", at(100+float64(i)), at(101+float64(i)))
	}
	oldest := at(100 + 10) // the first 10 were overwritten
	got = full.behind(at(0), at(100+timelineSpans+10))
	want = [3]memento.WaitPart{{What: "AppendMessages", D: ms(timelineSpans)}, {What: spanEarlier, D: oldest.Sub(at(0))}}
	if got != want {
		t.Errorf("behind a wait older than the ring = %+v; want %+v", got, want)
	}
}

// BenchmarkTimelineBehind splits a wait over 200 stretches of a full
// ring: what the committer spends on an acknowledgement that waited
// behind that many writes.
func BenchmarkTimelineBehind(b *testing.B) {
	t0 := time.Unix(1000, 0)
	var tl timeline
	names := []string{"WriteMemoryBatch", "AppendMessages", spanCommit, spanConnection, "ftsMerger.mergeOnce"}
	for i := range timelineSpans {
		tl.add(names[i%len(names)], t0.Add(time.Duration(i)*100*time.Microsecond), t0.Add(time.Duration(i)*100*time.Microsecond+90*time.Microsecond))
	}
	from := t0.Add(time.Duration(timelineSpans-200) * 100 * time.Microsecond)
	to := t0.Add(time.Duration(timelineSpans) * 100 * time.Microsecond)
	for b.Loop() {
		tl.behind(from, to)
	}
}
