package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/sqlite"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

const tenant = memento.DefaultTenant

// testCatalog has 30 comedies (2000-2029, half of them series), a few
// horror films and one drama with Tom Hanks.
func testCatalog() *catalog.Index {
	var titles []memento.Title
	for i := 0; i < 30; i++ {
		typ := memento.TypeMovie
		if i%2 == 1 {
			typ = memento.TypeTVSeries
		}
		titles = append(titles, memento.Title{
			ID: fmt.Sprintf("c%02d", i), Title: fmt.Sprintf("Comedy %02d", i), Type: typ, Year: 2000 + i,
			Genres: []string{"Comedy"}, Overview: "A funny story. It goes on.",
		})
	}
	for i := 0; i < 4; i++ {
		titles = append(titles, memento.Title{ID: fmt.Sprintf("h%d", i), Title: fmt.Sprintf("Horror %d", i), Type: memento.TypeMovie, Year: 1980 + i, Genres: []string{"Horror"}})
	}
	titles = append(titles, memento.Title{ID: "d1", Title: "Big Drama", Type: memento.TypeMovie, Year: 1994, Genres: []string{"Drama"}, Cast: []string{"Tom Hanks"}})
	return catalog.New(titles)
}

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

func newAgent(t testing.TB, db *sqlite.DB, cat memento.Catalog, people offline.PersonLookup) *agent.Agent {
	t.Helper()
	now := func() time.Time { return time.Date(2030, 6, 1, 0, 0, 0, 0, time.UTC) }
	return &agent.Agent{
		Catalog: cat,
		Threads: db,
		Model:   offline.New(offline.Options{People: people, Now: now}),
		Clock:   fixedClock{now()},
	}
}

func turn(t *testing.T, a *agent.Agent, thread, msg string) *agent.Response {
	t.Helper()
	resp, err := a.Turn(context.Background(), tenant, agent.Request{User: "u1", Thread: thread, Message: msg})
	if err != nil {
		t.Fatalf("Turn(%q): %v", msg, err)
	}
	return resp
}

func ids(r *agent.Response) []string {
	out := make([]string, len(r.Titles))
	for i, t := range r.Titles {
		out[i] = t.ID
	}
	return out
}

func TestFollowUpScenario(t *testing.T) {
	cat := testCatalog()
	a := newAgent(t, sqlitetest.Open(t), cat, cat)

	r1 := turn(t, a, "t", "Discover exactly 3 comedy movies from 2010 onward.")
	if !r1.Searched || len(r1.Titles) != 3 {
		t.Fatalf("turn 1: searched=%v titles=%v notes=%v", r1.Searched, ids(r1), r1.Notes)
	}
	for _, ti := range r1.Titles {
		if ti.Year < 2010 || ti.Type != memento.TypeMovie || !slices.Contains(ti.Genres, "Comedy") {
			t.Errorf("turn 1 title %+v breaks the constraints", ti)
		}
	}
	ac := r1.ActiveContext
	if !slices.Equal(ac.Genres, []string{"Comedy"}) || ac.TitleType != memento.TypeMovie || ac.MinYear == nil || *ac.MinYear != 2010 || ac.Count != 3 {
		t.Fatalf("turn 1 context = %+v", ac)
	}

	r2 := turn(t, a, "t", "I didn't like them, please discover different ones.")
	if len(r2.Titles) != 3 {
		t.Fatalf("turn 2 titles = %v, notes %v", ids(r2), r2.Notes)
	}
	for _, id := range ids(r2) {
		if slices.Contains(ids(r1), id) {
			t.Errorf("turn 2 repeats %s from turn 1", id)
		}
	}
	if got := r2.ActiveContext.ExcludedTitleIDs; !slices.Equal(got, ids(r1)) {
		t.Errorf("turn 2 exclusions = %v, want %v", got, ids(r1))
	}
	if !slices.Equal(r2.ActiveContext.Genres, []string{"Comedy"}) || *r2.ActiveContext.MinYear != 2010 {
		t.Errorf("turn 2 lost constraints: %+v", r2.ActiveContext)
	}

	r3 := turn(t, a, "t", "Movie only.")
	if r3.ActiveContext.TitleType != memento.TypeMovie || !slices.Equal(r3.ActiveContext.Genres, []string{"Comedy"}) || *r3.ActiveContext.MinYear != 2010 {
		t.Errorf("turn 3 context = %+v", r3.ActiveContext)
	}
	for _, id := range ids(r3) {
		if slices.Contains(ids(r1), id) {
			t.Errorf("turn 3 shows excluded %s", id)
		}
	}

	r4 := turn(t, a, "t", "Make it older.")
	if len(r4.Titles) == 0 {
		t.Fatalf("turn 4 found nothing: %v", r4.Notes)
	}
	oldest := 3000
	for _, ti := range r3.Titles {
		oldest = min(oldest, ti.Year)
	}
	for _, ti := range r4.Titles {
		if ti.Year >= oldest {
			t.Errorf("turn 4 title %s (%d) is not older than turn 3's oldest (%d)", ti.ID, ti.Year, oldest)
		}
	}
	for _, r := range []*agent.Response{r1, r2, r3, r4} {
		for _, ti := range r.Titles {
			if !strings.Contains(r.Reply, ti.Title) {
				t.Errorf("reply %q does not name shown title %q", r.Reply, ti.Title)
			}
		}
	}
}

