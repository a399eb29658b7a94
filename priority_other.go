//go:build !linux

package memento

import "errors"

var errNoThreadPriority = errors.New("this system gives threads no priority of their own")

func threadNice() (int, error) { return 0, errNoThreadPriority }

func setThreadNice(int) error { return errNoThreadPriority }
