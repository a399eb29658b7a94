package prefs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/catalog"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/prefs"
	"github.com/memento-ai/memento/sqlite"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

// clock is a memento.Clock tests set and move.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

var day0 = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

// Small catalog for event tests.
var (
	heat = memento.Title{ID: "wiki:Heat", Title: "Heat", Year: 1995, Genres: []string{"Crime", "Thriller"},
		Cast:     []string{"Al Pacino", "Robert De Niro", "Val Kilmer"},
		Overview: "Heat is a 1995 American crime thriller film written and directed by Michael Mann."}
	conjuring = memento.Title{ID: "wiki:The_Conjuring", Title: "The Conjuring", Year: 2013, Genres: []string{"Horror"},
		Cast:     []string{"Vera Farmiga", "Patrick Wilson"},
		Overview: "The Conjuring is a 2013 American supernatural horror film directed by James Wan."}
)

// newService returns a preference service over a fresh store with the
// offline model and embedder, at clk's time.
func newService(t *testing.T, clk *clock) (*prefs.Service, *sqlite.DB) {
	t.Helper()
	db := sqlitetest.Open(t)
	return &prefs.Service{
		Store: db, Messages: db, Model: offline.New(offline.Options{}), Embedder: offline.NewEmbedder(0),
		Catalog: catalog.New([]memento.Title{heat, conjuring}), Clock: clk,
	}, db
}

