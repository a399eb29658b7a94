package http_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/engine"
	"github.com/memento-ai/memento/engine/enginetest"
	mhttp "github.com/memento-ai/memento/http"
	"github.com/memento-ai/memento/llm/offline"
)

var uiTitles = []memento.Title{
	{ID: "a", Title: "Alpha", Type: "movie", Year: 2012, Genres: []string{"Comedy"}, Overview: "Alpha is a comedy about a dog. It has a sequel."},
	{ID: "b", Title: "Beta", Type: "movie", Year: 2014, Genres: []string{"Comedy"}},
	{ID: "c", Title: "Gamma", Type: "movie", Year: 2016, Genres: []string{"Comedy"}},
	{ID: "d", Title: "Delta <b>", Type: "movie", Year: 2018, Genres: []string{"Comedy"}},
}

// uiServer serves the page over a real store, with one answered turn for
// user ana in thread t1 when turn is set.
func uiServer(t *testing.T, turn string) (*httptest.Server, engine.Store) {
	t.Helper()
	db := enginetest.Open(t)
	cat := catalog.New(uiTitles)
	ag := &agent.Agent{Catalog: cat, Threads: db, Model: offline.New(offline.Options{})}
	if turn != "" {
		if _, err := ag.Turn(context.Background(), memento.DefaultTenant, agent.Request{User: "ana", Thread: "t1", Message: turn}); err != nil {
			t.Fatal(err)
		}
	}
	ts := testServer(t, func(s *mhttp.Server) {
		s.Catalog = cat
		s.Routes = append(s.Routes, mhttp.RegisterChat(ag, db, db), mhttp.RegisterUI(mhttp.UI{Threads: db, Messages: db, Events: db, Jobs: db}))
	})
	return ts, db
}

