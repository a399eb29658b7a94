package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"sync/atomic"
	"time"
)

// Background checkpoints.
//
// In WAL mode a commit appends pages to the write-ahead log; a checkpoint
// copies them back into the database file and fsyncs it. SQLite's own
// automatic checkpoint runs inside the COMMIT that takes the log past 1,000
// pages, so one unlucky write in a few hundred paid for copying the pages
// of all the others and for an fsync of the (large) database file: that
// was the tail of the ingest latency. The writer therefore runs with
// wal_autocheckpoint=0, and the walCheckpointer below, started by Open and
// stopped by Close, checkpoints from a connection of its own.

// Defaults of the checkpoint options.
const (
	DefaultCheckpointPages = 1000
	DefaultCheckpointIdle  = time.Second
)

// checkpointPoll is how often the checkpointer reads the log's size. A
// read is one pread of the wal-index header, a few microseconds.
const checkpointPoll = 20 * time.Millisecond

// checkpointBound is how many times CheckpointPages of log the writer
// lets accumulate before it checkpoints itself (see DB.boundWAL).
const checkpointBound = 10

// writebackHeld is how many writes must have waited for the writer's
// last checkpoint for the checkpointer to write back what it copies
// (walCheckpointer.writeBack): more than one, which a single client
// writing one thing at a time never makes wait.
const writebackHeld = 2

// checkpointFallback is how often the checkpointer runs a PASSIVE
// checkpoint when it cannot read the wal-index: without the log's size it
// checkpoints on a timer.
const checkpointFallback = time.Second

// walCheckpointer checkpoints one database's write-ahead log in the
// background: a PASSIVE checkpoint (which never waits for, nor blocks,
// readers or the writer) whenever the log holds at least pages pages not
// yet copied into the database, or any once no write has come for idle;
// and, once idle, a TRUNCATE checkpoint (which empties the log file) if
// the file is larger than limit bytes, so it does not keep the size of its
// largest burst.
//
// A log file within limit is left as it is: SQLite writes the log from its
// start again after a checkpoint, so a file of the right size is
// overwritten in place, and an fsync of overwritten pages is faster than
// one that also grows the file (on the development machine's ext4 a
// 32 KiB fdatasync took p50 0.11-0.15ms and p99 1.3-1.9ms overwriting,
// 0.20-0.29ms and 3.6-4.0ms growing the file). The writer's
// journal_size_limit (limit) truncates a longer file back when the log
// restarts.
type walCheckpointer struct {
	conn *sql.DB  // one read-write connection, busy_timeout 0
	shm  *os.File // the wal-index, read-only; nil if it cannot be opened
	// file is the database file, read-only, whose checkpointed pages
	// writeBack hands to the disk; nil if it cannot be opened.
	file    *os.File
	walPath string
	pages   uint64
	limit   int64 // bytes
	idle    time.Duration
	logger  *slog.Logger

	cancel context.CancelFunc
	done   chan struct{}

	// Counters, for tests and diagnostics: checkpoints by the
	// checkpointer, checkpoints it could not complete (readers or
	// another checkpointer in the way), and checkpoints by the writer.
	passives, truncates, busy, bounds atomic.Int64
	// bounding is the nanoseconds the writer spent on its checkpoints.
	bounding atomic.Int64
	// writebacks counts writeBack's calls that handed pages to the
	// disk, and writingBack the nanoseconds they took.
	writebacks, writingBack atomic.Int64
	// writtenTo is the frames checkpointed when writeBack last ran, and
	// writebackOff says the file system refused it; only the loop's
	// goroutine touches them.
	writtenTo    int64
	writebackOff bool
	// held is the writes that waited for the committer when the
	// writer's last checkpoint ended (writeBack).
	held atomic.Int64
}

// startCheckpointer opens the checkpointer's connection and starts its
// goroutine, which runs until stop.
func (db *DB) startCheckpointer() error {
	conn, err := sql.Open("sqlite", db.checkpointDSN())
	if err != nil {
		return fmt.Errorf("open checkpointer: %w", err)
	}
	conn.SetMaxOpenConns(1)
	conn.SetMaxIdleConns(1)
	conn.SetConnMaxLifetime(0)
	conn.SetConnMaxIdleTime(0)
	ctx, cancel := context.WithCancel(context.Background())
	c := &walCheckpointer{
		conn: conn, walPath: db.path + "-wal",
		pages: uint64(db.opts.CheckpointPages), limit: db.walLimit(), idle: db.opts.CheckpointIdle, logger: db.logger,
		cancel: cancel, done: make(chan struct{}),
	}
	if err := conn.PingContext(ctx); err != nil {
		cancel()
		conn.Close()
		return fmt.Errorf("open checkpointer: %w", err)
	}
	if c.shm, err = os.Open(db.path + "-shm"); err != nil {
		c.shm = nil
		c.logger.Warn("sqlite: cannot read the wal-index; checkpointing on a timer", "err", err)
	}
	if c.file, err = os.Open(db.path); err != nil {
		c.file = nil
		c.logger.Warn("sqlite: cannot open the database file; the writer's checkpoints write what the checkpointer copied", "err", err)
	}
	db.ckpt = c
	go c.loop(ctx)
	return nil
}

