package bench

import (
	"cmp"
	"runtime/metrics"
	"slices"
	"time"

	"github.com/memento-ai/memento"
)

// AckPhases splits the acknowledgements of a stream into where their time
// went, as the store measured it (memento.WriteTimes): on SQLite Waited
// behind the writes its one writer was running, Wrote in the group commit
// that held the append (its statements, the others' and the commit),
// Synced for the sync of the log after that commit; on PostgreSQL Waited
// for a pooled connection and the user's lock, Wrote for the statements
// and the commit, Synced 0. Slowest is the mean
// of each phase over the slowest 1 % of acknowledgements, which is what
// the p99 is made of, with what the writer ran while they waited (SQLite).
type AckPhases struct {
	Waited  Latency     `json:"waited"`
	Wrote   Latency     `json:"wrote"`
	Synced  Latency     `json:"synced"`
	Slowest SlowestAcks `json:"slowest"`
}

// SlowestAcks is the mean of each phase over the slowest acknowledgements.
type SlowestAcks struct {
	Samples  int     `json:"samples"`
	TotalMs  float64 `json:"totalMs"`
	WaitedMs float64 `json:"waitedMs"`
	WroteMs  float64 `json:"wroteMs"`
	SyncedMs float64 `json:"syncedMs"`
	// Behind splits WaitedMs by what the writer ran meanwhile
	// (memento.WriteTimes.Behind: a write by its store operation,
	// checkpoint, connection, commit or committer), most first: the
	// mean over the slowest acknowledgements of each one's three
	// largest parts, so the parts add up to WaitedMs or a little less.
	Behind []WaitedBehind `json:"behind,omitempty"`
}

// WaitedBehind is a part of the slowest acknowledgements' wait for the
// writer: what the writer ran, and the mean milliseconds of it.
type WaitedBehind struct {
	What string  `json:"what"`
	Ms   float64 `json:"ms"`
}

// ackPhases summarises the timings of acknowledgements whose calls took
// ackMs; nil when the store measured none.
func ackPhases(times []memento.WriteTimes, ackMs []float64) *AckPhases {
	var waited, wrote, synced []float64
	var order []int
	for i, t := range times {
		if t == (memento.WriteTimes{}) {
			continue
		}
		waited, wrote, synced = append(waited, millis(t.Waited)), append(wrote, millis(t.Wrote)), append(synced, millis(t.Synced))
		order = append(order, i)
	}
	if len(order) == 0 {
		return nil
	}
	p := &AckPhases{Waited: summarise(waited), Wrote: summarise(wrote), Synced: summarise(synced)}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(ackMs[b], ackMs[a]) })
	slow := order[:max(1, len(order)/100)]
	s := SlowestAcks{Samples: len(slow)}
	behind := map[string]float64{}
	for _, i := range slow {
		s.TotalMs += ackMs[i]
		s.WaitedMs += millis(times[i].Waited)
		s.WroteMs += millis(times[i].Wrote)
		s.SyncedMs += millis(times[i].Synced)
		for _, part := range times[i].Behind {
			if part.What != "" {
				behind[part.What] += millis(part.D)
			}
		}
	}
	n := float64(len(slow))
	s.TotalMs, s.WaitedMs, s.WroteMs, s.SyncedMs = round3(s.TotalMs/n), round3(s.WaitedMs/n), round3(s.WroteMs/n), round3(s.SyncedMs/n)
	for what, ms := range behind {
		s.Behind = append(s.Behind, WaitedBehind{What: what, Ms: round3(ms / n)})
	}
	slices.SortFunc(s.Behind, func(a, b WaitedBehind) int { return cmp.Or(cmp.Compare(b.Ms, a.Ms), cmp.Compare(a.What, b.What)) })
	p.Slowest = s
	return p
}

// Scheduling is the Go scheduler's latency over a span: how long
// goroutines made runnable (a write answered, a request arrived) waited
// for a processor, from runtime/metrics' /sched/latencies:seconds. The
// quantiles are the upper bounds of the histogram's buckets. On a
// machine whose processors the background keeps busy, every handover
// on an acknowledgement's path pays this wait.
type Scheduling struct {
	Wakeups uint64  `json:"wakeups"`
	P50Ms   float64 `json:"p50Ms"`
	P99Ms   float64 `json:"p99Ms"`
	P999Ms  float64 `json:"p999Ms"`
}

// schedReading is a reading of the scheduler's latency histogram.
type schedReading struct {
	counts  []uint64
	buckets []float64
}

const schedMetric = "/sched/latencies:seconds"

// readSched reads the scheduler's latency histogram.
func readSched() schedReading {
	s := []metrics.Sample{{Name: schedMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return schedReading{}
	}
	h := s[0].Value.Float64Histogram()
	return schedReading{counts: slices.Clone(h.Counts), buckets: h.Buckets}
}

// since returns the scheduler's latency between the reading before and
// now; nil when the runtime does not report it.
func (before schedReading) since() *Scheduling {
	now := readSched()
	if len(now.counts) == 0 || len(before.counts) != len(now.counts) {
		return nil
	}
	counts := make([]uint64, len(now.counts))
	var total uint64
	for i := range counts {
		counts[i] = now.counts[i] - before.counts[i]
		total += counts[i]
	}
	if total == 0 {
		return nil
	}
	quantile := func(p float64) float64 {
		want := uint64(p*float64(total) + 0.5)
		var seen uint64
		for i, c := range counts {
			seen += c
			if seen >= max(want, 1) {
				return round3(min(now.buckets[i+1], float64(time.Hour/time.Second)) * 1e3)
			}
		}
		return 0
	}
	return &Scheduling{Wakeups: total, P50Ms: quantile(0.5), P99Ms: quantile(0.99), P999Ms: quantile(0.999)}
}
