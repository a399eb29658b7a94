package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// run drives the program in-process the way main does, with no environment,
// and returns what it printed.
func run(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	m := NewMain()
	m.Stdin = strings.NewReader(stdin)
	m.Stdout, m.Stderr = &out, &errOut
	m.Getenv = func(string) string { return "" }
	ctx := context.Background()
	err := m.ParseFlags(ctx, append(args, "--log-level", "error"))
	if err == nil {
		err = m.Run(ctx)
	}
	if cerr := m.Close(ctx); err == nil {
		err = cerr
	}
	return out.String(), err
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigErrorsNameTheSetting(t *testing.T) {
	tests := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{args: []string{"serve", "--addr", "nope"}, want: "--addr"},
		{args: []string{"version", "--log-level", "loud"}, want: "--log-level"},
		{args: []string{"version", "--llm-provider", "magic"}, want: "--llm-provider"},
		{args: []string{"version"}, env: map[string]string{"MEMENTO_EMBED_DIM": "x"}, want: "MEMENTO_EMBED_DIM"},
		{args: []string{"version"}, env: map[string]string{"MEMENTO_LLM_PROVIDER": "openai", "MEMENTO_LLM_BASE_URL": "ftp://x"}, want: "MEMENTO_LLM_BASE_URL"},
		{args: []string{"version", "--db", ""}, want: "--db"},
		{args: []string{"version", "--embed-cache", "maybe"}, want: "--embed-cache"},
		{args: []string{"version"}, env: map[string]string{"MEMENTO_EMBED_CACHE": "yes"}, want: "MEMENTO_EMBED_CACHE"},
	}
	for _, tt := range tests {
		m := NewMain()
		m.Getenv = func(k string) string { return tt.env[k] }
		err := m.ParseFlags(context.Background(), tt.args)
		if err == nil || !strings.Contains(message(err), tt.want) {
			t.Errorf("ParseFlags(%v, env %v) = %v, want an error naming %s", tt.args, tt.env, err, tt.want)
		}
	}
}

func TestEnvAndFlagPrecedence(t *testing.T) {
	m := NewMain()
	m.Getenv = func(k string) string {
		return map[string]string{"MEMENTO_DB": "/tmp/from-env.db", "MEMENTO_ADDR": "127.0.0.1:9999"}[k]
	}
	if err := m.ParseFlags(context.Background(), []string{"serve", "--addr", "127.0.0.1:7777"}); err != nil {
		t.Fatal(err)
	}
	if m.Config.DB != "/tmp/from-env.db" || m.Config.Addr != "127.0.0.1:7777" {
		t.Errorf("config = db %q addr %q, want the env's db and the flag's addr", m.Config.DB, m.Config.Addr)
	}
}

type replayAnswer struct {
	User   string `json:"user"`
	Thread string `json:"thread"`
	Reply  string `json:"reply"`
	Titles []struct {
		ID, Title string
		Year      int
	}
	ActiveContext struct {
		Genres           []string `json:"genres"`
		TitleType        string   `json:"titleType"`
		MinYear          *int     `json:"minYear"`
		MaxYear          *int     `json:"maxYear"`
		Count            int      `json:"count"`
		ExcludedTitleIDs []string `json:"excludedTitleIds"`
	} `json:"activeContext"`
	Notes    []string `json:"notes"`
	Searched bool     `json:"searched"`
	Memory   struct {
		Summary string `json:"summary"`
	} `json:"memory"`
}

func decodeAnswers(t *testing.T, out string) []replayAnswer {
	t.Helper()
	var answers []replayAnswer
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var a replayAnswer
		if err := dec.Decode(&a); err != nil {
			t.Fatalf("replay output is not JSON lines: %v\n%s", err, out)
		}
		answers = append(answers, a)
	}
	return answers
}

