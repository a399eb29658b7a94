package openai_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/llm/llmtest"
	"github.com/memento-ai/memento/llm/openai"
)

var movieSchema = []memento.AttributeSpec{
	{Name: "LIKES", Description: "Titles, people and themes the user likes.", Mode: "semantic"},
	{Name: "DISLIKES", Description: "Titles, people and themes the user dislikes.", Mode: "semantic"},
	{Name: "PLATFORM", Description: "Streaming services the user has.", Mode: "semantic"},
}

// TestTasks runs every task against a scripted answer and checks the
// request it sent and the value it returned.
func TestTasks(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		task  openai.Task
		reply any
		call  func(m *openai.Model) (any, error)
		want  any
	}{
		{
			task: openai.TaskUnderstand,
			reply: map[string]any{"search": true, "replace": false, "reject": false, "genres": []string{"Science Fiction"},
				"titleType": "movie", "minYear": 1990, "maxYear": 1999, "yearShift": nil, "people": []string{},
				"freeText": nil, "isAdult": nil, "count": 5, "recognised": true, "question": nil},
			call: func(m *openai.Model) (any, error) {
				return m.UnderstandRequest(ctx, memento.UnderstandInput{Message: "Five sci-fi movies from the 90s", Context: memento.NewActiveContext()})
			},
			want: &memento.Understanding{Search: true, Genres: []string{"Science Fiction"}, TitleType: "movie",
				MinYear: ptr(1990), MaxYear: ptr(1999), Count: 5, Recognised: true},
		},
		{
			task:  openai.TaskSentinel,
			reply: map[string]any{"reason": "States a lasting like.", "ok": true},
			call: func(m *openai.Model) (any, error) {
				return m.WorthRemembering(ctx, "I love westerns", movieSchema)
			},
			want: &memento.Verdict{OK: true, Reason: "States a lasting like."},
		},
		{
			task:  openai.TaskExtractFacts,
			reply: map[string]any{"facts": []any{map[string]any{"text": "loves westerns", "negated": false}, map[string]any{"text": "does not like horror", "negated": true}}},
			call: func(m *openai.Model) (any, error) {
				return m.ExtractFacts(ctx, memento.ExtractInput{Message: "I love westerns but not horror"})
			},
			want: []memento.Fact{{Text: "loves westerns"}, {Text: "does not like horror", Negated: true}},
		},
		{
			task:  openai.TaskReviewExtraction,
			reply: map[string]any{"reason": `Remove "likes jazz": not stated.`, "ok": false},
			call: func(m *openai.Model) (any, error) {
				return m.ReviewExtraction(ctx, "I love westerns", []memento.Fact{{Text: "loves westerns"}, {Text: "likes jazz"}})
			},
			want: &memento.Verdict{OK: false, Reason: `Remove "likes jazz": not stated.`},
		},
		{
			task:  openai.TaskAssignAttributes,
			reply: map[string]any{"assignments": []any{map[string]any{"index": 1, "attribute": "NONE"}, map[string]any{"index": 0, "attribute": "LIKES"}}},
			call: func(m *openai.Model) (any, error) {
				return m.AssignAttributes(ctx, []memento.Fact{{Text: "loves westerns"}, {Text: "has a dog"}}, movieSchema)
			},
			want: []memento.AttributedFact{{Fact: memento.Fact{Text: "loves westerns"}, Attribute: "LIKES"}, {Fact: memento.Fact{Text: "has a dog"}}},
		},
		{
			task:  openai.TaskMergeFact,
			reply: map[string]any{"merged": "likes westerns and science fiction"},
			call: func(m *openai.Model) (any, error) {
				return m.MergeFact(ctx, memento.MergeInput{Attribute: movieSchema[0], Current: "likes westerns", Fact: memento.Fact{Text: "likes science fiction"}})
			},
			want: "likes westerns and science fiction",
		},
		{
			task:  openai.TaskReviewMerge,
			reply: map[string]any{"reason": "Nothing lost.", "ok": true},
			call: func(m *openai.Model) (any, error) {
				return m.ReviewMerge(ctx, memento.MergeInput{Attribute: movieSchema[0], Current: "likes westerns", Fact: memento.Fact{Text: "likes science fiction"}}, "likes westerns and science fiction")
			},
			want: &memento.Verdict{OK: true, Reason: "Nothing lost."},
		},
		{
			task:  openai.TaskSummarise,
			reply: map[string]any{"summary": "The user asked for westerns and was shown three."},
			call: func(m *openai.Model) (any, error) {
				return m.Summarise(ctx, memento.SummariseInput{Messages: []memento.Message{{Role: memento.RoleUser, Text: "Westerns please"}}, MaxChars: 200})
			},
			want: "The user asked for westerns and was shown three.",
		},
		{
			task: openai.TaskPreferences,
			reply: map[string]any{"concepts": []any{
				map[string]any{"concept": "very sweet desserts", "sign": -1, "strength": 0.7, "kind": "taste"},
				map[string]any{"concept": "Berlin", "sign": 1, "strength": 1, "kind": "fact"},
			}},
			call: func(m *openai.Model) (any, error) {
				return m.ExtractPreferences(ctx, "I live in Berlin and don't like very sweet desserts")
			},
			want: []memento.Concept{{Concept: "very sweet desserts", Sign: -1, Strength: 0.7, Kind: "taste"}, {Concept: "Berlin", Sign: 1, Strength: 1, Kind: "fact"}},
		},
		{
			task:  openai.TaskDescribeCluster,
			reply: map[string]any{"description": "prefers quiet keyboards, dislikes clicky ones", "stances": []string{"support", "oppose"}},
			call: func(m *openai.Model) (any, error) {
				return m.DescribeCluster(ctx, []memento.ClusterMember{{Concept: "quiet keyboards", Weight: 0.8}, {Concept: "clicky keyboards", Weight: -0.6}})
			},
			want: &memento.ClusterDescription{Description: "prefers quiet keyboards, dislikes clicky ones", Stances: []string{"support", "oppose"}},
		},
		{
			task:  openai.TaskWriteReply,
			reply: map[string]any{"reply": "Try Unforgiven (1992)."},
			call: func(m *openai.Model) (any, error) {
				return m.WriteReply(ctx, memento.ReplyInput{Message: "A western", Searched: true, Titles: []memento.Title{{ID: "wiki:Unforgiven", Title: "Unforgiven", Year: 1992, Type: "movie"}}})
			},
			want: "Try Unforgiven (1992).",
		},
	}
	for _, tt := range tests {
		t.Run(string(tt.task), func(t *testing.T) {
			f := newFixture(t, nil)
			f.srv.EnqueueTask(string(tt.task), llmtest.ChatJSON(tt.reply))
			got, err := tt.call(f.model)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("output mismatch (-want +got):\n%s", diff)
			}
			req := f.chat(t, 0)
			if req.Model != "test-model" {
				t.Errorf("model = %q, want test-model", req.Model)
			}
			rf := req.ResponseFormat
			if rf == nil || rf.Type != "json_schema" || rf.JSONSchema == nil || rf.JSONSchema.Name != string(tt.task) || !rf.JSONSchema.Strict {
				t.Errorf("response_format = %+v, want strict json_schema named %s", rf, tt.task)
			}
			if len(req.Messages) != 2 || req.Messages[0].Role != "system" || req.Messages[1].Role != "user" {
				t.Errorf("messages = %+v, want system then user", req.Messages)
			}
			if got := f.model.Usage()[tt.task]; got.Calls != 1 || got.Errors != 0 || got.Repairs != 0 {
				t.Errorf("usage = %+v, want one clean call", got)
			}
		})
	}
}

