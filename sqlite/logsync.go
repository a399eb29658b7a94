package sqlite

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memento-ai/memento"
)

// Syncing the log after the commit, off the writer.
//
// At synchronous=FULL a COMMIT writes its frames to the write-ahead log
// and waits for an fsync of it before it returns: half a millisecond to
// several on this machine, during which the one writer runs nothing
// else. At a steady 500 acknowledgements a second that wait was a fifth
// of the writer's time. The committer instead commits the batches that
// are waited on at NORMAL too (durability.go), which writes the frames
// without waiting for the disk, numbers the commit and answers its
// callers with that number; each caller then waits, before it returns,
// until an fsync of the log that began after that commit has ended. A
// caller whose commit no fsync has begun after runs one itself, for
// every commit numbered so far, beside one already running if need be
// (at most logSyncsAtOnce); the others wait for it, or for the next. So
// the writer goes on to the next batch meanwhile, the commits that end
// during one fsync share the next, a commit waits for one fsync rather
// than the end of a running one and then its own, and a lone
// acknowledgement pays no handover to another goroutine.
//
// The guarantee is the same as FULL's. An fsync of the log file makes
// every frame written to it before the call durable, whichever
// descriptor wrote them, and a recovery keeps the log's commits up to
// the last whole one, so a commit acknowledged after the fsync survives
// a power loss. The log may restart meanwhile (after a checkpoint has
// copied every frame into the database and synced it) or be cut back to
// its size limit; both happen to the same file, which the syncer's
// descriptor keeps. What differs is visibility: a reader can see a write
// before its caller hears that it is kept, as the writes of jobs could
// already.
//
// The syncer keeps its own descriptors of the log, one for each sync that
// may run at once, each opened at its first sync; if the path names
// another file by then (the log was deleted and made again, which SQLite
// does only when the last connection closes), it opens the new one.

// logSyncsAtOnce bounds the syncs of one log that run at once. A commit
// that ends while a sync runs needs a sync that begins after it; waiting
// for the running one to end before starting it made an acknowledgement
// wait for up to two syncs, one after the other. Starting the second at
// once lets the disk take both; more than two would add syncs for the
// disk to flush without shortening any wait by much.
const logSyncsAtOnce = 2

// logSyncer numbers the commits whose callers wait for the disk and
// syncs the log for them.
type logSyncer struct {
	path string // the log's path: the database's path + "-wal"

	mu   sync.Mutex
	cond *sync.Cond // signalled when a sync ends
	// sync makes the log durable through descriptor slot (syncLog);
	// tests replace it.
	sync func(slot int) error
	// committed numbers the commits handed over; started is the cover of
	// the last sync begun, synced the greatest one an ended sync covered;
	// running counts the syncs under way and busy marks the descriptors
	// they use. failedTo and err are the failed syncs' greatest cover
	// and last error: callers up to failedTo not synced before hear err.
	committed, started, synced, failedTo int64
	running                              int
	busy                                 [logSyncsAtOnce]bool
	err                                  error
	closed                               bool

	// fmu guards f: the log, one descriptor per sync that may run at
	// once, each opened at its first sync. Each sync has a descriptor of
	// its own because Linux reports a failed write of a file's pages to
	// the next sync of each open descriptor once: two syncs sharing one
	// could each leave the failure to the other, and one would report
	// success for pages that were lost.
	fmu sync.Mutex
	f   [logSyncsAtOnce]*os.File

	// syncs counts the fsyncs and syncing the nanoseconds they took,
	// and times how long each took; for WriterStats.
	syncs, syncing atomic.Int64
	times          memento.Durations
}

func newLogSyncer(dbPath string) *logSyncer {
	l := &logSyncer{path: dbPath + "-wal"}
	l.cond = sync.NewCond(&l.mu)
	l.sync = l.syncLog
	return l
}

// commit numbers a commit that has returned; its callers pass the number
// to wait.
func (l *logSyncer) commit() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.committed++
	return l.committed
}

// wait returns once a sync of the log that began after commit n has
// ended, starting that sync unless one has begun since n or
// logSyncsAtOnce run; or the error of a sync that should have covered n.
func (l *logSyncer) wait(n int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		// A failure is checked first: it fails every commit that any
		// sync begun by then covers (runSync), also one a sync beside it
		// reported kept.
		if n <= l.failedTo {
			return l.err
		}
		if l.synced >= n {
			return nil
		}
		if l.started >= n || l.running == logSyncsAtOnce {
			l.cond.Wait()
			continue
		}
		l.runSync()
	}
}

// runSync syncs the log for every commit numbered so far, with l.mu held
// on entry and on return (not while the disk syncs). A sync is running
// fewer than logSyncsAtOnce, so a descriptor is free.
func (l *logSyncer) runSync() {
	slot := 0
	for l.busy[slot] {
		slot++
	}
	l.busy[slot] = true
	l.running++
	cover, sync := l.committed, l.sync
	l.started = max(l.started, cover)
	l.mu.Unlock()
	start := time.Now()
	err := sync(slot)
	took := time.Since(start)
	l.syncs.Add(1)
	l.syncing.Add(int64(took))
	l.times.Add(took)
	l.mu.Lock()
	l.busy[slot] = false
	l.running--
	if err != nil {
		// Every commit this sync covered may be lost. Those of a sync
		// begun beside it are failed too, whatever that sync reports:
		// the lost pages may have been theirs. Each descriptor should
		// hear of a failed write-back once, but overlapping syncs of
		// one file are a path the kernels' checks of errors have
		// changed on, and a false failure costs a retry where a false
		// success loses a message.
		l.failedTo = max(l.failedTo, l.started)
		l.err = fmt.Errorf("the write is committed but the log could not be synced to disk, so it may not survive a power loss: %w", err)
	} else {
		l.synced = max(l.synced, cover)
	}
	l.cond.Broadcast()
}

// close syncs what is committed, once the committer has stopped, so that
// callers still to wait find their commits synced, and closes the log.
func (l *logSyncer) close() {
	l.mu.Lock()
	for l.running > 0 {
		l.cond.Wait()
	}
	if !l.closed && l.synced < l.committed {
		l.runSync()
	}
	l.closed = true
	l.mu.Unlock()
	l.fmu.Lock()
	defer l.fmu.Unlock()
	for i, f := range l.f {
		if f != nil {
			f.Close()
			l.f[i] = nil
		}
	}
}

// syncLog fsyncs the log file through descriptor slot, opening it first
// if need be. Only the sync that took the slot uses its descriptor.
func (l *logSyncer) syncLog(slot int) error {
	l.fmu.Lock()
	f, err := l.open(slot)
	l.fmu.Unlock()
	if err != nil {
		return err
	}
	if err := dataSync(f); err != nil {
		return fmt.Errorf("sync %s: %w", l.path, err)
	}
	return nil
}

// open returns descriptor slot of the log, opening it unless it names
// the file at the path, with l.fmu held.
func (l *logSyncer) open(slot int) (*os.File, error) {
	cur, err := os.Stat(l.path)
	if err != nil {
		return nil, fmt.Errorf("find the log: %w", err)
	}
	if f := l.f[slot]; f != nil {
		held, err := f.Stat()
		if err == nil && os.SameFile(held, cur) {
			return f, nil
		}
		f.Close()
		l.f[slot] = nil
	}
	f, err := os.OpenFile(l.path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("open the log: %w", err)
	}
	l.f[slot] = f
	return f, nil
}