// startJobs runs the preference jobs of db until the test ends.
func startJobs(t *testing.T, svc *prefs.Service, db *sqlite.DB) {
	t.Helper()
	svc.Register(db, memento.JobOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	if err := db.Start(ctx); err != nil {
		t.Fatalf("start queue: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		_ = db.Stop(context.Background())
	})
}

// say appends user messages to a thread with their preference jobs.
func say(t *testing.T, db *sqlite.DB, s memento.Scope, at time.Time, texts ...string) []memento.Message {
	t.Helper()
	msgs := make([]memento.Message, len(texts))
	for i, text := range texts {
		msgs[i] = memento.Message{Role: memento.RoleUser, Text: text, At: at}
	}
	res, err := db.AppendMessages(context.Background(), s, "t1", msgs, func(m memento.Message) []memento.JobRequest {
		return prefs.MessageJobs(s, "t1", m)
	})
	if err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	return res.Messages
}

// signed is a concept with its sign, as tests expect them.
type signed struct {
	Concept string
	Sign    int
	Kind    string
}

func signsOf(ps []memento.Preference) []signed {
	out := []signed{}
	for _, p := range ps {
		sign := 1
		if p.Weight < 0 {
			sign = -1
		}
		out = append(out, signed{p.Concept, sign, p.Kind})
	}
	slices.SortFunc(out, func(a, b signed) int {
		if a.Concept < b.Concept {
			return -1
		} else if a.Concept > b.Concept {
			return 1
		}
		return 0
	})
	return out
}

func like(c string) signed    { return signed{c, 1, memento.KindTaste} }
func dislike(c string) signed { return signed{c, -1, memento.KindTaste} }
func fact(c string) signed    { return signed{c, 1, memento.KindFact} }

// TestExtractionThroughTheJob sends each sentence as a user message of its
// own user, lets the queue run the preference jobs, and checks the signed
// concepts stored for each.
func TestExtractionThroughTheJob(t *testing.T) {
	tests := []struct {
		text string
		want []signed
	}{
		{"I like strawberries but I don't like very sweet desserts", []signed{like("strawberries"), dislike("very sweet desserts")}},
		{"I love heist films.", []signed{like("heist")}},
		{"I can't stand horror movies.", []signed{dislike("horror")}},
		{"I really enjoy slow-burn thrillers.", []signed{like("slow burn thrillers")}},
		{"I hate jump scares.", []signed{dislike("jump scares")}},
		{"I'm a huge fan of Christopher Nolan.", []signed{like("christopher nolan")}},
		{"I don't mind musicals.", []signed{like("musicals")}},
		{"Westerns are my favourite.", []signed{like("westerns")}},
		{"Romantic comedies are not for me.", []signed{dislike("romantic comedies")}},
		{"I adore animated films and documentaries.", []signed{like("animated"), like("documentaries")}},
		{"I'm not a fan of superhero movies.", []signed{dislike("superhero")}},
		{"I kind of like war films.", []signed{like("war")}},
		{"I detest reality TV.", []signed{dislike("reality tv")}},
		{"I am obsessed with true crime documentaries.", []signed{like("true crime documentaries")}},
		{"I'm not into sci-fi.", []signed{dislike("science fiction")}},
		{"Honestly I love a good courtroom drama.", []signed{like("courtroom drama")}},
		{"I can't get enough of Tom Hanks movies.", []signed{like("tom hanks")}},
		{"I avoid gory films.", []signed{dislike("gory films")}},
		{"I'm tired of remakes.", []signed{dislike("remakes")}},
		{"Spy movies are my thing.", []signed{like("spy")}},
		{"I dislike long movies.", []signed{dislike("long movies")}},
		{"I love spicy food but hate cilantro.", []signed{like("spicy food"), dislike("cilantro")}},
		{"I'm a sucker for happy endings.", []signed{like("happy endings")}},
		{"I don't enjoy slapstick comedy.", []signed{dislike("slapstick comedy")}},
		{"Horror gives me nightmares.", []signed{dislike("horror")}},
		{"I'm passionate about film noir.", []signed{like("film noir")}},
		{"I don't really like musicals.", []signed{dislike("musicals")}},
		{"Sounds good, thanks!", nil},
		{"What's on tonight?", nil},
		{"I live in Lisbon.", []signed{fact("lives in lisbon")}},
		{"I have two kids.", []signed{fact("has two kids")}},
		{"I'm vegetarian.", []signed{fact("is vegetarian")}},
		{"I love Meryl Streep.", []signed{like("meryl streep")}},
		{"I hate sad endings.", []signed{dislike("sad endings")}},
		{"I like martial arts movies.", []signed{like("martial arts")}},
		{"I'm not keen on period dramas.", []signed{dislike("period dramas")}},
		{"I dig space operas.", []signed{like("space operas")}},
		{"I enjoy heist comedies and caper films.", []signed{like("heist comedies"), like("caper films")}},
		{"Disaster movies bore me.", []signed{dislike("disaster")}},
		{"I love dogs but I'm scared of spiders.", []signed{like("dogs"), dislike("spiders")}},
		{"I really like Denis Villeneuve.", []signed{like("denis villeneuve")}},
		{"I can't stand cheesy romance.", []signed{dislike("cheesy romance")}},
		{"I prefer foreign films with subtitles.", []signed{like("foreign films with subtitles")}},
		{"I'm into K-dramas lately.", []signed{like("k dramas")}},
	}
	if len(tests) < 40 {
		t.Fatalf("only %d sentences; the issue asks for at least 40", len(tests))
	}
	clk := &clock{t: day0}
	svc, db := newService(t, clk)
	startJobs(t, svc, db)
	for i, tt := range tests {
		say(t, db, memento.Scope{User: fmt.Sprintf("u%02d", i)}, day0, tt.text)
	}
	sqlitetest.WaitForJobs(t, db, 30*time.Second)
	for i, tt := range tests {
		got, err := svc.Preferences(context.Background(), memento.Scope{User: fmt.Sprintf("u%02d", i)})
		if err != nil {
			t.Fatalf("Preferences: %v", err)
		}
		want := tt.want
		if want == nil {
			want = []signed{}
		}
		slices.SortFunc(want, func(a, b signed) int {
			if a.Concept < b.Concept {
				return -1
			}
			return 1
		})
		if diff := cmp.Diff(want, signsOf(got)); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.text, diff)
		}
		for _, p := range got {
			if p.Evidence != 1 || len(p.Sources) != 1 || p.Embedder != svc.Embedder.ID() || len(p.Vector) != svc.Embedder.Dim() {
				t.Errorf("%q: stored %+v", tt.text, p)
			}
		}
	}
}

