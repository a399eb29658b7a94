package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// prefsCatalog is a small catalog, so the test does not load the embedded
// one: heist films, horror films and others, all recent enough to be on
// the first pages of an unfiltered search.
const prefsCatalog = `{"id":"h1","title":"The Vault Job","year":2020,"genres":["Crime","Thriller"],"overview":"The Vault Job is a 2020 American heist thriller film about a crew robbing a bank vault."}
{"id":"h2","title":"Casino Crew","year":2019,"genres":["Comedy","Crime"],"overview":"Casino Crew is a 2019 American heist comedy film in which four friends plan a casino heist."}
{"id":"s1","title":"The Cellar","year":2021,"genres":["Horror"],"overview":"The Cellar is a 2021 American horror film about a haunted cellar."}
{"id":"s2","title":"Night Shift Terror","year":2022,"genres":["Horror","Thriller"],"overview":"Night Shift Terror is a 2022 American slasher horror film."}
{"id":"o1","title":"Meadow Song","year":2022,"genres":["Drama"],"overview":"Meadow Song is a 2022 American drama film about two sisters on a farm."}
{"id":"o2","title":"Big Laughs","year":2021,"genres":["Comedy"],"overview":"Big Laughs is a 2021 American comedy film about a stand-up comedian."}
{"id":"o3","title":"Starfall","year":2020,"genres":["Science Fiction"],"overview":"Starfall is a 2020 American science fiction film about a falling star."}
`

func TestPrefsCommands(t *testing.T) {
	cat := writeFile(t, "catalog.jsonl", prefsCatalog)
	db := filepath.Join(t.TempDir(), "prefs.db")
	script := writeFile(t, "script.jsonl", `{"user":"ann","thread":"t1","text":"I love heist films and I can't stand horror movies."}
{"user":"ann","thread":"t1","text":"I also like crime thrillers."}
{"user":"ann","thread":"t2","text":"Recommend 3 movies."}
`)
	out, err := run(t, "", "replay", script, "--json", "--db", db, "--catalog", cat)
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		Titles []struct {
			ID    string   `json:"id"`
			Title string   `json:"title"`
			Why   []string `json:"why"`
		} `json:"titles"`
	}
	var answers []answer
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var a answer
		if err := dec.Decode(&a); err != nil {
			t.Fatalf("replay output: %v\n%s", err, out)
		}
		answers = append(answers, a)
	}
	if len(answers) != 3 || len(answers[2].Titles) != 3 {
		t.Fatalf("answers = %+v", answers)
	}
	rec := answers[2].Titles
	if rec[0].ID != "h1" && rec[0].ID != "h2" || rec[1].ID != "h1" && rec[1].ID != "h2" {
		t.Errorf("recommended %s, %s, %s; want the heist films first", rec[0].Title, rec[1].Title, rec[2].Title)
	}
	for _, ti := range rec {
		if ti.ID == "s1" || ti.ID == "s2" {
			t.Errorf("recommended the horror film %s", ti.Title)
		}
	}
	if !slices.Contains(rec[0].Why, "you like heist") {
		t.Errorf("first title's reasons %q do not name the liked concept", rec[0].Why)
	}

	out, err = run(t, "", "prefs", "list", "--user", "ann", "--json", "--db", db, "--catalog", cat)
	if err != nil {
		t.Fatal(err)
	}
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("prefs list --json: %v\n%s", err, out)
	}
	concepts := map[string]float64{}
	for _, p := range list {
		for _, key := range []string{"id", "concept", "weight", "effectiveWeight", "kind", "faded", "evidence", "cluster", "sources"} {
			if _, ok := p[key]; !ok {
				t.Errorf("preference %v lacks %q", p, key)
			}
		}
		concepts[p["concept"].(string)] = p["weight"].(float64)
	}
	if concepts["heist"] != 1 || concepts["horror"] != -1 || concepts["crime thrillers"] != 0.7 {
		t.Errorf("preferences = %v, want heist +1, horror -1, crime thrillers +0.7", concepts)
	}

	out, err = run(t, "", "prefs", "clusters", "--user", "ann", "--json", "--db", db, "--catalog", cat)
	if err != nil {
		t.Fatal(err)
	}
	var clusters []struct {
		ID          string  `json:"id"`
		Description string  `json:"description"`
		Confidence  float64 `json:"confidence"`
		Members     []struct {
			Concept string `json:"concept"`
			Stance  string `json:"stance"`
		} `json:"members"`
	}
	if err := json.Unmarshal([]byte(out), &clusters); err != nil {
		t.Fatalf("prefs clusters --json: %v\n%s", err, out)
	}
	if len(clusters) != 1 || clusters[0].Description != "prefers heist and crime thrillers" || len(clusters[0].Members) != 2 ||
		clusters[0].Members[0].Stance != "support" || clusters[0].Confidence <= 0 {
		t.Errorf("clusters = %+v\n%s", clusters, out)
	}

	out, err = run(t, "", "prefs", "list", "--user", "ann", "--db", db)
	if err != nil || !strings.Contains(out, "heist") || !strings.Contains(out, "EFFECTIVE") {
		t.Errorf("prefs list = %v\n%s", err, out)
	}
	out, err = run(t, "", "prefs", "clusters", "--user", "ann", "--refresh", "--db", db, "--catalog", cat)
	if err != nil || !strings.Contains(out, "prefers heist and crime thrillers") || !strings.Contains(out, "heist (support)") {
		t.Errorf("prefs clusters --refresh = %v\n%s", err, out)
	}
	out, err = run(t, "", "prefs", "list", "--user", "nobody", "--json", "--db", db)
	if err != nil || strings.TrimSpace(out) != "[]" {
		t.Errorf("prefs list of an unknown user = %v %q, want []", err, out)
	}
	if _, err := run(t, "", "prefs", "list", "--db", db); err == nil || !strings.Contains(err.Error(), "user") {
		t.Errorf("prefs list without --user: %v, want an error naming --user", err)
	}
}