// TestTasksWithoutRequest checks the inputs answered without asking the
// model.
func TestTasksWithoutRequest(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	m := f.model

	if v, err := m.WorthRemembering(ctx, "  ", movieSchema); err != nil || v.OK {
		t.Errorf("WorthRemembering(blank) = %+v, %v; want not ok", v, err)
	}
	if facts, err := m.ExtractFacts(ctx, memento.ExtractInput{}); err != nil || len(facts) != 0 {
		t.Errorf("ExtractFacts(blank) = %v, %v; want none", facts, err)
	}
	if got, err := m.AssignAttributes(ctx, nil, movieSchema); err != nil || len(got) != 0 {
		t.Errorf("AssignAttributes(no facts) = %v, %v; want none", got, err)
	}
	if got, err := m.Summarise(ctx, memento.SummariseInput{Previous: "old"}); err != nil || got != "old" {
		t.Errorf("Summarise(no messages) = %q, %v; want the previous summary", got, err)
	}
	if _, err := m.DescribeCluster(ctx, nil); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("DescribeCluster(no members) error = %v, want EINVALID", err)
	}
	if n := len(f.srv.Requests()); n != 0 {
		t.Errorf("server received %d requests, want 0", n)
	}
}

// TestUnderstandNormalises checks the clean-up of a sloppy understanding:
// empty lists mean unset, reversed years are swapped after one repair.
func TestUnderstandNormalises(t *testing.T) {
	f := newFixture(t, nil)
	reply := map[string]any{"search": true, "replace": false, "reject": false, "genres": []string{},
		"titleType": nil, "minYear": 2000, "maxYear": 1990, "yearShift": nil, "people": []string{" "},
		"freeText": " heist ", "isAdult": nil, "count": 0, "recognised": true, "question": nil}
	f.srv.EnqueueTask(string(openai.TaskUnderstand), llmtest.ChatJSON(reply), llmtest.ChatJSON(reply))
	got, err := f.model.UnderstandRequest(context.Background(), memento.UnderstandInput{Message: "a heist from the 90s"})
	if err != nil {
		t.Fatal(err)
	}
	want := &memento.Understanding{Search: true, MinYear: ptr(1990), MaxYear: ptr(2000), FreeText: "heist", Recognised: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("understanding mismatch (-want +got):\n%s", diff)
	}
	if got := f.model.Usage()[openai.TaskUnderstand].Repairs; got != 1 {
		t.Errorf("repairs = %d, want 1", got)
	}
}

