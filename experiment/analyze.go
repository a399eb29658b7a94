package experiment

import (
	"fmt"
	"slices"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/stats"
)

// Alpha is the significance level of every test the analysis runs.
const Alpha = 0.05

// TargetPower is the power the sample-size calculation aims at.
const TargetPower = 0.80

// Report is the analysis of a study's completed participants.
type Report struct {
	Study      string         `json:"study"`
	Instrument InstrumentInfo `json:"instrument"`
	Enrolled   int            `json:"enrolled"`
	// Completed participants answered the questionnaire; only they are
	// analysed.
	Completed    int                `json:"completed"`
	Participants []ParticipantScore `json:"participants"`
	Arms         []ArmReport        `json:"arms"`
	// Comparability checks that randomisation gave comparable groups.
	Comparability Comparability `json:"comparability"`
	// Assumptions checks what the t-tests assume.
	Assumptions Assumptions `json:"assumptions"`
	// Comparisons compares the score of every pair of arms.
	Comparisons []Comparison `json:"comparisons"`
	Alpha       float64      `json:"alpha"`
	// Notes say what could not be computed, and why.
	Notes []string `json:"notes,omitempty"`
}

// InstrumentInfo names the instrument and how it is scored.
type InstrumentInfo struct {
	ID       string   `json:"id"`
	Citation string   `json:"citation"`
	Items    []string `json:"items"`
	Reversed []string `json:"reversed"`
	Scale    Scale    `json:"scale"`
	Score    string   `json:"score"`
}

// ParticipantScore is one completed participant's score.
type ParticipantScore struct {
	ID          string  `json:"id"`
	Arm         string  `json:"arm"`
	Score       float64 `json:"score"`
	Gender      string  `json:"gender"`
	Age         int     `json:"age"`
	Familiarity int     `json:"familiarity"`
	Messages    int     `json:"messages"`
}

// ArmReport describes one arm.
type ArmReport struct {
	Name        string         `json:"name"`
	Mode        string         `json:"mode"`
	N           int            `json:"n"`
	Score       *stats.Summary `json:"score,omitempty"`
	Age         *stats.Summary `json:"age,omitempty"`
	Familiarity *stats.Summary `json:"familiarity,omitempty"`
	Gender      map[string]int `json:"gender"`
	// ItemMeans are the mean scored value of each item (reverse items
	// mirrored), in item order.
	ItemMeans []float64 `json:"itemMeans"`
}

// Comparability holds the tests that the arms did not differ before the
// treatment: chi-squared homogeneity of gender, Kruskal-Wallis of age and
// of familiarity with language models.
type Comparability struct {
	Gender      *stats.TestResult `json:"gender,omitempty"`
	Age         *stats.TestResult `json:"age,omitempty"`
	Familiarity *stats.TestResult `json:"familiarity,omitempty"`
}

// Assumptions holds Shapiro-Wilk per arm and Bartlett's test across arms.
type Assumptions struct {
	Normality map[string]*stats.TestResult `json:"normality"`
	Variances *stats.TestResult            `json:"variances,omitempty"`
}

// Comparison is the score difference of arm A minus arm B.
type Comparison struct {
	A           string            `json:"a"`
	B           string            `json:"b"`
	MeanDiff    float64           `json:"meanDiff"`
	Student     *stats.TestResult `json:"student,omitempty"`
	Welch       *stats.TestResult `json:"welch,omitempty"`
	MannWhitney *stats.TestResult `json:"mannWhitney,omitempty"`
	// Chosen is the test the assumptions call for (student-t, welch-t or
	// mann-whitney-u) and Reason says why; Significant is its verdict at
	// Alpha.
	Chosen      string        `json:"chosen"`
	Reason      string        `json:"reason"`
	Significant bool          `json:"significant"`
	Effect      *stats.Effect `json:"effect,omitempty"`
	// Power is the participants per arm a study needs to detect the
	// observed effect at TargetPower and Alpha.
	Power *stats.Power `json:"power,omitempty"`
}

