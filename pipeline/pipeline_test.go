package pipeline_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/llm/llmtest"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/llm/openai"
	"github.com/memento-ai/memento/pipeline"
	"github.com/memento-ai/memento/sqlite"
	"github.com/memento-ai/memento/sqlite/sqlitetest"
)

var t0 = time.Date(2025, 5, 1, 20, 0, 0, 0, time.UTC)

// counting wraps a model and counts its calls per task.
type counting struct {
	pipeline.Model
	mu    sync.Mutex
	calls map[string]int
	// fail, when set, fails the named task once.
	fail string
}

func (c *counting) count(task string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[task]++
	if c.fail == task {
		c.fail = ""
		return memento.Errorf(memento.EUNAVAILABLE, "the model server is down (scripted)")
	}
	return nil
}

func (c *counting) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.calls {
		n += v
	}
	return n
}

func (c *counting) WorthRemembering(ctx context.Context, msg string, schema []memento.AttributeSpec) (*memento.Verdict, error) {
	if err := c.count("sentinel"); err != nil {
		return nil, err
	}
	return c.Model.WorthRemembering(ctx, msg, schema)
}

func (c *counting) ExtractFacts(ctx context.Context, in memento.ExtractInput) ([]memento.Fact, error) {
	if err := c.count("extract"); err != nil {
		return nil, err
	}
	return c.Model.ExtractFacts(ctx, in)
}

func (c *counting) ReviewExtraction(ctx context.Context, msg string, facts []memento.Fact) (*memento.Verdict, error) {
	if err := c.count("review_extraction"); err != nil {
		return nil, err
	}
	return c.Model.ReviewExtraction(ctx, msg, facts)
}

func (c *counting) AssignAttributes(ctx context.Context, facts []memento.Fact, schema []memento.AttributeSpec) ([]memento.AttributedFact, error) {
	if err := c.count("attribute"); err != nil {
		return nil, err
	}
	return c.Model.AssignAttributes(ctx, facts, schema)
}

func (c *counting) MergeFact(ctx context.Context, in memento.MergeInput) (string, error) {
	if err := c.count("merge"); err != nil {
		return "", err
	}
	return c.Model.MergeFact(ctx, in)
}

func (c *counting) ReviewMerge(ctx context.Context, in memento.MergeInput, merged string) (*memento.Verdict, error) {
	if err := c.count("review_merge"); err != nil {
		return nil, err
	}
	return c.Model.ReviewMerge(ctx, in, merged)
}

// fixture is a store, a counted offline model and a pipeline over them.
type fixture struct {
	db    *sqlite.DB
	model *counting
	p     *pipeline.Pipeline
	s     memento.Scope
	n     int
}

func newFixture(t *testing.T, opts pipeline.Options) *fixture {
	t.Helper()
	db := sqlitetest.Open(t)
	model := &counting{Model: offline.New(offline.Options{})}
	if opts.Embedder == nil {
		opts.Embedder = offline.NewEmbedder(64)
	}
	p, err := pipeline.New(model, db, opts)
	if err != nil {
		t.Fatalf("pipeline.New: %v", err)
	}
	return &fixture{db: db, model: model, p: p, s: memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}}
}

// say stores a user message and returns it; messages are an hour apart.
func (f *fixture) say(t *testing.T, text string) memento.Message {
	t.Helper()
	f.n++
	id := "m" + string(rune('0'+f.n/10)) + string(rune('0'+f.n%10))
	res, err := f.db.AppendMessages(context.Background(), f.s, "t1",
		[]memento.Message{{ID: id, Role: memento.RoleUser, Text: text, At: t0.Add(time.Duration(f.n) * time.Hour)}}, nil)
	if err != nil {
		t.Fatalf("AppendMessages: %v", err)
	}
	return res.Messages[0]
}

// process runs the pipeline over a stored message and fails on error.
func (f *fixture) process(t *testing.T, msg memento.Message) *memento.MemoryRun {
	t.Helper()
	run, err := f.p.Process(context.Background(), f.s, msg.ID)
	if err != nil {
		t.Fatalf("Process(%q): %v", msg.Text, err)
	}
	return run
}

