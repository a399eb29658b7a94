package eval

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/memento-ai/memento"
)

// EmotionExample is one labelled message of an emotion data set, as one
// JSON line: {"id","text","label","split"}. Split is "dev" (rules are
// developed on it) or "test" (held out: figures are reported on it).
type EmotionExample struct {
	ID    string `json:"id"`
	Text  string `json:"text"`
	Label string `json:"label"`
	Split string `json:"split"`
}

// The splits of an emotion data set.
const (
	SplitDev  = "dev"
	SplitTest = "test"
)

// ReadEmotions reads an emotion data set in JSON lines, refusing unknown
// labels and splits and repeated ids with the line that has them.
func ReadEmotions(r io.Reader) ([]EmotionExample, error) {
	var out []EmotionExample
	seen := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var ex EmotionExample
		if err := json.Unmarshal([]byte(line), &ex); err != nil {
			return nil, memento.Errorf(memento.EINVALID, "emotion data line %d: %v", n, err)
		}
		switch {
		case strings.TrimSpace(ex.Text) == "":
			return nil, memento.Errorf(memento.EINVALID, "emotion data line %d: text is empty", n)
		case !memento.ValidEmotion(ex.Label):
			return nil, memento.Errorf(memento.EINVALID, "emotion data line %d: label must be one of %s, got %q", n, strings.Join(memento.EmotionLabels, ", "), ex.Label)
		case ex.Split != SplitDev && ex.Split != SplitTest:
			return nil, memento.Errorf(memento.EINVALID, "emotion data line %d: split must be %q or %q, got %q", n, SplitDev, SplitTest, ex.Split)
		}
		if ex.ID != "" {
			if prev, dup := seen[ex.ID]; dup {
				return nil, memento.Errorf(memento.EINVALID, "emotion data line %d: id %q is already used on line %d", n, ex.ID, prev)
			}
			seen[ex.ID] = n
		}
		out = append(out, ex)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read emotion data: %w", err)
	}
	if len(out) == 0 {
		return nil, memento.Errorf(memento.EINVALID, "emotion data holds no examples")
	}
	return out, nil
}

// LabelScore is one label's precision, recall and F1 and how many gold
// examples it has (support).
type LabelScore struct {
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
	Support   int     `json:"support"`
}

// EmotionScores are one classifier's figures on one split. MacroF1 is the
// unweighted mean of the F1 of every label with gold examples or
// predictions in the split, so that the rare emotions count as much as
// neutral. Confusion counts gold label → predicted label.
type EmotionScores struct {
	N         int                       `json:"n"`
	Accuracy  float64                   `json:"accuracy"`
	MacroF1   float64                   `json:"macroF1"`
	Labels    map[string]LabelScore     `json:"labels"`
	Confusion map[string]map[string]int `json:"confusion"`
	// Errors counts the examples the classifier failed on; each counts as
	// a wrong answer.
	Errors int `json:"errors,omitempty"`
}

// EmotionClassifierScores are a classifier's scores on each split.
type EmotionClassifierScores struct {
	Name string        `json:"name"`
	Dev  EmotionScores `json:"dev"`
	Test EmotionScores `json:"test"`
}

// EmotionResult is the outcome of an emotion evaluation: the classifiers
// under test and the baselines, each on the dev and the held-out split.
type EmotionResult struct {
	Examples  int                       `json:"examples"`
	Dev       int                       `json:"dev"`
	Test      int                       `json:"test"`
	Models    []EmotionClassifierScores `json:"models"`
	Baselines []EmotionClassifierScores `json:"baselines"`
	// Misses are the held-out examples the first model got wrong.
	Misses []EmotionMiss `json:"misses,omitempty"`
}

// EmotionMiss is one held-out example a model labelled wrongly.
type EmotionMiss struct {
	ID   string `json:"id"`
	Text string `json:"text"`
	Gold string `json:"gold"`
	Got  string `json:"got"`
}

// NamedEmotionClassifier is a classifier under test with the name the
// result shows.
type NamedEmotionClassifier struct {
	Name       string
	Classifier memento.EmotionClassifier
}

