package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memento-ai/memento"
)

// The commands that read or edit what a store holds refuse an SQLite path
// where there is no store, naming it, and make nothing there; the
// commands that put data in make the store, after which the others work.
func TestReadCommandsNeedAStore(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "typo.db")
	for _, args := range [][]string{
		{"jobs", "stats"},
		{"jobs", "list"},
		{"jobs", "retry", "--failed"},
		{"keys", "list"},
		{"keys", "revoke", "key_x"},
		{"memories", "list", "--user", "ann"},
		{"memories", "export", "--user", "ann"},
		{"prefs", "list", "--user", "ann"},
		{"profile", "show", "--user", "ann"},
		{"experiment", "list"},
	} {
		_, err := run(t, "", append(args, "--db", missing)...)
		if memento.ErrorCode(err) != memento.ENOTFOUND || !strings.Contains(memento.ErrorMessage(err), missing) {
			t.Errorf("memento %s on a missing store: %v; want ENOTFOUND naming %s", strings.Join(args, " "), err, missing)
		}
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Fatalf("the refused commands left files behind: %v (%v)", entries, err)
	}

	// keys create makes the store; the others then answer from it.
	if _, err := run(t, "", "keys", "create", "--db", missing, "--role", "admin"); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"jobs", "stats"}, {"keys", "list"}, {"memories", "list", "--user", "ann"}} {
		if _, err := run(t, "", append(args, "--db", missing)...); err != nil {
			t.Errorf("memento %s on the made store: %v", strings.Join(args, " "), err)
		}
	}
}
