package budget_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memento-ai/memento"
	"github.com/memento-ai/memento/llm/budget"
	"github.com/memento-ai/memento/llm/llmtest"
	"github.com/memento-ai/memento/llm/offline"
	"github.com/memento-ai/memento/llm/openai"
)

// clock is a settable time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// newModel is a budget over a real OpenAI-compatible client of an
// in-process server whose every answer costs 15 tokens (10 prompt, 5
// completion).
func newModel(t *testing.T, opts budget.Options) (*budget.Model, *llmtest.Server, *prometheus.Registry) {
	t.Helper()
	srv := llmtest.New(t)
	srv.AnswerAll(llmtest.Answers(), 8)
	primary, err := openai.New(openai.Config{BaseURL: srv.URL, Model: "fake-model"})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	opts.Registerer = reg
	m, err := budget.New(primary, offline.New(offline.Options{}), opts)
	if err != nil {
		t.Fatal(err)
	}
	return m, srv, reg
}

func TestBudgetFallsBackPastTheDailyTokens(t *testing.T) {
	c := &clock{t: time.Date(2026, 3, 4, 22, 0, 0, 0, time.UTC)}
	m, srv, reg := newModel(t, budget.Options{DailyTokens: 25, Tenants: map[string]int64{"big": 0}, Now: c.now})
	acme := memento.WithTenant(context.Background(), "acme")
	ask := func(ctx context.Context) []string {
		t.Helper()
		ctx = memento.WithNotes(ctx)
		if _, err := m.WorthRemembering(ctx, "I love westerns", nil); err != nil {
			t.Fatal(err)
		}
		return memento.Notes(ctx)
	}

	// Two calls of 15 tokens: the second starts under the budget (15 <
	// 25) and ends over it; the third goes to the offline model.
	for i := range 2 {
		if notes := ask(acme); len(notes) != 0 {
			t.Fatalf("call %d under the budget has notes %q", i+1, notes)
		}
	}
	if got := m.Usage("acme"); got.Calls != 2 || got.PromptTokens != 20 || got.CompletionTokens != 10 || got.Fallbacks != 0 {
		t.Fatalf("usage = %+v, want 2 calls, 20+10 tokens", got)
	}
	sent := len(srv.Requests())
	notes := ask(acme)
	if want := budget.Note("acme", memento.ModelTaskSentinel, 25); !slices.Contains(notes, want) {
		t.Errorf("notes past the budget = %q, want %q", notes, want)
	}
	if n := len(srv.Requests()); n != sent {
		t.Errorf("past the budget the server got %d more requests, want none", n-sent)
	}
	if got := m.Usage("acme"); got.Calls != 2 || got.Fallbacks != 1 {
		t.Errorf("usage = %+v, want 2 calls and 1 fallback", got)
	}

	// Other tenants have their own budgets; "big" has none.
	for range 3 {
		if notes := ask(memento.WithTenant(context.Background(), "big")); len(notes) != 0 {
			t.Fatalf("tenant without a budget got notes %q", notes)
		}
	}
	if notes := ask(context.Background()); len(notes) != 0 {
		t.Errorf("the default tenant, unspent, got notes %q", notes)
	}
	if got := m.Usage(memento.DefaultTenant); got.Calls != 1 {
		t.Errorf("a call naming no tenant was charged %+v to the default tenant, want 1 call", got)
	}

	// Metrics count calls and tokens per tenant.
	if got := metric(t, reg, "memento_llm_tenant_calls_total", "acme"); got != 2 {
		t.Errorf("memento_llm_tenant_calls_total{acme} = %v, want 2", got)
	}
	if got := metric(t, reg, "memento_llm_tenant_tokens_total", "acme", "prompt"); got != 20 {
		t.Errorf("memento_llm_tenant_tokens_total{acme,prompt} = %v, want 20", got)
	}
	if got := metric(t, reg, "memento_llm_tenant_tokens_total", "acme", "completion"); got != 10 {
		t.Errorf("memento_llm_tenant_tokens_total{acme,completion} = %v, want 10", got)
	}
	if got := metric(t, reg, "memento_llm_budget_fallbacks_total", "acme"); got != 1 {
		t.Errorf("memento_llm_budget_fallbacks_total{acme} = %v, want 1", got)
	}

	// A new day (UTC) renews the budget.
	c.set(time.Date(2026, 3, 5, 0, 0, 1, 0, time.UTC))
	if notes := ask(acme); len(notes) != 0 {
		t.Errorf("the next day's first call has notes %q", notes)
	}
	if got := m.Usage("acme"); got.Day != "2026-03-05" || got.Calls != 1 {
		t.Errorf("usage on the next day = %+v", got)
	}
}