// checkpointDSN is the data source name of the checkpointer's connection.
// busy_timeout is 0: a TRUNCATE checkpoint holds the write lock while it
// waits for readers, so it must give up at once rather than stall the
// writer; it is tried again at the next idle moment. synchronous is the
// writer's, which decides whether a checkpoint fsyncs the database file.
func (db *DB) checkpointDSN() string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(0)")
	q.Add("_pragma", "synchronous("+db.opts.Synchronous+")")
	return "file:" + (&url.URL{Path: db.path}).EscapedPath() + "?" + q.Encode()
}

// stop ends the goroutine, interrupting a checkpoint in progress (SQLite
// checkpoints can stop anywhere and resume later), and closes the
// connection.
func (c *walCheckpointer) stop() error {
	c.cancel()
	<-c.done
	if err := c.conn.Close(); err != nil {
		return fmt.Errorf("close checkpointer: %w", err)
	}
	return nil
}

// closeFiles closes the wal-index and the database file, which the
// checkpointer reads and writes back with descriptors of its own. The DB
// calls it after its last connection has closed: SQLite locks both files
// with POSIX advisory locks, which are the process's, and closing any
// descriptor of a file releases every one of them on that file, those of
// the connections still open included.
func (c *walCheckpointer) closeFiles() {
	if c.shm != nil {
		c.shm.Close()
	}
	if c.file != nil {
		c.file.Close()
	}
}

// loop polls the log's size until ctx is done.
func (c *walCheckpointer) loop(ctx context.Context) {
	defer close(c.done)
	tick := time.NewTicker(checkpointPoll)
	defer tick.Stop()
	var last walIndex // the header as last seen
	lastWrite := time.Now()
	lastTimed := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := time.Now()
		h, ok := readWALIndex(c.shm)
		if !ok {
			// Without the size (no wal-index, or one this code cannot
			// read) fall back on the clock; a header read while a
			// writer changed it is read again at the next tick.
			if now.Sub(lastTimed) >= checkpointFallback {
				c.checkpoint(ctx, "PASSIVE")
				lastTimed = now
			}
			continue
		}
		lastTimed = now
		if h.change != last.change || h.frames != last.frames {
			last, lastWrite = h, now
		}
		switch {
		case uint64(h.backlog()) >= c.pages:
			c.checkpoint(ctx, "PASSIVE")
		case c.pastBound(h) && h.backlog() > 0:
			// The writer restarts the log once little is left to
			// copy (writerDue): copy what there is.
			c.checkpoint(ctx, "PASSIVE")
		case now.Sub(lastWrite) >= c.idle && h.backlog() > 0:
			c.checkpoint(ctx, "PASSIVE")
			if h, ok := readWALIndex(c.shm); !ok || h.backlog() > 0 {
				// A reader of an older snapshot, or another
				// checkpointer, was in the way: wait another idle
				// period.
				lastWrite = now
			}
		case now.Sub(lastWrite) >= c.idle && c.walBytes() > c.limit:
			if !c.checkpoint(ctx, "TRUNCATE") {
				lastWrite = now // readers were in the way: wait another idle period
			}
		default:
			continue
		}
		// What the checkpoint itself changed in the header is not a
		// write.
		if h, ok := readWALIndex(c.shm); ok {
			last = h
		}
	}
}

