package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/graph"
)

// RecallPruner is a store whose recall change log can be pruned.
type RecallPruner interface {
	// PruneRecallChanges deletes change-log rows older than keep and
	// raises the log's floor, so a reader that last looked before them
	// reads everything again.
	PruneRecallChanges(ctx context.Context, keep time.Duration) (int64, error)
}

// PipelineLog is what the attribute pipeline asks a store about the
// messages it has processed.
type PipelineLog interface {
	// MemoryProcessed reports whether the message's run is recorded.
	MemoryProcessed(ctx context.Context, s memento.Scope, message string) (bool, error)
	// EarlierUnprocessed lists the user's own messages before message
	// without a run, oldest first, at most limit. Errors: ENOTFOUND,
	// EINVALID.
	EarlierUnprocessed(ctx context.Context, s memento.Scope, message string, limit int) ([]memento.Message, error)
}

// ProfileRestorer is a store that restores a profile as a snapshot holds it.
type ProfileRestorer interface {
	RestoreProfile(ctx context.Context, s memento.Scope, p *memento.Profile) error
}

func testProfileModels(t *testing.T, open Opener) {
	st := open(t)
	ms, ok := st.(memento.ProfileModelService)
	if !ok {
		t.Skip("the store does not implement memento.ProfileModelService")
	}
	ctx := t.Context()
	if m, err := ms.ProfileModel(ctx, "", "cooc"); err != nil || m != nil {
		t.Errorf("ProfileModel before any = %+v, %v; want nil", m, err)
	}
	if v, err := ms.ProfileModelVersion(ctx, "", "cooc"); err != nil || v != 0 {
		t.Errorf("ProfileModelVersion before any = %d, %v; want 0", v, err)
	}
	mark0, err := ms.EventsMark(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []memento.Scope{bob, ann, {Tenant: "acme", User: "zed"}} {
		if _, err := st.AddEvents(ctx, s, []memento.Event{
			{Type: memento.EventWatched, TitleID: "wiki:B", At: t0.Add(time.Hour)},
			{Type: memento.EventLiked, TitleID: "wiki:A", At: t0},
		}, nil); err != nil {
			t.Fatal(err)
		}
	}
	mark1, err := ms.EventsMark(ctx, memento.DefaultTenant)
	if err != nil || mark1 <= mark0 {
		t.Errorf("EventsMark after events = %d (%v), before %d; want it to grow", mark1, err, mark0)
	}
	var users []string
	mark, err := ms.EachUserEvents(ctx, "", func(user string, events []memento.Event) error {
		users = append(users, user)
		if len(events) != 2 || events[0].TitleID != "wiki:A" || events[1].TitleID != "wiki:B" {
			t.Errorf("events of %s = %+v, want A then B, in the order they happened", user, events)
		}
		return nil
	})
	if err != nil || mark != mark1 || !slices.Equal(users, []string{"ann", "bob"}) {
		t.Errorf("EachUserEvents = users %v, mark %d, %v; want ann then bob (not the other tenant's), mark %d", users, mark, err, mark1)
	}
	v1, err := ms.SaveProfileModel(ctx, memento.ProfileModel{Name: "cooc", EventsMark: mark, Data: []byte("one")}, false)
	if err != nil || v1 != 1 {
		t.Fatalf("first SaveProfileModel = %d, %v; want version 1", v1, err)
	}
	v2, err := ms.SaveProfileModel(ctx, memento.ProfileModel{Name: "cooc", EventsMark: mark, Data: []byte("two")}, false)
	if err != nil || v2 != 2 {
		t.Errorf("second SaveProfileModel = %d, %v; want version 2", v2, err)
	}
	m, err := ms.ProfileModel(ctx, memento.DefaultTenant, "cooc")
	if err != nil || m == nil || string(m.Data) != "two" || m.Version != 2 || m.EventsMark != mark {
		t.Errorf("ProfileModel = %+v, %v; want the second save", m, err)
	}
	if v, err := ms.SaveProfileModel(ctx, memento.ProfileModel{Name: "cooc", Version: 40, Data: []byte("restored")}, true); err != nil || v != 40 {
		t.Errorf("SaveProfileModel keeping the version = %d, %v; want 40", v, err)
	}
	if v, _ := ms.ProfileModelVersion(ctx, "", "cooc"); v != 40 {
		t.Errorf("ProfileModelVersion = %d, want 40", v)
	}
	if m, _ := ms.ProfileModel(ctx, "acme", "cooc"); m != nil {
		t.Errorf("another tenant sees the model: %+v", m)
	}
	_, err = ms.SaveProfileModel(ctx, memento.ProfileModel{}, false)
	wantCode(t, "SaveProfileModel without a name", err, memento.EINVALID)

	pr, ok := st.(ProfileRestorer)
	if !ok {
		return
	}
	ps := st.(memento.ProfileService)
	restored := &memento.Profile{Version: 7, UpdatedAt: t0, Keys: map[string]memento.ProfileEntry{
		"era": {Value: []byte(`"1970s"`), Source: memento.ProfileLearned, Evidence: []string{"e1"}, UpdatedAt: t0},
	}}
	if err := pr.RestoreProfile(ctx, ann, restored); err != nil {
		t.Fatalf("RestoreProfile: %v", err)
	}
	got, err := ps.Profile(ctx, ann)
	if err != nil || got.Version != 7 || string(got.Keys["era"].Value) != `"1970s"` || !got.Keys["era"].UpdatedAt.Equal(t0) {
		t.Errorf("restored profile = %+v, %v; want version 7 with era", got, err)
	}
}

func testPreferenceEdits(t *testing.T, open Opener) {
	st := open(t)
	ps, ok := st.(memento.PreferenceService)
	if !ok {
		t.Skip("the store does not implement memento.PreferenceService")
	}
	ctx := t.Context()
	prefs := []memento.Preference{
		{ID: "p1", Concept: "heist", Weight: 1, Kind: memento.KindTaste, Evidence: 3, Sources: []string{"m1"}, FirstSeen: t0, LastSeen: t0, Embedder: "e", Vector: []float32{1, 0}},
		{ID: "p2", Concept: "horror", Weight: -2, Kind: memento.KindTaste, Evidence: 1, Sources: []string{"m2"}, FirstSeen: t0.Add(time.Minute), LastSeen: t0.Add(time.Minute), Embedder: "e", Vector: []float32{0, 1}},
	}
	if err := ps.RestorePreferences(ctx, ann, prefs, []string{"m2", "m1"}); err != nil {
		t.Fatalf("RestorePreferences: %v", err)
	}
	got, err := ps.Preferences(ctx, ann)
	if err != nil || len(got) != 2 || got[0].ID != "p1" || got[1].Weight != -2 || got[0].Evidence != 3 || !slices.Equal(got[1].Vector, []float32{0, 1}) {
		t.Fatalf("restored preferences = %+v, %v", got, err)
	}
	if src, _ := ps.PreferenceSources(ctx, ann); !slices.Equal(src, []string{"m2", "m1"}) {
		t.Errorf("restored sources = %v, want [m2 m1] in the order given", src)
	}
	v0, _ := ps.PreferenceVersion(ctx, ann)
	w := 0.5
	at := t0.Add(time.Hour)
	patched, err := ps.PatchPreference(ctx, ann, "p2", memento.PreferencePatch{Weight: &w, At: at})
	if err != nil || patched.Weight != 0.5 || !patched.LastSeen.Equal(at) {
		t.Errorf("PatchPreference(weight) = %+v, %v; want weight 0.5 seen at %v", patched, err, at)
	}
	concept := "slasher films"
	if p, err := ps.PatchPreference(ctx, ann, "p2", memento.PreferencePatch{Concept: &concept, Vector: []float32{0.5, 0.5}, Embedder: "e"}); err != nil || p.Concept != concept {
		t.Errorf("PatchPreference(concept) = %+v, %v", p, err)
	}
	if v, _ := ps.PreferenceVersion(ctx, ann); v.Version != v0.Version+2 {
		t.Errorf("version after two patches = %d, want %d", v.Version, v0.Version+2)
	}
	_, err = ps.PatchPreference(ctx, ann, "nope", memento.PreferencePatch{Weight: &w})
	wantCode(t, "PatchPreference of an unknown id", err, memento.ENOTFOUND)
	_, err = ps.PatchPreference(ctx, ann, "p1", memento.PreferencePatch{Concept: &concept})
	wantCode(t, "PatchPreference of a concept without its vector", err, memento.EINVALID)
	err = ps.RestorePreferences(ctx, ann, []memento.Preference{prefs[0], prefs[0]}, nil)
	wantCode(t, "RestorePreferences with a repeated id", err, memento.EINVALID)
	_, err = ps.WritePreferences(ctx, ann, memento.PreferenceWrite{Source: "x"})
	wantCode(t, "WritePreferences without a merge", err, memento.EINVALID)
	// Clustering from a stale version asks for another run.
	v, _ := ps.PreferenceVersion(ctx, ann)
	before := enqueuedOf(t, st, memento.JobPreferenceClusters)
	if err := ps.SavePreferenceClusters(ctx, ann, v.Version-1, nil); err != nil {
		t.Fatal(err)
	}
	if after := enqueuedOf(t, st, memento.JobPreferenceClusters); after != before+1 {
		t.Errorf("clustering jobs after a stale save = %d, want %d", after, before+1)
	}
	if err := ps.SavePreferenceClusters(ctx, ann, v.Version, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := ps.PreferenceVersion(ctx, ann); got.Clustered != v.Version {
		t.Errorf("clustered version = %d, want %d", got.Clustered, v.Version)
	}
	err = ps.SavePreferenceClusters(ctx, memento.Scope{User: "nobody"}, 1, nil)
	wantCode(t, "SavePreferenceClusters of an unknown user", err, memento.ENOTFOUND)

	// A user deleted and created again counts its versions from the
	// start; Since tells the two apart, so that no cache takes the
	// deleted user's preferences for the new user's.
	old, _ := ps.PreferenceVersion(ctx, bob)
	if old != (memento.PreferenceVersion{}) {
		t.Errorf("PreferenceVersion of a user without preferences = %+v, want zero", old)
	}
	if err := ps.RestorePreferences(ctx, bob, prefs, nil); err != nil {
		t.Fatal(err)
	}
	old, _ = ps.PreferenceVersion(ctx, bob)
	if old.Version == 0 || old.Since.IsZero() {
		t.Errorf("PreferenceVersion after a restore = %+v, want a version and the user's creation time", old)
	}
	if err := st.DeleteUser(ctx, bob); err != nil {
		t.Fatal(err)
	}
	if v, _ := ps.PreferenceVersion(ctx, bob); v != (memento.PreferenceVersion{}) {
		t.Errorf("PreferenceVersion of a deleted user = %+v, want zero", v)
	}
	time.Sleep(time.Millisecond) // a clock of coarse resolution moves on
	if err := ps.RestorePreferences(ctx, bob, prefs, nil); err != nil {
		t.Fatal(err)
	}
	if v, _ := ps.PreferenceVersion(ctx, bob); v.Version != old.Version || v.Since.Equal(old.Since) {
		t.Errorf("PreferenceVersion of the user created again = %+v, the deleted one's %+v; want the same version, another Since", v, old)
	}
}

func testRecallPruning(t *testing.T, open Opener) {
	st := open(t)
	rc, ok1 := st.(memento.RecallCorpus)
	pr, ok2 := st.(RecallPruner)
	if !ok1 || !ok2 {
		t.Skip("the store does not implement memento.RecallCorpus and storetest.RecallPruner")
	}
	ctx := t.Context()
	userMessage(t, st, ann, "t1", "m1", "hello", 0)
	first, err := rc.RecallDocs(ctx, ann, -1)
	if err != nil {
		t.Fatal(err)
	}
	userMessage(t, st, ann, "t1", "m2", "again", 1)
	time.Sleep(5 * time.Millisecond)
	n, err := pr.PruneRecallChanges(ctx, 0)
	if err != nil || n < 2 {
		t.Fatalf("PruneRecallChanges(0) = %d, %v; want at least the two messages' rows", n, err)
	}
	got, err := rc.RecallDocs(ctx, ann, first.Through)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Full || len(got.Docs) != 2 {
		t.Errorf("a read from before the pruned rows = full %v, %d docs; want everything again", got.Full, len(got.Docs))
	}
	userMessage(t, st, ann, "t1", "m3", "and again", 2)
	next, err := rc.RecallDocs(ctx, ann, got.Through)
	if err != nil || next.Full || len(next.Docs) != 1 || next.Docs[0].Candidate.ID != "m3" {
		t.Errorf("a read after the pruning = %+v, %v; want only m3", next, err)
	}
}

func testPipelineLog(t *testing.T, open Opener) {
	st := open(t)
	pl, ok := st.(PipelineLog)
	if !ok {
		t.Skip("the store does not implement storetest.PipelineLog")
	}
	ctx := t.Context()
	m1 := userMessage(t, st, ann, "t1", "m1", "one", 0)
	appendOK(t, st, ann, "t1", msgID("a1", memento.RoleAssistant, "reply", 1))
	m2 := userMessage(t, st, ann, "t2", "m2", "two", 2)
	m3 := userMessage(t, st, ann, "t1", "m3", "three", 3)
	writeOK(t, st, ann, memento.MemoryWrite{Message: m2, Run: run(m2)})
	if ok, err := pl.MemoryProcessed(ctx, ann, "m2"); err != nil || !ok {
		t.Errorf("MemoryProcessed(m2) = %v, %v; want true", ok, err)
	}
	if ok, err := pl.MemoryProcessed(ctx, ann, "m1"); err != nil || ok {
		t.Errorf("MemoryProcessed(m1) = %v, %v; want false", ok, err)
	}
	got, err := pl.EarlierUnprocessed(ctx, ann, m3.ID, 10)
	if err != nil || len(got) != 1 || got[0].ID != m1.ID {
		t.Errorf("EarlierUnprocessed(m3) = %v, %v; want only m1 (m2 is processed, a1 is the assistant's)", texts(got), err)
	}
	_, err = pl.EarlierUnprocessed(ctx, ann, "nope", 10)
	wantCode(t, "EarlierUnprocessed of an unknown message", err, memento.ENOTFOUND)
	_, err = pl.EarlierUnprocessed(ctx, ann, m3.ID, 0)
	wantCode(t, "EarlierUnprocessed with no limit", err, memento.EINVALID)
}

// CheckpointStore is a store that keeps the pipeline's graph checkpoints.
type CheckpointStore interface {
	Checkpointer(s memento.Scope) graph.Checkpointer
}

func testCheckpoints(t *testing.T, open Opener) {
	st := open(t)
	cs, ok := st.(CheckpointStore)
	if !ok {
		t.Skip("the store does not implement storetest.CheckpointStore")
	}
	ctx := t.Context()
	m1 := userMessage(t, st, ann, "t1", "m1", "I love heist films", 0)
	userMessage(t, st, bob, "t1", "b1", "hello", 0)
	cp := cs.Checkpointer(ann)
	key := "memory/" + m1.ID
	if _, ok, err := cp.Load(ctx, key); err != nil || ok {
		t.Errorf("Load before Save = %v, %v; want none", ok, err)
	}
	saved := graph.Checkpoint{Graph: "memory", Next: "extract", State: []byte(`{"facts":["heist"]}`),
		Trace: []graph.Step{{Node: "sentinel", Started: t0, Duration: time.Millisecond, Outcome: "ok"}}, SavedAt: t0}
	if err := cp.Save(ctx, key, saved); err != nil {
		t.Fatalf("Save: %v", err)
	}
	saved.Next = "review"
	if err := cp.Save(ctx, key, saved); err != nil {
		t.Fatalf("Save again: %v", err)
	}
	got, ok, err := cp.Load(ctx, key)
	if err != nil || !ok || got.Next != "review" || string(got.State) != `{"facts":["heist"]}` || len(got.Trace) != 1 || !got.SavedAt.Equal(t0) {
		t.Errorf("Load = %+v, %v, %v; want the second save", got, ok, err)
	}
	if _, ok, _ := cs.Checkpointer(bob).Load(ctx, key); ok {
		t.Errorf("another user sees the checkpoint")
	}
	// The write of the run's results deletes its checkpoint with them.
	writeOK(t, st, ann, memento.MemoryWrite{Message: m1, Run: run(m1), Checkpoint: key})
	if _, ok, err := cp.Load(ctx, key); err != nil || ok {
		t.Errorf("after WriteMemories the checkpoint is still there (%v, %v)", ok, err)
	}
	if err := cp.Save(ctx, "other/1", saved); err != nil {
		t.Fatal(err)
	}
	if err := cp.Delete(ctx, "other/1"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if err := cp.Delete(ctx, "other/1"); err != nil {
		t.Errorf("Delete of a missing key = %v, want nil", err)
	}
}

func testTitles(t *testing.T, open Opener) {
	st := open(t)
	ts, ok := st.(memento.TitleService)
	if !ok {
		t.Skip("the store does not implement memento.TitleService")
	}
	ctx := t.Context()
	titles := []memento.Title{
		{ID: "wiki:Heat", Title: "Heat", Type: memento.TypeMovie, Year: 1995, Genres: []string{"Crime"}, Cast: []string{"Al Pacino"}, RuntimeMinutes: 170, Notability: 0.9},
		{ID: "wiki:Alien", Title: "Alien", Type: memento.TypeMovie, Year: 1979, Notability: 0.8, IsAdult: false, Href: "https://example.org/alien"},
	}
	if n, err := ts.PutTitles(ctx, titles, false); err != nil || n != 2 {
		t.Fatalf("PutTitles = %d, %v", n, err)
	}
	titles[0].Year = 1996
	if _, err := ts.PutTitles(ctx, titles[:1], false); err != nil {
		t.Fatal(err)
	}
	got, err := ts.Titles(ctx)
	if err != nil || len(got) != 2 || got[0].ID != "wiki:Alien" || got[1].Year != 1996 || got[1].Cast[0] != "Al Pacino" || got[0].Genres == nil || got[1].Notability != 0.9 {
		t.Errorf("Titles = %+v, %v; want both by id, Heat updated", got, err)
	}
	if _, err := ts.PutTitles(ctx, []memento.Title{{ID: "ml:1", Title: "Toy Story"}}, true); err != nil {
		t.Fatal(err)
	}
	if n, err := ts.CountTitles(ctx); err != nil || n != 1 {
		t.Errorf("CountTitles after a replacing put = %d, %v; want 1", n, err)
	}
	_, err = ts.PutTitles(ctx, []memento.Title{{ID: "x"}}, false)
	wantCode(t, "PutTitles of a title without a name", err, memento.EINVALID)
}

// SnapshotSource is a store that the snapshot write-behind scans for
// changed users.
type SnapshotSource interface {
	ChangedUsers(ctx context.Context, since time.Time) (map[memento.Scope]time.Time, error)
	SnapshotCursor(ctx context.Context, target string) (time.Time, error)
	SetSnapshotCursor(ctx context.Context, target string, at time.Time) error
}

func testSnapshotSource(t *testing.T, open Opener) {
	st := open(t)
	ss, ok := st.(SnapshotSource)
	if !ok {
		t.Skip("the store does not implement storetest.SnapshotSource")
	}
	ctx := t.Context()
	if at, err := ss.SnapshotCursor(ctx, "s3"); err != nil || !at.IsZero() {
		t.Errorf("SnapshotCursor before any = %v, %v; want the zero time", at, err)
	}
	if err := ss.SetSnapshotCursor(ctx, "s3", t0); err != nil {
		t.Fatal(err)
	}
	if at, err := ss.SnapshotCursor(ctx, "s3"); err != nil || !at.Equal(t0) {
		t.Errorf("SnapshotCursor = %v, %v; want %v", at, err, t0)
	}
	before := time.Now().Add(-time.Second)
	userMessage(t, st, ann, "t1", "m1", "hello", 0)
	if _, err := st.AddEvents(ctx, memento.Scope{Tenant: "acme", User: "zed"}, []memento.Event{{Type: memento.EventWatched, TitleID: "x"}}, nil); err != nil {
		t.Fatal(err)
	}
	changed, err := ss.ChangedUsers(ctx, before)
	if err != nil {
		t.Fatalf("ChangedUsers: %v", err)
	}
	if _, ok := changed[ann]; !ok {
		t.Errorf("ChangedUsers = %v, want ann (a message was appended)", changed)
	}
	if _, ok := changed[memento.Scope{Tenant: "acme", User: "zed"}]; !ok {
		t.Errorf("ChangedUsers = %v, want acme/zed (an event was added)", changed)
	}
	later, err := ss.ChangedUsers(ctx, time.Now().Add(time.Hour))
	if err != nil || len(later) != 0 {
		t.Errorf("ChangedUsers after every change = %v, %v; want none", later, err)
	}
}

// testMessageEmotion stores messages with and without the emotion they
// express and reads it back, from the log, a turn and an export alike.
func testMessageEmotion(t *testing.T, open Opener) {
	st := open(t)
	ctx := t.Context()
	sad := &memento.Emotion{Label: memento.EmotionSadness, Confidence: 0.75}
	res, err := st.AppendMessages(ctx, ann, "t1", []memento.Message{
		{ID: "m1", Role: memento.RoleUser, Text: "my cat died", Emotion: sad},
		{ID: "m2", Role: memento.RoleAssistant, Text: "I am sorry"},
	}, nil)
	if err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	if res.Messages[0].Emotion == nil || *res.Messages[0].Emotion != *sad {
		t.Errorf("appended emotion = %+v, want %+v", res.Messages[0].Emotion, sad)
	}
	if _, err := st.SaveTurn(ctx, memento.Turn{Scope: ann, Thread: "t1", State: memento.ThreadState{Context: memento.NewActiveContext()},
		Messages: []memento.Message{{ID: "m3", Role: memento.RoleUser, Text: "wow!", Emotion: &memento.Emotion{Label: memento.EmotionSurprise, Confidence: 1}}}}); err != nil {
		t.Fatalf("SaveTurn: %v", err)
	}
	msgs := messagesOK(t, st, ann, "t1")
	if len(msgs) != 3 || msgs[0].Emotion == nil || *msgs[0].Emotion != *sad || msgs[1].Emotion != nil || msgs[2].Emotion == nil || msgs[2].Emotion.Label != memento.EmotionSurprise {
		t.Errorf("stored emotions = %+v", msgs)
	}
	for _, bad := range []memento.Emotion{{Label: "glee", Confidence: 0.5}, {Label: memento.EmotionJoy, Confidence: 1.5}} {
		_, err := st.AppendMessages(ctx, ann, "t1", []memento.Message{{Role: memento.RoleUser, Text: "x", Emotion: &bad}}, nil)
		wantCode(t, "an emotion "+bad.Label, err, memento.EINVALID)
	}
	if ex, ok := st.(Exporter); ok {
		doc, err := ex.ExportUser(ctx, ann)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ex.ImportUser(ctx, bob, doc); err != nil {
			t.Fatal(err)
		}
		if got := messagesOK(t, st, bob, "t1"); got[0].Emotion == nil || *got[0].Emotion != *sad {
			t.Errorf("imported emotion = %+v, want %+v", got[0].Emotion, sad)
		}
	}
}
