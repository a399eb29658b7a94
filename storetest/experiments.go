package storetest

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/experiment"
)

// Studies is a store that keeps the studies of package experiment.
type Studies interface {
	// Experiments returns the store of studies and their participants.
	Experiments() experiment.Store
}

// newStudy returns a valid two-arm study with the default instrument.
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

// answersOf returns n answers of value v.
func answersOf(n, v int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// testExperiments runs a study through its stages: creation, enrolment
// (with the participant's user created in the arm's memory mode),
// demographics, the conversation's message count, the questionnaire, and
// the refusals of each stage out of order.
func testExperiments(t *testing.T, open Opener) {
	st := open(t)
	ss, ok := st.(Studies)
	if !ok {
		t.Skip("the store does not implement storetest.Studies (Experiments)")
	}
	ctx := t.Context()
	x := ss.Experiments()
	if _, err := x.CreateStudy(ctx, newStudy(t, "trust")); err != nil {
		t.Fatalf("CreateStudy: %v", err)
	}
	_, err := x.CreateStudy(ctx, newStudy(t, "trust"))
	wantCode(t, "CreateStudy of a taken name", err, memento.ECONFLICT)
	_, err = x.CreateStudy(ctx, experiment.Study{Name: "bad name!"})
	wantCode(t, "CreateStudy of an invalid study", err, memento.EINVALID)
	_, err = x.Study(ctx, "nope")
	wantCode(t, "Study of an unknown name", err, memento.ENOTFOUND)
	_, err = x.Enroll(ctx, "nope", "", experiment.Balanced(nil))
	wantCode(t, "Enroll in an unknown study", err, memento.ENOTFOUND)
	_, err = x.Participants(ctx, "nope")
	wantCode(t, "Participants of an unknown study", err, memento.ENOTFOUND)

	got, err := x.Study(ctx, "trust")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Arms) != 2 || got.Arms[0].Name != "semantic" || got.Instrument.ID != experiment.DefaultInstrument ||
		len(got.Instrument.Items) != 12 || got.CreatedAt.IsZero() {
		t.Fatalf("study read back as %+v", got)
	}
	if _, err := x.CreateStudy(ctx, newStudy(t, "later")); err != nil {
		t.Fatal(err)
	}
	if all, err := x.Studies(ctx); err != nil || len(all) != 2 || all[0].Name != "trust" || all[1].Name != "later" {
		t.Errorf("Studies = %+v, %v; want trust then later", all, err)
	}

	p, err := x.Enroll(ctx, "trust", "", experiment.Balanced(rand.New(rand.NewPCG(1, 1))))
	if err != nil {
		t.Fatalf("Enroll: %v", err)
	}
	if p.Stage != experiment.StageDemographics || p.User == "" || p.Thread == "" || p.Study != "trust" || p.ConsentedAt.IsZero() {
		t.Fatalf("enrolled %+v", p)
	}
	// The participant's user runs in the arm's mode for every attribute.
	us := memento.Scope{Tenant: memento.DefaultTenant, User: p.User}
	if modes, err := st.MemoryModes(ctx, us); err != nil || modes["*"] != p.Mode {
		t.Errorf("memory modes of %s = %v, %v; want * = %s", p.User, modes, err, p.Mode)
	}

	// Answers before the conversation are refused; so are bad
	// demographics.
	_, err = x.SaveAnswers(ctx, "trust", p.ID, answersOf(12, 4))
	wantCode(t, "SaveAnswers before the conversation", err, memento.ECONFLICT)
	_, err = x.SaveDemographics(ctx, "trust", p.ID, experiment.Demographics{Gender: "female", Age: 12, Familiarity: 3})
	wantCode(t, "SaveDemographics of a minor", err, memento.EINVALID)
	_, err = x.SaveDemographics(ctx, "trust", "p-nobody", experiment.Demographics{Gender: "female", Age: 31, Familiarity: 3})
	wantCode(t, "SaveDemographics of an unknown participant", err, memento.ENOTFOUND)
	p, err = x.SaveDemographics(ctx, "trust", p.ID, experiment.Demographics{Gender: "female", Age: 31, Familiarity: 3})
	if err != nil {
		t.Fatalf("SaveDemographics: %v", err)
	}
	if p.Stage != experiment.StageConversation || p.Demographics == nil || p.Demographics.Age != 31 {
		t.Fatalf("after demographics: %+v", p)
	}
	_, err = x.SaveDemographics(ctx, "trust", p.ID, experiment.Demographics{Gender: "male", Age: 40, Familiarity: 3})
	wantCode(t, "SaveDemographics twice", err, memento.ECONFLICT)
	_, err = x.SaveAnswers(ctx, "trust", p.ID, []int{1, 2, 3})
	wantCode(t, "SaveAnswers of too few items", err, memento.EINVALID)
	bad := answersOf(12, 4)
	bad[3] = 8
	_, err = x.SaveAnswers(ctx, "trust", p.ID, bad)
	wantCode(t, "SaveAnswers off the scale", err, memento.EINVALID)

	appendOK(t, st, us, p.Thread, msg(memento.RoleUser, "I like thrillers"), msg(memento.RoleAssistant, "Try Heat."))
	p, err = x.SaveAnswers(ctx, "trust", p.ID, answersOf(12, 5))
	if err != nil {
		t.Fatalf("SaveAnswers: %v", err)
	}
	if p.Stage != experiment.StageDone || p.CompletedAt == nil || len(p.Answers) != 12 || p.Answers[0] != 5 || p.Messages != 1 {
		t.Fatalf("after answers: %+v; want done, 12 answers, 1 message of the participant's own", p)
	}
	_, err = x.SaveAnswers(ctx, "trust", p.ID, answersOf(12, 5))
	wantCode(t, "SaveAnswers twice", err, memento.ECONFLICT)
	again, err := x.Participant(ctx, "trust", p.ID)
	if err != nil || again.Stage != experiment.StageDone || again.Demographics == nil || again.Demographics.Gender != "female" ||
		!again.CompletedAt.Equal(*p.CompletedAt) || !again.ConsentedAt.Equal(p.ConsentedAt) {
		t.Errorf("Participant = %+v, %v; want %+v", again, err, p)
	}
	_, err = x.Participant(ctx, "later", p.ID)
	wantCode(t, "Participant of another study", err, memento.ENOTFOUND)

	// A participant of another tenant gets their user there.
	q, err := x.Enroll(ctx, "trust", "acme", experiment.Balanced(nil))
	if err != nil {
		t.Fatalf("Enroll in tenant acme: %v", err)
	}
	if modes, err := st.MemoryModes(ctx, memento.Scope{Tenant: "acme", User: q.User}); err != nil || modes["*"] != q.Mode {
		t.Errorf("memory modes of acme/%s = %v, %v; want * = %s", q.User, modes, err, q.Mode)
	}
	ps, err := x.Participants(ctx, "trust")
	if err != nil || len(ps) != 2 || ps[0].ID != p.ID || ps[1].ID != q.ID || ps[0].Messages != 1 || ps[0].Arm == ps[1].Arm {
		t.Errorf("Participants = %+v, %v; want %s then %s, in different arms", ps, err, p.ID, q.ID)
	}
	if ps, err := x.Participants(ctx, "later"); err != nil || len(ps) != 0 {
		t.Errorf("Participants of a study without any = %+v, %v", ps, err)
	}
}

