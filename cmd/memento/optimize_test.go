package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/sqlite"
)

// optimize merges a store's full-text indexes and raises one written in
// bulk to its level, once: the second run finds nothing to do.
func TestOptimize(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	db, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "bulk"}
	at := time.Date(2025, 4, 1, 9, 0, 0, 0, time.UTC)
	for load := range 3 {
		err := db.Bulk(ctx, func(b *sqlite.Bulk) error {
			if load == 0 {
				if err := b.User(s); err != nil {
					return err
				}
			}
			thread := fmt.Sprintf("t%d", load)
			if err := b.Thread(s, thread, 6000, at); err != nil {
				return err
			}
			for i := 1; i <= 6000; i++ {
				text := fmt.Sprintf("the keeper w%d w%d w%d w%d", i%2999, (i*7)%2999, (i*13)%2999, (i*31+load)%2999)
				m := memento.Message{ID: fmt.Sprintf("m%d-%d", load, i), Thread: thread, Seq: int64(i), Role: memento.RoleUser, Text: text, At: at.Add(time.Duration(i) * time.Second)}
				if err := b.Message(s, m, nil, ""); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	optimize := func() optimizeReport {
		t.Helper()
		out, err := run(t, "", "optimize", "--json", "--db", path)
		if err != nil {
			t.Fatal(err)
		}
		var rep optimizeReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return rep
	}
	if rep := optimize(); rep.Rewrites < 1 {
		t.Fatalf("optimize after bulk loads = %+v; want the message index rewritten onto its level", rep)
	}
	if rep := optimize(); rep.Rewrites != 0 || rep.Merges != 0 {
		t.Errorf("optimize again = %+v; want nothing to do", rep)
	}
}
