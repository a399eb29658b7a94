package http_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/engine"
	"github.com/memento-ai/memento/engine/enginetest"
	mhttp "github.com/memento-ai/memento/http"
	"github.com/memento-ai/memento/llm/offline"
)

// storedThread is thread t1 of user ana as the agent stores it: a first
// turn from before answers were kept (text only), then two turns with
// their answers.
func storedThread(t *testing.T) (engine.Store, []agent.Response) {
	t.Helper()
	db := enginetest.Open(t)
	ctx := context.Background()
	s := memento.Scope{Tenant: memento.DefaultTenant, User: "ana"}
	comedy := memento.NewActiveContext()
	comedy.Genres = []string{"Comedy"}
	answers := []agent.Response{
		{
			User: "ana", Thread: "t1", Reply: "Here are 2 comedy titles:\n1. Alpha (2012): Comedy\n2. Beta (2014): Comedy\nWant something else?",
			Titles: []agent.TitleResult{
				{ID: "a", Title: "Alpha", Type: "movie", Year: 2012, Genres: []string{"Comedy"}, Why: []string{"a comedy, as you asked", "well known"}},
				{ID: "b", Title: "Beta", Type: "movie", Year: 2014, Genres: []string{"Comedy"}, Why: []string{"like Alpha, which you liked"}},
			},
			ActiveContext: comedy, Notes: []string{"Only 2 titles matched."}, Searched: true,
			Memory: agent.MemoryUsed{Summary: "Wants: Comedy.", Used: []agent.MemoryItem{
				{Kind: "summary", ID: "1", Text: "Wants: Comedy."},
				{Kind: "attribute", ID: "m1", Text: "LIKES: dogs"},
			}},
		},
		{
			User: "ana", Thread: "t1", Reply: "Here is 1 comedy title:\n1. Gamma (2016): Comedy",
			Titles:        []agent.TitleResult{{ID: "c", Title: "Gamma", Type: "movie", Year: 2016, Genres: []string{"Comedy"}, Why: []string{"newer, as you asked"}}},
			ActiveContext: comedy, Notes: []string{}, Searched: true, Memory: agent.MemoryUsed{Used: []agent.MemoryItem{}},
		},
	}
	turns := []memento.Turn{{
		Scope: s, Thread: "t1",
		Messages: []memento.Message{
			{ID: "u0", Role: memento.RoleUser, Text: "hello"},
			{ID: "a0", Role: memento.RoleAssistant, Text: "Hi! What would you like to watch?"},
		},
		State: memento.ThreadState{Context: memento.NewActiveContext()},
	}}
	for i, a := range answers {
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		id := string(rune('1' + i))
		turns = append(turns, memento.Turn{
			Scope: s, Thread: "t1",
			Messages: []memento.Message{
				{ID: "u" + id, Role: memento.RoleUser, Text: "comedies please " + id},
				{ID: "a" + id, Role: memento.RoleAssistant, Text: a.Reply},
			},
			State:  memento.ThreadState{Context: comedy, LastShown: []string{a.Titles[0].ID}},
			Answer: b,
		})
	}
	for _, tr := range turns {
		if _, err := db.SaveTurn(ctx, tr); err != nil {
			t.Fatal(err)
		}
	}
	return db, answers
}

func answersServer(t *testing.T, db engine.Store) string {
	t.Helper()
	cat := catalog.New(uiTitles)
	ag := &agent.Agent{Catalog: cat, Threads: db, Model: offline.New(offline.Options{})}
	ts := testServer(t, func(s *mhttp.Server) {
		s.Catalog = cat
		s.Routes = append(s.Routes, mhttp.RegisterChat(ag, db, db), mhttp.RegisterUI(mhttp.UI{Threads: db, Messages: db, Events: db}))
	})
	return ts.URL
}

func TestThreadAnswers(t *testing.T) {
	db, answers := storedThread(t)
	url := answersServer(t, db)

	tests := []struct {
		name     string
		path     string
		wantCode int
		wantMsgs []string // the answers' message ids, in order
	}{
		{"all", "/v1/users/ana/threads/t1/answers", 200, []string{"a1", "a2"}},
		{"newest one", "/v1/users/ana/threads/t1/answers?limit=1", 200, []string{"a2"}},
		{"limit 0 is the default", "/v1/users/ana/threads/t1/answers?limit=0", 200, []string{"a1", "a2"}},
		{"unknown thread", "/v1/users/ana/threads/nope/answers", 200, []string{}},
		{"another user's thread", "/v1/users/bob/threads/t1/answers", 200, []string{}},
		{"limit too large", "/v1/users/ana/threads/t1/answers?limit=100000", 400, nil},
		{"negative limit", "/v1/users/ana/threads/t1/answers?limit=-1", 400, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := get(t, url+tt.path)
			if code != tt.wantCode {
				t.Fatalf("GET %s = %d %v, want %d", tt.path, code, body, tt.wantCode)
			}
			if tt.wantMsgs == nil {
				return
			}
			list, ok := body["answers"].([]any)
			if !ok {
				t.Fatalf("body %v has no answers list", body)
			}
			got := []string{}
			for _, a := range list {
				got = append(got, a.(map[string]any)["message"].(string))
			}
			if strings.Join(got, ",") != strings.Join(tt.wantMsgs, ",") {
				t.Errorf("answers of messages %v, want %v", got, tt.wantMsgs)
			}
		})
	}

	t.Run("answer as the chat returned it", func(t *testing.T) {
		code, body := get(t, url+"/v1/users/ana/threads/t1/answers")
		if code != 200 {
			t.Fatalf("GET answers = %d", code)
		}
		first := body["answers"].([]any)[0].(map[string]any)
		if first["seq"] != float64(4) {
			t.Errorf("first answer's seq = %v, want 4", first["seq"])
		}
		b, _ := json.Marshal(first["answer"])
		var got agent.Response
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if got.Reply != answers[0].Reply || len(got.Titles) != 2 || strings.Join(got.Titles[0].Why, "|") != "a comedy, as you asked|well known" ||
			got.Memory.Summary != "Wants: Comedy." || len(got.Notes) != 1 {
			t.Errorf("stored answer = %+v, want %+v", got, answers[0])
		}
	})
}

