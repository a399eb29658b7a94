package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/recall"
)

// tinyCatalogFile writes a catalog of a few titles, so commands that load
// a catalog start at once.
func tinyCatalogFile(t *testing.T) string {
	t.Helper()
	titles := []memento.Title{
		{ID: "heat", Title: "Heat", Type: memento.TypeMovie, Year: 1995, Genres: []string{"Crime", "Thriller"}, Cast: []string{"Al Pacino"}},
		{ID: "arrival", Title: "Arrival", Type: memento.TypeMovie, Year: 2016, Genres: []string{"Science Fiction", "Drama"}, Cast: []string{"Amy Adams"}},
		{ID: "up", Title: "Up", Type: memento.TypeMovie, Year: 2009, Genres: []string{"Animated", "Family"}, Cast: []string{"Ed Asner"}},
		{ID: "notebook", Title: "The Notebook", Type: memento.TypeMovie, Year: 2004, Genres: []string{"Romance", "Drama"}, Cast: []string{"Ryan Gosling"}},
		{ID: "conjuring", Title: "The Conjuring", Type: memento.TypeMovie, Year: 2013, Genres: []string{"Horror"}, Cast: []string{"Vera Farmiga"}},
	}
	var b bytes.Buffer
	if err := catalog.WriteJSONL(&b, titles); err != nil {
		t.Fatal(err)
	}
	return writeFile(t, "catalog.jsonl", b.String())
}

// tinyLoCoMo is a two-session conversation in the LoCoMo file format
// whose questions name the turns that answer them.
const tinyLoCoMo = `{
 "speaker_a": "Ana", "speaker_b": "Ben",
 "session_1_date_time": "1:56 pm on 8 May, 2023",
 "session_1": [
  {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a puppy called Biscuit last week."},
  {"speaker": "Ben", "dia_id": "D1:2", "text": "Lovely! I started learning the violin."},
  {"speaker": "Ana", "dia_id": "D1:3", "text": "My sister moved to Lisbon in April."}
 ],
 "session_2_date_time": "10:00 am on 1 June, 2023",
 "session_2": [
  {"speaker": "Ben", "dia_id": "D2:1", "text": "I played my first violin concert yesterday."},
  {"speaker": "Ana", "dia_id": "D2:2", "text": "Biscuit chewed my running shoes again."}
 ],
 "qa": [
  {"question": "What is the name of Ana's puppy?", "answer": "Biscuit", "evidence": ["D1:1"], "category": 4},
  {"question": "When did Ben play his first violin concert?", "answer": "31 May 2023", "evidence": ["D2:1"], "category": 2},
  {"question": "Which city does Ana's sister live in?", "answer": "Lisbon", "evidence": ["D1:3"], "category": 1},
  {"question": "What is Ben's cat called?", "adversarial_answer": "Tom", "evidence": [], "category": 5}
 ]
}`

