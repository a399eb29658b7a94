package atomicfile

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestWrite replaces a file whole, with the mode asked for, leaves no
// temporary file behind, and fails without touching the old file when the
// directory is missing.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "new" {
		t.Fatalf("read %q, %v; want new", got, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	if err := Write(filepath.Join(dir, "missing", "f"), []byte("x"), 0o600); err == nil {
		t.Error("a write into a missing directory succeeded")
	}
	// Writers at once each leave a whole file.
	var wg sync.WaitGroup
	for _, s := range []string{"aaaa", "bbbbbbbb"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := Write(path, []byte(s), 0o600); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got, _ := os.ReadFile(path); string(got) != "aaaa" && string(got) != "bbbbbbbb" {
		t.Errorf("after two writers: %q", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files left: %v; want only f", entries)
	}
}
