package prefs_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/prefs"
)

// TestRecallerKeepsItsRead checks that a Recaller reuses its read of a
// user while the user's preference version stands, and answers as a new
// Recaller would after every kind of change: a learnt message, a patch, a
// deletion, a new clustering, the user deleted and created again up to
// the same version, and a later query time (decay).
func TestRecallerKeepsItsRead(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: day0}
	svc, db := newService(t, clk)
	s := memento.Scope{User: "ann"}
	learn := func(id, text string) {
		t.Helper()
		if _, err := svc.LearnMessage(ctx, s, memento.Message{ID: id, Role: memento.RoleUser, Text: text, At: day0}); err != nil {
			t.Fatalf("LearnMessage: %v", err)
		}
	}
	r := &prefs.Recaller{Prefs: svc}
	// check recalls with r and with a new Recaller, which must agree,
	// and that r read the store reads times in all.
	check := func(what string, q memento.RecallQuery, reads int64) []memento.RecallItem {
		t.Helper()
		q.Scope = s
		got, err := r.Recall(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		want, err := (&prefs.Recaller{Prefs: svc}).Recall(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: the kept read answers otherwise than a new one (-new +kept):\n%s", what, diff)
		}
		if n := r.Reads(); n != reads {
			t.Errorf("%s: %d reads of the store, want %d", what, n, reads)
		}
		return got
	}
	learn("m1", "I love heist films.")
	learn("m2", "I can't stand horror movies.")
	if items := check("first recall", memento.RecallQuery{}, 1); len(items) != 2 {
		t.Fatalf("first recall = %+v, want the two preferences", items)
	}
	check("again", memento.RecallQuery{Query: "a heist film"}, 1)
	check("again, no query", memento.RecallQuery{}, 1)

	learn("m3", "I like westerns.")
	if items := check("after a new message", memento.RecallQuery{}, 2); len(items) != 3 {
		t.Errorf("after a new message: %+v, want three preferences", items)
	}
	all, err := svc.Live(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	w := 0.2
	if _, err := svc.Patch(ctx, s, all[0].ID, nil, &w); err != nil {
		t.Fatal(err)
	}
	check("after a patch", memento.RecallQuery{}, 3)
	if err := svc.Delete(ctx, s, all[1].ID); err != nil {
		t.Fatal(err)
	}
	check("after a deletion", memento.RecallQuery{}, 4)
	learn("m4", "I like crime thrillers.")
	if err := svc.Recluster(ctx, s); err != nil {
		t.Fatal(err)
	}
	reads := r.Reads() + 1
	check("after clustering", memento.RecallQuery{Query: "crime"}, reads)
	// Decay is applied at the query's time to the kept rows.
	check("a year later", memento.RecallQuery{Now: day0.AddDate(1, 0, 0)}, reads)

	// The user deleted and created again, brought to the deleted user's
	// version with other preferences.
	old, err := db.PreferenceVersion(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteUser(ctx, s); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Millisecond)
	learn("n1", "I love musicals.")
	live, err := svc.Live(ctx, s)
	if err != nil || len(live) == 0 {
		t.Fatalf("Live after learning again = %v, %v", live, err)
	}
	for {
		v, err := db.PreferenceVersion(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if v.Version == old.Clustered && v.Clustered != old.Clustered {
			if err := svc.Recluster(ctx, s); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if v.Version >= old.Version {
			if v.Version != old.Version {
				t.Fatalf("version %d passed the deleted user's %d", v.Version, old.Version)
			}
			break
		}
		w := 0.5 + float64(v.Version)/100
		if _, err := svc.Patch(ctx, s, live[0].ID, nil, &w); err != nil {
			t.Fatal(err)
		}
	}
	if v, _ := db.PreferenceVersion(ctx, s); v.Version != old.Version || v.Clustered != old.Clustered {
		t.Fatalf("the user created again is at %+v, want the deleted user's counts %+v", v, old)
	}
	if items := check("the user created again", memento.RecallQuery{}, reads+1); len(items) != 1 || items[0].ID != live[0].ID {
		t.Errorf("the user created again recalls %+v, want only the new preference", items)
	}
}

// TestRecallerConcurrent recalls a user from several goroutines while the
// user's preferences change, then checks the kept read answers as a new
// one.
func TestRecallerConcurrent(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: day0}
	svc, _ := newService(t, clk)
	s := memento.Scope{User: "ann"}
	r := &prefs.Recaller{Prefs: svc}
	texts := []string{"I love heist films.", "I can't stand horror movies.", "I like westerns.", "I love musicals.", "I like crime thrillers."}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	wg.Go(func() {
		for i, text := range texts {
			if _, err := svc.LearnMessage(ctx, s, memento.Message{ID: "m" + string(rune('a'+i)), Role: memento.RoleUser, Text: text, At: day0}); err != nil {
				errs <- err
			}
		}
	})
	for range 3 {
		wg.Go(func() {
			for range 20 {
				if _, err := r.Recall(ctx, memento.RecallQuery{Scope: s, Query: "films"}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, err := r.Recall(ctx, memento.RecallQuery{Scope: s})
	if err != nil {
		t.Fatal(err)
	}
	want, err := (&prefs.Recaller{Prefs: svc}).Recall(ctx, memento.RecallQuery{Scope: s})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" || len(got) != len(texts) {
		t.Errorf("after concurrent changes (-new +kept), %d items:\n%s", len(got), diff)
	}
}
