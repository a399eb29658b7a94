package sqlite

import (
	"os"
	"sync/atomic"
)

// Counting the pages the writer appends to the log.
//
// A commit in WAL mode appends a frame to the log for every page the
// transaction changed, whole, however little of it changed: an append that
// adds one row to a table, three indexes and a full-text index writes a
// page of each, and the interior pages above them when a page splits. The
// pages a write costs are what the log syncs wait on and what the
// checkpoints copy back into the database file, and they can be counted
// exactly, where timings on a shared disk cannot: the wal-index header
// (the -shm file, read as the checkpointer reads it) holds mxFrame, the
// number of frames in the log, which only a commit moves. The committer
// reads it before and after each COMMIT; no other commit can come
// between, since the committer holds the write lock. A COMMIT that begins
// the log again after a checkpoint (which changes the header's salt)
// leaves mxFrame at the pages it wrote.

// logPages counts the pages one database's committer appends to its log.
type logPages struct {
	shm   *os.File
	pages atomic.Int64
}

// openLogPages opens the wal-index of the database at dbPath for reading;
// nil when it cannot (a database not in WAL mode), and then nothing is
// counted.
func openLogPages(dbPath string) *logPages {
	f, err := os.Open(dbPath + "-shm")
	if err != nil {
		return nil
	}
	return &logPages{shm: f}
}

// mark reads the log's header before a COMMIT.
func (l *logPages) mark() (walIndex, bool) {
	if l == nil {
		return walIndex{}, false
	}
	return readWALIndex(l.shm)
}

// count adds the pages of the COMMIT that followed mark, which returned
// before and ok. A header that could not be read (torn by a concurrent
// update, which the write lock makes all but impossible) counts nothing.
func (l *logPages) count(before walIndex, ok bool) {
	if l == nil || !ok {
		return
	}
	h, ok := readWALIndex(l.shm)
	if !ok {
		return
	}
	switch {
	case h.salt != before.salt:
		l.pages.Add(int64(h.frames)) // the log began again at this commit
	case h.frames >= before.frames:
		l.pages.Add(int64(h.frames - before.frames))
	}
}

// total returns the pages counted so far.
func (l *logPages) total() int64 {
	if l == nil {
		return 0
	}
	return l.pages.Load()
}

// close closes the wal-index, once nothing commits any more.
func (l *logPages) close() {
	if l != nil {
		l.shm.Close()
	}
}
