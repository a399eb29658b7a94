package http

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memento-ai/memento"
)

// syncBuckets are the bounds, in seconds, of memento_log_sync_seconds.
var syncBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}

// syncCollector serves the syncs of a store's logs (SQLite's) as a
// histogram per log: each sync flushes the disk's write cache, and every
// append's acknowledgement waits for a whole one, so their tail is the
// floor under the acknowledgements' that the disk sets. The store counts
// them in finer buckets (memento.Durations); a sync within an eighth
// under a bound here may count in the bucket above it.
//
// It also serves the pages the writer's commits appended to each log
// (memento.WriterStats.LogPages) as a counter: its rate over the rate of
// appends is what a message costs the disk, which the syncs and the
// checkpoints then pay for.
//
// And the writer's time by the write that held it
// (memento.WriterStats.ByWrite), with the count of each write: when the
// writer is busy most of the time, they say which writes keep it so.
// With them, the batches that took the background's writes first
// (memento.WriterStats.FavouredBatches): requests that leave memory
// formation less than its share of the writer.
//
// And the checkpoints: those the writer runs itself to let the log start
// over (every write waits meanwhile), and the background checkpointer's
// writes of the pages it copied, which keep the writer's short.
type syncCollector struct {
	src                 memento.WriterReporter
	desc                *prometheus.Desc
	pages               *prometheus.Desc
	writeSecs, writeNum *prometheus.Desc
	favoured            *prometheus.Desc
	ckptNum, ckptSecs   *prometheus.Desc
	fileNum, fileSecs   *prometheus.Desc
}

func newSyncCollector(src memento.WriterReporter) *syncCollector {
	return &syncCollector{src: src,
		desc: prometheus.NewDesc("memento_log_sync_seconds",
			"Syncs of the store's log (log=\"store\") and of its intake's (log=\"intake\", with --intake), which acknowledged appends wait for. SQLite only.",
			[]string{"log"}, nil),
		pages: prometheus.NewDesc("memento_log_pages_total",
			"Pages the writer's group commits appended to the store's log (log=\"store\") and to its intake's (log=\"intake\", with --intake). SQLite only.",
			[]string{"log"}, nil),
		writeSecs: prometheus.NewDesc("memento_writer_write_seconds_total",
			"Time the store's one writer spent on each kind of write, named by the store's operation that sent it (write=\"WriteMemoryBatch\", ...). SQLite only.",
			[]string{"write"}, nil),
		writeNum: prometheus.NewDesc("memento_writer_writes_total",
			"Writes the store's one writer ran, failed ones included, by kind. SQLite only.",
			[]string{"write"}, nil),
		favoured: prometheus.NewDesc("memento_writer_favoured_batches_total",
			"Group commits that took the background's writes first, because the writes requests wait on had left them less than a quarter of the writer's recent time. SQLite only.",
			nil, nil),
		ckptNum: prometheus.NewDesc("memento_writer_checkpoints_total",
			"Checkpoints the store's one writer ran itself, between two transactions, to let the log start over; every write waits meanwhile. SQLite only.",
			nil, nil),
		ckptSecs: prometheus.NewDesc("memento_writer_checkpoint_seconds_total",
			"Time the store's one writer spent on its own checkpoints. SQLite only.",
			nil, nil),
		fileNum: prometheus.NewDesc("memento_checkpointer_writebacks_total",
			"Times the background checkpointer, off the writer, started writing to the disk the database pages it had copied from the log. SQLite only.",
			nil, nil),
		fileSecs: prometheus.NewDesc("memento_checkpointer_writeback_seconds_total",
			"Time the background checkpointer's writebacks took. SQLite only.",
			nil, nil)}
}

func (c *syncCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.desc
	ch <- c.pages
	ch <- c.writeSecs
	ch <- c.writeNum
	ch <- c.favoured
	ch <- c.ckptNum
	ch <- c.ckptSecs
	ch <- c.fileNum
	ch <- c.fileSecs
}

func (c *syncCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.src.WriterStats()
	c.histogram(ch, "store", st.LogSyncTimes, st.LogSyncSeconds)
	ch <- prometheus.MustNewConstMetric(c.pages, prometheus.CounterValue, float64(st.LogPages), "store")
	if st.IntakeLogSyncs > 0 {
		c.histogram(ch, "intake", st.IntakeLogSyncTimes, st.IntakeLogSyncSeconds)
	}
	if st.IntakeLogPages > 0 {
		ch <- prometheus.MustNewConstMetric(c.pages, prometheus.CounterValue, float64(st.IntakeLogPages), "intake")
	}
	for name, u := range st.ByWrite {
		ch <- prometheus.MustNewConstMetric(c.writeSecs, prometheus.CounterValue, u.Seconds, name)
		ch <- prometheus.MustNewConstMetric(c.writeNum, prometheus.CounterValue, float64(u.Writes), name)
	}
	ch <- prometheus.MustNewConstMetric(c.favoured, prometheus.CounterValue, float64(st.FavouredBatches))
	ch <- prometheus.MustNewConstMetric(c.ckptNum, prometheus.CounterValue, float64(st.Checkpoints))
	ch <- prometheus.MustNewConstMetric(c.ckptSecs, prometheus.CounterValue, st.CheckpointSeconds)
	ch <- prometheus.MustNewConstMetric(c.fileNum, prometheus.CounterValue, float64(st.DatabaseWritebacks))
	ch <- prometheus.MustNewConstMetric(c.fileSecs, prometheus.CounterValue, st.DatabaseWritebackSeconds)
}

func (c *syncCollector) histogram(ch chan<- prometheus.Metric, log string, counts memento.DurationCounts, secs float64) {
	buckets := make(map[float64]uint64, len(syncBuckets))
	for _, b := range syncBuckets {
		buckets[b] = uint64(counts.AtMost(time.Duration(b * float64(time.Second))))
	}
	ch <- prometheus.MustNewConstHistogram(c.desc, uint64(counts.Total()), secs, buckets, log)
}