// TestSoftRules checks that rules the task can fix itself cost one repair
// and then are fixed in code.
func TestSoftRules(t *testing.T) {
	ctx := context.Background()
	t.Run("summary too long is cut", func(t *testing.T) {
		f := newFixture(t, nil)
		long := "The user asked for westerns. They were shown three titles and liked none of them at all."
		f.srv.EnqueueTask(string(openai.TaskSummarise), llmtest.ChatJSON(map[string]any{"summary": long}), llmtest.ChatJSON(map[string]any{"summary": long}))
		got, err := f.model.Summarise(ctx, memento.SummariseInput{Messages: []memento.Message{{Role: memento.RoleUser, Text: "x"}}, MaxChars: 40})
		if err != nil {
			t.Fatal(err)
		}
		if want := "The user asked for westerns."; got != want {
			t.Errorf("summary = %q, want %q", got, want)
		}
		repair := f.chat(t, 1).Messages[3].Content
		if !strings.Contains(repair, "at most 40") {
			t.Errorf("repair request %q does not name the limit", repair)
		}
	})
	t.Run("rejection without reason", func(t *testing.T) {
		f := newFixture(t, nil)
		empty := llmtest.ChatJSON(map[string]any{"reason": "", "ok": false})
		f.srv.EnqueueTask(string(openai.TaskReviewExtraction), empty, empty)
		got, err := f.model.ReviewExtraction(ctx, "msg", []memento.Fact{{Text: "x"}})
		if err != nil {
			t.Fatal(err)
		}
		if got.OK || got.Reason == "" {
			t.Errorf("verdict = %+v, want a rejection with a generic reason", got)
		}
	})
	t.Run("fact assigned twice or skipped", func(t *testing.T) {
		f := newFixture(t, nil)
		bad := llmtest.ChatJSON(map[string]any{"assignments": []any{
			map[string]any{"index": 0, "attribute": "LIKES"}, map[string]any{"index": 0, "attribute": "DISLIKES"},
		}})
		f.srv.EnqueueTask(string(openai.TaskAssignAttributes), bad, bad)
		facts := []memento.Fact{{Text: "likes westerns"}, {Text: "has a dog"}}
		got, err := f.model.AssignAttributes(ctx, facts, movieSchema)
		if err != nil {
			t.Fatal(err)
		}
		want := []memento.AttributedFact{{Fact: facts[0], Attribute: "LIKES"}, {Fact: facts[1]}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("assignments mismatch (-want +got):\n%s", diff)
		}
	})
}