func TestEvalLoCoMo(t *testing.T) {
	data := writeFile(t, "tiny.json", tinyLoCoMo)
	plots := t.TempDir()
	common := []string{"--catalog", tinyCatalogFile(t), "--db", filepath.Join(t.TempDir(), "e.db")}
	out, err := run(t, "", append([]string{"eval", "locomo", "--data", data, "--k", "3", "--json", "--plot", plots}, common...)...)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Conversations  int                `json:"conversations"`
		Questions      int                `json:"questions"`
		K              int                `json:"k"`
		Recall         float64            `json:"recall"`
		ByCategory     map[string]float64 `json:"byCategory"`
		TokensPerQuery float64            `json:"tokensPerQuery"`
		RecallP50Ms    float64            `json:"recallP50Ms"`
		RecallP99Ms    float64            `json:"recallP99Ms"`
		Baselines      map[string]struct {
			Recall     float64            `json:"recall"`
			ByCategory map[string]float64 `json:"byCategory"`
		} `json:"baselines"`
		InSample *struct {
			Recall     float64            `json:"recall"`
			ByCategory map[string]float64 `json:"byCategory"`
			VsBM25     float64            `json:"vsBM25"`
			Params     map[string]float64 `json:"params"`
		} `json:"inSample"`
		HeldOut *json.RawMessage `json:"heldOut"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil {
		t.Fatalf("output %s: %v", out, err)
	}
	if res.Conversations != 1 || res.Questions != 3 || res.K != 3 {
		t.Fatalf("result = %+v, want 1 conversation, 3 questions, k 3", res)
	}
	// Five turns and k = 3: every question's single evidence turn shares
	// its rare words, so memory recall finds them all.
	if res.Recall != 1 || len(res.ByCategory) != 3 {
		t.Errorf("recall = %v by category %v, want 1 for categories 1, 2 and 4", res.Recall, res.ByCategory)
	}
	for _, b := range []string{"bm25", "bm25Raw", "dense", "recency"} {
		if _, ok := res.Baselines[b]; !ok {
			t.Errorf("baselines %v lack %s", res.Baselines, b)
		}
	}
	if res.Baselines["recency"].Recall >= 1 {
		t.Errorf("baselines = %v", res.Baselines)
	}
	// One conversation: the grid is fitted in-sample, with recall's
	// tuned weights named, and there is nothing to leave out.
	if res.InSample == nil || res.InSample.Recall < res.Recall || len(res.InSample.Params) != len(locomoAxes) || res.HeldOut != nil {
		t.Errorf("in-sample %+v, held-out %v; want the fitted setting of every axis and no held-out figure", res.InSample, res.HeldOut)
	}
	if res.TokensPerQuery <= 0 || res.RecallP99Ms < res.RecallP50Ms {
		t.Errorf("tokens %v, p50 %v, p99 %v", res.TokensPerQuery, res.RecallP50Ms, res.RecallP99Ms)
	}
	for _, f := range []string{"locomo-recall-at-k.png", "locomo-recall-latency.png"} {
		if st, err := os.Stat(filepath.Join(plots, f)); err != nil || st.Size() == 0 {
			t.Errorf("chart %s: %v", f, err)
		}
	}

	text, err := run(t, "", "eval", "locomo", "--data", data, "--k", "3", "--verbose", "--mode", "episodic", "--catalog", tinyCatalogFile(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1 conversations, 3 questions", "evidence recall@3", "bm25", "dense", "recency", "fitted in-sample", "recall latency p50"} {
		if !strings.Contains(text, want) {
			t.Errorf("text output lacks %q:\n%s", want, text)
		}
	}
}

func TestEvalLoCoMoErrors(t *testing.T) {
	data := writeFile(t, "tiny.json", tinyLoCoMo)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"eval", "locomo", "--data", data, "--answer"}, "--answer needs an OpenAI-compatible model"},
		{[]string{"eval", "locomo", "--data", data, "--k", "0"}, "--k must be"},
		{[]string{"eval", "locomo", "--data", data, "--mode", "sometimes"}, "--mode must be"},
		{[]string{"eval", "locomo", "--data", filepath.Join(t.TempDir(), "none.json")}, "LoCoMo data"},
	}
	for _, tt := range tests {
		_, err := run(t, "", tt.args...)
		if err == nil || memento.ErrorCode(err) != memento.EINVALID || !strings.Contains(message(err), tt.want) {
			t.Errorf("%v: err = %v, want EINVALID naming %q", tt.args, err, tt.want)
		}
	}
}

func TestEvalFollowupPlot(t *testing.T) {
	data := writeFile(t, "iard.json", `[{"conversation_id": "d1", "conversation": [
		{"participant": "USER", "utterance": "Recommend some horror movies.", "dialogue_acts": [{"intent": "CRI-A", "slot_values": [["GENRE", "horror", null, null]]}]},
		{"participant": "AGENT", "utterance": "How about these?", "dialogue_acts": []},
		{"participant": "USER", "utterance": "Seen them all, something else please.", "dialogue_acts": [{"intent": "SEE", "slot_values": []}]}
	]}]`)
	plots := t.TempDir()
	if _, err := run(t, "", "eval", "followup", "--data", data, "--json", "--plot", plots, "--catalog", tinyCatalogFile(t)); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(plots, "followup.png")); err != nil || st.Size() == 0 {
		t.Errorf("followup chart: %v", err)
	}
}

// TestLocomoGrid checks that the fitted grid starts with recall's
// defaults (so a tie keeps them), holds every combination once, and maps
// back onto the weights.
func TestLocomoGrid(t *testing.T) {
	grid := locomoGrid()
	want := 1
	for _, a := range locomoAxes {
		want *= len(a.values)
	}
	def := locomoWeights(grid[0])
	if def != recall.DefaultWeights {
		t.Errorf("first setting %v gives %+v, want the defaults %+v", grid[0], def, recall.DefaultWeights)
	}
	seen := map[recall.Weights]bool{}
	for _, p := range grid {
		w := locomoWeights(p)
		if seen[w] {
			t.Errorf("setting %v is in the grid twice", p)
		}
		seen[w] = true
	}
	// The defaults are one of the combinations or added before them.
	if len(grid) != want && len(grid) != want+1 {
		t.Errorf("grid has %d settings, want %d combinations (and the defaults)", len(grid), want)
	}
}