// Analyze scores the completed participants and computes the report.
func Analyze(s Study, ps []Participant) (*Report, error) {
	in := s.Instrument
	r := &Report{Study: s.Name, Enrolled: len(ps), Alpha: Alpha,
		Instrument:  InstrumentInfo{ID: in.ID, Citation: in.Citation, Reversed: in.Reversed(), Scale: in.Scale, Score: in.Score},
		Assumptions: Assumptions{Normality: map[string]*stats.TestResult{}}}
	for _, it := range in.Items {
		r.Instrument.Items = append(r.Instrument.Items, it.ID)
	}
	scores := map[string][]float64{}
	ages := map[string][]float64{}
	fam := map[string][]float64{}
	for _, p := range ps {
		if p.Stage != StageDone || p.Demographics == nil {
			continue
		}
		if err := in.CheckAnswers(p.Answers); err != nil {
			return nil, fmt.Errorf("participant %s: %w", p.ID, err)
		}
		if _, ok := s.Arm(p.Arm); !ok {
			return nil, memento.Errorf(memento.EINVALID, "participant %s is in arm %q, which study %s does not have", p.ID, p.Arm, s.Name)
		}
		sc := in.ScoreOf(p.Answers)
		r.Participants = append(r.Participants, ParticipantScore{ID: p.ID, Arm: p.Arm, Score: sc,
			Gender: p.Demographics.Gender, Age: p.Demographics.Age, Familiarity: p.Demographics.Familiarity, Messages: p.Messages})
		scores[p.Arm] = append(scores[p.Arm], sc)
		ages[p.Arm] = append(ages[p.Arm], float64(p.Demographics.Age))
		fam[p.Arm] = append(fam[p.Arm], float64(p.Demographics.Familiarity))
	}
	r.Completed = len(r.Participants)
	note := func(what string, err error) {
		r.Notes = append(r.Notes, what+": "+memento.ErrorMessage(err))
	}
	summary := func(x []float64) *stats.Summary {
		if len(x) == 0 {
			return nil
		}
		s, err := stats.Describe(x)
		if err != nil {
			return nil
		}
		return &s
	}
	genderTable := make([][]float64, 0, len(s.Arms))
	var scoreGroups, ageGroups, famGroups [][]float64
	for _, a := range s.Arms {
		ar := ArmReport{Name: a.Name, Mode: a.Mode, N: len(scores[a.Name]), Score: summary(scores[a.Name]),
			Age: summary(ages[a.Name]), Familiarity: summary(fam[a.Name]), Gender: map[string]int{}, ItemMeans: make([]float64, len(in.Items))}
		row := make([]float64, len(Genders))
		for _, p := range ps {
			if p.Arm != a.Name || p.Stage != StageDone || p.Demographics == nil {
				continue
			}
			ar.Gender[p.Demographics.Gender]++
			row[slices.Index(Genders, p.Demographics.Gender)]++
			for i, v := range p.Answers {
				ar.ItemMeans[i] += float64(in.Scored(i, v))
			}
		}
		if ar.N > 0 {
			for i := range ar.ItemMeans {
				ar.ItemMeans[i] /= float64(ar.N)
			}
		}
		genderTable = append(genderTable, row)
		scoreGroups = append(scoreGroups, scores[a.Name])
		ageGroups = append(ageGroups, ages[a.Name])
		famGroups = append(famGroups, fam[a.Name])
		r.Arms = append(r.Arms, ar)
	}

	if t, err := stats.ChiSquared(genderTable); err == nil {
		r.Comparability.Gender = &t
	} else {
		note("gender (chi-squared homogeneity)", err)
	}
	if t, err := stats.KruskalWallis(ageGroups...); err == nil {
		r.Comparability.Age = &t
	} else {
		note("age (Kruskal-Wallis)", err)
	}
	if t, err := stats.KruskalWallis(famGroups...); err == nil {
		r.Comparability.Familiarity = &t
	} else {
		note("familiarity (Kruskal-Wallis)", err)
	}
	for i, a := range s.Arms {
		if t, err := stats.ShapiroWilk(scoreGroups[i]); err == nil {
			r.Assumptions.Normality[a.Name] = &t
		} else {
			note("normality of "+a.Name+" (Shapiro-Wilk)", err)
		}
	}
	if t, err := stats.Bartlett(scoreGroups...); err == nil {
		r.Assumptions.Variances = &t
	} else {
		note("equal variances (Bartlett)", err)
	}
	for i := range s.Arms {
		for j := i + 1; j < len(s.Arms); j++ {
			r.Comparisons = append(r.Comparisons, compare(r, s.Arms[i].Name, s.Arms[j].Name, scoreGroups[i], scoreGroups[j], note))
		}
	}
	return r, nil
}

