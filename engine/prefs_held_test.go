package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

// TestClusterJobsReadChangedPreferences sends a user's messages in two
// rounds through the jobs the service enqueues, and checks in /metrics
// that the second round's clustering read only the preferences changed
// since the first (one full read, then incremental ones, no mismatch),
// and that the stored clusters hold preferences of both rounds.
func TestClusterJobsReadChangedPreferences(t *testing.T) {
	ctx := context.Background()
	e := openEngine(t, filepath.Join(t.TempDir(), "m.db"))
	if err := e.StartWorkers(ctx); err != nil {
		t.Fatal(err)
	}
	s := e.Scope("ann")
	say := func(round int, lines ...string) {
		t.Helper()
		var msgs []memento.Message
		for i, line := range lines {
			msgs = append(msgs, memento.Message{ID: fmt.Sprintf("m%d-%d", round, i), Role: memento.RoleUser, Text: line})
		}
		if _, err := e.Store.AppendMessages(ctx, s, "t", msgs, func(m memento.Message) []memento.JobRequest {
			return e.MessageJobs(s, "t", m)
		}); err != nil {
			t.Fatal(err)
		}
		if err := e.WaitForJobs(ctx, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	say(0, "I love romantic comedies.", "I can't stand romance novels.")
	say(1, "I adore heist films.", "I like crime thrillers.", "I don't like crime dramas.")

	svc, err := e.Prefs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	clusters, err := svc.Clusters(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	concepts := map[string]bool{}
	for _, c := range clusters {
		for _, m := range c.Members {
			concepts[m.Concept] = true
		}
	}
	if !concepts["romantic comedies"] || !concepts["crime dramas"] {
		t.Errorf("clusters %+v; want members of both rounds", clusters)
	}
	got := metricValues(t, e.Registry)
	if got["memento_prefs_cluster_full_reads_total"] != 1 || got["memento_prefs_cluster_incremental_reads_total"] < 1 ||
		got["memento_prefs_cluster_users"] != 1 || got["memento_prefs_cluster_preferences"] != 5 || got["memento_prefs_cluster_mismatches_total"] != 0 {
		t.Errorf("/metrics: full reads %v, incremental reads %v, users %v, preferences %v, mismatches %v; want 1, at least 1, 1, 5, 0",
			got["memento_prefs_cluster_full_reads_total"], got["memento_prefs_cluster_incremental_reads_total"], got["memento_prefs_cluster_users"],
			got["memento_prefs_cluster_preferences"], got["memento_prefs_cluster_mismatches_total"])
	}
}
