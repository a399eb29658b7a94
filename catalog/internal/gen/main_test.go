package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memento-ai/memento/catalog"
)

func TestRun(t *testing.T) {
	src := filepath.Join("..", "..", "testdata", "wiki")
	out := filepath.Join(t.TempDir(), "titles.jsonl.gz")
	var stdout bytes.Buffer
	if err := run([]string{"-src", src, "-out", out}, &stdout); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "7 titles") {
		t.Errorf("output %q does not count 7 titles", stdout.String())
	}
	first, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, report, err := catalog.ReadJSONL(bytes.NewReader(first))
	if err != nil || report.Skipped > 0 {
		t.Fatalf("ReadJSONL: %v, %v", report, err)
	}
	want, _, err := catalog.BuildWikiMovies(src)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("written catalog mismatch (-built +read):\n%s", diff)
	}
	for _, title := range got {
		if title.Notability <= 0 || title.Notability > 1 {
			t.Errorf("%s: written notability %v, want (0, 1]", title.ID, title.Notability)
		}
	}
	// A second run writes the same bytes: the file is reproducible.
	if err := run([]string{"-src", src, "-out", out}, &stdout); err != nil {
		t.Fatal(err)
	}
	second, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Error("two runs wrote different files")
	}
}

func TestRunErrors(t *testing.T) {
	for name, args := range map[string][]string{
		"no source data": {"-src", t.TempDir(), "-out", filepath.Join(t.TempDir(), "x.gz")},
		"bad flag":       {"-nope"},
		"bad output":     {"-src", filepath.Join("..", "..", "testdata", "wiki"), "-out", filepath.Join(t.TempDir(), "missing", "x.gz")},
	} {
		t.Run(name, func(t *testing.T) {
			if err := run(args, &bytes.Buffer{}); err == nil {
				t.Error("run succeeded")
			}
		})
	}
}