func TestRejectionsNeverRepeat(t *testing.T) {
	cat := testCatalog()
	a := newAgent(t, sqlitetest.Open(t), cat, cat)
	seen := map[string]bool{}
	r := turn(t, a, "t", "Show me 3 comedy movies from 2015 onward.")
	for round := 0; ; round++ {
		for _, id := range ids(r) {
			if seen[id] {
				t.Fatalf("round %d shows %s again", round, id)
			}
			seen[id] = true
		}
		if round == 5 {
			break
		}
		r = turn(t, a, "t", "Not those, different ones.")
	}
	// 2015-2029 movies are the 7 even years 2016..2028: the catalog runs
	// out and the newest turn says so instead of reusing old titles.
	if len(seen) != 7 {
		t.Errorf("saw %d distinct titles, want all 7 matching", len(seen))
	}
	if len(r.Titles) != 0 || len(r.Notes) == 0 {
		t.Errorf("exhausted search: titles %v notes %v, want none and a note", ids(r), r.Notes)
	}
}

func TestEmptySearchAfterSuccess(t *testing.T) {
	cat := testCatalog()
	a := newAgent(t, sqlitetest.Open(t), cat, cat)
	r1 := turn(t, a, "t", "3 comedies please")
	if len(r1.Titles) == 0 {
		t.Fatalf("first turn found nothing: %v", r1.Notes)
	}
	r2 := turn(t, a, "t", "Horror movies from the 90s")
	if len(r2.Titles) != 0 {
		t.Errorf("empty search shows %v", ids(r2))
	}
	if !r2.Searched || !slices.ContainsFunc(r2.Notes, func(n string) bool { return strings.Contains(strings.ToLower(n), "no titles") }) {
		t.Errorf("empty search: searched=%v notes=%v", r2.Searched, r2.Notes)
	}
	for _, ti := range r1.Titles {
		if strings.Contains(r2.Reply, ti.Title) {
			t.Errorf("reply to the empty search names an earlier title: %q", r2.Reply)
		}
	}
}

// failingCatalog fails every search, as a broken backend would.
type failingCatalog struct{ memento.Catalog }

func (failingCatalog) Search(context.Context, memento.TitleQuery) (*memento.TitlePage, error) {
	return nil, errors.New("disk on fire")
}

func TestFailedSearch(t *testing.T) {
	cat := testCatalog()
	db := sqlitetest.Open(t)
	good := newAgent(t, db, cat, cat)
	r1 := turn(t, good, "t", "3 comedies please")
	if len(r1.Titles) == 0 {
		t.Fatal("first turn found nothing")
	}
	bad := newAgent(t, db, failingCatalog{cat}, cat)
	r2 := turn(t, bad, "t", "Not those.")
	if len(r2.Titles) != 0 || !r2.Searched {
		t.Errorf("failed search: titles %v searched %v", ids(r2), r2.Searched)
	}
	if len(r2.Notes) == 0 || !strings.Contains(r2.Notes[0], "failed") {
		t.Errorf("failed search notes = %v, want a failure note", r2.Notes)
	}
	if strings.Contains(r2.Notes[0], "disk on fire") {
		t.Errorf("internal error detail leaked to the user: %q", r2.Notes[0])
	}
	for _, ti := range r1.Titles {
		if strings.Contains(r2.Reply, ti.Title) {
			t.Errorf("reply after a failed search names an earlier title: %q", r2.Reply)
		}
	}
}

