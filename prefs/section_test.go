package prefs_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/prefs"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// TestSectionRoundTrip exports a user's preferences from one store and
// imports them into another, as a snapshot restore does.
func TestSectionRoundTrip(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: day0}
	svc, db := newService(t, clk)
	s := memento.Scope{User: "ann"}
	for i, text := range []string{"I love heist films.", "I like crime thrillers.", "I hate cilantro.", "I live in Lisbon."} {
		if _, err := svc.LearnMessage(ctx, s, memento.Message{ID: "m" + string(rune('1'+i)), Role: memento.RoleUser, Text: text, At: day0}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.LearnEvent(ctx, s, memento.Event{ID: "e1", Type: memento.EventLiked, TitleID: heat.ID, At: day0}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Recluster(ctx, s); err != nil {
		t.Fatal(err)
	}
	data, err := prefs.Section{Store: db}.ExportSection(ctx, s)
	if err != nil {
		t.Fatalf("ExportSection: %v", err)
	}
	if !json.Valid(data) {
		t.Fatalf("export is not JSON: %s", data)
	}

	other := sqlitetest.Open(t)
	if err := (prefs.Section{Store: other}).ImportSection(ctx, s, data); err != nil {
		t.Fatalf("ImportSection: %v", err)
	}
	want, _ := db.Preferences(ctx, s)
	got, _ := other.Preferences(ctx, s)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("restored preferences (-exported +restored):\n%s", diff)
	}
	// The clusters come back as they were, descriptions and stances
	// included, without asking the model to describe them again.
	wantCl, _ := db.PreferenceClusters(ctx, s)
	gotCl, _ := other.PreferenceClusters(ctx, s)
	if len(wantCl) == 0 {
		t.Fatal("the exported user has no clusters, so nothing is tested")
	}
	if diff := cmp.Diff(wantCl, gotCl, cmpopts.IgnoreFields(memento.PreferenceCluster{}, "Version", "CreatedAt")); diff != "" {
		t.Errorf("restored clusters (-exported +restored):\n%s", diff)
	}
	wantSrc, _ := db.PreferenceSources(ctx, s)
	gotSrc, _ := other.PreferenceSources(ctx, s)
	if diff := cmp.Diff(wantSrc, gotSrc); diff != "" || len(gotSrc) != 5 {
		t.Errorf("restored sources (-exported +restored):\n%s", diff)
	}
	// The clustering job the restore requested finds the clusters as
	// they were and keeps their descriptions: it asks the model nothing.
	if n := clusteringJobs(t, other); n != 1 {
		t.Errorf("restore enqueued %d clustering jobs, want 1", n)
	}
	mute := &prefs.Service{Store: other, Messages: other, Model: noDescriptions{svc.Model}, Embedder: svc.Embedder, Catalog: svc.Catalog, Clock: clk}
	if err := mute.Recluster(ctx, s); err != nil {
		t.Fatalf("the clustering job after a restore asked the model: %v", err)
	}
	again, _ := other.PreferenceClusters(ctx, s)
	if diff := cmp.Diff(wantCl, again, cmpopts.IgnoreFields(memento.PreferenceCluster{}, "Version", "CreatedAt")); diff != "" {
		t.Errorf("clusters after the clustering job (-exported +now):\n%s", diff)
	}
	// A message already applied before the snapshot changes nothing after
	// the restore.
	restored := &prefs.Service{Store: other, Messages: other, Model: svc.Model, Embedder: svc.Embedder, Catalog: svc.Catalog, Clock: clk}
	res, err := restored.LearnMessage(ctx, s, memento.Message{ID: "m1", Role: memento.RoleUser, Text: "I love heist films.", At: day0})
	if err != nil || res.Applied {
		t.Errorf("re-learning m1 after restore: %+v, %v; want not applied", res, err)
	}

	// A user without preferences exports nothing; bad sections are refused.
	if data, err := (prefs.Section{Store: db}).ExportSection(ctx, memento.Scope{User: "nobody"}); err != nil || data != nil {
		t.Errorf("export of an unknown user = %s, %v", data, err)
	}
	for _, bad := range []string{`{"preferences":[{"id":"p","concept":"x","kind":"taste","embedder":"e","vector":"AAA="}]}`, `[1,2]`,
		`{"preferences":[{"id":"p","concept":"x","kind":"mood","embedder":"e","vector":"AAAAAA=="}]}`} {
		if err := (prefs.Section{Store: other}).ImportSection(ctx, s, json.RawMessage(bad)); memento.ErrorCode(err) != memento.EINVALID {
			t.Errorf("import %s: %v, want EINVALID", bad, err)
		}
	}
	if err := (prefs.Section{Store: other}).ImportSection(ctx, s, nil); err != nil {
		t.Errorf("import of an empty section: %v", err)
	}
}

// noDescriptions is a model that refuses to describe clusters.
type noDescriptions struct{ prefs.Model }

func (noDescriptions) DescribeCluster(context.Context, []memento.ClusterMember) (*memento.ClusterDescription, error) {
	return nil, errors.New("asked to describe a cluster")
}

// TestReclusterTakesABackgroundProcessor: regrouping a user's
// preferences is compute, so a background recluster waits for one of the
// background's processors (memento.Compute) and gives it back.
func TestReclusterTakesABackgroundProcessor(t *testing.T) {
	ctx := context.Background()
	svc, db := newService(t, &clock{t: day0})
	s := memento.Scope{User: "ann"}
	for i, text := range []string{"I love heist films.", "I like crime thrillers."} {
		if _, err := svc.LearnMessage(ctx, s, memento.Message{ID: "m" + string(rune('1'+i)), Role: memento.RoleUser, Text: text, At: day0}); err != nil {
			t.Fatal(err)
		}
	}
	gate := memento.NewProcessorGate(1)
	bg := memento.WithProcessorGate(memento.InBackground(ctx), gate)
	_, release, err := memento.Compute(bg) // the only processor
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- svc.Recluster(bg, s) }()
	select {
	case err := <-done:
		release()
		t.Fatalf("Recluster ended (%v) while the background's only processor was taken", err)
	case <-time.After(200 * time.Millisecond):
	}
	release()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Recluster did not end once the processor was free")
	}
	if n := gate.InUse(); n != 0 {
		t.Errorf("%d processors still taken after Recluster", n)
	}
	clusters, err := db.PreferenceClusters(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(clusters) == 0 {
		t.Error("Recluster saved no cluster")
	}
}
