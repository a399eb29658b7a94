package experiment

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memento-ai/memento"
)

func TestTrustInstrumentAsPublished(t *testing.T) {
	in, err := LoadInstrument(DefaultInstrument)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Items) != 12 || in.Scale.Min != 1 || in.Scale.Max != 7 || in.Score != "mean" {
		t.Fatalf("instrument = %d items, scale %d-%d, score %s; want 12, 1-7, mean", len(in.Items), in.Scale.Min, in.Scale.Max, in.Score)
	}
	// Jian, Bisantz and Drury (2000): the first five items are the
	// distrust items.
	if got := strings.Join(in.Reversed(), ","); got != "T1,T2,T3,T4,T5" {
		t.Errorf("reversed = %s, want T1..T5", got)
	}
	if !strings.Contains(in.Citation, "Jian") || !strings.Contains(in.Citation, "2000") {
		t.Errorf("citation = %q", in.Citation)
	}
	if in.Items[0].Text != "The system is deceptive." || in.Items[11].Text != "I am familiar with the system." {
		t.Errorf("items 1 and 12 are %q and %q", in.Items[0].Text, in.Items[11].Text)
	}
}

func TestScoring(t *testing.T) {
	in, _ := LoadInstrument(DefaultInstrument)
	// Reverse items count 8 - x: answering 1 to the five distrust items
	// and 7 to the seven others is full trust.
	all := []int{1, 1, 1, 1, 1, 7, 7, 7, 7, 7, 7, 7}
	if got := in.ScoreOf(all); got != 7 {
		t.Errorf("full trust scores %g, want 7", got)
	}
	// Answering 4 everywhere is the midpoint whatever the direction.
	if got := in.ScoreOf([]int{4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4}); got != 4 {
		t.Errorf("all 4 scores %g, want 4", got)
	}
	// (5 × (8-2) + 7 × 5) / 12 = 65/12.
	if got, want := in.ScoreOf([]int{2, 2, 2, 2, 2, 5, 5, 5, 5, 5, 5, 5}), 65.0/12; got != want {
		t.Errorf("score = %g, want %g", got, want)
	}
	if err := in.CheckAnswers([]int{1, 2}); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("two answers: err = %v", err)
	}
}

func TestParseInstrumentRejects(t *testing.T) {
	for name, doc := range map[string]string{
		"no items":      `{"id":"x","scale":{"min":1,"max":5},"score":"mean","items":[]}`,
		"flat scale":    `{"id":"x","scale":{"min":3,"max":3},"score":"mean","items":[{"id":"a","text":"A"}]}`,
		"bad score":     `{"id":"x","scale":{"min":1,"max":5},"score":"median","items":[{"id":"a","text":"A"}]}`,
		"unknown field": `{"id":"x","scale":{"min":1,"max":5},"score":"mean","items":[{"id":"a","text":"A","weight":2}]}`,
		"duplicate id":  `{"id":"x","scale":{"min":1,"max":5},"score":"mean","items":[{"id":"a","text":"A"},{"id":"a","text":"B"}]}`,
	} {
		if _, err := ParseInstrument([]byte(doc)); memento.ErrorCode(err) != memento.EINVALID {
			t.Errorf("%s: err = %v, want EINVALID", name, err)
		}
	}
	if _, err := LoadInstrument("no-such"); memento.ErrorCode(err) != memento.EINVALID || !strings.Contains(err.Error(), DefaultInstrument) {
		t.Errorf("unknown instrument: err = %v, want EINVALID naming the shipped ones", err)
	}
}