// TestUIPageShowsStoredAnswers reloads a thread: every answer that was
// stored shows its cards with their reasons, its notes and what it drew
// on; the turn from before answers were kept shows its text only.
func TestUIPageShowsStoredAnswers(t *testing.T) {
	db, _ := storedThread(t)
	url := answersServer(t, db)
	_, page := fetch(t, url+"/?user=ana&thread=t1")

	// The page's <template> parts, which app.js clones, follow the
	// conversation; leave them out.
	page, _, _ = strings.Cut(page, "<template")
	turns := strings.Split(page, `<article class="turn turn-agent`)[1:]
	if len(turns) != 3 {
		t.Fatalf("page shows %d answers, want 3", len(turns))
	}
	checks := []struct {
		turn    int
		want    []string
		notWant []string
	}{
		{0, []string{"Hi! What would you like to watch?"}, []string{`<li class="card`, `<li class="chip`, "What Memento drew on ("}},
		{1, []string{
			`<li class="card" data-title-id="a">`, `<li class="card" data-title-id="b">`,
			`<ul class="why" data-slot="why" aria-label="Why this title"><li>a comedy, as you asked</li><li>well known</li></ul>`,
			`<li>like Alpha, which you liked</li>`,
			`<ul class="notes" data-slot="notes"><li>Only 2 titles matched.</li></ul>`,
			"What Memento drew on (2)", `<span class="kind">Summary</span>Wants: Comedy.`, `<span class="kind">Attribute</span>LIKES: dogs`,
			`data-field="genres" data-value="Comedy"`,
			"Want something else?",
		}, []string{"1. Alpha (2012)", `class="chip-x"`, " latest"}},
		{2, []string{` latest"`, `data-title-id="c"`, `<li>newer, as you asked</li>`, `aria-label="Remove Comedy"`}, []string{"1. Gamma", "What Memento drew on ("}},
	}
	for _, c := range checks {
		for _, w := range c.want {
			if !strings.Contains(turns[c.turn], w) {
				t.Errorf("answer %d lacks %s", c.turn+1, w)
			}
		}
		for _, w := range c.notWant {
			if strings.Contains(turns[c.turn], w) {
				t.Errorf("answer %d holds %s", c.turn+1, w)
			}
		}
	}
	// The part app.js swaps in when it opens a thread is the same.
	_, part := fetch(t, url+"/ui/conversation?user=ana&thread=t1")
	if !strings.Contains(part, `<li>a comedy, as you asked</li>`) || !strings.Contains(part, `<li>newer, as you asked</li>`) {
		t.Errorf("the conversation part lacks the stored answers' reasons")
	}
}

// TestUIPageMarksEarlierCards checks that what the user did about a title
// shows on the card of an earlier answer too.
func TestUIPageMarksEarlierCards(t *testing.T) {
	db, _ := storedThread(t)
	ctx := context.Background()
	ev := memento.Event{ID: "e1", TitleID: "b", Type: memento.EventDisliked, At: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)}
	if _, err := db.AddEvents(ctx, memento.Scope{Tenant: memento.DefaultTenant, User: "ana"}, []memento.Event{ev}, nil); err != nil {
		t.Fatal(err)
	}
	_, page := fetch(t, answersServer(t, db)+"/?user=ana&thread=t1")
	if !strings.Contains(page, `<li class="card dismissed" data-title-id="b">`) {
		t.Errorf("the earlier answer's card of a title turned down is not marked")
	}
}

func TestMemoryItems(t *testing.T) {
	got := mhttp.MemoryItems(agent.MemoryUsed{Summary: "S", Used: []agent.MemoryItem{
		{Kind: "summary", Text: "S"}, {Kind: "profile_key", Text: "genres: comedy"}, {Kind: "", ID: "m9"},
	}})
	var kinds []string
	for _, it := range got {
		kinds = append(kinds, it.Kind+"="+it.Text)
	}
	want := "Summary=S|Profile key=genres: comedy|Memory=m9"
	if strings.Join(kinds, "|") != want {
		t.Errorf("MemoryItems = %q, want %q", strings.Join(kinds, "|"), want)
	}
}
