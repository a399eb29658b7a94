package fallback_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/llm/fallback"
	"github.com/memento-ai/memento/llm/offline"
)

// failing is a primary model whose every task fails with err, and counts
// its calls.
type failing struct {
	err   error
	calls int
}

func (f *failing) fail() error { f.calls++; return f.err }

func (f *failing) Name() string { return "failing" }
func (f *failing) UnderstandRequest(context.Context, memento.UnderstandInput) (*memento.Understanding, error) {
	return nil, f.fail()
}
func (f *failing) WorthRemembering(context.Context, string, []memento.AttributeSpec) (*memento.Verdict, error) {
	return nil, f.fail()
}
func (f *failing) ExtractFacts(context.Context, memento.ExtractInput) ([]memento.Fact, error) {
	return nil, f.fail()
}
func (f *failing) ReviewExtraction(context.Context, string, []memento.Fact) (*memento.Verdict, error) {
	return nil, f.fail()
}
func (f *failing) AssignAttributes(context.Context, []memento.Fact, []memento.AttributeSpec) ([]memento.AttributedFact, error) {
	return nil, f.fail()
}
func (f *failing) MergeFact(context.Context, memento.MergeInput) (string, error) { return "", f.fail() }
func (f *failing) ReviewMerge(context.Context, memento.MergeInput, string) (*memento.Verdict, error) {
	return nil, f.fail()
}
func (f *failing) Summarise(context.Context, memento.SummariseInput) (string, error) {
	return "", f.fail()
}
func (f *failing) ExtractPreferences(context.Context, string) ([]memento.Concept, error) {
	return nil, f.fail()
}
func (f *failing) DescribeCluster(context.Context, []memento.ClusterMember) (*memento.ClusterDescription, error) {
	return nil, f.fail()
}
func (f *failing) WriteReply(context.Context, memento.ReplyInput) (string, error) {
	return "", f.fail()
}

var (
	message = "I loved Arrival, but I can't stand jump scares."
	schema  = []memento.AttributeSpec{{Name: "LIKES", Description: "What the user likes.", Mode: "semantic"}}
	facts   = []memento.Fact{{Text: "loved Arrival"}}
	merge   = memento.MergeInput{Attribute: schema[0], Current: "loved Alien", Fact: facts[0]}
)

// calls runs every task of m once and returns each one's error.
func calls(ctx context.Context, m memento.LanguageModel) map[string]error {
	errOf := func(_ any, err error) error { return err }
	return map[string]error{
		memento.ModelTaskUnderstand:       errOf(m.UnderstandRequest(ctx, memento.UnderstandInput{Message: "three comedies", Context: memento.NewActiveContext()})),
		memento.ModelTaskSentinel:         errOf(m.WorthRemembering(ctx, message, schema)),
		memento.ModelTaskExtractFacts:     errOf(m.ExtractFacts(ctx, memento.ExtractInput{Message: message})),
		memento.ModelTaskReviewExtraction: errOf(m.ReviewExtraction(ctx, message, facts)),
		memento.ModelTaskAssignAttributes: errOf(m.AssignAttributes(ctx, facts, schema)),
		memento.ModelTaskMergeFact:        errOf(m.MergeFact(ctx, merge)),
		memento.ModelTaskReviewMerge:      errOf(m.ReviewMerge(ctx, merge, "loved Alien and Arrival")),
		memento.ModelTaskSummarise: errOf(m.Summarise(ctx, memento.SummariseInput{
			Messages: []memento.Message{{Role: memento.RoleUser, Text: message}}, MaxChars: 200})),
		memento.ModelTaskPreferences:     errOf(m.ExtractPreferences(ctx, message)),
		memento.ModelTaskDescribeCluster: errOf(m.DescribeCluster(ctx, []memento.ClusterMember{{Concept: "heist films", Weight: 0.8}})),
		memento.ModelTaskWriteReply: errOf(m.WriteReply(ctx, memento.ReplyInput{
			Message: "three comedies", Context: memento.NewActiveContext(), Searched: true})),
	}
}