func TestNoSearchTurn(t *testing.T) {
	cat := testCatalog()
	a := newAgent(t, sqlitetest.Open(t), cat, cat)
	for _, msg := range []string{"how does this work?", "thanks"} {
		r := turn(t, a, "t", msg)
		if r.Searched || len(r.Titles) != 0 || len(r.Notes) != 0 {
			t.Errorf("%q: searched=%v titles=%v notes=%v, want no search, no titles, no notes", msg, r.Searched, ids(r), r.Notes)
		}
		if r.Reply == "" {
			t.Errorf("%q: empty reply", msg)
		}
	}
}

func TestFewerThanAsked(t *testing.T) {
	cat := testCatalog()
	a := newAgent(t, sqlitetest.Open(t), cat, cat)
	r := turn(t, a, "t", "exactly 5 horror movies")
	if len(r.Titles) != 4 {
		t.Fatalf("titles = %v, want the 4 horror films", ids(r))
	}
	if len(r.Notes) == 0 || !strings.Contains(r.Notes[0], "4") || !strings.Contains(r.Notes[0], "5") {
		t.Errorf("notes = %v, want a note that only 4 of 5 were found", r.Notes)
	}
}

func TestRestartBetweenTurns(t *testing.T) {
	cat := testCatalog()
	path := filepath.Join(t.TempDir(), "m.db")
	db1, err := sqlite.Open(context.Background(), path, sqlitetest.Options())
	if err != nil {
		t.Fatal(err)
	}
	r1 := turn(t, newAgent(t, db1, cat, cat), "t", "Discover exactly 3 comedy movies from 2010 onward.")
	if err := db1.Close(); err != nil {
		t.Fatal(err)
	}
	db2 := sqlitetest.OpenPath(t, path, sqlitetest.Options())
	r2 := turn(t, newAgent(t, db2, cat, cat), "t", "Not those.")
	if !slices.Equal(r2.ActiveContext.ExcludedTitleIDs, ids(r1)) {
		t.Errorf("after restart exclusions = %v, want %v", r2.ActiveContext.ExcludedTitleIDs, ids(r1))
	}
	if !slices.Equal(r2.ActiveContext.Genres, []string{"Comedy"}) || r2.ActiveContext.MinYear == nil || *r2.ActiveContext.MinYear != 2010 {
		t.Errorf("after restart context = %+v", r2.ActiveContext)
	}
}

func TestResponseJSONShape(t *testing.T) {
	cat := testCatalog()
	a := newAgent(t, sqlitetest.Open(t), cat, cat)
	r := turn(t, a, "t", "hello")
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"user", "thread", "reply", "titles", "activeContext", "notes", "searched", "memory"} {
		if _, ok := got[k]; !ok {
			t.Errorf("response JSON lacks %q: %s", k, b)
		}
	}
	ac := got["activeContext"].(map[string]any)
	for _, k := range []string{"genres", "titleType", "minYear", "maxYear", "people", "freeText", "isAdult", "count", "excludedTitleIds"} {
		if _, ok := ac[k]; !ok {
			t.Errorf("activeContext JSON lacks %q: %s", k, b)
		}
	}
	if got["titles"] == nil || got["notes"] == nil {
		t.Errorf("titles and notes must be [] not null: %s", b)
	}
}

func TestInvalidRequest(t *testing.T) {
	cat := testCatalog()
	a := newAgent(t, sqlitetest.Open(t), cat, cat)
	for _, req := range []agent.Request{{Thread: "t", Message: "hi"}, {User: "u", Message: "hi"}, {User: "u", Thread: "t", Message: "  "}} {
		if _, err := a.Turn(context.Background(), tenant, req); memento.ErrorCode(err) != memento.EINVALID {
			t.Errorf("Turn(%+v) error = %v, want EINVALID", req, err)
		}
	}
}

