package recall

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
)

func TestParseDates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		query string
		want  []dateRef
	}{
		{"When did Melanie go camping in June?", []dateRef{{Month: time.June}}},
		{"What painting did Melanie show on October 13, 2023?", []dateRef{{Year: 2023, Month: time.October, Day: 13}}},
		{"What happened on 8 May, 2023?", []dateRef{{Year: 2023, Month: time.May, Day: 8}}},
		{"what about the 3rd of march", []dateRef{{Month: time.March, Day: 3}}},
		{"Did they travel in July 2022 or in 2021?", []dateRef{{Year: 2022, Month: time.July}, {Year: 2021}}},
		{"May I ask what she likes?", nil},
		{"What did she do in may?", []dateRef{{Month: time.May}}},
		{"How many sci-fi films has she seen?", nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, parseDates(tt.query)); diff != "" {
				t.Errorf("parseDates (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDateMatches(t *testing.T) {
	t.Parallel()
	at := time.Date(2023, 10, 13, 19, 0, 0, 0, time.UTC)
	tests := []struct {
		ref  dateRef
		want bool
	}{
		{dateRef{Month: time.October}, true},
		{dateRef{Month: time.June}, false},
		{dateRef{Year: 2023}, true},
		{dateRef{Year: 2022, Month: time.October}, false},
		{dateRef{Year: 2023, Month: time.October, Day: 11}, true}, // told two days later
		{dateRef{Year: 2023, Month: time.October, Day: 1}, false},
		{dateRef{Month: time.October, Day: 13}, true},
	}
	for _, tt := range tests {
		if got := tt.ref.matches(at); got != tt.want {
			t.Errorf("%+v.matches(%v) = %v; want %v", tt.ref, at, got, tt.want)
		}
	}
	if _, _, ok := (dateRef{Month: time.June}).span(); ok {
		t.Error("a date without a year has a span")
	}
	from, to, ok := (dateRef{Year: 2023, Month: time.June}).span()
	if !ok || !from.Equal(time.Date(2023, 6, 1, 0, 0, 0, 0, time.UTC)) || !to.Equal(time.Date(2023, 7, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("span of June 2023 = %v, %v, %v", from, to, ok)
	}
}

func TestCosine(t *testing.T) {
	t.Parallel()
	if got := cosine([]float32{1, 0}, []float32{1, 0}); math.Abs(got-1) > 1e-9 {
		t.Errorf("same vector: %v", got)
	}
	if got := cosine([]float32{1, 0}, []float32{0, 2}); got != 0 {
		t.Errorf("orthogonal: %v", got)
	}
	if got := cosine([]float32{1, 0}, []float32{1, 0, 0}); got != 0 {
		t.Errorf("different lengths: %v", got)
	}
	if got := cosine([]float32{3, 4}, []float32{6, 8}); math.Abs(got-1) > 1e-9 {
		t.Errorf("unnormalised: %v", got)
	}
}

// fakeStore serves fixed candidates and records the queries.
type fakeStore struct {
	memories, messages []memento.RecallCandidate
	mu                 sync.Mutex
	queries            []memento.CandidateQuery
}

func (f *fakeStore) MemoryCandidates(_ context.Context, _ memento.Scope, q memento.CandidateQuery) ([]memento.RecallCandidate, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, q)
	return f.memories, nil
}

func (f *fakeStore) MessageCandidates(_ context.Context, _ memento.Scope, q memento.CandidateQuery) ([]memento.RecallCandidate, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, q)
	return f.messages, nil
}

// fixedEmbedder maps known texts to vectors.
type fixedEmbedder map[string][]float32

func (e fixedEmbedder) ID() string { return "fixed/2" }
func (e fixedEmbedder) Dim() int   { return 2 }
func (e fixedEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = e[t]
		if out[i] == nil {
			out[i] = []float32{0, 1}
		}
	}
	return out, nil
}

var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func msg(id, thread string, seq int64, text string, bm25 float64, vec []float32) memento.RecallCandidate {
	return memento.RecallCandidate{Kind: memento.RecallMessage, ID: id, Thread: thread, Seq: seq, Text: text, BM25: bm25,
		At: now.Add(-time.Duration(10-seq) * time.Hour), Sources: []string{id}, Vector: vec, Embedder: "fixed/2"}
}