// compare runs the three tests on one pair of arms and chooses among them.
func compare(r *Report, a, b string, x, y []float64, note func(string, error)) Comparison {
	c := Comparison{A: a, B: b}
	pair := a + " vs " + b
	if len(x) > 0 && len(y) > 0 {
		c.MeanDiff = stats.Mean(x) - stats.Mean(y)
	}
	if t, err := stats.StudentT(x, y); err == nil {
		c.Student = &t
	} else {
		note(pair+" (Student's t)", err)
	}
	if t, err := stats.WelchT(x, y); err == nil {
		c.Welch = &t
	} else {
		note(pair+" (Welch's t)", err)
	}
	if t, err := stats.MannWhitneyU(x, y); err == nil {
		c.MannWhitney = &t
	} else {
		note(pair+" (Mann-Whitney U)", err)
	}
	if e, err := stats.CohensD(x, y, 0.95); err == nil {
		c.Effect = &e
		if p, err := stats.SampleSize(e.D, TargetPower, Alpha); err == nil {
			c.Power = &p
		} else {
			note(pair+" (power analysis)", err)
		}
	} else {
		note(pair+" (Cohen's d)", err)
	}

	na, nb := r.Assumptions.Normality[a], r.Assumptions.Normality[b]
	v := r.Assumptions.Variances
	switch {
	case na == nil || nb == nil:
		c.Chosen = "mann-whitney-u"
		c.Reason = "normality could not be checked in both arms, so the rank test, which does not assume it"
	case na.P < Alpha || nb.P < Alpha:
		c.Chosen = "mann-whitney-u"
		c.Reason = fmt.Sprintf("Shapiro-Wilk rejects normality (p = %.3g in %s, %.3g in %s, α = %.2g), so the rank test", na.P, a, nb.P, b, Alpha)
	case v == nil || v.P < Alpha:
		c.Chosen = "welch-t"
		if v == nil {
			c.Reason = "both arms look normal, but equal variances could not be checked, so Welch's t, which does not assume them"
		} else {
			c.Reason = fmt.Sprintf("both arms look normal (Shapiro-Wilk p = %.3g and %.3g) but Bartlett rejects equal variances (p = %.3g), so Welch's t", na.P, nb.P, v.P)
		}
	default:
		c.Chosen = "student-t"
		c.Reason = fmt.Sprintf("both arms look normal (Shapiro-Wilk p = %.3g and %.3g) and Bartlett finds no difference in variances (p = %.3g), so Student's t", na.P, nb.P, v.P)
	}
	// Say when the tests not chosen would have reached another verdict,
	// so a reader sees how much the choice matters.
	if t := c.chosen(); t != nil {
		for _, o := range []*stats.TestResult{c.Student, c.Welch, c.MannWhitney} {
			if o != nil && o != t && (o.P < Alpha) != (t.P < Alpha) {
				c.Reason += fmt.Sprintf("; note that %s (p = %.3g) reaches the other verdict", o.Test, o.P)
			}
		}
	}
	if t := c.chosen(); t != nil {
		c.Significant = t.P < Alpha
	}
	return c
}

// chosen is the result of the chosen test.
func (c Comparison) chosen() *stats.TestResult {
	switch c.Chosen {
	case "student-t":
		return c.Student
	case "welch-t":
		return c.Welch
	}
	return c.MannWhitney
}