func fetch(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func TestUIPageRendersTheConversation(t *testing.T) {
	ts, _ := uiServer(t, "Discover exactly 2 comedy movies from 2010 onward")
	resp, page := fetch(t, ts.URL+"/?user=ana&thread=t1")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET / = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("Content-Security-Policy = %q, want scripts from the origin only", csp)
	}
	for _, want := range []string{
		`data-user="ana"`, `data-thread="t1"`,
		// The sidebar names the thread by its first message.
		`<span class="thread-label">Discover exactly 2 comedy movies from 2010 onward</span>`,
		`aria-current="page"`,
		// The latest answer shows its titles and its context as chips.
		`<li class="card" data-title-id="d">`, `Delta &lt;b&gt;`,
		`data-field="genres" data-value="Comedy"`, `aria-label="Remove Comedy"`,
		`from 2010`, `2 at a time`,
		// The parts app.js clones.
		`<template id="tpl-card">`, `<template id="tpl-chip">`, `<template id="tpl-agent-turn">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(page, "1. Delta") {
		t.Errorf("the reply's numbered list is shown although the cards show the titles")
	}
	// Assets are linked with their content hash.
	if !regexp.MustCompile(`/static/app\.js\?v=[0-9a-f]{12}`).MatchString(page) {
		t.Errorf("page does not link app.js with a content hash")
	}
}

func TestUIPageMarksWhatTheUserDid(t *testing.T) {
	ts, db := uiServer(t, "Discover exactly 3 comedy movies from 2010 onward")
	sc := memento.Scope{Tenant: memento.DefaultTenant, User: "ana"}
	st, err := db.ThreadState(context.Background(), sc, "t1")
	if err != nil || len(st.LastShown) != 3 {
		t.Fatalf("thread state = %v, %v", st, err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	events := []memento.Event{
		{ID: "e1", Type: memento.EventLiked, TitleID: st.LastShown[0], At: at},
		{ID: "e2", Type: memento.EventDisliked, TitleID: st.LastShown[0], At: at.Add(time.Minute)},
		{ID: "e3", Type: memento.EventWatched, TitleID: st.LastShown[1], At: at},
	}
	if _, err := db.AddEvents(context.Background(), sc, events, nil); err != nil {
		t.Fatal(err)
	}
	_, page := fetch(t, ts.URL+"/?user=ana&thread=t1")
	// The cards of the page, without the blank one of the <template>.
	page = page[:strings.Index(page, `<template id="tpl-user-turn">`)]
	chunks := strings.Split(page, `<li class="card`)[1:]
	if len(chunks) != 3 {
		t.Fatalf("page shows %d cards, want 3", len(chunks))
	}
	pressed := func(card, event string) bool {
		return strings.Contains(card, `data-event="`+event+`" aria-pressed="true"`)
	}
	for _, chunk := range chunks {
		card := `<li class="card` + chunk
		id := regexp.MustCompile(`data-title-id="([^"]+)"`).FindStringSubmatch(card)[1]
		want := map[string]bool{
			"watched":  id == st.LastShown[1],
			"liked":    false, // liked, then turned down: the newest counts
			"disliked": id == st.LastShown[0],
		}
		for event, on := range want {
			if pressed(card, event) != on {
				t.Errorf("card %s: %s pressed = %v, want %v", id, event, !on, on)
			}
		}
		if dismissed := strings.HasPrefix(card, `<li class="card dismissed"`); dismissed != (id == st.LastShown[0]) {
			t.Errorf("card %s dismissed = %v", id, dismissed)
		}
	}
}

func TestUIPageForANewUser(t *testing.T) {
	ts, _ := uiServer(t, "")
	resp, page := fetch(t, ts.URL+"/")
	if resp.StatusCode != 200 {
		t.Fatalf("GET / = %d", resp.StatusCode)
	}
	if !strings.Contains(page, `data-user="me"`) {
		t.Errorf("a page without a user is not for the default user me")
	}
	if !regexp.MustCompile(`data-thread="t-[0-9a-f]{12}"`).MatchString(page) {
		t.Errorf("a user without threads does not get a new thread id")
	}
	for _, want := range []string{`id="welcome"`, "No conversations yet", `<label for="composer-input"`, `<label for="user-id"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
}

func TestUIEscapesWhatUsersWrite(t *testing.T) {
	ts, _ := uiServer(t, `<script>alert("x")</script> comedy movies`)
	_, page := fetch(t, ts.URL+"/?user=ana&thread=t1")
	if strings.Contains(page, `<script>alert`) {
		t.Fatalf("a user's message reached the page as markup")
	}
	if !strings.Contains(page, `&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;`) {
		t.Errorf("the message is not shown escaped")
	}
	_, part := fetch(t, ts.URL+"/ui/threads?user=ana")
	if strings.Contains(part, "<script>") {
		t.Errorf("the thread list shows markup from a message: %s", part)
	}
}

func TestUIParts(t *testing.T) {
	ts, _ := uiServer(t, "comedy movies")
	tests := []struct {
		path   string
		status int
		want   string
	}{
		{"/ui/threads?user=ana&thread=t1", 200, `class="thread current"`},
		{"/ui/threads?user=nobody", 200, "No conversations yet"},
		{"/ui/conversation?user=ana&thread=t1", 200, `class="turn turn-agent latest"`},
		{"/ui/conversation?user=ana&thread=t-new", 200, `id="welcome"`},
		{"/ui/conversation?user=ana", 400, "thread is required"},
		{"/ui/threads?user=" + strings.Repeat("x", 200), 400, "user must be at most 128 bytes"},
		{"/?user=%01", 400, "not printable"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			resp, body := fetch(t, ts.URL+tt.path)
			if resp.StatusCode != tt.status || !strings.Contains(body, tt.want) {
				t.Errorf("GET %s = %d, want %d with %q; body:\n%.400s", tt.path, resp.StatusCode, tt.status, tt.want, body)
			}
		})
	}
}

func TestUIStaticAssets(t *testing.T) {
	ts, _ := uiServer(t, "")
	_, page := fetch(t, ts.URL+"/")
	link := regexp.MustCompile(`/static/app\.css\?v=[0-9a-f]+`).FindString(page)
	if link == "" {
		t.Fatal("no stylesheet link")
	}
	resp, css := fetch(t, ts.URL+link)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/css") || !strings.Contains(css, "--accent") {
		t.Fatalf("GET %s = %d %s", link, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if cc := resp.Header.Get("Cache-Control"); !strings.Contains(cc, "immutable") {
		t.Errorf("a hashed asset has Cache-Control %q, want immutable", cc)
	}
	resp, _ = fetch(t, ts.URL+"/static/app.js")
	if cc := resp.Header.Get("Cache-Control"); resp.StatusCode != 200 || cc != "no-cache" || resp.Header.Get("ETag") == "" {
		t.Errorf("an unhashed asset = %d with Cache-Control %q and ETag %q, want revalidation", resp.StatusCode, cc, resp.Header.Get("ETag"))
	}
	if ct := resp.Header.Get("Content-Type"); !strings.Contains(ct, "javascript") {
		t.Errorf("app.js has Content-Type %q", ct)
	}
	resp, body := fetch(t, ts.URL+"/static/nope.js")
	if resp.StatusCode != 404 || !strings.Contains(body, `"ENOTFOUND"`) {
		t.Errorf("GET /static/nope.js = %d %s", resp.StatusCode, body)
	}
	resp, _ = fetch(t, ts.URL+"/favicon.ico")
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Type"), "svg") {
		t.Errorf("GET /favicon.ico = %d %s, want the SVG icon", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	// The API's catch-all still answers JSON under /v1/.
	resp, body = fetch(t, ts.URL+"/v1/nope")
	if resp.StatusCode != 404 || !strings.Contains(body, "no route for") {
		t.Errorf("GET /v1/nope = %d %s", resp.StatusCode, body)
	}
}

func TestUIActivity(t *testing.T) {
	ts, db := uiServer(t, "")
	activity := func() map[string]any {
		t.Helper()
		resp, body := fetch(t, ts.URL+"/ui/activity")
		var out map[string]any
		if err := json.Unmarshal([]byte(body), &out); err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET /ui/activity = %d %s", resp.StatusCode, body)
		}
		return out
	}
	if diff := cmp.Diff(map[string]any{"live": true, "unfinished": 0.0, "latest": 0.0}, activity()); diff != "" {
		t.Errorf("activity of an idle store (-want +got):\n%s", diff)
	}
	// A turn enqueues its summary job (the queue is not started here).
	post(t, ts.URL+"/v1/chat", `{"user":"ana","thread":"t1","message":"comedy movies"}`)
	got := activity()
	if got["unfinished"].(float64) < 1 || got["latest"].(float64) < 1 {
		t.Errorf("activity after a turn = %v, want an unfinished job", got)
	}
	_ = db

	// Without a queue the page is told nothing is live.
	plain := testServer(t, func(s *mhttp.Server) {
		s.Routes = append(s.Routes, mhttp.RegisterUI(mhttp.UI{Threads: db, Messages: db}))
	})
	_, body := fetch(t, plain.URL+"/ui/activity")
	if !strings.Contains(body, `"live":false`) {
		t.Errorf("activity without a queue = %s", body)
	}
}

// failingThreads is a thread service whose store is down.
type failingThreads struct{ memento.ThreadService }

func (failingThreads) Threads(context.Context, memento.Scope) ([]memento.Thread, error) {
	return nil, errors.New("disk on fire")
}

func (failingThreads) ThreadState(context.Context, memento.Scope, string) (*memento.ThreadState, error) {
	return nil, errors.New("disk on fire")
}

func TestUIStoreFailureIsShownNotHidden(t *testing.T) {
	ts := testServer(t, func(s *mhttp.Server) {
		s.Routes = append(s.Routes, mhttp.RegisterUI(mhttp.UI{Threads: failingThreads{}}))
	})
	resp, page := fetch(t, ts.URL+"/")
	if resp.StatusCode != 200 {
		t.Fatalf("GET / = %d", resp.StatusCode)
	}
	if !strings.Contains(page, "Your conversations could not be loaded: Internal error.") {
		t.Errorf("the page does not say the threads failed to load")
	}
	if strings.Contains(page, "disk on fire") {
		t.Errorf("internal detail reached the page")
	}
}

func TestChips(t *testing.T) {
	year := func(y int) *int { return &y }
	ac := memento.ActiveContext{
		Genres: []string{"Comedy", "Drama"}, ExcludedGenres: []string{"Horror"}, TitleType: "tvSeries", MinYear: year(1990), MaxYear: year(1999),
		People: []string{"Al Pacino"}, FreeText: "heist", IsAdult: true, Count: 5, ExcludedTitleIDs: []string{"a"},
	}
	var got []string
	for _, c := range mhttp.Chips(ac) {
		s := c.Field + ":" + c.Value + ":" + c.Label
		if !c.Removable {
			s += " (fixed)"
		}
		got = append(got, s)
	}
	want := []string{
		"genres:Comedy:Comedy", "genres:Drama:Drama", "excludedGenres:Horror:no Horror", "titleType::TV series only", "minYear::from 1990", "maxYear::until 1999",
		"people:Al Pacino:with Al Pacino", "freeText::about “heist”", "isAdult::adult titles", "excludedTitleIds::1 title excluded",
		"count::5 at a time (fixed)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Chips (-want +got):\n%s", diff)
	}
	if got := mhttp.Chips(memento.ActiveContext{}); len(got) != 0 {
		t.Errorf("Chips of an empty context = %v", got)
	}
}

func TestStripTitleList(t *testing.T) {
	reply := "Here are 2 comedies:\n1. Alpha (2012): Comedy\n2. Beta (2014): Comedy\n3. Not shown (2001)\nWant more?"
	tests := []struct {
		titles []string
		want   string
	}{
		{[]string{"Alpha", "Beta"}, "Here are 2 comedies:\n3. Not shown (2001)\nWant more?"},
		{nil, reply},
		{[]string{"Gamma"}, reply},
	}
	for _, tt := range tests {
		if got := mhttp.StripTitleList(reply, tt.titles); got != tt.want {
			t.Errorf("StripTitleList(%v) = %q, want %q", tt.titles, got, tt.want)
		}
	}
}

func TestExcerptAndFirstSentence(t *testing.T) {
	tests := []struct{ in, excerpt, first string }{
		{"short", "short", "short"},
		{"Discover exactly three comedy movies from 2010 onward please", "Discover exactly three…", "Discover exactly three comedy movies from 2010 onward please"},
		{"Heat is a 1995 American crime film. It stars Al Pacino.", "Heat is a 1995 American…", "Heat is a 1995 American crime film."},
		{"Dr. No is a film by Terence Young. More.", "Dr. No is a film by…", "Dr. No is a film by Terence Young."},
	}
	for _, tt := range tests {
		if got := mhttp.Excerpt(tt.in, 24); got != tt.excerpt {
			t.Errorf("Excerpt(%q) = %q, want %q", tt.in, got, tt.excerpt)
		}
		if got := mhttp.FirstSentence(tt.in); got != tt.first {
			t.Errorf("FirstSentence(%q) = %q, want %q", tt.in, got, tt.first)
		}
	}
}
