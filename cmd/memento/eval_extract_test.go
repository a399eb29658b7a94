package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestIngestAnswerToQuestionBecomesMemory ingests a thread where the agent
// asks and the user answers in a few words: the answers become memories,
// with the answer as their source, the bare "Sounds good." stores nothing,
// and "Yes." to "Have you seen Heat?" is a viewing, in memory and in the
// profile.
func TestIngestAnswerToQuestionBecomesMemory(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	common := []string{"--db", db, "--catalog", profileCatalog(t)}
	file := writeFile(t, "answers.jsonl", `{"id":"q1","user":"cy","thread":"t1","role":"assistant","text":"Happy to help. Which service do you watch on?","at":"2025-05-01T20:00:00Z"}
{"id":"r1","user":"cy","thread":"t1","role":"user","text":"Mostly Netflix, sometimes Hulu.","at":"2025-05-01T20:00:10Z"}
{"id":"q2","user":"cy","thread":"t1","role":"assistant","text":"Got it. How often do you watch films?","at":"2025-05-01T20:00:20Z"}
{"id":"r2","user":"cy","thread":"t1","role":"user","text":"A couple of times a week.","at":"2025-05-01T20:00:30Z"}
{"id":"q3","user":"cy","thread":"t1","role":"assistant","text":"Shall I look for something on Netflix?","at":"2025-05-01T20:00:40Z"}
{"id":"r3","user":"cy","thread":"t1","role":"user","text":"Sounds good.","at":"2025-05-01T20:00:50Z"}
{"id":"q4","user":"cy","thread":"t1","role":"assistant","text":"Here is Heat (1995). Have you seen Heat?","at":"2025-05-01T20:01:00Z"}
{"id":"r4","user":"cy","thread":"t1","role":"user","text":"Yes.","at":"2025-05-01T20:01:10Z"}
`)
	if out, err := run(t, "", append([]string{"ingest", file, "--wait", "--json"}, common...)...); err != nil || !strings.Contains(out, `"failed":0`) {
		t.Fatalf("ingest = %s, %v", out, err)
	}
	out, err := run(t, "", append([]string{"memories", "list", "--user", "cy", "--json"}, common...)...)
	if err != nil {
		t.Fatal(err)
	}
	var mems []struct {
		Attribute string   `json:"attribute"`
		Value     string   `json:"value"`
		Sources   []string `json:"sources"`
	}
	if err := json.Unmarshal([]byte(out), &mems); err != nil {
		t.Fatalf("memories list = %s: %v", out, err)
	}
	got := map[string]string{}
	sources := map[string][]string{}
	for _, m := range mems {
		got[m.Attribute] = m.Value
		sources[m.Attribute] = m.Sources
	}
	if v := got["PLATFORM"]; !strings.Contains(v, "Netflix") || !strings.Contains(v, "Hulu") {
		t.Errorf("PLATFORM = %q; want Netflix and Hulu from the answer (all: %s)", v, out)
	}
	if v := got["FREQUENCY"]; !strings.Contains(v, "times a week") {
		t.Errorf("FREQUENCY = %q; want the answer's frequency (all: %s)", v, out)
	}
	if len(sources["PLATFORM"]) != 1 || sources["PLATFORM"][0] != "r1" || len(sources["FREQUENCY"]) != 1 || sources["FREQUENCY"][0] != "r2" {
		t.Errorf("sources = %v; want each memory to come from its answer", sources)
	}
	// "Yes." to "Have you seen Heat?" is something the user did: a
	// memory of it (EVENT), never a wish to watch, and a watched event
	// read by the model's ActionReader, which the profile learns as seen.
	if v := got["EVENT"]; !strings.Contains(v, "Heat") || got["WANTS_TO_WATCH"] != "" {
		t.Errorf("EVENT = %q, WANTS_TO_WATCH = %q; want Heat seen (all: %s)", v, got["WANTS_TO_WATCH"], out)
	}
	if len(mems) != 3 {
		t.Errorf("memories = %s; want PLATFORM, FREQUENCY and EVENT only", out)
	}
	out, err = run(t, "", append([]string{"profile", "show", "--user", "cy", "--json"}, common...)...)
	if err != nil {
		t.Fatal(err)
	}
	var prof struct {
		Keys map[string]struct {
			Value json.RawMessage `json:"value"`
		} `json:"keys"`
	}
	if err := json.Unmarshal([]byte(out), &prof); err != nil || !strings.Contains(string(prof.Keys["seen"].Value), "heat") {
		t.Errorf("profile = %s (%v); want heat among the seen titles", out, err)
	}
}

// TestEvalExtract runs the command on the shipped development set: the
// pipeline beats the keyword baseline in the same run and stores no small
// talk or injection.
func TestEvalExtract(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the catalog and runs the pipeline over the development set")
	}
	out, err := run(t, "", "eval", "extract", "--data", filepath.Join("..", "..", "eval", "extract", "dev.jsonl"), "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Items  int `json:"items"`
		Scores []struct {
			Extractor string `json:"extractor"`
			Overall   struct {
				F1 float64 `json:"f1"`
			} `json:"overall"`
			SmallTalkStored float64 `json:"smallTalkStored"`
			InjectionStored float64 `json:"injectionStored"`
		} `json:"scores"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Scores) != 2 {
		t.Fatalf("eval extract = %s: %v", out, err)
	}
	mem, base := rep.Scores[0], rep.Scores[1]
	if rep.Items < 100 || mem.Overall.F1 < 0.85 || mem.Overall.F1 < base.Overall.F1+0.2 {
		t.Errorf("F1 %.3f (%s) vs baseline %.3f over %d items; want >= 0.85 and well above the baseline", mem.Overall.F1, mem.Extractor, base.Overall.F1, rep.Items)
	}
	if mem.SmallTalkStored != 0 || mem.InjectionStored != 0 {
		t.Errorf("small talk stored %.3f, injections stored %.3f; want 0", mem.SmallTalkStored, mem.InjectionStored)
	}
}