func TestUnusableAnswersFallBack(t *testing.T) {
	primary := &failing{err: memento.WrapError(memento.EUPSTREAM, errors.New(`$ is missing the required field "recognised"`), "The language model gave an unusable answer.")}
	reg := prometheus.NewRegistry()
	m, err := fallback.New(primary, offline.New(offline.Options{}), fallback.Options{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx := memento.WithNotes(context.Background())
	errs := calls(ctx, m)
	for task, err := range errs {
		if err != nil {
			t.Errorf("%s: %v, want the stand-in's answer", task, err)
		}
	}
	if primary.calls != len(errs) {
		t.Errorf("primary calls = %d, want %d (each task asks it first)", primary.calls, len(errs))
	}
	want := map[string]int{}
	var wantNotes []string
	for task := range errs {
		want[task] = 1
		wantNotes = append(wantNotes, fallback.Note(task))
	}
	if diff := cmp.Diff(want, m.Fallbacks()); diff != "" {
		t.Errorf("fallbacks (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantNotes, memento.Notes(ctx), cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	if n := len(memento.Notes(ctx)); n != 11 {
		t.Errorf("%d notes, want one per task, 11", n)
	}
	if !strings.Contains(fallback.Note(memento.ModelTaskUnderstand), "reading your message") {
		t.Errorf("understanding note %q does not say which task", fallback.Note(memento.ModelTaskUnderstand))
	}
	families, err := reg.Gather()
	if err != nil || len(families) != 1 || families[0].GetName() != "memento_llm_fallbacks_total" || len(families[0].GetMetric()) != 11 {
		t.Errorf("metrics = %v, %v; want memento_llm_fallbacks_total for 11 tasks", families, err)
	}
}

func TestOtherFailuresPassThrough(t *testing.T) {
	canceled, cancel := context.WithCancel(memento.WithNotes(context.Background()))
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		err  error
	}{
		{"unreachable", memento.WithNotes(context.Background()), memento.Errorf(memento.EUNAVAILABLE, "The language model server cannot be reached.")},
		{"our own bug", memento.WithNotes(context.Background()), errors.New("render prompt: template broken")},
		{"caller gone", canceled, memento.Errorf(memento.EUPSTREAM, "unusable")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := fallback.New(&failing{err: tt.err}, offline.New(offline.Options{}), fallback.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for task, err := range calls(tt.ctx, m) {
				if !errors.Is(err, tt.err) {
					t.Errorf("%s: error = %v, want the primary's", task, err)
				}
			}
			if n := len(m.Fallbacks()); n != 0 {
				t.Errorf("fallbacks = %v, want none", m.Fallbacks())
			}
			if notes := memento.Notes(tt.ctx); len(notes) != 0 {
				t.Errorf("notes = %q, want none", notes)
			}
		})
	}
}

func TestUsableAnswersAreThePrimarys(t *testing.T) {
	primary := offline.New(offline.Options{})
	m, err := fallback.New(primary, &failing{err: errors.New("the stand-in must not be asked")}, fallback.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := memento.WithNotes(context.Background())
	for task, err := range calls(ctx, m) {
		if err != nil {
			t.Errorf("%s: %v", task, err)
		}
	}
	if notes := memento.Notes(ctx); len(notes) != 0 {
		t.Errorf("notes = %q, want none", notes)
	}
	if m.Name() != primary.Name() || m.Primary() != memento.LanguageModel(primary) {
		t.Errorf("Name, Primary = %q, %v; want the primary's", m.Name(), m.Primary())
	}
}

func TestNewNeedsBothModels(t *testing.T) {
	if _, err := fallback.New(nil, offline.New(offline.Options{}), fallback.Options{}); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("New without a primary: %v, want EINVALID", err)
	}
}
