package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/bench"
)

// TestBenchTiny runs the benchmark at a tiny scale, as `memento bench`
// runs it at full scale.
func TestBenchTiny(t *testing.T) {
	plots := t.TempDir()
	db := filepath.Join(t.TempDir(), "b.db")
	out, err := run(t, "", "bench", "--users", "4", "--memories", "15", "--measured-users", "2", "--measured-memories", "40",
		"--samples", "12", "--pipeline-messages", "12", "--queue-rate", "40", "--queue-seconds", "1", "--json", "--quiet", "--plot", plots,
		"--db", db, "--catalog", tinyCatalogFile(t))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Scale struct {
			Users    int   `json:"users"`
			Memories int64 `json:"memories"`
		} `json:"scale"`
		ContextAssembly struct {
			Samples int     `json:"samples"`
			P99Ms   float64 `json:"p99Ms"`
		} `json:"contextAssembly"`
		ChatTurn    *struct{ Samples int }  `json:"chatTurn"`
		IngestAck   struct{ Samples int }   `json:"ingestAck"`
		Pipeline    struct{ Messages int }  `json:"pipeline"`
		Queue       *struct{ Messages int } `json:"queue"`
		StoreBytes  int64                   `json:"storeBytes"`
		Targets     map[string]bool         `json:"targets"`
		TargetNotes map[string]string       `json:"targetNotes"`
		// The queue's incremental models, as the engine counted them.
		QueueModels *struct {
			Profile struct {
				FullReads, FoldedReads, Mismatches int64
			} `json:"profile"`
			Clusters struct {
				FullReads, IncrementalReads, Mismatches int64
			} `json:"clusters"`
			Cooccurrence *struct {
				Updates, Rebuilds, Checks, Mismatches int64
			} `json:"cooccurrence"`
		} `json:"queueModels"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("output %s: %v", out, err)
	}
	if res.Scale.Users != 6 || res.Scale.Memories != 4*15+2*40 {
		t.Errorf("scale = %+v, want 6 users and 140 memories", res.Scale)
	}
	if res.ContextAssembly.Samples != 12 || res.ChatTurn == nil || res.ChatTurn.Samples != 30 || res.IngestAck.Samples != 12 {
		t.Errorf("samples: context %d, turns %+v, ingest %d", res.ContextAssembly.Samples, res.ChatTurn, res.IngestAck.Samples)
	}
	if res.Pipeline.Messages != 12 || res.Queue == nil || res.Queue.Messages != 12 {
		t.Errorf("pipeline %+v, queue %+v", res.Pipeline, res.Queue)
	}
	if m := res.QueueModels; m == nil || m.Profile.FullReads+m.Profile.FoldedReads == 0 ||
		m.Clusters.FullReads+m.Clusters.IncrementalReads == 0 || m.Profile.Mismatches+m.Clusters.Mismatches != 0 {
		t.Errorf("queueModels = %+v; want the profile recomputes and clusterings counted, no mismatch", m)
	} else if c := m.Cooccurrence; c == nil || c.Updates == 0 || c.Rebuilds == 0 || c.Mismatches != 0 {
		t.Errorf("queueModels.cooccurrence = %+v; want the model's updates and its first rebuild counted, no mismatch", c)
	}
	// The four figures' targets and the queue's; a stream below 500 a
	// second has no rate targets.
	if _, ok := res.Targets["queueAtLeast1000MsgsPerS"]; res.StoreBytes <= 0 || len(res.Targets) != 5 || !ok {
		t.Errorf("store %d bytes, targets %v", res.StoreBytes, res.Targets)
	}
	// A note is for a missed target only.
	for target, note := range res.TargetNotes {
		if met, ok := res.Targets[target]; !ok || met || note == "" {
			t.Errorf("targetNotes[%s] = %q, but the target is %v (present %v)", target, note, met, ok)
		}
	}
	entries, err := os.ReadDir(plots)
	if err != nil || len(entries) != 5 {
		t.Errorf("charts = %v (%v), want 5", entries, err)
	}
	// The store is kept, and a second run refuses to build into it.
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("the store was not kept: %v", err)
	}
	_, err = run(t, "", "bench", "--db", db, "--quiet")
	if memento.ErrorCode(err) != memento.EINVALID || !strings.Contains(message(err), "exists") {
		t.Errorf("bench into an existing store: err = %v, want EINVALID", err)
	}
	// --reuse measures the kept store again without building it, at the
	// scale it was built at only.
	tiny := []string{"--users", "4", "--memories", "15", "--measured-users", "2", "--measured-memories", "40",
		"--samples", "12", "--pipeline-messages", "12", "--json", "--quiet", "--db", db, "--catalog", tinyCatalogFile(t)}
	out, err = run(t, "", append([]string{"bench", "--reuse"}, tiny...)...)
	if err != nil {
		t.Fatal(err)
	}
	var again struct {
		Scale struct {
			Memories int64 `json:"memories"`
		} `json:"scale"`
		ContextAssembly struct{ Samples int } `json:"contextAssembly"`
	}
	if err := json.Unmarshal([]byte(out), &again); err != nil {
		t.Fatalf("output %s: %v", out, err)
	}
	if again.Scale.Memories != res.Scale.Memories || again.ContextAssembly.Samples != 12 {
		t.Errorf("reused run: %+v, want the first run's scale measured again", again)
	}
	_, err = run(t, "", "bench", "--reuse", "--users", "5", "--db", db, "--quiet")
	if memento.ErrorCode(err) != memento.EINVALID || !strings.Contains(message(err), "the flags ask for") {
		t.Errorf("reuse at another scale: err = %v, want EINVALID", err)
	}
	if _, err := run(t, "", "bench", "--reuse", "--quiet"); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("reuse without --db: err = %v, want EINVALID", err)
	}
	// --build-only builds and keeps a store, measuring nothing.
	built := filepath.Join(t.TempDir(), "built.db")
	if _, err := run(t, "", "bench", "--build-only", "--users", "2", "--memories", "5", "--measured-users", "1", "--measured-memories", "5",
		"--quiet", "--db", built, "--catalog", tinyCatalogFile(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(built + ".bench.json"); err != nil {
		t.Errorf("build-only: %v", err)
	}
}

func TestBenchCompare(t *testing.T) {
	small := writeFile(t, "small.json", `{"scale":{"memories":200000},"contextAssembly":{"p50Ms":9.8,"p99Ms":16.7},"ingestAck":{"p50Ms":1.4,"p99Ms":7.1},"pipeline":{"msgsPerSec":619},"storeBytes":1158690504}`)
	large := writeFile(t, "large.json", `{"scale":{"memories":1100000},"contextAssembly":{"p50Ms":21.6,"p99Ms":43.3},"chatTurn":{"p50Ms":25.6,"p99Ms":107.3},"ingestAck":{"p50Ms":1.9,"p99Ms":9.4},"pipeline":{"msgsPerSec":488},"storeBytes":6055500304}`)
	plots := t.TempDir()
	out, err := run(t, "", "bench", "compare", large, small, "--plot", plots)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "200000") || !strings.HasPrefix(lines[2], "1100000") || !strings.Contains(lines[2], "21.6 / 43.3") {
		t.Errorf("compare output, smallest first:\n%s", out)
	}
	if st, err := os.Stat(filepath.Join(plots, "bench-scaling.png")); err != nil || st.Size() == 0 {
		t.Errorf("scaling chart: %v", err)
	}
	if _, err := run(t, "", "bench", "compare", writeFile(t, "bad.json", "nope")); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("a file that is not a result: err = %v, want EINVALID", err)
	}
}

// TestBenchPrintsTargetNotes checks that the text report gives a missed
// target its note, and a met one none.
func TestBenchPrintsTargetNotes(t *testing.T) {
	var out bytes.Buffer
	res := &bench.Result{
		Targets:     map[string]bool{"ingestAckP99Under5msWhileDraining": false, "catalogSearchP99Under2ms": true},
		TargetNotes: map[string]string{"ingestAckP99Under5msWhileDraining": "the disk's flush passes 5 ms here"},
	}
	if err := printBench(&Main{Stdout: &out}, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"target ingestAckP99Under5msWhileDraining: MISSED (the disk's flush passes 5 ms here)\n",
		"target catalogSearchP99Under2ms: met\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}
}
