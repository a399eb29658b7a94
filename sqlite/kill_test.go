package sqlite_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// helperEnv names the database a re-executed test binary writes to.
const helperEnv = "MEMENTO_SQLITE_KILL_HELPER_DB"

// TestHelperProcess is not a test: run by TestSIGKILLKeepsAcknowledgedWrites
// in a child process, it appends messages one by one, each with a job, and
// prints the id of each as soon as AppendMessages returned, until it is
// killed.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("run as a child process by TestSIGKILLKeepsAcknowledgedWrites")
	}
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path, sqlitetest.Options())
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(2)
	}
	s := memento.Scope{User: "ann"}
	for i := 0; ; i++ {
		id := fmt.Sprintf("m%06d", i)
		_, err := db.AppendMessages(ctx, s, "t1", []memento.Message{{ID: id, Role: memento.RoleUser, Text: "message " + id}}, messageJobs("extract", s))
		if err != nil {
			fmt.Fprintln(os.Stderr, "append:", err)
			os.Exit(2)
		}
		fmt.Println(id) // acknowledged
	}
}

func TestSIGKILLKeepsAcknowledgedWrites(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("needs SIGKILL")
	}
	const acks = 100
	path := filepath.Join(t.TempDir(), "kill.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child: %v", err)
	}
	var acked []string
	sc := bufio.NewScanner(out)
	for len(acked) < acks && sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "m") {
			acked = append(acked, line)
		}
	}
	// Kill while the child keeps writing, then drain what it printed
	// before dying: those ids were acknowledged too.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatalf("kill child: %v", err)
	}
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "m") {
			acked = append(acked, line)
		}
	}
	_ = cmd.Wait()
	if len(acked) < acks {
		t.Fatalf("child acknowledged only %d messages; stderr:\n%s", len(acked), stderr.String())
	}

	db := sqlitetest.OpenPath(t, path, sqlitetest.Options())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	msgs, err := db.Messages(ctx, memento.Scope{User: "ann"}, "t1", 0, 0)
	if err != nil {
		t.Fatalf("Messages after kill: %v", err)
	}
	stored := map[string]bool{}
	for _, m := range msgs {
		stored[m.ID] = true
	}
	for _, id := range acked {
		if !stored[id] {
			t.Errorf("acknowledged message %s is missing after SIGKILL", id)
		}
	}
	jobs, err := db.Jobs(ctx, memento.JobFilter{Kind: "extract"})
	if err != nil {
		t.Fatalf("Jobs: %v", err)
	}
	if len(jobs) != len(msgs) {
		t.Errorf("%d messages but %d jobs after SIGKILL; want one job per message", len(msgs), len(jobs))
	}
	t.Logf("child acknowledged %d messages; %d stored", len(acked), len(msgs))
}
