package experiment

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/memento-ai/memento"
)

// DefaultInstrument is the id of the instrument a study uses unless told
// otherwise: the 12-item trust scale of Jian, Bisantz and Drury (2000).
const DefaultInstrument = "trust-jian-2000"

//go:embed instruments/*.json
var instrumentFS embed.FS

// Instrument is a questionnaire of Likert items, read from a data file
// (instruments/README.md describes the format).
type Instrument struct {
	ID           string `json:"id"`
	Title        string `json:"title"`
	Citation     string `json:"citation"`
	Instructions string `json:"instructions,omitempty"`
	Scale        Scale  `json:"scale"`
	// Score is "mean" or "sum" of the scored item values.
	Score string `json:"score"`
	Items []Item `json:"items"`
}

// Scale is the answer range shared by every item.
type Scale struct {
	Min      int    `json:"min"`
	Max      int    `json:"max"`
	MinLabel string `json:"minLabel,omitempty"`
	MaxLabel string `json:"maxLabel,omitempty"`
}

// Points lists the scale's values, Min to Max.
func (s Scale) Points() []int {
	var out []int
	for v := s.Min; v <= s.Max; v++ {
		out = append(out, v)
	}
	return out
}

// Item is one statement of an instrument.
type Item struct {
	ID   string `json:"id"`
	Text string `json:"text"`
	// Reverse marks a negatively phrased item, scored Min + Max - x.
	Reverse bool `json:"reverse,omitempty"`
}

// maxItems bounds an instrument's length.
const maxItems = 200

// Validate checks that the instrument can be shown and scored.
func (in Instrument) Validate() error {
	if strings.TrimSpace(in.ID) == "" {
		return memento.Errorf(memento.EINVALID, "instrument: id is required")
	}
	if in.Scale.Min >= in.Scale.Max || in.Scale.Max-in.Scale.Min > 100 {
		return memento.Errorf(memento.EINVALID, "instrument %s: the scale must run from min to a larger max (at most 100 points), got %d to %d", in.ID, in.Scale.Min, in.Scale.Max)
	}
	if in.Score != "mean" && in.Score != "sum" {
		return memento.Errorf(memento.EINVALID, "instrument %s: score must be mean or sum, got %q", in.ID, in.Score)
	}
	if len(in.Items) == 0 || len(in.Items) > maxItems {
		return memento.Errorf(memento.EINVALID, "instrument %s: it needs 1 to %d items, got %d", in.ID, maxItems, len(in.Items))
	}
	seen := map[string]bool{}
	for i, it := range in.Items {
		if strings.TrimSpace(it.ID) == "" || strings.TrimSpace(it.Text) == "" {
			return memento.Errorf(memento.EINVALID, "instrument %s: item %d needs an id and a text", in.ID, i+1)
		}
		if seen[it.ID] {
			return memento.Errorf(memento.EINVALID, "instrument %s: item id %s appears twice", in.ID, it.ID)
		}
		seen[it.ID] = true
	}
	return nil
}

// Reversed lists the ids of the reverse-scored items.
func (in Instrument) Reversed() []string {
	var out []string
	for _, it := range in.Items {
		if it.Reverse {
			out = append(out, it.ID)
		}
	}
	return out
}

// CheckAnswers verifies one value per item, each on the scale.
func (in Instrument) CheckAnswers(answers []int) error {
	if len(answers) != len(in.Items) {
		return memento.Errorf(memento.EINVALID, "the questionnaire has %d items; got %d answers", len(in.Items), len(answers))
	}
	for i, v := range answers {
		if v < in.Scale.Min || v > in.Scale.Max {
			return memento.Errorf(memento.EINVALID, "item %s: the answer must be %d to %d, got %d", in.Items[i].ID, in.Scale.Min, in.Scale.Max, v)
		}
	}
	return nil
}

// Scored is the value an answer counts for: reverse items are mirrored
// on the scale (8 - x on a 1-7 scale).
func (in Instrument) Scored(i, v int) int {
	if in.Items[i].Reverse {
		return in.Scale.Min + in.Scale.Max - v
	}
	return v
}

// ScoreOf is a participant's score: the mean (or sum) of the scored
// answers. The answers must have passed CheckAnswers.
func (in Instrument) ScoreOf(answers []int) float64 {
	var s float64
	for i, v := range answers {
		s += float64(in.Scored(i, v))
	}
	if in.Score == "sum" {
		return s
	}
	return s / float64(len(answers))
}

// LoadInstrument reads an instrument by the id of an embedded one or by
// the path of a JSON file in the same format.
func LoadInstrument(nameOrPath string) (Instrument, error) {
	var b []byte
	var err error
	if strings.ContainsAny(nameOrPath, `/\`) || strings.HasSuffix(nameOrPath, ".json") {
		b, err = os.ReadFile(nameOrPath)
		if err != nil {
			return Instrument{}, memento.WrapError(memento.EINVALID, err, "cannot read instrument %s: %v", nameOrPath, err)
		}
	} else {
		b, err = fs.ReadFile(instrumentFS, path.Join("instruments", nameOrPath+".json"))
		if err != nil {
			return Instrument{}, memento.Errorf(memento.EINVALID, "no instrument %q: give one of %s, or the path of a JSON file", nameOrPath, strings.Join(Instruments(), ", "))
		}
	}
	return ParseInstrument(b)
}

// ParseInstrument decodes and validates an instrument.
func ParseInstrument(b []byte) (Instrument, error) {
	var in Instrument
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return Instrument{}, memento.WrapError(memento.EINVALID, err, "instrument: %v", err)
	}
	if err := in.Validate(); err != nil {
		return Instrument{}, err
	}
	return in, nil
}

// Instruments lists the ids of the embedded instruments.
func Instruments() []string {
	names, _ := fs.Glob(instrumentFS, "instruments/*.json")
	var out []string
	for _, n := range names {
		out = append(out, strings.TrimSuffix(path.Base(n), ".json"))
	}
	return out
}

// MustDefault is the default instrument; the embedded file is checked by
// the tests, so a failure here is a broken build.
func defaultInstrument() (Instrument, error) {
	in, err := LoadInstrument(DefaultInstrument)
	if err != nil {
		return Instrument{}, fmt.Errorf("load default instrument: %w", err)
	}
	return in, nil
}
