package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/memento-ai/memento/experiment"
)

// studyParticipants is how many simulated participants the browser study
// scripts, as many as the original study had.
const studyParticipants = 30

// The simulated participants' opening requests; each sends one or two.
var studyMessages = []string{
	"I love sci-fi but can't stand horror",
	"Something funny from the 90s please",
	"A tense heist thriller",
	"Movie only, something newer",
	"I didn't like them, please discover different ones",
	"Recommend a romantic comedy",
}

// TestBrowserStudy scripts a whole between-subjects study through the web
// UI in Chromium: the study is created with the CLI, served with
// --experiment, and 30 simulated participants each consent, give their
// demographics, talk to the agent and fill in the trust questionnaire;
// then analyze prints every statistic. The participants' answers are
// simulated (each has a random trust level and answers around it, reverse
// items mirrored), so the test shows the study's plumbing and the
// analysis, not an effect.
func TestBrowserStudy(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	exe := chromium(t)
	t0 := time.Now()
	db := filepath.Join(t.TempDir(), "memento.db")
	out := mustRun(t, "experiment", "create", "--name", "trust", "--arms", "semantic,episodic", "--json", "--db", db)
	var created experiment.Study
	if err := json.Unmarshal([]byte(out), &created); err != nil || len(created.Arms) != 2 {
		t.Fatalf("create printed %q (%v)", out, err)
	}

	m := NewMain()
	var stderr bytes.Buffer
	m.Stdout, m.Stderr = &bytes.Buffer{}, &stderr
	m.Getenv = func(string) string { return "" }
	ctx := context.Background()
	if err := m.ParseFlags(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--log-level", "error", "--experiment", "trust", "--experiment-seed", "18"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(ctx); err != nil {
		t.Fatalf("serve: %v\n%s", err, stderr.String())
	}
	closed := false
	closeServer := func() {
		if closed {
			return
		}
		closed = true
		cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := m.Close(cctx); err != nil {
			t.Errorf("close: %v", err)
		}
		if stderr.Len() > 0 {
			t.Logf("server log:\n%s", stderr.String())
		}
	}
	t.Cleanup(closeServer)
	base := m.URL()

	bctx := browser(t, exe, 8*time.Minute*slowdown)
	console := watchConsole(bctx)
	t.Logf("%5.1fs server and browser up", time.Since(t0).Seconds())

	rnd := rand.New(rand.NewPCG(2000, 18))
	// The first participant's steps are photographed (MEMENTO_UPDATE_SCREENSHOTS=1
	// copies them to docs/screenshots for docs/EXPERIMENTS.md).
	shots := &shooter{t: t, ctx: bctx, dir: t.ArtifactDir(), t0: t0, docs: map[string]string{
		"study-consent": "study-consent.png", "study-chat": "study-chat.png", "study-questionnaire": "study-questionnaire.png"}}
	for i := range studyParticipants {
		var s *shooter
		if i == 0 {
			s = shots
		}
		participate(t, bctx, base, rnd, i, s)
		if t.Failed() {
			return
		}
	}
	console.check(t)
	t.Logf("%5.1fs %d participants done", time.Since(t0).Seconds(), studyParticipants)
	closeServer()

	// Every participant is stored with an arm, balanced, and finished.
	var exp experiment.Export
	if err := json.Unmarshal([]byte(mustRun(t, "experiment", "export", "--name", "trust", "--format", "json", "--db", db)), &exp); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, p := range exp.Participants {
		counts[p.Arm]++
		if p.Stage != experiment.StageDone || p.Messages < 1 || len(p.Answers) != 12 {
			t.Errorf("participant %s: stage %s, %d messages, %d answers", p.ID, p.Stage, p.Messages, len(p.Answers))
		}
	}
	if counts["semantic"] != studyParticipants/2 || counts["episodic"] != studyParticipants/2 {
		t.Errorf("arms = %v, want %d each", counts, studyParticipants/2)
	}
	csv := mustRun(t, "experiment", "export", "--name", "trust", "--format", "csv", "--db", db)
	if n := strings.Count(csv, "\n"); n != studyParticipants+1 {
		t.Errorf("csv export has %d lines, want %d", n, studyParticipants+1)
	}

	plots := t.ArtifactDir()
	text := mustRun(t, "experiment", "analyze", "--name", "trust", "--db", db, "--plot", plots)
	t.Logf("analyze:\n%s", text)
	for _, want := range []string{
		"30 completed", "Descriptives", "chi-squared homogeneity", "age (Kruskal-Wallis)", "familiarity (Kruskal-Wallis)",
		"(Shapiro-Wilk): W =", "(Bartlett):", "Student's t:     t =", "Welch's t:       t =", "Mann-Whitney U:  U =",
		"chosen:", "Cohen's d =", "power analysis:", "Item means", "plot:",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("analyze output lacks %q", want)
		}
	}
	var rep experiment.Report
	if err := json.Unmarshal([]byte(mustRun(t, "experiment", "analyze", "--name", "trust", "--db", db, "--json")), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Completed != studyParticipants || len(rep.Comparisons) != 1 || rep.Comparisons[0].Effect == nil || rep.Assumptions.Variances == nil ||
		rep.Comparability.Gender == nil || rep.Comparability.Age == nil || rep.Comparability.Familiarity == nil {
		t.Errorf("analyze --json is incomplete: %+v", rep)
	}
}

