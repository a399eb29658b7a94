package torture

import (
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// Ms is a duration in milliseconds, the unit reports print.
type Ms float64

func ms(d time.Duration) Ms { return Ms(float64(d.Microseconds()) / 1000) }

// OpStats are the figures of one kind of request.
type OpStats struct {
	Requests int `json:"requests"`
	// Statuses counts the requests by how they ended: an HTTP status
	// ("200", "502"), "timeout" or "network".
	Statuses map[string]int `json:"statuses"`
	// Errors is how many did not answer 2xx.
	Errors int `json:"errors"`
	// PerSecond is the 2xx answers per second of the run.
	PerSecond float64 `json:"perSecond"`
	P50       Ms      `json:"p50Ms"`
	P99       Ms      `json:"p99Ms"`
	Max       Ms      `json:"maxMs"`
	// AfterStart has the same figures over the requests begun after the
	// load's first second (settle), for a mixed load. Every client sends
	// its first request at the same moment, and that burst can hold more
	// work than the processors do in a tenth of a second: its requests
	// can make the run's p99 on their own. These figures are the load
	// once it settled; the ones above include the burst.
	AfterStart *Quantiles `json:"afterStart,omitempty"`
}

// Quantiles are the latencies of a set of requests.
type Quantiles struct {
	Requests int `json:"requests"`
	P50      Ms  `json:"p50Ms"`
	P99      Ms  `json:"p99Ms"`
	Max      Ms  `json:"maxMs"`
}

// settle is how long after the start of a mixed load its requests count
// in OpStats.AfterStart.
const settle = time.Second

// recorder collects results by operation; safe for concurrent use.
type recorder struct {
	mu  sync.Mutex
	ops map[string]*opRecord
	// start, once set (begin), is when the load began: the latencies of
	// the requests begun settle or more after it are then also kept
	// apart (opRecord.settled).
	start time.Time
}

type opRecord struct {
	statuses  map[string]int
	latencies []time.Duration // of every request, answered or not
	// settled are the latencies of the requests begun settle or more
	// after the recorder's start.
	settled []time.Duration
	ok      int
}

// begin records that the load starts at now.
func (r *recorder) begin(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.start = now
}

func newRecorder() *recorder { return &recorder{ops: map[string]*opRecord{}} }

func (r *recorder) add(op string, res Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	o := r.ops[op]
	if o == nil {
		o = &opRecord{statuses: map[string]int{}}
		r.ops[op] = o
	}
	o.statuses[res.Class]++
	o.latencies = append(o.latencies, res.Latency)
	if !r.start.IsZero() && time.Since(r.start)-res.Latency >= settle {
		o.settled = append(o.settled, res.Latency)
	}
	if res.OK() {
		o.ok++
	}
}

// stats summarises every operation over a run of the given length.
func (r *recorder) stats(elapsed time.Duration) map[string]OpStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]OpStats{}
	for op, o := range r.ops {
		lat := slices.Clone(o.latencies)
		slices.Sort(lat)
		s := OpStats{
			Requests: len(lat),
			Statuses: maps(o.statuses),
			Errors:   len(lat) - o.ok,
			P50:      ms(quantile(lat, 0.50)),
			P99:      ms(quantile(lat, 0.99)),
		}
		if len(lat) > 0 {
			s.Max = ms(lat[len(lat)-1])
		}
		if elapsed > 0 {
			s.PerSecond = float64(o.ok) / elapsed.Seconds()
		}
		if !r.start.IsZero() && len(o.settled) > 0 {
			lat := slices.Clone(o.settled)
			slices.Sort(lat)
			s.AfterStart = &Quantiles{Requests: len(lat), P50: ms(quantile(lat, 0.50)), P99: ms(quantile(lat, 0.99)), Max: ms(lat[len(lat)-1])}
		}
		out[op] = s
	}
	return out
}

// statuses adds up the status counts of every operation.
func (r *recorder) statuses() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	all := map[string]int{}
	for _, o := range r.ops {
		for k, v := range o.statuses {
			all[k] += v
		}
	}
	return all
}

func maps(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// quantile is the nearest-rank q-quantile of sorted durations (0 for
// none): the smallest value that at least q of them do not exceed.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(float64(len(sorted))*q+0.999999999) - 1
	rank = max(0, min(rank, len(sorted)-1))
	return sorted[rank]
}

// pick returns one of weights' keys with probability proportional to its
// weight.
func pick(rng *rand.Rand, weights []weighted) string {
	total := 0
	for _, w := range weights {
		total += w.weight
	}
	if total <= 0 {
		return ""
	}
	n := rng.IntN(total)
	for _, w := range weights {
		if n < w.weight {
			return w.name
		}
		n -= w.weight
	}
	return weights[len(weights)-1].name
}

type weighted struct {
	name   string
	weight int
}
