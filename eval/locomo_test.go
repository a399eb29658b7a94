package eval

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/llm/llmtest"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/recall"
)

// tinyConversation is a handmade LoCoMo conversation over two sessions
// whose right answers are known: every question names the turns that
// answer it.
func tinyConversation() *recall.LoCoMo {
	d1 := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)
	d2 := time.Date(2023, 6, 1, 10, 0, 0, 0, time.UTC)
	return &recall.LoCoMo{
		SpeakerA: "Ana", SpeakerB: "Ben",
		Sessions: []recall.LoCoMoSession{
			{N: 1, Date: d1, Turns: []recall.LoCoMoTurn{
				{Speaker: "Ana", DiaID: "D1:1", Text: "I adopted a puppy called Biscuit last week."},
				{Speaker: "Ben", DiaID: "D1:2", Text: "Lovely! I started learning the violin."},
				{Speaker: "Ana", DiaID: "D1:3", Text: "My sister lives in Lisbon now."},
			}},
			{N: 2, Date: d2, Turns: []recall.LoCoMoTurn{
				{Speaker: "Ben", DiaID: "D2:1", Text: "I played my first violin concert yesterday."},
				{Speaker: "Ana", DiaID: "D2:2", Text: "Biscuit chewed my shoes again."},
				{Speaker: "Ben", DiaID: "D2:3", Text: "Sounds like a handful!"},
			}},
		},
		QA: []recall.LoCoMoQA{
			{Question: "What is the name of Ana's puppy?", Answer: "Biscuit", Evidence: []string{"D1:1"}, Category: 4},
			{Question: "When did Ben play his first violin concert?", Answer: "31 May 2023", Evidence: []string{"D2:1"}, Category: 2},
			{Question: "What instrument does Ben play and where does Ana's sister live?", Answer: "violin, Lisbon", Evidence: []string{"D1:2; D1:3"}, Category: 1},
			{Question: "What did the puppy chew?", Answer: "shoes", Evidence: []string{"D2:2"}, Category: 3},
			// Not scored: adversarial, missing evidence, no evidence.
			{Question: "What is Ben's cat called?", Answer: "", Evidence: []string{"D1:2"}, Category: 5},
			{Question: "Where does Ana work?", Answer: "a bakery", Evidence: []string{"D9:9"}, Category: 4},
			{Question: "How is Ana?", Answer: "fine", Category: 4},
		},
	}
}

// memIngest keeps ingested messages by user, as a store would.
type memIngest map[string][]memento.Message

func (m memIngest) ingest(_ context.Context, user string, msgs []memento.Message) error {
	m[user] = append(m[user], msgs...)
	return nil
}

// oracle recalls exactly the evidence turns of the question it is asked,
// then pads with other turns, so its recall is 1 at every k that holds the
// evidence.
func oracle(c *recall.LoCoMo, turns memIngest) RecallFunc {
	return func(_ context.Context, user, query string, k int) ([]memento.RecallItem, error) {
		var out []memento.RecallItem
		for _, qa := range c.QA {
			if qa.Question != query {
				continue
			}
			for _, id := range EvidenceIDs(qa.Evidence) {
				out = append(out, memento.RecallItem{ID: "mem-" + id, Kind: memento.RecallEpisode, Text: "about " + id, Sources: []string{id}})
			}
		}
		for _, m := range turns[user] {
			if len(out) >= k {
				break
			}
			out = append(out, memento.RecallItem{ID: m.ID, Kind: memento.RecallMessage, Text: m.Text, Sources: []string{m.ID}})
		}
		return out[:min(k, len(out))], nil
	}
}

