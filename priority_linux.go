package memento

import "syscall"

// threadNice reads the calling thread's nice value. Linux keeps one per
// thread; getpriority(2) reports it as 20 minus the nice value.
func threadNice() (int, error) {
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
	if err != nil {
		return 0, err
	}
	return 20 - p, nil
}

// setThreadNice sets the calling thread's nice value.
func setThreadNice(n int) error {
	return syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), n)
}
