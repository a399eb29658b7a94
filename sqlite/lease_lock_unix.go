//go:build unix

package sqlite

import (
	"errors"
	"os"
	"syscall"
)

// A started queue also holds an exclusive flock(2) on a file of its own
// next to the database, for as long as it runs. The kernel drops the lock
// the moment the process dies, however it dies, so another queue on the
// file can tell at once that a process whose lease has not run out yet is
// gone, and rescue its jobs without waiting for the lease: a restart after
// kill -9 rescues them when it starts. Every process that shares a
// database in WAL mode runs on one host (the WAL index is shared memory),
// so they all see the same locks. Where no lock can be had (a read-only
// directory, a platform without flock), the lease alone decides.

// processLock is the lock a running queue process holds on its file.
type processLock struct {
	f    *os.File
	path string
}

// lockProcess creates the file at path and locks it for the calling
// process.
func lockProcess(path string) (*processLock, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return &processLock{f: f, path: path}, nil
}

// release removes the file and drops the lock. Removing first means a
// process that finds the file and gets its lock is sure its owner is gone.
func (l *processLock) release() {
	_ = os.Remove(l.path)
	_ = l.f.Close()
}

// probeProcess tells whether the queue process whose lock file is at path
// is alive (someone holds the lock) or gone (the file exists and nobody
// holds it; probeProcess then removes the file). A missing or unopenable
// file proves nothing: lockUnknown.
func probeProcess(path string) lockState {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return lockUnknown
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return lockHeld
		}
		return lockUnknown
	}
	_ = os.Remove(path)
	return lockGone
}

// fileLock is a lock on a file that many processes may hold shared and
// one alone exclusive (flock(2)); the kernel drops it when its holder
// dies.
type fileLock struct{ f *os.File }

// lockFile creates the file at path and locks it: exclusive, failing at
// once if anyone holds it, or shared, waiting while someone holds it
// exclusive.
func lockFile(path string, exclusive bool) (*fileLock, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX | syscall.LOCK_NB
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &fileLock{f: f}, nil
}

// unlock drops the lock. The file stays: another process may hold it.
func (l *fileLock) unlock() {
	if l != nil {
		_ = l.f.Close()
	}
}
