package torture

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// setDeathSignal makes the kernel kill the child when this process dies,
// so an interrupted torture run leaves no server behind.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// ProcMemory reads a process's resident memory from /proc/PID/status:
// VmRSS now and VmHWM, its peak, in bytes.
func ProcMemory(pid int) (rss, peak int64, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0, fmt.Errorf("read memory of process %d: %w", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, v, ok := strings.Cut(line, ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		f := strings.Fields(v) // "123456 kB"
		if len(f) != 2 || f[1] != "kB" {
			return 0, 0, fmt.Errorf("read memory of process %d: unexpected %s line %q", pid, name, line)
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("read memory of process %d: %s: %w", pid, name, err)
		}
		if name == "VmRSS" {
			rss = n << 10
		} else {
			peak = n << 10
		}
	}
	return rss, peak, nil
}
