package sqlite

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Syncing the log after the commit, off the writer.
//
// At synchronous=FULL a COMMIT writes its frames to the write-ahead log
// and waits for an fsync of it before it returns: half a millisecond to
// several on this machine, during which the one writer runs nothing
// else. At a steady 500 acknowledgements a second that wait was a fifth
// of the writer's time. The committer instead commits the batches that
// are waited on at NORMAL too (durability.go), which writes the frames
// without waiting for the disk, and hands their requests to the log
// syncer: a goroutine that fsyncs the log file and only then answers
// every request whose commit returned before the fsync began. The writer
// goes on to the next batch meanwhile, and the commits that end while an
// fsync runs share the next one.
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

// logSyncer fsyncs a database's write-ahead log for the committer and
// answers the requests that waited for it.
type logSyncer struct {
	path string // the log's path: the database's path + "-wal"

	mu sync.Mutex
	// sync makes the log durable (syncLog); tests replace it.
	sync    func() error
	pending []*commitRequest
	closed  bool
	wake    chan struct{} // buffered: a group is pending
	stopped chan struct{}

	fmu sync.Mutex // guards f
	f   *os.File   // the log, opened at the first sync

	// syncs counts the fsyncs and syncing the nanoseconds they took; for
	// WriterStats.
	syncs, syncing atomic.Int64
}

func newLogSyncer(dbPath string) *logSyncer {
	l := &logSyncer{path: dbPath + "-wal", wake: make(chan struct{}, 1), stopped: make(chan struct{})}
	l.sync = l.syncLog
	go l.loop()
	return l
}

// after answers reqs, whose commit has returned, once an fsync of the
// log that began after it has ended.
func (l *logSyncer) after(reqs []*commitRequest) {
	if len(reqs) == 0 {
		return
	}
	l.mu.Lock()
	if l.closed {
		// Close waits for the committer before it closes the syncer,
		// so nothing comes after; should it, the request is answered
		// at once, synced.
		sync := l.sync
		l.mu.Unlock()
		err := sync()
		for _, r := range reqs {
			r.done <- err
		}
		return
	}
	l.pending = append(l.pending, reqs...)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// close answers what is pending, after a last fsync, and stops the
// syncer.
func (l *logSyncer) close() {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.wake)
	}
	l.mu.Unlock()
	<-l.stopped
	l.fmu.Lock()
	defer l.fmu.Unlock()
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

// loop syncs while requests wait, until close.
func (l *logSyncer) loop() {
	defer close(l.stopped)
	for range l.wake {
		l.round()
	}
	l.round() // what came between the last wake and close
}

// round takes every request waiting, fsyncs the log and answers them.
func (l *logSyncer) round() {
	l.mu.Lock()
	batch, sync := l.pending, l.sync
	l.pending = nil
	l.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	start := time.Now()
	err := sync()
	l.syncs.Add(1)
	l.syncing.Add(int64(time.Since(start)))
	if err != nil {
		err = fmt.Errorf("the write is committed but the log could not be synced to disk, so it may not survive a power loss: %w", err)
	}
	for _, r := range batch {
		r.done <- err
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
