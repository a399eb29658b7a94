package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// tinyMovieLens writes a MovieLens directory whose films are the titles of
// tinyCatalogFile, written the MovieLens way ("Notebook, The"), with
// rating counts from 0 to 40.
func tinyMovieLens(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	movies := "movieId,title,genres\n1,Heat (1995),Crime\n2,Arrival (2016),Sci-Fi\n3,Up (2009),Animation\n" +
		"4,\"Notebook, The (2004)\",Romance\n5,\"Conjuring, The (2013)\",Horror\n"
	counts := map[int]int{1: 40, 2: 25, 3: 10, 4: 3, 5: 21}
	var ratings strings.Builder
	ratings.WriteString("userId,movieId,rating,timestamp\n")
	for movie, n := range counts {
		for u := range n {
			ratings.WriteString(strings.Join([]string{strconv.Itoa(u + 1), strconv.Itoa(movie), "4.0", "964982703"}, ",") + "\n")
		}
	}
	for name, body := range map[string]string{"movies.csv": movies, "ratings.csv": ratings.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestEvalColdstart(t *testing.T) {
	ml := tinyMovieLens(t)
	reqs := writeFile(t, "requests.txt", "# two new users\nRecommend 3 movies\n\nI want a horror movie\n")
	common := []string{"--catalog", tinyCatalogFile(t), "--db", filepath.Join(t.TempDir(), "c.db")}
	out, err := run(t, "", append([]string{"eval", "coldstart", "--requests", reqs, "--movielens", ml, "--k", "3", "--json", "--quiet"}, common...)...)
	if err != nil {
		t.Fatalf("eval coldstart: %v\n%s", err, out)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not one JSON object: %v\n%s", err, out)
	}
	if keys := sortedKeys(got); !slices.Equal(keys, []string{"baselines", "known", "meanGain", "oracleRatio", "requests"}) {
		t.Fatalf("keys = %v\n%s", keys, out)
	}
	var res struct {
		Requests  int                           `json:"requests"`
		MeanGain  float64                       `json:"meanGain"`
		Known     float64                       `json:"known"`
		Ratio     float64                       `json:"oracleRatio"`
		Baselines map[string]map[string]float64 `json:"baselines"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Requests != 2 || res.MeanGain <= 0 || res.Known <= 0 || res.Known > 1 || res.Ratio <= 0 || res.Ratio > 1 {
		t.Errorf("figures = %+v, want 2 requests and figures in (0, 1]", res)
	}
	if keys := sortedKeys(res.Baselines); !slices.Equal(keys, []string{"catalogOrder", "prior"}) {
		t.Errorf("baselines = %v", keys)
	}
	for name, b := range res.Baselines {
		if keys := sortedKeys(b); !slices.Equal(keys, []string{"known", "meanGain", "oracleRatio"}) {
			t.Errorf("baseline %s keys = %v", name, keys)
		}
		if b["oracleRatio"] < 0 || b["oracleRatio"] > 1 || b["known"] < 0 || b["known"] > 1 {
			t.Errorf("baseline %s = %v, want ratios in [0, 1]", name, b)
		}
	}

	table, err := run(t, "", append([]string{"eval", "coldstart", "--requests", reqs, "--movielens", ml, "--k", "3"}, common[:2]...)...)
	if err != nil {
		t.Fatalf("eval coldstart (table): %v", err)
	}
	for _, want := range []string{"2 requests", "agent", "catalogOrder", "prior", "Recommend 3 movies", "I want a horror movie"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func TestEvalColdstartErrors(t *testing.T) {
	ml := tinyMovieLens(t)
	reqs := writeFile(t, "requests.txt", "Recommend 3 movies\n")
	cat := tinyCatalogFile(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing request file", []string{"--requests", filepath.Join(t.TempDir(), "none.txt"), "--movielens", ml}, "--requests"},
		{"empty request file", []string{"--requests", writeFile(t, "empty.txt", "# nothing\n"), "--movielens", ml}, "no requests"},
		{"missing MovieLens directory", []string{"--requests", reqs, "--movielens", filepath.Join(t.TempDir(), "none")}, "--movielens"},
		{"MovieLens directory without ratings", []string{"--requests", reqs, "--movielens", t.TempDir()}, "ratings.csv"},
		{"k out of range", []string{"--requests", reqs, "--movielens", ml, "--k", "0"}, "--k"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, "", append(append([]string{"eval", "coldstart", "--quiet", "--catalog", cat}, tc.args...), "--db", filepath.Join(t.TempDir(), "c.db"))...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one naming %q", err, tc.want)
			}
		})
	}
}

// TestEvalFollowupBaseline replays a rejection through the agent and
// through the baseline that ignores rejections, in one run: the first
// must honour it and the second must not.
func TestEvalFollowupBaseline(t *testing.T) {
	data := writeFile(t, "iard.json", `[{"conversation_id": "d1", "conversation": [
		{"participant": "USER", "utterance": "Recommend some horror movies.", "dialogue_acts": [{"intent": "IQU", "slot_values": [["GENRE", "horror", null, null]]}]},
		{"participant": "AGENT", "utterance": "How about these?", "dialogue_acts": []},
		{"participant": "USER", "utterance": "Seen them all, something else please.", "dialogue_acts": [{"intent": "SEE", "slot_values": []}]}
	]}]`)
	out, err := run(t, "", "eval", "followup", "--data", data, "--json", "--catalog", tinyCatalogFile(t), "--db", filepath.Join(t.TempDir(), "f.db"))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		RejectTurns      int            `json:"rejectTurns"`
		RejectCompliance float64        `json:"rejectCompliance"`
		CriteriaTurns    int            `json:"criteriaTurns"`
		CriteriaCapture  float64        `json:"criteriaCapture"`
		Criteria         int            `json:"criteria"`
		CriteriaBySlot   map[string]any `json:"criteriaBySlot"`
		Baselines        map[string]struct {
			RejectTurns      int     `json:"rejectTurns"`
			RejectCompliance float64 `json:"rejectCompliance"`
		} `json:"baselines"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	base, ok := res.Baselines["ignoreRejections"]
	if res.RejectTurns != 1 || res.RejectCompliance != 1 || !ok || base.RejectTurns != 1 || base.RejectCompliance != 0 {
		t.Errorf("rejections: agent %d turns, %v; baseline %+v (present %v); want 1 turn, 1 against 0\n%s",
			res.RejectTurns, res.RejectCompliance, base, ok, out)
	}
	if forget, ok := res.Baselines["ignoreRejectionsForgetShown"]; !ok || forget.RejectTurns != 1 || forget.RejectCompliance != 0 {
		t.Errorf("baseline ignoreRejectionsForgetShown = %+v (present %v), want 1 turn, 0\n%s", forget, ok, out)
	}
	if res.CriteriaTurns != 1 || res.Criteria != 1 || res.CriteriaCapture != 1 || res.CriteriaBySlot["GENRE"] == nil {
		t.Errorf("criteria: %d turns, %d criteria, capture %v, by slot %v; want 1, 1, 1 with GENRE", res.CriteriaTurns, res.Criteria, res.CriteriaCapture, res.CriteriaBySlot)
	}
}