// checkpoint runs one checkpoint of the given mode and reports whether it
// completed (copied every page it was allowed to and, for TRUNCATE,
// emptied the log).
func (c *walCheckpointer) checkpoint(ctx context.Context, mode string) bool {
	var busy, logPages, done int64
	err := c.conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(`+mode+`)`).Scan(&busy, &logPages, &done)
	switch {
	case ctx.Err() != nil:
		return false
	case err != nil:
		c.logger.Warn("sqlite: checkpoint failed", "mode", mode, "err", err)
		return false
	case busy != 0:
		c.busy.Add(1)
		return false
	}
	if mode == "TRUNCATE" {
		c.truncates.Add(1)
	} else {
		c.passives.Add(1)
	}
	if done > 0 && done != c.writtenTo {
		c.writeBack(done)
	}
	return true
}

// writeBack starts writing to the disk the database pages that a
// checkpoint copied from the log up to done while the writer went on
// writing.
//
// SQLite syncs the database file only at the end of a checkpoint that
// copies the whole log, the only kind after which the log may start over.
// A checkpoint that a later commit overtook (every one of the
// checkpointer's while the writes keep coming) leaves the pages it copied
// in the page cache. The writer's own checkpoint (boundWAL), which copies
// the last few pages and lets the log start over, then synced all of
// them, megabytes written at random places of the file, while every write
// waited: 15.8 ms at the median and 30.1 ms at the 90th percentile at 500
// messages a second, and the slowest acknowledgements waited mostly
// behind it. So the checkpointer hands the copied pages to the disk
// itself (sync_file_range on Linux, which neither waits for the disk nor
// flushes its cache), and the writer's sync is left the pages copied
// since: 3.0 ms at the median and 17.6 at the 90th percentile; the
// writer's checkpoints took 0.7-1.0 % of the time instead of 2.0-3.7 %,
// and the acknowledgements' 99th percentile at 500 messages a second had
// a median of 26 ms over nine rounds against 36 over seventeen
// (docs/BENCHMARKS.md, twenty-sixth session).
//
// Only while the writer's checkpoints hold several writes
// (writebackHeld): the pages handed to the disk lengthen the flushes of
// its cache that the acknowledgements' syncs of the log wait for, which
// costs more than a checkpoint that holds one write. One client
// appending a message at a time, whose append is the one write a
// checkpoint holds, had a 99th percentile of 4.2-6.0 ms with writebacks
// after every copy and 2.1-3.4 with this bound.
//
// After every such copy rather than only near the log's bound: handing
// the disk half a log's pages at once (a build not kept) left the
// acknowledgements' 99th percentile at 33-43 ms, the slowest waiting
// behind the writer's connection and appends instead. Durability is
// SQLite's as before: this only writes earlier what its syncs would
// write. A file system that refuses the call is warned about once and
// not asked again.
func (c *walCheckpointer) writeBack(done int64) {
	h, ok := readWALIndex(c.shm)
	if c.file == nil || c.writebackOff || !ok || h.backlog() == 0 || c.held.Load() < writebackHeld {
		return // a log copied whole was synced by SQLite
	}
	start := time.Now()
	if err := startWriteback(c.file); err != nil {
		c.writebackOff = true
		c.logger.Warn("sqlite: cannot start writing the checkpointed pages to the disk; the writer's checkpoints will write them", "err", err)
		return
	}
	c.writtenTo = done
	c.writebacks.Add(1)
	c.writingBack.Add(int64(time.Since(start)))
}

// walLimit is the size in bytes the log may keep: the log of
// checkpointBound times CheckpointPages pages of 4 KiB (SQLite's default
// page size), 40 MB by default.
func (db *DB) walLimit() int64 {
	return int64(checkpointBound) * int64(db.opts.CheckpointPages) * 4096
}

// overdue reports whether the log holds checkpointBound times
// CheckpointPages pages and some of them are still to be copied.
func (c *walCheckpointer) overdue() bool {
	h, ok := readWALIndex(c.shm)
	return ok && c.pastBound(h) && h.backlog() > 0
}

// pastBound reports whether the log of header h holds checkpointBound
// times CheckpointPages pages.
func (c *walCheckpointer) pastBound(h walIndex) bool {
	return uint64(h.frames) >= checkpointBound*c.pages
}

// writerDue reports whether the writer, between two transactions, should
// checkpoint the log of header h itself (boundWAL). Every write waits
// while it does, so it does only once the rest to copy is small: past the
// bound the checkpointer copies the log at each of its polls, and the
// writer copies what the last batches added after it (up to an eighth of
// CheckpointPages). The writer copies more only when the checkpointer
// has stopped (alive false) or cannot keep up, the log at twice its
// bound.
func (c *walCheckpointer) writerDue(h walIndex, alive bool) bool {
	if !c.pastBound(h) || h.backlog() == 0 {
		return false
	}
	return !alive || uint64(h.backlog()) <= max(1, c.pages/8) || uint64(h.frames) >= 2*checkpointBound*c.pages
}

// alive reports whether the checkpointer's goroutine runs.
func (c *walCheckpointer) alive() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// boundWAL keeps the log from growing without bound under a steady stream
// of writes; the writer calls it before each transaction. SQLite starts
// the log over from its beginning only when a write transaction begins
// with every frame copied into the database, and a checkpointer working
// beside a busy writer is always a few commits behind, so the log would
// grow as long as the writes keep coming. Once it is overdue, the writer
// runs a PASSIVE checkpoint itself, between two transactions, which lets
// its next transaction restart the log. That costs a copy of the last
// pages and an fsync of the database file once per checkpointBound times
// CheckpointPages of log (40 MB by default); SQLite's own automatic
// checkpoint did so every CheckpointPages, copying them all. Every write
// waits meanwhile (an acknowledgement waited 30-50 ms behind one at 500
// messages a second, when the writer copied the up to CheckpointPages
// the checkpointer had left), so the writer waits until the checkpointer
// has copied all but the last few pages (writerDue). PASSIVE waits for
// nobody: when the checkpointer or a reader is in the way, the next
// transaction tries again.
func (db *DB) boundWAL(ctx context.Context) {
	c := db.ckpt
	if c == nil {
		return
	}
	if h, ok := readWALIndex(c.shm); ok && c.writerDue(h, c.alive()) {
		db.checkpointNow(ctx, "PASSIVE")
	}
}

// settleWAL is boundWAL for bulk transactions, which write hundreds of
// megabytes of log each: the checkpointer is still copying one when the
// next begins, so boundWAL's PASSIVE checkpoint found it in the way every
// time and the log grew with the whole load (1.2 GB of log for 2.1 GB of
// database, 16.6 GB at ten million memories). A RESTART checkpoint waits
// for the checkpointer and for readers on the log (the writer's busy
// timeout), copies the rest and lets the next transaction write the log
// from its beginning.
func (db *DB) settleWAL(ctx context.Context) { db.checkpointOverdue(ctx, "RESTART") }

// checkpointOverdue runs a checkpoint of mode on the writer when the log
// is overdue.
func (db *DB) checkpointOverdue(ctx context.Context, mode string) {
	if c := db.ckpt; c != nil && c.overdue() {
		db.checkpointNow(ctx, mode)
	}
}

// checkpointNow runs a checkpoint of mode on the writer.
func (db *DB) checkpointNow(ctx context.Context, mode string) {
	c := db.ckpt
	var busy, logPages, done int64
	start := time.Now()
	err := db.write.QueryRowContext(ctx, `PRAGMA wal_checkpoint(`+mode+`)`).Scan(&busy, &logPages, &done)
	c.bounding.Add(int64(time.Since(start)))
	if db.commits != nil {
		c.held.Store(int64(db.commits.waiting()))
	}
	if err != nil {
		if ctx.Err() == nil {
			db.logger.Warn("sqlite: checkpoint by the writer failed", "mode", mode, "err", err)
		}
		return
	}
	c.bounds.Add(1)
}

// walBytes is the size of the log file; 0 when it is empty or missing.
func (c *walCheckpointer) walBytes() int64 {
	st, err := os.Stat(c.walPath)
	if err != nil {
		return 0
	}
	return st.Size()
}

// walIndex is what the checkpointer reads of the wal-index header, the
// first 136 bytes of the -shm file, whose layout is part of SQLite's file
// format (https://www.sqlite.org/walformat.html): two copies of the
// 48-byte WalIndexHdr, then WalCkptInfo. Fields are in native byte order.
type walIndex struct {
	change   uint32 // iChange: incremented by every write transaction
	frames   uint32 // mxFrame: the last valid frame of the log
	backfill uint32 // nBackfill: frames already copied into the database
	// salt is aSalt, which changes when a writer begins the log again
	// from its first frame after a checkpoint.
	salt uint64
}

// backlog is the number of committed pages not yet in the database file.
func (h walIndex) backlog() uint32 {
	if h.backfill >= h.frames {
		return 0
	}
	return h.frames - h.backfill
}

// walIndexVersion is WALINDEX_MAX_VERSION, the iVersion of every SQLite
// since 3.7.0.
const walIndexVersion = 3007000

// readWALIndex reads the header; ok is false when it cannot be read or a
// writer was changing it (the two copies differ).
func readWALIndex(f *os.File) (walIndex, bool) {
	var b [136]byte
	if f == nil {
		return walIndex{}, false
	}
	if _, err := f.ReadAt(b[:], 0); err != nil {
		return walIndex{}, false
	}
	ne := binary.NativeEndian
	if ne.Uint32(b[0:]) != walIndexVersion || b[12] != 1 || !bytes.Equal(b[0:48], b[48:96]) {
		return walIndex{}, false
	}
	return walIndex{change: ne.Uint32(b[8:]), frames: ne.Uint32(b[16:]), backfill: ne.Uint32(b[96:]), salt: ne.Uint64(b[32:])}, true
}
