//go:build !unix

package sqlite

import "errors"

// processLock is not available without flock(2): the lease alone tells a
// dead queue process (see lease_lock_unix.go).
type processLock struct{}

// lockProcess fails: there is no lock to hold.
func lockProcess(string) (*processLock, error) {
	return nil, errors.New("process locks need flock(2)")
}

// release does nothing.
func (*processLock) release() {}

// probeProcess cannot tell.
func probeProcess(string) lockState { return lockUnknown }

// fileLock is not available without flock(2); without it there is no
// intake either (openIntake), so nothing needs it.
type fileLock struct{}

// lockFile holds nothing.
func lockFile(string, bool) (*fileLock, error) { return &fileLock{}, nil }

// unlock does nothing.
func (*fileLock) unlock() {}