func TestParseArms(t *testing.T) {
	tests := []struct {
		spec string
		want []Arm
	}{
		{"semantic, episodic,late=episodic", []Arm{{Name: "semantic", Mode: "semantic"}, {Name: "episodic", Mode: "episodic"}, {Name: "late", Mode: "episodic"}}},
		{"episodic,episodic+decay=30d", []Arm{{Name: "episodic", Mode: "episodic"}, {Name: "episodic-decay-30d", Mode: "episodic", Decay: "720h0m0s"}}},
		{"fast=semantic+decay=12h,slow=semantic+decay=off", []Arm{{Name: "fast", Mode: "semantic", Decay: "12h0m0s"}, {Name: "slow", Mode: "semantic", Decay: DecayOff}}},
		{"semantic,none,semantic+frozen", []Arm{{Name: "semantic", Mode: "semantic"}, {Name: "none", Mode: ModeNone}, {Name: "semantic-frozen", Mode: "semantic", Frozen: true}}},
	}
	for _, tt := range tests {
		got, err := ParseArms(tt.spec)
		if err != nil {
			t.Errorf("ParseArms(%q): %v", tt.spec, err)
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("ParseArms(%q) = %+v, want %+v", tt.spec, got, tt.want)
		}
	}
	// Each bad spec fails with EINVALID and a message that names the
	// problem.
	for bad, says := range map[string]string{
		"semantic":                       "at least two arms",
		"semantic,semantic":              "twice",
		"semantic,procedural":            "mode must be",
		"semantic,a b=episodic":          "arm name",
		"semantic,episodic+decay":        "decay needs a value",
		"semantic,episodic+decay=soon":   "want off",
		"semantic,episodic+decay=1.5d":   "whole number",
		"semantic,episodic+decay=1s":     "half-life must be",
		"semantic,episodic+fast":         "unknown setting",
		"semantic,none+decay=30d":        "nothing to freeze or decay",
		"semantic,episodic+frozen=yes":   "takes no value",
		"semantic,x=episodic+decay=-30d": "half-life must be",
	} {
		_, err := ParseArms(bad)
		if memento.ErrorCode(err) != memento.EINVALID || !strings.Contains(err.Error(), says) {
			t.Errorf("ParseArms(%q) err = %v, want EINVALID saying %q", bad, err, says)
		}
	}
	if d, off := (Arm{Decay: "720h0m0s"}).HalfLife(); d != 30*24*time.Hour || off {
		t.Errorf("HalfLife = %s, %v", d, off)
	}
	if _, off := (Arm{Decay: DecayOff}).HalfLife(); !off {
		t.Error("decay off is not off")
	}
}

// A study applies only memory modes at enrolment, so it refuses the
// settings only a simulation can apply, saying why.
func TestStudyRefusesSimulationOnlyArms(t *testing.T) {
	for spec, says := range map[string]string{
		"semantic,none":                   "simulation baseline",
		"semantic,semantic+frozen":        "simulation baseline",
		"semantic,episodic+decay=30d":     "one setting for every user",
		"semantic,episodic+decay=off":     "one setting for every user",
		"semantic,episodic,late=episodic": "",
	} {
		arms, err := ParseArms(spec)
		if err != nil {
			t.Fatalf("ParseArms(%q): %v", spec, err)
		}
		_, err = NewStudy("s", arms, nil)
		if says == "" {
			if err != nil {
				t.Errorf("%s: %v", spec, err)
			}
			continue
		}
		if memento.ErrorCode(err) != memento.EINVALID || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: err = %v, want EINVALID saying %q", spec, err, says)
		}
	}
}

func TestBalancedNeverMoreThanOneAhead(t *testing.T) {
	arms, _ := ParseArms("a=semantic,b=episodic,c=episodic")
	s := Study{Arms: arms}
	assign := Balanced(rand.New(rand.NewPCG(3, 4)))
	counts := map[string]int{}
	firstOfBlock := map[string]int{}
	for i := range 300 {
		a := assign(s, counts)
		counts[a.Name]++
		lo, hi := 1<<30, 0
		for _, arm := range arms {
			lo, hi = min(lo, counts[arm.Name]), max(hi, counts[arm.Name])
		}
		if hi-lo > 1 {
			t.Fatalf("after %d enrolments counts are %v", i+1, counts)
		}
		if i%3 == 0 {
			firstOfBlock[a.Name]++
		}
	}
	// The order within blocks is random: every arm opens some blocks.
	for _, arm := range arms {
		if firstOfBlock[arm.Name] < 15 {
			t.Errorf("arm %s opened %d of 100 blocks; the order is not random", arm.Name, firstOfBlock[arm.Name])
		}
	}
}

// studyData builds a completed study whose semantic arm answers higher.
func studyData(t *testing.T) (Study, []Participant) {
	t.Helper()
	arms, _ := ParseArms("semantic,episodic")
	s, err := NewStudy("t", arms, nil)
	if err != nil {
		t.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(11, 12))
	var ps []Participant
	for i := range 30 {
		arm := arms[i%2]
		base := 4
		if arm.Name == "semantic" {
			base = 5
		}
		ans := make([]int, 12)
		for j := range ans {
			v := base + rnd.IntN(3) - 1
			if j < 5 {
				v = 8 - v
			}
			ans[j] = v
		}
		ps = append(ps, Participant{ID: "p" + string(rune('a'+i)), Arm: arm.Name, Mode: arm.Mode, Stage: StageDone,
			Demographics: &Demographics{Gender: Genders[i%3], Age: 20 + i, Familiarity: 1 + i%7}, Answers: ans})
	}
	// One who never finished is not analysed.
	ps = append(ps, Participant{ID: "late", Arm: "episodic", Stage: StageConversation})
	return s, ps
}