// Emotion scores each model and two baselines on data: "majority" always
// answers the most frequent label of the dev split (so the held-out split
// never informs it), and "uniform" answers labels in turn, which is what
// chance scores on a balanced set. A classifier's error on one message is
// counted as a wrong answer, not a failed run; the context's cancellation
// stops the run.
func Emotion(ctx context.Context, data []EmotionExample, models []NamedEmotionClassifier) (*EmotionResult, error) {
	res := &EmotionResult{Examples: len(data)}
	counts := map[string]int{}
	for _, ex := range data {
		if ex.Split == SplitDev {
			res.Dev++
			counts[ex.Label]++
		} else {
			res.Test++
		}
	}
	majority := memento.EmotionNeutral
	for _, l := range memento.EmotionLabels {
		if counts[l] > counts[majority] {
			majority = l
		}
	}
	for _, m := range models {
		preds := make([]string, len(data))
		errs := make([]bool, len(data))
		for i, ex := range data {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			e, err := m.Classifier.ClassifyEmotion(ctx, ex.Text)
			if err != nil || e == nil {
				errs[i] = true
				continue
			}
			preds[i] = e.Label
		}
		res.Models = append(res.Models, scoreSplits(m.Name, data, preds, errs))
		if len(res.Misses) == 0 && len(res.Models) == 1 {
			for i, ex := range data {
				if ex.Split == SplitTest && preds[i] != ex.Label {
					res.Misses = append(res.Misses, EmotionMiss{ID: ex.ID, Text: ex.Text, Gold: ex.Label, Got: preds[i]})
				}
			}
		}
	}
	maj := make([]string, len(data))
	uni := make([]string, len(data))
	for i := range data {
		maj[i] = majority
		uni[i] = memento.EmotionLabels[i%len(memento.EmotionLabels)]
	}
	none := make([]bool, len(data))
	res.Baselines = append(res.Baselines, scoreSplits("majority ("+majority+")", data, maj, none), scoreSplits("uniform", data, uni, none))
	return res, nil
}

// scoreSplits scores predictions on each split.
func scoreSplits(name string, data []EmotionExample, preds []string, errs []bool) EmotionClassifierScores {
	out := EmotionClassifierScores{Name: name}
	for _, split := range []string{SplitDev, SplitTest} {
		var gold, got []string
		nerr := 0
		for i, ex := range data {
			if ex.Split != split {
				continue
			}
			gold = append(gold, ex.Label)
			got = append(got, preds[i])
			if errs[i] {
				nerr++
			}
		}
		s := ScoreEmotions(gold, got)
		s.Errors = nerr
		if split == SplitDev {
			out.Dev = s
		} else {
			out.Test = s
		}
	}
	return out
}

// ScoreEmotions computes accuracy, per-label precision, recall and F1,
// macro-F1 and the confusion counts of predictions against gold labels
// (equal lengths; an empty prediction is wrong for every label). A label's
// precision is 0 when it was never predicted, its recall 0 when it has no
// gold example; labels with neither are left out of the macro mean.
func ScoreEmotions(gold, got []string) EmotionScores {
	s := EmotionScores{N: len(gold), Labels: map[string]LabelScore{}, Confusion: map[string]map[string]int{}}
	tp, fp, fn := map[string]int{}, map[string]int{}, map[string]int{}
	correct := 0
	for i, g := range gold {
		p := got[i]
		if s.Confusion[g] == nil {
			s.Confusion[g] = map[string]int{}
		}
		key := p
		if key == "" {
			key = "(none)"
		}
		s.Confusion[g][key]++
		if p == g {
			correct++
			tp[g]++
			continue
		}
		fn[g]++
		if p != "" {
			fp[p]++
		}
	}
	if s.N > 0 {
		s.Accuracy = round4(float64(correct) / float64(s.N))
	}
	var f1s []float64
	for _, l := range memento.EmotionLabels {
		support := tp[l] + fn[l]
		if support == 0 && fp[l] == 0 {
			continue
		}
		ls := LabelScore{Support: support}
		if tp[l]+fp[l] > 0 {
			ls.Precision = float64(tp[l]) / float64(tp[l]+fp[l])
		}
		if support > 0 {
			ls.Recall = float64(tp[l]) / float64(support)
		}
		if ls.Precision+ls.Recall > 0 {
			ls.F1 = 2 * ls.Precision * ls.Recall / (ls.Precision + ls.Recall)
		}
		f1s = append(f1s, ls.F1)
		ls.Precision, ls.Recall, ls.F1 = round4(ls.Precision), round4(ls.Recall), round4(ls.F1)
		s.Labels[l] = ls
	}
	if len(f1s) > 0 {
		sum := 0.0
		for _, f := range f1s {
			sum += f
		}
		s.MacroF1 = round4(sum / float64(len(f1s)))
	}
	return s
}

// SortedLabels lists the labels of scores in the order of
// memento.EmotionLabels, for tables.
func (s EmotionScores) SortedLabels() []string {
	var out []string
	for _, l := range memento.EmotionLabels {
		if _, ok := s.Labels[l]; ok {
			out = append(out, l)
		}
	}
	return slices.Clip(out)
}
