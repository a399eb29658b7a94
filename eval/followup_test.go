package eval

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/catalog"
)

// scripted answers each message with the titles and genres it was given.
type scripted struct {
	answers map[string]*agent.Response
}

func (s scripted) Turn(_ context.Context, _ string, req agent.Request) (*agent.Response, error) {
	if r, ok := s.answers[req.Message]; ok {
		return r, nil
	}
	return &agent.Response{ActiveContext: memento.NewActiveContext()}, nil
}

func answer(genres []string, ids ...string) *agent.Response {
	r := &agent.Response{ActiveContext: memento.NewActiveContext()}
	r.ActiveContext.Genres = genres
	for _, id := range ids {
		r.Titles = append(r.Titles, agent.TitleResult{ID: id})
	}
	return r
}

func utter(text string, acts ...IARDAct) IARDUtterance {
	return IARDUtterance{Participant: "USER", Utterance: text, DialogueActs: acts}
}

func genreMap(v string) []string {
	switch strings.ToLower(v) {
	case "thrillers", "thriller":
		return []string{"Thriller"}
	case "comedy":
		return []string{"Comedy"}
	}
	return nil
}

func TestFollowup(t *testing.T) {
	dialogues := []IARDDialogue{
		{ID: "1", Conversation: []IARDUtterance{
			utter("find me something"),
			{Participant: "AGENT", Utterance: "How about It?"},
			utter("seen it, what about thrillers", IARDAct{Intent: "SEE"},
				IARDAct{Intent: "CRI-A", SlotValues: [][]any{{"GENRE", "thrillers", nil, nil}}}),
			utter("not those either", IARDAct{Intent: "REJ"}),
		}},
		{ID: "2", Conversation: []IARDUtterance{
			utter("no wait", IARDAct{Intent: "REJ"}), // nothing shown yet: not judged
			utter("a comedy please", IARDAct{Intent: "CRI-A", SlotValues: [][]any{{"GENRE", "comedy", nil, nil}, {"GENRE", "cheese", nil, nil}}}),
		}},
	}
	ag := scripted{answers: map[string]*agent.Response{
		"find me something":             answer(nil, "a", "b"),
		"seen it, what about thrillers": answer([]string{"Thriller"}, "c", "d"),
		"not those either":              answer([]string{"Thriller"}, "d", "e"), // repeats d: a failure
		"a comedy please":               answer(nil, "x"),                       // genre lost: a failure
	}}
	got, err := Followup(context.Background(), ag, dialogues, FollowupOptions{Tenant: "t", Genres: genreMap})
	if err != nil {
		t.Fatal(err)
	}
	// The SEE turn is honoured (a and b never return); the REJ turn is
	// not (d, shown before it, returns). "cheese" is a criterion too, as
	// a keyword, and neither criterion of "a comedy please" is kept.
	if got.Dialogues != 2 || got.RejectTurns != 2 || got.CriteriaTurns != 2 || got.Criteria != 3 {
		t.Fatalf("counts = %+v, want 2 dialogues, 2 reject turns, 2 criteria turns, 3 criteria", got)
	}
	if got.RejectCompliance != 0.5 {
		t.Errorf("RejectCompliance = %v, want 0.5", got.RejectCompliance)
	}
	if got.CriteriaCapture != 0.5 {
		t.Errorf("CriteriaCapture = %v, want 0.5", got.CriteriaCapture)
	}
	if want := 1.0 / 3; got.CriteriaValueCapture != want {
		t.Errorf("CriteriaValueCapture = %v, want %v", got.CriteriaValueCapture, want)
	}
	if got, want := got.CriteriaBySlot["GENRE"], (SlotCapture{Judged: 3, Captured: 1}); got != want {
		t.Errorf("CriteriaBySlot[GENRE] = %+v, want %+v", got, want)
	}
	if len(got.Failures) != 2 || got.Failures[0].Check != "reject" || got.Failures[0].Got[0] != "d" || got.Failures[1].Check != "criteria" {
		t.Errorf("Failures = %+v", got.Failures)
	}
}