// TestReplayScenario runs the scripted follow-up conversation of the
// agent's issue through `memento replay` on the embedded catalog, then
// continues the thread in a second process on the same store.
func TestReplayScenario(t *testing.T) {
	script := writeFile(t, "script.jsonl", `{"user":"ana","thread":"t1","text":"Discover exactly 3 comedy movies from 2010 onward."}
{"user":"ana","thread":"t1","text":"I didn't like them, please discover different ones."}
{"user":"ana","thread":"t1","text":"Movie only."}
{"user":"ana","thread":"t1","text":"Make it older."}
{"user":"ana","thread":"t2","text":"how does this work?"}
`)
	db := filepath.Join(t.TempDir(), "replay.db")
	out, err := run(t, "", "replay", script, "--json", "--db", db)
	if err != nil {
		t.Fatal(err)
	}
	a := decodeAnswers(t, out)
	if len(a) != 5 {
		t.Fatalf("got %d answers, want 5:\n%s", len(a), out)
	}
	if len(a[0].Titles) != 3 || a[0].ActiveContext.Count != 3 || *a[0].ActiveContext.MinYear != 2010 {
		t.Fatalf("turn 1 = %+v", a[0])
	}
	for _, ti := range a[0].Titles {
		if ti.Year < 2010 {
			t.Errorf("turn 1 title %+v is before 2010", ti)
		}
	}
	first := map[string]bool{}
	for _, ti := range a[0].Titles {
		first[ti.ID] = true
	}
	if len(a[1].Titles) != 3 {
		t.Fatalf("turn 2 titles = %+v", a[1].Titles)
	}
	for _, ti := range a[1].Titles {
		if first[ti.ID] {
			t.Errorf("turn 2 repeats %s", ti.ID)
		}
	}
	if len(a[1].ActiveContext.ExcludedTitleIDs) != 3 {
		t.Errorf("turn 2 exclusions = %v", a[1].ActiveContext.ExcludedTitleIDs)
	}
	if a[2].ActiveContext.TitleType != "movie" || len(a[2].ActiveContext.Genres) != 1 || *a[2].ActiveContext.MinYear != 2010 {
		t.Errorf("turn 3 context = %+v", a[2].ActiveContext)
	}
	if a[3].ActiveContext.MaxYear == nil {
		t.Fatalf("turn 4 has no upper year bound: %+v", a[3].ActiveContext)
	}
	for _, ti := range a[3].Titles {
		if ti.Year > *a[3].ActiveContext.MaxYear {
			t.Errorf("turn 4 title %+v is after the new bound %d", ti, *a[3].ActiveContext.MaxYear)
		}
	}
	if a[4].Searched || len(a[4].Titles) != 0 || len(a[4].Notes) != 0 {
		t.Errorf("no-search turn = %+v", a[4])
	}
	// Background summaries ran between the lines: turn 2 saw turn 1's.
	if a[1].Memory.Summary == "" {
		t.Errorf("turn 2 saw no summary of turn 1")
	}

	// A new process on the same store continues the thread.
	script2 := writeFile(t, "script2.jsonl", `{"user":"ana","thread":"t1","text":"Not those."}`+"\n")
	out, err = run(t, "", "replay", script2, "--json", "--db", db)
	if err != nil {
		t.Fatal(err)
	}
	b := decodeAnswers(t, out)
	if len(b) != 1 || len(b[0].ActiveContext.ExcludedTitleIDs) <= len(a[3].ActiveContext.ExcludedTitleIDs) {
		t.Fatalf("after restart the thread lost its exclusions: before %v after %+v", a[3].ActiveContext.ExcludedTitleIDs, b)
	}
	if *b[0].ActiveContext.MaxYear != *a[3].ActiveContext.MaxYear || b[0].ActiveContext.TitleType != "movie" {
		t.Errorf("after restart context = %+v, want turn 4's constraints", b[0].ActiveContext)
	}
}