// TestSameConceptSameVector checks the point of normalised concepts: a
// like and a dislike of one thing embed the concept alone and so land on
// one memory.
func TestSameConceptSameVector(t *testing.T) {
	clk := &clock{t: day0}
	svc, db := newService(t, clk)
	startJobs(t, svc, db)
	s := memento.Scope{User: "ann"}
	say(t, db, s, day0, "I like horror movies.")
	sqlitetest.WaitForJobs(t, db, 10*time.Second)
	say(t, db, s, day0.Add(time.Hour), "I really love horror.")
	sqlitetest.WaitForJobs(t, db, 10*time.Second)
	got, _ := svc.Preferences(context.Background(), s)
	if len(got) != 1 || got[0].Evidence != 2 || !(got[0].Weight > 1.3 && got[0].Weight < 1.5) {
		t.Fatalf("after two likes: %+v, want one memory of weight 0.7 + 0.9·(1-0.7/3) ≈ 1.39 and evidence 2", got)
	}
	say(t, db, s, day0.Add(2*time.Hour), "I can't stand horror anymore.")
	sqlitetest.WaitForJobs(t, db, 10*time.Second)
	got, _ = svc.Preferences(context.Background(), s)
	if len(got) != 1 || got[0].Evidence != 3 || got[0].Weight != -1 || len(got[0].Sources) != 3 {
		t.Fatalf("after a strong dislike: %+v, want the same memory flipped to -1 with evidence 3", got)
	}
	say(t, db, s, day0.Add(3*time.Hour), "I don't mind horror.")
	sqlitetest.WaitForJobs(t, db, 10*time.Second)
	got, _ = svc.Preferences(context.Background(), s)
	if len(got) != 1 || math.Abs(got[0].Weight-(-1*0.7+0.3)) > 1e-3 {
		t.Errorf("after a mild like: %+v, want weight -0.4 (still a dislike)", got)
	}
}

// TestMessageProcessedTwiceChangesNothing runs a message's job twice.
func TestMessageProcessedTwiceChangesNothing(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: day0}
	svc, db := newService(t, clk)
	s := memento.Scope{User: "ann"}
	msgs := say(t, db, s, day0, "I love heist films but I hate horror.")
	payload, _ := json.Marshal(memento.MessageJob{Tenant: memento.DefaultTenant, User: "ann", Thread: "t1", Message: msgs[0].ID, Seq: msgs[0].Seq})
	if err := svc.HandleMessage(ctx, memento.JobPreferences, payload); err != nil {
		t.Fatalf("HandleMessage: %v", err)
	}
	first, _ := svc.Preferences(ctx, s)
	v1, _ := db.PreferenceVersion(ctx, s)
	clk.Set(day0.Add(24 * time.Hour))
	if err := svc.HandleMessage(ctx, memento.JobPreferences, payload); err != nil {
		t.Fatalf("HandleMessage again: %v", err)
	}
	clk.Set(day0)
	second, _ := svc.Preferences(ctx, s)
	v2, _ := db.PreferenceVersion(ctx, s)
	if diff := cmp.Diff(first, second); diff != "" || v1 != v2 || len(first) != 2 {
		t.Errorf("processing the message again changed the memory (version %+v -> %+v) (-first +second):\n%s", v1, v2, diff)
	}
	// A job without a sequence number finds its message by scanning the
	// thread; a job of a forgotten user is done with.
	payload, _ = json.Marshal(memento.MessageJob{Tenant: memento.DefaultTenant, User: "ann", Thread: "t1", Message: msgs[0].ID})
	if err := svc.HandleMessage(ctx, memento.JobPreferences, payload); err != nil {
		t.Errorf("HandleMessage without seq: %v", err)
	}
	if err := db.DeleteUser(ctx, s); err != nil {
		t.Fatalf("DeleteUser: %v", err)
	}
	if err := svc.HandleMessage(ctx, memento.JobPreferences, payload); err != nil {
		t.Errorf("HandleMessage of a forgotten user: %v, want nil", err)
	}
	if err := svc.HandleMessage(ctx, memento.JobPreferences, []byte("{")); err == nil {
		t.Errorf("HandleMessage of a bad payload: nil error")
	}
}

