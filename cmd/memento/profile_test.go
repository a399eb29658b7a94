package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/agent"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/engine"
	"github.com/memento-ai/memento/internal/logtest"
)

// profileCatalog writes a small catalog for the profile tests and returns
// its path.
func profileCatalog(t *testing.T) string {
	t.Helper()
	mk := func(id, title string, year int, genres []string, cast ...string) memento.Title {
		return memento.Title{ID: id, Title: title, Type: memento.TypeMovie, Year: year, Genres: genres, Cast: cast}
	}
	titles := []memento.Title{
		mk("heat", "Heat", 1995, []string{"Crime", "Thriller"}, "Al Pacino", "Robert De Niro"),
		mk("collateral", "Collateral", 2004, []string{"Crime", "Thriller"}, "Tom Cruise", "Jamie Foxx"),
		mk("insider", "The Insider", 1999, []string{"Drama", "Thriller"}, "Al Pacino", "Russell Crowe"),
		mk("godfather", "The Godfather", 1972, []string{"Crime", "Drama"}, "Marlon Brando", "Al Pacino"),
		mk("casino", "Casino", 1995, []string{"Crime", "Drama"}, "Robert De Niro", "Sharon Stone"),
		mk("thief", "Thief", 1981, []string{"Crime", "Thriller"}, "James Caan"),
		mk("ronin", "Ronin", 1998, []string{"Action", "Thriller"}, "Robert De Niro", "Jean Reno"),
		mk("conjuring", "The Conjuring", 2013, []string{"Horror"}, "Vera Farmiga"),
		mk("insidious", "Insidious", 2010, []string{"Horror"}, "Patrick Wilson"),
		mk("notebook", "The Notebook", 2004, []string{"Romance", "Drama"}, "Ryan Gosling"),
		mk("love", "Love Actually", 2003, []string{"Romance", "Comedy"}, "Hugh Grant"),
		mk("hangover", "The Hangover", 2009, []string{"Comedy"}, "Bradley Cooper"),
		mk("up", "Up", 2009, []string{"Animated", "Family"}, "Ed Asner"),
		mk("drive", "Drive", 2011, []string{"Crime", "Drama"}, "Ryan Gosling"),
	}
	var b bytes.Buffer
	if err := catalog.WriteJSONL(&b, titles); err != nil {
		t.Fatal(err)
	}
	return writeFile(t, "catalog.jsonl", b.String())
}

// crowdLines are JSON lines of events: a crowd whose likes link Heat to
// Collateral and Thief, and ann, who liked Heat, rated The Godfather and
// hated The Conjuring.
func crowdLines() string {
	var b strings.Builder
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	add := func(user, typ, title string, value ...float64) {
		at = at.Add(time.Minute)
		line := map[string]any{"user": user, "id": fmt.Sprintf("%s-%s-%s", user, typ, title), "type": typ, "title": title, "at": at}
		if len(value) > 0 {
			line["value"] = value[0]
		}
		json.NewEncoder(&b).Encode(line)
	}
	for i := range 4 {
		u := fmt.Sprintf("crowd%d", i)
		add(u, "liked", "heat")
		add(u, "liked", "collateral")
		add(u, "liked", "thief")
		if i%2 == 0 {
			add(u, "liked", "drive")
		}
	}
	add("crowd9", "liked", "notebook")
	add("crowd9", "liked", "love")
	add("ann", "liked", "heat")
	add("ann", "rated", "godfather", 5)
	add("ann", "disliked", "conjuring")
	add("ann", "watchlisted", "up")
	return b.String()
}

func TestEventsImportAndProfileShow(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	cat := profileCatalog(t)
	events := writeFile(t, "events.jsonl", crowdLines())
	out, err := run(t, "", "events", "import", events, "--db", db, "--catalog", cat, "--json")
	if err != nil {
		t.Fatalf("events import: %v", err)
	}
	var res map[string]int
	if err := json.Unmarshal([]byte(out), &res); err != nil || res["inserted"] != 20 || res["users"] != 6 || res["lines"] != 20 {
		t.Errorf("events import printed %s", out)
	}
	out, err = run(t, "", "events", "import", events, "--db", db, "--catalog", cat, "--json")
	if err != nil || !strings.Contains(out, `"duplicates":20`) {
		t.Errorf("a second import = %s, %v; want every event a duplicate", out, err)
	}

	out, err = run(t, "", "profile", "show", "--user", "ann", "--db", db, "--catalog", cat, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var p memento.Profile
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("profile show printed %s", out)
	}
	if got := string(p.Keys["seen"].Value); got != `["heat","godfather","conjuring"]` {
		t.Errorf("seen = %s", got)
	}
	if got := string(p.Keys["watchlist"].Value); got != `["up"]` {
		t.Errorf("watchlist = %s", got)
	}
	if got := string(p.Keys["dislikedGenres"].Value); got != `[{"genre":"Horror","weight":1}]` {
		t.Errorf("dislikedGenres = %s", got)
	}
	out, err = run(t, "", "profile", "show", "--user", "ann", "--db", db, "--catalog", cat)
	if err != nil || !strings.Contains(out, "preferredGenres") || !strings.Contains(out, "learned") {
		t.Errorf("profile show = %s, %v", out, err)
	}

	bad := writeFile(t, "bad.jsonl", `{"user":"ann","type":"liked","title":"heat"}`+"\n"+`{"user":"ann","type":"liked","title":"wiki:Nope"}`+"\n")
	_, err = run(t, "", "events", "import", bad, "--db", db, "--catalog", cat)
	if err == nil || message(err) != `events import: line 2: title "wiki:Nope" is not in the catalog` {
		t.Errorf("import of an unknown title: %v", err)
	}
	noUser := writeFile(t, "nouser.jsonl", `{"type":"liked","title":"heat"}`+"\n")
	if _, err = run(t, "", "events", "import", noUser, "--db", db, "--catalog", cat); err == nil || !strings.Contains(message(err), "line 1: user is required") {
		t.Errorf("import without a user: %v", err)
	}
}