// current returns the current memories as attribute -> values.
func (f *fixture) current(t *testing.T) map[string][]string {
	t.Helper()
	mems, err := f.db.Memories(context.Background(), f.s, memento.MemoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, m := range mems {
		out[m.Attribute] = append(out[m.Attribute], m.Value)
	}
	return out
}

const netflix = "I love sci-fi but can't stand horror, and I watch everything on Netflix"

func TestLikesDislikesPlatform(t *testing.T) {
	t.Parallel()
	f := newFixture(t, pipeline.Options{})
	msg := f.say(t, netflix)
	run := f.process(t, msg)
	if run.Outcome != memento.RunStored || len(run.Memories) != 3 {
		t.Fatalf("run = %+v; want stored with 3 memories", run)
	}
	want := map[string][]string{
		"GENRE":    {"loves science fiction"},
		"DISLIKES": {"can't stand horror"},
		"PLATFORM": {"watches everything on Netflix"},
	}
	if diff := cmp.Diff(want, f.current(t)); diff != "" {
		t.Errorf("memories (-want +got):\n%s", diff)
	}
	mems, _ := f.db.Memories(context.Background(), f.s, memento.MemoryFilter{})
	for _, m := range mems {
		if diff := cmp.Diff([]string{msg.ID}, m.Sources); diff != "" || m.RunID != msg.ID || !m.ValidFrom.Equal(msg.At) || m.Mode != memento.ModeSemantic {
			t.Errorf("memory %s = %+v; want sources [%s], run %s, validFrom %v, semantic", m.ID, m, msg.ID, msg.ID, msg.At)
		}
	}
	var nodes []string
	for _, st := range run.Steps {
		nodes = append(nodes, st.Node)
	}
	wantNodes := []string{"hygiene", "sentinel", "extract", "review_extraction", "attribute", "aggregate", "review_merge", "store"}
	if diff := cmp.Diff(wantNodes, nodes); diff != "" {
		t.Errorf("trace nodes (-want +got):\n%s", diff)
	}
}

func TestComingAroundSupersedesInSemanticMode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, pipeline.Options{})
	first := f.say(t, netflix)
	f.process(t, first)
	before, _ := f.db.Memories(ctx, f.s, memento.MemoryFilter{Attribute: "DISLIKES"})
	later := f.say(t, "actually I've come around on horror")
	run := f.process(t, later)
	if run.Outcome != memento.RunStored {
		t.Fatalf("run = %+v", run)
	}
	want := map[string][]string{
		"GENRE":    {"loves science fiction; has come around on horror"},
		"PLATFORM": {"watches everything on Netflix"},
	}
	if diff := cmp.Diff(want, f.current(t)); diff != "" {
		t.Errorf("current memories (-want +got):\n%s", diff)
	}
	// The superseded values are kept, closed at the later message's time.
	for _, attr := range []string{"GENRE", "DISLIKES"} {
		all, err := f.db.Memories(ctx, f.s, memento.MemoryFilter{Attribute: attr, All: true})
		if err != nil {
			t.Fatal(err)
		}
		var closed []memento.Memory
		for _, m := range all {
			if m.ValidTo != nil {
				closed = append(closed, m)
			}
		}
		if len(closed) != 1 || !closed[0].ValidTo.Equal(later.At) {
			t.Errorf("%s: closed versions = %+v; want one, valid to %v", attr, closed, later.At)
		}
	}
	hist, err := f.db.MemoryHistory(ctx, f.s, before[0].ID)
	if err != nil || len(hist) != 1 || hist[0].Value != "can't stand horror" || hist[0].ValidTo == nil {
		t.Errorf("history of the dislike = %+v, %v", hist, err)
	}
	genre, _ := f.db.Memories(ctx, f.s, memento.MemoryFilter{Attribute: "GENRE"})
	if diff := cmp.Diff([]string{first.ID, later.ID}, genre[0].Sources); diff != "" {
		t.Errorf("sources of the merged value (-want +got):\n%s", diff)
	}
	if len(run.Superseded) != 2 {
		t.Errorf("run superseded %v; want the GENRE and DISLIKES values", run.Superseded)
	}
}