// TestInventedFactCase runs llmtest's scripted pipeline case through the
// steps in pipeline order, which keeps its wire format in step with this
// package.
func TestInventedFactCase(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	c := llmtest.InventedFact()
	c.Script(f.srv)
	m := f.model

	for task, want := range map[string]openai.Task{
		llmtest.TaskSentinel: openai.TaskSentinel, llmtest.TaskExtractFacts: openai.TaskExtractFacts,
		llmtest.TaskReviewExtraction: openai.TaskReviewExtraction, llmtest.TaskAssignAttributes: openai.TaskAssignAttributes,
		llmtest.TaskMergeFact: openai.TaskMergeFact, llmtest.TaskReviewMerge: openai.TaskReviewMerge,
	} {
		if task != string(want) {
			t.Errorf("llmtest task %q does not match openai task %q", task, want)
		}
	}

	v, err := m.WorthRemembering(ctx, c.Message, c.Schema)
	if err != nil || !v.OK {
		t.Fatalf("sentinel = %+v, %v", v, err)
	}
	in := memento.ExtractInput{Message: c.Message}
	var facts []memento.Fact
	for attempt := 0; ; attempt++ {
		if attempt == 2 {
			t.Fatal("extraction not accepted after two attempts")
		}
		facts, err = m.ExtractFacts(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		review, err := m.ReviewExtraction(ctx, c.Message, facts)
		if err != nil {
			t.Fatal(err)
		}
		if review.OK {
			break
		}
		if !strings.Contains(review.Reason, c.Invented.Text) {
			t.Errorf("repair note %q does not name the invented fact", review.Reason)
		}
		in.Previous, in.RepairNote = facts, review.Reason
	}
	for _, fact := range facts {
		if fact == c.Invented {
			t.Errorf("invented fact %q survived the review", fact.Text)
		}
	}
	// The repair note reached the extractor's second prompt.
	var sawNote bool
	for _, r := range f.srv.Requests() {
		if r.Task == llmtest.TaskExtractFacts && strings.Contains(string(r.Body), "A reviewer found problems") {
			sawNote = true
		}
	}
	if !sawNote {
		t.Error("the second extraction request does not carry the repair note")
	}

	attributed, err := m.AssignAttributes(ctx, facts, c.Schema)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c.Attributed, attributed); diff != "" {
		t.Errorf("attributes mismatch (-want +got):\n%s", diff)
	}
	values := map[string]string{}
	for _, a := range attributed {
		spec := c.Schema[0]
		for _, s := range c.Schema {
			if s.Name == a.Attribute {
				spec = s
			}
		}
		merge := memento.MergeInput{Attribute: spec, Current: values[a.Attribute], Fact: a.Fact}
		merged, err := m.MergeFact(ctx, merge)
		if err != nil {
			t.Fatal(err)
		}
		if v, err := m.ReviewMerge(ctx, merge, merged); err != nil || !v.OK {
			t.Fatalf("merge review = %+v, %v", v, err)
		}
		values[a.Attribute] = merged
	}
	if diff := cmp.Diff(c.Want, values); diff != "" {
		t.Errorf("attribute values mismatch (-want +got):\n%s", diff)
	}
	if n := f.srv.Pending(); n != 0 {
		t.Errorf("%d scripted responses left unused", n)
	}
}