// tinyCatalog is a catalog of a few crime films and one animated film.
func tinyCatalog() *catalog.Index {
	return catalog.New([]memento.Title{
		{ID: "heat", Title: "Heat", Type: memento.TypeMovie, Year: 1995, Genres: []string{"Crime"}, Cast: []string{"Al Pacino"}},
		{ID: "thief", Title: "Thief", Type: memento.TypeMovie, Year: 1981, Genres: []string{"Crime"}},
		{ID: "ronin", Title: "Ronin", Type: memento.TypeMovie, Year: 1998, Genres: []string{"Crime"}},
		{ID: "insider", Title: "The Insider", Type: memento.TypeMovie, Year: 1999, Genres: []string{"Drama"}},
		{ID: "up", Title: "Up", Type: memento.TypeMovie, Year: 2009, Genres: []string{"Animated"}},
	})
}

func crime(ids ...string) *agent.Response { return answer([]string{"Crime"}, ids...) }

func TestFollowupRejections(t *testing.T) {
	see := IARDAct{Intent: "SEE"}
	rej := IARDAct{Intent: "REJ"}
	for _, tc := range []struct {
		name       string
		turns      []IARDUtterance
		answers    map[string]*agent.Response
		wantTurns  int
		wantOK     float64
		wantChecks []string
	}{{
		name:      "honoured",
		turns:     []IARDUtterance{utter("crime please"), utter("seen them", see), utter("more")},
		answers:   map[string]*agent.Response{"crime please": crime("heat", "thief"), "seen them": crime("ronin"), "more": crime("insider")},
		wantTurns: 1, wantOK: 1,
	}, {
		// The old rule compared with the next answer only, and passed.
		name:      "a seen title returns two turns later",
		turns:     []IARDUtterance{utter("crime please"), utter("seen them", see), utter("anything else?"), utter("more")},
		answers:   map[string]*agent.Response{"crime please": crime("heat", "thief"), "seen them": crime("ronin"), "anything else?": crime("insider"), "more": crime("heat")},
		wantTurns: 1, wantOK: 0, wantChecks: []string{"reject"},
	}, {
		name:      "a title named as seen comes back",
		turns:     []IARDUtterance{utter("I've seen Heat (1995), something else", IARDAct{Intent: "SEE", SlotValues: [][]any{{"TITLE", "Heat", nil, nil}}})},
		answers:   map[string]*agent.Response{"I've seen Heat (1995), something else": crime("heat", "ronin")},
		wantTurns: 1, wantOK: 0, wantChecks: []string{"reject"},
	}, {
		name:      "an empty answer while the catalog has matches",
		turns:     []IARDUtterance{utter("crime please"), utter("no", rej)},
		answers:   map[string]*agent.Response{"crime please": crime("heat"), "no": crime()},
		wantTurns: 1, wantOK: 0, wantChecks: []string{"reject-empty"},
	}, {
		name:      "an empty answer when nothing else matches",
		turns:     []IARDUtterance{utter("crime please"), utter("no", rej)},
		answers:   map[string]*agent.Response{"crime please": crime("heat", "thief", "ronin"), "no": excluding(crime(), "heat", "thief", "ronin")},
		wantTurns: 1, wantOK: 1,
	}, {
		name:      "the constraints are dropped",
		turns:     []IARDUtterance{utter("crime please"), utter("not those", rej)},
		answers:   map[string]*agent.Response{"crime please": crime("heat"), "not those": answer(nil, "up")},
		wantTurns: 1, wantOK: 0, wantChecks: []string{"reject-constraints"},
	}, {
		name: "a new criterion may change the constraints",
		turns: []IARDUtterance{utter("crime please"), utter("not those, something animated", rej,
			IARDAct{Intent: "CRI-A", SlotValues: [][]any{{"GENRE", "animated", nil, nil}}})},
		answers:   map[string]*agent.Response{"crime please": crime("heat"), "not those, something animated": answer([]string{"Animated"}, "up")},
		wantTurns: 1, wantOK: 1,
	}, {
		name:      "a stated preference may change the constraints",
		turns:     []IARDUtterance{utter("crime please"), utter("seen it, I love Up", see, IARDAct{Intent: "PRO"})},
		answers:   map[string]*agent.Response{"crime please": crime("heat"), "seen it, I love Up": answer([]string{"Animated"}, "up")},
		wantTurns: 1, wantOK: 1,
	}, {
		name:      "nothing shown or named: not judged",
		turns:     []IARDUtterance{utter("no", rej)},
		answers:   map[string]*agent.Response{"no": crime("heat")},
		wantTurns: 0,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			d := []IARDDialogue{{ID: "1", Conversation: tc.turns}}
			got, err := Followup(context.Background(), scripted{tc.answers}, d, FollowupOptions{Catalog: tinyCatalog(), Genres: genreMap})
			if err != nil {
				t.Fatal(err)
			}
			if got.RejectTurns != tc.wantTurns || got.RejectCompliance != tc.wantOK {
				t.Errorf("RejectTurns, RejectCompliance = %d, %v, want %d, %v", got.RejectTurns, got.RejectCompliance, tc.wantTurns, tc.wantOK)
			}
			var checks []string
			for _, f := range got.Failures {
				if f.Check != "criteria" {
					checks = append(checks, f.Check)
				}
			}
			if diff := cmp.Diff(tc.wantChecks, checks); diff != "" {
				t.Errorf("failed checks (-want +got):\n%s\nfailures: %+v", diff, got.Failures)
			}
		})
	}
}