// testConcurrentEnrolment enrols 30 participants at once: the arm counts
// each enrolment sees must be read in its own write transaction, so the
// arms end exactly balanced, every participant with a user of their own.
func testConcurrentEnrolment(t *testing.T, open Opener) {
	st := open(t)
	ss, ok := st.(Studies)
	if !ok {
		t.Skip("the store does not implement storetest.Studies (Experiments)")
	}
	EnrolBalanced(t, []experiment.Store{ss.Experiments()}, 30)
}

// EnrolBalanced creates a study through the first of stores and enrols n
// participants (n even) at once, spread over the stores (which may be
// several processes' stores on one database), and checks that the two
// arms got n/2 each, in order of enrolment, each participant with a user
// of their own. A backend's own tests call it with several stores.
func EnrolBalanced(t *testing.T, stores []experiment.Store, n int) {
	t.Helper()
	ctx := t.Context()
	if _, err := stores[0].CreateStudy(ctx, newStudy(t, "balanced")); err != nil {
		t.Fatalf("CreateStudy: %v", err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		x := stores[i%len(stores)]
		assign := experiment.Balanced(rand.New(rand.NewPCG(uint64(i), 7)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := x.Enroll(noCtx(), "balanced", "", assign); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Enroll: %v", err)
	}
	ps, err := stores[len(stores)-1].Participants(ctx, "balanced")
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	users := map[string]bool{}
	for i, p := range ps {
		counts[p.Arm]++
		users[p.User] = true
		// Within each round of two enrolments, one went to each arm.
		if i%2 == 1 && p.Arm == ps[i-1].Arm {
			t.Errorf("participants %d and %d both went to %s; balanced assignment alternates within a round", i-1, i, p.Arm)
		}
	}
	if len(ps) != n || counts["semantic"] != n/2 || counts["episodic"] != n/2 {
		t.Errorf("%d participants, arm counts %v; want %d, %d each", len(ps), counts, n, n/2)
	}
	if len(users) != n {
		t.Errorf("%d distinct users for %d participants", len(users), n)
	}
}