func TestComingAroundAppendsInEpisodicMode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, pipeline.Options{})
	if err := f.db.SetMemoryMode(ctx, f.s, "*", memento.ModeEpisodic); err != nil {
		t.Fatal(err)
	}
	first := f.say(t, netflix)
	f.process(t, first)
	later := f.say(t, "actually I've come around on horror")
	f.process(t, later)

	all, err := f.db.Memories(ctx, f.s, memento.MemoryFilter{All: true})
	if err != nil {
		t.Fatal(err)
	}
	type ep struct{ Attr, Value, Kind string }
	var got []ep
	for _, m := range all {
		if m.ValidTo != nil || m.Mode != memento.ModeEpisodic {
			t.Errorf("episodic memory %+v is closed or not episodic", m)
		}
		got = append(got, ep{m.Attribute, m.Value, m.Kind})
	}
	want := []ep{
		{"DISLIKES", "can't stand horror", "episode"},
		{"GENRE", "loves science fiction", "episode"},
		{"GENRE", "has come around on horror", "episode"},
		{"PLATFORM", "watches everything on Netflix", "episode"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("episodes (-want +got):\n%s", diff)
	}
	eps, _ := f.db.Memories(ctx, f.s, memento.MemoryFilter{Attribute: "GENRE"})
	if !eps[1].ValidFrom.Equal(later.At) {
		t.Errorf("the later episode is valid from %v; want its message's time %v", eps[1].ValidFrom, later.At)
	}
}

func TestSentinelStopsSmallTalk(t *testing.T) {
	t.Parallel()
	f := newFixture(t, pipeline.Options{})
	run := f.process(t, f.say(t, "sounds good"))
	if run.Outcome != memento.RunNothing || !strings.HasPrefix(run.Reason, "sentinel:") {
		t.Errorf("run = %+v; want nothing, stopped by the sentinel", run)
	}
	if got := f.model.total(); got != 1 {
		t.Errorf("%d provider calls (%v); want exactly 1, the sentinel", got, f.model.calls)
	}
	if len(f.current(t)) != 0 {
		t.Errorf("memories stored: %v", f.current(t))
	}
}

func TestPoisonedMessagesStoreNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, pipeline.Options{})
	poisoned := readLines(t, "testdata/poisoned.txt")
	if len(poisoned) < 20 {
		t.Fatalf("%d poisoned varieties; want at least 20", len(poisoned))
	}
	for _, text := range poisoned {
		run := f.process(t, f.say(t, text))
		if run.Outcome != memento.RunRejected || len(run.Rejected) == 0 || len(run.Memories) != 0 {
			t.Errorf("%q: run = %+v; want rejected with reasons and no memories", text, run)
		}
		if run.Steps[0].Node != "hygiene" || run.Steps[0].Outcome != "rejected" {
			t.Errorf("%q: first step %+v; want hygiene rejected", text, run.Steps[0])
		}
	}
	if got := f.model.total(); got != 0 {
		t.Errorf("the model was called %d times for poisoned messages; want never", got)
	}
	if mems := f.current(t); len(mems) != 0 {
		t.Errorf("poisoned messages stored %v", mems)
	}
	runs, err := f.db.MemoryRuns(ctx, f.s, 0)
	if err != nil || len(runs) != len(poisoned) {
		t.Fatalf("%d runs recorded (%v); want %d", len(runs), err, len(poisoned))
	}
	// Rejected messages never come back through recall.
	cands, err := f.db.MessageCandidates(ctx, f.s, memento.CandidateQuery{Query: "recommend instructions system", Keyword: 50, Recent: 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(cands) != 0 {
		t.Errorf("recall candidates include %d rejected messages, such as %q", len(cands), cands[0].Text)
	}
}

func TestProcessingTwiceCreatesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, pipeline.Options{})
	msg := f.say(t, netflix)
	first := f.process(t, msg)
	calls := f.model.total()
	second := f.process(t, msg)
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("second Process returned another run (-first +second):\n%s", diff)
	}
	if f.model.total() != calls {
		t.Errorf("second Process called the model %d more times", f.model.total()-calls)
	}
	// Run bypasses the lookup; the store still refuses a second write.
	again, err := f.p.Run(ctx, f.s, msg)
	if err != nil {
		t.Fatal(err)
	}
	if !again.FinishedAt.Equal(first.FinishedAt) {
		t.Errorf("Run over a processed message reported a new run %+v", again)
	}
	all, _ := f.db.Memories(ctx, f.s, memento.MemoryFilter{All: true})
	if len(all) != 3 {
		t.Errorf("%d memories after processing twice; want 3", len(all))
	}
}