func TestAnalyze(t *testing.T) {
	s, ps := studyData(t)
	r, err := Analyze(s, ps)
	if err != nil {
		t.Fatal(err)
	}
	if r.Enrolled != 31 || r.Completed != 30 {
		t.Errorf("enrolled %d, completed %d; want 31, 30", r.Enrolled, r.Completed)
	}
	if r.Arms[0].N != 15 || r.Arms[1].N != 15 {
		t.Errorf("arm sizes %d and %d", r.Arms[0].N, r.Arms[1].N)
	}
	if r.Comparability.Gender == nil || r.Comparability.Age == nil || r.Comparability.Familiarity == nil {
		t.Errorf("comparability incomplete: %+v (notes %v)", r.Comparability, r.Notes)
	}
	if r.Assumptions.Normality["semantic"] == nil || r.Assumptions.Variances == nil {
		t.Errorf("assumptions incomplete: %+v (notes %v)", r.Assumptions, r.Notes)
	}
	if len(r.Comparisons) != 1 {
		t.Fatalf("%d comparisons", len(r.Comparisons))
	}
	c := r.Comparisons[0]
	if c.Student == nil || c.Welch == nil || c.MannWhitney == nil || c.Effect == nil || c.Power == nil {
		t.Fatalf("comparison incomplete: %+v", c)
	}
	if c.MeanDiff <= 0.5 || !c.Significant || c.Effect.D <= 0 {
		t.Errorf("semantic answered a point higher, yet diff %.3f, significant %v, d %.3f", c.MeanDiff, c.Significant, c.Effect.D)
	}
	if c.Chosen == "" || c.Reason == "" {
		t.Errorf("no test chosen")
	}
	// The item means mirror reverse items: every item's scored mean is
	// near the arm's base value.
	for i, m := range r.Arms[0].ItemMeans {
		if m < 4 || m > 6 {
			t.Errorf("semantic item %d mean %.2f, want about 5", i+1, m)
		}
	}
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Shapiro-Wilk", "Bartlett", "Kruskal-Wallis", "chi-squared", "Student's t", "Welch's t", "Mann-Whitney U", "Cohen's d", "power analysis", "chosen:"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q", want)
		}
	}
}

// The choice of test follows the assumption checks.
func TestChoice(t *testing.T) {
	s, ps := studyData(t)
	r, _ := Analyze(s, ps)
	x := []float64{1, 2, 3, 4, 5}
	y := []float64{2, 3, 4, 5, 6}
	for _, c := range []struct {
		name         string
		pa, pb, pvar float64
		want         string
	}{
		{"normal, equal variances", 0.5, 0.4, 0.3, "student-t"},
		{"normal, unequal variances", 0.5, 0.4, 0.01, "welch-t"},
		{"not normal", 0.01, 0.4, 0.3, "mann-whitney-u"},
	} {
		r.Assumptions.Normality["a"] = withP(c.pa)
		r.Assumptions.Normality["b"] = withP(c.pb)
		r.Assumptions.Variances = withP(c.pvar)
		got := compare(r, "a", "b", x, y, func(string, error) {})
		if got.Chosen != c.want {
			t.Errorf("%s: chose %s (%s), want %s", c.name, got.Chosen, got.Reason, c.want)
		}
	}
}

func TestExport(t *testing.T) {
	s, ps := studyData(t)
	var b bytes.Buffer
	if err := WriteExport(&b, s, ps, "csv"); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 32 || len(rows[0]) != 10+12+1 {
		t.Fatalf("csv has %d rows of %d columns", len(rows), len(rows[0]))
	}
	if rows[0][10] != "T1" || rows[0][22] != "score" || rows[1][1] != "semantic" {
		t.Errorf("header %v, first row %v", rows[0], rows[1])
	}
	if last := rows[31]; last[0] != "late" || last[22] != "" {
		t.Errorf("unfinished participant row %v", last)
	}
	b.Reset()
	if err := WriteExport(&b, s, ps, "json"); err != nil {
		t.Fatal(err)
	}
	var e Export
	if err := json.Unmarshal(b.Bytes(), &e); err != nil {
		t.Fatal(err)
	}
	if len(e.Participants) != 31 || len(e.Scores) != 30 || e.Study.Instrument.ID != DefaultInstrument {
		t.Errorf("json export: %d participants, %d scores", len(e.Participants), len(e.Scores))
	}
	if err := WriteExport(&b, s, ps, "xml"); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("xml: err = %v", err)
	}
}

func TestPlot(t *testing.T) {
	s, ps := studyData(t)
	r, _ := Analyze(s, ps)
	files, err := Plot(r, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Errorf("files = %v", files)
	}
}