func TestEvidenceRecall(t *testing.T) {
	items := []memento.RecallItem{
		{Sources: []string{"D1:1"}},
		{Sources: []string{"D1:2", "D1:3"}},
		{Sources: nil},
		{Sources: []string{"D2:1"}},
	}
	tests := []struct {
		name     string
		evidence []string
		k        int
		want     float64
	}{
		{"first item", []string{"D1:1"}, 1, 1},
		{"beyond k", []string{"D2:1"}, 3, 0},
		{"within k", []string{"D2:1"}, 4, 1},
		{"k over the items", []string{"D2:1"}, 20, 1},
		{"half", []string{"D1:1", "D9:9"}, 10, 0.5},
		{"one item with two sources", []string{"D1:2", "D1:3"}, 2, 1},
		{"no evidence", nil, 10, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EvidenceRecall(tt.evidence, items, tt.k); got != tt.want {
				t.Errorf("EvidenceRecall = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestEvidenceIDs(t *testing.T) {
	got := EvidenceIDs([]string{"D8:6; D9:17", "D1:3", "D1:3", " D2:4 "})
	want := []string{"D8:6", "D9:17", "D1:3", "D2:4"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("EvidenceIDs (-want +got):\n%s", diff)
	}
}

func TestBaselines(t *testing.T) {
	c := tinyConversation()
	turns := map[string][]memento.Message{"u": c.Messages()}
	ctx := context.Background()
	t.Run("bm25 finds the turn that shares the rare words", func(t *testing.T) {
		items, err := NewBM25(turns).Recall(ctx, "u", "Where does the sister live?", 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) == 0 || items[0].ID != "D1:3" {
			t.Fatalf("top item = %+v, want D1:3", items)
		}
		if diff := cmp.Diff([]string{"D1:3"}, items[0].Sources); diff != "" {
			t.Errorf("sources (-want +got):\n%s", diff)
		}
	})
	t.Run("bm25 stems", func(t *testing.T) {
		items, _ := NewBM25(turns).Recall(ctx, "u", "chewing", 1)
		if len(items) != 1 || items[0].ID != "D2:2" {
			t.Fatalf("items = %+v, want D2:2 (chewed)", items)
		}
	})
	t.Run("bm25 leaves out turns without a shared word", func(t *testing.T) {
		items, _ := NewBM25(turns).Recall(ctx, "u", "zebra", 5)
		if len(items) != 0 {
			t.Fatalf("items = %+v, want none", items)
		}
	})
	t.Run("bm25 drops the query's stop words as Memento does", func(t *testing.T) {
		// "the" and "a" are in most turns; kept, they rank "Sounds like a
		// handful!" for a question about a sound.
		stop := map[string][]memento.Message{"u": {
			{ID: "x1", Text: "the the the a a a of of"},
			{ID: "x2", Text: "my sister plays the cello"},
		}}
		items, _ := NewBM25(stop).Recall(ctx, "u", "What is the cello of a sister?", 5)
		if len(items) != 1 || items[0].ID != "x2" {
			t.Fatalf("same-tokenizer items = %+v, want x2 alone", items)
		}
		raw, _ := NewRawBM25(stop).Recall(ctx, "u", "What is the cello of a sister?", 5)
		if len(raw) != 2 {
			t.Fatalf("raw items = %+v, want both turns (stop words kept)", raw)
		}
	})
	t.Run("dense ranks by the embedder's similarity", func(t *testing.T) {
		d, err := NewDense(ctx, turns, offline.NewEmbedder(256))
		if err != nil {
			t.Fatal(err)
		}
		items, err := d.Recall(ctx, "u", "Biscuit chewed my shoes", 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) == 0 || items[0].ID != "D2:2" {
			t.Fatalf("dense items = %+v, want D2:2 first", items)
		}
		if none, _ := d.Recall(ctx, "nobody", "shoes", 2); len(none) != 0 {
			t.Errorf("dense recall of an unknown user = %+v", none)
		}
	})
	t.Run("bm25 of an unknown user", func(t *testing.T) {
		items, err := NewBM25(turns).Recall(ctx, "nobody", "violin", 5)
		if err != nil || len(items) != 0 {
			t.Fatalf("items = %+v, err %v; want none", items, err)
		}
	})
	t.Run("recency returns the newest turns first", func(t *testing.T) {
		items, _ := NewRecency(turns).Recall(ctx, "u", "anything", 2)
		var got []string
		for _, it := range items {
			got = append(got, it.ID)
		}
		if diff := cmp.Diff([]string{"D2:3", "D2:2"}, got); diff != "" {
			t.Errorf("recency (-want +got):\n%s", diff)
		}
		if all, _ := NewRecency(turns).Recall(ctx, "u", "", 100); len(all) != 6 {
			t.Errorf("recency with k over the turns gave %d items, want 6", len(all))
		}
	})
}

func TestLoCoMoOracle(t *testing.T) {
	c := tinyConversation()
	ing := memIngest{}
	convs := []LoCoMoConversation{{Name: "tiny", Data: c}}
	var progress []int
	res, err := LoCoMo(context.Background(), convs, ing.ingest, oracle(c, ing), LoCoMoOptions{
		K: 2, CurveK: 4, Progress: func(done, _ int) { progress = append(progress, done) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(ing["locomo-tiny"]); got != 6 {
		t.Fatalf("ingested %d messages, want 6", got)
	}
	if ing["locomo-tiny"][0].ID != "D1:1" || !strings.HasPrefix(ing["locomo-tiny"][0].Text, "Ana: ") {
		t.Errorf("first message = %+v, want D1:1 prefixed with the speaker", ing["locomo-tiny"][0])
	}
	if res.Conversations != 1 || res.Questions != 4 || res.Skipped != 2 || res.K != 2 {
		t.Errorf("counts = %d conversations, %d questions, %d skipped, k %d; want 1, 4, 2, 2", res.Conversations, res.Questions, res.Skipped, res.K)
	}
	if res.Recall != 1 {
		t.Errorf("oracle recall = %v, want 1", res.Recall)
	}
	want := map[string]float64{"1": 1, "2": 1, "3": 1, "4": 1}
	if diff := cmp.Diff(want, res.ByCategory); diff != "" {
		t.Errorf("by category (-want +got):\n%s", diff)
	}
	// The multi-hop question has two evidence turns: recall@1 is 0.5 for
	// it and 1 for the others.
	if got, want := res.Curves["memento"][0], (1+1+1+0.5)/4; got != want {
		t.Errorf("memento recall@1 = %v, want %v", got, want)
	}
	if got := res.Curves["memento"][3]; got != 1 {
		t.Errorf("memento recall@4 = %v, want 1", got)
	}
	if len(res.Curves["bm25"]) != 4 || len(res.Curves["recency"]) != 4 {
		t.Errorf("curves = %v, want 4 points per system", res.Curves)
	}
	// Recency with k=2 holds D2:3 and D2:2: only the chewing question.
	if got := res.Baselines["recency"].Recall; got != 0.25 {
		t.Errorf("recency recall@2 = %v, want 0.25", got)
	}
	if got := res.Baselines["bm25"].Recall; got <= res.Baselines["recency"].Recall {
		t.Errorf("bm25 recall %v should beat recency %v on questions that share words with their answers", got, res.Baselines["recency"].Recall)
	}
	if res.TokensPerQuery <= 0 || len(res.LatenciesMs) != 4 || res.RecallP99Ms < res.RecallP50Ms {
		t.Errorf("tokens %v, latencies %v, p50 %v, p99 %v", res.TokensPerQuery, res.LatenciesMs, res.RecallP50Ms, res.RecallP99Ms)
	}
	if diff := cmp.Diff([]int{1, 2, 3, 4}, progress); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	if res.Answer != nil {
		t.Errorf("answer score without an answerer: %+v", res.Answer)
	}

	// The JSON shape is a contract.
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var shape map[string]any
	if err := json.Unmarshal(b, &shape); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range shape {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	wantKeys := []string{"baselines", "byCategory", "conversations", "k", "questions", "recall", "recallP50Ms", "recallP99Ms", "tokensPerQuery"}
	if diff := cmp.Diff(wantKeys, keys); diff != "" {
		t.Errorf("JSON keys (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(b), `"baselines":{"bm25":{"recall":`) || !strings.Contains(string(b), `"recency":{"recall":0.25,"byCategory":{`) {
		t.Errorf("baselines JSON = %s", b)
	}
	if _, ok := res.Baselines["bm25Raw"]; !ok {
		t.Errorf("baselines %v lack bm25Raw", res.Baselines)
	}
	if _, ok := res.Baselines["dense"]; ok {
		t.Errorf("a dense baseline without an embedder: %v", res.Baselines)
	}
}

// twoConversations is tinyConversation twice, as conversations "a" and
// "b".
func twoConversations() []LoCoMoConversation {
	return []LoCoMoConversation{{Name: "a", Data: tinyConversation()}, {Name: "b", Data: tinyConversation()}}
}

func TestLoCoMoLeaveOneOut(t *testing.T) {
	convs := twoConversations()
	ing := memIngest{}
	// Setting x=1 finds every answer of conversation a and none of b's,
	// x=2 the reverse. Fitted on b, x=2 wins and scores a; fitted on a,
	// x=1 wins and scores b: each conversation is scored with the setting
	// fitted on the other, so held-out recall is 0 though in-sample it is
	// 0.5.
	c := convs[0].Data
	good, bad := oracle(c, ing), func(context.Context, string, string, int) ([]memento.RecallItem, error) { return nil, nil }
	byUser := func(p Params) RecallFunc {
		return func(ctx context.Context, user, query string, k int) ([]memento.RecallItem, error) {
			onA := user == "locomo-a"
			if (p["x"] == 1) == onA {
				return good(ctx, user, query, k)
			}
			return bad(ctx, user, query, k)
		}
	}
	res, err := LoCoMo(context.Background(), convs, ing.ingest, good, LoCoMoOptions{K: 3,
		Tuning: &LoCoMoTuning{Grid: []Params{{"x": 1}, {"x": 2}}, Recall: byUser}})
	if err != nil {
		t.Fatal(err)
	}
	// In-sample, x=1 and x=2 tie (each perfect on one conversation): the
	// first, the defaults, is kept.
	if res.InSample == nil || res.InSample.Recall != 0.5 || res.InSample.Params["x"] != 1 {
		t.Fatalf("in-sample = %+v, want recall 0.5 with x=1", res.InSample)
	}
	// Left out, each conversation is scored with the setting that was best
	// on the other, which is the wrong one for it.
	if res.HeldOut == nil || res.HeldOut.Recall != 0 {
		t.Fatalf("held-out = %+v, want recall 0", res.HeldOut)
	}
	want := []LoCoMoFold{
		{HeldOut: "a", Questions: 4, Params: Params{"x": 2}, FitRecall: 1, Recall: 0},
		{HeldOut: "b", Questions: 4, Params: Params{"x": 1}, FitRecall: 1, Recall: 0},
	}
	if diff := cmp.Diff(want, res.HeldOut.Folds); diff != "" {
		t.Errorf("folds (-want +got):\n%s", diff)
	}
	if res.HeldOut.ByCategory["1"] != 0 || len(res.HeldOut.ByCategory) != 4 {
		t.Errorf("held-out by category = %v", res.HeldOut.ByCategory)
	}
	if bm := res.Baselines["bm25"].Recall; bm <= 0 || res.InSample.VsBM25 != round4(0.5/bm) {
		t.Errorf("in-sample vsBM25 = %v with bm25 %v", res.InSample.VsBM25, bm)
	}

	// One conversation: in-sample only.
	one, err := LoCoMo(context.Background(), convs[:1], memIngest{}.ingest, good, LoCoMoOptions{K: 3,
		Tuning: &LoCoMoTuning{Grid: []Params{{"x": 1}}, Recall: byUser}})
	if err != nil {
		t.Fatal(err)
	}
	if one.InSample == nil || one.HeldOut != nil {
		t.Errorf("one conversation: in-sample %+v, held-out %+v; want in-sample only", one.InSample, one.HeldOut)
	}
}

func TestLoCoMoPartialRecall(t *testing.T) {
	c := tinyConversation()
	ing := memIngest{}
	// A recall that only ever brings back session 1 finds the puppy's
	// name and the multi-hop pair, but not what happened in session 2.
	session1 := func(_ context.Context, user, _ string, k int) ([]memento.RecallItem, error) {
		var out []memento.RecallItem
		for _, m := range ing[user] {
			if m.Thread == "session_1" && len(out) < k {
				out = append(out, memento.RecallItem{ID: m.ID, Text: m.Text, Sources: []string{m.ID}})
			}
		}
		return out, nil
	}
	res, err := LoCoMo(context.Background(), []LoCoMoConversation{{Name: "tiny", Data: c}}, ing.ingest, session1, LoCoMoOptions{K: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"1": 1, "2": 0, "3": 0, "4": 1}
	if diff := cmp.Diff(want, res.ByCategory); diff != "" {
		t.Errorf("by category (-want +got):\n%s", diff)
	}
	if res.Recall != 0.5 {
		t.Errorf("recall = %v, want 0.5", res.Recall)
	}
	var missedAll []string
	for _, d := range res.Details {
		missedAll = append(missedAll, d.Missed...)
	}
	if diff := cmp.Diff([]string{"D2:1", "D2:2"}, missedAll); diff != "" {
		t.Errorf("missed (-want +got):\n%s", diff)
	}
	if res.Curves != nil {
		t.Errorf("curves without CurveK: %v", res.Curves)
	}
}

func TestLoCoMoErrors(t *testing.T) {
	c := tinyConversation()
	convs := []LoCoMoConversation{{Name: "tiny", Data: c}}
	boom := errors.New("boom")
	ok := func(context.Context, string, []memento.Message) error { return nil }
	t.Run("ingest", func(t *testing.T) {
		_, err := LoCoMo(context.Background(), convs, func(context.Context, string, []memento.Message) error { return boom }, nil, LoCoMoOptions{})
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v, want boom", err)
		}
	})
	t.Run("recall", func(t *testing.T) {
		fail := func(context.Context, string, string, int) ([]memento.RecallItem, error) { return nil, boom }
		_, err := LoCoMo(context.Background(), convs, ok, fail, LoCoMoOptions{})
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v, want boom", err)
		}
	})
	t.Run("no scorable question", func(t *testing.T) {
		empty := &recall.LoCoMo{Sessions: c.Sessions, QA: c.QA[4:]}
		_, err := LoCoMo(context.Background(), []LoCoMoConversation{{Name: "x", Data: empty}}, ok, nil, LoCoMoOptions{})
		if memento.ErrorCode(err) != memento.EINVALID {
			t.Fatalf("err = %v, want EINVALID", err)
		}
	})
}

func TestLoCoMoAnswers(t *testing.T) {
	srv := llmtest.New(t)
	// The four scored questions, in order: exact, partly right, a
	// multi-hop list, wrong.
	srv.Enqueue(llmtest.ChatPath,
		llmtest.Chat("Biscuit"),
		llmtest.Chat("on 31 May"),
		llmtest.Chat("the violin, Lisbon\nbecause..."),
		llmtest.Chat("socks"),
	)
	ans, err := NewChatAnswerer(ChatAnswererConfig{BaseURL: srv.URL, Model: "test-model"})
	if err != nil {
		t.Fatal(err)
	}
	c := tinyConversation()
	ing := memIngest{}
	res, err := LoCoMo(context.Background(), []LoCoMoConversation{{Name: "tiny", Data: c}}, ing.ingest, oracle(c, ing), LoCoMoOptions{K: 2, Answerer: ans})
	if err != nil {
		t.Fatal(err)
	}
	if srv.Pending() != 0 {
		t.Fatalf("%d scripted answers unused", srv.Pending())
	}
	// "on 31 May" vs "31 May 2023": 2 shared of 3 and 3 tokens.
	want := []float64{1, 2.0 / 3, 1, 0}
	for i, d := range res.Details {
		if diff := d.F1 - want[i]; diff > 1e-9 || diff < -1e-9 {
			t.Errorf("question %d answer %q F1 = %v, want %v", i+1, d.Answer, d.F1, want[i])
		}
	}
	if res.Answer == nil || res.Answer.F1 != round4((1+2.0/3+1+0)/4) {
		t.Fatalf("answer score = %+v", res.Answer)
	}
	if res.Answer.ByCategory["3"] != 0 || res.Answer.ByCategory["4"] != 1 {
		t.Errorf("answer by category = %v", res.Answer.ByCategory)
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	chat, err := reqs[0].Chat()
	if err != nil {
		t.Fatal(err)
	}
	if chat.Model != "test-model" || len(chat.Messages) != 2 {
		t.Fatalf("request = %+v", chat)
	}
	user := chat.Messages[1].Content
	if !strings.Contains(user, "What is the name of Ana's puppy?") || !strings.Contains(user, "about D1:1") {
		t.Errorf("the prompt lacks the question or the memories:\n%s", user)
	}
}

func TestChatAnswererErrors(t *testing.T) {
	if _, err := NewChatAnswerer(ChatAnswererConfig{Model: "m"}); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("no base URL: err = %v, want EINVALID", err)
	}
	if _, err := NewChatAnswerer(ChatAnswererConfig{BaseURL: "http://localhost:1/v1"}); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("no model: err = %v, want EINVALID", err)
	}
	srv := llmtest.New(t)
	srv.Enqueue(llmtest.ChatPath, llmtest.Error(400, "bad request"))
	ans, err := NewChatAnswerer(ChatAnswererConfig{BaseURL: srv.URL, Model: "m", MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ans.Answer(context.Background(), "q", "m"); memento.ErrorCode(err) != memento.EUNAVAILABLE {
		t.Errorf("server error: err = %v, want EUNAVAILABLE", err)
	}
}

func TestLoCoMoF1(t *testing.T) {
	tests := []struct {
		name     string
		pred     string
		gold     string
		category int
		want     float64
	}{
		{"exact", "Biscuit", "Biscuit", 4, 1},
		{"articles and punctuation do not count", "The puppy, Biscuit!", "puppy Biscuit", 4, 1},
		{"stems match", "painting sunsets", "paints sunset", 4, 1},
		{"partial", "7 May 2023", "8 May 2023", 2, 2.0 / 3},
		{"nothing shared", "socks", "shoes", 4, 0},
		{"empty prediction", "", "shoes", 4, 0},
		{"multi-hop averages over gold parts", "violin", "violin, Lisbon", 1, 0.5},
		{"multi-hop takes the best part", "Lisbon, violin", "violin, Lisbon", 1, 1},
		{"open-domain uses the first alternative", "likely yes", "Likely yes; she loves it", 3, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := LoCoMoF1(tt.pred, tt.gold, tt.category)
			if d := got - tt.want; d > 1e-9 || d < -1e-9 {
				t.Errorf("LoCoMoF1(%q, %q, %d) = %v, want %v", tt.pred, tt.gold, tt.category, got, tt.want)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	vals := []float64{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	tests := []struct{ p, want float64 }{{50, 5}, {99, 10}, {90, 9}, {0, 1}, {100, 10}, {10, 1}}
	for _, tt := range tests {
		if got := Percentile(vals, tt.p); got != tt.want {
			t.Errorf("Percentile(p%v) = %v, want %v", tt.p, got, tt.want)
		}
	}
	if vals[0] != 5 {
		t.Error("Percentile sorted its input")
	}
	if Percentile(nil, 50) != 0 {
		t.Error("Percentile of nothing should be 0")
	}
}

func TestReadLoCoMoFiles(t *testing.T) {
	dir := t.TempDir()
	conv := map[string]any{
		"speaker_a": "Ana", "speaker_b": "Ben",
		"session_1_date_time": "1:56 pm on 8 May, 2023",
		"session_1": []map[string]string{
			{"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a puppy."},
			{"speaker": "Ben", "dia_id": "D1:2", "text": "Nice!"},
		},
		"qa": []map[string]any{{"question": "What did Ana adopt?", "answer": "a puppy", "evidence": []string{"D1:1"}, "category": 4}},
	}
	b, _ := json.Marshal(conv)
	for _, name := range []string{"b.json", "a.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	convs, err := ReadLoCoMoFiles([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(convs) != 2 || convs[0].Name != "a" || convs[1].Name != "b" {
		t.Fatalf("conversations = %+v, want a and b in order", convs)
	}
	if n := len(convs[0].Data.Messages()); n != 2 {
		t.Errorf("messages = %d, want 2", n)
	}
	if again, err := ReadLoCoMoFiles([]string{dir, filepath.Join(dir, "a.json"), dir}); err != nil || len(again) != 2 {
		t.Errorf("files named twice: %d conversations, err %v; want 2", len(again), err)
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "a.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]string{nil, {filepath.Join(dir, "missing.json")}, {t.TempDir()}, {dir, other}} {
		if _, err := ReadLoCoMoFiles(bad); memento.ErrorCode(err) != memento.EINVALID {
			t.Errorf("ReadLoCoMoFiles(%v): err = %v, want EINVALID", bad, err)
		}
	}
}

func TestPlotLoCoMo(t *testing.T) {
	res := &LoCoMoResult{
		Questions: 4, Conversations: 1, RecallP50Ms: 1, RecallP99Ms: 3,
		Curves:      map[string][]float64{"memento": {0.5, 0.8, 1}, "bm25": {0.3, 0.5, 0.6}, "recency": {0, 0, 0.1}},
		LatenciesMs: []float64{1, 1.2, 0.8, 3},
	}
	files, err := PlotLoCoMo(t.TempDir(), res)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("files = %v, want two charts", files)
	}
	for _, f := range files {
		checkPNG(t, f)
	}
}
