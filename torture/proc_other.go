//go:build !linux

package torture

import (
	"errors"
	"os/exec"
)

func setDeathSignal(*exec.Cmd) {}

// ProcMemory needs /proc; elsewhere the load test reads /metrics instead.
func ProcMemory(pid int) (rss, peak int64, err error) {
	return 0, 0, errors.New("reading a process's memory needs Linux's /proc")
}
