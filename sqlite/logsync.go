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
// until an fsync of the log that began after that commit has ended. The
// first caller to find no fsync running runs one itself, for every
// commit numbered so far; the others wait for it, or for the next. So the
// writer goes on to the next batch meanwhile, the commits that end during
// one fsync share the next, and a lone acknowledgement pays no handover
// to another goroutine.
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
// The syncer keeps its own descriptor of the log, opened at its first
// sync; if the path names another file by then (the log was deleted and
// made again, which SQLite does only when the last connection closes),
// it opens the new one.

// logSyncer numbers the commits whose callers wait for the disk and
// syncs the log for them.
type logSyncer struct {
	path string // the log's path: the database's path + "-wal"

	mu   sync.Mutex
	cond *sync.Cond // signalled when a sync ends
	// sync makes the log durable (syncLog); tests replace it.
	sync func() error
	// committed numbers the commits handed over; synced is the last one
	// an ended sync covered; running says a sync runs. failedTo and err
	// are the last failed sync's cover and error: callers up to failedTo
	// not synced before hear err.
	committed, synced, failedTo int64
	running                     bool
	err                         error
	closed                      bool

	fmu sync.Mutex // guards f
	f   *os.File   // the log, opened at the first sync

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
// ended, running that sync when none is running; or the error of the
// sync that should have covered n.
func (l *logSyncer) wait(n int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.synced < n {
		if n <= l.failedTo {
			return l.err
		}
		if l.running {
			l.cond.Wait()
			continue
		}
		l.runSync()
	}
	return nil
}

// runSync syncs the log for every commit numbered so far, with l.mu held
// on entry and on return (not while the disk syncs).
func (l *logSyncer) runSync() {
	l.running = true
	cover, sync := l.committed, l.sync
	l.mu.Unlock()
	start := time.Now()
	err := sync()
	took := time.Since(start)
	l.syncs.Add(1)
	l.syncing.Add(int64(took))
	l.times.Add(took)
	l.mu.Lock()
	l.running = false
	if err != nil {
		l.failedTo = cover
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
	for l.running {
		l.cond.Wait()
	}
	if !l.closed && l.synced < l.committed {
		l.runSync()
	}
	l.closed = true
	l.mu.Unlock()
	l.fmu.Lock()
	defer l.fmu.Unlock()
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

// syncLog fsyncs the log file, opening it first if need be.
func (l *logSyncer) syncLog() error {
	l.fmu.Lock()
	defer l.fmu.Unlock()
	if err := l.open(); err != nil {
		return err
	}
	if err := dataSync(l.f); err != nil {
		return fmt.Errorf("sync %s: %w", l.path, err)
	}
	return nil
}

// open opens the log unless the descriptor held names the file at the
// path.
func (l *logSyncer) open() error {
	cur, err := os.Stat(l.path)
	if err != nil {
		return fmt.Errorf("find the log: %w", err)
	}
	if l.f != nil {
		held, err := l.f.Stat()
		if err == nil && os.SameFile(held, cur) {
			return nil
		}
		l.f.Close()
		l.f = nil
	}
	f, err := os.OpenFile(l.path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("open the log: %w", err)
	}
	l.f = f
	return nil
}