func excluding(r *agent.Response, ids ...string) *agent.Response {
	r.ActiveContext.ExcludedTitleIDs = ids
	return r
}

func TestFollowupCriteria(t *testing.T) {
	all := answer([]string{"Thriller"})
	from, to := 1980, 1989
	all.ActiveContext.MinYear, all.ActiveContext.MaxYear = &from, &to
	all.ActiveContext.People = []string{"Al Pacino"}
	all.ActiveContext.Like = []string{"heat"}
	all.ActiveContext.FreeText = "heists"
	none := answer(nil)
	none.ActiveContext.Soft = []memento.SoftConstraint{{Kind: memento.SoftMood, Value: "light", Said: "something light"}}
	slots := [][]any{{"GENRE", "thrillers", nil, nil}, {"ACTOR", "Al Pacino", nil, nil}, {"YEAR", "80's", nil, nil},
		{"TITLE", "Heat", nil, nil}, {"KEYWORDS", "heist", nil, nil}, {"TITLE", "A Film Nobody Made", nil, nil}, {"YEAR", "lately", nil, nil}}
	d := []IARDDialogue{{ID: "1", Conversation: []IARDUtterance{
		utter("everything", IARDAct{Intent: "IQU", SlotValues: slots}),
		utter("everything again", IARDAct{Intent: "CRI-A", SlotValues: slots[:5]}),
		utter("just chatting", IARDAct{Intent: "PRO", SlotValues: slots[:1]}),               // not a criterion intent
		utter("heat was too long", IARDAct{Intent: "CRI-F", SlotValues: [][]any{slots[3]}}), // the title critiqued
	}}}
	got, err := Followup(context.Background(), scripted{map[string]*agent.Response{"everything": all, "everything again": none}}, d,
		FollowupOptions{Catalog: tinyCatalog(), Genres: genreMap})
	if err != nil {
		t.Fatal(err)
	}
	// The title the catalog lacks and the era it cannot read are not judged.
	if got.CriteriaTurns != 2 || got.Criteria != 10 || got.CriteriaCapture != 0.5 || got.CriteriaValueCapture != 0.5 {
		t.Errorf("criteria = %d turns, %d criteria, capture %v, value capture %v; want 2, 10, 0.5, 0.5",
			got.CriteriaTurns, got.Criteria, got.CriteriaCapture, got.CriteriaValueCapture)
	}
	for _, slot := range []string{"GENRE", "ACTOR", "YEAR", "TITLE", "KEYWORDS"} {
		if got, want := got.CriteriaBySlot[slot], (SlotCapture{Judged: 2, Captured: 1}); got != want {
			t.Errorf("CriteriaBySlot[%s] = %+v, want %+v", slot, got, want)
		}
	}
}