func TestReplayWithoutDBIsReproducible(t *testing.T) {
	script := writeFile(t, "s.jsonl", `{"user":"u","thread":"t","text":"3 horror movies from the 80s"}
{"user":"u","thread":"t","text":"not those"}
`)
	out1, err := run(t, "", "replay", script, "--json")
	if err != nil {
		t.Fatal(err)
	}
	out2, err := run(t, "", "replay", script, "--json")
	if err != nil {
		t.Fatal(err)
	}
	if out1 != out2 {
		t.Errorf("two replays without --db differ:\n%s\n%s", out1, out2)
	}
	if _, err := os.Stat("memento.db"); err == nil {
		t.Errorf("replay without --db wrote ./memento.db")
	}
}

func TestReplayBadLine(t *testing.T) {
	script := writeFile(t, "bad.jsonl", "{\"user\":\"u\",\"thread\":\"t\",\"text\":\"hi\"}\nnot json\n")
	_, err := run(t, "", "replay", script, "--json")
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("replay of a bad line: %v, want an error naming line 2", err)
	}
}

// TestFlagsAreParsedOnce checks that a flag given n times arrives n times
// in the command that runs: cobra parses again whatever it is given, and a
// list flag parsed twice holds every value twice.
func TestFlagsAreParsedOnce(t *testing.T) {
	tests := []struct {
		args     []string
		flag     string
		want     []string
		wantArgs []string
	}{
		{args: []string{"eval", "locomo", "--data", "a", "--data", "b,c"}, flag: "data", want: []string{"a", "b", "c"}},
		{args: []string{"catalog", "search", "--genre", "Comedy", "--genre", "Drama"}, flag: "genre", want: []string{"Comedy", "Drama"}},
		{args: []string{"catalog", "search", "--exclude", "tt1", "--size", "3", "--exclude", "tt2"}, flag: "exclude", want: []string{"tt1", "tt2"}},
		{args: []string{"--db", "x.db", "replay", "script.jsonl", "--json"}, flag: "db", want: []string{"x.db"}, wantArgs: []string{"script.jsonl"}},
		{args: []string{"replay", "--json", "--", "-odd name.jsonl"}, flag: "json", want: []string{"true"}, wantArgs: []string{"-odd name.jsonl"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			m := NewMain()
			m.Stdout, m.Stderr = io.Discard, io.Discard
			m.Getenv = func(string) string { return "" }
			ctx := context.Background()
			if err := m.ParseFlags(ctx, tt.args); err != nil {
				t.Fatal(err)
			}
			// The command's own RunE is swapped for one that records what
			// it was given, so nothing is opened.
			cmd, _, err := m.root.Find(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			var got, gotArgs []string
			cmd.RunE = func(cmd *cobra.Command, args []string) error {
				f := cmd.Flags().Lookup(tt.flag)
				if sv, ok := f.Value.(pflag.SliceValue); ok {
					got = sv.GetSlice()
				} else {
					got = []string{f.Value.String()}
				}
				gotArgs = args
				return nil
			}
			if err := m.Run(ctx); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("--%s (-want +got):\n%s", tt.flag, diff)
			}
			if diff := cmp.Diff(tt.wantArgs, gotArgs, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("arguments (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHelpAndCompletion checks cobra's own commands, which it adds only
// when it executes, are found by ParseFlags too.
func TestHelpAndCompletion(t *testing.T) {
	out, err := run(t, "", "help")
	if err != nil || !strings.Contains(out, "Usage:") {
		t.Errorf("memento help: %v\n%s", err, out)
	}
	out, err = run(t, "", "help", "bench")
	if err != nil || !strings.Contains(out, "--reuse") {
		t.Errorf("memento help bench: %v\n%s", err, out)
	}
	out, err = run(t, "", "completion", "bash")
	if err != nil || !strings.Contains(out, "bash completion") {
		t.Errorf("memento completion bash: %v\n%.200s", err, out)
	}
}
