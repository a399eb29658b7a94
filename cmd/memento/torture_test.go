package main

import (
	"encoding/json"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/memento-ai/memento/torture"
)

// tortureChild makes this test binary act as the memento binary when the
// torture commands start it as their server child: they run
// os.Executable(), which in a test is the test binary.
const tortureChild = "MEMENTO_TORTURE_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(tortureChild) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runTorture runs a torture command with children that are this binary,
// and decodes its JSON report into v.
func runTorture(t *testing.T, v any, args ...string) error {
	t.Helper()
	t.Setenv(tortureChild, "1")
	out, err := run(t, "", append([]string{"torture"}, args...)...)
	if jerr := json.Unmarshal([]byte(out), v); jerr != nil {
		t.Fatalf("torture %v printed %q (%v), not a JSON report: %v", args, out, err, jerr)
	}
	return err
}

func TestTortureCrash(t *testing.T) {
	var rep torture.CrashReport
	err := runTorture(t, &rep, "crash", "--trials", "2", "--clients", "3", "--kill-min", "1s", "--kill-max", "1500ms",
		"--catalog", profileCatalog(t), "--json")
	if err != nil {
		t.Errorf("torture crash: %v", err)
	}
	if len(rep.Results) != 2 {
		t.Fatalf("%d trials in the report, want 2", len(rep.Results))
	}
	if !rep.OK || rep.Lost != 0 || rep.Duplicates != 0 || rep.DuplicateMemories != 0 || rep.Failed != 0 {
		t.Errorf("report = %+v, want nothing lost or duplicated and every job ended", rep)
	}
	if rep.Acknowledged == 0 {
		t.Error("no write was acknowledged before the kills, so nothing was tested")
	}
	for _, tr := range rep.Results {
		if tr.Error != "" || !tr.JobsEnded {
			t.Errorf("trial %d: error %q, jobs ended %v", tr.Trial, tr.Error, tr.JobsEnded)
		}
	}
}

func TestTortureFaults(t *testing.T) {
	var rep torture.FaultsReport
	// No hanging faults here: one holds a model call for the client's
	// whole timeout, longer than this test may take.
	err := runTorture(t, &rep, "faults", "--duration", "2s", "--clients", "2", "--timeout", "0", "--slow-delay", "200ms",
		"--server-error", "0.05", "--malformed", "0.05", "--missing-field", "0.05", "--slow", "0.05",
		"--settle", "15s", "--catalog", profileCatalog(t), "--json")
	if err != nil {
		t.Errorf("torture faults: %v", err)
	}
	if rep.Requests == 0 {
		t.Fatal("no requests were sent")
	}
	if rep.Status500 != 0 || rep.Crashes != 0 || rep.StuckRunning != 0 || !rep.OK {
		t.Errorf("%d answers 500, %d crashes, %d jobs stuck running (samples %v, crash %q); want none", rep.Status500, rep.Crashes, rep.StuckRunning, rep.Samples, rep.CrashLog)
	}
	faults := 0
	for _, byFault := range rep.Model {
		for f, n := range byFault {
			if f != torture.FaultNone {
				faults += n
			}
		}
	}
	if faults == 0 {
		t.Errorf("the model server injected no fault (%v), so nothing was tested", rep.Model)
	}
}

func TestTortureLoad(t *testing.T) {
	cat := profileCatalog(t)
	t.Run("mixed after a restart", func(t *testing.T) {
		var rep torture.LoadReport
		err := runTorture(t, &rep, "load", "--clients", "8", "--duration", "2s", "--users", "3", "--seed-messages", "2", "--restart",
			"--catalog", cat, "--json")
		if err != nil {
			t.Errorf("torture load: %v", err)
		}
		if !rep.OK || rep.Errors != 0 || !rep.Healthy || !rep.Restarted {
			t.Errorf("report = %+v, want every request answered after a restart", rep)
		}
		// Which operations a short run draws is chance; that they are
		// counted is not.
		n := 0
		for op, o := range rep.Ops {
			switch op {
			case "chat", "append", "context", "search":
				n += o.Requests
			default:
				t.Errorf("unknown operation %q in %v", op, rep.Ops)
			}
		}
		if n == 0 || n != rep.Requests {
			t.Errorf("operations count %d requests, the report %d; want some, adding up", n, rep.Requests)
		}
		if rep.RSSBytes <= 0 {
			t.Errorf("resident memory %d from %q, want the child's", rep.RSSBytes, rep.RSSSource)
		}
	})
	t.Run("same thread", func(t *testing.T) {
		var rep torture.LoadReport
		err := runTorture(t, &rep, "load", "--clients", "6", "--same-thread", "--users", "1", "--seed-messages", "1",
			"--catalog", cat, "--json")
		if err != nil {
			t.Errorf("torture load --same-thread: %v", err)
		}
		c := rep.Thread
		if c == nil || !c.OK || c.UserMessages != 6 || c.Answers != 6 || !c.InTurn {
			t.Errorf("thread check = %+v, want 6 messages and 6 answers in turn", c)
		}
	})
}

func TestTortureLoadFailsWithoutAServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	var rep torture.LoadReport
	err = runTorture(t, &rep, "load", "--url", url, "--clients", "2", "--duration", "200ms", "--json")
	if err == nil || rep.OK || rep.Errors == 0 || rep.Statuses[torture.StatusNetwork] != rep.Requests {
		t.Errorf("load of a closed port = %v, report %+v; want a failure counting network errors", err, rep)
	}
	if _, err := run(t, "", "torture", "load", "--url", "http://192.0.2.1:8080"); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("load of a non-loopback URL = %v, want it refused naming loopback", err)
	}
}
