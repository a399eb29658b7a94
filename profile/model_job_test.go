package profile_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/profile"
	"github.com/memento-ai/memento/sqlite"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// timedSaves is a store that records when each model save began and
// makes each save take slow.
type timedSaves struct {
	*sqlite.DB
	slow  time.Duration
	mu    sync.Mutex
	saves []time.Time
}

func (s *timedSaves) SaveProfileModel(ctx context.Context, m memento.ProfileModel, keepVersion bool) (int64, error) {
	s.mu.Lock()
	s.saves = append(s.saves, time.Now())
	s.mu.Unlock()
	time.Sleep(s.slow)
	return s.DB.SaveProfileModel(ctx, m, keepVersion)
}

func (s *timedSaves) times() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.saves...)
}

// addLiked adds one liked title to a user, returning when it was stored.
func addLiked(t *testing.T, db *sqlite.DB, user, title string) time.Time {
	t.Helper()
	if _, err := db.AddEvents(context.Background(), memento.Scope{User: user},
		[]memento.Event{{Type: memento.EventLiked, TitleID: title}}, nil); err != nil {
		t.Fatal(err)
	}
	return time.Now()
}

// TestModelJobWaitsForAQuietSpan: model jobs that events keep following,
// each sooner than the quiet span after the one before, recompute once,
// after the last of them and no sooner than the quiet span after it. The
// span is wide, so that a slow store write on a loaded machine does not
// look like a pause.
func TestModelJobWaitsForAQuietSpan(t *testing.T) {
	const quiet = time.Second
	db := &timedSaves{DB: sqlitetest.Open(t)}
	w := &profile.Worker{Events: db, Profiles: db, Models: db, ModelEvery: time.Minute, ModelQuiet: quiet}
	payload := []byte(`{"tenant":"default"}`)
	// The first job of a worker recomputes at once; the next waits.
	addLiked(t, db.DB, "ann", "wiki:Heat")
	if err := w.HandleModel(context.Background(), memento.JobProfileModel, payload); err != nil {
		t.Fatal(err)
	}
	addLiked(t, db.DB, "ann", "wiki:Ronin")
	// Two jobs at once, as two workers take them: one waits and
	// recomputes, the other is coalesced into it.
	done := make(chan error, 2)
	for range 2 {
		go func() { done <- w.HandleModel(context.Background(), memento.JobProfileModel, payload) }()
	}
	var last time.Time
	for k := range 8 {
		time.Sleep(quiet / 10)
		last = addLiked(t, db.DB, "ann", fmt.Sprintf("wiki:T%d", k))
	}
	for range 2 {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the model job did not end")
		}
	}
	saves := db.times()
	if len(saves) != 2 {
		t.Fatalf("%d saves, want 2: the events never paused for %s", len(saves), quiet)
	}
	if gap := saves[1].Sub(last); gap < quiet {
		t.Errorf("the model was saved %s after the last event, want at least %s", gap, quiet)
	}
}

// TestModelRecomputesRestBetween: the recompute after one that took long
// starts no sooner than that long after it ended, however quiet the
// events are, so that events spaced just past the quiet span cannot keep
// a processor recomputing.
func TestModelRecomputesRestBetween(t *testing.T) {
	const quiet, slow = 20 * time.Millisecond, 500 * time.Millisecond
	db := &timedSaves{DB: sqlitetest.Open(t), slow: slow}
	w := &profile.Worker{Events: db, Profiles: db, Models: db, ModelEvery: time.Minute, ModelQuiet: quiet}
	payload := []byte(`{"tenant":"default"}`)
	addLiked(t, db.DB, "ann", "wiki:Heat")
	if err := w.HandleModel(context.Background(), memento.JobProfileModel, payload); err != nil {
		t.Fatal(err)
	}
	ended := time.Now()
	addLiked(t, db.DB, "ann", "wiki:Ronin")
	if err := w.HandleModel(context.Background(), memento.JobProfileModel, payload); err != nil {
		t.Fatal(err)
	}
	saves := db.times()
	if len(saves) != 2 {
		t.Fatalf("%d saves, want 2", len(saves))
	}
	if gap := saves[1].Sub(ended); gap < slow {
		t.Errorf("the second recompute saved %s after the first ended, want at least %s (what the first took)", gap, slow)
	}
}
