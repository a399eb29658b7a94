package torture

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Server is one running Memento server a test drives.
type Server interface {
	// URL is its base URL, on loopback.
	URL() string
	// PID is its process id, or 0 when it is not a process of this
	// machine that the test may read.
	PID() int
	// Kill ends it at once, as SIGKILL does, and waits until it is gone.
	Kill() error
	// Stop asks it to shut down cleanly and waits, killing it when ctx
	// ends first.
	Stop(ctx context.Context) error
	// Exited reports whether it ended without being told to, and how.
	Exited() (bool, string)
	// Log is the tail of what it wrote to its standard error.
	Log() string
}

// Launcher starts servers on a store file and reads the store's job
// states, the only thing the tests need that the HTTP API does not show.
type Launcher interface {
	// Start starts a server on the store at db with extra arguments to
	// `memento serve`, and returns once it answers.
	Start(ctx context.Context, db string, args ...string) (Server, error)
	// JobStates counts the store's jobs by state (pending, running,
	// retrying, completed, failed).
	JobStates(ctx context.Context, db string) (map[string]int, error)
}

// Exec launches the memento binary as a child process, listening on a
// free loopback port that the child picks (--addr 127.0.0.1:0) and reports
// in its start-up log.
type Exec struct {
	// Binary is the memento executable (os.Executable() in the command).
	Binary string
	// Args are given to every `serve`, after the torture test's own, such
	// as --catalog or --llm-provider.
	Args []string
	// Env is added to this process's environment for the child.
	Env []string
	// StartTimeout bounds the wait for the child to listen; 0 means 60s.
	StartTimeout time.Duration
}

// Start runs `memento serve` on db and waits for its "memento serving" log
// line.
func (e *Exec) Start(ctx context.Context, db string, args ...string) (Server, error) {
	argv := append([]string{"serve", "--db", db, "--addr", "127.0.0.1:0", "--log-format", "json"}, e.Args...)
	argv = append(argv, args...)
	cmd := exec.Command(e.Binary, argv...)
	cmd.Env = append(os.Environ(), e.Env...)
	cmd.Stdout = io.Discard
	setDeathSignal(cmd)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("start server: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start server %s: %w", e.Binary, err)
	}
	c := &child{cmd: cmd, done: make(chan struct{}), ready: make(chan string, 1)}
	go c.readLog(stderr)
	go func() {
		err := cmd.Wait()
		c.mu.Lock()
		c.waitErr = err
		c.mu.Unlock()
		close(c.done)
	}()
	timeout := e.StartTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case u := <-c.ready:
		if err := checkLoopback(u); err != nil {
			c.Kill()
			return nil, fmt.Errorf("start server: %w", err)
		}
		c.url = u
		return c, nil
	case <-c.done:
		return nil, fmt.Errorf("start server: it exited before listening (%s); its log ends:\n%s", c.exitString(), c.Log())
	case <-timer.C:
		c.Kill()
		return nil, fmt.Errorf("start server: not listening after %s; its log ends:\n%s", timeout, c.Log())
	case <-ctx.Done():
		c.Kill()
		return nil, fmt.Errorf("start server: %w", ctx.Err())
	}
}

// JobStates runs `memento jobs list --json` on the store.
func (e *Exec) JobStates(ctx context.Context, db string) (map[string]int, error) {
	argv := []string{"jobs", "list", "--db", db, "--json", "--limit", "0", "--log-level", "error"}
	cmd := exec.CommandContext(ctx, e.Binary, argv...)
	cmd.Env = append(os.Environ(), e.Env...)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("list jobs of %s: %w: %s", db, err, truncate(string(ee.Stderr), 500))
		}
		return nil, fmt.Errorf("list jobs of %s: %w", db, err)
	}
	var jobs []struct {
		State string `json:"state"`
	}
	if err := json.Unmarshal(out, &jobs); err != nil {
		return nil, fmt.Errorf("list jobs of %s: decode: %w", db, err)
	}
	states := map[string]int{}
	for _, j := range jobs {
		states[j.State]++
	}
	return states, nil
}

// child is a server run by Exec.
type child struct {
	cmd   *exec.Cmd
	url   string
	done  chan struct{}
	ready chan string

	mu      sync.Mutex
	tail    []string
	waitErr error
	ended   bool // Kill or Stop was called: an exit is not a crash
}

// logTail is how many lines of the child's log are kept for reports.
const logTail = 40

func (c *child) readLog(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	sent := false
	for sc.Scan() {
		line := sc.Text()
		c.mu.Lock()
		c.tail = append(c.tail, line)
		if len(c.tail) > logTail {
			c.tail = c.tail[len(c.tail)-logTail:]
		}
		c.mu.Unlock()
		if sent {
			continue
		}
		var rec struct {
			Msg string `json:"msg"`
			URL string `json:"url"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "memento serving" && rec.URL != "" {
			c.ready <- rec.URL
			sent = true
		}
	}
	// Keep draining whatever is left so the child never blocks on a full
	// pipe.
	_, _ = io.Copy(io.Discard, r)
}

func (c *child) URL() string { return c.url }

func (c *child) PID() int { return c.cmd.Process.Pid }

func (c *child) Kill() error {
	c.mu.Lock()
	c.ended = true
	c.mu.Unlock()
	select {
	case <-c.done:
		return nil
	default:
	}
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill server %d: %w", c.PID(), err)
	}
	<-c.done
	return nil
}

func (c *child) Stop(ctx context.Context) error {
	c.mu.Lock()
	c.ended = true
	c.mu.Unlock()
	select {
	case <-c.done:
		return nil
	default:
	}
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop server %d: %w", c.PID(), err)
	}
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		_ = c.Kill()
		return fmt.Errorf("stop server %d: it did not stop in time and was killed", c.PID())
	}
}

func (c *child) Exited() (bool, string) {
	select {
	case <-c.done:
	default:
		return false, ""
	}
	c.mu.Lock()
	ended := c.ended
	c.mu.Unlock()
	if ended {
		return false, ""
	}
	return true, c.exitString()
}

func (c *child) exitString() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waitErr != nil {
		return c.waitErr.Error()
	}
	return "exit status 0"
}

func (c *child) Log() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.tail, "\n")
}

// checkLoopback refuses a server URL whose host is not a loopback
// address: the torture tests never send their traffic anywhere else.
func checkLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("server URL must be http://host:port, got %q", raw)
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("server URL %q is not on loopback: the torture tests only talk to 127.0.0.1 or ::1", raw)
	}
	return nil
}

// CheckLoopback is checkLoopback for the command's --url.
func CheckLoopback(raw string) error { return checkLoopback(raw) }