func TestEvalMovieLensSmall(t *testing.T) {
	dir := t.TempDir()
	var movies, ratings strings.Builder
	movies.WriteString("movieId,title,genres\n")
	for i := 1; i <= 30; i++ {
		g := []string{"Comedy", "Drama", "Horror"}[i%3]
		fmt.Fprintf(&movies, "%d,Film %d (%d),%s\n", i, i, 1990+i, g)
	}
	ratings.WriteString("userId,movieId,rating,timestamp\n")
	for u := 1; u <= 12; u++ {
		for k := range 10 {
			m := 1 + (u*3+k*(1+u%3))%30
			fmt.Fprintf(&ratings, "%d,%d,%.1f,%d\n", u, m, float64(2+(u+k)%4), 1000000+u*100+k)
		}
	}
	os.WriteFile(filepath.Join(dir, "movies.csv"), []byte(movies.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "ratings.csv"), []byte(ratings.String()), 0o644)
	out, err := run(t, "", "eval", "movielens", "--data", dir, "--users", "1-10", "--k", "5", "--json")
	if err != nil {
		t.Fatalf("eval movielens: %v", err)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("eval printed %s", out)
	}
	for _, k := range []string{"users", "k", "hit", "ndcg", "baselines", "seconds"} {
		if _, ok := res[k]; !ok {
			t.Errorf("no %q in %s", k, out)
		}
	}
	if res["k"] != 5.0 || res["baselines"].(map[string]any)["popularity"] == nil {
		t.Errorf("eval printed %s", out)
	}
	if _, err := run(t, "", "eval", "movielens", "--data", dir, "--users", "9-2"); err == nil || !strings.Contains(message(err), "--users") {
		t.Errorf("a backwards range: %v", err)
	}
}

// served is a `memento serve` running in-process.
type served struct {
	m      *Main
	stderr *logtest.Buffer
}

// serveWith starts `memento serve` with the environment env and extra
// arguments, and closes it when the test ends (unless closed before).
func serveWith(t *testing.T, env map[string]string, args ...string) (*served, error) {
	t.Helper()
	m := NewMain()
	errOut := &logtest.Buffer{}
	m.Stdout, m.Stderr = io.Discard, errOut
	m.Getenv = func(k string) string { return env[k] }
	ctx := context.Background()
	err := m.ParseFlags(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...))
	if err == nil {
		err = m.Run(ctx)
	}
	if err != nil {
		m.Close(ctx)
		return nil, err
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	return &served{m: m, stderr: errOut}, nil
}

// do sends a JSON request to the server and decodes the answer.
func (s *served) do(t *testing.T, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, s.m.URL()+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return resp.StatusCode, out
}

// postEvents posts the crowd's events through the API, user by user.
func (s *served) postEvents(t *testing.T) {
	t.Helper()
	byUser := map[string][]string{}
	var order []string
	for _, line := range strings.Split(strings.TrimSpace(crowdLines()), "\n") {
		var e map[string]any
		json.Unmarshal([]byte(line), &e)
		u := e["user"].(string)
		delete(e, "user")
		b, _ := json.Marshal(e)
		if _, ok := byUser[u]; !ok {
			order = append(order, u)
		}
		byUser[u] = append(byUser[u], string(b))
	}
	for _, u := range order {
		code, body := s.do(t, "POST", "/v1/users/"+u+"/events", "["+strings.Join(byUser[u], ",")+"]")
		if code != 202 {
			t.Fatalf("POST events of %s = %d %v", u, code, body)
		}
	}
}

// ranking ranks the whole catalog for a user with the profile's scorer,
// as the agent does, and returns the ids with the reasons of the first.
func ranking(t *testing.T, app *engine.Engine, user string) ([]string, []string) {
	t.Helper()
	ctx := context.Background()
	sc, err := app.ProfileScorer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := app.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ranked, err := agent.Rank(ctx, app.Scope(user), memento.NewActiveContext(), cat.All(), []agent.Scorer{sc})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range ranked {
		ids = append(ids, r.Title.ID)
	}
	if len(ranked) == 0 {
		return ids, nil
	}
	return ids, ranked[0].Why
}