func TestMessagesScoreAndNeighbours(t *testing.T) {
	t.Parallel()
	store := &fakeStore{messages: []memento.RecallCandidate{
		msg("q", "s1", 1, "What is your dog called?", 4, []float32{1, 0}),
		msg("a", "s1", 2, "Rex, a beagle.", 0, []float32{0, 1}), // a neighbour: no query word
		msg("x", "s1", 5, "I like pizza.", 0, []float32{0, 1}),  // recent only
		msg("d", "s2", 1, "My dog loves the beach.", 2, nil),
	}}
	emb := fixedEmbedder{"dog name": {1, 0}}
	r := &Messages{Store: store, Embedder: emb}
	items, err := r.Recall(context.Background(), memento.RecallQuery{Scope: memento.Scope{User: "ann"}, Query: "dog name", K: 10, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, it := range items {
		ids = append(ids, it.ID)
	}
	// x matches nothing and neighbours nothing relevant: left out.
	if diff := cmp.Diff([]string{"q", "a", "d"}, ids); diff != "" {
		t.Fatalf("order (-want +got):\n%s", diff)
	}
	// q is the best BM25 match but holds one of the query's two terms:
	// its bm25 part is scaled by 1 - Coverage/2.
	q := items[0]
	if q.Scores["bm25"] != 1-DefaultWeights.Coverage/2 || q.Scores["vector"] != 1 || q.Scores["neighbor"] != 0 {
		t.Errorf("scores of the match = %v", q.Scores)
	}
	a := items[1]
	if a.Scores["bm25"] != 0 || a.Scores["neighbor"] <= 0 || a.At == nil {
		t.Errorf("the answer next to the match = %+v; want a neighbour score", a)
	}
	want := DefaultWeights.BM25*q.Scores["bm25"] + DefaultWeights.Vector*q.Scores["vector"] + DefaultWeights.Recency*q.Scores["recency"]
	if math.Abs(q.Score-want) > 1e-3 {
		t.Errorf("score %v is not the weighted sum of its parts (%v)", q.Score, want)
	}
	if got := store.queries[0]; got.Keyword != DefaultKeyword || got.Recent != DefaultRecent || got.Neighbors != DefaultNeighbors {
		t.Errorf("candidate query = %+v; want the default bounds", got)
	}

	// A query naming a date also asks for the candidates of its period,
	// and scores what is from then.
	asked := len(store.queries)
	if _, err := r.Recall(context.Background(), memento.RecallQuery{Scope: memento.Scope{User: "ann"}, Query: "dog in June 2025", K: 3, Now: now}); err != nil {
		t.Fatal(err)
	}
	last := store.queries[asked] // the first query of the call: the question's own candidates
	if !last.From.Equal(time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)) || !last.To.Equal(time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("period of the dated query = %v to %v", last.From, last.To)
	}

	for _, bad := range []memento.RecallQuery{{Query: "x"}, {Scope: memento.Scope{User: "ann"}, K: MaxK + 1}, {Scope: memento.Scope{User: "ann"}, Query: strings.Repeat("x", MaxQueryBytes+1)}} {
		if _, err := r.Recall(context.Background(), bad); memento.ErrorCode(err) != memento.EINVALID {
			t.Errorf("Recall(%+v) = %v; want EINVALID", bad, err)
		}
	}
}

func TestAssemblerMergesAndDeduplicates(t *testing.T) {
	t.Parallel()
	store := &fakeStore{
		memories: []memento.RecallCandidate{
			{Kind: memento.RecallEpisode, ID: "e1", Attribute: "EVENT", Text: "went to the museum", BM25: 3, At: now, Sources: []string{"m1"}},
			{Kind: memento.RecallAttribute, ID: "a1", Attribute: "HOBBY", Text: "paints; visits museums", BM25: 2, At: now, Sources: []string{"m1", "m2"}},
		},
		messages: []memento.RecallCandidate{
			msg("m1", "s1", 1, "Yesterday I took the kids to the museum", 1, nil),
			msg("m2", "s2", 3, "I paint at the museum on Sundays", 2, nil),
		},
	}
	threads := &fakeThreads{summary: "They talked about museums."}
	attrs := &fakeAttributes{mems: []memento.Memory{{Attribute: "HOBBY", Value: "paints; visits museums"}}}
	a := &Assembler{Threads: threads, Attributes: attrs, Recallers: []memento.Recaller{&Memories{Store: store}, &Messages{Store: store}}}
	c, err := a.Assemble(context.Background(), memento.RecallQuery{Scope: memento.Scope{User: "ann"}, Thread: "t1", Query: "museum", K: 5, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, it := range c.Items {
		ids = append(ids, it.ID)
	}
	// m1 says what e1 says and e1 ranks higher; the semantic value from
	// two messages hides neither, and is hidden once better items came
	// from both (e1 from m1, then m2 itself).
	if diff := cmp.Diff([]string{"e1", "m2"}, ids); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
	if c.ActiveContext == nil || c.Summary == nil || len(c.Attributes) != 1 {
		t.Errorf("context lacks the thread's state or the attributes: %+v", c)
	}
	for _, want := range []string{"Summary of this conversation: They talked about museums.", "- HOBBY: paints; visits museums", "episode) EVENT: went to the museum", "Relevant memories:"} {
		if !strings.Contains(c.Text, want) {
			t.Errorf("rendered text lacks %q:\n%s", want, c.Text)
		}
	}
	if strings.Count(c.Text, "paints; visits museums") != 1 {
		t.Errorf("the attribute is rendered twice:\n%s", c.Text)
	}
	if c.Tokens != memento.EstimateTokens(c.Text) || c.Tokens == 0 {
		t.Errorf("tokens = %d; want the estimate of the text (%d)", c.Tokens, memento.EstimateTokens(c.Text))
	}
}

type fakeThreads struct{ summary string }

func (f *fakeThreads) ThreadState(_ context.Context, s memento.Scope, thread string) (*memento.ThreadState, error) {
	return &memento.ThreadState{Thread: memento.Thread{ID: thread}, Context: memento.NewActiveContext()}, nil
}

func (f *fakeThreads) LatestSummary(_ context.Context, s memento.Scope, thread string) (*memento.Summary, error) {
	return &memento.Summary{Thread: thread, Text: f.summary}, nil
}

type fakeAttributes struct{ mems []memento.Memory }

func (f *fakeAttributes) Memories(context.Context, memento.Scope, memento.MemoryFilter) ([]memento.Memory, error) {
	return f.mems, nil
}

func TestEstimateTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want int
	}{
		{"", 0},
		{"the cat", 3},                // 1.3 + 1.3
		{"recommendation", 4},         // 3 chunks of six bytes: 3.9
		{"I love  sci-fi\nfilms.", 6}, // 4 words: 5.2
		{strings.Repeat("word ", 100), 130},
	}
	for _, tt := range tests {
		if got := memento.EstimateTokens(tt.text); got != tt.want {
			t.Errorf("EstimateTokens(%q) = %d; want %d", tt.text, got, tt.want)
		}
	}
}

// TestMergeEpisodeStandsInForItsMessage checks the merge of a message and
// the memories drawn from it: an episode of one message takes the place
// (and the better score) of its message when both are recalled, only the
// best of a message's episodes is kept, a semantic value of one message
// does not stand in (it is rendered among the attributes), and a value
// merged from two messages is left out only once both are covered.
func TestMergeEpisodeStandsInForItsMessage(t *testing.T) {
	t.Parallel()
	item := func(kind, id string, score float64, sources ...string) memento.RecallItem {
		return memento.RecallItem{Kind: kind, ID: id, Score: score, Sources: sources, Text: id}
	}
	all := []memento.RecallItem{
		item(memento.RecallMessage, "m1", 1.5, "m1"),
		item(memento.RecallMessage, "m2", 1.4, "m2"),
		item(memento.RecallAttribute, "a23", 1.3, "m2", "m3"),
		item(memento.RecallEpisode, "e1", 1.2, "m1"),
		item(memento.RecallAttribute, "a2", 1.1, "m2"),
		item(memento.RecallEpisode, "e1b", 1.0, "m1"),
		item(memento.RecallEpisode, "e4", 0.9, "m4"),
		item(memento.RecallMessage, "m4", 0.8, "m4"),
		item(memento.RecallMessage, "m3", 0.7, "m3"),
	}
	got, withheld := merge(all, 10)
	type kept struct {
		ID    string
		Score float64
	}
	var ids []kept
	for _, it := range got {
		ids = append(ids, kept{it.ID, it.Score})
	}
	want := []kept{{"e1", 1.5}, {"m2", 1.4}, {"a23", 1.3}, {"e4", 0.9}, {"m3", 0.7}}
	if diff := cmp.Diff(want, ids); diff != "" || withheld != 0 {
		t.Errorf("merged (-want +got):\n%s(withheld %d)", diff, withheld)
	}
	if got, _ := merge(all, 2); len(got) != 2 || got[0].ID != "e1" || got[1].ID != "m2" {
		t.Errorf("merge(k=2) = %+v; want e1, m2", got)
	}
}