func TestBudgetConcurrent(t *testing.T) {
	m, _, _ := newModel(t, budget.Options{DailyTokens: 1 << 40})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			ctx := memento.WithTenant(context.Background(), []string{"a", "b"}[i%2])
			if _, err := m.Summarise(ctx, memento.SummariseInput{Messages: []memento.Message{{Role: "user", Text: "hi"}}, MaxChars: 100}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if a, b := m.Usage("a"), m.Usage("b"); a.Calls != 4 || b.Calls != 4 || a.Tokens() != 60 || b.Tokens() != 60 {
		t.Errorf("usage a = %+v, b = %+v; want 4 calls and 60 tokens each", a, b)
	}
}

func TestBudgetOptions(t *testing.T) {
	p := offline.New(offline.Options{})
	for _, opts := range []budget.Options{{DailyTokens: -1}, {Tenants: map[string]int64{"x": -5}}} {
		if _, err := budget.New(p, p, opts); memento.ErrorCode(err) != memento.EINVALID {
			t.Errorf("New(%+v) err = %v, want EINVALID", opts, err)
		}
	}
	if _, err := budget.New(nil, p, budget.Options{}); memento.ErrorCode(err) != memento.EINVALID {
		t.Errorf("New without a primary err = %v, want EINVALID", err)
	}
}

// metric is the value of the series of name whose tenant label is tenant
// (and kind label kind, when given).
func metric(t *testing.T, reg *prometheus.Registry, name, tenant string, kind ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			match := 0
			for _, l := range m.GetLabel() {
				if l.GetName() == "tenant" && l.GetValue() == tenant || len(kind) > 0 && l.GetName() == "kind" && l.GetValue() == kind[0] {
					match++
				}
			}
			if match == 1+len(kind) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// Reading actions and tagging emotions are model tasks too: a budget
// passes them on (the profile's message job and the emotion tagger find
// them through it) and, past the budget, the offline model answers.
func TestBudgetCoversActionsAndEmotions(t *testing.T) {
	m, srv, _ := newModel(t, budget.Options{DailyTokens: 1})
	var _ memento.ActionReader = m
	var _ memento.EmotionClassifier = m
	ctx := memento.WithTenant(context.Background(), "acme")
	if _, err := m.WorthRemembering(ctx, "I love westerns", nil); err != nil {
		t.Fatal(err)
	}
	sent := len(srv.Requests())
	nctx := memento.WithNotes(ctx)
	em, err := m.ClassifyEmotion(nctx, "I love this, thank you so much!")
	if err != nil || em.Label != "joy" {
		t.Errorf("ClassifyEmotion past the budget = %+v, %v; want the offline model's joy", em, err)
	}
	if _, err := m.ReadActions(nctx, memento.ActionInput{Message: "I watched Heat yesterday"}); err != nil {
		t.Errorf("ReadActions past the budget: %v", err)
	}
	if n := len(srv.Requests()); n != sent {
		t.Errorf("past the budget the server got %d more requests, want none", n-sent)
	}
	notes := memento.Notes(nctx)
	if !slices.Contains(notes, budget.Note("acme", "classify_emotion", 1)) || !slices.Contains(notes, budget.Note("acme", memento.ModelTaskReadActions, 1)) {
		t.Errorf("notes = %q, want one per task the offline model answered", notes)
	}
	if got := m.Usage("acme"); got.Fallbacks != 2 {
		t.Errorf("usage = %+v, want 2 fallbacks", got)
	}
}
