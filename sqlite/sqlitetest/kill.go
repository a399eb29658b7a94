package sqlitetest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/memento-ai/memento/sqlite"
)

// A kill test checks what a store keeps when its process dies by SIGKILL
// in the middle of writing. The test re-executes its own binary to run one
// test function, the child, which writes to a store and calls Ack for each
// write once it returned; KillChild kills the child after enough of them,
// and the test then reopens the store and looks for every acknowledged
// write.

// childEnv hands a child process the path of its store. Only the child
// has it set, so the child's test function runs and skips everywhere
// else.
const childEnv = "MEMENTO_SQLITETEST_CHILD_DB"

// ackPrefix marks the lines of a child's output that acknowledge a write,
// apart from what the test framework prints.
const ackPrefix = "ack "

// ChildStore opens the store of a child process started by KillChild. Run
// as an ordinary test, where there is no child, it skips tb.
func ChildStore(tb testing.TB) *sqlite.DB {
	tb.Helper()
	path := os.Getenv(childEnv)
	if path == "" {
		tb.Skip("run as a child process by sqlitetest.KillChild")
	}
	return OpenPath(tb, path, Options())
}

// Ack reports from a child process that the write named id is durable:
// the call that made it has returned. Goroutines may call it at once: each
// acknowledgement is written whole, in one write to standard output.
func Ack(id string) {
	fmt.Println(ackPrefix + id)
}

// KillChild runs the test function named test in a child process (the test
// binary again) with its store at path, waits until the child has
// acknowledged acks writes, kills it with SIGKILL and returns the ids of
// every write it acknowledged, those it printed while dying included. It
// fails tb, with the child's output, when the child stops before acks
// writes, and skips tb on Windows, which has no SIGKILL.
func KillChild(tb testing.TB, test, path string, acks int) []string {
	tb.Helper()
	if runtime.GOOS == "windows" {
		tb.Skip("needs SIGKILL")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+path)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start child %s: %v", test, err)
	}
	var acked []string
	var other strings.Builder // what the child printed besides its acks
	sc := bufio.NewScanner(out)
	read := func() {
		line := sc.Text()
		if id, ok := strings.CutPrefix(line, ackPrefix); ok {
			acked = append(acked, id)
		} else {
			fmt.Fprintln(&other, line)
		}
	}
	for len(acked) < acks && sc.Scan() {
		read()
	}
	// Kill while the child keeps writing, then drain what it printed
	// before dying: those writes were acknowledged too.
	if err := cmd.Process.Kill(); err != nil {
		tb.Fatalf("kill child %s: %v", test, err)
	}
	for sc.Scan() {
		read()
	}
	_ = cmd.Wait()
	if len(acked) < acks {
		tb.Fatalf("child %s acknowledged only %d writes, want %d; its output:\n%s%s", test, len(acked), acks, other.String(), stderr.String())
	}
	return acked
}
