package memento

import (
	"cmp"
	"context"
	"slices"
	"time"
)

// QueueLag is how far one kind of background job trails the message log:
// how many jobs of the kind have not ended, and how long the oldest of
// them has waited. A message's memories exist only once its jobs end, so
// the oldest wait is the age of the oldest message whose memory is not
// formed yet.
type QueueLag struct {
	Kind string `json:"kind"`
	// Waiting counts the jobs not ended: pending, retrying or running.
	Waiting int `json:"waiting"`
	Running int `json:"running"`
	// Oldest is when the oldest job not ended was enqueued (zero when
	// none waits); OldestSeconds is its age at the time of the reading.
	Oldest        time.Time `json:"oldest,omitzero"`
	OldestSeconds float64   `json:"oldestSeconds"`
}

// QueueLags is a reading of every kind's lag, with the totals.
type QueueLags struct {
	At    time.Time  `json:"at"`
	Kinds []QueueLag `json:"kinds"`
	// Waiting is the sum over kinds, OldestSeconds the largest.
	Waiting       int     `json:"waiting"`
	OldestSeconds float64 `json:"oldestSeconds"`
}

// LagReporter reads the queue's lag. Stores whose queue can tell implement
// it; the server's backpressure and metrics use it.
type LagReporter interface {
	// QueueLag reads the lag of every job kind that has jobs not ended.
	QueueLag(ctx context.Context) (*QueueLags, error)
}

// JobKindStats counts one kind's jobs by state, with its lag.
type JobKindStats struct {
	Kind      string `json:"kind"`
	Pending   int    `json:"pending"`
	Running   int    `json:"running"`
	Retrying  int    `json:"retrying"`
	Completed int    `json:"completed"`
	Failed    int    `json:"failed"`
	// Waiting and OldestSeconds are the kind's QueueLag.
	Waiting       int     `json:"waiting"`
	OldestSeconds float64 `json:"oldestSeconds"`
}

// JobStats is `memento jobs stats --json`: every kind's counts and lag,
// and the totals of the lag.
type JobStats struct {
	At            time.Time      `json:"at"`
	Kinds         []JobKindStats `json:"kinds"`
	Waiting       int            `json:"waiting"`
	OldestSeconds float64        `json:"oldestSeconds"`
}

// MergeLags completes a store's reading of its queue: it adds to lags
// (River's kinds, each with its Oldest set) the jobs waiting in the users'
// backlogs by kind, which count under their own kind since a message's job
// waits for it there just as in the queue, then sets every kind's age at
// now and the totals, and orders the kinds by name.
func MergeLags(lags *QueueLags, backlog map[string]QueueLag, now time.Time) *QueueLags {
	byKind := make(map[string]int, len(lags.Kinds))
	for i, l := range lags.Kinds {
		byKind[l.Kind] = i
	}
	for kind, b := range backlog {
		i, ok := byKind[kind]
		if !ok {
			lags.Kinds = append(lags.Kinds, QueueLag{Kind: kind})
			i = len(lags.Kinds) - 1
			byKind[kind] = i
		}
		l := &lags.Kinds[i]
		l.Waiting += b.Waiting
		if !b.Oldest.IsZero() && (l.Oldest.IsZero() || b.Oldest.Before(l.Oldest)) {
			l.Oldest = b.Oldest
		}
	}
	lags.Waiting, lags.OldestSeconds = 0, 0
	for i := range lags.Kinds {
		l := &lags.Kinds[i]
		l.OldestSeconds = 0
		if !l.Oldest.IsZero() {
			l.OldestSeconds = max(0, now.Sub(l.Oldest).Seconds())
		}
		lags.Waiting += l.Waiting
		lags.OldestSeconds = max(lags.OldestSeconds, l.OldestSeconds)
	}
	slices.SortFunc(lags.Kinds, func(a, b QueueLag) int { return cmp.Compare(a.Kind, b.Kind) })
	return lags
}

