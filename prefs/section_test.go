package prefs_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

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
	for i := range want {
		want[i].Cluster = nil // clusters are described again after a restore
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("restored preferences (-exported +restored):\n%s", diff)
	}
	wantSrc, _ := db.PreferenceSources(ctx, s)
	gotSrc, _ := other.PreferenceSources(ctx, s)
	if diff := cmp.Diff(wantSrc, gotSrc); diff != "" || len(gotSrc) != 5 {
		t.Errorf("restored sources (-exported +restored):\n%s", diff)
	}
	jobs, _ := other.Jobs(ctx, memento.JobFilter{Kind: memento.JobPreferenceClusters})
	if len(jobs) != 1 {
		t.Errorf("restore enqueued %d clustering jobs, want 1", len(jobs))
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
