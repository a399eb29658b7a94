package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeBecomesReady starts `memento serve` and polls /readyz until
// it answers 200: the title vectors the server warms at start are
// registered as start-up work, so the log says the server is ready once
// they are, and /healthz answers 200 throughout.
func TestServeBecomesReady(t *testing.T) {
	db := filepath.Join(t.TempDir(), "memento.db")
	s, err := serveWith(t, nil, "--db", db, "--catalog", tinyCatalogFile(t), "--log-level", "info")
	if err != nil {
		t.Fatalf("serve: %v", err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if code, body := s.do(t, "GET", "/healthz", ""); code != 200 {
			t.Fatalf("/healthz while starting = %d %v, want 200", code, body)
		}
		code, body := s.do(t, "GET", "/readyz", "")
		if code == 200 {
			if body["status"] != "ready" {
				t.Errorf("/readyz = 200 %v, want status ready", body)
			}
			break
		}
		if code != 503 || time.Now().After(deadline) {
			t.Fatalf("/readyz = %d %v, want 503 then 200 within a minute", code, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	log := s.stderr.String()
	if !strings.Contains(log, "memento ready") || !strings.Contains(log, "titles") {
		t.Errorf("the log does not say the server is ready after warming its titles:\n%s", log)
	}
}