// participate takes one simulated participant through the study.
func participate(t *testing.T, ctx context.Context, base string, rnd *rand.Rand, i int, shots *shooter) {
	t.Helper()
	shot := func(name string) {
		if shots != nil {
			shots.shot(name)
		}
	}
	if _, err := chromedp.Call(ctx, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
		t.Fatalf("clear cookies: %v", err)
	}
	who := fmt.Sprintf("participant %d", i+1)
	// The chat is closed to someone who has not consented.
	do(t, ctx, who+": open the page", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#consent")))
	waitFor(t, ctx, who+": study script", `document.body.dataset.studyReady === 'true'`, 5*time.Second)
	clickNow(t, ctx, who+": consent", "#consent", 5*time.Second)
	shot("study-consent")
	clickNow(t, ctx, who+": start", "#study-submit", 5*time.Second)

	do(t, ctx, who+": demographics", chromedp.WaitVisible(chromedp.CSS("#gender")))
	waitFor(t, ctx, who+": study script", `document.body.dataset.studyReady === 'true'`, 5*time.Second)
	gender := experiment.Genders[rnd.IntN(len(experiment.Genders))]
	age := 18 + rnd.IntN(50)
	fam := 1 + rnd.IntN(7)
	do(t, ctx, who+": fill in demographics",
		chromedp.SetValue(chromedp.CSS("#gender"), gender),
		chromedp.SetValue(chromedp.CSS("#age"), fmt.Sprint(age)))
	clickNow(t, ctx, who+": familiarity", fmt.Sprintf(`input[name="familiarity"][value="%d"]`, fam), 5*time.Second)
	clickNow(t, ctx, who+": continue", "#study-submit", 5*time.Second)

	// The conversation: the chat page, without the memory inspector.
	do(t, ctx, who+": the chat", chromedp.WaitVisible(chromedp.CSS("#composer-input")))
	waitFor(t, ctx, who+": page scripts", `document.body.dataset.ready === 'true' && document.body.dataset.studyReady === 'true'`, 10*time.Second)
	if visible := jsEval[bool](t, ctx, `(() => { const b = document.querySelector('#open-inspector'); return !!b && b.offsetParent !== null; })()`); visible {
		t.Errorf("%s: the memory inspector's button is visible in the study", who)
	}
	if !strings.HasPrefix(jsEval[string](t, ctx, `document.body.dataset.user`), "study-") {
		t.Errorf("%s: the chat does not run as the participant's user", who)
	}
	for range 1 + rnd.IntN(2) {
		sendMessage(t, ctx, studyMessages[rnd.IntN(len(studyMessages))], false)
	}
	shot("study-chat")
	clickNow(t, ctx, who+": on to the questions", "#to-questionnaire", 5*time.Second)

	do(t, ctx, who+": the questionnaire", chromedp.WaitVisible(chromedp.CSS(`fieldset[data-item="T12"]`)))
	waitFor(t, ctx, who+": study script", `document.body.dataset.studyReady === 'true'`, 5*time.Second)
	// A trust level between 2.5 and 6.5, answered with noise; the five
	// distrust items are answered mirrored, as a consistent person would.
	level := 2.5 + 4*rnd.Float64()
	var picks []string
	for item := 1; item <= 12; item++ {
		v := int(level + rnd.NormFloat64()*0.8 + 0.5)
		v = min(7, max(1, v))
		if item <= 5 {
			v = 8 - v
		}
		picks = append(picks, fmt.Sprintf(`fieldset[data-item="T%d"] input[value="%d"]`, item, v))
	}
	js := `(() => { for (const s of ` + jsonString(picks) + `) { const n = document.querySelector(s); if (!n) return false; n.click(); } return true; })()`
	waitFor(t, ctx, who+": answer the statements", js, 5*time.Second)
	shot("study-questionnaire")
	clickNow(t, ctx, who+": submit", "#study-submit", 5*time.Second)
	do(t, ctx, who+": thanks", chromedp.WaitVisible(chromedp.CSS("#study-done")))
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// mustRun runs one memento command in-process (run) and returns what it
// printed, failing the test on an error.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := run(t, "", args...)
	if err != nil {
		t.Fatalf("memento %s: %v", strings.Join(args, " "), err)
	}
	return out
}