// WriterStats is what a store with one writer (SQLite) has written since
// it opened: group commits, the writes they committed, and the seconds
// the writer spent on batches and, of those, on the commits themselves;
// UnsyncedCommits are the commits that did not wait for the disk (those
// of background jobs' writes only); LogSyncs and LogSyncSeconds are the
// syncs of the log that made the other commits durable after they
// returned, off the writer, when the store syncs that way (SQLite at
// synchronous FULL or EXTRA), and the seconds they took. Between two readings, BusySeconds over the wall time between them is
// the writer's utilisation: near 1, the writer is what limits the writes.
type WriterStats struct {
	Commits     int64   `json:"commits"`
	Writes      int64   `json:"writes"`
	BusySeconds float64 `json:"busySeconds"`
	SyncSeconds float64 `json:"syncSeconds"`
	// UnsyncedCommits counts the commits of background jobs' writes,
	// which do not wait for the disk.
	UnsyncedCommits int64 `json:"unsyncedCommits"`
	// LogSyncs counts the syncs of the log after commits that were
	// waited on: commits that ended while one ran share the next.
	LogSyncs       int64   `json:"logSyncs"`
	LogSyncSeconds float64 `json:"logSyncSeconds"`
	// LogSyncTimes is how long those syncs took. Each one flushes the
	// disk's write cache, and each acknowledgement waits for the whole
	// of one that began after its commit (often behind one already
	// running), so the acknowledgements' 99th percentile is not below
	// about these syncs' 99th: a floor set by the disk, not the writer.
	LogSyncTimes DurationCounts `json:"-"`
	// IntakeLogSyncs, IntakeLogSyncSeconds and IntakeLogSyncTimes are
	// the same for the log of the store's intake, when it has one
	// (SQLite's Options.Intake): there, the acknowledgements wait for
	// these syncs instead.
	IntakeLogSyncs       int64          `json:"intakeLogSyncs,omitempty"`
	IntakeLogSyncSeconds float64        `json:"intakeLogSyncSeconds,omitempty"`
	IntakeLogSyncTimes   DurationCounts `json:"-"`
	// Checkpoints counts the checkpoints the writer ran itself, between
	// two transactions, to let the log start over (every write waits
	// meanwhile; those that found another checkpoint running, and
	// returned at once, count too), and CheckpointSeconds the time they
	// took.
	Checkpoints       int64   `json:"checkpoints"`
	CheckpointSeconds float64 `json:"checkpointSeconds"`
	// DatabaseWritebacks counts the times the background checkpointer,
	// off the writer, started writing to the disk the database pages it
	// had copied from the log, so that the writer's own checkpoints have
	// fewer to sync; DatabaseWritebackSeconds is the time those calls
	// took (they do not wait for the disk, but may for its queue).
	DatabaseWritebacks       int64   `json:"databaseWritebacks"`
	DatabaseWritebackSeconds float64 `json:"databaseWritebackSeconds"`
	// LogPages counts the pages the group commits appended to the log:
	// every page a commit changed, whole, however little of it changed.
	// They are what the log's syncs wait for and what the checkpoints
	// copy back into the database file, and unlike the times above they
	// do not depend on how fast the disk is, only on what was written
	// and how the writes grouped into commits: pages per write or per
	// message measure what a change to the writes saves. Writes that do
	// not go through the group commits (bulk imports, migrations,
	// River's own fetches and completions) are not counted.
	// IntakeLogPages is the same for the intake's log.
	LogPages       int64 `json:"logPages"`
	IntakeLogPages int64 `json:"intakeLogPages,omitempty"`
	// ByWrite is the writer's time by the write that held it: each
	// group commit runs its writes one after the other, and each write
	// is named by the store's operation that sent it (WriteMemoryBatch,
	// AppendMessages, the full-text merges, ...), its time counted with
	// the savepoint around it. What BusySeconds holds beyond these writes
	// and SyncSeconds is the batches' beginnings: the writer's own
	// checkpoints, taking the connection, BEGIN. It says which write to
	// make cheaper when the writer is what limits the background.
	ByWrite map[string]WriteUse `json:"byWrite,omitempty"`
	// FavouredBatches counts the group commits that took the background
	// writes first: the writes somebody waits on come first, but while
	// both kinds wait and the background had less than its share of the
	// writer's recent time (a quarter), a batch takes the background's
	// first, so that requests arriving faster than the writer runs them
	// do not stop memory formation for as long as they come. Zero while
	// the requests leave the background its share.
	FavouredBatches int64 `json:"favouredBatches"`
}

// WriteUse is what one kind of write took of the writer: how many ran,
// failed ones included, and the seconds they held it.
type WriteUse struct {
	Writes  int64   `json:"writes"`
	Seconds float64 `json:"seconds"`
}

