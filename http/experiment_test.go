package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strconv"
	"strings"
	"testing"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/engine"
	"github.com/memento-ai/memento/engine/enginetest"
	"github.com/memento-ai/memento/experiment"
	mhttp "github.com/memento-ai/memento/http"
	"github.com/memento-ai/memento/llm/offline"
)

func studyServer(t *testing.T) (string, engine.Store) {
	t.Helper()
	db := enginetest.Open(t)
	arms, _ := experiment.ParseArms("semantic,episodic")
	s, err := experiment.NewStudy("trust", arms, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Experiments().CreateStudy(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	cat := catalog.New(uiTitles)
	ag := &agent.Agent{Catalog: cat, Threads: db, Model: offline.New(offline.Options{})}
	st := &mhttp.Study{Store: db.Experiments(), Name: "trust"}
	ts := testServer(t, func(s *mhttp.Server) {
		s.Catalog = cat
		s.Routes = append(s.Routes, mhttp.RegisterChat(ag, db, db),
			mhttp.RegisterUI(mhttp.UI{Threads: db, Messages: db, Events: db, Jobs: db, Study: st}), mhttp.RegisterStudy(st))
	})
	return ts.URL, db
}

type participantClient struct {
	t    *testing.T
	base string
	c    *http.Client
}

func newParticipant(t *testing.T, base string) *participantClient {
	jar, _ := cookiejar.New(nil)
	return &participantClient{t: t, base: base, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (p *participantClient) get(path string) (int, string, string) {
	p.t.Helper()
	resp, err := p.c.Get(p.base + path)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(b)
}

func (p *participantClient) post(path string, body any) (int, map[string]any) {
	p.t.Helper()
	b, _ := json.Marshal(body)
	resp, err := p.c.Post(p.base+path, "application/json", bytes.NewReader(b))
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func TestStudyFlow(t *testing.T) {
	base, db := studyServer(t)
	p := newParticipant(t, base)

	// Without a participant the chat sends them to the consent page.
	code, loc, _ := p.get("/")
	if code != http.StatusSeeOther || loc != "/study" {
		t.Fatalf("GET / = %d to %q, want 303 to /study", code, loc)
	}
	code, _, page := p.get("/study")
	if code != 200 || !strings.Contains(page, `action="/study/consent"`) {
		t.Fatalf("GET /study = %d, want the consent form", code)
	}
	if code, _ := p.post("/study/consent", map[string]any{"consent": false}); code != http.StatusBadRequest {
		t.Errorf("consent false = %d, want 400", code)
	}
	if code, out := p.post("/study/consent", map[string]any{"consent": true}); code != 200 || out["next"] != "/study" {
		t.Fatalf("consent = %d %v", code, out)
	}
	_, _, page = p.get("/study")
	if !strings.Contains(page, `action="/study/demographics"`) {
		t.Fatalf("after consent the page is not the demographics form")
	}
	if code, _ := p.post("/study/demographics", map[string]any{"gender": "female", "age": 7, "familiarity": 4}); code != http.StatusBadRequest {
		t.Errorf("age 7 = %d, want 400", code)
	}
	code, out := p.post("/study/demographics", map[string]any{"gender": "female", "age": 29, "familiarity": 4})
	if code != 200 {
		t.Fatalf("demographics = %d %v", code, out)
	}
	chat, _ := out["next"].(string)
	ps, _ := db.Experiments().Participants(context.Background(), "trust")
	if len(ps) != 1 {
		t.Fatalf("%d participants", len(ps))
	}
	me := ps[0]
	if chat != "/?user="+me.User+"&thread="+me.Thread {
		t.Fatalf("next = %q, want the participant's chat", chat)
	}
	// Another user's page sends them back to their own.
	if code, loc, _ := p.get("/?user=ana"); code != http.StatusSeeOther || loc != chat {
		t.Errorf("GET /?user=ana = %d to %q, want their chat", code, loc)
	}
	code, _, page = p.get(chat)
	if code != 200 || !strings.Contains(page, `data-study="trust"`) || !strings.Contains(page, "study.js") {
		t.Fatalf("chat page = %d, without the study hook", code)
	}
	// The page never names the arm.
	if strings.Contains(page, me.Arm) || strings.Contains(page, me.Mode) {
		t.Errorf("the chat page names the participant's arm %s", me.Arm)
	}
	// Before any message the questionnaire waits.
	_, _, page = p.get("/study/questionnaire")
	if !strings.Contains(page, "First, the conversation") {
		t.Errorf("questionnaire before chatting is not refused")
	}
	if code, _ := p.post("/study/questionnaire", map[string]any{"answers": map[string]int{}}); code != http.StatusConflict {
		t.Errorf("answers before chatting = %d, want 409", code)
	}
	if code, out := p.post("/v1/chat", map[string]any{"user": me.User, "thread": me.Thread, "message": "I love comedy, show me some"}); code != 200 {
		t.Fatalf("chat = %d %v", code, out)
	}
	_, _, page = p.get("/study/questionnaire")
	if strings.Count(page, `type="radio"`) != 12*7 || !strings.Contains(page, "The system is deceptive.") {
		t.Fatalf("questionnaire page has %d radios, want 84", strings.Count(page, `type="radio"`))
	}
	answers := map[string]int{}
	for i := 1; i <= 11; i++ {
		answers["T"+itoa(i)] = 3
	}
	if code, out := p.post("/study/questionnaire", map[string]any{"answers": answers}); code != http.StatusBadRequest || !strings.Contains(errMessage(out), "T12") {
		t.Errorf("11 answers = %d %v, want 400 naming T12", code, out)
	}
	answers["T12"] = 6
	if code, out := p.post("/study/questionnaire", map[string]any{"answers": answers}); code != 200 {
		t.Fatalf("answers = %d %v", code, out)
	}
	_, _, page = p.get("/study")
	if !strings.Contains(page, `id="study-done"`) {
		t.Errorf("after the questionnaire the study page does not thank them")
	}
	if code, loc, _ := p.get(chat); code != http.StatusSeeOther || loc != "/study" {
		t.Errorf("chat after finishing = %d to %q, want back to /study", code, loc)
	}
	ps, _ = db.Experiments().Participants(context.Background(), "trust")
	if ps[0].Stage != experiment.StageDone || ps[0].Messages != 1 || ps[0].Answers[11] != 6 {
		t.Errorf("stored participant %+v", ps[0])
	}
	// The user talks in the arm's memory mode.
	modes, _ := db.MemoryModes(context.Background(), memento.Scope{Tenant: memento.DefaultTenant, User: me.User})
	if modes["*"] != me.Mode {
		t.Errorf("modes = %v, want * = %s", modes, me.Mode)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func errMessage(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}