// TestDecayWithInjectedClock lists memories as time passes.
func TestDecayWithInjectedClock(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: day0}
	svc, _ := newService(t, clk)
	s := memento.Scope{User: "ann"}
	learn := func(id, text string, at time.Time) {
		t.Helper()
		if _, err := svc.LearnMessage(ctx, s, memento.Message{ID: id, Role: memento.RoleUser, Text: text, At: at}); err != nil {
			t.Fatalf("LearnMessage: %v", err)
		}
	}
	learn("m1", "I love westerns.", day0)
	learn("m2", "I live in Lisbon.", day0)
	check := func(when time.Time, want map[string][2]any) {
		t.Helper()
		clk.Set(when)
		got, err := svc.Preferences(ctx, s)
		if err != nil {
			t.Fatalf("Preferences: %v", err)
		}
		have := map[string][2]any{}
		for _, p := range got {
			have[p.Concept] = [2]any{math.Round(p.EffectiveWeight*1000) / 1000, p.Faded}
		}
		if diff := cmp.Diff(want, have); diff != "" {
			t.Errorf("at %s (-want +got):\n%s", when.Format(time.DateOnly), diff)
		}
	}
	check(day0, map[string][2]any{"westerns": {1.0, false}, "lives in lisbon": {1.0, false}})
	check(day0.Add(90*24*time.Hour), map[string][2]any{"westerns": {0.5, false}, "lives in lisbon": {0.945, false}})
	check(day0.Add(365*24*time.Hour), map[string][2]any{"westerns": {0.06, true}, "lives in lisbon": {0.794, false}})
	// Faded, not forgotten: a new statement reinforces the same memory
	// (0.06 + 0.7·(1 - 0.06/3)), and its age restarts.
	later := day0.Add(365 * 24 * time.Hour)
	learn("m3", "I like westerns.", later)
	check(later, map[string][2]any{"westerns": {0.746, false}, "lives in lisbon": {0.794, false}})
	got, _ := svc.Preferences(ctx, s)
	for _, p := range got {
		if p.Concept == "westerns" && (p.Evidence != 2 || !p.LastSeen.Equal(later) || !p.FirstSeen.Equal(day0)) {
			t.Errorf("reinforced westerns = %+v", p)
		}
	}
	live, _ := svc.Live(ctx, s)
	if len(live) != 2 {
		t.Errorf("Live = %+v, want both", live)
	}
	clk.Set(day0.Add(365 * 24 * time.Hour * 2))
	if live, _ := svc.Live(ctx, s); len(live) != 1 || live[0].Concept != "lives in lisbon" {
		t.Errorf("Live two years on = %+v, want the fact only", live)
	}
}

// TestEventsThroughTheJob stores events with their preference jobs.
func TestEventsThroughTheJob(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: day0}
	svc, db := newService(t, clk)
	startJobs(t, svc, db)
	s := memento.Scope{User: "ann"}
	events := []memento.Event{
		{ID: "e1", Type: memento.EventLiked, TitleID: heat.ID, At: day0},
		{ID: "e2", Type: memento.EventDisliked, TitleID: conjuring.ID, At: day0},
		{ID: "e3", Type: memento.EventWatched, TitleID: heat.ID, At: day0},
		{ID: "e4", Type: memento.EventLiked, TitleID: "wiki:Not_in_the_catalog", At: day0},
	}
	if _, err := db.AddEvents(ctx, s, events, func(e memento.Event) []memento.JobRequest { return prefs.EventJobs(s, e) }); err != nil {
		t.Fatalf("AddEvents: %v", err)
	}
	sqlitetest.WaitForJobs(t, db, 10*time.Second)
	failed, _ := db.Jobs(ctx, memento.JobFilter{State: memento.JobFailed})
	if len(failed) > 0 {
		t.Errorf("failed jobs: %+v", failed)
	}
	got, err := svc.Preferences(ctx, s)
	if err != nil {
		t.Fatalf("Preferences: %v", err)
	}
	want := []signed{like("al pacino"), like("crime"), like("crime thriller"), dislike("horror"), dislike("patrick wilson"),
		like("robert de niro"), dislike("supernatural horror"), like("thriller"), like("val kilmer"), dislike("vera farmiga")}
	if diff := cmp.Diff(want, signsOf(got)); diff != "" {
		t.Errorf("preferences from events (-want +got):\n%s", diff)
	}
	for _, p := range got {
		if len(p.Sources) != 1 || (p.Sources[0] != "event:e1" && p.Sources[0] != "event:e2") {
			t.Errorf("%s has sources %v", p.Concept, p.Sources)
		}
	}
}