// Sub returns the difference s - o: what was written between two readings.
func (s WriterStats) Sub(o WriterStats) WriterStats {
	return WriterStats{Commits: s.Commits - o.Commits, Writes: s.Writes - o.Writes,
		BusySeconds: s.BusySeconds - o.BusySeconds, SyncSeconds: s.SyncSeconds - o.SyncSeconds,
		UnsyncedCommits: s.UnsyncedCommits - o.UnsyncedCommits,
		LogSyncs:        s.LogSyncs - o.LogSyncs, LogSyncSeconds: s.LogSyncSeconds - o.LogSyncSeconds,
		LogSyncTimes:   s.LogSyncTimes.Sub(o.LogSyncTimes),
		IntakeLogSyncs: s.IntakeLogSyncs - o.IntakeLogSyncs, IntakeLogSyncSeconds: s.IntakeLogSyncSeconds - o.IntakeLogSyncSeconds, IntakeLogSyncTimes: s.IntakeLogSyncTimes.Sub(o.IntakeLogSyncTimes),
		Checkpoints: s.Checkpoints - o.Checkpoints, CheckpointSeconds: s.CheckpointSeconds - o.CheckpointSeconds,
		DatabaseWritebacks: s.DatabaseWritebacks - o.DatabaseWritebacks, DatabaseWritebackSeconds: s.DatabaseWritebackSeconds - o.DatabaseWritebackSeconds,
		LogPages: s.LogPages - o.LogPages, IntakeLogPages: s.IntakeLogPages - o.IntakeLogPages,
		ByWrite:         subWriteUses(s.ByWrite, o.ByWrite),
		FavouredBatches: s.FavouredBatches - o.FavouredBatches}
}

// subWriteUses returns the uses of s beyond those of o, without the
// writes that did not run in between; nil when none did.
func subWriteUses(s, o map[string]WriteUse) map[string]WriteUse {
	var out map[string]WriteUse
	for name, u := range s {
		d := WriteUse{Writes: u.Writes - o[name].Writes, Seconds: u.Seconds - o[name].Seconds}
		if d.Writes == 0 {
			continue
		}
		if out == nil {
			out = map[string]WriteUse{}
		}
		out[name] = d
	}
	return out
}

// WriterReporter reads what a store's one writer has done (SQLite's); the
// server's /metrics reports the syncs of its logs from it.
type WriterReporter interface {
	WriterStats() WriterStats
}

// WriteTimes is where a write's time went, for a caller that asks
// (WithWriteTimes): Waited from the call until the store's writer began
// the write (behind the writes it was running), Wrote from then until the
// write was committed (its own statements, the others of its group commit
// and the commit), Synced from then until the write was on disk (a sync
// of the log after the commit, when the store syncs that way). A store
// that does not measure a phase leaves it 0. SQLite fills it for the
// writes that go through its group commit (AppendMessages among them).
// PostgreSQL fills it for the writes of a user's transaction: Waited
// until the user's lock was taken (a pooled connection, BEGIN and the
// lock), Wrote until the commit returned (which waits for the log
// itself), Synced 0.
type WriteTimes struct {
	Waited, Wrote, Synced time.Duration
	// Behind is what the writer ran while the write waited (SQLite,
	// when the context asks: WithWaitSplit):
	// the three parts of Waited that took longest, longest first, each
	// the time the writer spent on one kind of thing meanwhile. A part
	// is named by a write (its store operation, as in
	// WriterStats.ByWrite), or "checkpoint" (the writer's own
	// checkpoints, and its look at whether one is due), "connection"
	// (taking the writer's connection, which the job queue's own
	// transactions also hold, and beginning the transaction), "commit"
	// (the commits of the batches before), or "committer" (what the
	// group commit did between those: answering the callers, taking
	// the next requests, and any wait for a processor); "unrecorded"
	// is a part older than the writer's record of its work reaches,
	// and "other" gathers kinds past the sixteenth. Unused parts are
	// zero.
	Behind [3]WaitPart
}

// WaitPart is a part of a write's wait for the writer: what the writer
// ran meanwhile, and for how long.
type WaitPart struct {
	What string
	D    time.Duration
}

type writeTimesKey struct{}

// WithWriteTimes returns ctx carrying t: the store's writes made with the
// returned context record their timings in t. One t serves one write at a
// time.
func WithWriteTimes(ctx context.Context, t *WriteTimes) context.Context {
	return context.WithValue(ctx, writeTimesKey{}, t)
}

// WriteTimesFrom returns the WriteTimes ctx carries, or nil.
func WriteTimesFrom(ctx context.Context) *WriteTimes {
	t, _ := ctx.Value(writeTimesKey{}).(*WriteTimes)
	return t
}

type waitSplitKey struct{}

// WithWaitSplit returns ctx asking the store to fill WriteTimes.Behind
// too, for the writes made with it that record their times
// (WithWriteTimes). The split costs the store's one writer a few
// microseconds a write (about 30 ns for each of the writer's stretches of
// work during the wait), which a benchmark spends and a server's metrics
// do not.
func WithWaitSplit(ctx context.Context) context.Context {
	return context.WithValue(ctx, waitSplitKey{}, true)
}

// WaitSplitFrom reports whether ctx asks for WriteTimes.Behind.
func WaitSplitFrom(ctx context.Context) bool {
	split, _ := ctx.Value(waitSplitKey{}).(bool)
	return split
}
