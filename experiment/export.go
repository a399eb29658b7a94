package experiment

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
	"time"

	"github.com/memento-ai/memento"
)

// Export is a study and every participant, as `memento experiment export
// --format json` writes it.
type Export struct {
	Study        Study         `json:"study"`
	Participants []Participant `json:"participants"`
	// Scores are the completed participants' scores by participant id.
	Scores map[string]float64 `json:"scores"`
}

// WriteExport writes the study's data as "csv" (one row a participant:
// id, arm, mode, stage, demographics, times, messages, each raw item
// answer and the score) or "json" (Export).
func WriteExport(w io.Writer, s Study, ps []Participant, format string) error {
	switch format {
	case "json":
		e := Export{Study: s, Participants: ps, Scores: map[string]float64{}}
		if e.Participants == nil {
			e.Participants = []Participant{}
		}
		for _, p := range ps {
			if p.Stage == StageDone && s.Instrument.CheckAnswers(p.Answers) == nil {
				e.Scores[p.ID] = s.Instrument.ScoreOf(p.Answers)
			}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(e)
	case "csv":
		cw := csv.NewWriter(w)
		head := []string{"participant", "arm", "mode", "stage", "gender", "age", "familiarity", "consented_at", "completed_at", "messages"}
		for _, it := range s.Instrument.Items {
			head = append(head, it.ID)
		}
		head = append(head, "score")
		if err := cw.Write(head); err != nil {
			return err
		}
		for _, p := range ps {
			row := []string{p.ID, p.Arm, p.Mode, p.Stage, "", "", "", p.ConsentedAt.UTC().Format(time.RFC3339), "", strconv.Itoa(p.Messages)}
			if d := p.Demographics; d != nil {
				row[4], row[5], row[6] = d.Gender, strconv.Itoa(d.Age), strconv.Itoa(d.Familiarity)
			}
			if p.CompletedAt != nil {
				row[8] = p.CompletedAt.UTC().Format(time.RFC3339)
			}
			done := p.Stage == StageDone && s.Instrument.CheckAnswers(p.Answers) == nil
			for i := range s.Instrument.Items {
				v := ""
				if done {
					v = strconv.Itoa(p.Answers[i])
				}
				row = append(row, v)
			}
			score := ""
			if done {
				score = strconv.FormatFloat(s.Instrument.ScoreOf(p.Answers), 'f', -1, 64)
			}
			if err := cw.Write(append(row, score)); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	}
	return memento.Errorf(memento.EINVALID, "--format must be csv or json, got %q", format)
}
