package main

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

func TestReembed(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	script := writeFile(t, "s.jsonl", `{"user":"ana","thread":"t","text":"I love heist films but I can't stand horror"}`+"\n")
	if _, err := run(t, "", "replay", script, "--json", "--db", db); err != nil {
		t.Fatal(err)
	}
	reembed := func(dim string) reembedReport {
		t.Helper()
		out, err := run(t, "", "reembed", "--json", "--db", db, "--embed-dim", dim)
		if err != nil {
			t.Fatal(err)
		}
		var rep reembedReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return rep
	}
	rep := reembed("128")
	if rep.Embedder != "offline-hash/v1/128" || rep.Users != 1 || rep.Preferences < 2 {
		t.Fatalf("first reembed = %+v, want both preferences of ana moved to the 128-dimension embedder", rep)
	}
	if again := reembed("128"); again.Preferences != 0 {
		t.Errorf("second reembed with the same embedder = %+v, want nothing to do", again)
	}
}