// TestUnderstandGenres checks that WithGenres grounds genres in the
// catalog's vocabulary: listed in the prompt, an enum in the schema, and
// unknown ones dropped after one repair.
func TestUnderstandGenres(t *testing.T) {
	f := newFixture(t, nil, openai.WithGenres([]string{"Science Fiction", "Comedy", "comedy", " "}))
	reply := map[string]any{"search": true, "replace": true, "reject": false, "genres": []string{"science fiction", "Space Opera"},
		"titleType": nil, "minYear": nil, "maxYear": nil, "yearShift": nil, "people": nil,
		"freeText": nil, "isAdult": nil, "count": 0, "recognised": true, "question": nil}
	f.srv.EnqueueTask(string(openai.TaskUnderstand), llmtest.ChatJSON(reply), llmtest.ChatJSON(reply))
	got, err := f.model.UnderstandRequest(context.Background(), memento.UnderstandInput{Message: "space opera sci-fi"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Science Fiction"}, got.Genres); diff != "" {
		t.Errorf("genres mismatch (-want +got):\n%s", diff)
	}
	req := f.chat(t, 0)
	if !strings.Contains(req.Messages[0].Content, "which is exactly: Comedy, Science Fiction.") {
		t.Errorf("system prompt does not list the vocabulary:\n%s", req.Messages[0].Content)
	}
	if !strings.Contains(string(req.ResponseFormat.JSONSchema.Schema), `"enum":["Comedy","Science Fiction"]`) {
		t.Errorf("schema does not restrict genres: %s", req.ResponseFormat.JSONSchema.Schema)
	}
	if !strings.Contains(f.chat(t, 1).Messages[3].Content, `genre "Space Opera" is not in the catalog's vocabulary`) {
		t.Error("repair request does not name the unknown genre")
	}
}

// TestUnderstandFollowUpFields checks that every field of a follow-up
// (title references, corrections, soft constraints, excluded genres)
// round-trips from the model's answer into the Understanding, cleaned.
func TestUnderstandFollowUpFields(t *testing.T) {
	f := newFixture(t, nil, openai.WithGenres([]string{"Comedy", "Horror", "Science Fiction"}))
	reply := map[string]any{"search": true, "replace": true, "reject": false, "genres": []string{"comedy"},
		"titleType": nil, "minYear": nil, "maxYear": nil, "yearShift": "older", "people": nil,
		"freeText": nil, "isAdult": nil, "count": 25, "recognised": true, "question": nil,
		"excludeGenres": []string{"horror", "Western"},
		"like":          []any{map[string]any{"position": nil, "name": " The Matrix "}, map[string]any{"position": 2, "name": nil}},
		"about":         nil,
		"seen":          []any{map[string]any{"position": -1, "name": nil}, map[string]any{"position": nil, "name": " "}},
		"rejectTitles":  []any{map[string]any{"position": nil, "name": "Heat"}},
		"corrections":   []any{map[string]any{"from": "comdy", "to": "Comedy"}, map[string]any{"from": "x", "to": "x"}},
		"soft": []any{
			map[string]any{"kind": "runtime", "value": "<=120", "said": "not too long"},
			map[string]any{"kind": "platform", "value": "Netflix", "said": "on Netflix"},
			map[string]any{"kind": "mood", "value": " light ", "said": "something light"},
			map[string]any{"kind": "mood", "value": "dark", "said": "dark"},
		},
	}
	f.srv.EnqueueTask(string(openai.TaskUnderstand), llmtest.ChatJSON(reply))
	got, err := f.model.UnderstandRequest(context.Background(), memento.UnderstandInput{
		Message:   "like The Matrix or the second one but a comdy, older, not too long, on Netflix, something light; seen the last one, not Heat",
		LastShown: []memento.Title{{ID: "a", Title: "Heat"}, {ID: "b", Title: "Alien"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := &memento.Understanding{Search: true, Replace: true, Genres: []string{"Comedy"}, YearShift: "older", Count: 25, Recognised: true,
		ExcludeGenres: []string{"Horror"},
		Like:          []memento.TitleRef{{Name: "The Matrix"}, {Position: 2}},
		Seen:          []memento.TitleRef{{Position: -1}},
		RejectTitles:  []memento.TitleRef{{Name: "Heat"}},
		Corrections:   []memento.Correction{{From: "comdy", To: "Comedy"}},
		Soft: []memento.SoftConstraint{{Kind: memento.SoftRuntime, Value: "<=120", Said: "not too long"},
			{Kind: memento.SoftPlatform, Value: "Netflix", Said: "on Netflix"}, {Kind: memento.SoftMood, Value: "light", Said: "something light"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("understanding mismatch (-want +got):\n%s", diff)
	}
	req := f.chat(t, 0)
	if !strings.Contains(req.Messages[1].Content, "2. Alien") {
		t.Errorf("user prompt does not number the titles shown:\n%s", req.Messages[1].Content)
	}
	for _, field := range []string{`"like"`, `"about"`, `"seen"`, `"rejectTitles"`, `"corrections"`, `"soft"`, `"excludeGenres"`} {
		if !strings.Contains(string(req.ResponseFormat.JSONSchema.Schema), field) {
			t.Errorf("schema lacks %s", field)
		}
	}
}

// TestUnderstandAbout checks that a question about a title never
// searches, even when the model says it should.
func TestUnderstandAbout(t *testing.T) {
	f := newFixture(t, nil)
	reply := map[string]any{"search": true, "replace": false, "reject": false, "genres": nil,
		"titleType": nil, "minYear": nil, "maxYear": nil, "yearShift": nil, "people": nil,
		"freeText": nil, "isAdult": nil, "count": 0, "recognised": true, "question": nil,
		"about": []any{map[string]any{"position": 1, "name": nil}}}
	f.srv.EnqueueTask(string(openai.TaskUnderstand), llmtest.ChatJSON(reply))
	got, err := f.model.UnderstandRequest(context.Background(), memento.UnderstandInput{Message: "tell me more about the first one"})
	if err != nil {
		t.Fatal(err)
	}
	want := &memento.Understanding{Recognised: true, About: []memento.TitleRef{{Position: 1}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("understanding mismatch (-want +got):\n%s", diff)
	}
}
