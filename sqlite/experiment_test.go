package sqlite_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/experiment"
)

func newStudy(t *testing.T, name string) experiment.Study {
	t.Helper()
	arms, err := experiment.ParseArms("semantic,episodic")
	if err != nil {
		t.Fatal(err)
	}
	s, err := experiment.NewStudy(name, arms, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestExperimentStudyLifecycle(t *testing.T) {
	ctx := context.Background()
	db := openClocked(t)
	x := db.Experiments()
	if _, err := x.CreateStudy(ctx, newStudy(t, "trust")); err != nil {
		t.Fatal(err)
	}
	_, err := x.CreateStudy(ctx, newStudy(t, "trust"))
	wantCode(t, err, memento.ECONFLICT)
	_, err = x.Study(ctx, "nope")
	wantCode(t, err, memento.ENOTFOUND)
	_, err = x.Enroll(ctx, "nope", "", experiment.Balanced(nil))
	wantCode(t, err, memento.ENOTFOUND)

	got, err := x.Study(ctx, "trust")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Arms) != 2 || got.Instrument.ID != experiment.DefaultInstrument || len(got.Instrument.Items) != 12 {
		t.Fatalf("study read back as %+v", got)
	}

	p, err := x.Enroll(ctx, "trust", "", experiment.Balanced(rand.New(rand.NewPCG(1, 1))))
	if err != nil {
		t.Fatal(err)
	}
	if p.Stage != experiment.StageDemographics || p.User == "" || p.Thread == "" {
		t.Fatalf("enrolled %+v", p)
	}
	// The participant's user runs in the arm's mode for every attribute.
	modes, err := db.MemoryModes(ctx, memento.Scope{Tenant: memento.DefaultTenant, User: p.User})
	if err != nil {
		t.Fatal(err)
	}
	if modes["*"] != p.Mode {
		t.Errorf("memory modes of %s = %v, want * = %s", p.User, modes, p.Mode)
	}

	// Answers before the conversation are refused; so are bad
	// demographics.
	_, err = x.SaveAnswers(ctx, "trust", p.ID, make12(4))
	wantCode(t, err, memento.ECONFLICT)
	_, err = x.SaveDemographics(ctx, "trust", p.ID, experiment.Demographics{Gender: "female", Age: 12, Familiarity: 3})
	wantCode(t, err, memento.EINVALID)
	p, err = x.SaveDemographics(ctx, "trust", p.ID, experiment.Demographics{Gender: "female", Age: 31, Familiarity: 3})
	if err != nil {
		t.Fatal(err)
	}
	if p.Stage != experiment.StageConversation || p.Demographics.Age != 31 {
		t.Fatalf("after demographics: %+v", p)
	}
	_, err = x.SaveDemographics(ctx, "trust", p.ID, experiment.Demographics{Gender: "male", Age: 40, Familiarity: 3})
	wantCode(t, err, memento.ECONFLICT)
	_, err = x.SaveAnswers(ctx, "trust", p.ID, []int{1, 2, 3})
	wantCode(t, err, memento.EINVALID)
	bad := make12(4)
	bad[3] = 8
	_, err = x.SaveAnswers(ctx, "trust", p.ID, bad)
	wantCode(t, err, memento.EINVALID)

	appendTexts(t, db, memento.Scope{Tenant: memento.DefaultTenant, User: p.User}, p.Thread, "I like thrillers")
	p, err = x.SaveAnswers(ctx, "trust", p.ID, make12(5))
	if err != nil {
		t.Fatal(err)
	}
	if p.Stage != experiment.StageDone || p.CompletedAt == nil || len(p.Answers) != 12 || p.Messages != 1 {
		t.Fatalf("after answers: %+v", p)
	}
	_, err = x.SaveAnswers(ctx, "trust", p.ID, make12(5))
	wantCode(t, err, memento.ECONFLICT)
	ps, err := x.Participants(ctx, "trust")
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || ps[0].ID != p.ID {
		t.Fatalf("participants = %+v", ps)
	}
}

func make12(v int) []int {
	out := make([]int, 12)
	for i := range out {
		out[i] = v
	}
	return out
}

// Concurrent enrolments stay balanced: the counts the assignment sees are
// read in the enrolment's own write transaction.
func TestExperimentEnrollBalancedConcurrent(t *testing.T) {
	ctx := context.Background()
	db := openClocked(t)
	x := db.Experiments()
	if _, err := x.CreateStudy(ctx, newStudy(t, "b")); err != nil {
		t.Fatal(err)
	}
	assign := experiment.Balanced(rand.New(rand.NewPCG(7, 7)))
	var wg sync.WaitGroup
	errs := make(chan error, 30)
	for range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := x.Enroll(ctx, "b", "", assign); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	ps, err := x.Participants(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	users := map[string]bool{}
	for _, p := range ps {
		counts[p.Arm]++
		users[p.User] = true
	}
	if counts["semantic"] != 15 || counts["episodic"] != 15 {
		t.Errorf("arm counts = %v, want 15 each", counts)
	}
	if len(users) != 30 {
		t.Errorf("%d distinct users for 30 participants", len(users))
	}
}