func TestUngroundedReplyFallsBack(t *testing.T) {
	cat := testCatalog()
	db := sqlitetest.Open(t)
	a := newAgent(t, db, cat, cat)
	r1 := turn(t, a, "t", "3 comedy movies")
	if len(r1.Titles) == 0 || r1.Titles[0].Title != "Comedy 28" {
		t.Fatalf("first turn = %v", ids(r1))
	}
	model := a.Model.(*offline.Model)
	a.Fallback = model
	// After the rejection Comedy 28 is excluded: a model's reply naming it
	// must not reach the user.
	a.Model = struct {
		memento.RequestUnderstander
		memento.ReplyWriter
	}{model, fixedReply("Comedy 28 is still my favourite.")}
	r2 := turn(t, a, "t", "not those")
	if strings.Contains(r2.Reply, "Comedy 28") {
		t.Errorf("reply names an excluded title: %q", r2.Reply)
	}
	for _, ti := range r2.Titles {
		if !strings.Contains(r2.Reply, ti.Title) {
			t.Errorf("fallback reply %q does not name %q", r2.Reply, ti.Title)
		}
	}
}

type fixedReply string

func (f fixedReply) WriteReply(context.Context, memento.ReplyInput) (string, error) {
	return string(f), nil
}

// TestUnreadMessageKeepsTheRequest: a message the model cannot read, in a
// thread with a request in force, is read as a follow-up that changes
// nothing. The answer shows other titles for the same constraints and
// says so, instead of asking the user to start over with no titles while
// the catalog has more. Small talk keeps its own answer, and with nothing
// in force the agent still asks.
func TestUnreadMessageKeepsTheRequest(t *testing.T) {
	cat := testCatalog()
	for i, msg := range []string{"My bad!", "whoops, typo on my end", "oh well whatever", "zzzz qqq"} {
		t.Run(msg, func(t *testing.T) {
			a := newAgent(t, sqlitetest.Open(t), cat, cat)
			thread := fmt.Sprintf("t%d", i)
			r1 := turn(t, a, thread, "3 comedy movies from 2010 onward")
			if len(r1.Titles) != 3 {
				t.Fatalf("turn 1 titles = %v, notes %v", ids(r1), r1.Notes)
			}
			r2 := turn(t, a, thread, msg)
			if !r2.Searched || len(r2.Titles) == 0 {
				t.Fatalf("%q after a request: searched=%v titles=%v notes=%v reply=%q, want other titles for the request",
					msg, r2.Searched, ids(r2), r2.Notes, r2.Reply)
			}
			for _, id := range ids(r2) {
				if slices.Contains(ids(r1), id) {
					t.Errorf("%q repeats %s while the catalog has fresh titles", msg, id)
				}
			}
			for _, ti := range r2.Titles {
				if ti.Year < 2010 || ti.Type != memento.TypeMovie || !slices.Contains(ti.Genres, "Comedy") {
					t.Errorf("%q shows %+v, outside the request in force", msg, ti)
				}
			}
			ac := r2.ActiveContext
			if !slices.Equal(ac.Genres, []string{"Comedy"}) || ac.TitleType != memento.TypeMovie || ac.MinYear == nil || *ac.MinYear != 2010 {
				t.Errorf("%q changed the context to %+v", msg, ac)
			}
			if !slices.ContainsFunc(r2.Notes, func(n string) bool { return strings.Contains(n, "comedy movies from 2010 on") }) {
				t.Errorf("%q notes = %v, want one that says the request was kept", msg, r2.Notes)
			}

			fresh := turn(t, a, thread+"-fresh", msg)
			if fresh.Searched || len(fresh.Titles) != 0 {
				t.Errorf("%q with nothing in force: searched=%v titles=%v, want a request to rephrase", msg, fresh.Searched, ids(fresh))
			}
		})
	}
	a := newAgent(t, sqlitetest.Open(t), cat, cat)
	turn(t, a, "thanks", "3 comedy movies")
	if r := turn(t, a, "thanks", "thanks"); r.Searched || len(r.Titles) != 0 {
		t.Errorf("thanks after a request: searched=%v titles=%v, want small talk", r.Searched, ids(r))
	}
}