func TestResumesAfterAFailedStep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, pipeline.Options{CheckpointAfter: -1})
	f.model.fail = "merge"
	msg := f.say(t, netflix)
	if _, err := f.p.Process(ctx, f.s, msg.ID); memento.ErrorCode(err) != memento.EUNAVAILABLE {
		t.Fatalf("first Process: %v; want the scripted EUNAVAILABLE", err)
	}
	before := map[string]int{}
	for k, v := range f.model.calls {
		before[k] = v
	}
	run := f.process(t, msg)
	if run.Outcome != memento.RunStored || len(run.Memories) != 3 {
		t.Fatalf("resumed run = %+v", run)
	}
	for _, task := range []string{"sentinel", "extract", "review_extraction", "attribute"} {
		if f.model.calls[task] != before[task] {
			t.Errorf("%s ran again after the resume (%d -> %d calls); the checkpoint should have kept its result", task, before[task], f.model.calls[task])
		}
	}
	if _, ok, _ := f.db.Checkpointer(f.s).Load(ctx, pipeline.GraphName+"/"+msg.ID); ok {
		t.Error("the checkpoint outlived the finished run")
	}
}

// editingStore changes the value a run merged into just before its first
// write, as a concurrent run or a user's edit would.
type editingStore struct {
	*sqlite.DB
	edited bool
}

func (e *editingStore) WriteMemories(ctx context.Context, s memento.Scope, w memento.MemoryWrite) (bool, error) {
	for _, b := range w.Base {
		if b.ID != "" && !e.edited {
			e.edited = true
			if _, err := e.DB.UpdateMemory(ctx, s, b.ID, memento.MemoryUpdate{Value: b.Value + "; watches with subtitles"}); err != nil {
				return false, err
			}
		}
	}
	return e.DB.WriteMemories(ctx, s, w)
}

func TestConflictMergesAgain(t *testing.T) {
	t.Parallel()
	db := sqlitetest.Open(t)
	store := &editingStore{DB: db}
	p, err := pipeline.New(offline.New(offline.Options{}), store, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{db: db, p: p, s: memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}}
	// The first run has no base value to edit.
	f.process(t, f.say(t, "I watch everything on Netflix"))
	run := f.process(t, f.say(t, "I also have Hulu"))
	if run.Conflicts != 1 {
		t.Errorf("run conflicts = %d; want 1", run.Conflicts)
	}
	got := f.current(t)["PLATFORM"]
	want := []string{"watches everything on Netflix; watches with subtitles; also has Hulu"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PLATFORM after the conflict (-want +got):\n%s", diff)
	}
}

func TestWorkerProcessesEarlierMessagesFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, pipeline.Options{})
	w := &pipeline.Worker{Pipeline: f.p, Ordered: f.db}
	first := f.say(t, "I can't stand horror")
	later := f.say(t, "actually I've come around on horror")
	// The later message's job runs first.
	if _, err := w.Remember(ctx, f.s, later.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.MemoryRun(ctx, f.s, first.ID); err != nil {
		t.Errorf("the earlier message was not processed first: %v", err)
	}
	got := f.current(t)
	if _, ok := got["DISLIKES"]; ok || !slices.Contains(got["GENRE"], "has come around on horror") {
		t.Errorf("current = %v; want the later statement to win", got)
	}
	// The earlier message's own job finds it done.
	calls := f.model.total()
	if err := w.Handle(ctx, memento.JobRemember, []byte(`{"user":"ann","message":"`+first.ID+`"}`)); err != nil {
		t.Fatal(err)
	}
	if f.model.total() != calls {
		t.Error("the earlier message's job ran the pipeline again")
	}
	// A job for a message that is gone completes.
	if err := w.Handle(ctx, memento.JobRemember, []byte(`{"user":"ann","message":"gone"}`)); err != nil {
		t.Errorf("job of a missing message: %v; want nil", err)
	}
	if err := w.Handle(ctx, memento.JobRemember, []byte(`{`)); err == nil {
		t.Error("a malformed payload was accepted")
	}
}

func TestAssistantMessagesAreIndexedOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, pipeline.Options{})
	res, err := f.db.AppendMessages(ctx, f.s, "t1", []memento.Message{{ID: "r1", Role: memento.RoleAssistant, Text: "I love sci-fi too!"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	run := f.process(t, res.Messages[0])
	if run.Outcome != memento.RunSkipped || f.model.total() != 0 {
		t.Errorf("assistant run = %+v after %d calls; want skipped without calls", run, f.model.total())
	}
	cands, _ := f.db.MessageCandidates(ctx, f.s, memento.CandidateQuery{Recent: 5})
	if len(cands) != 1 || cands[0].Vector == nil {
		t.Errorf("assistant message candidates = %+v; want it embedded", cands)
	}
}

func TestInventedFactIsRepairedWithTheOpenAIProvider(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := llmtest.New(t)
	c := llmtest.InventedFact()
	c.Script(srv)
	model, err := openai.New(openai.Config{BaseURL: srv.URL, Model: "test-model", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	db := sqlitetest.Open(t)
	p, err := pipeline.New(model, db, pipeline.Options{Schema: memento.Schema{Name: "case", Attributes: c.Schema}})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{db: db, p: p, s: memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}}
	run := f.process(t, f.say(t, c.Message))
	if run.Outcome != memento.RunStored || run.ExtractRounds != 2 {
		t.Errorf("run = %+v; want stored after 2 extraction rounds", run)
	}
	got := map[string]string{}
	for a, vs := range f.current(t) {
		got[a] = strings.Join(vs, " | ")
	}
	if diff := cmp.Diff(c.Want, got); diff != "" {
		t.Errorf("memories (-want +got):\n%s", diff)
	}
	all, _ := db.Memories(ctx, f.s, memento.MemoryFilter{All: true})
	for _, m := range all {
		if strings.Contains(m.Value, "every weekend") {
			t.Errorf("the invented fact was stored: %+v", m)
		}
	}
	if n := srv.Pending(); n != 0 {
		t.Errorf("%d scripted answers unused", n)
	}
	var repair bool
	for _, st := range run.Steps {
		if st.Node == pipeline.NodeReviewExtraction && st.Outcome == "repair" && strings.Contains(st.Detail, "every weekend") {
			repair = true
		}
	}
	if !repair {
		t.Errorf("the trace shows no repair of the invented fact: %+v", run.Steps)
	}
}

// disputing is a model whose extraction reviewer never accepts.
type disputing struct{ pipeline.Model }

func (disputing) ReviewExtraction(context.Context, string, []memento.Fact) (*memento.Verdict, error) {
	return &memento.Verdict{OK: false, Reason: "I do not believe any of it."}, nil
}

func TestRepairLoopIsBounded(t *testing.T) {
	t.Parallel()
	for _, repairs := range []int{1, 3} {
		db := sqlitetest.Open(t)
		model := &counting{Model: disputing{offline.New(offline.Options{})}}
		p, err := pipeline.New(model, db, pipeline.Options{MaxRepairs: repairs})
		if err != nil {
			t.Fatal(err)
		}
		f := &fixture{db: db, p: p, model: model, s: memento.Scope{Tenant: memento.DefaultTenant, User: "ann"}}
		run := f.process(t, f.say(t, netflix))
		if run.ExtractRounds != repairs+1 || model.calls["extract"] != repairs+1 {
			t.Errorf("MaxRepairs %d: %d extraction rounds (%d calls); want %d", repairs, run.ExtractRounds, model.calls["extract"], repairs+1)
		}
		if run.Outcome != memento.RunNothing || run.Dropped != 3 || len(f.current(t)) != 0 {
			t.Errorf("MaxRepairs %d: run = %+v; want nothing stored, 3 facts dropped", repairs, run)
		}
	}
}

func TestSchemas(t *testing.T) {
	t.Parallel()
	movie, err := pipeline.BuiltinSchema(pipeline.SchemaMovie)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range movie.Attributes {
		names = append(names, a.Name)
	}
	want := []string{"LIKES", "DISLIKES", "FAVORITE", "WANTS_TO_WATCH", "PLATFORM", "GENRE", "PERSONALITY", "WATCHING_HABIT",
		"FREQUENCY", "AVOID", "CHARACTER_PREFERENCES", "SHOW_LENGTH", "REWATCHER", "POPULARITY"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("movie schema (-want +got):\n%s", diff)
	}
	generic, err := pipeline.BuiltinSchema(pipeline.SchemaGeneric)
	if err != nil {
		t.Fatal(err)
	}
	if ev, ok := generic.Attribute("event"); !ok || ev.Mode != memento.ModeEpisodic {
		t.Errorf("generic EVENT = %+v, %v; want episodic", ev, ok)
	}
	def := pipeline.DefaultSchema()
	if len(def.Attributes) != len(movie.Attributes)+len(generic.Attributes) {
		t.Errorf("default schema has %d attributes; want movie and generic", len(def.Attributes))
	}
	for _, bad := range []string{
		`{"name":"x","attributes":[]}`,
		`{"name":"x","attributes":[{"name":"A","description":"d","mode":"sometimes"}]}`,
		`{"name":"x","attributes":[{"name":"A","description":"d"},{"name":"a","description":"d"}]}`,
		`{"name":"x","attributes":[{"name":"A"}]}`,
		`{"name":"x","attrs":[]}`,
	} {
		if _, err := pipeline.ReadSchema(strings.NewReader(bad)); memento.ErrorCode(err) != memento.EINVALID {
			t.Errorf("ReadSchema(%s) = %v; want EINVALID", bad, err)
		}
	}
	if _, err := pipeline.LoadSchema("no/such/file.json"); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("LoadSchema of a missing file: %v", err)
	}
}

func TestCustomSchemaFromFile(t *testing.T) {
	t.Parallel()
	s, err := pipeline.ReadSchema(strings.NewReader(`{"name":"food","attributes":[
		{"name":"cuisine","description":"Cuisines and dishes the user likes to eat.","mode":"semantic"},
		{"name":"diet","description":"Diet, allergies and foods the user avoids.","mode":"semantic"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, pipeline.Options{Schema: s})
	run := f.process(t, f.say(t, "I'm vegetarian and allergic to peanuts"))
	if run.Outcome != memento.RunStored {
		t.Fatalf("run = %+v", run)
	}
	if _, ok := f.current(t)["DIET"]; !ok {
		t.Errorf("memories = %v; want a DIET value", f.current(t))
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	t.Parallel()
	db := sqlitetest.Open(t)
	if _, err := pipeline.New(nil, db, pipeline.Options{}); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("nil model: %v", err)
	}
	bad := memento.Schema{Name: "bad", Attributes: []memento.AttributeSpec{{Name: "A"}}}
	if _, err := pipeline.New(offline.New(offline.Options{}), db, pipeline.Options{Schema: bad}); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("bad schema: %v", err)
	}
}

// readLines reads the non-empty lines of a test file, with \n escapes
// turned into line breaks.
func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, strings.ReplaceAll(line, `\n`, "\n"))
		}
	}
	return out
}