// TestClustersThroughTheJob lets the debounced clustering job describe a
// user's preferences.
func TestClustersThroughTheJob(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: day0}
	svc, db := newService(t, clk)
	startJobs(t, svc, db)
	s := memento.Scope{User: "ann"}
	say(t, db, s, day0, "I love heist films.", "I like crime thrillers.", "I don't like crime dramas.",
		"I adore romantic comedies.", "I can't stand romance novels.", "I hate cilantro.")
	sqlitetest.WaitForJobs(t, db, 20*time.Second)
	clusters, err := svc.Clusters(ctx, s)
	if err != nil {
		t.Fatalf("Clusters: %v", err)
	}
	type member struct{ Concept, Stance string }
	type view struct {
		Description string
		Strength    string
		Members     []member
	}
	var got []view
	for _, c := range clusters {
		v := view{Description: c.Description, Strength: c.Strength}
		for _, m := range c.Members {
			v.Members = append(v.Members, member{m.Concept, m.Stance})
		}
		got = append(got, v)
		if c.Confidence <= 0 || c.Confidence >= 1 {
			t.Errorf("cluster %s has confidence %v", c.ID, c.Confidence)
		}
	}
	want := []view{
		{Description: "prefers heist and crime thrillers; dislikes crime dramas", Strength: memento.StrengthMixed,
			Members: []member{{"heist", "support"}, {"crime dramas", "oppose"}, {"crime thrillers", "support"}}},
		{Description: "prefers romantic comedies; dislikes romance novels", Strength: memento.StrengthMixed,
			Members: []member{{"romance novels", "oppose"}, {"romantic comedies", "support"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
	// The preferences name their cluster; cilantro is in none.
	list, _ := svc.Preferences(ctx, s)
	for _, p := range list {
		if (p.Cluster == nil) != (p.Concept == "cilantro") {
			t.Errorf("%s is in cluster %v", p.Concept, p.Cluster)
		}
	}
	v, _ := db.PreferenceVersion(ctx, s)
	if v.Clustered != v.Version {
		t.Errorf("clustered version %d, want the latest %d", v.Clustered, v.Version)
	}
	if n := clusteringJobs(t, db); n > 3 {
		t.Errorf("%d clustering jobs for one burst of six messages; the job is not debounced", n)
	}
	// A change reclusters; an unchanged cluster keeps its description.
	say(t, db, s, day0, "I really love heist movies.")
	sqlitetest.WaitForJobs(t, db, 20*time.Second)
	again, _ := svc.Clusters(ctx, s)
	if len(again) != 2 || again[0].Description != clusters[0].Description && again[1].Description != clusters[0].Description {
		t.Errorf("after reinforcing heist: %+v", again)
	}
}

func TestPatchAndDelete(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: day0}
	svc, _ := newService(t, clk)
	s := memento.Scope{User: "ann"}
	if _, err := svc.LearnMessage(ctx, s, memento.Message{ID: "m1", Role: memento.RoleUser, Text: "I love heist films.", At: day0}); err != nil {
		t.Fatalf("LearnMessage: %v", err)
	}
	list, _ := svc.Preferences(ctx, s)
	id := list[0].ID
	clk.Set(day0.Add(90 * 24 * time.Hour))
	w := -2.0
	concept := "  heist   comedies "
	p, err := svc.Patch(ctx, s, id, &concept, &w)
	if err != nil {
		t.Fatalf("Patch: %v", err)
	}
	if p.Concept != "heist comedies" || p.Weight != -2 || p.EffectiveWeight != -2 || p.Faded {
		t.Errorf("patched = %+v", p)
	}
	vs, _ := svc.Embedder.Embed(ctx, []string{"heist comedies"})
	list, _ = svc.Preferences(ctx, s)
	if !cmp.Equal(list[0].Vector, vs[0]) {
		t.Errorf("a new concept was not embedded again")
	}
	for _, bad := range []float64{3.5, math.NaN()} {
		if _, err := svc.Patch(ctx, s, id, nil, &bad); memento.ErrorCode(err) != memento.EINVALID {
			t.Errorf("weight %v: %v, want EINVALID", bad, err)
		}
	}
	blank := " "
	if _, err := svc.Patch(ctx, s, id, &blank, nil); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("blank concept: %v, want EINVALID", err)
	}
	if _, err := svc.Patch(ctx, s, "pref_nope", nil, &w); memento.ErrorCode(err) != memento.ENOTFOUND {
		t.Errorf("unknown id: %v, want ENOTFOUND", err)
	}
	if err := svc.Delete(ctx, s, id); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if list, _ := svc.Preferences(ctx, s); len(list) != 0 {
		t.Errorf("after Delete: %+v", list)
	}
}

// clusteringJobs counts the clustering jobs the store keeps: those in the
// user's backlog and those handed over to River alike.
func clusteringJobs(t *testing.T, db *sqlite.DB) int {
	t.Helper()
	stats, err := db.JobStats(context.Background())
	if err != nil {
		t.Fatalf("JobStats: %v", err)
	}
	for _, k := range stats.Kinds {
		if k.Kind == memento.JobPreferenceClusters {
			return k.Pending + k.Running + k.Retrying + k.Completed + k.Failed
		}
	}
	return 0
}
