package main

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/experiment"
	"github.com/memento-ai/memento/sqlite"
)

func TestExperimentCommands(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	out := mustRun(t, "experiment", "create", "--name", "s1", "--arms", "semantic,episodic", "--db", db)
	if !strings.Contains(out, "created study s1") || !strings.Contains(out, "serve --experiment s1") {
		t.Errorf("create printed %q", out)
	}
	for _, c := range []struct {
		args []string
		code string
	}{
		{[]string{"experiment", "create", "--name", "s1", "--db", db}, memento.ECONFLICT},
		{[]string{"experiment", "create", "--name", "s2", "--arms", "semantic", "--db", db}, memento.EINVALID},
		{[]string{"experiment", "create", "--name", "s2", "--arms", "semantic,working", "--db", db}, memento.EINVALID},
		{[]string{"experiment", "create", "--name", "s2", "--instrument", "nope", "--db", db}, memento.EINVALID},
		{[]string{"experiment", "analyze", "--name", "nope", "--db", db}, memento.ENOTFOUND},
		{[]string{"experiment", "export", "--name", "s1", "--format", "xls", "--db", db}, memento.EINVALID},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--experiment", "nope", "--db", db}, memento.ENOTFOUND},
	} {
		_, err := run(t, "", c.args...)
		if memento.ErrorCode(err) != c.code {
			t.Errorf("memento %s: err = %v, want %s", strings.Join(c.args, " "), err, c.code)
		}
	}

	// Another instrument in the same format, from a file.
	inst := filepath.Join(t.TempDir(), "short.json")
	if err := os.WriteFile(inst, []byte(`{"id":"short","title":"Two items","citation":"test","scale":{"min":1,"max":5},"score":"sum",
		"items":[{"id":"a","text":"Good."},{"id":"b","text":"Bad.","reverse":true}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var s experiment.Study
	if err := json.Unmarshal([]byte(mustRun(t, "experiment", "create", "--name", "s3", "--instrument", inst, "--json", "--db", db)), &s); err != nil {
		t.Fatal(err)
	}
	if s.Instrument.ID != "short" || len(s.Instrument.Items) != 2 {
		t.Errorf("study s3 instrument = %+v", s.Instrument)
	}

	// Participants stored through the store come out of export and analyze.
	ctx := context.Background()
	store, err := sqlite.Open(ctx, db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x := store.Experiments()
	assign := experiment.Balanced(rand.New(rand.NewPCG(1, 2)))
	for i := range 8 {
		p, err := x.Enroll(ctx, "s1", "", assign)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := x.SaveDemographics(ctx, "s1", p.ID, experiment.Demographics{Gender: experiment.Genders[i%2], Age: 20 + i, Familiarity: 1 + i%7}); err != nil {
			t.Fatal(err)
		}
		ans := make([]int, 12)
		for j := range ans {
			ans[j] = 1 + (i+j)%7
		}
		if _, err := x.SaveAnswers(ctx, "s1", p.ID, ans); err != nil {
			t.Fatal(err)
		}
	}
	store.Close()

	csv := mustRun(t, "experiment", "export", "--name", "s1", "--format", "csv", "--db", db)
	if lines := strings.Split(strings.TrimSpace(csv), "\n"); len(lines) != 9 || !strings.HasPrefix(lines[0], "participant,arm,mode,stage,gender,age,familiarity") {
		t.Errorf("csv export:\n%s", csv)
	}
	file := filepath.Join(t.TempDir(), "s1.json")
	mustRun(t, "experiment", "export", "--name", "s1", "--format", "json", "--out", file, "--db", db)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var exp experiment.Export
	if err := json.Unmarshal(b, &exp); err != nil || len(exp.Participants) != 8 || len(exp.Scores) != 8 {
		t.Errorf("json export: %v, %d participants", err, len(exp.Participants))
	}
	var rep experiment.Report
	if err := json.Unmarshal([]byte(mustRun(t, "experiment", "analyze", "--name", "s1", "--json", "--db", db)), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Completed != 8 || rep.Arms[0].N != 4 || rep.Arms[1].N != 4 || len(rep.Comparisons) != 1 || rep.Comparisons[0].Chosen == "" {
		t.Errorf("analyze: %+v", rep)
	}
	list := mustRun(t, "experiment", "list", "--db", db)
	if !strings.Contains(list, "s1") || !strings.Contains(list, "trust-jian-2000") {
		t.Errorf("list:\n%s", list)
	}
}