func TestFollowupCriteriaReading(t *testing.T) {
	to := 1979
	old := answer(nil)
	old.ActiveContext.MaxYear = &to
	d := []IARDDialogue{{ID: "1", Conversation: []IARDUtterance{
		utter("some classics", IARDAct{Intent: "IQU", SlotValues: [][]any{{"GENRE", "classic", nil, nil}}}),
	}}}
	before := 1980
	read := func(v string) *memento.Understanding {
		if v == "classic" {
			return &memento.Understanding{MaxYear: &before}
		}
		return nil
	}
	for _, tc := range []struct {
		name string
		read func(string) *memento.Understanding
		want float64
	}{{"read as an era", read, 1}, {"not read", nil, 0}} {
		got, err := Followup(context.Background(), scripted{map[string]*agent.Response{"some classics": old}}, d, FollowupOptions{Read: tc.read})
		if err != nil {
			t.Fatal(err)
		}
		if got.CriteriaTurns != 1 || got.CriteriaCapture != tc.want {
			t.Errorf("%s: criteria %d turns, capture %v; want 1, %v", tc.name, got.CriteriaTurns, got.CriteriaCapture, tc.want)
		}
	}
}

func TestParseEra(t *testing.T) {
	for _, tc := range []struct {
		in       string
		from, to int
		ok       bool
	}{
		{"80s", 1980, 1989, true},
		{"60's", 1960, 1969, true},
		{"1990s", 1990, 1999, true},
		{"the 2000s", 2000, 2009, true},
		{"'20s", 2020, 2029, true},
		{"1999", 1999, 1999, true},
		{"80", 0, 0, false},
		{"recent", 0, 0, false},
	} {
		from, to, ok := parseEra(tc.in)
		if from != tc.from || to != tc.to || ok != tc.ok {
			t.Errorf("parseEra(%q) = %d, %d, %v, want %d, %d, %v", tc.in, from, to, ok, tc.from, tc.to, tc.ok)
		}
	}
}

// understander answers every turn with one understanding.
type understander struct {
	agent.Model
	u memento.Understanding
}

func (m understander) UnderstandRequest(context.Context, memento.UnderstandInput) (*memento.Understanding, error) {
	u := m.u
	return &u, nil
}

func TestIgnoreRejections(t *testing.T) {
	in := memento.Understanding{Search: true, Reject: true, Genres: []string{"Crime"},
		Seen: []memento.TitleRef{{Name: "Heat"}}, RejectTitles: []memento.TitleRef{{Position: 2}}}
	got, err := IgnoreRejections(understander{u: in}).UnderstandRequest(context.Background(), memento.UnderstandInput{})
	if err != nil {
		t.Fatal(err)
	}
	want := memento.Understanding{Search: true, Genres: []string{"Crime"}}
	if diff := cmp.Diff(want, *got); diff != "" {
		t.Errorf("understanding (-want +got):\n%s", diff)
	}
}

func TestReadIARD(t *testing.T) {
	if _, err := ReadIARD(strings.NewReader(`{"not":"an array"}`)); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("ReadIARD(object) error = %v, want EINVALID", err)
	}
	ds, err := ReadIARD(strings.NewReader(`[{"conversation_id":"7","conversation":[{"participant":"USER","utterance":"hi","dialogue_acts":[{"intent":"OTH","slot_values":[]}]}]}]`))
	if err != nil || len(ds) != 1 || ds[0].Conversation[0].DialogueActs[0].Intent != "OTH" {
		t.Fatalf("ReadIARD = %+v, %v", ds, err)
	}
}
