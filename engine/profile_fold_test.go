package engine_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/profile"
)

// TestProfileJobsFoldNewEvents adds a user's events in two batches
// through the jobs the service enqueues, and checks in /metrics that the
// second batch's profile job read only its own events (one full read,
// then folded reads), and that the learned profile has every event.
func TestProfileJobsFoldNewEvents(t *testing.T) {
	ctx := context.Background()
	e := openEngine(t, filepath.Join(t.TempDir(), "m.db"))
	if err := e.StartWorkers(ctx); err != nil {
		t.Fatal(err)
	}
	s := e.Scope("ann")
	at := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	add := func(events ...memento.Event) {
		t.Helper()
		if _, err := e.Store.AddEvents(ctx, s, events, profile.EventJobs(s)); err != nil {
			t.Fatal(err)
		}
		if err := e.WaitForJobs(ctx, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	add(memento.Event{ID: "e1", Type: memento.EventWatched, TitleID: "t1", At: at},
		memento.Event{ID: "e2", Type: memento.EventLiked, TitleID: "t2", At: at.Add(time.Hour)})
	add(memento.Event{ID: "e3", Type: memento.EventFinished, TitleID: "t3", At: at.Add(2 * time.Hour)})

	p, err := e.Store.Profile(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(p.Keys[profile.KeySeen].Value); got != `["t1","t2","t3"]` {
		t.Errorf("seen = %s; want the three titles", got)
	}
	got := metricValues(t, e.Registry)
	if got["memento_profile_full_reads_total"] != 1 || got["memento_profile_folded_reads_total"] < 1 ||
		got["memento_profile_folded_users"] != 1 || got["memento_profile_folded_events"] != 3 || got["memento_profile_fold_mismatches_total"] != 0 {
		t.Errorf("/metrics: full reads %v, folded reads %v, users %v, events %v, mismatches %v; want 1, at least 1, 1, 3, 0",
			got["memento_profile_full_reads_total"], got["memento_profile_folded_reads_total"], got["memento_profile_folded_users"],
			got["memento_profile_folded_events"], got["memento_profile_fold_mismatches_total"])
	}
}
